#!/usr/bin/env python3
"""Performance evidence of one cell (or one student's run), judged by the lesson's rubric.
Run from the course's root as `python3 -m grading.evidence ...` (grading/ is a package).

    evidence.py judge RUBRIC VERDICT.json [--binary B | --dumps DIR] [--counters FILE] [--strict]
                                            every rule: met, short or not measured (JSON)
    evidence.py show  RUBRIC VERDICT.json [--binary B | --dumps DIR] [--counters FILE] [--strict]
                                            the same in the rubric's words
    evidence.py judge|show RUBRIC --lines EVIDENCE.jsonl [--solutions CSV]... [...]
                                            a student's own run (no judge): the lines a check
                                            wrote with --evidence FILE, beside the course
                                            solution's recorded figures for this GPU

VERDICT.json is the judge's verdict (its "evidence" list: the submission's and the course
solution's times of each `speed: <id>` test case, each beside its ceiling timed in the same
process); `-` stands for none. --binary reads the compiled kernels' static facts with cuobjdump
(grading/static_evidence.py), --dumps reads them from recorded cuobjdump output. --counters FILE:
Nsight Compute values, JSON {kernel: {metric: value}} or a list of {"kernel", "metric", "value"};
without it the rubric's "counters" rules are off (not judged, not counted).
Exit: 0 every contract (a "required" static rule) is met, 1 one fell short (with --strict: or any
performance rule fell short), 2 bad input.

A rubric (lessons/NN_name/rubric.json) holds three kinds of rules, each optional:
  "speed":    [{"exercise": "02.tiled", "min_ratio": 0.8, "short": "... {ratio} ...", "idea": "..."}]
              (optional "max_ratio" with "short_fast": an exercise that asks for the slower of two
              patterns falls short above it too, judged before the plausibility bound; "idea_test_case": rubric.idea_cases)
  "rules":    static facts of the compiled kernels (grading/static_evidence.py); an optional
              "exercise" names the exercise a rule belongs to; "required": true makes it a
              contract (judged here, but it is correctness, not performance); "idea": true: short,
              the exercise's speed earns no credit (rubric.idea_missed)
  "counters": [{"exercise", "kernel": regex, "metric", "op", "value", "per": metric or null, "short"}]

The speed ratio of an exercise is (sub.ceiling_ms / sub.ms) / (sol.ceiling_ms / sol.ms): the
submission's speed as a fraction of the course solution's, each normalized by the ceiling (a copy,
CUB's sum, cuBLAS) timed in the same process, which cancels the clock drift between the runner and
the judge. The submission's times come from the grader's speed witness (grading/witness.py), and
are still believed only within bounds: a time under half the ceiling's, a ratio above 2, or a value that is
not a finite number > 0 is implausible: not credited, and said so.

A performance fraction is met / (met + short) over the speed rules, the static rules that are not
contracts and the counters rules (when measured); a rule not measured (no GPU, no evidence for
it, no solution value for this architecture) counts neither way. None: nothing was measured.
A speed rule judged also earns a credit from 0 to 1 (rubric.speed_credit: all of it at or above
the rule's "full" share of the solution's speed, none at or below its "zero", a straight line
between; 0 when the time is implausible or missing); the lesson's speed credit is its lowest,
which the class grader's score uses (grading/score.py).
"""
import csv
import json
import math
import os
import re
import sys

from . import cmdline
from . import static_evidence as se
from .rubric import FULL, MAX_JSON_BYTES, MAX_RATIO, ZERO, RubricError, _clean, _number, _shown, exercises_of, idea_cases, idea_missed, load_rubric, percent, speed_credit, with_idea
from .rubric import validate_rubric as validate_rubric  # (the tests and the tools call it here too)

MIN_CEILING_SHARE, WORDS = 0.5, 800  # a time under this share of its ceiling's is implausible; a row's words: a shortfall and its idea

MET, SHORT, NOT_MEASURED = "met", "short", "not measured"


