"""The grader's run as a whole: the lessons and weights, --gradebook-from, the checks before
anything is built (preflight), the plan (runfolder), then either the Slurm job array or the
grading itself (the course's build, the sandbox, the cells) and the gradebook."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from types import FrameType

from . import box as box_
from . import cell_template, cellrecord, course_build, gradebook, outdir, preflight, run, runfolder, sandbox, scheduler, similarity, slurm
from .cell_evidence import Rubrics, load_rubrics
from .context import Grading
from .exits import ME, Exit, Stop, usage_error
from .lessons import LessonListError, check_hidden_shapes, course_lessons
from .names import visible
from .options import Options
from .runfolder import RunFolder


def write_similarity(cells: str, out: str, repo: str) -> tuple[bool, str]:
    """OUT/similarity.csv (pairs of students whose exercise code is alike; it changes no grade) from
    the cells of CELLS: whether it was written, and what to say of it."""
    try:
        n = similarity.write(cells, out, repo)
    except Exception as e:  # a grader error: said, and the gradebook stands
        return False, "%s: similarity.csv not written (grader error: %s)" % (ME, visible(str(e))[:200])
    return True, "%s: %d pair(s) of students with alike exercise code (score >= %.2f) in %s/similarity.csv" % (
        ME, n, similarity.THRESHOLD, visible(out))


def make_gradebook(o: Options, cells: str, out: str, lessons: dict, weights: dict) -> tuple[int, str, str | None]:
    """gradebook.write_gradebook; a cell record it cannot read ends the run (exit 2, naming it)."""
    try:
        return gradebook.write_gradebook(cells, out, lessons, weights, ME, o.split)
    except cellrecord.RecordError as e:
        raise Exit(2, "%s: no gradebook written: %s" % (ME, e))


def write_gradebook(o: Options, cells: str, out: str, lessons: dict, weights: dict, repo: str) -> int:
    """The gradebook of a cells folder, written into OUT and shown, and similarity.csv beside it;
    its exit status."""
    status, md, err = make_gradebook(o, cells, out, lessons, weights)
    sys.stdout.write(md)
    if err:
        print(err, file=sys.stderr)
    written, said = write_similarity(cells, out, repo)
    if not written:  # (else what it prints is the gradebook alone)
        print(said, file=sys.stderr)
    return status


def judged_lessons(cells: list[runfolder.Cell]) -> list[str]:
    """The lessons whose judges CELLS need: those of the cells with a main.cu to build (a folder
    that is no lesson, e.g. 07_extra_credit, is a row of the gradebook, never a judge to build)."""
    return sorted({c.lesson for c in cells if c.planned.source})


def _sandbox_lines(o: Options, folder: RunFolder, sandbox_version: str, as_root: bool, uid_base: int, todo: int) -> list[str]:
    lines = []
    if not folder.fresh:
        lines.append("Resumed on %s%s: %d cells graded in that run." % (
            socket.gethostname(), " as Slurm task %s" % o.slice if o.slice else "", todo))
    if o.no_sandbox:
        lines.append("Graded WITHOUT a sandbox (--no-sandbox): every submission could read and write what the instructor can.")
    else:
        lines.append("Graded in a sandbox (%s); limits: %d s, %d processes, files %d MiB, scratch %d MiB, output %d KiB."
                     % (sandbox_version, o.timeout, o.procs, o.file_mib, o.scratch_mib, o.output_kib))
    if folder.fresh:
        lines.append("Inputs drawn with --seed %d%s." % (o.seed or 0, ", with hidden shapes" if o.hidden else ""))
        if o.host_only:
            lines.append("Host test cases only (--host-only): no GPU check was run.")
    if as_root and not o.no_sandbox:
        lines.append("Cells ran as user ids %d to %d." % (uid_base + 1, uid_base + len(folder.cells)))
    return lines


def _layer_lines(o: Options, rubrics: Rubrics) -> list[str]:
    """run-info.txt's lines of the layers that are on, and how."""
    if o.host_only:
        lines = ["Performance evidence: not measured (--host-only runs no GPU check)."]
    elif not o.performance:
        lines = ["Performance evidence: off (--no-performance): correctness alone."]
    else:
        lines = ["Performance evidence: each exercise's speed beside the course solution's (timed in the judge's verdict) "
                 "and the compiled kernels' static facts%s, judged by each lesson's rubric.json; score = %d%% correctness "
                 "+ %d%% x the performance credit (9/10 the slowest exercise's speed credit on its rubric's curve, "
                 "1/10 the other rules met; grading/score.py), for a cell that passed."
                 % (" (cuobjdump not found: static facts not measured)" if rubrics.cuobjdump is None else "", o.split[0], o.split[1])]
    if not o.lint:
        lines.append("Lint: off (--no-lint).")
    elif shutil.which("g++") is None:
        lines.append("Lint: not applicable to any cell: no g++ on this machine (grading/ub_lint.py needs GCC).")
    else:
        lines.append("Lint: each cell's device code compiled as host C++ by g++ -O3 in its sandbox (grading/ub_lint.py); "
                     "undefined behaviour GCC reports there fails the cell; code it cannot render is not applicable "
                     "(cells/NNNN/lint.log says why).")
    if o.host_only or not o.memcheck:
        lines.append("Memcheck subset: off%s." % (" (--host-only)" if o.host_only else " (--no-memcheck)"))
    elif o.sanitize:
        lines.append("Memcheck subset: not run (--sanitize runs memcheck over every GPU check instead).")
    else:
        lines.append("Memcheck subset: each cell that passed its checks ran them again on their small shapes (--small) "
                     "under compute-sanitizer memcheck, in its sandbox; an error fails the cell.")
    return lines


