"""The grader's command line: every option of scripts/grade.sh (HELP is what --help prints), read
with argparse into Options. The command line's grammar is the grader's own, stricter than
argparse's: an option's value is always the next argument (even one that starts with -), no
abbreviations, no --option=value, -DNAME=VALUE for cmake; the first problem from the left is the
one said, and every bad command line exits 2. tokens() writes the command line in a form argparse
reads only one way, so that argparse's actions see each argument in order."""
from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field
from typing import Callable, NoReturn

from . import gradebook
from .exits import Exit, usage_error
from .names import visible

HELP = """grade.sh — grade students' main.cu files with the lessons' own checks, on a machine WITH a GPU,
treating every submission as hostile. (scripts/grade.sh runs grading/grade.py; grading/README.md
says how to grade a class and what the grader does and does not defend against.)

usage: scripts/grade.sh SUBMISSIONS [options]
       scripts/grade.sh --gradebook-from CELLS [--out DIR] [--weights FILE] [--weights C,P]

SUBMISSIONS holds one folder per student, each holding any subset of NN_name/main.cu, where
NN_name is a lesson folder of lessons/lessons.txt. Every (student, lesson) is one cell. For each:
  1. compile: the lesson's check.cu against the student's main.cu (the RUNNER), in a sandbox;
     then the lint: the submission's device code compiled as host C++ by g++ -O3, in the sandbox
     (grading/ub_lint.py); undefined behaviour GCC reports there (an index one past a register
     array, which nvcc deletes and no run can see) fails the cell (--no-lint: off);
  2. run: the runner, in a sandbox, records every value the student's code hands back to the
     check; nothing it prints is believed;
  3. judge: the lesson's check built from the course's OWN main.cu (the JUDGE), outside the
     sandbox, runs every test case with its own inputs and references, judges the runner's
     recorded values and writes its verdict (JSON), which is the cell's grade. A test case that
     asked the submission for no value is the course's own test: shown apart, never counted;
  4. the memcheck subset: the runner again, in the sandbox, under compute-sanitizer memcheck on
     the checks' small shapes (--small); an error fails the cell (--no-memcheck: off);
  5. performance evidence (--no-performance: off): each exercise's speed beside the course
     solution's, timed by the judge's verdict, and the static facts of the compiled kernels
     (cuobjdump, in the sandbox, while the cell compiles), judged by lessons/NN_name/rubric.json;
  6. with --sanitize, racecheck and memcheck over all of the runner's GPU checks (then in place
     of the memcheck subset), in the sandbox.
Every entry of SUBMISSIONS, and of a student's folder, gets a row; nothing is read through a
symbolic link (a link gets a row that says so).

  --out DIR            where everything goes (default: build-grade): DIR/gradebook.csv and .md,
                       DIR/scores.csv, DIR/feedback/, DIR/similarity.csv (pairs of students whose
                       exercise code is alike: it changes no grade), DIR/progress.log,
                       DIR/cells/NNNN/ (one folder per cell: cell.json, logs). Refused inside or
                       around SUBMISSIONS (links resolved), in the course's tree (but a build*
                       folder at its top) and in or around the course cache
  --course-cache DIR   where the course and its judges, built once, are kept for the next run of
                       the same course (default: build-grade-cache): an entry per content of the
                       course, its cmake options and its compilers (common/, the judges,
                       prebuilt/ and course-view/, what a sandbox sees of the course); the two
                       newest are kept. Every folder above it must be open to other users
  --no-course-cache    build the course in DIR (DIR/common/, DIR/prebuilt/, DIR/course-view/),
                       as a Slurm task always does
  --timeout S          seconds one run may take (default: 60); the judge gets 60 more
  --sanitize           also run each cell's GPU checks under compute-sanitizer racecheck and
                       memcheck; a finding is reported even if the checks passed
  --sanitize-timeout S seconds one sanitizer run may take (default: 600); the memcheck subset's
                       is less: 20 x the cell's run time, at least 120 s
  --no-memcheck        no memcheck subset (step 4)
  --no-lint            no lint (step 1's second part)
  --no-performance     no performance evidence (step 5): each cell is graded on correctness alone,
                       as before the evidence existed; the rubric's contracts are not judged either
  --seed N             the seed mixed into every random input (default: drawn at random; the
                       gradebook says which, so that a run can be repeated)
  --hidden-shapes FILE extra shapes for every lesson's checks (lines "NN_name N ..."; keep the
                       file away from students)
  --scratch-mib N, --file-mib N, --output-kib N, --procs N
                       a cell's limits: its /tmp and /dev/shm (default 256 MiB each), any file it
                       writes (1024 MiB), what it prints (1024 KiB kept, the rest counted),
                       processes (64)
  --mem-mib N          the resident memory each step of a cell (compile, run, judge, sanitizer)
                       may use, all its processes together (default 8192); above it the step is
                       stopped and that is the cell's finding
  --transcript-mib N   the largest transcript (values the run recorded) the judge reads
                       (default 512); a larger one is a finding, never judged
  --max-files N        the most entries a student's folder, or one of its lesson folders, may
                       hold (default 100); above it the student gets one row that says so
  --max-source-kib N   the largest main.cu graded (default 1024)
  --arch LIST          CMAKE_CUDA_ARCHITECTURES (default: the GPU's own)
  --jobs N             cells compiled at the same time (default: half the CPU cores); a cell's
                       checks start as soon as it is compiled, while the others compile
  --share N            N cells' checks at the same time on each GPU (default 1). A cell that did
                       not pass everything (or fell short of a performance rule or of full speed
                       credit) is graded again, alone on its GPU, and that is its grade. Needs root and the sandbox (cells are told apart by their user ids)
  --no-sandbox         grade without bubblewrap (said in the gradebook): a submission can then
                       read and write whatever the instructor can
  --host-only          run the host test cases only, needing no GPU: for testing the grader
  -DNAME=VALUE         passed to every cmake configure (e.g. -DCMAKE_PREFIX_PATH=/opt/doctest)
  --gradebook-from CELLS   grade nothing: write the gradebook of an earlier run's cell folder
                       (DIR/cells) into --out; needs no GPU
  --resume             go on with a run that was stopped (same SUBMISSIONS and --out): cells with
                       a result are neither regraded nor recompiled; the seed is the first run's,
                       and options that change a grade must be the same
  --weights FILE       lines "NN_name WEIGHT" (WEIGHT >= 0, default 1; # starts a comment line)
                       for DIR/scores.csv; also with --gradebook-from
  --weights C,P        a passed cell's score: C% for correctness plus P% times its performance
                       credit (default 50,50; whole numbers adding up to 100; 100,0 counts
                       correctness alone): 9/10 the speed credit of its slowest exercise (all of
                       it at or above its rubric's "full" share of the solution's speed, none at
                       or below "zero", a straight line between), 1/10 its other performance
                       rules met; a cell that did not pass scores 0; also with --gradebook-from
  --gpus all|I,J,...   one cell on each of these GPUs at a time (all: those in
                       CUDA_VISIBLE_DEVICES when set, else every GPU nvidia-smi lists)
  --slurm              write (not run) a Slurm job array that grades the class into --out (on a
                       filesystem every node sees) and a gradebook job that runs after it:
                       DIR/slurm/grade-array.sbatch, gradebook.sbatch, submit.sh. Needs no GPU.
    --partition P, --account A   their #SBATCH lines
    --gpus-per-task N  GPUs per task (default 1; 0 asks for none); more than 1: --gpus all
    --tasks N          tasks in the array (default: one per 20 students)
    --submit           also run submit.sh (sbatch)
  --slice K/N          (what a Slurm task runs, with --resume) grade students K, K+N, K+2N, ...
  --                   end of options (for a SUBMISSIONS folder whose name starts with -)

Gradebook (CSV and Markdown, one row per cell): student, lesson, compiled, checks passed and
checks total (the test cases that judged a value the submission computed), first failure or
finding, the course's own test cases apart, then correctness (passed: compiled, every counted
test case passed, at least one counted, no finding), performance (the slowest exercise's speed
as a share of the solution's with its credit, the other rules met/judged, "off" or "not
measured"), the cell's score (a share of its lesson's weight, --weights C,P), the first
performance shortfall in the rubric's words and a note (a main.cu that is also another's: hard
links). Exports: DIR/scores.csv (student, score, max score, comment) and DIR/feedback/STUDENT.md;
beside them DIR/similarity.csv. A run refused before grading leaves DIR as it was.
Exit: 0 every cell passed; 1 a cell did not (or the grader could not build the course);
2 bad command line; 3 no usable GPU, or no usable sandbox (nothing is graded); 130 interrupted.
"""


