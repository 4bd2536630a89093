"""Who does what when: a pool of --jobs threads compiles the cells in order, each in its sandbox,
while SHARE workers per GPU (concurrent.futures threads) grade the compiled cells on their GPU: a
worker whose GPU is free takes the first cell, in order, whose compile has ended, so that no GPU
waits for one cell's compile while another's is ready. A worker whose GPU is not the grader's any
more (another program holds it, a cell's process outlived it) takes no more cells, and says why.
With --share above 1, a cell that did not pass everything is graded again, alone on its GPU."""
from __future__ import annotations

import os
import socket
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait

from . import cpus as cpus_
from . import gpu_hold, gradebook, overlap, runfolder
from . import gpus as gpus_
from .cell_build import build_or_say
from .cell_grade import grade_cell
from .context import Grading
from .course_build import info_line, tail, wait_judges
from .exits import ME, Stop
from .names import visible
from .progress import Progress, now_utc
from .runfolder import Cell, RunFolder


def wait_all(futures: list[Future]) -> None:
    """Waits for FUTURES in naps (so that a signal reaches the grader meanwhile)."""
    while not all(f.done() for f in futures):
        wait(futures, timeout=0.5)


class Ready:
    """The cells left to grade, in order, told when a compile ends (or the compiling stopped); the
    workers waiting for one are served in the order they came (the GPU idle longest first)."""

    def __init__(self, g: Grading, cells: list[Cell]) -> None:
        self.g = g
        self.cells = list(cells)
        self.cond = threading.Condition()
        self.waiting: list[object] = []

    def tell(self) -> None:
        """A compile ended, or the compiling stopped: waiting workers look again."""
        with self.cond:
            self.cond.notify_all()

    def any_compiled(self) -> bool:
        """Whether a cell left is ready for a worker now (its compile ended, or the compiling stopped)."""
        with self.cond:
            return bool(self.cells) and (self.g.compile_done.is_set() or any(c.compiled.is_set() for c in self.cells))

    def take(self) -> Cell | None:
        """The first cell left whose compile has ended (waited for); once the compiling stopped,
        the first left (grade_cell says why it was never built); None when none is left."""
        me = object()
        with self.cond:
            self.waiting.append(me)
            try:
                while self.cells:
                    if self.waiting[0] is me:
                        for i, c in enumerate(self.cells):
                            if c.compiled.is_set():
                                return self.cells.pop(i)
                        if self.g.compile_done.is_set():
                            return self.cells.pop(0)
                    self.cond.wait(0.5)
                return None
            finally:
                self.waiting.remove(me)
                self.cond.notify_all()  # (the next worker in line looks)


def compile_all(g: Grading, todo: list[Cell], ready: Ready | None = None) -> None:
    """Every cell of TODO compiled, --jobs at a time, in order (READY told as each ends); then
    compile_done is set."""
    def build(c: Cell) -> None:
        try:
            build_or_say(g, c)
        finally:
            if ready is not None:
                ready.tell()
    try:
        with ThreadPoolExecutor(max_workers=g.o.jobs, thread_name_prefix="compile") as pool:
            for c in todo:
                pool.submit(build, c)
    finally:
        g.compile_done.set()
        if ready is not None:
            ready.tell()


def _grader_error(c: Cell, e: Exception) -> None:
    gradebook.finish_cell(c.dir, "-", finding="grader error: %s" % visible(repr(e))[:300])


def _worker(g: Grading, w: int, ready: Ready, share: int) -> None:
    """Worker W: takes the next compiled cell and grades it on its GPU, until none is left or its
    GPU is not the grader's any more (then g.stop_reasons[W] says why)."""
    gpu = g.gpus[w % len(g.gpus)] if g.gpus else None
    if share == 1 and not g.o.host_only:  # each cell's judge beside the next cell's run (grading/overlap.py)
        stop = overlap.worker(g, gpu, ready, _grader_error)
        if stop:
            g.stop_reasons[w] = stop
        return
    while True:
        c = ready.take()
        if c is None:
            return
        try:
            stop = grade_cell(g, c, gpu, share)
        except Exception as e:  # a grader error in one cell: said there, the others go on
            _grader_error(c, e)
            stop = None
        if stop:
            g.stop_reasons[w] = stop
            return


