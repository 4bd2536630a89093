"""A cell's score: the share of its lesson's weight it earns, from its record's result
(grading/cellrecord.py: speed_credit, speed_ratio, rules).

0 when its correctness did not pass. Else, with `--weights C,P` (default 50,50):

    score = C% + P% x performance credit

The performance credit (0 to 1) has two parts:
- the speed credit (SPEED_SHARE of it, 9 tenths): each exercise's speed ratio (the submission's
  speed as a share of the course solution's, grading/evidence.py) mapped by its rubric's curve
  (grading/rubric.py speed_credit: all of it at or above the rule's "full", none at or below its
  "zero", a straight line between); a lesson of several exercises gets its slowest exercise's
  credit. A time that is implausible or was not recorded earns 0;
- the other performance rules (the rest, 1 tenth): the share of the rubric's static facts (and
  counters) met.
A part with nothing judged is left out and the other part takes its share; with neither (no GPU
run, `--no-performance`, no rubric), the cell earns all of it, as before the evidence existed.

With the default 50,50 and a lesson whose rubric's speed rule has full 0.92 and zero 0.4, a correct
submission at 90% of the solution's speed scores 98%, at 50% 64%, at 20% 55% (static rules met).
"""
from __future__ import annotations

import math
import re

DEFAULT_SPLIT = (50, 50)
SPEED_SHARE = 0.9  # of the performance part; the other performance rules have the rest

_MET = re.compile(r"([0-9]+)/([0-9]+)")


def _share(text: str) -> float | None:
    """"met/judged" -> met / judged (never above 1); None when nothing was judged or it is not that."""
    m = _MET.fullmatch(text or "")
    if m is None or int(m.group(2)) == 0:
        return None
    return min(int(m.group(1)), int(m.group(2))) / int(m.group(2))


def _credit(text: str) -> float | None:
    """A recorded credit: a number from 0 to 1, else None."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and 0 <= v <= 1 else None


def performance_credit(rec: dict[str, str]) -> float | None:
    """The cell's performance credit (0 to 1), None when nothing was measured."""
    speed, rules = _credit(rec.get("speed_credit", "")), _share(rec.get("rules", ""))
    if speed is None and rules is None:
        return None
    if speed is None or rules is None:
        return speed if rules is None else rules
    return SPEED_SHARE * speed + (1 - SPEED_SHARE) * rules


def cell_score(ok: bool, rec: dict[str, str], split: tuple[int, int] = DEFAULT_SPLIT) -> float:
    """The share of its lesson's weight a cell earns (0 to 1)."""
    if not ok:
        return 0.0
    credit = performance_credit(rec)
    if credit is None:  # off, not measured
        return 1.0
    return (split[0] + split[1] * credit) / 100.0


def performance_short(rec: dict[str, str]) -> bool:
    """Whether a cell's performance fell short of full credit: a rule short, or a speed credit under 1."""
    m = _MET.fullmatch(rec.get("performance", ""))
    if m is not None and int(m.group(1)) < int(m.group(2)):
        return True
    speed = _credit(rec.get("speed_credit", ""))
    return speed is not None and speed < 1


def performance_words(rec: dict[str, str]) -> str:
    """The gradebook's performance column of a graded cell that compiled: "speed 62% (credit 42%);
    rules 3/4", "off" or "not measured" (a record with neither part: its met/judged)."""
    perf = rec.get("performance", "") or "off"
    if perf in ("off", "not measured"):
        return perf
    parts = []
    speed = _credit(rec.get("speed_credit", ""))
    if speed is not None:
        ratio = _credit_ratio(rec.get("speed_ratio", ""))
        parts.append("speed %s (credit %s)" % ("%.0f%%" % (100 * ratio) if ratio is not None else "not credited",
                                               "%.0f%%" % (100 * speed)))
    if _share(rec.get("rules", "")) is not None:
        parts.append("rules %s" % rec["rules"])
    return "; ".join(parts) or perf


def _credit_ratio(text: str) -> float | None:
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v >= 0 else None


def record_values(perf: dict) -> dict[str, str]:
    """The result's speed_credit, speed_ratio and rules from a cell's performance (cell_evidence's
    dict); empty where not measured."""
    def num(v: object) -> str:
        return "%.4f" % v if isinstance(v, (int, float)) and math.isfinite(v) else ""
    judged = perf.get("rules_judged") or 0
    return {"speed_credit": num(perf.get("speed_credit")), "speed_ratio": num(perf.get("speed_ratio")),
            "rules": "%d/%d" % (perf.get("rules_met") or 0, judged) if judged else ""}
