#!/usr/bin/env python3
"""Hardware counters of an exercise's kernels, read by Nsight Compute and judged by its rubric.
Run from the course's root as `python3 -m grading.counters ...` (grading/ is a package).

    counters.py measure CHECK --rubric RUBRIC [--json] [--timeout S] [--save DIR] [--values FILE] [--full] [--ncu PATH]
        runs CHECK (a lesson's check binary, e.g. build/02_shared_transpose_check) under ncu, once
        per test case the rubric's "counters" rules name:
            ncu --csv --metrics ... --kernel-name regex:... --launch-count N \\
                CHECK --gpu --small --test-case=...
        and judges each rule on the sums over every profiled launch of the rule's kernel.
        --full leaves out --small (every shape of the test case); --save DIR keeps ncu's raw CSV and
        the command lines there; --json prints the result as JSON instead of the table; --values FILE
        writes the sums as {kernel: {metric: value}}, what grading/evidence.py --counters FILE reads
        ({} when the counters could not be read).
    counters.py judge --rubric RUBRIC --csv FILE [--csv FILE ...] [--json]
        the same judgement on ncu CSV recorded earlier (the tests; a result committed from a GPU run).
    counters.py record RESULT.json --rubric RUBRIC --source DIR
        writes the values of RESULT.json (measure --json on the COURSE'S SOLUTION) into the rubric's
        counters rules as "solution": {arch: value}, and names DIR (where the raw output is committed)
        in its "recorded" note: no value goes into a rubric that a GPU run did not measure.

A counters rule (lessons/NN_name/rubric.json, list "counters"):
  {"exercise": "02.tiled", "kernel": regex on ncu's demangled kernel name, "launch": regex for ncu's
   --kernel-name filter, "test_case": the check's GPU test case to profile, "metric": ncu metric,
   "per": ncu metric or null, "op": "<=", "value": threshold, "short": words when it falls short,
   optional "solution": {"sm_90": value} (only through `record`), "fallback", "fallback_note",
   "static_kernels" (the static rules' kernel patterns a "static" fallback uses)}

What is measured (the metric names the lessons' ncu scripts use on the H100 and H200):
  * global loads and stores: sectors per request (l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum /
    l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum, and _st): 4 when a warp's 32 floats are
    consecutive (5 when they straddle a 32-byte boundary), up to 32 when each lane is a row apart;
  * shared loads and stores: wavefronts per instruction (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum /
    smsp__inst_executed_op_shared_ld.sum, and _st): 1 for a conflict-free 4-byte access, 32 for the
    column of an unpadded 32 x 32 tile (lesson 06's bank model; its ncu_probes.sh checks the model
    against these counters).
A rule's value is the ratio of the sums over all profiled launches of its kernel in the test case
(small and awkward shapes included): a bound that every single access meets (at most 5 sectors for a
coalesced warp, 1 wavefront for a conflict-free one) holds for the sum too, while a strided or
conflicting access shows up at nearly full strength, since the large shapes dominate the sums.

When the counters cannot be read (no ncu, no GPU, ERR_NVGPUCTRPERM: the driver lets only root read
them, a time limit) the result says why, in words, and each rule falls back as its rubric says:
  "fallback": "static"            the rubric's static "rules" on the same kernel's shared bytes
                                  (grading/static_evidence.py; cuobjdump on the check binary): a
                                  32 x 33 tile has 128 bytes more than a 32 x 32 one;
  "fallback": {"model": [...], "mentions": "PaddedTile", "hint": "..."}
                                  the lesson's own bank model on the student's layout: the check's
                                  host test cases listed (run with doctest's XML reporter) and the
                                  failed expressions that name the layout;
  no fallback                     "not measured", with the rule's "fallback_note" saying why no
                                  model applies.
Counters are evidence of speed: shown beside correctness, never failing it. Exit status: 0 when a
report was printed (whatever it says), 2 for bad input (no such binary, a malformed rubric).
"""
import argparse
import json
import os
import re
import sys
import time
import xml.etree.ElementTree as ET

from . import static_evidence
from .counters_rules import _OPS, DEFAULT_TIMEOUT, LAUNCH_CAP, CountersError, doctest_filter, label, load_rules, pattern_name
from .ncu import arch_of, diagnose, find_ncu, ncu_errors, parse_csv, per_kernel, run_limited
from .ncu import parse_value as parse_value  # (the tests read values through this module)

# ---------------------------------------------------------------- measuring

