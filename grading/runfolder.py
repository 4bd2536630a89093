"""The run folder (--out): cells/ with one folder per cell, numbered in the order of the students'
and their entries' names, so that the same SUBMISSIONS always gives the same numbers and --resume
(and a Slurm task) finds its cells again; cells/seed and cells/options, the seed and the options
that change a grade, kept from the first run; cells/run-info.txt, what the gradebook says of the
run. A cell folder holds its record, cell.json (grading/cellrecord.py: who the cell is from the
start, then its compile's outcome, its timing and its result; gradebook.py reads it), and the
steps' logs. The per-cell state is Cell."""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import threading
import zlib
from dataclasses import dataclass, field

from . import cellrecord, gradebook, outdir, plan, sandbox
from .exits import ME, Exit, Stop, usage_error
from .names import visible
from .options import Options

MARKER = ".made-by-grade.sh"


@dataclass
class CellTiming:
    """The record's timing: each step's seconds (to 0.01 s), memory (MiB), share and GPU, in the
    order they were measured."""
    values: dict[str, float | int | str] = field(default_factory=dict)

    def add(self, key: str, value: float | int | str) -> None:
        self.values[key] = round(value, 2) if isinstance(value, float) else value

    def write(self, cell_dir: str) -> None:
        cellrecord.update(cell_dir, timing=dict(self.values))

    def take_run(self) -> dict[str, float | int | str]:
        """The run's values (cellrecord.RUN_KEYS), taken out: the cell is graded again, alone on its GPU."""
        run = {k: v for k, v in self.values.items() if k in cellrecord.RUN_KEYS}
        self.values = {k: v for k, v in self.values.items() if k not in run}
        return run


@dataclass(eq=False)
class Cell:
    """One (student, lesson) of the plan and what grading it has found so far (compared as itself)."""
    number: int
    dir: str
    planned: plan.PlannedCell
    lesson: str = ""
    label: str = ""
    todo: bool = False
    compiled: threading.Event = field(default_factory=threading.Event)  # set when its build ended
    compiled_value: str = ""  # yes / no / - (not graded), once compiled is set
    compile_finding: str = ""
    static: tuple = (None, "static facts not read")  # (facts, why not): set while it compiles
    lint: str | None = None  # the lint's finding, "not applicable (...)" or None (clean, or not run)
    shortcuts: list[str] = field(default_factory=list)  # reduced precision, a library's work (grading/shortcuts.py)
    witness: str | None = "not extracted"  # the speed witness's device code: None ready, else why not (grading/witness.py)
    witness_unavailable: str = ""  # why this grading machine cannot time any cell with the witness (not the cell's fault)
    timing: CellTiming = field(default_factory=CellTiming)

    def __post_init__(self) -> None:
        self.lesson = self.planned.lesson.decode("utf-8", "surrogateescape")
        self.label = "%s / %s" % (self.planned.shown_student, self.planned.shown_lesson)


@dataclass
class RunFolder:
    """The plan of this run: every cell, and where they are."""
    out: str
    cells_dir: str
    cells: list[Cell] = field(default_factory=list)
    fresh: bool = True        # a new run (not --resume, not a Slurm task)
    slice_k: int | None = None
    slice_n: int | None = None
    nstudents: int = 0
    nskipped: int = 0         # cells graded before (--resume)

    def info(self, line: str) -> None:
        """A line of run-info.txt (what the gradebook says of the run)."""
        with open(os.path.join(self.cells_dir, "run-info.txt"), "a", encoding="utf-8") as f:
            f.write(line + "\n")


def remove(path: str) -> None:
    """PATH, a folder (never through a link) or anything else; nothing when it is not there."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def options_line(o: Options, submissions: str) -> str:
    """The options that change a grade, as cells/options keeps them."""
    hidden = ""
    if o.hidden:
        with open(o.hidden, "rb") as f:
            hidden = "%08x" % zlib.crc32(f.read())
    return ("submissions=%s host_only=%d sanitize=%d timeout=%d sanitize_timeout=%d no_sandbox=%d hidden=%s "
            "mem_mib=%d transcript_mib=%d max_files=%d max_source_kib=%d memcheck=%d performance=%d%s"
            % (visible(submissions), o.host_only, o.sanitize, o.timeout, o.sanitize_timeout, o.no_sandbox, hidden,
               o.mem_mib, o.transcript_mib, o.max_files, o.max_source_kib, o.memcheck, o.performance,
               "" if o.lint else " lint=0"))


def _resume(o: Options, out: str, cells_dir: str, options: str) -> None:
    """--resume (or a Slurm plan made again): the first run's seed, and its options."""
    if not os.path.isfile(os.path.join(cells_dir, MARKER)):
        usage_error("--resume: nothing to resume in %s (no cells folder made by %s)" % (visible(out), ME))
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


