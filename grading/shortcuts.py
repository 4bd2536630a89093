"""Work a cell did not do the lesson's way, found while it compiles and held against its correctness
(like the lint's undefined behaviour): a result computed in reduced precision
(grading/precision.py, on the compiled runner's SASS and PTX, read by cuobjdump in the cell's
sandbox) and an exercise done by a library (grading/library_use.py, on the submission's source and
its preprocessed text, made by nvcc -E in the cell's sandbox, beside the lesson's own main.cu
preprocessed the same way outside it: the course's, trusted).

Both run with and without --host-only, --no-performance and --no-lint: they are correctness. A
tool the grading machine lacks (cuobjdump, nvcc) leaves its part not checked, for every cell alike,
and the cell's shortcuts.log says so; a listing the submission made too large or too slow to read
is a finding."""
from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from . import library_use, precision
from .cell_evidence import STATIC_CAP, _listing
from .context import Grading
from .names import visible
from .runfolder import Cell
from .static_evidence import find_cuda_tool

PREPROCESS_LIMIT_S = 120
WORKERS = 4  # processes that judge the library rule's text (a fraction of a second of CPU a cell), at least;
# as many as cells compile at a time (--jobs) where that is more: one a compile thread, none waits
MAX_PREPROCESSED = 64 << 20
_lessons: dict[str, list[dict[int, list[str]]]] = {}
_lock = threading.Lock()


def _arch(o_arch: str | None) -> str:
    """nvcc's -arch for the preprocessor: the course's first architecture (only __CUDA_ARCH__'s value
    depends on it), sm_90 when none is given."""
    m = re.match(r"\s*([0-9]+[a-z]?)", o_arch or "")
    return "-arch=sm_%s" % (m.group(1) if m else "90")


def preprocess_script() -> str:
    """bash -c SCRIPT pre NVCC ARCH VIEW SOURCE OUTDIR: the device and the host side of SOURCE."""
    flags = '-E -x cu "$2" -std=c++17 --expt-relaxed-constexpr -DCOURSE_NO_MAIN -I"$3/common" -I"$3/harness"'
    return ('mkdir -p "$5" && "$1" %s "$4" -o "$5/device.ii" && "$1" %s -U__CUDA_ARCH__ "$4" -o "$5/host.ii"'
            % (flags, flags))


def _read_capped(path: str) -> str | None:
    """A regular file the sandbox wrote (no link followed), at most MAX_PREPROCESSED bytes; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not os.path.isfile(path) or os.fstat(f.fileno()).st_size > MAX_PREPROCESSED:
            return None
        return f.read(MAX_PREPROCESSED).decode("utf-8", "replace")


def lesson_passes(g: Grading, nvcc: str, lesson: str) -> list[dict[int, list[str]]]:
    """The lesson's own main.cu preprocessed (device and host side), outside any sandbox (the
    course's code), once per lesson and run; [] when it could not be."""
    with _lock:
        if lesson in _lessons:
            return _lessons[lesson]
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        source = os.path.join(repo, "lessons", lesson, "main.cu")
        out: list[dict[int, list[str]]] = []
        for host in (False, True):
            cmd = [nvcc, "-E", "-x", "cu", _arch(g.o.arch), "-std=c++17", "--expt-relaxed-constexpr", "-DCOURSE_NO_MAIN",
                   "-I" + os.path.join(repo, "common"), "-I" + os.path.join(repo, "harness")]
            cmd += (["-U__CUDA_ARCH__"] if host else []) + [source]
            r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", check=False, timeout=PREPROCESS_LIMIT_S)
            if r.returncode != 0:
                out = []
                break
            out.append(library_use.preprocessed_lines(r.stdout, source))
        _lessons[lesson] = out
        return out


def resolved_includes(texts: list[str], source: str, nvcc: str | None, course: str) -> dict[int, str | None]:
    """{0-based line of SOURCE: why the file its #include entered does not belong (None: it does)},
    from the preprocessed TEXTS (both sides) of SOURCE, compiled with COURSE's common/ and harness/."""
    toolkit = library_use.toolkit_dirs(texts, nvcc)
    allowed = [os.path.dirname(source), os.path.join(course, "common"), os.path.join(course, "harness")]
    out: dict[int, str | None] = {}
    for text in texts:
        for line, path in library_use.included_files(text, source).items():
            out[line] = out.get(line) or library_use.foreign_header(path, toolkit, allowed)
    return out


def preprocess_in_box(g: Grading, cell: Cell, box: str, nvcc: str, notes: list[str]) -> list[str]:
    """The submission's main.cu preprocessed (device and host side) by nvcc -E in the cell's sandbox:
    the two files' paths ([] when it could not be: the note says why)."""
    source = os.path.join(box, "src", "main.cu")
    out_dir = os.path.join(box, "build", "shortcuts")
    step = g.box.run(cell.dir, cell.number, "preprocess", PREPROCESS_LIMIT_S, "compile",
                     ["bash", "-c", preprocess_script(), "pre", nvcc, _arch(g.o.arch), g.course.view, source, out_dir],
                     None, cap=1 << 16, background=True)
    if step.started and step.rc == 0 and not step.timed_out:
        return [os.path.join(out_dir, side + ".ii") for side in ("device", "host")]
    notes.append("nvcc -E did not finish (exit %d%s; see preprocess.log): the source lines alone were judged"
                 % (step.rc, ", time limit" if step.timed_out else ""))
    return []


