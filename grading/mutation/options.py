"""The mutation run's command line (scripts/mutation_run.sh's, whose comment block is its --help), the
mutants it takes (grading/mutants.py list, filtered) and its plan (--dry-run)."""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import cmdline, pipeline

VALUED = ("--lesson", "--only", "--work", "--out", "--deadline", "--jobs", "--memcheck-jobs", "--solution-every")
REGION_RULES = ("naive_in_tiled", "other_coalescing", "misses_idea")


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


FLAGS = {"--no-memcheck": ("memcheck", False), "--no-lint": ("lint", False), "--dry-run": ("dry", True),
         "--memcheck": ("memcheck", True)}  # (--memcheck: the default now; kept for old command lines)
Handler = Callable[[Options, str, "str | None"], None]


class _Help(Exception):
    """-h or --help: the rest of the command line is not read."""


def _help(o: Options, opt: str, value: str | None) -> None:
    o.help = True
    raise _Help()


def _flag(o: Options, opt: str, value: str | None) -> None:
    setattr(o, *FLAGS[opt])


def _value(o: Options, opt: str, value: str | None) -> None:
    _valued(o, opt, value or "")


def _unknown(o: Options, opt: str, value: str | None) -> None:
    raise Refused("mutation_run.sh: unknown argument '%s' (see --help)" % value)


def _no_value(o: Options, opt: str, value: str | None) -> None:
    raise Refused("mutation_run.sh: %s needs a value (see --help)" % value)


class _Act(argparse.Action):
    """One argument, read in order: its handler gets the options, the option and its value (None: none)."""

    def __init__(self, option_strings: list[str], dest: str, handler: Handler, **kw: Any) -> None:
        super().__init__(option_strings, dest, **kw)
        self.handler = handler

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        self.handler(namespace, option_string or "", cmdline.value(values) if isinstance(values, str) else None)  # type: ignore[arg-type]


def _parser() -> cmdline.Parser:
    """argparse's parser of what _tokens() makes of the command line."""
    p = cmdline.Parser("mutation_run.sh")
    handlers: dict[str, Handler] = {"--<unknown>": _unknown, "--<no-value>": _no_value, **{v: _value for v in VALUED}}
    for name, handler in handlers.items():
        p.add_argument(name, action=_Act, handler=handler, default=argparse.SUPPRESS)
    for name, handler in {"-h": _help, "--help": _help, **{f: _flag for f in FLAGS}}.items():
        p.add_argument(name, action=_Act, handler=handler, nargs=0, default=argparse.SUPPRESS)
    return p


def _tokens(argv: list[str]) -> tuple[list[str], list[str]]:
    """(ARGV before "--" in the one form argparse reads one way, the arguments after "--"): an
    option the script has stays, the argument after a valued one is its value whatever it looks
    like, and any other argument becomes "--<unknown>" (a valued option with nothing after it,
    "--<no-value>"), each value marked (cmdline.marked's MARK)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return out, argv[i + 1:]
        if a in VALUED:
            out += [a, cmdline.MARK + argv[i + 1]] if i + 1 < len(argv) else ["--<no-value>", cmdline.MARK + a]
            i += 2
            continue
        out += [a] if a in FLAGS or a in ("-h", "--help") else ["--<unknown>", cmdline.MARK + a]
        i += 1
    return out, []


def parse(argv: list[str]) -> Options:
    """The options, read in order by argparse as the script read them; Refused for a bad command line."""
    o = Options(jobs=cores() - 2)  # two cores left for the checks that run meanwhile
    tokens, o.extra = _tokens(argv)
    try:
        _parser().parse_args(tokens, namespace=o)
    except _Help:
        return o
    except cmdline.Refused as e:  # (_tokens() leaves argparse nothing to refuse)
        raise Refused("mutation_run.sh: %s (see --help)" % e)
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