@dataclass
class Options:
    """What the command line asked for (every field's default is grade.sh's)."""
    submissions: str | None = None
    out: str | None = None
    timeout: int = 60
    sanitize: bool = False
    sanitize_timeout: int = 600
    seed: int | None = None
    hidden: str = ""
    arch: str = ""
    jobs: int = 0  # 0: not given (half the CPU cores, see preflight)
    share: int = 1
    no_sandbox: bool = False
    host_only: bool = False
    scratch_mib: int = 256
    file_mib: int = 1024
    output_kib: int = 1024
    procs: int = 64
    mem_mib: int = 8192
    transcript_mib: int = 512
    max_files: int = 100
    max_source_kib: int = 1024
    gradebook_from: str | None = None
    resume: bool = False
    weights_file: str = ""
    split: tuple[int, int] = gradebook.DEFAULT_SPLIT  # --weights C,P
    split_given: str = ""
    memcheck: bool = True
    lint: bool = True
    performance: bool = True
    gpus: str = ""
    course_cache: str = ""  # --course-cache DIR ('': the course's build-grade-cache)
    no_course_cache: bool = False
    slice: str = ""
    slurm: bool = False
    partition: str = ""
    account: str = ""
    gpus_per_task: int = 1
    tasks: int = 0  # 0: not given (one task per 20 students)
    submit: bool = False
    cmake_defs: list[str] = field(default_factory=list)
    passed_on: list[str] = field(default_factory=list)  # the options a Slurm task repeats


