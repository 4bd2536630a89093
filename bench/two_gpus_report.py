#!/usr/bin/env python3
"""two_gpus_report.py OUT — the report of bench/two_gpus.sh: one GPU against two, from the runs it
kept in OUT/warm (the cold start), OUT/one (--gpus 0) and OUT/two (--gpus 0,1). Each holds
wall.txt (seconds), start.txt (when grade.sh started, seconds since the epoch), timing.txt (one
line per cell: "NNNN student / lesson: key=value ..."), run-info.txt, progress.log and
gradebook.csv. It reads only those files, so it runs again on a committed run."""
from __future__ import annotations

import csv
import os
import re
import statistics
import sys
from datetime import datetime, timezone

CHECKS = ["run_s", "judge_s", "sanitize_s", "memcheck_s", "witness_s", "evidence_s"]  # a cell's steps on its GPU
# Of judge_s, the seconds its judge ran beside the next cell's run (grading/overlap.py): off the GPU's
# critical path, so not counted in its busy time (a cell's checks on its GPU: CHECKS less that).
BESIDE = "judge_beside_s"
STEPS = ["compile_s", "lint_s", "static_s"] + CHECKS + [BESIDE]


def on_gpu(r: dict) -> float:
    """A cell's seconds on its GPU's critical path: its checks, less its judge's time beside another run."""
    return sum(r.get(k, 0.0) for k in CHECKS) - r.get(BESIDE, 0.0)
RUNS = (("warm", "cold start (builds the course cache)"), ("one", "one GPU (--gpus 0)"), ("two", "two GPUs (--gpus 0,1)"))


def read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def cells(run: str) -> list[dict]:
    """Each cell's timing: {key: value}, the numbers as floats (gpu as its index)."""
    rows = []
    for line in read(os.path.join(run, "timing.txt")).splitlines():
        _head, _, rest = line.partition(": ")
        vals = dict(m.groups() for m in re.finditer(r"(?:^| )([a-z_]+)=(\S+)", " " + rest))
        rows.append({k: (v if k == "gpu" else float(v)) for k, v in vals.items() if k == "gpu" or re.fullmatch(r"[0-9.]+", v)})
    return rows


def busy(rows: list[dict]) -> dict[str, float]:
    """Seconds each GPU was busy with a cell's checks (on_gpu summed per GPU)."""
    out: dict[str, float] = {}
    for r in rows:
        if "run_s" in r:
            out[r.get("gpu", "?")] = out.get(r.get("gpu", "?"), 0.0) + on_gpu(r)
    return dict(sorted(out.items()))


def stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def progress(run: str) -> tuple[float | None, float | None, float | None]:
    """Seconds from grade.sh's start to when the GPUs could begin (the course ready: progress.log's
    first line), to the first result and to the last (progress.log's stamps, to the second)."""
    try:
        start = float(read(os.path.join(run, "start.txt")).strip())
        log = read(os.path.join(run, "progress.log"))
        began = [stamp(m.group(1)) for m in re.finditer(r"^(\S+Z) grading [0-9]+ cells", log, re.M)]
        times = [stamp(m.group(1)) for m in re.finditer(r"^(\S+Z) \[[0-9]+/", log, re.M)]
    except (OSError, ValueError):
        return None, None, None
    if not times or not began:
        return None, None, None
    return began[0] - start, times[0] - start, times[-1] - start


def course(run: str) -> str:
    info = read(os.path.join(run, "run-info.txt"))
    m = re.search(r"^The course and its judges were built once, in ([0-9.]+) s", info, re.M)
    if m:
        return "built, %.1f s" % float(m.group(1))
    m = re.search(r"^The course and its judges came from the course cache .*ready in ([0-9.]+) s", info, re.M)
    return "from the cache, %.1f s" % float(m.group(1)) if m else "?"


def gradebook(run: str) -> dict[tuple[str, str], dict[str, str]]:
    with open(os.path.join(run, "gradebook.csv"), newline="", encoding="utf-8") as f:
        return {(r["student"], r["lesson"]): r for r in csv.DictReader(f)}


CLASS, LESSONS = 200, 6  # the class the issue names: 200 students, six lessons


def pace(x: dict) -> float | None:
    """Cells per hour from the run's first result to its last (None: one result, or stamps apart by
    less than a second): the pace a class much larger than the bench's keeps, the fixed start left out."""
    n = len(x["book"])
    if x["first"] is None or x["last"] is None or n < 2 or x["last"] <= x["first"]:
        return None
    return (n - 1) * 3600 / (x["last"] - x["first"])


def class_minutes(x: dict, cells_per_hour: float) -> float:
    """Minutes to grade CLASS students at CELLS_PER_HOUR after the run's first result."""
    return (x["first"] + (CLASS * LESSONS - 1) * 3600 / cells_per_hour) / 60


def f1(x: float | None) -> str:
    return "-" if x is None else "%.1f" % x


