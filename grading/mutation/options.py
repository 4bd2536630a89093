"""The mutation run's command line (scripts/mutation_run.sh's, whose comment block is its --help), the
mutants it takes (grading/mutants.py list, filtered) and its plan (--dry-run)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

from .. import pipeline

VALUED = ("--lesson", "--only", "--work", "--out", "--deadline", "--jobs", "--memcheck-jobs", "--solution-every")
REGION_RULES = ("naive_in_tiled", "other_coalescing")


class Refused(Exception):
    """A bad command line: its message, and exit code 2."""


@dataclass
class Options:
    lessons: list[str] = field(default_factory=list)
    only: list[str] = field(default_factory=list)
    memcheck: bool = True
    lint: bool = True
    work: str = "build-mutants"
    out: str = ""
    dry: bool = False
    extra: list[str] = field(default_factory=list)
    deadline: int = 0
    every: int = 20
    memcheck_jobs: int = 4
    jobs: int = 2
    help: bool = False


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return 4


def _number(opt: str, value: str) -> int:
    if not re.fullmatch(r"[0-9]+", value):
        raise Refused("mutation_run.sh: %s needs a number, not '%s'" % (opt, value))
    return int(value)


def _valued(o: Options, opt: str, value: str) -> None:
    if opt == "--lesson":
        o.lessons.append(value)
    elif opt == "--only":
        o.only.append(value)
    elif opt == "--work":
        o.work = value
    elif opt == "--out":
        o.out = value
    elif opt == "--deadline":
        o.deadline = _number(opt, value)
    elif opt == "--jobs":
        o.jobs = _number(opt, value)
    elif opt == "--memcheck-jobs":
        o.memcheck_jobs = _number(opt, value)
    else:
        o.every = _number(opt, value) or 20


def parse(argv: list[str]) -> Options:
    """The options, in order as the script read them; Refused for a bad command line."""
    o = Options(jobs=cores() - 2)  # two cores left for the checks that run meanwhile
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in VALUED:
            if i + 1 >= len(argv):
                raise Refused("mutation_run.sh: %s needs a value (see --help)" % a)
            _valued(o, a, argv[i + 1])
            i += 2
            continue
        if a == "--":
            o.extra = argv[i + 1:]
            break
        if a in ("-h", "--help"):
            o.help = True
            return o
        if a == "--no-memcheck":
            o.memcheck = False
        elif a == "--no-lint":
            o.lint = False
        elif a == "--dry-run":
            o.dry = True
        elif a != "--memcheck":  # (--memcheck: the default now; kept for old command lines)
            raise Refused("mutation_run.sh: unknown argument '%s' (see --help)" % a)
        i += 1
    if not o.dry and not o.out:
        raise Refused("mutation_run.sh: --out DIR is needed (see --help)")
    o.jobs, o.memcheck_jobs = max(o.jobs, 1), max(o.memcheck_jobs, 1)
    return o


def usage(root: str) -> str:
    """The comment block at the top of scripts/mutation_run.sh, without its '# '."""
    out = []
    with open(os.path.join(root, "scripts", "mutation_run.sh"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    for line in lines[1:]:
        if not line.startswith("#"):
            break
        out.append(re.sub(r"^# ?", "", line))
    return "".join(x + "\n" for x in out)


@dataclass
class Mutant:
    index: int
    id: str
    lesson: str
    rule: str

    @property
    def name(self) -> str:
        return "mut%03d" % self.index


def mutants(root: str, o: Options) -> list[Mutant]:
    """grading/mutants.py list, in the generator's order, filtered by --lesson and --only."""
    p = subprocess.run(["python3", "-m", "grading.mutants", "list"], stdout=subprocess.PIPE, cwd=root)
    if p.returncode != 0:
        raise RuntimeError("grading/mutants.py list failed")
    out: list[Mutant] = []
    for line in p.stdout.decode("utf-8", "replace").split("\n"):
        mid = line.split("\t")[0]
        if not mid:
            continue
        lesson = mid.split(":")[0]
        if o.lessons and not any(lesson == x or lesson.startswith(x + "_") for x in o.lessons):
            continue
        if o.only and mid not in o.only:
            continue
        fields = mid.split(":")
        out.append(Mutant(len(out), mid, lesson, fields[2] if len(fields) > 2 else ""))
    return out


def equivalents(root: str) -> list[str]:
    """The lines of grading/equivalent_mutants.txt (`id: why`)."""
    path = os.path.join(root, "grading", "equivalent_mutants.txt")
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def is_equivalent(eq: list[str], mid: str) -> bool:
    """Whether a line starts with the id and a colon (as `grep -q "^ID:"`)."""
    return any(line.startswith(mid + ":") for line in eq)


def dry_run(root: str, o: Options, ms: list[Mutant], lessons: list[str]) -> None:
    """The mutants and the plan; builds and runs nothing. The layers are pipeline.PLANS["mutation"]'s."""
    plan = pipeline.PLANS["mutation"].layers
    eq = equivalents(root)
    stubs = sum(m.rule == "stub" for m in ms)
    region = sum(m.rule in REGION_RULES for m in ms)
    equiv = sum(is_equivalent(eq, m.id) for m in ms)
    w = sys.stdout.write
    w("%d mutants of: %s\n" % (len(ms), " ".join(lessons)))
    w("  %d one-line, %d exercise stubs, %d other region mutants; %d listed as equivalent (not counted)\n"
      % (len(ms) - stubs - region, stubs, region, equiv))
    w("build: one CMake tree (%s/build) with the lessons and each mutant as target mutNNN_check, ninja -k 0 -j %d\n" % (o.work, o.jobs))
    w("solution: every layer on the course's own code first; its speed cases before the mutants build, before the first "
      "mutant's, every %d mutants of the list, and at the end\n" % o.every)
    for m in ms:
        w("mut%03d %s: compile;%s host; GPU checks%s; speed; static%s%s\n" % (
            m.index, m.id, " lint;" if o.lint and "lint" in plan else "",
            "; memcheck --small" if o.memcheck and "memcheck" in plan else "",
            "" if os.path.isfile(os.path.join(root, "lessons", m.lesson, "rubric.json")) else " (no rubric: not judged)",
            " [equivalent]" if is_equivalent(eq, m.id) else ""))
    w("deadline: %s; outputs: %s/mutants.csv summary.txt solution.csv env.txt\n"
      % ("%d s" % o.deadline if o.deadline > 0 else "none", o.out or "DIR"))