PREVIOUS = ("cells", "gradebook.csv", "gradebook.md", "scores.csv", "similarity.csv", "feedback", "course-view", "progress.log")
ASIDE = ".previous-run"  # a new run's predecessor, kept until the new run grades (put_back, let_go)


def _start_fresh(o: Options, out: str, cells_dir: str, options: str, keep_previous: bool = False) -> None:
    """A new run: what an earlier one left in OUT removed, or with KEEP_PREVIOUS set aside
    (OUT/.previous-run: put back if this run ends before it grades, removed when it grades); the
    seed drawn (unless given) and kept."""
    aside = os.path.join(out, ASIDE)
    if keep_previous:
        put_back(out)  # (a run killed before it graded left its predecessor aside: that is the previous run)
        remove(aside)
        os.mkdir(aside, 0o700)
    for name in PREVIOUS:
        if keep_previous and os.path.lexists(os.path.join(out, name)):
            os.rename(os.path.join(out, name), os.path.join(aside, name))
        else:
            remove(os.path.join(out, name))
    os.makedirs(cells_dir)
    open(os.path.join(cells_dir, MARKER), "w").close()
    if o.seed is None:
        o.seed = int.from_bytes(os.urandom(4), "little")
    with open(os.path.join(cells_dir, "seed"), "w") as f:
        f.write("%d\n" % o.seed)
    with open(os.path.join(cells_dir, "options"), "w") as f:
        f.write(options + "\n")


def put_back(out: str) -> bool:
    """A new run that ends before it grades: what it wrote removed, and the previous run's files
    (set aside by _start_fresh) where they were. Whether there was anything to put back."""
    aside = os.path.join(out, ASIDE)
    if not os.path.isdir(aside) or os.path.islink(aside):
        return False
    for name in PREVIOUS:
        remove(os.path.join(out, name))
    for name in os.listdir(aside):
        os.rename(os.path.join(aside, name), os.path.join(out, name))
    os.rmdir(aside)
    return True


def let_go(out: str) -> None:
    """The new run grades: the previous run's files, set aside, removed for good."""
    remove(os.path.join(out, ASIDE))


def _check_out(out: str, submissions: str, cells_dir: str, course_root: str = "") -> None:
    """--out is a folder this grader may use: refused (exit 2) before anything in it is touched
    (outdir.check_place: links resolved on both sides)."""
    if os.path.lexists(cells_dir) and not os.path.isfile(os.path.join(cells_dir, MARKER)):
        raise Exit(2, "%s: %s exists and was not made by %s; give another --out" % (ME, visible(cells_dir), ME))
    outdir.check_place(out, submissions, course_root)