def plan(rules):
    """One ncu run per test case: {test case: (metrics, launch regex)}, in the rules' order."""
    runs = {}
    for rule in rules:
        metrics, launch = runs.setdefault(rule["test_case"], ([], []))
        for m in (rule["metric"], rule.get("per")):
            if m and m not in metrics:
                metrics.append(m)
        if rule["launch"] not in launch:
            launch.append(rule["launch"])
    return {tc: (m, "|".join(f"({x})" for x in l) if len(l) > 1 else l[0]) for tc, (m, l) in runs.items()}


def ncu_command(ncu, binary, test_case, metrics, launch, small=True):
    # --print-kernel-base demangled: the kernel column names the template instance (transpose_tiled<33>,
    # not only transpose_tiled), which the rules' "kernel" patterns tell apart; --print-units base:
    # counts as plain numbers
    return [ncu, "--csv", "--clock-control", "none", "--print-kernel-base", "demangled", "--print-units", "base",
            "--metrics", ",".join(metrics),
            "--kernel-name", "regex:" + launch, "--launch-count", str(LAUNCH_CAP),
            binary, "--gpu", *(["--small"] if small else []), "--test-case=" + doctest_filter(test_case)]


def profile(binary, rules, timeout=DEFAULT_TIMEOUT, small=True, ncu=None, save=None):
    """Runs ncu once per test case. Returns (launches, runs, reason): every profiled launch, what each
    run did, and None or the reason the counters could not be read."""
    tool = find_ncu(ncu)
    if tool is None:
        return [], [], "no Nsight Compute: ncu is not on PATH (set NCU=/path/to/ncu, or put the CUDA toolkit's bin/ on PATH)"
    launches, runs, reason = [], [], None
    for i, (test_case, (metrics, launch)) in enumerate(plan(rules).items()):
        cmd = ncu_command(tool, binary, test_case, metrics, launch, small)
        t0 = time.monotonic()
        rc, out, timed_out = run_limited(cmd, timeout)
        got = parse_csv(out)
        run = {"test_case": test_case, "command": cmd, "rc": rc, "seconds": round(time.monotonic() - t0, 1),
               "launches": len(got)}
        if save:
            os.makedirs(save, exist_ok=True)
            with open(os.path.join(save, f"ncu_{i + 1}.txt"), "w", encoding="utf-8") as f:
                f.write(out)
            with open(os.path.join(save, f"ncu_{i + 1}.cmd"), "w", encoding="utf-8") as f:
                f.write(" ".join(_quote(c) for c in cmd) + "\n")
        why = diagnose(out, rc, timed_out, timeout)
        if why is None and not got and ncu_errors(out):
            why = "ncu failed: " + ncu_errors(out)[0]
        run["reason"] = why
        runs.append(run)
        if why is not None:
            reason = why
            if not timed_out:  # no GPU, no permission: every other run would say the same
                break
            continue
        launches.extend(got)
    return launches, runs, reason


def _quote(s):
    return s if re.fullmatch(r"[\w./:=,+-]+", s) else "'" + s.replace("'", "'\\''") + "'"


# ---------------------------------------------------------------- judging

def judge_counters(rules, kernels, arch):
    """One row per rule and matching kernel: exercise, kernel, label, yours, solution, expect, status
    (ok | short | not measured | missing), words, source ("ncu")."""
    rows = []
    for rule in rules:
        pattern = re.compile(rule["kernel"])
        names = sorted(n for n in kernels if pattern.search(n))
        base = dict(exercise=rule["exercise"], label=label(rule), expect=f"{rule['op']} {rule['value']}",
                    solution=(rule.get("solution") or {}).get(arch) if arch else None, source="ncu")
        if not names:
            rows.append(dict(base, kernel=rule["kernel"], yours=None, launches=0, status="missing",
                             words=f"no launch of a kernel matching /{rule['kernel']}/ in the test case "
                                   f"\"{rule['test_case']}\""))
            continue
        for name in names:
            k = kernels[name]
            num = k["metrics"].get(rule["metric"])
            den = k["metrics"].get(rule["per"]) if rule.get("per") else 1.0
            row = dict(base, kernel=name, launches=k["launches"])
            if num is None or den is None:
                rows.append(dict(row, yours=None, status="not measured",
                                 words="ncu reported no value for " + (rule["metric"] if num is None else rule["per"])))
            elif den == 0:
                rows.append(dict(row, yours=None, status="not measured",
                                 words=f"the kernel made no such access ({rule['per']} is 0)"))
            else:
                yours = num / den
                ok = _OPS[rule["op"]](yours, rule["value"])
                rows.append(dict(row, yours=round(yours, 3), status="ok" if ok else "short",
                                 words=rule.get("ok", "") if ok else rule["short"].replace("{yours}", f"{yours:.3g}")))
    return rows


