"""A cell's compile, in its sandbox: the lesson's check.cu against the student's main.cu (the
runner); then the lint (grading/ub_lint.py: the device code as host C++ through g++ -O3) and the
static facts of the compiled kernels (cuobjdump), each in the cell's sandbox too. Writes the cell's
compile's outcome and the first values of its timing into its record, and sets cell.compiled."""
from __future__ import annotations

import os
import time
from collections.abc import Callable

from . import compile as compile_
from . import cellrecord, plan, shortcuts, witness
from .cell_evidence import static_facts
from .context import Grading
from .findings import lint_finding
from .names import visible
from .runfolder import Cell

LINT_LIMIT_S = 90  # ub_lint.py gives g++ 60 s of it


def run_lint(g: Grading, cell: Cell, box: str) -> str | None:
    """The lint's finding for the cell (a string starting "undefined behaviour"), or None (clean),
    or "not applicable (...)": grading/ub_lint.py of the course view runs g++ on the submission in
    the cell's sandbox (GCC reads hostile source), and prints one JSON line last. What the
    submission can shape of it (GCC's words, which quote its names) is quoted as its own."""
    view = g.course.view
    tool = os.path.join(view, "grading", "ub_lint.py")
    step = g.box.run(cell.dir, cell.number, "lint", LINT_LIMIT_S, "run",
                     ["python3", tool, "--json", "--timeout", "60", "--common", os.path.join(view, "common"),
                      os.path.join(box, "src", "main.cu")], None, cap=1 << 20, background=True)
    stopped = ("time limit %d s" % LINT_LIMIT_S if step.timed_out else
               "memory limit %d MiB (--mem-mib)" % g.o.mem_mib if step.mem_killed else "")
    if stopped:  # (what it printed stays; the grader's line says why it ends there)
        fd = os.open(os.path.join(cell.dir, "lint.log"), os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        with os.fdopen(fd, "a") as f:
            f.write("\ngrader: the lint (g++ on the device code) was stopped: %s; not applicable to this cell\n" % stopped)
        return "not applicable (the lint was stopped: %s)" % stopped
    if not step.started:
        return "not applicable (the lint could not start in the sandbox)"
    fd = os.open(os.path.join(cell.dir, "lint.log"), os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        return lint_finding(f.read(1 << 20).decode("utf-8", "replace"), step.rc)


def _after_compile(g: Grading, cell: Cell, box: str) -> None:
    """The lint, the shortcuts (reduced precision, a library's work), the static facts and the
    witness's device code of a cell that compiled, side by side (a grader error in any: not
    applicable or not measured, and the cell is graded). Each is a step of its own in the cell's
    sandbox, as before; side by side, a cell's CPU work after its compile takes as long as its
    longest part instead of their sum, and the first cells reach their GPU that much sooner."""
    o = g.o
    binary = os.path.join(box, "build", cell.lesson + "_check")

    took: dict[str, float] = {}

    def timed(key: str, part: Callable[[], None]) -> Callable[[], None]:
        def go() -> None:
            t1 = time.monotonic()
            try:
                part()
            finally:
                took[key] = time.monotonic() - t1
        return go

    def lint() -> None:
        try:
            cell.lint = run_lint(g, cell, box)
        except Exception as e:  # a grader error: the lint is not applicable, the cell is graded
            cell.lint = "not applicable (grader error: %s)" % visible(str(e))[:200]

    def shortcuts_() -> None:
        # Reduced precision and a library's work: correctness, checked in every mode (grading/shortcuts.py).
        cell.shortcuts = shortcuts.check(g, cell, box, binary)

    def static() -> None:
        try:
            cell.static = static_facts(g.box, cell, binary, g.rubrics)
        except Exception as e:  # a grader error: the static facts are not measured, the cell is graded
            cell.static = (None, "static facts not read (grader error: %s)" % visible(str(e))[:200])

    def extract() -> None:
        if g.rubrics.cuobjdump is None:
            cell.witness_unavailable = "no cuobjdump on the grading machine (%s)" % g.rubrics.no_cuobjdump
            return
        try:
            cell.witness = witness.extract(g.box, cell, box, binary, g.rubrics.cuobjdump)
        except Exception as e:  # a grader error: the speed is not timed, and says so
            cell.witness_unavailable = "grader error: %s" % visible(str(e))[:200]

    parts = [timed("shortcuts_s", shortcuts_)]
    if o.lint:
        parts.append(timed("lint_s", lint))
    rubric = g.rubrics.rubrics.get(cell.lesson, {})
    if o.performance and not o.host_only and rubric.get("rules"):
        parts.append(timed("static_s", static))
    if o.performance and not o.host_only and rubric.get("speed"):
        parts.append(timed("extract_s", extract))
    g.box.run_side_by_side(cell.number, parts)  # (a part's grader error: the cell is not graded, build_or_say says why)
    for key in ("lint_s", "shortcuts_s", "static_s", "extract_s"):  # (the record's order, as before)
        if key in took:
            cell.timing.add(key, took[key])


def build_cell(g: Grading, cell: Cell) -> None:
    """Compiles CELL in its sandbox (then its lint and static facts); its record's compiled says yes,
    no or - (not graded: its source could not be read, or its box made)."""
    o = g.o
    t0 = time.monotonic()
    compiled, why = "no", ""
    cell.timing.values = {}
    try:
        pc = cell.planned
        box = compile_.prepare_box(cell.dir, g.submissions, pc.source, o.max_source_kib * 1024,
                                   g.box.cell_uid(cell.number), pc.inode if pc.nlink > 1 else (), g.course.template)
        step = g.box.run(cell.dir, cell.number, "build", compile_.BUILD_LIMIT_S, "compile",
                         compile_.compile_command(g.course.view, box, cell.lesson, g.course.prebuilt, g.course.config), None)
        if step.rc == 0 and os.access(os.path.join(box, "build", cell.lesson + "_check"), os.X_OK):
            compiled = "yes"
        else:
            why = compile_.finding(step, os.path.join(cell.dir, "build.log"), box, o.output_kib, o.mem_mib, o.file_mib)
        cell.timing.add("compile_s", time.monotonic() - t0)
        cell.timing.add("compile_mib", step.peak_rss >> 20)
        if compiled == "yes":
            _after_compile(g, cell, box)
    except plan.SourceError as e:
        compiled, why, cell.timing.values = "-", "%s: not graded" % e, {}
    except compile_.BoxError as e:
        compiled, why, cell.timing.values = "-", str(e), {}
    cell.compile_finding, cell.compiled_value = why, compiled
    cellrecord.update(cell.dir, compiled=compiled, timing=dict(cell.timing.values))
    cell.compiled.set()


def build_or_say(g: Grading, cell: Cell) -> None:
    """build_cell; a grader error is said in the cell, never a crash of the run."""
    try:
        build_cell(g, cell)
    except Exception as e:  # a grader error: said in the cell, never a crash of the run
        cell.compile_finding, cell.compiled_value = "grader error while compiling: %s" % visible(str(e))[:200], "-"
        cellrecord.update(cell.dir, compiled="no")
        cell.compiled.set()