Handler = Callable[[Options, str, "str | None"], None]


def is_uint(s: str | None) -> bool:
    return s is not None and re.fullmatch(r"[0-9]+", s) is not None and int(s) > 0


def _real_file(v: str) -> str:
    """V with its folder's symbolic links resolved (the file itself is named as given)."""
    return os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(v))), os.path.basename(v))


def _readable(v: str | None) -> bool:
    return v is not None and os.path.isfile(v) and os.access(v, os.R_OK)


def _uint(attr: str, msg: str) -> Handler:
    def handle(o: Options, a: str, v: str | None) -> None:
        if not is_uint(v):
            usage_error(msg)
        assert v is not None
        setattr(o, attr, int(v))
        o.passed_on += [a, v]
    return handle


def _text(attr: str, ok: Callable[[str | None], object], msg: str, passed_on: bool = False) -> Handler:
    def handle(o: Options, a: str, v: str | None) -> None:
        if not ok(v):
            usage_error(msg)
        assert v is not None
        setattr(o, attr, v)
        if passed_on:
            o.passed_on += [a, v]
    return handle


def _flag(attr: str, value: bool = True, passed_on: bool = True) -> Handler:
    def handle(o: Options, a: str, v: str | None) -> None:
        setattr(o, attr, value)
        if passed_on:
            o.passed_on.append(a)
    return handle


def _seed(o: Options, a: str, v: str | None) -> None:
    if not (v is not None and re.fullmatch(r"[0-9]{1,10}", v) and int(v) <= 4294967295):
        usage_error("--seed needs a whole number from 0 to 4294967295")
    assert v is not None
    o.seed = int(v)


def _hidden_shapes(o: Options, a: str, v: str | None) -> None:
    if not _readable(v):
        usage_error("--hidden-shapes needs a readable file")
    assert v is not None
    o.hidden = _real_file(v)
    o.passed_on += [a, o.hidden]


def _weights(o: Options, a: str, v: str | None) -> None:
    if v is None:
        usage_error("--weights needs C,P (e.g. 80,20) or a readable file (lines 'NN_name weight')")
    if _readable(v):
        o.weights_file = _real_file(v)
    elif "," in v or re.fullmatch(r"[0-9 ]*", v):
        try:
            o.split = gradebook.parse_split(v)
        except gradebook.WeightsError as e:
            usage_error(str(e))
        o.split_given = "%d,%d" % o.split
    else:
        usage_error("--weights needs C,P (e.g. 80,20) or a readable file (lines 'NN_name weight'); '%s' is neither" % visible(v))