def fallback_rows(rules, rubric, binary, reason, timeout=60):
    """The rows when no counter could be read: each rule's fallback, or "not measured" and why."""
    rows, static_facts, static_error, model_cache, static_shown = [], None, None, {}, set()
    for rule in rules:
        base = dict(exercise=rule["exercise"], label=label(rule), expect=f"{rule['op']} {rule['value']}",
                    solution=None, yours=None, launches=0)
        fb = rule.get("fallback")
        if fb == "static":
            if static_facts is None and static_error is None:
                try:
                    static_facts = static_evidence.facts_from_binary(binary)
                except (static_evidence.EvidenceError, OSError) as e:
                    static_error = str(e)
            for row in static_fallback(rule, rubric, static_facts, static_error, base):
                key = (row["exercise"], row["kernel"], row["label"], row["expect"])
                if key not in static_shown:  # several counters share one static stand-in: show it once
                    static_shown.add(key)
                    rows.append(row)
        elif isinstance(fb, dict):
            key = tuple(fb["model"])
            if key not in model_cache:
                model_cache[key] = run_model(binary, fb["model"], timeout)
            if (rule["exercise"], fb["mentions"]) not in static_shown:  # the model judges the layout once
                static_shown.add((rule["exercise"], fb["mentions"]))
                rows.append(model_fallback(rule, fb, model_cache[key], base))
        else:
            note = rule.get("fallback_note", "no model of this counter applies to the submitted code")
            rows.append(dict(base, kernel=pattern_name(rule["kernel"]), status="not measured", source=None,
                             words=f"counters not read; {note}"))
    return rows


def static_fallback(rule, rubric, facts, error, base):
    """The rubric's static rules on this rule's kernel and its shared bytes, judged by static_evidence."""
    kernels = rule.get("static_kernels", [rule["kernel"]])
    mine = [r for r in rubric.get("rules", []) if r.get("kernel") in kernels and r.get("fact") == "shared"]
    if error is not None or not mine:
        why = error or f"the rubric has no static shared-bytes rule for /{rule['kernel']}/"
        return [dict(base, kernel=pattern_name(rule["kernel"]), status="not measured", source=None,
                     words=f"counters not read, and no static fallback: {why}")]
    rows = []
    for row in static_evidence.judge({"rules": mine}, facts):
        status = row["status"] if row["status"] in ("ok", "short", "missing") else "not measured"
        rows.append(dict(base, kernel=row["kernel"], label=row["label"] + " (static, instead of the counter)",
                         yours=row["yours"], solution=row["solution"], expect=row.get("expect", ""),
                         status=status, source="static facts", words=row["words"]))
    return rows


def run_model(binary, test_cases, timeout):
    """The check's host test cases (the lesson's model on the student's code) with doctest's XML
    reporter: (failed expressions with their context, error or None)."""
    cmd = [binary, "--host", "--test-case=" + ",".join(doctest_filter(t) for t in test_cases), "--reporters=xml"]
    try:
        rc, out, timed_out = run_limited(cmd, timeout)
    except OSError as e:
        return [], f"cannot run {binary}: {e}"
    if timed_out:
        return [], f"the check's host test cases ran past {timeout} s"
    return parse_doctest_xml(out, test_cases)


def parse_doctest_xml(text, test_cases):
    """(failures, error): each failure is the text of one failed expression, its expansion and its
    INFO context; error is None, or why the expected test cases did not all run."""
    start = text.find("<?xml")
    if start < 0:
        return [], "the check printed no XML (doctest --reporters=xml)"
    try:
        root = ET.fromstring(text[start:].strip())
    except ET.ParseError as e:
        return [], f"unreadable XML from the check: {e}"
    failures, ran = [], 0
    for case in root.iter("TestCase"):
        if case.get("skipped") == "true":
            continue
        ran += 1
        for expr in case.iter("Expression"):
            if expr.get("success") == "false":
                parts = [(e.text or "").strip() for e in expr if e.tag in ("Original", "Expanded", "Info")]
                failures.append(f"{case.get('name')}: " + " | ".join(p for p in parts if p))
        for exc in case.iter("Exception"):
            failures.append(f"{case.get('name')}: threw {(exc.text or '').strip()}")
    if ran < len(test_cases):
        return failures, f"{ran} of the {len(test_cases)} model test cases ran"
    return failures, None