def speed_ratio(submission, solution, limit=MAX_RATIO):
    """(ratio, ceiling fraction of the submission, problem): problem is None when both are plausible;
    else the words why it is not credited (ratio then None). LIMIT: the ratio above which it is
    implausible (a rule's own "max_ratio" is judged with no limit first: see judge_speed)."""
    if not isinstance(submission, dict):
        return None, None, "the submission's time was not recorded (its speed test case did not finish)"
    ms, cms = _number(submission.get("ms")), _number(submission.get("ceiling_ms"))
    if ms is None or cms is None:
        bad = "ms" if ms is None else "ceiling_ms"
        return None, None, "implausible: the submission reported %s = %s, not a time" % (bad, _shown(submission.get(bad)))
    fraction = cms / ms
    if not math.isfinite(fraction) or fraction == 0:
        return None, None, "implausible: the submission reported %s ms beside a ceiling of %s ms" % (_shown(ms), _shown(cms))
    if ms < MIN_CEILING_SHARE * cms:
        return None, fraction, ("implausible: the submission reported %.4g ms, under half its ceiling's %.4g ms"
                                % (ms, cms))
    if not isinstance(solution, dict):
        return None, fraction, None
    sms, scms = _number(solution.get("ms")), _number(solution.get("ceiling_ms"))
    if sms is None or scms is None:
        return None, fraction, None
    ratio = fraction / (scms / sms)
    if not math.isfinite(ratio) or ratio > limit:
        return None, fraction, ("implausible: %s of the solution's speed (more than %gx)"
                                % ("huge" if not math.isfinite(ratio) else percent(ratio), limit))
    return ratio, fraction, None


# ---------------------------------------------------------------- judging

def _row(kind, exercise, status, words, **more):
    row = {"kind": kind, "exercise": exercise, "status": status, "words": _clean(words, WORDS) if words else ""}
    row.update(more)
    return row


def judge_speed(rubric, evidence):
    """One row per speed rule. EVIDENCE: the verdict's "evidence" list (None or []: not measured)."""
    rows = []
    entries = {}
    if isinstance(evidence, list):
        for e in evidence:
            if isinstance(e, dict) and isinstance(e.get("exercise"), str) and e["exercise"] not in entries:
                entries[e["exercise"]] = e
    for rule in rubric.get("speed", []):
        ex = rule["exercise"]
        base = dict(min_ratio=rule["min_ratio"], ratio=None, ceiling_fraction=None, implausible=False, credit=None,
                    full=rule.get("full", FULL), zero=rule.get("zero", ZERO))
        if not evidence:
            rows.append(_row("speed", ex, NOT_MEASURED, "no speed evidence (no GPU run)", **base))
            continue
        e = entries.get(ex)
        if e is None:
            rows.append(_row("speed", ex, NOT_MEASURED, "the judge reported no speed evidence for %s" % ex, **base))
            continue
        for k in ("kernel", "ceiling", "shape", "gpu"):
            if isinstance(e.get(k), str):
                base[k] = _clean(e[k], 120)
        solution = e.get("solution")
        if isinstance(e.get("witness_unavailable"), str):  # the grading machine cannot run the witness
            rows.append(_row("speed", ex, NOT_MEASURED, "not timed: %s" % _clean(e["witness_unavailable"], 240), **base))
            continue
        if isinstance(e.get("witness_problem"), str):  # the witness (grading/witness.py) gave no time: no credit
            rows.append(_row("speed", ex, SHORT, "not timed by the grader: %s" % _clean(e["witness_problem"], 240), **dict(base, credit=0.0)))
            continue
        if "max_ratio" in rule:  # an exercise that asks for the slower pattern: far faster is the other one
            fast, _, unlimited_problem = speed_ratio(e.get("submission"), solution, limit=math.inf)
            if unlimited_problem is None and fast is not None and fast > rule["max_ratio"]:
                base["ratio"], base["credit"] = fast, 0.0
                rows.append(_row("speed", ex, SHORT, rule["short_fast"].replace("{ratio}", percent(fast)), **base))
                continue
        ratio, fraction, problem = speed_ratio(e.get("submission"), solution)
        base["ceiling_fraction"] = fraction
        sub = e.get("submission") if isinstance(e.get("submission"), dict) else {}
        base["ms"] = _number(sub.get("ms"))
        base["ceiling_ms"] = _number(sub.get("ceiling_ms"))
        if isinstance(solution, dict):
            base["solution_ms"] = _number(solution.get("ms"))
            base["solution_ceiling_ms"] = _number(solution.get("ceiling_ms"))
        if problem is not None:
            base["implausible"], base["credit"] = problem.startswith("implausible"), 0.0
            rows.append(_row("speed", ex, SHORT, problem, **base))
            continue
        if ratio is None:  # no (usable) solution figure: only the ceiling fraction is known
            why = e.get("no_solution") or "the course solution's time is missing or not a time (grader error)"
            rows.append(_row("speed", ex, NOT_MEASURED, "%s; your kernel ran at %s of the %s's speed"
                             % (why, percent(fraction), base.get("ceiling", "ceiling")), **base))
            continue
        base["ratio"], base["credit"] = ratio, speed_credit(ratio, rule)
        if ratio >= rule["min_ratio"]:
            rows.append(_row("speed", ex, MET, "%s of the solution's speed (at least %s asked%s)"
                             % (percent(ratio), percent(rule["min_ratio"]), "" if base["credit"] >= 1 else
                                "; full speed credit from %s" % percent(base["full"])), **base))
        else:
            rows.append(_row("speed", ex, SHORT, with_idea(rule["short"].replace("{ratio}", percent(ratio)), rule), **base))
    return rows


