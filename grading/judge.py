"""The verdict: the judge (the lesson's check built from the course's own main.cu, run outside the
sandbox) judges the values the runner recorded and writes VERDICT.json (the interface between the
judge and the grader). The grader reads that file, never the judge's console text.

The grade counts what the student produced: a test case that asked the submission for values
(asked > 0) judged the student's work and counts; one that asked none is the course's own test,
reported apart and never counted. One of those failing is the course's or the grader's error.
An `idea: <id>` test case is neither: its outcome goes to the performance evidence (Grade.ideas).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Optional, Sequence

MAX_VERDICT_BYTES = 4 << 20
# An `idea: <id>` test case checks that an exercise's kernel has its lesson's idea where no timing can
# see it (lesson 04's tree: the order of its additions). It is neither the student's correctness nor
# the course's own: a failed one takes the exercise's speed credit away (grading/evidence.py).
IDEA_PREFIX = "idea: "


class VerdictError(Exception):
    """The judge did not finish: a grader error, never a grade."""


@dataclass
class Grade:
    passed: int = 0            # counted test cases (asked > 0, run) that passed
    total: int = 0             # counted test cases
    course_passed: int = 0     # the course's own test cases (asked == 0, run) that passed
    course_total: int = 0
    missing: int = 0
    inconsistent: int = 0
    first_failure: str = ""    # of a counted test case
    course_failures: list = field(default_factory=list)  # names of course test cases that failed
    evidence: Optional[list] = None  # the verdict's "evidence" (speed of each exercise; grading/evidence.py reads it)
    ideas: dict = field(default_factory=dict)  # an `idea: <id>` test case's name -> its failure ("" passed): never counted


def _int(tc: dict, key: str, where: str) -> int:
    v = tc.get(key)
    if type(v) is not int or v < 0:
        raise VerdictError("%s: '%s' is not a whole number >= 0" % (where, key))
    return v


def _bool(tc: dict, key: str, where: str) -> bool:
    v = tc.get(key)
    if type(v) is not bool:
        raise VerdictError("%s: '%s' is not true or false" % (where, key))
    return v


def read_verdict(path: str, lesson: str | None = None, seed: int | None = None) -> Grade:
    """VERDICT.json -> Grade. Raises VerdictError when it is missing, unreadable, not whole
    ("complete": true), of another format, lesson or seed, or malformed."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_VERDICT_BYTES + 1)
    except OSError as e:
        raise VerdictError("no verdict (%s)" % e.strerror)
    if len(data) > MAX_VERDICT_BYTES:
        raise VerdictError("the verdict is over %d bytes" % MAX_VERDICT_BYTES)
    try:
        v = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise VerdictError("the verdict is not JSON (%s)" % str(e)[:100])
    if not isinstance(v, dict):
        raise VerdictError("the verdict is not a JSON object")
    if v.get("format") != 1:
        raise VerdictError("the verdict's format is %r, not 1" % (v.get("format"),))
    if v.get("complete") is not True:
        raise VerdictError("the verdict is not complete")
    if lesson is not None and v.get("lesson") != lesson:
        raise VerdictError("the verdict is of lesson %r, not %s" % (v.get("lesson"), lesson))
    if seed is not None and v.get("seed") != seed:
        raise VerdictError("the verdict is of seed %r, not %s" % (v.get("seed"), seed))
    g = Grade(missing=_int(v, "missing", "verdict"), inconsistent=_int(v, "inconsistent", "verdict"))
    if isinstance(v.get("evidence"), list):  # absent or empty: no speed evidence (host-only); its values are checked where read
        g.evidence = v["evidence"]
    cases = v.get("test_cases")
    if not isinstance(cases, list):
        raise VerdictError("the verdict has no list of test cases")
    for i, tc in enumerate(cases):
        where = "test case %d" % (i + 1)
        if not isinstance(tc, dict) or not isinstance(tc.get("name"), str):
            raise VerdictError("%s: not an object with a name" % where)
        skipped, passed = _bool(tc, "skipped", where), _bool(tc, "passed", where)
        _bool(tc, "gpu", where)
        asked = _int(tc, "asked", where)
        for k in ("submitted", "missing", "inconsistent"):
            _int(tc, k, where)
        failure = tc.get("failure")
        if failure is not None and not isinstance(failure, str):
            raise VerdictError("%s: 'failure' is not text or null" % where)
        if skipped:
            continue
        if tc["name"].startswith(IDEA_PREFIX):  # performance, not correctness: the rubric's "idea_test_case"
            g.ideas[tc["name"]] = "" if passed else (failure or "failed")[:400]
            continue
        if asked > 0:
            g.total += 1
            if passed:
                g.passed += 1
            elif not g.first_failure:
                g.first_failure = tc["name"] + (": " + failure[:400] if failure else ": failed")
        else:
            g.course_total += 1
            if passed:
                g.course_passed += 1
            else:
                g.course_failures.append(tc["name"])
    return g


def findings(g: Grade, run_rc: int, earlier: list[str]) -> list[str]:
    """What the verdict adds to a cell's findings (EARLIER: those of the run so far, a list)."""
    out = []
    if g.missing > 0 and run_rc == 0:
        out.append("forged or cut short: the run exited 0, but %d value(s) its checks hand back were never recorded" % g.missing)
    elif g.missing > 0 and not earlier:
        out.append("the run stopped early (exit %d): %d value(s) never recorded" % (run_rc, g.missing))
    if g.inconsistent > 0:
        out.append("inconsistent output: %d recorded value(s) of the wrong type or size" % g.inconsistent)
    if g.first_failure:
        out.append(g.first_failure)
    if g.course_failures:
        out.append("grader error, not the student's: the course's own test case(s) failed: %s"
                   % "; ".join(g.course_failures)[:300])
    if g.total == 0 and not out:
        out.append("no test case judged a value of the submission (%d of %d of the course's own test cases passed, not counted)"
                   % (g.course_passed, g.course_total))
    return out


def command(judge_exe: str, host_only: bool, transcript: str, seed: int, hidden: str, verdict: str,
            extra: Sequence[str] = ()) -> list[str]:
    """The judge's command line: it judges TRANSCRIPT and writes VERDICT."""
    cmd = [judge_exe] + (["--host"] if host_only else []) + list(extra) + ["--judge", transcript, "--seed", str(seed)]
    if hidden:
        cmd += ["--hidden-shapes", hidden]
    return cmd + ["--verdict", verdict]


def clear(verdict: str) -> None:
    for p in (verdict, verdict + ".tmp"):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
