"""Each exercise's speed-credit curve ("full" and "zero" of its rubric's speed rule), from the spread
of the course solution's own speed measured on a GPU (maintainers; no GPU needed to run it).

    python3 -m grading.speed_thresholds            the table: rounds, spread, full, zero per exercise
    python3 -m grading.speed_thresholds --write    writes "full" and "zero" into lessons/*/rubric.json
    python3 -m grading.speed_thresholds --check    exit 1 when a rubric's numbers are not the table's
    ... [--source PATH]...                         read these instead of SOURCES (globs, from the repository root)

A round is one timing of the course solution's speed case beside its ceiling (the median of 21
runs): a row of a mutation run's solution.csv, or the judge's solution figures in a graded cell's
verdict.json or evidence.json. Its ceiling fraction is ceiling_ms / ms. Per GPU (the folder under
results/) and exercise, with at least MIN_ROUNDS rounds, the spread is (max - min) / median of the
fractions: the solution graded against itself can land that far below its own speed. An exercise's
spread is the largest over the GPUs, and

    full = 1 - K x spread, clamped to [FULL_LOW, FULL_HIGH], rounded down to 0.01
    zero = ZERO (IDEA_ZERO where the idea missed runs faster than that)

K = 2 leaves the solution twice its own worst shortfall. The clamp keeps the curve sane where the data
is thin or noisy: FULL_HIGH = 0.92 keeps at least an 8% allowance (a class run shares the machine
with the cells' compiles; in the graded cells of SOURCES the solution's speed as a share of itself
went as low as 97%), FULL_LOW = 0.85 keeps a noisy exercise's curve from going flat. ZERO = 0.4:
a kernel at 40% of the solution's speed or slower has missed the lesson's point (lesson 01's naive
transpose in lesson 02's tiled gap runs at about 18%) and earns no speed credit. An exercise with
no GPU group of MIN_ROUNDS rounds gets FULL_LOW. The same rounds, read twice (a verdict and its
evidence.json), count once.
"""
from __future__ import annotations

import csv
import glob
import json
import math
import os
import re
import statistics
import sys

from . import cmdline

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# The committed GPU data that times the course solution (on an H100; the H200 runs committed only
# console summaries, which are not read: grading/README.md says what they show).
SOURCES = ["results/h100/evidence/mutation/solution.csv",          # 8 rounds of every exercise
           "results/h100/evidence/mutation-03/solution.csv",       # 4 more of lesson 03
           "results/h100/evidence/cost/on/evidence/*.json",        # 18 graded cells: the judge's solution figures
           "results/h100/evidence/grade-mutants/cells/*/verdict.json",
           "results/h100/evidence/grade-mutants/cells/*/evidence.json"]
K = 2.0
FULL_LOW, FULL_HIGH = 0.85, 0.92
ZERO = 0.4
MIN_ROUNDS = 3
# Where the lesson's own kernel without the exercise's idea runs above ZERO, the curve starts higher,
# so that kernel keeps less than half the speed credit (it must lose at least 15 of 100 points):
# lesson 03's plain loop, one load in flight (03.tile's code in 03.tile_in_flight's place), ran at
# 0.16152 / 0.2152 = 75% of the solution's speed on an H200 (results/h200/results.csv, 32 x 33 tiles).
IDEA_ZERO = {"03.tile_in_flight": 0.6}


def _gpu(path: str, root: str) -> str:
    """The GPU group of a file: its folder under ROOT/results/ (results/h100/... -> h100)."""
    parts = os.path.relpath(path, root).split(os.sep)
    return parts[1] if len(parts) > 2 and parts[0] == "results" else "?"


def _fraction(ms: object, ceiling_ms: object) -> float | None:
    try:
        f = float(ceiling_ms) / float(ms)  # type: ignore[arg-type]
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return f if math.isfinite(f) and f > 0 else None