def _memory_line(o: Options, data_limit_runs: bool) -> str:
    return ("Memory: each step of a cell (compile, run, judge, sanitizer) stopped above %d MiB resident (all its processes, read every 0.2 s); "
            "RLIMIT_DATA of %d MiB on every compile%s. Transcripts up to %d MiB judged; student folders up to %d entries, main.cu up to %d KiB."
            % (o.mem_mib, o.mem_mib, ", run and judge" if data_limit_runs else
               " (not on runs: the course's own check failed under it here)", o.transcript_mib, o.max_files, o.max_source_kib))


def _template(box: box_.Box, course: course_build.Course, lesson: str) -> str:
    """The configured template of the cells' compiles (cell_template), made with the course (a
    complete entry of the course cache: its own, if it has one); run-info.txt's line of it."""
    why = "the course cache's entry was built without one"
    if not course.cached:
        try:
            course.template, why = cell_template.make(box, course, lesson)
        except OSError as e:
            course.template, why = "", "grader error: %s" % visible(str(e))[:200]
    else:
        course.template = cell_template.ready(course)
    return cell_template.info(course.template, why)


class Grader:
    """One run of grade.sh with options O, for the course at REPO."""

    def __init__(self, o: Options, repo: str) -> None:
        self.o, self.repo = o, repo
        self.lessons: dict = {}
        self.weights: dict = {}
        self.as_root = os.geteuid() == 0
        self.slot = sandbox.Slot()
        self.stop = Stop(o.slice)
        self.out = os.path.abspath(o.out or os.path.join(repo, "build-grade"))
        self.submissions = ""
        self.sandbox_version = "none"
        self.gpus: list[tuple] = []

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        run.kill_everything()
        if self.as_root and not self.o.no_sandbox:
            table = run.process_table()
            run.kill_pids([p for p, (_, uid, _) in table.items() if self.slot.base < uid < self.slot.base + sandbox.SLOT_SIZE])
        if self.stop.before_exit is not None:
            self.stop.undo()
            print("%s: interrupted before any cell was graded; --out is as it was" % ME, file=sys.stderr, flush=True)
        else:
            print("%s: interrupted; the cells graded so far are kept: grade the rest with the same command and --resume" % ME,
                  file=sys.stderr, flush=True)
        os._exit(130)

    def main(self) -> int:
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
        self.stop.out = self.out
        if o.gradebook_from is not None:
            if o.submissions is not None:
                usage_error("--gradebook-from grades nothing: give no SUBMISSIONS")
            if not os.path.isdir(o.gradebook_from):
                usage_error("--gradebook-from '%s' is not a folder" % visible(o.gradebook_from))
            outdir.check_place(self.out, None, self.repo)
            return write_gradebook(o, o.gradebook_from, self.out, self.lessons, self.weights, self.repo)
        if o.hidden:
            bad = check_hidden_shapes(o.hidden, self.lessons)
            if bad:
                usage_error("--hidden-shapes %s, %s" % (o.hidden, bad))
        if o.submissions is None:
            usage_error("no SUBMISSIONS folder given")
        if not os.path.isdir(o.submissions):
            usage_error("SUBMISSIONS '%s' is not a folder" % visible(o.submissions))
        self.submissions = os.path.realpath(o.submissions)
        outdir.check_place(self.out, self.submissions, self.repo, self.cache_dir())
        self.gpus = preflight.check_gpu(o, self.stop)
        self.sandbox_version = preflight.check_sandbox(o, self.as_root, self.slot, self.stop)
        if self.as_root and not o.no_sandbox and not o.slurm:
            outdir.check_cells_reach(self.slot.base, self.out, self.cache_dir(), o.hidden)
        folder = runfolder.make_plan(o, self.out, self.submissions, self.lessons, self.as_root, self.slot.base, self.stop,
                                     self.repo, keep_previous=True)
        if folder.fresh:  # (until it grades, a new run that ends puts --out's previous files back)
            self.stop.before_exit = self.put_back
        if o.slurm:
            return self.write_slurm(folder)
        return self.grade(folder)

    def write_slurm(self, folder: RunFolder) -> int:
        o = self.o
        self.graded(folder)
        sdir = os.path.join(self.out, "slurm")
        grade_sh = os.path.join(self.repo, "scripts", "grade.sh")
        task_args = [self.submissions, "--out", self.out, "--resume", "--seed", str(o.seed)] + o.passed_on
        if o.gpus_per_task > 1:
            task_args += ["--gpus", "all"]
        slurm.write(sdir, grade_sh, task_args, o.tasks, o.gpus_per_task, o.partition, o.account, folder.cells_dir,
                    self.out, o.weights_file, o.split_given)
        info = "Inputs drawn with --seed %d%s.\n" % (o.seed or 0, ", with hidden shapes" if o.hidden else "")
        if o.host_only:
            info += "Host test cases only (--host-only): no GPU check was run.\n"
        info += "Graded on a Slurm cluster: %d tasks; their logs are in %s.\n" % (o.tasks, sdir)
        with open(os.path.join(folder.cells_dir, "run-info.txt"), "a") as f:
            f.write(info)
        print("%s: %d cells of %d students, in a Slurm job array of %d task(s): wrote %s/grade-array.sbatch, %s/gradebook.sbatch and %s/submit.sh"
              % (ME, len(folder.cells), folder.nstudents, o.tasks, sdir, sdir, sdir), flush=True)
        if o.submit:
            if shutil.which("sbatch") is None:
                self.stop.die(1, "--submit: sbatch not found (submit later with: bash %s/submit.sh)" % sdir)
            if subprocess.run(["bash", os.path.join(sdir, "submit.sh")]).returncode != 0:
                self.stop.die(1, "--submit: sbatch refused the jobs (see above)")
        else:
            print("%s: submit them with: bash %s/submit.sh" % (ME, sdir))
        return 0

    def course_cache(self, folder: RunFolder) -> str:
        """The course cache's folder ('' without one: --no-course-cache, and a Slurm task, whose
        nodes may differ and share only a network filesystem, builds the course in --out as before)."""
        return "" if folder.slice_k is not None else self.cache_dir()

    def cache_dir(self) -> str:
        """The course cache's folder ('' without one: --no-course-cache, --slice)."""
        if self.o.no_course_cache or self.o.slice:
            return ""
        return os.path.abspath(self.o.course_cache or os.path.join(self.repo, "build-grade-cache"))

    def put_back(self) -> None:
        runfolder.put_back(self.out)

    def graded(self, folder: RunFolder) -> None:
        """The run grades (or writes its Slurm jobs): the previous run's files, set aside, go for good."""
        self.stop.before_exit = None
        runfolder.let_go(folder.out)

    def prepare(self, folder: RunFolder, todo: list[runfolder.Cell]) -> Grading:
        """The rubrics, the course and its judges, the sandbox: what every cell's steps share."""
        o = self.o
        rubrics = load_rubrics(self.repo, [c.lesson for c in folder.cells])
        for line in _layer_lines(o, rubrics):
            folder.info(line)
        work = self.out if folder.slice_k is None else os.path.join(self.out, "slice-%d" % folder.slice_k)
        cache = self.course_cache(folder)
        # (the cache's entry has the judges of every lesson of the plan: the same after a --resume)
        entry = course_build.open_cache(o, self.repo, cache, [self.out, self.submissions], judged_lessons(folder.cells)) if cache else None
        course = course_build.build(o, self.repo, work, judged_lessons(folder.cells if entry else todo), self.stop, entry)
        folder.info(_memory_line(o, course.data_limit_runs))
        box = box_.setup(o, self.repo, self.submissions, self.out, course.view, course.prebuilt, rubrics.cuobjdump,
                         self.as_root, self.slot.base, cache)
        box.data_limit_runs = course.data_limit_runs
        if not o.no_sandbox:
            box.probe(course.prebuilt, folder.cells_dir, self.stop)
        folder.info(_template(box, course, todo[0].lesson))
        assert o.seed is not None
        return Grading(o=o, seed=o.seed, submissions=self.submissions, course=course, box=box, rubrics=rubrics, gpus=self.gpus)

    def grade(self, folder: RunFolder) -> int:
        o = self.o
        todo = [c for c in folder.cells if c.todo]
        more = ", %d graded before" % folder.nskipped if folder.nskipped else ""
        print("%s: %d cells (%d to build%s) from %s; everything goes to %s"
              % (ME, len(folder.cells), len(todo), more, visible(self.submissions), visible(self.out)), flush=True)
        for line in _sandbox_lines(o, folder, self.sandbox_version, self.as_root, self.slot.base, len(todo)):
            folder.info(line)
        if not todo:
            self.graded(folder)
            print("%s: no cell left to grade" % ME, flush=True)
            if o.slice:
                return 0
            return write_gradebook(o, folder.cells_dir, self.out, self.lessons, self.weights, self.repo)
        signal.signal(signal.SIGINT, self.on_signal)
        signal.signal(signal.SIGTERM, self.on_signal)
        try:
            g = self.prepare(folder, todo)
            scheduler.gpus_free(g, self.stop)  # (with --share N > 1; a busy GPU: --out as it was)
        except BaseException:  # (a grader error while preparing: --out as it was, then the error)
            self.stop.undo()
            raise
        self.graded(folder)
        scheduler.grade_cells(g, folder, todo, self.stop)
        if o.slice:
            print("%s: task %s done: %d cells graded" % (ME, o.slice, len(todo)))
            return 0
        status, md, err = make_gradebook(o, folder.cells_dir, self.out, self.lessons, self.weights)
        print()
        sys.stdout.write(md)
        print()
        if err:
            print(err, file=sys.stderr)
        print("%s: gradebook in %s/gradebook.csv and %s/gradebook.md; scores per student in %s/scores.csv, feedback in %s/feedback/"
              % (ME, self.out, self.out, self.out, self.out))
        print(write_similarity(folder.cells_dir, self.out, self.repo)[1])
        return status
