"""A lesson's rubric (lessons/NN_name/rubric.json): read and validated, for grading/evidence.py
(which judges a cell's performance evidence by it) and the tools that read the same rules.

Its three kinds of rules ("speed", "rules", "counters") are described in grading/evidence.py; numbers
and words that came from a rubric or a submission are made safe to show here too.
"""
import json
import math
import re

from . import static_evidence as se

MAX_JSON_BYTES = 4 << 20
MAX_RATIO = 2.0          # above it a ratio is implausible
MAX_WORDS = 400
# A speed rule's credit curve (its "full" and "zero"; these where a rubric gives none): full credit at or
# above "full" of the solution's speed, none at or below "zero", a straight line between. The
# course's rubrics have each exercise's "full" from the solution's own measured spread
# (grading/speed_thresholds.py writes them).
FULL = 0.9
ZERO = 0.4


class RubricError(Exception):
    """A message for the user: a malformed rubric, an unreadable verdict or evidence file."""


# ---------------------------------------------------------------- the rubric

def _text(v):
    return isinstance(v, str) and v.strip() != ""


def load_rubric(path):
    """The rubric, validated: its "speed", "rules" and "counters" lists (each optional, but at least
    one rule in all). Raises RubricError with the reason."""
    return validate_rubric(se.read_rubric_json(path, RubricError, MAX_JSON_BYTES), path)


def validate_rubric(rubric, where="rubric"):
    speed = rubric.get("speed", [])
    counters = rubric.get("counters", [])
    if not isinstance(speed, list) or not isinstance(counters, list):
        raise RubricError("%s: \"speed\" and \"counters\" must be lists" % where)
    if "rules" in rubric:
        try:
            se.validate_rules(rubric["rules"], where)
        except se.EvidenceError as e:
            raise RubricError(str(e)) from e
    if not speed and not counters and not rubric.get("rules"):
        raise RubricError("%s: a rubric needs at least one rule (\"speed\", \"rules\" or \"counters\")" % where)
    seen = set()
    for i, rule in enumerate(speed):
        w = "%s: speed rule %d" % (where, i + 1)
        if not isinstance(rule, dict):
            raise RubricError("%s is not an object" % w)
        if not _text(rule.get("exercise")):
            raise RubricError("%s has no \"exercise\"" % w)
        if rule["exercise"] in seen:
            raise RubricError("%s: a second speed rule for %s" % (w, rule["exercise"]))
        seen.add(rule["exercise"])
        r = rule.get("min_ratio")
        if type(r) not in (int, float) or not math.isfinite(r) or not 0 < r <= MAX_RATIO:
            raise RubricError("%s: \"min_ratio\" must be a number above 0 and at most %g" % (w, MAX_RATIO))
        if not _text(rule.get("short")):
            raise RubricError("%s has no \"short\" (the words shown when it falls short)" % w)
        if "max_ratio" in rule:
            m = rule["max_ratio"]
            if type(m) not in (int, float) or not math.isfinite(m) or not r < m <= MAX_RATIO:
                raise RubricError("%s: \"max_ratio\" must be a number above \"min_ratio\" and at most %g" % (w, MAX_RATIO))
            if not _text(rule.get("short_fast")):
                raise RubricError("%s has \"max_ratio\" but no \"short_fast\" (the words shown above it)" % w)
        if "idea" in rule and not _text(rule["idea"]):
            raise RubricError("%s: \"idea\" must be words (the idea of the lesson this exercise teaches)" % w)
        if "idea_test_case" in rule and not (_text(rule["idea_test_case"]) and rule["idea_test_case"].startswith("idea: ")):
            raise RubricError("%s: \"idea_test_case\" must name a test case \"idea: ...\" of the lesson's check" % w)
        _validate_curve(rule, w)
    for i, rule in enumerate(rubric.get("rules", [])):
        if "idea" in rule and (rule["idea"] is not True or not _text(rule.get("exercise"))):
            raise RubricError("%s: static rule %d: \"idea\" must be true, on a rule with an \"exercise\"" % (where, i + 1))
    for i, rule in enumerate(counters):
        w = "%s: counters rule %d" % (where, i + 1)
        if not isinstance(rule, dict):
            raise RubricError("%s is not an object" % w)
        for key in ("exercise", "kernel", "metric", "short"):
            if not _text(rule.get(key)):
                raise RubricError("%s has no \"%s\"" % (w, key))
        if rule.get("op") not in se._OPS:
            raise RubricError("%s: op %r is not one of %s" % (w, rule.get("op"), " ".join(se._OPS)))
        v = rule.get("value")
        if type(v) not in (int, float) or not math.isfinite(v):
            raise RubricError("%s: \"value\" must be a number" % w)
        if rule.get("per") is not None and not _text(rule.get("per")):
            raise RubricError("%s: \"per\" must be a metric's name or null" % w)
        try:
            re.compile(rule["kernel"])
        except re.error as e:
            raise RubricError("%s: kernel pattern %r: %s" % (w, rule["kernel"], e)) from e
    return rubric