def _slice_ok(v: str | None) -> bool:
    m = re.fullmatch(r"([0-9]+)/([0-9]+)", v or "")
    return m is not None and int(m.group(2)) > 0 and int(m.group(1)) < int(m.group(2))


def _gpus_per_task(o: Options, a: str, v: str | None) -> None:
    if not (v is not None and re.fullmatch(r"[0-9]+", v)):
        usage_error("--gpus-per-task needs a number (0: ask Slurm for no GPU)")
    assert v is not None
    o.gpus_per_task = int(v)


def _tasks(o: Options, a: str, v: str | None) -> None:
    if not is_uint(v):
        usage_error("--tasks needs a number > 0")
    assert v is not None
    o.tasks = int(v)


def _help(o: Options, a: str, v: str | None) -> None:
    raise Exit(0, HELP.rstrip("\n"))


def _submissions(o: Options, a: str, v: str | None) -> None:
    assert v is not None
    if o.submissions is not None:
        usage_error("one SUBMISSIONS folder, not two ('%s', '%s')" % (visible(o.submissions), visible(v)))
    o.submissions = v


def _rest(o: Options, a: str, v: str | None) -> None:  # "--" and the N arguments after it
    if int(v or "0") > 1:
        usage_error("one SUBMISSIONS folder, not %d" % int(v or "0"))


def _after_rest(o: Options, a: str, v: str | None) -> None:
    o.submissions = v


def _define(o: Options, a: str, v: str | None) -> None:  # -DNAME=VALUE
    assert v is not None
    o.cmake_defs.append(v)
    o.passed_on.append(v)


def _unknown(o: Options, a: str, v: str | None) -> None:
    usage_error("unknown option '%s'" % visible(v or ""))


UINT_OPTIONS = {"--timeout": ("timeout", "--timeout needs a whole number of seconds > 0"),
                "--sanitize-timeout": ("sanitize_timeout", "--sanitize-timeout needs a whole number of seconds > 0"),
                "--jobs": ("jobs", "--jobs needs a number > 0"),
                "--share": ("share", "--share needs a number of cells > 0"),
                "--scratch-mib": ("scratch_mib", "--scratch-mib needs a number > 0"),
                "--file-mib": ("file_mib", "--file-mib needs a number > 0"),
                "--output-kib": ("output_kib", "--output-kib needs a number > 0"),
                "--procs": ("procs", "--procs needs a number > 0"),
                "--mem-mib": ("mem_mib", "--mem-mib needs a number > 0"),
                "--transcript-mib": ("transcript_mib", "--transcript-mib needs a number > 0"),
                "--max-files": ("max_files", "--max-files needs a number > 0"),
                "--max-source-kib": ("max_source_kib", "--max-source-kib needs a number > 0")}
VALUE_OPTIONS: dict[str, Handler] = {
    **{name: _uint(attr, msg) for name, (attr, msg) in UINT_OPTIONS.items()},
    "--out": _text("out", lambda v: v is not None, "--out needs a folder"),
    "--seed": _seed,
    "--hidden-shapes": _hidden_shapes,
    "--arch": _text("arch", bool, "--arch needs a list, e.g. 90 or 80;90", passed_on=True),
    "--gradebook-from": _text("gradebook_from", bool, "--gradebook-from needs a folder"),
    "--weights": _weights,
    "--gpus": _text("gpus", lambda v: v is not None and (v == "all" or re.fullmatch(r"[0-9]+(,[0-9]+)*", v)),
                    "--gpus needs 'all' or GPU indexes like 0,1,3"),
    "--slice": _text("slice", _slice_ok, "--slice needs K/N with 0 <= K < N"),
    "--course-cache": _text("course_cache", bool, "--course-cache needs a folder"),
    "--partition": _text("partition", bool, "--partition needs a name"),
    "--account": _text("account", bool, "--account needs a name"),
    "--gpus-per-task": _gpus_per_task,
    "--tasks": _tasks,
}
FLAGS: dict[str, Handler] = {
    "--sanitize": _flag("sanitize"), "--no-sandbox": _flag("no_sandbox"), "--host-only": _flag("host_only"),
    "--resume": _flag("resume", passed_on=False), "--no-memcheck": _flag("memcheck", False),
    "--no-performance": _flag("performance", False), "--no-lint": _flag("lint", False),
    "--slurm": _flag("slurm", passed_on=False), "--no-course-cache": _flag("no_course_cache", passed_on=False), "--submit": _flag("submit", passed_on=False),
    "-h": _help, "--help": _help,
}
# What tokens() writes for the arguments that are not options of their own.
INTERNAL: dict[str, Handler] = {"--<submissions>": _submissions, "--<rest>": _rest, "--<after-rest>": _after_rest,
                                "--<define>": _define, "--<unknown>": _unknown}


