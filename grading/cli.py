"""grade.sh — grade students' main.cu files with the lessons' own checks, on a machine WITH a GPU,
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
                       DIR/scores.csv, DIR/feedback/, DIR/progress.log, DIR/common/ (the course and
                       its judges, built once), DIR/prebuilt/ and DIR/course-view/ (what a sandbox
                       sees of the course), DIR/cells/NNNN/ (one folder per cell: result.txt, logs)
  --timeout S          seconds one run may take (default: 60); the judge gets 60 more
  --sanitize           also run each cell's GPU checks under compute-sanitizer racecheck and
                       memcheck; a finding is reported even if the checks passed
  --sanitize-timeout S seconds one sanitizer run may take, the memcheck subset's too (default: 600)
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
                       not pass everything (or fell short of a performance rule) is graded again,
                       alone on its GPU, and that is its grade. Needs root and the sandbox (cells are told apart by their user ids)
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
  --weights C,P        a passed cell's score: C% for correctness plus P% times the share of its
                       performance rules met (default 80,20; whole numbers adding up to 100); a
                       cell that did not pass scores 0; also with --gradebook-from
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
test case passed, at least one counted, no finding), performance (rules met/judged, "off" or
"not measured"), the cell's score (a share of its lesson's weight, --weights C,P) and the first
performance shortfall in the rubric's words. Exports: DIR/scores.csv (student, score, max score,
comment) and DIR/feedback/STUDENT.md.
Exit: 0 every cell passed; 1 a cell did not (or the grader could not build the course);
2 bad command line; 3 no usable GPU, or no usable sandbox (nothing is graded); 130 interrupted.
"""
import os
import re
import shutil
import json
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib
from datetime import datetime, timezone

from . import compile as compile_
from . import gpus as gpus_
from . import evidence, gradebook, judge, plan, run, sandbox, slurm, static_evidence
from .lessons import LessonListError, check_hidden_shapes, course_lessons
from .names import quote_output, shorten, visible

ME = "grade.sh"
# The doctest option that leaves out the `speed: <id>` test cases (common/check_main.hpp): in the
# sanitizers' runs (a large size timed many times, under a sanitizer, would prove nothing more) and
# in runner and judge with --no-performance.
SKIP_SPEED = "--test-case-exclude=speed: *"


class Exit(Exception):
    def __init__(self, code, message=None):
        super().__init__(message)
        self.code, self.message = code, message


def usage_error(msg):
    raise Exit(2, "%s: %s; see --help" % (ME, msg))


def is_uint(s):
    return s is not None and re.fullmatch(r"[0-9]+", s) is not None and int(s) > 0


def lint_finding(log, rc):
    """The cell's lint finding from grading/ub_lint.py --json's output LOG (its last line is the
    result; RC its exit code): "undefined behaviour ..." (a finding: it fails the cell), None (clean)
    or "not applicable (...)". GCC's words quote the submission's names: quoted as its own."""
    try:
        r = json.loads(log.strip().splitlines()[-1])
        status, found = r["status"], r["findings"]
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return "not applicable (the lint printed no result, exit %d)" % rc
    if status == "clean":
        return None
    if status != "ub" or not isinstance(found, list) or not found or not isinstance(found[0], dict):
        return "not applicable (%s)" % visible(str(r.get("why", "") if isinstance(r, dict) else ""))[:300]
    f = found[0]
    line = f.get("line")
    return ("undefined behaviour in the device code, as GCC reads it (g++ -O3 on it as host C++; nvcc may silently "
            "delete what it does, so no check can see it): main.cu:%d: %s [%s]%s"
            % (line if isinstance(line, int) else 0, quote_output(str(f.get("message", ""))),
               visible(str(f.get("flag", "")))[:60], "; %d more" % (len(found) - 1) if len(found) > 1 else ""))


class Options:
    def __init__(self):
        self.submissions = None
        self.out = None
        self.timeout = 60
        self.sanitize = False
        self.sanitize_timeout = 600
        self.seed = None
        self.hidden = ""
        self.arch = ""
        self.jobs = None
        self.share = 1
        self.no_sandbox = False
        self.host_only = False
        self.scratch_mib, self.file_mib, self.output_kib, self.procs = 256, 1024, 1024, 64
        self.mem_mib, self.transcript_mib, self.max_files, self.max_source_kib = 8192, 512, 100, 1024
        self.gradebook_from = None
        self.resume = False
        self.weights_file = ""
        self.split = gradebook.DEFAULT_SPLIT  # --weights C,P
        self.split_given = ""
        self.memcheck = True
        self.lint = True
        self.performance = True
        self.gpus = ""
        self.slice = ""
        self.slurm = False
        self.partition = self.account = ""
        self.gpus_per_task = 1
        self.tasks = None
        self.submit = False
        self.cmake_defs = []
        self.passed_on = []  # the options a Slurm task repeats


def parse(argv):
    o = Options()
    args = list(argv)
    i = 0

    def value(name, check=None, msg=None):
        nonlocal i
        v = args[i + 1] if i + 1 < len(args) else None
        if check is not None and not check(v):
            usage_error(msg)
        i += 2
        return v

    uint_opts = {"--timeout": ("timeout", "--timeout needs a whole number of seconds > 0"),
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
    while i < len(args):
        a = args[i]
        if a in uint_opts:
            attr, msg = uint_opts[a]
            v = value(a, is_uint, msg)
            setattr(o, attr, int(v))
            o.passed_on += [a, v]
        elif a == "--out":
            o.out = value(a, lambda v: v is not None, "--out needs a folder")
        elif a == "--sanitize":
            o.sanitize = True
            o.passed_on.append(a)
            i += 1
        elif a == "--seed":
            v = value(a, lambda v: v is not None and re.fullmatch(r"[0-9]{1,10}", v) and int(v) <= 4294967295,
                      "--seed needs a whole number from 0 to 4294967295")
            o.seed = int(v)
        elif a == "--hidden-shapes":
            v = value(a, lambda v: v is not None and os.path.isfile(v) and os.access(v, os.R_OK),
                      "--hidden-shapes needs a readable file")
            o.hidden = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(v))), os.path.basename(v))
            o.passed_on += [a, o.hidden]
        elif a == "--arch":
            o.arch = value(a, lambda v: bool(v), "--arch needs a list, e.g. 90 or 80;90")
            o.passed_on += [a, o.arch]
        elif a in ("--no-sandbox", "--host-only"):
            setattr(o, a[2:].replace("-", "_"), True)
            o.passed_on.append(a)
            i += 1
        elif a == "--gradebook-from":
            o.gradebook_from = value(a, lambda v: bool(v), "--gradebook-from needs a folder")
        elif a == "--resume":
            o.resume = True
            i += 1
        elif a == "--weights":
            v = value(a, lambda v: v is not None, "--weights needs C,P (e.g. 80,20) or a readable file (lines 'NN_name weight')")
            if os.path.isfile(v) and os.access(v, os.R_OK):
                o.weights_file = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(v))), os.path.basename(v))
            elif "," in v or re.fullmatch(r"[0-9 ]*", v):
                try:
                    o.split = gradebook.parse_split(v)
                except gradebook.WeightsError as e:
                    usage_error(str(e))
                o.split_given = "%d,%d" % o.split
            else:
                usage_error("--weights needs C,P (e.g. 80,20) or a readable file (lines 'NN_name weight'); '%s' is neither" % visible(v))
        elif a in ("--no-memcheck", "--no-performance", "--no-lint"):
            setattr(o, a[5:], False)
            o.passed_on.append(a)
            i += 1
        elif a == "--gpus":
            o.gpus = value(a, lambda v: v is not None and (v == "all" or re.fullmatch(r"[0-9]+(,[0-9]+)*", v)),
                           "--gpus needs 'all' or GPU indexes like 0,1,3")
        elif a == "--slice":
            def ok(v):
                m = re.fullmatch(r"([0-9]+)/([0-9]+)", v or "")
                return m and int(m.group(2)) > 0 and int(m.group(1)) < int(m.group(2))
            o.slice = value(a, ok, "--slice needs K/N with 0 <= K < N")
        elif a == "--slurm":
            o.slurm = True
            i += 1
        elif a == "--partition":
            o.partition = value(a, lambda v: bool(v), "--partition needs a name")
        elif a == "--account":
            o.account = value(a, lambda v: bool(v), "--account needs a name")
        elif a == "--gpus-per-task":
            o.gpus_per_task = int(value(a, lambda v: v is not None and re.fullmatch(r"[0-9]+", v),
                                        "--gpus-per-task needs a number (0: ask Slurm for no GPU)"))
        elif a == "--tasks":
            o.tasks = int(value(a, is_uint, "--tasks needs a number > 0"))
        elif a == "--submit":
            o.submit = True
            i += 1
        elif a.startswith("-D") and len(a) > 2:
            o.cmake_defs.append(a)
            o.passed_on.append(a)
            i += 1
        elif a in ("-h", "--help"):
            raise Exit(0, __doc__.rstrip("\n"))
        elif a == "--":
            rest = args[i + 1:]
            if len(rest) > 1:
                usage_error("one SUBMISSIONS folder, not %d" % len(rest))
            if rest:
                o.submissions = rest[0]
            break
        elif a.startswith("-"):
            usage_error("unknown option '%s'" % visible(a))
        else:
            if o.submissions is not None:
                usage_error("one SUBMISSIONS folder, not two ('%s', '%s')" % (visible(o.submissions), visible(a)))
            o.submissions = a
            i += 1
    if not o.slurm:
        if o.partition or o.account or o.tasks is not None or o.submit or o.gpus_per_task != 1:
            usage_error("--partition, --account, --gpus-per-task, --tasks and --submit go with --slurm")
    else:
        if o.slice or o.gpus:
            usage_error("--slurm chooses --slice and --gpus itself")
        if o.resume:
            usage_error("--slurm always resumes (its tasks grade only cells without a result): leave out --resume")
    if o.slice and not o.resume:
        usage_error("--slice grades a slice of a plan made before (by --slurm): add --resume")
    return o


