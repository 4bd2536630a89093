"""The layers of grading and the one pass rule, for every tool that grades a cell: the class grader
(grading/cell_build.py, cell_grade.py, cell_evidence.py), the mutation run (scripts/mutation_run.sh,
its bookkeeping in grading/mutation_report.py) and the student's loop (scripts/exercises.sh check
and status, whose progress table this module prints: `python3 -m grading.pipeline table FILE`).
Standard library only, and it imports nothing of grading/ but cmdline.py (its command line, read
by argparse): both ship in the student pack.

The layers, in order, as each tool runs them today (a cell: one submission of one lesson):

  compile       grader: check.cu against the submission, in the cell's sandbox; mutation run: one
                CMake tree, ninja -k 0; exercises.sh: cmake --build of exercise_NN and its check.
  lint          grading/ub_lint.py (the device code as host C++ through g++ -O3). The grader (unless
                --no-lint, in the sandbox) and exercises.sh run it after a compile that succeeded;
                the mutation run (unless --no-lint) on every mutant, beside the build.
  static facts  cuobjdump's facts of the compiled kernels, judged by the rubric's static rules
                (grader: read in the sandbox while the cell compiles, judged with the evidence;
                mutation run and exercises.sh: `python3 -m grading.static_evidence check`).
  run           grader: the runner, sandboxed, records the values (host and GPU test cases in one
                process, --host with --host-only); mutation run and exercises.sh: the check's
                --host, then --gpu without the speed cases (the mutation run with --abort-after=1,
                and the GPU checks only after the host checks passed).
  judge         grader: the course's check, outside the sandbox, judges the recorded values
                (verdict.json); the other two tools read the check's own exit code.
  memcheck      the --small subset under compute-sanitizer memcheck; grader: without --sanitize,
                only where the cell passed so far and the lint found nothing; mutation run: where
                the GPU checks passed; exercises.sh: never.
  evidence      the speed cases judged by grading/evidence.py and the static rubric; grader: a
                "required" rule broken fails correctness; mutation run: a SHORT speed case or a
                CONTRACT / SHORT static rule catches the mutant; exercises.sh: static FAILED (a
                required rule) blocks "solved", speed is shown and never blocks.
  sanitizers    racecheck and memcheck over the GPU checks: the grader only, with --sanitize.

PLANS says which layers each tool runs (the differences above, kept as they are).

The pass rule, written once here and worded for each tool:

  grader        (grader_passed, grader_passed_so_far) a cell passes when it compiled, at least one
                counted test case judged a value of the submission, every counted test case passed,
                and no layer left a finding (lint's "undefined behaviour", a sanitizer's error, a
                required rule broken, a run stopped at a limit, ...). A finding made after the cell
                passed so far is worded "passed, ..." / "passed, but ...".
  exercises.sh  (exercise_status) "solved" when it compiles, its host checks pass, its GPU checks
                RAN and passed, and neither the lint nor a required rule of its rubric found a
                fault; GPU checks skipped (no GPU) is never solved.
  mutation run  (caught_by) a mutant is caught by the first layer, in MUTATION_LAYERS' order, whose
                outcome catches it (CAUGHT): the same rule seen from the other side (the mutant
                "passes" where it survives every layer). A speed case that FAILED or timed out is
                a failed GPU check, credited to "gpu".

The differences between the three are explicit parameters: the tool's Plan (which layers run) and
the outcome words each layer reports.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from . import cmdline

LAYERS = ("compile", "lint", "static_facts", "run", "judge", "memcheck", "evidence", "sanitizers")


@dataclass(frozen=True)
class Plan:
    """Which layers a tool runs (the others are left out); memcheck_after: what memcheck waits for."""
    tool: str
    layers: tuple[str, ...]
    memcheck_after: str


PLANS = {
    "grader": Plan("grader", LAYERS, "the cell passed so far and the lint found nothing (not with --sanitize)"),
    "mutation": Plan("mutation", ("compile", "lint", "static_facts", "run", "memcheck", "evidence"), "the GPU checks passed"),
    "exercises": Plan("exercises", ("compile", "lint", "static_facts", "run", "evidence"), "(memcheck is not run)"),
}


# ---------------------------------------------------------------- the grader

def grader_passed_so_far(findings: Sequence[str], passed: int | None, total: int | None) -> bool:
    """No finding yet, and every counted test case of the verdict passed (None: no verdict)."""
    return not findings and passed is not None and passed == total


def grader_passed(compiled: str, passed: str, total: str, finding: str) -> bool:
    """A cell's correctness: it compiled, at least one test case was counted, every counted one
    passed, and it has no finding (the fields of a cell.json's result, as strings)."""
    return (compiled == "yes" and re.fullmatch(r"[0-9]+", total or "") is not None and int(total) > 0
            and passed == total and not finding)


# ---------------------------------------------------------------- exercises.sh

@dataclass
class Exercise:
    """One line of exercises.sh's results: "name compiles host gpu [static [lint]]"."""
    name: str
    compiles: str
    host: str
    gpu: str
    static: str = "-"
    lint: str = "-"


def exercise_status(e: Exercise) -> tuple[str, bool]:
    """What the table shows in its GPU column, and whether the exercise is solved."""
    if e.gpu == "passed":
        if e.lint == "FAILED":
            return "not yet (undefined behaviour)", False
        if e.static == "FAILED":
            return "not yet (static evidence)", False
        if e.compiles == "ok" and e.host == "ok":
            return "solved", True
        return "passed", False
    shown = {"failed": "not yet", "timeout": "not yet (time limit)", "skipped": "skipped: no GPU"}
    return shown.get(e.gpu, "-"), False


def read_exercises(text: str) -> list[Exercise]:
    """The lines of a results file as bash's `while read -r name compiles host gpu static lint`
    reads them: only lines ended by a newline, split on blanks and tabs, missing fields "", the
    last one taking the rest of the line; lines whose first word is empty or starts with # are
    left out."""
    out = []
    for line in text.split("\n")[:-1]:
        words = re.split(r"[ \t]+", line.strip(" \t"), maxsplit=5) if line.strip(" \t") else []
        if not words or words[0].startswith("#"):
            continue
        words += [""] * (6 - len(words))
        out.append(Exercise(words[0], words[1], words[2], words[3], words[4] or "-", words[5] or "-"))
    return out


def exercise_table(exercises: Sequence[Exercise]) -> tuple[str, bool]:
    """exercises.sh's progress table, and whether every exercise (at least one) is solved."""
    lines = ["%-22s| %-10s| %-12s| %s" % ("exercise", "compiles?", "host checks", "GPU checks"),
             "----------------------+-----------+-------------+------------------"]
    solved = skipped = 0
    for e in exercises:
        shown, ok = exercise_status(e)
        solved += ok
        skipped += e.gpu == "skipped"
        lines.append("%-22s| %-10s| %-12s| %s" % (e.name, e.compiles, e.host, shown))
    if skipped:
        lines.append("GPU checks skipped: no usable GPU here. An exercise counts as solved only when its GPU checks ran and passed.")
    lines.append("%d/%d solved" % (solved, len(exercises)))
    return "\n".join(lines) + "\n", solved == len(exercises) and len(exercises) > 0


# ---------------------------------------------------------------- the mutation run

# In the order of default grading. The lint runs right after the compile, on the CPU.
MUTATION_LAYERS = ["compile", "lint", "host", "gpu", "memcheck", "speed", "static"]
CAUGHT = {"compile": ("FAILED",), "lint": ("UB",), "host": ("FAILED", "timeout"), "gpu": ("FAILED", "timeout"),
          "memcheck": ("ERROR", "FAILED", "timeout"), "speed": ("SHORT", "FAILED", "timeout"),
          "static": ("CONTRACT", "SHORT")}


@dataclass
class Mutant:
    """A mutant's outcome word line for each layer of MUTATION_LAYERS ("-": not run)."""
    outcomes: dict[str, str] = field(default_factory=dict)

    def get(self, layer: str) -> str:
        return self.outcomes.get(layer, "-")


def caught_by(o: Mapping[str, str], memcheck_on: bool) -> str:
    """The first layer whose outcome catches the mutant, else unfinished / survived (no GPU) / survived.
    A speed test case that FAILED (or ran out of time) is a GPU check that failed: it verifies the
    timed kernel's output at its large size, and default grading counts it with the other GPU test
    cases (correctness), so it is credited to "gpu", not to the speed evidence."""
    for layer in MUTATION_LAYERS:
        word = o.get(layer, "-").split(" ")[0].split(":")[0]
        if word in CAUGHT[layer]:
            return "gpu" if layer == "speed" and word in ("FAILED", "timeout") else layer
    if any(v.startswith("not run") for v in o.values()) or o["compile"] == "-" or (
            o["gpu"] == "passed" and ((memcheck_on and o["memcheck"] == "-") or o["speed"] == "-")):
        return "unfinished"
    return "survived (no GPU)" if o["gpu"] == "skipped" else "survived"


def main(argv: Sequence[str]) -> int:
    """`table FILE`: exercises.sh's progress table of FILE; exit 0 when every exercise is solved
    (2 and a usage line: any other command line)."""
    p = cmdline.Parser("python3 -m grading.pipeline")
    p.add_subparsers(dest="command", required=True).add_parser("table").add_argument("file", type=cmdline.value)
    try:
        a = p.parse_args(cmdline.marked(argv[1:], commands=("table",)))
    except cmdline.Refused:
        print("usage: python3 -m grading.pipeline table FILE", file=sys.stderr)
        return 2
    try:
        with open(a.file, encoding="utf-8", errors="replace") as f:
            text, all_solved = exercise_table(read_exercises(f.read()))
    except OSError as e:
        print("python3 -m grading.pipeline: %s: %s" % (a.file, e.strerror), file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0 if all_solved else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