def _rounds_of(path: str) -> list[tuple[str, float, float]]:
    """(exercise, ms, ceiling_ms) of each solution timing in one file."""
    out: list[tuple[str, float, float]] = []
    if path.endswith(".csv"):
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if _fraction(row.get("ms"), row.get("ceiling_ms")) is not None and row.get("exercise"):
                    out.append((row["exercise"], float(row["ms"]), float(row["ceiling_ms"])))
        return out
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if isinstance(data.get("evidence"), list):  # a verdict
        for e in data["evidence"]:
            sol = e.get("solution") if isinstance(e, dict) else None
            if isinstance(sol, dict) and _fraction(sol.get("ms"), sol.get("ceiling_ms")) is not None:
                out.append((e["exercise"], float(sol["ms"]), float(sol["ceiling_ms"])))
    for r in data.get("rules", []) if isinstance(data.get("rules"), list) else []:  # an evidence.json
        if r.get("kind") == "speed" and _fraction(r.get("solution_ms"), r.get("solution_ceiling_ms")) is not None:
            out.append((r["exercise"], float(r["solution_ms"]), float(r["solution_ceiling_ms"])))
    return out


def read_rounds(sources: list[str], root: str = ROOT) -> dict[tuple[str, str], list[float]]:
    """{(gpu, exercise): [ceiling fraction of each round]} from the files SOURCES name (globs under
    ROOT); the same timing (file content or figures) counts once."""
    seen_files: set[bytes] = set()
    seen: set[tuple[str, str, float, float]] = set()
    out: dict[tuple[str, str], list[float]] = {}
    for pattern in sources:
        paths = sorted(glob.glob(os.path.join(root, pattern)))
        if not paths:
            raise FileNotFoundError("no file matches %s" % pattern)
        for path in paths:
            with open(path, "rb") as f:
                content = f.read()
            if content in seen_files:  # (results/h100/evidence/solution.csv is a copy of the mutation run's)
                continue
            seen_files.add(content)
            for exercise, ms, cms in _rounds_of(path):
                key = (_gpu(path, root), exercise, ms, cms)
                if key not in seen:
                    seen.add(key)
                    out.setdefault(key[:2], []).append(cms / ms)
    return out


def spread(fractions: list[float]) -> float:
    return (max(fractions) - min(fractions)) / statistics.median(fractions)


def full_of(spreads: list[float]) -> float:
    """The curve's "full" from the spreads of an exercise's GPU groups (none: FULL_LOW)."""
    if not spreads:
        return FULL_LOW
    full = min(FULL_HIGH, max(FULL_LOW, 1 - K * max(spreads)))
    return math.floor(full * 100 + 1e-9) / 100


def table(rounds: dict[tuple[str, str], list[float]], exercises: list[str]) -> list[dict]:
    """One row per exercise: {"exercise", "groups": {gpu: (rounds, spread)}, "full", "zero"}."""
    rows = []
    for ex in exercises:
        groups = {gpu: (len(v), spread(v)) for (gpu, e), v in sorted(rounds.items()) if e == ex and len(v) >= MIN_ROUNDS}
        rows.append({"exercise": ex, "groups": groups, "full": full_of([s for _, s in groups.values()]),
                     "zero": IDEA_ZERO.get(ex, ZERO)})
    return rows


def rubric_paths(root: str = ROOT) -> list[str]:
    return sorted(glob.glob(os.path.join(root, "lessons", "[0-9][0-9]_*", "rubric.json")))