def model_fallback(rule, fb, result, base):
    failures, error = result
    kernel = pattern_name(rule["kernel"])
    if error is not None:
        return dict(base, kernel=kernel, status="not measured", source=None,
                    words=f"counters not read, and the lesson's model could not be run: {error}")
    mine = [f for f in failures if fb["mentions"] in f]
    lab = f"the bank model on your {fb['mentions']}"
    base = dict(base, kernel=kernel, label=lab, expect="conflict-free, one word per element", source="bank model")
    if mine:
        return dict(base, status="short",
                    words=f"the lesson's bank model (the check's host test cases) on your {fb['mentions']}: a warp's "
                          f"row or column of the tile is not conflict-free, or two elements share a word. "
                          f"{fb.get('hint', '')} First failure: {mine[0][:300]}".replace("  ", " "))
    return dict(base, status="ok", words="conflict-free by the lesson's bank model (the check's host test cases on your layout)")


# ---------------------------------------------------------------- the whole measurement

def measure(binary, rubric_path, timeout=DEFAULT_TIMEOUT, small=True, ncu=None, save=None):
    """Everything `measure` prints, as a dict (what --json prints; the grader calls this)."""
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise CountersError(f"no executable check at {binary}")
    rubric, rules = load_rules(rubric_path)
    result = {"rubric": rubric_path, "binary": binary, "about": rubric.get("about", ""), "runs": [],
              "counters": {"read": False, "reason": None, "arch": None}, "kernels": {}, "rows": []}
    if not rules:
        result["counters"]["reason"] = "the rubric has no counters rules"
        return result
    launches, runs, reason = profile(binary, rules, timeout, small, ncu, save)
    result["runs"] = runs
    return finish(result, rules, rubric, launches, reason, binary)


def finish(result, rules, rubric, launches, reason, binary=None):
    arch = arch_of(launches)
    result["counters"] = {"read": reason is None, "reason": reason, "arch": arch}
    kernels = per_kernel(launches)
    result["kernels"] = kernels
    # the shape grading/evidence.py --counters FILE reads: {kernel: {metric: value}}, sums over launches
    result["values"] = {name: dict(k["metrics"]) for name, k in kernels.items()}
    if reason is None:
        result["rows"] = judge_counters(rules, kernels, arch)
    elif binary is not None:
        result["rows"] = fallback_rows(rules, rubric, binary, reason)
    else:
        result["rows"] = [dict(exercise=r["exercise"], kernel=r["kernel"], label=label(r), yours=None, solution=None,
                               expect="", launches=0, status="not measured", source=None,
                               words="counters not read") for r in rules]
    return result


def report(result, out=None):
    out = out or sys.stdout
    c = result["counters"]
    print(f"hardware counters ({result.get('about') or result['rubric']}):", file=out)
    if not c["read"]:
        print(f"  counters not read: {c['reason']}", file=out)
        if any(r["source"] for r in result["rows"]):
            print("  instead: what the lesson's models and the compiled kernel say", file=out)
    elif c["arch"]:
        print(f"  Nsight Compute, {c['arch']}; each value is the ratio of sums over every profiled launch of the kernel", file=out)
    for r in result["rows"]:
        mark = {"ok": "ok", "short": "short", "not measured": "-", "missing": "?"}[r["status"]]
        yours = "-" if r["yours"] is None else f"{r['yours']:g}"
        solution = "-" if r["solution"] is None else f"{r['solution']:g}"
        name = static_evidence.short_name(r["kernel"])
        print(f"  [{mark:5}] {r['exercise']:17} {name[:40]:40} {r['label']:42} yours {yours:>7}   "
              f"solution {solution:>7}   ({r['expect']})", file=out)
        if r["status"] != "ok" and r["words"]:
            print(f"          {r['words']}", file=out)
    if any(r["status"] == "short" for r in result["rows"]):
        print("  (short: evidence of speed, shown beside correctness and never failing it)", file=out)


# ---------------------------------------------------------------- recording the solution's values

NOT_RECORDED = "no solution value is recorded for them yet: none has been measured on a GPU."