def _reachable(o: Options, out: str, as_root: bool, slot_base: int, stop: Stop) -> None:
    """OUT made (when missing) and open to the cells' users (outdir.check_cells_reach checked the
    folders above it before anything was written): as root, checked again as one of them."""
    made = _chain_missing(out)
    os.makedirs(out, exist_ok=True)
    for d in made + [out]:
        os.chmod(d, 0o755)
    if not o.slurm and not o.no_sandbox and as_root:
        p = subprocess.run(["setpriv", "--reuid=%d" % slot_base, "--regid=%d" % slot_base, "--clear-groups",
                            "test", "-x", out], stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            stop.die(3, "no sandbox: a cell could not reach %s (cells run as users of their own); open every folder above it to other users (chmod o+x), or give another --out (nothing graded)" % visible(out))


def _chain_missing(path: str) -> list[str]:
    """The folders above PATH that are not there yet, outermost first."""
    missing = []
    p = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(p) and p != os.path.dirname(p):
        missing.append(p)
        p = os.path.dirname(p)
    return missing[::-1]


def scan_plan(o: Options, submissions: str, lessons: dict, course_root: str = "") -> list[plan.PlannedCell]:
    """The plan of SUBMISSIONS, or the run refused (nothing written): unreadable, no student folder,
    more cells than one run grades. COURSE_ROOT: the course, whose files a hard link may not name."""
    try:
        planned = plan.scan(submissions, lessons, plan.Limits(o.max_files, o.max_source_kib * 1024), course_root)
    except OSError as e:
        usage_error("SUBMISSIONS '%s' cannot be read (%s)" % (visible(submissions), e.strerror))
    if not planned:
        raise Exit(2, "%s: '%s' holds no student folders" % (ME, visible(submissions)))
    if len(planned) >= sandbox.SLOT_SIZE:
        usage_error("SUBMISSIONS makes %d cells, more than one run grades (%d: cell user ids stay in their slot's range); grade the class in parts"
                    % (len(planned), sandbox.SLOT_SIZE - 1))
    return planned


def open_folder(o: Options, out: str, submissions: str, as_root: bool, slot_base: int, stop: Stop,
                planned: list[plan.PlannedCell] | None = None, course_root: str = "", keep_previous: bool = False) -> RunFolder:
    """The cells folder, new or resumed; open to the cells' users (as root, checked as one). Every
    refusal (a bad --out, --resume's checks, PLANNED's cells against the first run's records, a
    folder the cells cannot reach) comes before the previous run's files are removed: a refused run
    leaves --out as it was."""
    cells_dir = os.path.join(out, "cells")
    marker = os.path.join(cells_dir, MARKER)
    _check_out(out, submissions, cells_dir, course_root)
    options = options_line(o, submissions)
    fresh = not (o.resume or (o.slurm and os.path.isfile(marker)))
    if not fresh:
        _resume(o, out, cells_dir, options)
        for number, pc in enumerate(planned or [], 1):
            _same_cell(cells_dir, number, pc)
    _reachable(o, out, as_root, slot_base, stop)
    if fresh:
        _start_fresh(o, out, cells_dir, options, keep_previous)
    os.chmod(cells_dir, 0o755)
    folder = RunFolder(out=out, cells_dir=cells_dir, fresh=fresh)
    if o.slice:
        k, n = o.slice.split("/")
        folder.slice_k, folder.slice_n = int(k), int(n)
        try:
            os.unlink(os.path.join(cells_dir, ".slice-%d.why" % folder.slice_k))
        except FileNotFoundError:
            pass
    return folder


def _read(cell_dir: str) -> cellrecord.CellRecord | None:
    """CELL_DIR's record (None: none yet); one this grader cannot read ends the run (exit 2, naming it)."""
    try:
        return cellrecord.read(cell_dir)
    except cellrecord.RecordError as e:
        raise Exit(2, "%s: %s" % (ME, e))


def read_record(cell: Cell) -> cellrecord.CellRecord | None:
    """CELL's record (None: none yet); one this grader cannot read ends the run (exit 2, naming it)."""
    return _read(cell.dir)


def _same_cell(cells_dir: str, number: int, pc: plan.PlannedCell) -> None:
    """--resume: cell NUMBER's record, when there is one, is of the same student and lesson."""
    rec = _read(os.path.join(cells_dir, "%04d" % number))
    student, lesson = gradebook.one_line(pc.shown_student), gradebook.one_line(pc.shown_lesson)
    if rec is not None and (rec.student, rec.lesson) != (student, lesson):
        usage_error("--resume: SUBMISSIONS changed since the first run (cell %04d was '%s/%s', now '%s/%s'); grade into a new --out"
                    % (number, rec.student, rec.lesson, pc.shown_student, pc.shown_lesson))


def _identity(folder: RunFolder, cell: Cell) -> cellrecord.CellRecord:
    """The cell's record: new (who the cell is, and its notes), or (--resume) the first run's, of
    the same cell (open_folder checked it)."""
    pc = cell.planned
    rec = read_record(cell)
    if rec is not None:
        return rec
    sl = pc.student_index % folder.slice_n if folder.slice_n else None
    os.makedirs(cell.dir, exist_ok=True)
    rec = cellrecord.CellRecord(gradebook.one_line(pc.shown_student), gradebook.one_line(pc.shown_lesson), sl,
                                note=gradebook.one_line(pc.note), feedback_note=gradebook.one_line(pc.feedback_note))
    cellrecord.write(cell.dir, rec)
    return rec


def _mark(o: Options, folder: RunFolder, cell: Cell, rec: cellrecord.CellRecord) -> None:
    """Whether this run grades CELL (todo); the rows that need no grading written now. REC: its record."""
    pc, d = cell.planned, cell.dir
    if folder.slice_k is not None and folder.slice_n and pc.student_index % folder.slice_n != folder.slice_k:
        return  # another task's
    if o.slurm:  # the plan only: the tasks grade (rows that need no grading are written now)
        if pc.finding:
            gradebook.finish_cell(d, "-", finding=pc.finding)
        return
    if rec.result is not None and not rec.result.finding.startswith("not graded: "):
        folder.nskipped += 1
        return  # graded before (--resume)
    if pc.finding:
        gradebook.finish_cell(d, "-", finding=pc.finding)
        return
    remove(os.path.join(d, "box"))
    cellrecord.update(d, result=None, compiled="")  # (--resume: what the stopped run left)
    cell.todo = True


def plan_cells(o: Options, folder: RunFolder, planned: list[plan.PlannedCell]) -> None:
    """Every cell of the plan gets a folder with its record; those this run grades are todo.
    With --slurm, the number of tasks (at most one per student)."""
    folder.nstudents = nstudents = len({p.student_index for p in planned})
    if o.slurm:
        if not o.tasks:
            o.tasks = max(1, (nstudents + 19) // 20)
        folder.slice_n = o.tasks
    for number, pc in enumerate(planned, 1):
        cell = Cell(number, os.path.join(folder.cells_dir, "%04d" % number), pc)
        folder.cells.append(cell)
        _mark(o, folder, cell, _identity(folder, cell))
    if o.slurm and folder.slice_n is not None and folder.slice_n > nstudents:
        o.tasks = folder.slice_n = max(1, nstudents)


def make_plan(o: Options, out: str, submissions: str, lessons: dict, as_root: bool, slot_base: int,
              stop: Stop, course_root: str = "", keep_previous: bool = False) -> RunFolder:
    """Every cell gets a folder, numbered in the order of the students' and their entries' names,
    with its record (cell.json); the same SUBMISSIONS always gives the same numbers, so that --resume (and
    a Slurm task) finds its cells again. The seed and the options that change a grade are kept in
    the cells folder. SUBMISSIONS is read, and every refusal made, before --out is touched; with
    KEEP_PREVIOUS, a new run sets the previous run's files aside (put_back, let_go)."""
    planned = scan_plan(o, submissions, lessons, course_root)
    folder = open_folder(o, out, submissions, as_root, slot_base, stop, planned, course_root, keep_previous)
    plan_cells(o, folder, planned)
    return folder


def again_alone(cell: Cell) -> bool:
    """After a shared pass: whether CELL must be graded again, alone on its GPU (it did not pass
    everything, fell short of a performance rule or of full speed credit); if so its shared result is kept aside
    (the record's shared: the shared run's result and timing)."""
    rec = read_record(cell)
    if rec is None or rec.result is None or cell.compiled_value != "yes":
        return False
    r = rec.result
    if (gradebook.is_pass("yes", r.passed, r.total, r.finding)
            and not gradebook.performance_short({"performance": r.performance, "speed_credit": r.speed_credit})):
        # (speed measured beside other cells, below full credit: again, alone)
        return False
    shared = cellrecord.Shared(r, cell.timing.take_run())
    cellrecord.update(cell.dir, result=None, shared=shared, timing=dict(cell.timing.values))
    return True


def _timings(cells: list[Cell]) -> list[dict]:
    """The cells' timing, as their records hold it (none where a record cannot be read)."""
    out = []
    for c in cells:
        try:
            rec = cellrecord.read(c.dir)
        except cellrecord.RecordError:
            continue
        if rec is not None:
            out.append(rec.timing)
    return out


def median_of(cells: list[Cell], key: str, timings: list[dict] | None = None) -> str:
    """The median of KEY over the cells' timing ("-": none)."""
    vals = [float(t[key]) for t in (_timings(cells) if timings is None else timings) if isinstance(t.get(key), (int, float))]
    return "%.2f" % statistics.median(vals) if vals else "-"


def timing_line(o: Options, cells: list[Cell], sandbox_s: float) -> str:
    """run-info.txt's line of the time and memory a cell took (medians over CELLS)."""
    ts = _timings(cells)
    nrun = sum(1 for t in ts if "run_s" in t)

    def med(key: str) -> str:
        return median_of(cells, key, ts)
    t = ("Time per cell (median of %d cells run, --share %d): compile %s s, run %s s, judge %s s"
         % (nrun, o.share, med("compile_s"), med("run_s"), med("judge_s")))
    if o.memcheck and not o.host_only and not o.sanitize:
        t += ", memcheck subset %s s (of the cells it ran on)" % med("memcheck_s")
    if o.performance and not o.host_only:
        t += ", static facts %s s (while compiling), evidence %s s" % (med("static_s"), med("evidence_s"))
    if not o.no_sandbox:
        t += "; an empty sandbox starts in %.2f s" % sandbox_s
    t += (". Resident memory per cell (median, MiB; read every 0.2 s): compile %s, run %s, judge %s"
          % tuple(m if m == "-" else "%.0f" % float(m) for m in (med("compile_mib"), med("run_mib"), med("judge_mib"))))
    return t + "."


def finish_not_graded(todo: list[Cell], why: str) -> None:
    """A cell left without a result (its worker stopped): a row that says why."""
    for c in todo:
        rec = read_record(c)
        if rec is not None and rec.result is None:
            gradebook.finish_cell(c.dir, "-", finding="not graded: %s" % (why or "no worker took it"))