def speed_exercises(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            out += [r["exercise"] for r in json.load(f).get("speed", [])]
    return out


def rewrite(text: str, rows: list[dict]) -> str:
    """TEXT (a rubric) with each of its speed rules' "full" and "zero" set to the table's (written
    after "min_ratio", the rest of the file as it was). Raises ValueError where a rule is not laid
    out as the rubrics are ({"exercise": ID, "min_ratio": R, ...)."""
    by = {r["exercise"]: r for r in rows}
    for rule in json.loads(text).get("speed", []):
        r = by[rule["exercise"]]
        pattern = re.compile(r'(\{"exercise": "%s", "min_ratio": [0-9.]+)(, "full": [0-9.]+, "zero": [0-9.]+)?' % re.escape(rule["exercise"]))
        text, n = pattern.subn(r'\1, "full": %s, "zero": %s' % (r["full"], r["zero"]), text)
        if n != 1:
            raise ValueError('speed rule %s: expected one {"exercise": "%s", "min_ratio": ...} to write into' % (rule["exercise"], rule["exercise"]))
    return text


def differences(paths: list[str], rows: list[dict]) -> list[str]:
    """Each speed rule whose "full" or "zero" is not the table's."""
    by = {r["exercise"]: r for r in rows}
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for rule in json.load(f).get("speed", []):
                want = by[rule["exercise"]]
                if (rule.get("full"), rule.get("zero")) != (want["full"], want["zero"]):
                    out.append("%s: %s has full %s, zero %s; the solution's spread gives full %s, zero %s"
                               % (os.path.relpath(p, ROOT), rule["exercise"], rule.get("full"), rule.get("zero"), want["full"], want["zero"]))
    return out


def render(rows: list[dict], sources: list[str]) -> str:
    lines = ["speed-credit curves from the course solution's own spread (python3 -m grading.speed_thresholds)",
             "sources: " + " ".join(sources),
             "full = 1 - %g x spread, clamped to [%g, %g], rounded down; zero = %g; a GPU counts with %d rounds or more"
             % (K, FULL_LOW, FULL_HIGH, ZERO, MIN_ROUNDS), ""]
    for r in rows:
        groups = "; ".join("%s: %d rounds, spread %.1f%%" % (g, n, 100 * s) for g, (n, s) in r["groups"].items()) or "no data"
        lines.append("%-18s full %.2f  zero %.2f  (%s)" % (r["exercise"], r["full"], r["zero"], groups))
    return "\n".join(lines) + "\n"


def _command_line(args: list[str]) -> tuple[str, list[str]] | None:
    """(mode: "", --write or --check; the --source paths) read by argparse; None: any other command
    line. cmdline.Unknown: --source with nothing after it."""
    p = cmdline.Parser("speed_thresholds")
    p.add_argument("--source", action="append", type=cmdline.value, default=None)
    for mode in ("--write", "--check"):
        p.add_argument(mode, dest="modes", action="append_const", const=mode)
    try:
        a = p.parse_args(cmdline.marked(args, flags=("--write", "--check"), valued=("--source",)))
    except cmdline.Unknown:
        raise
    except cmdline.Refused:
        return None
    modes = a.modes or []
    return (modes[0] if modes else "", a.source or []) if len(modes) <= 1 else None


def main(argv: list[str]) -> int:
    args = argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__)
        return 0
    try:
        read = _command_line(args)
    except cmdline.Unknown:
        print("speed_thresholds: --source needs a path", file=sys.stderr)
        return 2
    if read is None:
        print("speed_thresholds: unknown command line (see --help)", file=sys.stderr)
        return 2
    mode, sources = read
    args = [mode] if mode else []
    sources = sources or SOURCES
    try:
        paths = rubric_paths()
        rows = table(read_rounds(sources), speed_exercises(paths))
        if args == ["--write"]:
            for p in paths:
                with open(p, encoding="utf-8") as f:
                    text = rewrite(f.read(), rows)
                with open(p, "w", encoding="utf-8") as f:
                    f.write(text)
    except (OSError, ValueError, KeyError) as e:
        print("speed_thresholds: %s" % e, file=sys.stderr)
        return 2
    if args == ["--check"]:
        bad = differences(paths, rows)
        for line in bad:
            print(line)
        return 1 if bad else 0
    print(render(rows, sources), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