def record(result, rubric_path, source, gpu=None):
    """Writes the values a measurement of the COURSE'S SOLUTION gave into the rubric's counters rules,
    as "solution": {arch: value} (the largest value over the rule's kernels: the one a "<=" threshold
    must clear), and says in the rubric's "recorded" note where the raw output is. Only rules that
    were measured ("ok" or "short") get a value; the rubric's text is edited line by line, so the
    rest of the file stays as it was. Returns the number of values written."""
    if not result.get("counters", {}).get("read"):
        raise CountersError("this result has no counters (" + str(result.get("counters", {}).get("reason")) + "): nothing to record")
    arch = result["counters"].get("arch")
    if not arch:
        raise CountersError("this result does not say the GPU's architecture (ncu's CC column)")
    with open(rubric_path, encoding="utf-8") as f:
        text = f.read()
    rubric, rules = load_rules(rubric_path)
    written = 0
    for rule in rules:
        values = [r["yours"] for r in result["rows"] if r["exercise"] == rule["exercise"] and r["label"] == label(rule)
                  and r["status"] in ("ok", "short") and re.search(rule["kernel"], r["kernel"])]
        if not values:
            continue
        old = json.dumps(rule, ensure_ascii=False)
        if text.count(old) != 1:
            raise CountersError(f"{rubric_path}: the rule for {rule['exercise']} ({label(rule)}) is not on a line of its own "
                                "as json.dumps writes it; record its value by hand")
        new_rule = {}
        for k, v in rule.items():
            if k == "short":
                new_rule["solution"] = dict(rule.get("solution") or {}, **{arch: max(values)})
            if k != "solution":
                new_rule[k] = v
        text = text.replace(old, json.dumps(new_rule, ensure_ascii=False))
        written += 1
    note = (f"solution values of the counters rules: the course's solution measured on {gpu or result.get('gpu') or arch} by "
            f"scripts/counters_run.sh, raw ncu output in {source}.")
    if NOT_RECORDED in text:
        text = text.replace(NOT_RECORDED, note)
    elif note not in text:
        text = re.sub(r'("recorded": ".*?)(",\n)', lambda m: m.group(1) + " " + note + m.group(2), text, count=1)
    json.loads(text)
    with open(rubric_path, "w", encoding="utf-8") as f:
        f.write(text)
    return written


def _parser():
    ap = argparse.ArgumentParser(prog="counters.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="profile a check binary under ncu and judge the rubric's counters rules")
    m.add_argument("binary")
    m.add_argument("--rubric", required=True)
    m.add_argument("--json", action="store_true")
    m.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT, help="seconds per ncu run (default %(default)s)")
    m.add_argument("--save", metavar="DIR", help="keep ncu's raw output and command lines in DIR")
    m.add_argument("--full", action="store_true", help="every shape of the test case (no --small)")
    m.add_argument("--ncu", help="the ncu to use (default: $NCU, PATH, $CUDA_HOME/bin)")
    m.add_argument("--values", metavar="FILE", help="also write {kernel: {metric: sum}} to FILE (grading/evidence.py --counters FILE)")
    j = sub.add_parser("judge", help="judge recorded ncu CSV output")
    j.add_argument("--rubric", required=True)
    j.add_argument("--csv", action="append", required=True, metavar="FILE")
    j.add_argument("--json", action="store_true")
    r = sub.add_parser("record", help="write the course solution's measured values into the rubric")
    r.add_argument("result", help="what `measure --json` printed for the course's solution")
    r.add_argument("--rubric", required=True)
    r.add_argument("--source", required=True, help="where the raw output is committed, e.g. results/h100/counters/02_shared_transpose")
    r.add_argument("--gpu", help="the GPU's name, for the note (default: the architecture)")
    return ap


def main(argv):
    a = _parser().parse_args(argv)
    try:
        if a.command == "record":
            try:
                with open(a.result, encoding="utf-8") as f:
                    result = json.load(f)
            except (OSError, json.JSONDecodeError) as e:
                raise CountersError(f"cannot read {a.result}: {e}") from e
            print(f"counters.py: {record(result, a.rubric, a.source, a.gpu)} solution values written into {a.rubric}")
            return 0
        if a.command == "measure":
            if a.timeout <= 0:
                raise CountersError("--timeout must be a positive number of seconds")
            result = measure(a.binary, a.rubric, a.timeout, not a.full, a.ncu, a.save)
        else:
            rubric, rules = load_rules(a.rubric)
            launches = []
            for path in a.csv:
                try:
                    with open(path, encoding="utf-8", errors="replace") as f:
                        launches.extend(parse_csv(f.read()))
                except OSError as e:
                    raise CountersError(f"cannot read {path}: {e}") from e
            reason = None if launches else "no ncu CSV rows in " + ", ".join(a.csv)
            result = finish({"rubric": a.rubric, "binary": None, "about": rubric.get("about", ""), "runs": [],
                             "counters": {}, "kernels": {}, "rows": []}, rules, rubric, launches, reason)
    except CountersError as e:
        print(f"counters.py: {e}", file=sys.stderr)
        return 2
    if getattr(a, "values", None):
        try:
            with open(a.values, "w", encoding="utf-8") as f:
                json.dump(result["values"] if result["counters"]["read"] else {}, f, indent=1)
        except OSError as e:
            print(f"counters.py: cannot write {a.values}: {e}", file=sys.stderr)
            return 2
    if a.json:
        print(json.dumps(result, indent=1))
    else:
        report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