def _default_exercise(rubric):
    ex = exercises_of(rubric)
    return ex[0] if len(ex) == 1 else ""


def judge_static(rubric, facts, facts_problem=None):
    """One row per static rule (its kernels together: met when all are, short when one is).
    FACTS None: not measured, with FACTS_PROBLEM as the reason; a problem starting with
    "short:" (the student's binary could not be read) makes every rule short."""
    rows = []
    default = _default_exercise(rubric)
    rules = rubric.get("rules", [])
    for rule in rules:
        kind = "contract" if rule.get("required", False) else "static"
        ex = rule.get("exercise", default)
        label = se.fact_label(rule["fact"])
        if facts is None:
            problem = facts_problem or "no static facts (cuobjdump not run)"
            if problem.startswith("short: "):
                rows.append(_row(kind, ex, SHORT, problem[len("short: "):], kernel=rule["kernel"], fact=label, kernels=[]))
            else:
                rows.append(_row(kind, ex, NOT_MEASURED, problem, kernel=rule["kernel"], fact=label, kernels=[]))
            continue
        mine = se.judge({"rules": [rule]}, facts)
        kernels = [dict(kernel=_clean(r["kernel"], 200), status=r["status"], yours=r["yours"], solution=r["solution"],
                        expect=r.get("expect", "")) for r in mine]
        bad = [r for r in mine if r["status"] in ("short", "missing")]
        if bad:
            rows.append(_row(kind, ex, SHORT, bad[0]["words"], kernel=rule["kernel"], fact=label, kernels=kernels, idea="idea" in rule))
        elif mine and all(r["status"] == "ok" for r in mine):
            rows.append(_row(kind, ex, MET, rule.get("ok", ""), kernel=rule["kernel"], fact=label, kernels=kernels))
        else:
            why = next((r["words"] for r in mine if r["status"] == "not judged"), "not judged")
            rows.append(_row(kind, ex, NOT_MEASURED, why, kernel=rule["kernel"], fact=label, kernels=kernels))
    return rows


def read_counters(data):
    """Counters as {kernel name: {metric: number}}, from either accepted shape; values that are not
    finite numbers are left out."""
    out = {}
    if isinstance(data, dict):
        items = [(k, m, v) for k, ms in data.items() if isinstance(ms, dict) for m, v in ms.items()]
    elif isinstance(data, list):
        items = [(r.get("kernel"), r.get("metric"), r.get("value")) for r in data if isinstance(r, dict)]
    else:
        raise RubricError("counters: expected {kernel: {metric: value}} or a list of {kernel, metric, value}")
    for k, m, v in items:
        if isinstance(k, str) and isinstance(m, str) and type(v) in (int, float) and math.isfinite(v):
            out.setdefault(k, {})[m] = float(v)
    return out