class _Act(argparse.Action):
    """One option: its handler gets the options, the option as given and its value (None: none)."""

    def __init__(self, option_strings: list[str], dest: str, handler: Handler, **kw: object) -> None:
        super().__init__(option_strings, dest, **kw)  # type: ignore[arg-type]
        self.handler = handler

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        value = values[1:] if isinstance(values, str) else None  # (tokens() puts a ":" before each value)
        self.handler(namespace, option_string or "", value)  # type: ignore[arg-type]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # (tokens() leaves argparse nothing to refuse)
        usage_error(message)


def parser() -> argparse.ArgumentParser:
    """argparse's parser of the options (HELP says what each does)."""
    p = _Parser(prog="grade.sh", add_help=False, allow_abbrev=False)
    for name, handler in VALUE_OPTIONS.items():
        p.add_argument(name, action=_Act, handler=handler, nargs="?", default=argparse.SUPPRESS)
    for name, handler in {**FLAGS, **INTERNAL}.items():
        p.add_argument(name, action=_Act, handler=handler, nargs="?" if name in INTERNAL else 0,
                       default=argparse.SUPPRESS)
    return p


def tokens(argv: list[str]) -> list[str]:
    """ARGV in the one form argparse reads one way: an option joined with its value behind a ":"
    ("--out=:-x": a value is the next argument, whatever it looks like, even "--"), and the other
    arguments as internal options ("--<submissions>=:x", "--<unknown>=:-x", "--<define>=:-DX=1",
    "--<rest>=:N" for "--" and the N arguments after it)."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in VALUE_OPTIONS:
            out.append(a + "=:" + argv[i + 1] if i + 1 < len(argv) else a)
            i += 2
            continue
        if a == "--":
            rest = argv[i + 1:]
            out.append("--<rest>=:%d" % len(rest))
            out += ["--<after-rest>=:" + rest[0]] if len(rest) == 1 else []
            break
        if a in FLAGS:
            out.append(a)
        elif a.startswith("-D") and len(a) > 2:
            out.append("--<define>=:" + a)
        elif a.startswith("-"):
            out.append("--<unknown>=:" + a)
        else:
            out.append("--<submissions>=:" + a)
        i += 1
    return out


def check_combinations(o: Options) -> None:
    """The options that go together, or not at all."""
    if not o.slurm:
        if o.partition or o.account or o.tasks or o.submit or o.gpus_per_task != 1:
            usage_error("--partition, --account, --gpus-per-task, --tasks and --submit go with --slurm")
    else:
        if o.slice or o.gpus:
            usage_error("--slurm chooses --slice and --gpus itself")
        if o.resume:
            usage_error("--slurm always resumes (its tasks grade only cells without a result): leave out --resume")
    if o.course_cache and o.no_course_cache:
        usage_error("--course-cache and --no-course-cache: give one")
    if o.slice and not o.resume:
        usage_error("--slice grades a slice of a plan made before (by --slurm): add --resume")


def parse(argv: list[str]) -> Options:
    """The options of ARGV (grade.sh's arguments); Exit(2) for a bad command line, Exit(0) with the
    help text for -h or --help."""
    o = Options()
    parser().parse_args(tokens(list(argv)), namespace=o)
    check_combinations(o)
    return o