def runs_table(out: str) -> dict[str, dict]:
    got = {}
    for name, label in RUNS + (("all", "all the machine's GPUs (--gpus 0,...)"),):
        run = os.path.join(out, name)
        if name == "all" and not os.path.isdir(run):  # only on a machine of more than two GPUs
            continue
        rows, book = cells(run), gradebook(run)
        wall = float(read(os.path.join(run, "wall.txt")))
        began, first, last = progress(run)
        per_cell = [on_gpu(r) for r in rows if "run_s" in r]
        got[name] = {"label": label, "rows": rows, "book": book, "wall": wall, "began": began, "first": first, "last": last,
                     "busy": busy(rows), "per_cell": statistics.median(per_cell) if per_cell else None,
                     "passed": sum(1 for r in book.values() if r.get("correctness") == "passed"), "course": course(run)}
    return got


def report(out: str) -> str:
    r = runs_table(out)
    one, two, warm = r["one"], r["two"], r["warm"]
    lines = ["One GPU against two: %d cells (%d passed with one GPU, %d with two), the same class and seed."
             % (len(one["book"]), one["passed"], two["passed"]), "",
             "%-42s %8s %8s %13s %12s  %s" % ("run", "wall s", "cells/h", "first result", "GPU time", "the course and its judges")]
    for name in r:
        x = r[name]
        lines.append("%-42s %8.1f %8.0f %11s s %10s s  %s" % (x["label"], x["wall"], len(x["book"]) * 3600 / x["wall"],
                                                             f1(x["first"]), "%.2f" % x["per_cell"] if x["per_cell"] else "-",
                                                             x["course"]))
    lines.append("(GPU time: the median of a cell's checks on its GPU: run, judge, sanitizers, memcheck subset, speed witness, evidence;"
                 " less the judge's time beside the next cell's run, judge_beside_s)")
    speedup = one["wall"] / two["wall"]
    lines += ["", "speed-up, both runs warm (the course from the cache): %.2fx" % speedup]
    p1, p2 = pace(one), pace(two)
    if p1 and p2:
        lines.append("after the first result (the pace a large class keeps once its first cell is done): one GPU %.0f cells/h, two GPUs "
                     "%.0f cells/h: %.2fx; at those paces a class of %d students (%d cells) takes %.0f min on one GPU and %.0f min on two, "
                     "each run's first result included"
                     % (p1, p2, p2 / p1, CLASS, CLASS * LESSONS, class_minutes(one, p1), class_minutes(two, p2)))
    if "all" in r:
        gpus = len(r["all"]["busy"]) or 1
        lines.append("speed-up on all %d GPUs against one, both warm: %.2fx (%d of %d cells passed)"
                     % (gpus, one["wall"] / r["all"]["wall"], r["all"]["passed"], len(r["all"]["book"])))
    if warm["first"] is not None and one["first"] is not None:
        extra = max(0.0, warm["first"] - one["first"])
        lines.append("speed-up as if both had built the course cold (+%.1f s each: the cold start's first result came that much later): %.2fx"
                     % (extra, (one["wall"] + extra) / (two["wall"] + extra)))
    b1, b2 = one["busy"], two["busy"]
    if b1 and b2:
        lines.append("GPU busy (checks summed per GPU): one GPU: %s; two GPUs: %s; the GPUs' own ratio %.2fx"
                     % (", ".join("GPU %s %.1f s" % kv for kv in b1.items()), ", ".join("GPU %s %.1f s" % kv for kv in b2.items()),
                        sum(b1.values()) / max(b2.values())))
    for name in ("one", "two"):
        x = r[name]
        if x["began"] is not None and x["last"] is not None:
            span = x["last"] - x["began"]
            idle = {g: span - s for g, s in x["busy"].items()}
            lines.append("%s: the GPUs could begin %.0f s after the start and gave the last result %.0f s later; each GPU idle "
                         "in that span (the span less its busy time; stamps to the second): %s"
                         % (x["label"], x["began"], span, ", ".join("GPU %s %.0f s" % kv for kv in idle.items())))
    lines += ["", "%-14s %10s %10s   (sums over the cells, s)" % ("step", "one GPU", "two GPUs")]
    for k in STEPS:
        lines.append("%-14s %10.1f %10.1f" % (k, sum(c.get(k, 0.0) for c in one["rows"]), sum(c.get(k, 0.0) for c in two["rows"])))
    keys = ("compiled", "checks passed", "checks total", "correctness")
    same = sum(1 for k, row in one["book"].items() if k in two["book"] and all(row.get(c) == two["book"][k].get(c) for c in keys))
    whole = sum(1 for k, row in one["book"].items() if two["book"].get(k) == row)
    lines += ["", "gradebooks: %d of %d rows agree on correctness (compiled, checks, correctness); %d of %d in every column "
              "(performance and score hang on speeds measured in each run)" % (same, len(one["book"]), whole, len(one["book"]))]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: two_gpus_report.py OUT (the folder bench/two_gpus.sh wrote)")
    print(report(sys.argv[1]))