def judge_counters(rubric, counters):
    """One row per counters rule; COUNTERS None: off (no rows)."""
    if counters is None:
        return []
    rows = []
    for rule in rubric.get("counters", []):
        pattern = re.compile(rule["kernel"])
        ex, per = rule["exercise"], rule.get("per")
        values = []
        for kernel, metrics in sorted(counters.items()):
            if not pattern.search(kernel):
                continue
            v = metrics.get(rule["metric"])
            if v is None:
                continue
            if per:
                d = metrics.get(per)
                if d is None or d <= 0:
                    continue
                v = v / d
            values.append((kernel, v))
        base = dict(kernel=rule["kernel"], metric=rule["metric"], per=per, expect="%s %g" % (rule["op"], rule["value"]),
                    values=[dict(kernel=_clean(k, 200), value=v) for k, v in values])
        if not values:
            rows.append(_row("counters", ex, NOT_MEASURED, "no %s measured for /%s/" % (rule["metric"], rule["kernel"]), **base))
        elif all(se._OPS[rule["op"]](v, rule["value"]) for _, v in values):
            rows.append(_row("counters", ex, MET, rule.get("ok", ""), **base))
        else:
            rows.append(_row("counters", ex, SHORT, rule["short"], **base))
    return rows


def judge(rubric, evidence=None, facts=None, counters=None, facts_problem=None, ideas=None):
    """Every rule of RUBRIC on this evidence. Returns
      {"rules": [rows], "exercises": {id: [rows]}, "met", "short", "not_measured" (performance rules),
       "fraction" (met / (met + short), None when nothing was measured), "first_short" (words),
       "speed_credit" (the lowest credit of the speed rules judged, None when none was), with that
       rule's "speed_ratio" and "speed_exercise"; "rules_met" and "rules_judged" (the other
       performance rules: static facts and counters),
       "contracts_broken": [words of required static rules that fell short], "implausible": [words]}
    Each row: kind (speed | static | contract | counters), exercise, status (met | short | not
    measured), words, and the kind's numbers (a speed row: ratio, ceiling_fraction, ms, ...)."""
    rows = judge_speed(rubric, evidence) + judge_static(rubric, facts, facts_problem) + judge_counters(rubric, counters)
    idea_missed(rubric, rows, SHORT, WORDS)
    idea_cases(rubric, rows, ideas, SHORT, WORDS)
    perf = [r for r in rows if r["kind"] != "contract"]
    met = sum(1 for r in perf if r["status"] == MET)
    short = sum(1 for r in perf if r["status"] == SHORT)
    exercises = {}
    for r in rows:
        exercises.setdefault(r["exercise"] or "(lesson)", []).append(r)
    # The lesson's speed credit is its slowest exercise's (the lowest credit of the speed rules judged).
    credited = sorted((r for r in rows if r["kind"] == "speed" and r.get("credit") is not None), key=lambda r: r["credit"])
    slowest = credited[0] if credited else None
    others = [r for r in perf if r["kind"] != "speed" and r["status"] != NOT_MEASURED]
    # the first shortfall shown: an implausible speed first (a finding the instructor must see), then
    # the slowest exercise's speed, then the other rules in rubric order, then a speed met below full credit
    first = (next((r for r in perf if r.get("implausible")), None) or next((r for r in credited if r["status"] == SHORT), None)
             or next((r for r in perf if r["status"] == SHORT), None) or next((r for r in credited if r["credit"] < 1), None))
    return {
        "speed_credit": slowest["credit"] if slowest else None,
        "speed_ratio": slowest["ratio"] if slowest else None,
        "speed_exercise": slowest["exercise"] if slowest else None,
        "rules_met": sum(1 for r in others if r["status"] == MET),
        "rules_judged": len(others),
        "rules": rows,
        "exercises": exercises,
        "met": met,
        "short": short,
        "not_measured": sum(1 for r in perf if r["status"] == NOT_MEASURED),
        "fraction": (met / (met + short)) if met + short else None,
        "first_short": ("%s: %s" % (first["exercise"], first["words"]) if first["exercise"] else first["words"]) if first else "",
        "contracts_broken": [r["words"] for r in rows if r["kind"] == "contract" and r["status"] == SHORT],
        "implausible": ["%s: %s" % (r["exercise"], r["words"]) for r in rows if r.get("implausible")],
    }


