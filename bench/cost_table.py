#!/usr/bin/env python3
"""cost_table.py OUT — the per-cell cost table of bench/evidence_cost.sh: the medians of each
step over OUT/off/timing.txt and OUT/on/timing.txt (one line per cell, `step_s=seconds ...`), side
by side, and the ratio of a cell's time on to off. Printed to stdout (evidence_cost.sh keeps it as
OUT/cost.txt); it reads only those two files, so it can be run again on a committed run."""
import re, statistics, sys
out = sys.argv[1]
STEPS = ["compile_s", "lint_s", "static_s", "run_s", "judge_s", "memcheck_s", "evidence_s", "sanitize_s"]
CHECKS = ["run_s", "judge_s", "memcheck_s", "evidence_s", "sanitize_s"]
def cells(mode):
    rows = {}
    for line in open("%s/%s/timing.txt" % (out, mode), encoding="utf-8", errors="replace"):
        head, _, rest = line.partition(": ")
        vals = dict(m.groups() for m in re.finditer(r"(?:^| )([a-z_]+)=([0-9.]+)", " " + rest))
        rows[head] = {k: float(v) for k, v in vals.items() if k in STEPS}
    return rows
def med(rows, keys):
    v = [sum(r.get(k, 0.0) for k in keys) for r in rows.values() if any(k in r for k in keys)]
    return statistics.median(v) if v else None
off, on = cells("off"), cells("on")
f = lambda x: "-" if x is None else "%.2f" % x
print("per-cell medians, s (%d cells off, %d on)" % (len(off), len(on)))
print("%-28s %8s %8s" % ("step", "off", "on"))
for k in STEPS:
    print("%-28s %8s %8s" % (k, f(med(off, [k])), f(med(on, [k]))))
for label, keys in (("checks on the GPU", CHECKS), ("compile, lint, static, checks", STEPS)):
    a, b = med(off, keys), med(on, keys)
    print("%-28s %8s %8s   on/off %s" % (label, f(a), f(b), "%.2fx" % (b / a) if a and b else "-"))
# Runs from before the off mode left the lint out (grade.sh --no-lint) linted there too; against
# the off cells' time without it (the grading of before had no lint):
a, b = med(off, [k for k in STEPS if k != "lint_s"]), med(on, STEPS)
print("%-28s %8s %8s   on/off %s" % ("the same, off without lint", f(a), f(b), "%.2fx" % (b / a) if a and b else "-"))