def run_workers(g: Grading, ready: Ready, share: int) -> None:
    """SHARE workers per --gpus GPU (without --gpus, on the GPU(s) the environment gives) take the
    cells of READY, each on its worker's GPU."""
    n = max(1, len(g.gpus))
    if n * share == 1:
        _worker(g, 0, ready, share)
        return
    if n > 1:
        print("%s: grading on %d GPUs (%s), %d cell(s) on each at a time" % (ME, n, " ".join(x[0] for x in g.gpus), share), flush=True)
    with ThreadPoolExecutor(max_workers=n * share, thread_name_prefix="gpu") as pool:
        wait_all([pool.submit(_worker, g, w, ready, share) for w in range(n * share)])


def gpus_free(g: Grading, stop: Stop) -> None:
    """With --share N > 1 (not --host-only): every GPU free before the first cell (the cells no longer
    wait for one); else nothing. Grader.grade asks before the previous run's files in --out go, so
    that this refusal, like the others, leaves --out as it was."""
    if g.o.share <= 1 or g.o.host_only:
        return
    gpus: list[tuple | None] = list(g.gpus) or [None]
    for x in gpus:
        busy = gpus_.wait_free(x[1] if x else "")
        if busy:
            stop.die(3, "the GPU%s is in use by another program (%s); --share needs it free (nothing graded)"
                     % (" " + x[0] if x else "", busy))


def _grade_again_alone(g: Grading, todo: list[Cell]) -> None:
    """After a shared pass: each cell that did not pass everything graded again, alone on its GPU."""
    again = [c for c in todo if runfolder.again_alone(c)]
    if again and not g.stop_reasons:
        print("%s: %d cell(s) did not pass everything while sharing a GPU: grading each again, alone on its GPU" % (ME, len(again)), flush=True)
        assert g.progress is not None
        g.progress.todo += len(again)
        run_workers(g, Ready(g, again), 1)


def grade_cells(g: Grading, folder: RunFolder, todo: list[Cell], stop: Stop) -> None:
    """Compiles and grades TODO; a cell left without a result gets a row that says why. Ends with
    run-info.txt's line of the time a cell took."""
    o = g.o
    print("%s: compiling %d cells, %d at a time, each in its sandbox; checks start as cells are ready" % (ME, len(todo), o.jobs), flush=True)
    if not o.host_only:
        machine = len(gpus_.listed() or []) or 1
        g.box.cpus = cpus_.split([x[0] for x in g.gpus] or ["0"], machine, o.share)  # (without --gpus: the first)
        folder.info(cpus_.info(g.box.cpus, machine, o.share))
    ready = Ready(g, todo)
    compiler = ThreadPoolExecutor(max_workers=1, thread_name_prefix="compiler")
    compiling = compiler.submit(compile_all, g, todo, ready)
    compiler.shutdown(wait=False)
    if wait_judges(g.course) != 0:
        tail(g.course.log)
        stop.die(1, "could not build the course's checks, the judges (see %s); nothing graded" % g.course.log)
    folder.info(info_line(g.course))
    log = os.path.join(folder.out, "progress.log" if folder.slice_k is None else "progress-slice-%d.log" % folder.slice_k)
    g.progress = Progress(log, len(todo))
    with open(log, "a") as f:
        f.write("%s grading %d cells on %s (log of one line per cell: %s)\n" % (now_utc(), len(todo), socket.gethostname(), log))
    holder = gpu_hold.Holder([x[1] for x in g.gpus] if not o.host_only else [])
    if holder.uuids:
        folder.info(gpu_hold.info(holder.uuids, holder.start()))
    try:
        run_workers(g, ready, o.share)
        if o.share > 1:  # a cell that did not pass everything is graded again, alone on its GPU
            _grade_again_alone(g, todo)
    finally:
        holder.stop()
    wait_all([compiling])
    runfolder.finish_not_graded(todo, "; ".join(g.stop_reasons[k] for k in sorted(g.stop_reasons)))
    folder.info(runfolder.timing_line(o, folder.cells, g.box.sandbox_s))
    if not o.host_only:
        folder.info(gpus_.stats_line())