def summary(result):
    """The gradebook's performance column: "met/total" ("not measured" when nothing was)."""
    total = result["met"] + result["short"]
    if total == 0:
        return "not measured"
    return "%d/%d" % (result["met"], total)


# ---------------------------------------------------------------- the inputs

def read_verdict_evidence(path):
    """The "evidence" list of a verdict (None when the key is absent). Raises RubricError."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_JSON_BYTES + 1)
        if len(data) > MAX_JSON_BYTES:
            raise RubricError("%s is over %d bytes" % (path, MAX_JSON_BYTES))
        v = json.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise RubricError("cannot read the verdict %s: %s" % (path, e)) from e
    if not isinstance(v, dict):
        raise RubricError("%s: a verdict is a JSON object" % path)
    ev = v.get("evidence")
    if ev is not None and not isinstance(ev, list):
        raise RubricError("%s: \"evidence\" is not a list" % path)
    return ev


def read_solution_rows(paths):
    """Rows of results/<gpu>/evidence/solution.csv files (gpu,exercise,kernel,ms,ceiling,ceiling_ms,
    runs,spread): {(gpu, exercise): [ceiling_ms / ms, ...]}. Unreadable rows are left out."""
    out = {}
    for path in paths:
        try:
            with open(path, newline="", encoding="utf-8") as f:
                for row in csv.DictReader(f):
                    ms, cms = _number(_float(row.get("ms"))), _number(_float(row.get("ceiling_ms")))
                    if ms and cms and row.get("gpu") and row.get("exercise"):
                        out.setdefault((row["gpu"], row["exercise"]), []).append(cms / ms)
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise RubricError("cannot read %s: %s" % (path, e)) from e
    return out


def _float(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def default_solution_csvs(repo=None):
    """Every results/*/evidence/solution.csv of the course."""
    repo = repo or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    top = os.path.join(repo, "results")
    try:
        gpus = sorted(os.listdir(top))
    except OSError:
        return []
    return [p for p in (os.path.join(top, g, "evidence", "solution.csv") for g in gpus) if os.path.isfile(p)]


def evidence_from_lines(lines, solutions):
    """A student's own run (the loop): the JSON lines a check appended with --evidence FILE -> the
    verdict's evidence list, each line's "solution" made from the median recorded ceiling fraction
    of the course solution on the same GPU (SOLUTIONS: read_solution_rows), or left out with the
    reason "no recorded solution figure for <GPU>". The last line of an exercise wins (a rerun)."""
    entries = {}
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if not isinstance(d, dict) or not isinstance(d.get("exercise"), str):
            continue
        gpu = d.get("gpu") if isinstance(d.get("gpu"), str) else ""
        e = {"exercise": d["exercise"], "test_case": "speed: " + d["exercise"], "gpu": gpu,
             "submission": {k: d.get(k) for k in ("ms", "ceiling_ms", "runs", "spread")}, "solution": None}
        for k in ("kernel", "ceiling", "shape"):
            if isinstance(d.get(k), str):
                e[k] = d[k]
        fractions = sorted(solutions.get((gpu, d["exercise"]), []))
        if fractions:
            f = fractions[len(fractions) // 2] if len(fractions) % 2 else (fractions[len(fractions) // 2 - 1] + fractions[len(fractions) // 2]) / 2
            e["solution"] = {"ms": 1.0, "ceiling_ms": f}  # only the fraction matters to the ratio
        else:
            e["no_solution"] = "no recorded solution figure for %s" % (_clean(gpu, 80) or "this GPU")
        entries[d["exercise"]] = e
    return list(entries.values())


def static_facts(binary=None, dumps=None):
    """(facts, problem) from a binary (cuobjdump) or recorded dumps; facts None with the reason."""
    try:
        if binary:
            return se.facts_from_binary(binary), None
        if dumps:
            resource, sass, ptx = (se.read_recorded(dumps, k) for k in ("resource", "sass", "ptx"))
            if resource is None or sass is None:
                return None, "%s has no resource.txt and sass.txt" % dumps
            return se.facts_from_dumps(resource, sass, ptx), None
    except se.EvidenceError as e:
        return None, str(e)
    return None, None


# ---------------------------------------------------------------- words

def show(result, out=None):
    out = out or sys.stdout
    mark = {MET: "ok", SHORT: "short", NOT_MEASURED: "-"}
    for ex, rows in result["exercises"].items():
        print("%s:" % ex, file=out)
        for r in rows:
            m = mark[r["status"]]
            if r["kind"] == "contract" and r["status"] == SHORT:
                m = "SHORT"
            if r["kind"] == "speed":
                what = "speed"
                if r.get("ratio") is not None:
                    what += " %s of the solution's" % percent(r["ratio"])
                if r.get("ceiling_fraction") is not None:
                    what += " (%s of the %s's)" % (percent(r["ceiling_fraction"]), r.get("ceiling", "ceiling"))
                if r.get("credit") is not None:
                    what += ", credit %s" % percent(r["credit"])
            elif r["kind"] == "counters":
                what = "%s%s %s" % (r["metric"], " per " + r["per"] if r.get("per") else "", r["expect"])
            else:
                what = "%s of /%s/%s" % (r["fact"], r["kernel"], " (contract)" if r["kind"] == "contract" else "")
            print("  [%-5s] %s" % (m, what), file=out)
            if r["words"] and r["status"] != MET:
                print("          %s" % r["words"], file=out)
    print("performance: %s%s" % (summary(result), " (%d not measured)" % result["not_measured"] if result["not_measured"] else ""),
          file=out)
    for w in result["contracts_broken"]:
        print("contract broken: %s" % w, file=out)


def _options(args):
    """RUBRIC and the rest of judge|show's command line, read by argparse (the last of an option wins;
    VERDICT before --lines, never starting with --); RubricError: an argument the grammar does not take."""
    valued = ("--binary", "--dumps", "--counters", "--lines", "--solutions")
    p = cmdline.Parser("evidence.py")
    p.add_argument("rubric", type=cmdline.value)
    p.add_argument("verdict", nargs="?", type=cmdline.value)
    for option in valued:
        p.add_argument(option, type=cmdline.value, action="append" if option == "--solutions" else "store")
    p.add_argument("--strict", action="store_true")
    operands, opts, rest = [cmdline.MARK + args[0]], [], list(args[1:])
    while rest:  # (in an order argparse cannot refuse)
        a = rest.pop(0)
        if a in valued and rest:
            opts += [a, cmdline.MARK + rest.pop(0)]
        elif a == "--strict":
            opts.append(a)
        elif not a.startswith("--") and len(operands) == 1 and "--lines" not in opts:
            operands.append(cmdline.MARK + a)
        else:
            raise RubricError("unexpected argument %r (see --help)" % a)
    return p.parse_args(operands + opts)


def main(argv):
    args = list(argv[1:])
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    cmd = args.pop(0)
    if cmd not in ("judge", "show") or not args:
        print("evidence.py: unknown command line (see --help)", file=sys.stderr)
        return 2
    try:
        o = _options(args)
        if o.binary and o.dumps:
            raise RubricError("--binary or --dumps, not both")
        if o.verdict is None and o.lines is None:
            raise RubricError("give VERDICT.json (or -) or --lines EVIDENCE.jsonl")
        rubric = load_rubric(o.rubric)
        if o.lines is not None:
            with open(o.lines, encoding="utf-8", errors="replace") as f:
                lines = f.read(MAX_JSON_BYTES).splitlines()
            evidence = evidence_from_lines(lines, read_solution_rows(o.solutions or default_solution_csvs()))
        else:
            evidence = None if o.verdict == "-" else read_verdict_evidence(o.verdict)
        counters = None
        if o.counters:
            with open(o.counters, encoding="utf-8") as f:
                counters = read_counters(json.load(f))
        facts, problem = static_facts(o.binary, o.dumps)
        if facts is None and problem and (o.binary or o.dumps):
            raise RubricError(problem)
    except (RubricError, OSError, ValueError) as e:
        print("evidence.py: %s" % e, file=sys.stderr)
        return 2
    result = judge(rubric, evidence, facts, counters,
                   facts_problem=None if (o.binary or o.dumps) else "static facts not read (give --binary or --dumps)")
    if cmd == "judge":
        print(json.dumps(result, indent=1, sort_keys=True, allow_nan=False, default=str))
    else:
        show(result)
    return 1 if result["contracts_broken"] or (o.strict and result["short"]) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