def judge_library_use(lesson: str, lesson_text: str, submission: str, lesson_pre: list[dict[int, list[str]]],
                      sides: list[str], source: str, nvcc: str | None, course: str) -> tuple[list[str], list[str]]:
    """(findings, notes) of the library rule (library_use.findings) over the submission's SIDES, its
    preprocessed files ([]: its source lines alone). Pure work on text, run in a process of its own
    (_in_worker), so that scanning megabytes of preprocessed text does not hold the grader's
    interpreter while the GPUs' steps wait for it."""
    notes: list[str] = []
    sub_pre: list[dict[int, list[str]]] = []
    resolved: dict[int, str | None] = {}
    texts: list[str] = []
    for side, path in zip(("device", "host"), sides):
        text = _read_capped(path)
        if text is None:
            notes.append("the preprocessed %s side could not be read (over %d MiB, or not a file)" % (side, MAX_PREPROCESSED >> 20))
            sub_pre, texts = [], []
            break
        sub_pre.append(library_use.preprocessed_lines(text, source))
        texts.append(text)
    if texts:
        resolved.update(resolved_includes(texts, source, nvcc, course))
    if not sub_pre:
        lesson_pre = []
    return library_use.findings(lesson_text, submission, lesson_pre, sub_pre, lesson, resolved if sub_pre else None), notes


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()
_pool_why = ""  # why there is no worker process ('': none asked for yet)


def _in_worker(workers: int, *args: Any) -> tuple[list[str], list[str]]:
    """judge_library_use(*ARGS) in the worker process (started once; forkserver: nothing of the
    grader's threads is copied), or here where that process cannot be had."""
    global _pool, _pool_why
    with _pool_lock:
        if _pool is None and not _pool_why:
            try:
                _pool = ProcessPoolExecutor(max_workers=max(WORKERS, workers), mp_context=multiprocessing.get_context("forkserver"))
            except (OSError, ValueError, ImportError) as e:
                _pool_why = "no worker process (%s)" % e
        pool = _pool
    if pool is not None:
        try:
            return pool.submit(judge_library_use, *args).result()
        except (BrokenProcessPool, OSError, RuntimeError):
            pass  # (the worker died, or the grader is stopping): the same work here
    return judge_library_use(*args)


def library_findings(g: Grading, cell: Cell, box: str, notes: list[str]) -> list[str]:
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(repo, "lessons", cell.lesson, "main.cu"), encoding="utf-8", errors="replace") as f:
        lesson_text = f.read()
    source = os.path.join(box, "src", "main.cu")
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        submission = f.read(MAX_PREPROCESSED).decode("utf-8", "replace")
    nvcc = find_cuda_tool("nvcc", "CUDACXX")
    lesson_pre: list[dict[int, list[str]]] = []
    sides: list[str] = []
    if nvcc is None:
        notes.append("no nvcc found: the source lines alone were judged, not their preprocessed text")
    else:
        lesson_pre = lesson_passes(g, nvcc, cell.lesson)
        if not lesson_pre:
            notes.append("the lesson's own main.cu could not be preprocessed (grader): the source lines alone were judged")
        else:
            sides = preprocess_in_box(g, cell, box, nvcc, notes)
    try:
        found, said = _in_worker(g.o.jobs, cell.lesson, lesson_text, submission, lesson_pre, sides, source, nvcc, g.course.view)
    finally:
        for path in sides:
            try:
                os.unlink(path)
            except OSError:
                pass
    notes += said
    return found


def precision_findings(g: Grading, cell: Cell, binary: str, notes: list[str]) -> list[str]:
    rubric = g.rubrics.rubrics.get(cell.lesson)
    if not precision.teaches_fp32(rubric):
        return []
    if g.rubrics.cuobjdump is None:
        notes.append("precision not checked: %s" % g.rubrics.no_cuobjdump)
        return []
    texts: dict[str, str] = {}
    why = _listing(g.box, cell, "precision-sass", ["-sass"], binary, g.rubrics.cuobjdump, STATIC_CAP, texts)
    if why is None:
        if _listing(g.box, cell, "precision-ptx", ["-ptx"], binary, g.rubrics.cuobjdump, STATIC_CAP, texts) is not None:
            notes.append("the PTX could not be read: the machine code alone was judged")
    if why is not None:
        if why.startswith("short: "):
            return ["the compiled code's precision could not be checked: %s" % why[len("short: "):]]
        notes.append("precision not checked: %s" % why)
        return []
    rubric_names = rubric if isinstance(rubric, dict) else None
    return precision.findings(texts.get("precision-sass", ""), texts.get("precision-ptx"), rubric_names)


def check(g: Grading, cell: Cell, box: str, binary: str) -> list[str]:
    """The cell's findings of reduced precision and of library shortcuts (each fails its correctness);
    CELL_DIR/shortcuts.log says what was checked and what was not. The two run side by side in the
    cell's sandbox (cuobjdump for the one, nvcc -E for the other)."""
    parts = (lambda notes: precision_findings(g, cell, binary, notes), lambda notes: library_findings(g, cell, box, notes))
    results: list[tuple[list[str], list[str]]] = [([], []) for _ in parts]

    def run_part(i: int) -> None:
        notes: list[str] = []
        try:
            results[i] = (parts[i](notes), notes)
        except Exception as e:  # a grader error: that part is not checked, the cell is graded
            results[i] = ([], notes + ["grader error: %s" % visible(str(e))[:200]])

    g.box.run_side_by_side(cell.number, [lambda: run_part(0), lambda: run_part(1)])
    notes = [n for _, said in results for n in said]
    found = [f for got, _ in results for f in got]
    with open(os.path.join(cell.dir, "shortcuts.log"), "w", encoding="utf-8") as f:
        f.write("".join("%s\n" % n for n in notes + ["finding: " + x for x in found]) or "checked: nothing found\n")
    return found