def _validate_curve(rule, w):
    full, zero = rule.get("full", FULL), rule.get("zero", ZERO)
    for key, v in (("full", full), ("zero", zero)):
        if type(v) not in (int, float) or not math.isfinite(v) or not 0 <= v <= 1:
            raise RubricError("%s: \"%s\" must be a number from 0 to 1 (a share of the solution's speed)" % (w, key))
    if not zero < full:
        raise RubricError("%s: \"zero\" (%g) must be below \"full\" (%g)" % (w, zero, full))


def speed_credit(ratio, rule):
    """A speed rule's credit (0 to 1) for a speed RATIO (the submission's speed as a share of the
    solution's): 1 at or above the rule's "full", 0 at or below its "zero", a straight line between
    (continuous, never decreasing in the ratio). A ratio that is not a finite number earns 0."""
    full, zero = rule.get("full", FULL), rule.get("zero", ZERO)
    if type(ratio) not in (int, float) or not math.isfinite(ratio) or ratio <= zero:
        return 0.0
    if ratio >= full:
        return 1.0
    return (ratio - zero) / (full - zero)


def exercises_of(rubric):
    """The exercise ids the rubric names, in order of first mention."""
    out = []
    for rule in rubric.get("speed", []) + rubric.get("rules", []) + rubric.get("counters", []):
        e = rule.get("exercise")
        if e and e not in out:
            out.append(e)
    return out


# ---------------------------------------------------------------- numbers that came from a submission

def _number(v):
    """A finite number > 0, else None (NaN, infinities, 0, negatives, strings, booleans, null)."""
    if type(v) not in (int, float):
        return None
    try:
        v = float(v)
    except OverflowError:  # an integer beyond any float
        return None
    return v if math.isfinite(v) and v > 0 else None


def _shown(v, limit=40):
    """A value from the evidence, as words (never a control character, never long)."""
    try:
        text = json.dumps(v)
    except (TypeError, ValueError):
        text = repr(v)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= limit else text[:limit] + "..."


def _clean(text, limit=MAX_WORDS):
    """Words from a rubric or a kernel's name: printable, one line, cut."""
    text = "".join(c if c.isprintable() else " " for c in str(text))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def percent(x):
    return "%.0f%%" % (100 * x)


def with_idea(words, rule):
    """A speed shortfall's words, with the idea of the exercise's lesson where the rubric names it."""
    return "%s (the idea of %s: %s)" % (words, rule["exercise"], rule["idea"]) if rule.get("idea") else words


def idea_missed(rubric, rows, short, limit):
    """A static rule marked "idea" that fell short (status SHORT) takes its exercise's speed credit
    away: the kernel may be fast, but not by the idea its lesson teaches (lesson 03's records
    without the extern buffer). ROWS: grading/evidence.py's, changed in place."""
    ideas = {rule["exercise"]: rule for rule in rubric.get("speed", []) if rule.get("idea")}
    for missed in [r for r in rows if r["kind"] == "static" and r.get("idea") and r["status"] == short]:
        for r in rows:
            if r["kind"] == "speed" and r["exercise"] == missed["exercise"] and r.get("credit") is not None:
                r["credit"], r["status"] = 0.0, short
                rule = ideas.get(r["exercise"], {"exercise": r["exercise"]})
                r["words"] = _clean(with_idea("no speed credit: %s" % missed["words"], rule), limit)


def idea_cases(rubric, rows, ideas, short, limit):
    """A speed rule's "idea_test_case" that failed takes its exercise's speed credit away, however fast
    the kernel: that test case of the check saw the exercise's kernel miss the idea where no timing
    can (lesson 04's tree adding other pairs than sequential addressing). IDEAS: the verdict's idea
    test cases (grading/judge.py's Grade.ideas: name -> "" when it passed, else its failure); None,
    or a case it does not hold, takes nothing away. ROWS: grading/evidence.py's, changed in place."""
    for rule in rubric.get("speed", []):
        failure = (ideas or {}).get(rule.get("idea_test_case"))
        if not failure:
            continue
        for r in rows:
            if r["kind"] == "speed" and r["exercise"] == rule["exercise"] and r.get("credit") is not None:
                r["credit"], r["status"], r["idea_case"] = 0.0, short, rule["idea_test_case"]
                r["words"] = _clean(with_idea("no speed credit: %s: %s" % (rule["idea_test_case"], failure), rule), limit)