def hms(t):
    t = int(t)
    return "%dh%02dm" % (t // 3600, t % 3600 // 60) if t >= 3600 else "%dm%02ds" % (t // 60, t % 60)


def now_utc():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def signal_name(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return "signal %d" % n


class Cell:
    def __init__(self, number, dir, planned):
        self.number, self.dir, self.planned = number, dir, planned
        self.lesson = planned.lesson.decode("utf-8", "surrogateescape")
        self.label = "%s / %s" % (planned.shown_student, planned.shown_lesson)
        self.compiled = threading.Event()  # set when its build ended (compiled file written)
        self.todo = False
        self.static = (None, "static facts not read")  # (facts, why not): set while it compiles
        self.lint = None  # the lint's finding, "not applicable (...)" or None (clean, or not run): set while it compiles


class Grader:
    def __init__(self, o, repo):
        self.o, self.repo = o, repo
        self.lessons = {}
        self.weights = {}
        self.as_root = os.geteuid() == 0
        self.slot = sandbox.Slot()
        self.gpus = []              # [(index, uuid, minor)] with --gpus
        self.cells = []             # every planned cell (Cell)
        self.lock = threading.Lock()
        self.done = 0
        self.ntodo = 0
        self.stop_reasons = {}
        self.compile_stopped = False
        self.slice_k = self.slice_n = None
        self.out = None

    # ------------------------------------------------------------ dying
    def die(self, code, message):
        """Says why nothing (more) is graded and exits; a Slurm task also leaves the reason where the
        gradebook job finds it."""
        print("%s: %s" % (ME, message), file=sys.stderr, flush=True)
        if self.o.slice and self.out and os.path.isfile(os.path.join(self.out, "cells", ".made-by-grade.sh")):
            try:
                with open(os.path.join(self.out, "cells", ".slice-%s.why" % self.o.slice.split("/")[0]), "w") as f:
                    f.write("task %s on %s: %s\n" % (self.o.slice, socket.gethostname(), message))
            except OSError:
                pass
        run.kill_everything()
        sys.stdout.flush()
        os._exit(code)

    def on_signal(self, signum, frame):
        run.kill_everything()
        if self.as_root and not self.o.no_sandbox:
            table = run.process_table()
            run.kill_pids([p for p, (_, uid, _) in table.items() if self.slot.base < uid < self.slot.base + sandbox.SLOT_SIZE])
        print("%s: interrupted; the cells graded so far are kept: grade the rest with the same command and --resume" % ME,
              file=sys.stderr, flush=True)
        os._exit(130)

    # ------------------------------------------------------------ the whole run
    def main(self):
        o = self.o
        try:
            self.lessons = course_lessons(self.repo)
        except LessonListError as e:
            raise Exit(1, "%s: %s" % (ME, e))
        if o.weights_file:
            try:
                self.weights = gradebook.read_weights(o.weights_file, self.lessons)
            except gradebook.WeightsError as e:
                usage_error(str(e))
        self.out = os.path.abspath(o.out or os.path.join(self.repo, "build-grade"))
        if o.gradebook_from is not None:
            if o.submissions is not None:
                usage_error("--gradebook-from grades nothing: give no SUBMISSIONS")
            if not os.path.isdir(o.gradebook_from):
                usage_error("--gradebook-from '%s' is not a folder" % visible(o.gradebook_from))
            return self.write_gradebook(o.gradebook_from)
        if o.hidden:
            bad = check_hidden_shapes(o.hidden, self.lessons)
            if bad:
                usage_error("--hidden-shapes %s, %s" % (o.hidden, bad))
        if o.submissions is None:
            usage_error("no SUBMISSIONS folder given")
        if not os.path.isdir(o.submissions):
            usage_error("SUBMISSIONS '%s' is not a folder" % visible(o.submissions))
        self.submissions = os.path.realpath(o.submissions)
        self.check_gpu()
        self.check_sandbox()
        self.make_plan()
        if o.slurm:
            return self.write_slurm()
        return self.grade()

    def write_gradebook(self, cells):
        status, md, err = gradebook.write_gradebook(cells, self.out, self.lessons, self.weights, ME, self.o.split)
        sys.stdout.write(md)
        if err:
            print(err, file=sys.stderr)
        return status

    # ------------------------------------------------------------ a GPU and a sandbox, before anything is built
    def check_gpu(self):
        o = self.o
        if not o.host_only and not o.slurm:
            if shutil.which("nvidia-smi") is None:
                self.die(3, "no usable GPU: nvidia-smi not found; grading runs the GPU checks, so run it on a machine with an NVIDIA GPU (nothing graded)")
            ok, first = gpus_.first_line_of_list()
            if not ok:
                self.die(3, "no usable GPU: nvidia-smi -L says '%s'; grading runs the GPU checks, so run it on a machine with an NVIDIA GPU (nothing graded)" % visible(first))
        if o.gpus:
            listed = gpus_.listed()
            if listed is None:
                self.die(3, "--gpus: nvidia-smi cannot list the GPUs (nothing graded)")
            try:
                self.gpus = gpus_.choose(o.gpus, listed, os.environ.get("CUDA_VISIBLE_DEVICES", ""))
            except ValueError as e:
                usage_error(str(e))

    def check_sandbox(self):
        o = self.o
        if o.share > 1 and (not self.as_root or o.no_sandbox):
            usage_error("--share needs root and the sandbox: cells that share a GPU are told apart by their own user ids")
        if self.as_root and not o.no_sandbox and not self.slot.take():
            self.die(1, "ten grade.sh runs are already going on this machine; wait for one to end")
        self.sandbox_version = "none"
        if not o.no_sandbox and not o.slurm:
            if shutil.which("bwrap") is None:
                self.die(3, "no sandbox: bubblewrap (bwrap) not found; install it (Debian/Ubuntu: apt install bubblewrap), or grade without one with --no-sandbox (nothing graded)")
            if self.as_root and shutil.which("setpriv") is None:
                self.die(3, "no sandbox: setpriv (util-linux) not found, needed to run cells as users of their own (nothing graded)")
            pre = ["setpriv", "--reuid=%d" % self.slot.base, "--regid=%d" % self.slot.base, "--clear-groups"] if self.as_root else []
            try:
                p = subprocess.run(pre + ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc",
                                          "--dev", "/dev", "true"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
                why = (p.stdout + p.stderr).decode("utf-8", "replace")
                rc = p.returncode
            except (OSError, subprocess.TimeoutExpired) as e:
                rc, why = 1, str(e)
            if rc != 0:
                self.die(3, "no sandbox: bubblewrap cannot create its namespaces here (%s); user namespaces may be off (sysctl kernel.unprivileged_userns_clone, AppArmor, a container), or grade without one with --no-sandbox (nothing graded)"
                         % visible((why.splitlines() or [""])[0]))
            v = subprocess.run(["bwrap", "--version"], capture_output=True, stdin=subprocess.DEVNULL)
            self.sandbox_version = (v.stdout.decode("utf-8", "replace").splitlines() or ["bwrap"])[0]
        if not o.slurm:
            for tool in ("cmake", "prlimit"):
                if shutil.which(tool) is None:
                    self.die(1, "'%s' not found" % tool)
            if o.sanitize and shutil.which("compute-sanitizer") is None:
                self.die(1, "--sanitize needs compute-sanitizer (part of the CUDA toolkit) on PATH")
        if o.jobs is None:
            o.jobs = max(1, (os.cpu_count() or 2) // 2)

    # ------------------------------------------------------------ the plan
    def options_line(self):
        o = self.o
        hidden = ""
        if o.hidden:
            with open(o.hidden, "rb") as f:
                hidden = "%08x" % zlib.crc32(f.read())
        return ("submissions=%s host_only=%d sanitize=%d timeout=%d sanitize_timeout=%d no_sandbox=%d hidden=%s "
                "mem_mib=%d transcript_mib=%d max_files=%d max_source_kib=%d memcheck=%d performance=%d%s"
                % (visible(self.submissions), o.host_only, o.sanitize, o.timeout, o.sanitize_timeout, o.no_sandbox, hidden,
                   o.mem_mib, o.transcript_mib, o.max_files, o.max_source_kib, o.memcheck, o.performance,
                   "" if o.lint else " lint=0"))

    def make_plan(self):
        """Every cell gets a folder, numbered in the order of the students' and their entries' names,
        with identity.txt; the same SUBMISSIONS always gives the same numbers, so that --resume (and
        a Slurm task) finds its cells again. The seed and the options that change a grade are kept in
        the cells folder."""
        o = self.o
        self.cells_dir = cells_dir = os.path.join(self.out, "cells")
        marker = os.path.join(cells_dir, ".made-by-grade.sh")
        if os.path.lexists(cells_dir) and not os.path.isfile(marker):
            raise Exit(2, "%s: %s exists and was not made by %s; give another --out" % (ME, visible(cells_dir), ME))
        if (self.out + "/").startswith(self.submissions + "/"):
            usage_error("--out must not be inside SUBMISSIONS (a sandbox would see it)")
        if (self.submissions + "/").startswith(self.out + "/"):
            usage_error("SUBMISSIONS must not be inside --out")
        options = self.options_line()
        if o.resume or (o.slurm and os.path.isfile(marker)):
            if not os.path.isfile(marker):
                usage_error("--resume: nothing to resume in %s (no cells folder made by %s)" % (visible(self.out), ME))
            try:
                with open(os.path.join(cells_dir, "seed")) as f:
                    stored = int(f.read().strip())
            except (OSError, ValueError):
                usage_error("--resume: %s/seed is missing; grade into a new --out" % visible(cells_dir))
            if o.seed is not None and o.seed != stored:
                usage_error("--resume: this gradebook was graded with --seed %d, not %d" % (stored, o.seed))
            o.seed = stored
            try:
                with open(os.path.join(cells_dir, "options")) as f:
                    before = f.read().strip()
            except OSError:
                before = ""
            if before != options:
                usage_error("--resume: the options that change a grade differ from the first run's (%s); resume with the same ones, or grade into a new --out" % before)
            self.fresh = False
        else:
            for name in ("cells", "gradebook.csv", "gradebook.md", "scores.csv", "feedback", "course-view", "progress.log"):
                p = os.path.join(self.out, name)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p)
                elif os.path.lexists(p):
                    os.unlink(p)
            os.makedirs(cells_dir)
            open(marker, "w").close()
            if o.seed is None:
                o.seed = int.from_bytes(os.urandom(4), "little")
            with open(os.path.join(cells_dir, "seed"), "w") as f:
                f.write("%d\n" % o.seed)
            with open(os.path.join(cells_dir, "options"), "w") as f:
                f.write(options + "\n")
            self.fresh = True
        os.chmod(self.out, 0o755)
        os.chmod(cells_dir, 0o755)
        if not o.slurm and not o.no_sandbox and self.as_root:
            p = subprocess.run(["setpriv", "--reuid=%d" % self.slot.base, "--regid=%d" % self.slot.base, "--clear-groups",
                                "test", "-x", cells_dir], stdin=subprocess.DEVNULL)
            if p.returncode != 0:
                self.die(3, "no sandbox: a cell could not reach %s (cells run as users of their own); open every folder above it to other users (chmod o+x), or give another --out (nothing graded)" % visible(self.out))
        if o.slice:
            k, n = o.slice.split("/")
            self.slice_k, self.slice_n = int(k), int(n)
            try:
                os.unlink(os.path.join(cells_dir, ".slice-%d.why" % self.slice_k))
            except FileNotFoundError:
                pass
        try:
            planned = plan.scan(self.submissions, self.lessons,
                                plan.Limits(o.max_files, o.max_source_kib * 1024))
        except OSError as e:
            usage_error("SUBMISSIONS '%s' cannot be read (%s)" % (visible(self.submissions), e.strerror))
        nstudents = len({p.student_index for p in planned})
        if o.slurm:
            if o.tasks is None:
                o.tasks = max(1, (nstudents + 19) // 20)
            self.slice_n = o.tasks
        if len(planned) >= sandbox.SLOT_SIZE:
            usage_error("SUBMISSIONS makes %d cells, more than one run grades (%d: cell user ids stay in their slot's range); grade the class in parts"
                        % (len(planned), sandbox.SLOT_SIZE - 1))
        self.nstudents = nstudents
        self.nskipped = 0
        for number, pc in enumerate(planned, 1):
            d = os.path.join(cells_dir, "%04d" % number)
            cell = Cell(number, d, pc)
            self.cells.append(cell)
            ident = gradebook.identity_text(pc.shown_student, pc.shown_lesson)
            idpath = os.path.join(d, "identity.txt")
            if os.path.isfile(idpath):
                with open(idpath, encoding="utf-8", errors="surrogateescape") as f:
                    have = "".join(f.read().splitlines(True)[:2])
                if have != ident:
                    was = "/".join(l.partition("=")[2] for l in have.splitlines())
                    usage_error("--resume: SUBMISSIONS changed since the first run (cell %04d was '%s', now '%s'); grade into a new --out"
                                % (number, was, cell.label.replace(" / ", "/")))
            else:
                sl = pc.student_index % self.slice_n if self.slice_n else None
                os.makedirs(d, exist_ok=True)
                gradebook.write_atomic(idpath, gradebook.identity_text(pc.shown_student, pc.shown_lesson, sl))
            if self.slice_k is not None and pc.student_index % self.slice_n != self.slice_k:
                continue  # another task's
            if o.slurm:  # the plan only: the tasks grade (rows that need no grading are written now)
                if pc.finding:
                    gradebook.finish_cell(d, "-", finding=pc.finding)
                continue
            rpath = os.path.join(d, "result.txt")
            if os.path.isfile(rpath) and not gradebook.read_record(rpath).get("finding", "").startswith("not graded: "):
                self.nskipped += 1
                continue  # graded before (--resume)
            if pc.finding:
                gradebook.finish_cell(d, "-", finding=pc.finding)
                continue
            for name in ("box", "result.txt"):
                p = os.path.join(d, name)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p)
                elif os.path.lexists(p):
                    os.unlink(p)
            cell.todo = True
        if not self.cells:
            raise Exit(2, "%s: '%s' holds no student folders" % (ME, visible(self.submissions)))
        if o.slurm and self.slice_n > nstudents:
            o.tasks = self.slice_n = max(1, nstudents)

    def load_rubrics(self):
        """Each lesson's rubric (lessons/NN_name/rubric.json, the course's: trusted), or the reason
        there is none; and cuobjdump, for the static facts."""
        self.rubrics, self.no_rubric = {}, {}
        for lesson in sorted({c.lesson for c in self.cells}):
            path = os.path.join(self.repo, "lessons", lesson, "rubric.json")
            if not os.path.isfile(path):
                self.no_rubric[lesson] = "no rubric for %s" % lesson
                continue
            try:
                self.rubrics[lesson] = evidence.load_rubric(path)
            except evidence.RubricError as e:
                self.no_rubric[lesson] = "grader error: %s" % e
        try:
            self.cuobjdump = static_evidence.find_cuobjdump()
            self.no_cuobjdump = ""
        except static_evidence.EvidenceError as e:
            self.cuobjdump, self.no_cuobjdump = None, str(e)

    def write_slurm(self):
        o = self.o
        sdir = os.path.join(self.out, "slurm")
        grade_sh = os.path.join(self.repo, "scripts", "grade.sh")
        task_args = [self.submissions, "--out", self.out, "--resume", "--seed", str(o.seed)] + o.passed_on
        if o.gpus_per_task > 1:
            task_args += ["--gpus", "all"]
        slurm.write(sdir, grade_sh, task_args, o.tasks, o.gpus_per_task, o.partition, o.account, self.cells_dir,
                    self.out, o.weights_file, o.split_given)
        info = "Inputs drawn with --seed %d%s.\n" % (o.seed, ", with hidden shapes" if o.hidden else "")
        if o.host_only:
            info += "Host test cases only (--host-only): no GPU check was run.\n"
        info += "Graded on a Slurm cluster: %d tasks; their logs are in %s.\n" % (o.tasks, sdir)
        with open(os.path.join(self.cells_dir, "run-info.txt"), "a") as f:
            f.write(info)
        print("%s: %d cells of %d students, in a Slurm job array of %d task(s): wrote %s/grade-array.sbatch, %s/gradebook.sbatch and %s/submit.sh"
              % (ME, len(self.cells), self.nstudents, o.tasks, sdir, sdir, sdir), flush=True)
        if o.submit:
            if shutil.which("sbatch") is None:
                self.die(1, "--submit: sbatch not found (submit later with: bash %s/submit.sh)" % sdir)
            if subprocess.run(["bash", os.path.join(sdir, "submit.sh")]).returncode != 0:
                self.die(1, "--submit: sbatch refused the jobs (see above)")
        else:
            print("%s: submit them with: bash %s/submit.sh" % (ME, sdir))
        return 0

    # ------------------------------------------------------------ grading
    def info(self, line):
        with open(os.path.join(self.cells_dir, "run-info.txt"), "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def grade(self):
        o = self.o
        todo = [c for c in self.cells if c.todo]
        more = ", %d graded before" % self.nskipped if self.nskipped else ""
        print("%s: %d cells (%d to build%s) from %s; everything goes to %s"
              % (ME, len(self.cells), len(todo), more, visible(self.submissions), visible(self.out)), flush=True)
        if not self.fresh:
            self.info("Resumed on %s%s: %d cells graded in that run." % (
                socket.gethostname(), " as Slurm task %s" % o.slice if o.slice else "", len(todo)))
        if o.no_sandbox:
            self.info("Graded WITHOUT a sandbox (--no-sandbox): every submission could read and write what the instructor can.")
        else:
            self.info("Graded in a sandbox (%s); limits: %d s, %d processes, files %d MiB, scratch %d MiB, output %d KiB."
                      % (self.sandbox_version, o.timeout, o.procs, o.file_mib, o.scratch_mib, o.output_kib))
        if self.fresh:
            self.info("Inputs drawn with --seed %d%s." % (o.seed, ", with hidden shapes" if o.hidden else ""))
            if o.host_only:
                self.info("Host test cases only (--host-only): no GPU check was run.")
        if self.as_root and not o.no_sandbox:
            self.info("Cells ran as user ids %d to %d." % (self.slot.base + 1, self.slot.base + len(self.cells)))
        if not todo:
            print("%s: no cell left to grade" % ME, flush=True)
            if o.slice:
                return 0
            return self.write_gradebook(self.cells_dir)
        signal.signal(signal.SIGINT, self.on_signal)
        signal.signal(signal.SIGTERM, self.on_signal)
        self.load_rubrics()
        if o.host_only:
            self.info("Performance evidence: not measured (--host-only runs no GPU check).")
        elif not o.performance:
            self.info("Performance evidence: off (--no-performance): correctness alone.")
        else:
            self.info("Performance evidence: each exercise's speed beside the course solution's (timed in the judge's verdict) "
                      "and the compiled kernels' static facts%s, judged by each lesson's rubric.json; score = %d%% correctness "
                      "+ %d%% x the share of performance rules met, for a cell that passed."
                      % (" (cuobjdump not found: static facts not measured)" if self.cuobjdump is None else "", o.split[0], o.split[1]))
        if not o.lint:
            self.info("Lint: off (--no-lint).")
        elif shutil.which("g++") is None:
            self.info("Lint: not applicable to any cell: no g++ on this machine (grading/ub_lint.py needs GCC).")
        else:
            self.info("Lint: each cell's device code compiled as host C++ by g++ -O3 in its sandbox (grading/ub_lint.py); "
                      "undefined behaviour GCC reports there fails the cell; code it cannot render is not applicable "
                      "(cells/NNNN/lint.log says why).")
        if o.host_only or not o.memcheck:
            self.info("Memcheck subset: off%s." % (" (--host-only)" if o.host_only else " (--no-memcheck)"))
        elif o.sanitize:
            self.info("Memcheck subset: not run (--sanitize runs memcheck over every GPU check instead).")
        else:
            self.info("Memcheck subset: each cell that passed its checks ran them again on their small shapes (--small) "
                      "under compute-sanitizer memcheck, in its sandbox; an error fails the cell.")
        self.build_course(todo)
        self.info("Memory: each step of a cell (compile, run, judge, sanitizer) stopped above %d MiB resident (all its processes, read every 0.2 s); "
                  "RLIMIT_DATA of %d MiB on every compile%s. Transcripts up to %d MiB judged; student folders up to %d entries, main.cu up to %d KiB."
                  % (o.mem_mib, o.mem_mib, ", run and judge" if self.data_limit_runs else
                     " (not on runs: the course's own check failed under it here)", o.transcript_mib, o.max_files, o.max_source_kib))
        self.setup_sandbox()
        self.grade_cells(todo)
        if o.slice:
            print("%s: task %s done: %d cells graded" % (ME, o.slice, len(todo)))
            return 0
        status, md, err = gradebook.write_gradebook(self.cells_dir, self.out, self.lessons, self.weights, ME, o.split)
        print()
        sys.stdout.write(md)
        print()
        if err:
            print(err, file=sys.stderr)
        print("%s: gradebook in %s/gradebook.csv and %s/gradebook.md; scores per student in %s/scores.csv, feedback in %s/feedback/"
              % (ME, self.out, self.out, self.out, self.out))
        return status

    def tail(self, path, n=20):
        try:
            with open(path, "rb") as f:
                lines = f.read()[-65536:].decode("utf-8", "replace").splitlines()
            sys.stderr.write("\n".join(lines[-n:]) + "\n")
        except OSError:
            pass

    def build_course(self, todo):
        """common/ and every lesson's check built from the course's own main.cu (the judges), outside
        any sandbox, before any submission is looked at; the judges build while the first cells
        compile. Then the two libraries a cell links and the course view."""
        o = self.o
        self.config = ["-DCMAKE_BUILD_TYPE=Release"]
        if shutil.which("ninja"):
            self.config += ["-G", "Ninja"]
        if o.arch:
            self.config.append("-DCMAKE_CUDA_ARCHITECTURES=" + o.arch)
        self.config += o.cmake_defs
        self.work = self.out if self.slice_k is None else os.path.join(self.out, "slice-%d" % self.slice_k)
        self.common = common = os.path.join(self.work, "common")
        log = common + ".log"
        self.t_common = time.monotonic()
        print("%s: building the course and its judges once (log: %s)" % (ME, log), flush=True)
        os.makedirs(self.work, exist_ok=True)
        ok = run.wait_logged(run.spawn_logged(["cmake", "-S", self.repo, "-B", common] + self.config, log)) == 0
        ok = ok and run.wait_logged(run.spawn_logged(["cmake", "--build", common, "--target", "course_common", "course_grading",
                                                    "course_test_main", "common_check"], log, append=True)) == 0
        if not ok:
            self.tail(log)
            self.die(1, "could not build the course's common/ (see %s); nothing graded" % log)
        # RLIMIT_DATA (a hard stop beside the watchdog on resident memory) for runs and judges only
        # where the course's own check passes under it: the CUDA runtime of some drivers reserves
        # large private mappings at start (RLIMIT_AS always breaks it). Compiles always get it.
        env = dict(os.environ, COURSE_REQUIRE_GPU="0" if o.host_only else "1")
        check = [os.path.join(common, "common_check"), "--host" if o.host_only else "--gpu"]
        p = subprocess.run(["prlimit", "--data=%d" % (o.mem_mib << 20), "--"] + check, capture_output=True, env=env,
                           stdin=subprocess.DEVNULL)
        self.data_limit_runs = p.returncode == 0
        if not o.host_only and not self.data_limit_runs:
            p = subprocess.run(check, capture_output=True, env=env, stdin=subprocess.DEVNULL)
            if p.returncode != 0:
                text = (p.stdout + p.stderr).decode("utf-8", "replace")
                m = re.search(r"COURSE_REQUIRE_GPU is set but (?:no usable CUDA GPU: )?(.*)", text)
                if m:
                    self.die(3, "no usable GPU: nvidia-smi lists one, but the CUDA runtime says %s (nothing graded)" % visible(m.group(1).strip()))
                sys.stderr.write("\n".join(text.splitlines()[-5:]) + "\n")
                self.die(1, "the check of common/ failed on this GPU (exit %d); nothing graded" % p.returncode)
        # (after the GPU is known to work: without one, that is what the instructor must hear)
        if o.memcheck and not o.host_only and not o.sanitize and shutil.which("compute-sanitizer") is None:
            self.die(1, "the memcheck subset needs compute-sanitizer (part of the CUDA toolkit) on PATH; "
                        "or grade without it with --no-memcheck (nothing graded)")
        targets = ["course_common", "course_grading", "course_test_main", "common_check"] + ["%s_check" % l for l in sorted({c.lesson for c in todo})]
        self.judges = {}

        def build_judges():
            p = run.spawn_logged(["cmake", "--build", common, "--target"] + targets, log, append=True)
            self.judges["rc"] = run.wait_logged(p)
        self.judges_thread = threading.Thread(target=build_judges, daemon=True)
        self.judges_thread.start()
        self.prebuilt = os.path.join(self.work, "prebuilt")
        os.makedirs(self.prebuilt, exist_ok=True)
        for lib in ("libcourse_common.a", "libcourse_grading.a", "libcourse_test_main.a"):
            shutil.copy(os.path.join(common, lib), self.prebuilt)
        self.view = os.path.join(self.work, "course-view")
        if os.path.isdir(self.view):
            shutil.rmtree(self.view)
        tgz = os.path.join(self.work, "course-view.tar.gz")
        vlog = os.path.join(self.work, "course-view.log")
        ok = run.wait_logged(run.spawn_logged(["cmake", "-DOUT=" + tgz, "-P", os.path.join(self.repo, "scripts", "make_student_pack.cmake")], vlog)) == 0
        if ok:
            os.makedirs(self.view)
            ok = run.wait_logged(run.spawn_logged(["tar", "-xzf", tgz, "-C", self.view, "--strip-components=1"], vlog, append=True)) == 0
        if not ok:
            self.tail(vlog, 1000)
            self.die(1, "could not make the course view for the sandbox (see %s); nothing graded" % vlog)
        os.unlink(tgz)
        for top in (self.view, self.prebuilt):
            for root, dirs, files in os.walk(top):
                os.chmod(root, 0o755)
                for n in files:
                    p = os.path.join(root, n)
                    if not os.path.islink(p):
                        os.chmod(p, os.stat(p).st_mode | 0o444 | (0o111 if os.stat(p).st_mode & 0o100 else 0))

    # ------------------------------------------------------------ the sandbox
    def setup_sandbox(self):
        o = self.o
        ro, links = sandbox.system_dirs()
        self.sbcfg = sandbox.Config(
            no_sandbox=o.no_sandbox, as_root=self.as_root, host_only=o.host_only, file_mib=o.file_mib,
            scratch_mib=o.scratch_mib, procs=o.procs, ro_dirs=ro, links=links,
            dev_nodes=sorted(os.path.join("/dev", n) for n in os.listdir("/dev") if n.startswith("nvidia")),
            hide=sandbox.hide_list([self.repo, self.submissions, self.out, "/root", "/home"]),
            view=self.view, prebuilt=self.prebuilt, extra_ro=sandbox.prefix_dirs(o.cmake_defs),
            hidden=o.hidden, env={v: os.environ[v] for v in sandbox.PASSENV if os.environ.get(v)})
        self.hidden_arg = []
        if o.hidden:
            self.hidden_arg = ["--hidden-shapes", o.hidden if o.no_sandbox else "/hidden-shapes.txt"]
        if getattr(self, "cuobjdump", None):  # (a CUDA toolkit outside PATH: its folder must be seen in the sandbox)
            ro, links = sandbox.system_dirs(paths=[self.cuobjdump])
            self.sbcfg.ro_dirs, self.sbcfg.links = ro, links
        self.sandbox_s = 0.0
        if not o.no_sandbox:  # what the sandbox itself costs: an empty command in it, timed
            times = []
            for k in range(3):
                cmd = sandbox.command(self.sbcfg, "run", self.prebuilt, uid=self.slot.base, nproc_base=self.nproc_base(),
                                      status_fd="{status_fd}") + ["true"]
                log = os.path.join(self.cells_dir, ".sandbox-probe.log")
                step = run.run_step(cmd, log, 60, 65536, status=True)
                if step.rc != 0:
                    with open(log, "rb") as f:
                        why = f.readline(300).decode("utf-8", "replace").strip()
                    self.die(3, "no sandbox: a cell's sandbox cannot start (%s); every folder above --out must be open to other users (chmod o+x), as a cell runs as a user of its own (nothing graded)" % visible(why))
                times.append(step.seconds)
            self.sandbox_s = statistics.median(times)

    def nproc_base(self):
        if self.as_root:
            return 0
        uid = os.getuid()
        return len(run.uid_processes({uid}))

    def cell_uid(self, cell):
        return sandbox.cell_uid(self.slot.base, cell.number) if self.as_root and not self.o.no_sandbox else None

    def boxed(self, cell, name, limit, role, cmd, gpu, fd3=None, cap=None):
        """Runs CMD in the cell's sandbox: DIR/NAME.log (cut at --output-kib, or CAP bytes), DIR/NAME.cut.
        FD3: a descriptor the command gets as its fd 3 (the transcript), and no other."""
        o = self.o
        uid = self.cell_uid(cell)
        if uid is not None:
            run.kill_uid(uid)  # never two runs of one user
        data = o.mem_mib if role == "compile" or (name == "run" and self.data_limit_runs) else 0
        prefix = sandbox.command(self.sbcfg, role, os.path.join(cell.dir, "box"), uid=uid, gpu_uuid=gpu[1] if gpu else "",
                                 gpu_minor=gpu[2] if gpu else "", nproc_base=self.nproc_base(),
                                 status_fd=None if o.no_sandbox else "{status_fd}", data_mib=data)
        full = prefix + cmd
        if fd3 is not None:
            full = run.with_fd3(fd3, full)
        step = run.run_step(full, os.path.join(cell.dir, name + ".log"), limit, cap or o.output_kib * 1024,
                            mem_bytes=o.mem_mib << 20, uid=uid, count_procs=not o.no_sandbox,
                            pass_fds=() if fd3 is None else (fd3,),
                            status=not o.no_sandbox, nice=10 if role == "compile" else 0)
        step.dir = cell.dir
        with open(os.path.join(cell.dir, name + ".cut"), "w") as f:
            f.write("%d\n" % step.cut)
        if uid is not None:
            run.kill_uid(uid)
        return step

    # ------------------------------------------------------------ compile every cell (sandboxed)
    def build_cell(self, cell):
        o = self.o
        t0 = time.monotonic()
        compiled, why = "no", ""
        try:
            box = compile_.prepare_box(cell.dir, self.submissions, cell.planned.source, o.max_source_kib * 1024,
                                       self.cell_uid(cell))
            step = self.boxed(cell, "build", compile_.BUILD_LIMIT_S, "compile",
                              compile_.compile_command(self.view, box, cell.lesson, self.prebuilt, self.config), None)
            if step.rc == 0 and os.access(os.path.join(box, "build", cell.lesson + "_check"), os.X_OK):
                compiled = "yes"
            else:
                why = compile_.finding(step, os.path.join(cell.dir, "build.log"), box, o.output_kib, o.mem_mib)
            timing = "compile_s=%.2f\ncompile_mib=%d\n" % (time.monotonic() - t0, step.peak_rss >> 20)
            if compiled == "yes" and o.lint:
                t1 = time.monotonic()
                try:
                    cell.lint = self.run_lint(cell, box)
                except Exception as e:  # a grader error: the lint is not applicable, the cell is graded
                    cell.lint = "not applicable (grader error: %s)" % visible(str(e))[:200]
                timing += "lint_s=%.2f\n" % (time.monotonic() - t1)
            if compiled == "yes" and o.performance and not o.host_only and self.rubrics.get(cell.lesson, {}).get("rules"):
                t1 = time.monotonic()
                try:
                    cell.static = self.static_facts(cell, os.path.join(box, "build", cell.lesson + "_check"))
                except Exception as e:  # a grader error: the static facts are not measured, the cell is graded
                    cell.static = (None, "static facts not read (grader error: %s)" % visible(str(e))[:200])
                timing += "static_s=%.2f\n" % (time.monotonic() - t1)
        except plan.SourceError as e:
            compiled, why, timing = "-", "%s: not graded" % e, ""
        except compile_.BoxError as e:
            compiled, why, timing = "-", str(e), ""
        with open(os.path.join(cell.dir, "timing.txt"), "w") as f:
            f.write(timing)
        cell.compile_finding, cell.compiled_value = why, compiled
        gradebook.write_atomic(os.path.join(cell.dir, "compiled"), compiled + "\n")
        cell.compiled.set()

    STATIC_LIMIT_S = 60
    STATIC_CAP = 64 << 20
    LINT_LIMIT_S = 90  # ub_lint.py gives g++ 60 s of it

    def run_lint(self, cell, box):
        """The lint's finding for the cell (a string starting "undefined behaviour"), or None (clean),
        or "not applicable (...)": grading/ub_lint.py of the course view runs g++ on the submission in
        the cell's sandbox (GCC reads hostile source), and prints one JSON line last. What the
        submission can shape of it (GCC's words, which quote its names) is quoted as its own."""
        tool = os.path.join(self.view, "grading", "ub_lint.py")
        step = self.boxed(cell, "lint", self.LINT_LIMIT_S, "run",
                          ["python3", tool, "--json", "--timeout", "60", "--common", os.path.join(self.view, "common"),
                           os.path.join(box, "src", "main.cu")], None, cap=1 << 20)
        if not step.started or step.timed_out or step.mem_killed:
            return "not applicable (the lint %s)" % ("could not start in the sandbox" if not step.started else
                                                      "timed out" if step.timed_out else "went over the memory limit")
        fd = os.open(os.path.join(cell.dir, "lint.log"), os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            return lint_finding(f.read(1 << 20).decode("utf-8", "replace"), step.rc)

    def static_facts(self, cell, binary):
        """(facts, None) of the cell's compiled runner, read by cuobjdump in the cell's sandbox (it
        reads a file the submission's compile made), each listing cut at 64 MiB and 60 s; or (None,
        why): "short: ..." when the binary could not be read (held against the cell), else not
        measured (no cuobjdump: the grader's machine). The resource usage lists the kernels; then
        only what the lesson's rubric reads: the PTX where a rule reads shuffle masks, and the
        machine code of the kernels a "sass:" rule matches (static_evidence.listings_needed)."""
        if self.cuobjdump is None:
            return None, self.no_cuobjdump
        texts = {}

        def listing(kind, options):
            """cuobjdump OPTIONS BINARY in the sandbox: None and texts[kind] set, or why not."""
            name = "static-" + kind
            step = self.boxed(cell, name, self.STATIC_LIMIT_S, "run", [self.cuobjdump] + options + [binary], None,
                              cap=self.STATIC_CAP)
            log = os.path.join(cell.dir, name + ".log")
            option = options[0]
            if not step.started:
                return "cuobjdump could not start in the sandbox (see %s.log)" % name
            if step.rc == 127:
                return "cuobjdump not found in the sandbox"
            if step.cut > 0:
                return "short: cuobjdump %s printed over %d MiB for the compiled kernels" % (option, self.STATIC_CAP >> 20)
            if step.timed_out:
                return "short: cuobjdump %s took over %d s on the compiled kernels" % (option, self.STATIC_LIMIT_S)
            if step.rc != 0 or step.mem_killed:
                return "short: cuobjdump %s could not read the compiled kernels (exit %d)" % (option, step.rc)
            fd = os.open(log, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as f:
                texts[kind] = f.read(self.STATIC_CAP + 1).decode("utf-8", "replace")
            os.unlink(log)  # (megabytes per cell; the facts are kept in static.json)
            return None

        why = listing("resource", ["--dump-resource-usage"])
        if why is None:
            usage, _ = static_evidence.parse_resource_usage(texts["resource"])
            ptx, sass_kernels = static_evidence.listings_needed(getattr(self, "rubrics", {}).get(getattr(cell, "lesson", None)),
                                                                static_evidence.demangle(usage.keys()))
            if ptx:
                why = listing("ptx", ["-ptx"])
            sass = static_evidence.sass_options(sass_kernels, texts["resource"])
            if why is None and sass:
                why = listing("sass", sass)
        if why is not None:
            return None, why
        facts = static_evidence.facts_from_dumps(texts["resource"], texts.get("sass", ""), texts.get("ptx"))
        gradebook.write_atomic(os.path.join(cell.dir, "static.json"),
                               json.dumps({"arch": facts["arch"], "kernels": facts["kernels"]}, indent=1, sort_keys=True))
        if not facts["kernels"]:
            return None, "short: cuobjdump found no kernel in the compiled runner"
        return facts, None

    def compile_all(self, todo):
        sem = threading.Semaphore(self.o.jobs)
        threads = []

        def one(c):
            try:
                self.build_cell(c)
            except Exception as e:  # a grader error: said in the cell, never a crash of the run
                c.compile_finding, c.compiled_value = "grader error while compiling: %s" % visible(str(e))[:200], "-"
                gradebook.write_atomic(os.path.join(c.dir, "compiled"), "no\n")
                c.compiled.set()
            finally:
                sem.release()
        for c in todo:
            sem.acquire()
            t = threading.Thread(target=one, args=(c,), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join()

    # ------------------------------------------------------------ run and judge every cell
    def progress(self, line):
        """LINE after the count of cells done in this run, the time since grading began and an
        estimate of the time left; on the console and in the progress log."""
        line = visible(line)  # (names are shown escaped already; a judge's or a log's text too)
        with self.lock:
            self.done += 1
            n = self.done
            el = time.time() - self.grade_t0
            left = ", about %s left" % hms(el * (self.ntodo - n) / n) if n < self.ntodo else ""
            print("%s: [%d/%d, %s%s] %s" % (ME, n, self.ntodo, hms(el), left, line), flush=True)
            with open(self.progress_log, "a", encoding="utf-8") as f:
                f.write("%s [%d/%d] %s\n" % (now_utc(), n, self.ntodo, line))

    def run_finding(self, name, step, limit):
        """What ended a sandboxed step, as findings (none when it exited by itself)."""
        o = self.o
        out = []
        if not step.started:
            with open(os.path.join(step.dir, name + ".log"), "rb") as f:
                first = f.readline(300).decode("utf-8", "replace").strip()
            out.append("the sandbox refused to start the %s: %s" % (name, visible(first)))
        elif step.timed_out:
            out.append("%s timed out after %d s" % (name, limit))
        elif step.mem_killed:
            out.append("%s went over the memory limit (%d MiB) and was stopped" % (name, o.mem_mib))
        elif step.rc == 128 + 25:
            out.append("%s killed: a file reached the %d MiB limit" % (name, o.file_mib))
        elif step.rc > 128:
            out.append("%s crashed (%s)" % (name, signal_name(step.rc - 128)))
        if step.rc != 0 and self.log_says(os.path.join(step.dir, name + ".log"), rb"std::bad_alloc|Cannot allocate memory"):
            out.append("the %s reported running out of host memory (the limit is %d MiB)" % (name, o.mem_mib))
        if step.cut > 0:
            out.append("%s output over %d KiB, cut (%d bytes more)" % (name, o.output_kib, step.cut))
        if not o.no_sandbox and step.max_procs >= o.procs - 4:
            out.append("%s hit the process limit (%d processes)" % (name, o.procs))
        return out

    def grade_cell(self, cell, gpu, share):
        """Runs and judges CELL (compiled before), writes its result.txt. Returns a reason when its
        worker must take no more cells (its GPU is not the grader's), else None."""
        o = self.o
        while not cell.compiled.wait(0.5):
            if self.compile_stopped and not cell.compiled.is_set():
                return "the compiling stopped before the cell of %s was built" % cell.label
        if cell.compiled_value != "yes":
            gradebook.finish_cell(cell.dir, cell.compiled_value, finding=cell.compile_finding)
            self.progress("%s: %s" % (cell.label, "does not compile" if cell.compiled_value == "no" else cell.compile_finding))
            return None
        uuid = gpu[1] if gpu else ""
        stop = None
        if share == 1 and not o.host_only:
            busy = gpus_.wait_free(uuid)
            if busy:  # something outside the grader holds the GPU: grade nothing more on it
                return "the GPU%s was in use by another program before the cell of %s (%s)" % (" " + gpu[0] if gpu else "", cell.label, busy)
        box = os.path.join(cell.dir, "box")
        check = os.path.join(box, "build", cell.lesson + "_check")
        mode = ["--host"] if o.host_only else []
        # Without the performance evidence no speed test case runs (runner and judge alike: the
        # judge expects what the runner recorded): grading costs what it did before they existed.
        if not o.performance:
            mode = mode + [SKIP_SPEED]
        findings = []
        # 0. the lint's finding, made while the cell compiled: undefined behaviour no run of the compiled
        # kernel can show. It comes first in the cell's findings (its layer is first), once the run's are known.
        lint = [cell.lint] if cell.lint and cell.lint.startswith("undefined behaviour") else []
        # 1. the runner, sandboxed: records what the submission hands back (fd TRANSCRIPT)
        transcript = os.path.join(cell.dir, "transcript.bin")
        t0 = time.monotonic()
        tfd = os.open(transcript, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            step = self.boxed(cell, "run", o.timeout, "run",
                              [check] + mode + ["--record", "/dev/fd/3", "--seed", str(o.seed)] + self.hidden_arg,
                              gpu, fd3=tfd)
        finally:
            os.close(tfd)
        run_step = step
        t1 = time.monotonic()
        findings += self.run_finding("run", step, o.timeout)
        if share == 1 and not o.host_only:
            busy = gpus_.wait_free(uuid)
            if busy:
                findings.append("left the GPU in use after it ended (%s)" % busy)
                stop = "the GPU was still in use after the cell of %s" % cell.label
        # 2. the judge: the course's own check, outside the sandbox, judging the recorded values
        verdict_path = os.path.join(cell.dir, "verdict.json")
        judge.clear(verdict_path)
        g = None
        tsize = os.path.getsize(transcript)
        judge_peak = 0
        if tsize > o.transcript_mib << 20:
            findings.append("the run recorded %d MiB of values, over the %d MiB the judge reads (--transcript-mib): not judged"
                            % (tsize >> 20, o.transcript_mib))
        else:
            env = dict(os.environ, COURSE_REQUIRE_GPU="0" if o.host_only else "1")
            if uuid:
                env["CUDA_VISIBLE_DEVICES"] = uuid
            cmd = judge.command(os.path.join(self.common, cell.lesson + "_check"), o.host_only, transcript, o.seed,
                                o.hidden, verdict_path, [] if o.performance else [SKIP_SPEED])
            if self.data_limit_runs:
                cmd = ["prlimit", "--data=%d" % (o.mem_mib << 20), "--"] + cmd
            jstep = run.run_step(cmd, os.path.join(cell.dir, "judge.log"), o.timeout + 60, 4 << 20,
                                 mem_bytes=o.mem_mib << 20, env=env, cwd=cell.dir)
            judge_peak = jstep.peak_rss
            try:
                g = judge.read_verdict(verdict_path, cell.lesson, o.seed)
            except judge.VerdictError as e:
                if jstep.mem_killed:
                    why = "went over the memory limit (%d MiB): raise --mem-mib" % o.mem_mib
                elif jstep.timed_out:
                    why = "timed out after %d s" % (o.timeout + 60)
                else:
                    why = "exit %d; %s; see judge.log" % (jstep.rc, e)
                findings.append("the judge did not finish (%s): grader error" % why)
        t2 = time.monotonic()
        try:
            os.unlink(transcript)
        except FileNotFoundError:
            pass
        if g is not None:
            findings += judge.findings(g, run_step.rc, findings)
            if g.passed != g.total and self.log_says(os.path.join(cell.dir, "run.log"), rb"cudaErrorMemoryAllocation|out of memory"):
                findings.append("the run reported that the GPU was out of memory")
        # 3. the sanitizers, sandboxed, over the runner's GPU checks; not after a run stopped at a limit
        san_peak = 0
        if (o.sanitize and not o.host_only and not run_step.timed_out and not run_step.mem_killed
                and run_step.rc != 153 and stop is None):
            found = []
            for tool in ("racecheck", "memcheck"):
                s = self.boxed(cell, tool, o.sanitize_timeout, "run",
                               ["compute-sanitizer", "--tool", tool, "--error-exitcode", "99", check, "--gpu", SKIP_SPEED,
                                "--seed", str(o.seed)] + self.hidden_arg, gpu)
                san_peak = max(san_peak, s.peak_rss)
                found += self.sanitizer_finding(tool, s, os.path.join(cell.dir, tool + ".log"), o.sanitize_timeout)
                if share == 1:
                    busy = gpus_.wait_free(uuid)
                    if busy:
                        found.append("left the GPU in use after %s (%s)" % (tool, busy))
                        stop = "the GPU was still in use after the cell of %s" % cell.label
                        break
            if found:
                if not findings and g is not None and g.passed == g.total:
                    findings.append("passed, " + "; ".join(found))
                else:
                    findings += found
        t3 = time.monotonic()
        # 4. the memcheck subset: the runner's GPU checks on their small shapes under memcheck, sandboxed;
        # only where the cell passed so far (an error cannot fail a failed cell more)
        memcheck_ran = False
        if (o.memcheck and not o.sanitize and not o.host_only and stop is None and not findings and not lint
                and g is not None and g.total > 0 and g.passed == g.total):
            memcheck_ran = True
            s = self.boxed(cell, "memcheck-small", o.sanitize_timeout, "run",
                           ["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "99", check, "--gpu", "--small",
                            "--seed", str(o.seed)] + self.hidden_arg, gpu)
            san_peak = max(san_peak, s.peak_rss)
            findings += self.memcheck_subset_finding(s, os.path.join(cell.dir, "memcheck-small.log"), o.sanitize_timeout)
            if share == 1:
                busy = gpus_.wait_free(uuid)
                if busy:
                    findings.append("left the GPU in use after memcheck (%s)" % busy)
                    stop = "the GPU was still in use after the cell of %s" % cell.label
        t4 = time.monotonic()
        # 5. performance evidence: the verdict's speed evidence and the compiled kernels' static facts,
        # judged by the lesson's rubric; a contract it breaks (a "required" rule) fails correctness
        perf = self.performance(cell, g)
        if perf.get("contracts_broken"):
            broken = "a contract the GPU checks cannot see: " + perf["contracts_broken"][0]
            findings.append(("passed, but " + broken) if not findings and not lint and g is not None and g.passed == g.total else broken)
        findings = lint + findings
        t5 = time.monotonic()
        uid = self.cell_uid(cell)
        if uid is not None and run.uid_processes({uid}):
            findings.append("a process of this cell outlived it")
            stop = "a process of the cell of %s outlived it" % cell.label
        with open(os.path.join(cell.dir, "timing.txt"), "a") as f:
            f.write("run_s=%.2f\njudge_s=%.2f\nsanitize_s=%.2f\nshare=%d\nrun_mib=%d\njudge_mib=%d\nsanitize_mib=%d\n"
                    % (t1 - t0, t2 - t1, t3 - t2, share, run_step.peak_rss >> 20, judge_peak >> 20, san_peak >> 20))
            if memcheck_ran:
                f.write("memcheck_s=%.2f\n" % (t4 - t3))
            f.write("evidence_s=%.2f\n" % (t5 - t4))
            if gpu:
                f.write("gpu=%s\n" % gpu[0])
        finding = shorten("; ".join(findings))
        if g is None:
            gradebook.finish_cell(cell.dir, "yes", "0", "", finding, performance=perf)
            total = "?"
        else:
            gradebook.finish_cell(cell.dir, "yes", str(g.passed), str(g.total), finding, str(g.course_passed), str(g.course_total),
                                  performance=perf)
            total = g.total
        shown = perf["performance"] + (" (" + shorten(perf["short"], 120) + ")" if perf.get("short") else "")
        self.progress("%s: %s of %s test cases passed%s; performance %s" % (cell.label, g.passed if g else 0, total,
                                                                            " \u2014 " + finding if finding else "", shown))
        return stop

    def performance(self, cell, g):
        """The cell's performance: {"performance": "met/judged" | "off" | "not measured", "met",
        "total", "short" (the first shortfall's words), "contracts_broken"}; evidence.json keeps
        every rule's result."""
        o = self.o
        if not o.performance:
            return {"performance": "off"}
        if o.host_only:
            return {"performance": "not measured", "short": ""}
        if cell.lesson not in self.rubrics:
            return {"performance": "not measured", "short": ""}  # (why: run-info.txt and the rubric's folder)
        facts, why = cell.static
        result = evidence.judge(self.rubrics[cell.lesson], g.evidence if g is not None else None, facts, None, facts_problem=why)
        gradebook.write_atomic(os.path.join(cell.dir, "evidence.json"),
                               json.dumps(result, indent=1, sort_keys=True, default=str) + "\n")
        return {"performance": evidence.summary(result), "met": result["met"], "total": result["met"] + result["short"],
                "short": result["first_short"], "contracts_broken": result["contracts_broken"]}

    @staticmethod
    def log_says(path, pattern):
        """Whether a log (text the submission can write: used only to describe, never to grade) matches."""
        try:
            with open(path, "rb") as f:
                data = f.read(4 << 20)
        except OSError:
            return False
        return re.search(pattern, data) is not None

    @staticmethod
    def sanitizer_finding(tool, s, log, limit):
        """The verdict is the tool's exit code (99: it found errors). The count and place are read
        from its log, which the submission could also write to: they are quoted as the log's."""
        if s.timed_out:
            return ["%s timed out after %d s" % (tool, limit)]
        if s.rc != 99:
            return []
        try:
            with open(log, "rb") as f:
                lines = f.read(8 << 20).decode("utf-8", "replace").splitlines()
        except OSError:
            lines = []
        def strip_args(w):  # "void transpose_tiled<(int)32>(const float *, int)" -> "transpose_tiled<(int)32>"
            return static_evidence.short_name(w[5:] if w.startswith("void ") else w)
        if tool == "racecheck":
            where = [re.sub(r"\+0x[0-9a-f]+.*$", "", l.split(" access at ", 1)[1]) for l in lines
                     if "Race reported between" in l and " access at " in l]
            count = [m.group(1) for l in lines for m in [re.search(r"RACECHECK SUMMARY: ([0-9]+) hazards? displayed", l)] if m]
            text = "RACE (racecheck: %s hazards" % (count[-1] if count else "some")
            if where:
                text += ", first in %s" % quote_output(strip_args(where[-1]), 120)
            return [text + ")"]
        where = [re.sub(r"\+0x[0-9a-f]+.*$", "", l[len("=========     at "):]) for l in lines if l.startswith("=========     at ")]
        count = [m.group(1) for l in lines for m in [re.match(r"^========= ERROR SUMMARY: ([0-9]+) errors?", l)] if m]
        what = [l[len("========= "):] for l in lines if re.match(r"^========= [A-Z]", l)
                and "COMPUTE-SANITIZER" not in l and "SUMMARY" not in l]
        text = "MEMCHECK (memcheck: %s errors" % (count[-1] if count else "some")
        if what:
            text += ", first: %s" % quote_output(what[0], 120)
        if where:
            text += " in %s" % quote_output(strip_args(where[0]), 120)
        return [text + ")"]

    def memcheck_subset_finding(self, s, log, limit):
        """The memcheck subset's verdict, from its exit code (99: errors), as --sanitize's memcheck
        says it; the count and place are read from its log (which the submission can also write)."""
        if s.timed_out:
            return ["memcheck on the small shapes timed out after %d s" % limit]
        found = self.sanitizer_finding("memcheck", s, log, limit)
        return [f.replace("MEMCHECK (memcheck: ", "out-of-bounds or invalid memory access (memcheck on the small shapes: ", 1)
                for f in found]

    def grade_cells(self, todo):
        o = self.o
        for c in todo:
            try:
                os.unlink(os.path.join(c.dir, "compiled"))  # (--resume: a build of the stopped run)
            except FileNotFoundError:
                pass
        if o.share > 1 and not o.host_only:  # the cells no longer wait for a free GPU: it must be free first
            for g in (self.gpus or [None]):
                busy = gpus_.wait_free(g[1] if g else "")
                if busy:
                    self.die(3, "the GPU%s is in use by another program (%s); --share needs it free (nothing graded)"
                             % (" " + g[0] if g else "", busy))
        print("%s: compiling %d cells, %d at a time, each in its sandbox; checks start as cells are ready" % (ME, len(todo), o.jobs), flush=True)
        compiler = threading.Thread(target=self.compile_all_then_flag, args=(todo,), daemon=True)
        compiler.start()
        while self.judges_thread.is_alive():
            self.judges_thread.join(0.5)
        if self.judges.get("rc") != 0:
            self.tail(self.common + ".log")
            self.die(1, "could not build the course's checks, the judges (see %s.log); nothing graded" % self.common)
        self.info("The course and its judges were built once, in %.2f s." % (time.monotonic() - self.t_common))
        self.progress_log = os.path.join(self.out, "progress.log" if self.slice_k is None else "progress-slice-%d.log" % self.slice_k)
        self.ntodo = len(todo)
        self.grade_t0 = time.time()
        with open(self.progress_log, "a") as f:
            f.write("%s grading %d cells on %s (log of one line per cell: %s)\n" % (now_utc(), self.ntodo, socket.gethostname(), self.progress_log))
        self.run_workers(todo, o.share)
        if o.share > 1:  # a cell that did not pass everything is graded again, alone on its GPU
            again = []
            for c in todo:
                r = os.path.join(c.dir, "result.txt")
                if not os.path.isfile(r) or getattr(c, "compiled_value", "") != "yes":
                    continue
                rec = gradebook.read_record(r)
                if (gradebook.is_pass("yes", rec.get("passed", ""), rec.get("total", ""), rec.get("finding", ""))
                        and not gradebook.performance_short(rec)):  # (speed measured beside other cells: again, alone)
                    continue
                os.replace(r, os.path.join(c.dir, "result-shared.txt"))
                t = os.path.join(c.dir, "timing.txt")
                with open(t) as f:
                    text = f.read()
                text = re.sub(r"^(run_s|judge_s|sanitize_s|memcheck_s|evidence_s|share|run_mib|judge_mib|sanitize_mib|gpu)=",
                              r"shared_\1=", text, flags=re.M)
                with open(t, "w") as f:
                    f.write(text)
                again.append(c)
            if again and not self.stop_reasons:
                print("%s: %d cell(s) did not pass everything while sharing a GPU: grading each again, alone on its GPU" % (ME, len(again)), flush=True)
                self.ntodo += len(again)
                self.run_workers(again, 1)
        while compiler.is_alive():
            compiler.join(0.5)
        stopped = "; ".join(self.stop_reasons[k] for k in sorted(self.stop_reasons))
        for c in todo:
            if not os.path.isfile(os.path.join(c.dir, "result.txt")):
                gradebook.finish_cell(c.dir, "-", finding="not graded: %s" % (stopped or "no worker took it"))
        self.write_timing(todo)

    def compile_all_then_flag(self, todo):
        try:
            self.compile_all(todo)
        finally:
            self.compile_stopped = True

    def run_workers(self, cells, share):
        """SHARE workers per --gpus GPU (without --gpus, on the GPU(s) the environment gives) take the
        cells in order, each on its worker's GPU."""
        n = max(1, len(self.gpus))
        queue = list(cells)
        qlock = threading.Lock()

        def worker(w):
            gpu = self.gpus[w % len(self.gpus)] if self.gpus else None
            while True:
                with qlock:
                    if not queue:
                        return
                    c = queue.pop(0)
                try:
                    stop = self.grade_cell(c, gpu, share)
                except Exception as e:  # a grader error in one cell: said there, the others go on
                    gradebook.finish_cell(c.dir, "-", finding="grader error: %s" % visible(repr(e))[:300])
                    stop = None
                if stop:
                    self.stop_reasons[w] = stop
                    return
        if n * share == 1:
            worker(0)
            return
        if n > 1:
            print("%s: grading on %d GPUs (%s), %d cell(s) on each at a time" % (ME, n, " ".join(g[0] for g in self.gpus), share), flush=True)
        threads = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(n * share)]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.5)

    def write_timing(self, todo):
        def median_of(key):
            vals = []
            for c in self.cells:
                try:
                    with open(os.path.join(c.dir, "timing.txt")) as f:
                        vals += [float(l.split("=", 1)[1]) for l in f if l.startswith(key + "=")]
                except (OSError, ValueError):
                    pass
            if not vals:
                return "-"
            m = statistics.median(vals)
            return "%.2f" % m
        nrun = 0
        for c in self.cells:
            try:
                with open(os.path.join(c.dir, "timing.txt")) as f:
                    nrun += sum(1 for l in f if l.startswith("run_s="))
            except OSError:
                pass
        t = ("Time per cell (median of %d cells run, --share %d): compile %s s, run %s s, judge %s s"
             % (nrun, self.o.share, median_of("compile_s"), median_of("run_s"), median_of("judge_s")))
        if self.o.memcheck and not self.o.host_only and not self.o.sanitize:
            t += ", memcheck subset %s s (of the cells it ran on)" % median_of("memcheck_s")
        if self.o.performance and not self.o.host_only:
            t += ", static facts %s s (while compiling), evidence %s s" % (median_of("static_s"), median_of("evidence_s"))
        if not self.o.no_sandbox:
            t += "; an empty sandbox starts in %.2f s" % self.sandbox_s
        t += (". Resident memory per cell (median, MiB; read every 0.2 s): compile %s, run %s, judge %s"
              % tuple(m if m == "-" else "%.0f" % float(m) for m in (median_of("compile_mib"), median_of("run_mib"), median_of("judge_mib"))))
        self.info(t + ".")


def main(argv=None):
    repo = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    os.environ["LC_ALL"] = "C"
    try:
        o = parse(sys.argv[1:] if argv is None else argv)
        status = Grader(o, repo).main()
    except Exit as e:
        if e.message:
            print(e.message, file=sys.stdout if e.code == 0 else sys.stderr)
        status = e.code
    sys.stdout.flush()
    sys.stderr.flush()
    return status
