"""One GPU's cells one after another, with each cell's judge beside the next cell's run.

The judge runs the course's own code only, and nothing of a grade is timed in it or in the runner
(the speed witness times what a grade uses, alone on the GPU). So while cell N+1 runs, the judge of
cell N runs beside it on the same GPU; then cell N's memcheck subset and speed witness run, each
alone on the GPU as before, and cell N is finished. A cell's time on its GPU's critical path falls
from run + judge + memcheck + witness to about max(run, previous judge) + memcheck + witness.

What holds:
  - the verdict still comes from the judge alone, outside the sandbox;
  - no two steps that run a submission's code ever share the GPU (a run, the memcheck subset, the
    sanitizers, the witness), and the witness runs alone on it;
  - a hostile run beside a judge cannot buy its neighbour a grade, only cost it one (the GPU's
    memory taken, say): a verdict that is not a full pass is judged again, alone on the GPU, and
    that verdict is the one that counts (Judged.passed);
  - the checks that the GPU is free leave out the judge's process (gpus.beside_pids) while it runs;
    once a step finds the GPU not the grader's (the worker's stop), the cell whose memcheck and
    witness have not run yet is left not graded, with the reason, as the cells after it are.
Only with --share 1 (default) on a GPU; --share N and --host-only grade one cell after another."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from . import gpus as gpus_
from .cell_grade import CellRun, Judged, apply_judge, end_cell, judge_once, layer_judge, start_cell
from .context import Grading
from .runfolder import Cell

if TYPE_CHECKING:
    from .scheduler import Ready

SayError = Callable[[Cell, Exception], None]  # records a grader error in one cell (the worker goes on)


@dataclass
class Judging:
    """The judge of one cell, in a thread of its own, beside the next cell's run."""
    r: CellRun
    out: list[Judged] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self, g: Grading) -> "Judging":
        told = gpus_.beside()
        self.thread = threading.Thread(target=lambda: self.out.append(judge_once(g, self.r, told)),
                                       name="judge", daemon=True)
        self.thread.start()
        return self

    def join(self) -> float:
        """Waits for the judge; the seconds waited."""
        t = time.monotonic()
        assert self.thread is not None
        self.thread.join()
        return time.monotonic() - t


def judged(g: Grading, j: Judging) -> None:
    """The cell's judge joined, and taken when a full pass; else the cell judged again, alone."""
    waited = j.join()
    r = j.r
    first = j.out[0] if j.out else Judged(findings=["the judge did not finish (its thread ended without a verdict): grader error"])
    r.judge_s = first.seconds
    r.judge_beside_s = max(0.0, first.seconds - waited)
    out = first
    if not first.passed():
        r.judged_again = True
        out = judge_once(g, r)
        r.judge_s += out.seconds
    apply_judge(r, out)
    r.marks.append(time.monotonic())


def finish_pending(g: Grading, j: Judging, stop: str | None) -> str | None:
    """The pending cell finished (its judge joined; without STOP, its other layers), or left not
    graded once its GPU is not the grader's. Returns the reason its worker must stop, else None."""
    if stop is not None:
        j.join()  # (left not graded: runfolder.finish_not_graded says why)
        return stop
    judged(g, j)
    return end_cell(g, j.r)


def worker(g: Grading, gpu: tuple | None, ready: Ready, say_error: SayError) -> str | None:
    """Grades READY's cells on GPU, each judge beside the next cell's run. SAY_ERROR(cell, exception)
    records a grader error in one cell. Returns why the worker stopped early, else None."""
    pending: Judging | None = None
    stop: str | None = None
    while stop is None:
        if pending is not None and not ready.any_compiled():  # nothing to run beside it: finish it now
            stop = _guarded(finish_pending, g, pending, None, say_error)
            pending = None
            continue
        c: Cell | None = ready.take()
        if c is None:
            break
        r: CellRun | None = None
        try:
            r, stop = start_cell(g, c, gpu, 1)
        except Exception as e:  # a grader error in one cell: said there, the others go on
            say_error(c, e)
        # The GPU is not the grader's any more when a cell that was built stops the worker (the GPU
        # in use before it, or after its run); the compiling that stopped leaves the GPU as it was.
        lost = stop if stop is not None and c.compiled.is_set() else None
        stop = _guarded(finish_pending, g, pending, lost, say_error) or stop
        pending = None
        if r is not None:
            if stop is None:
                pending = Judging(r).start(g)
            else:  # (the cell that found its GPU busy after its run: judged and finished as before)
                _guarded(_alone, g, Judging(r), None, say_error)
    if pending is not None:
        stop = _guarded(finish_pending, g, pending, stop, say_error) or stop
    return stop


def _alone(g: Grading, j: Judging, _stop: str | None) -> str | None:
    """J's cell judged and finished one step after another, as grade_cell does."""
    layer_judge(g, j.r)
    return end_cell(g, j.r)


def _guarded(f: Callable[[Grading, Judging, str | None], str | None], g: Grading, j: Judging | None, stop: str | None,
             say_error: SayError) -> str | None:
    """F(G, J, STOP); a grader error in J's cell is said there (the worker goes on)."""
    if j is None:
        return None
    try:
        return f(g, j, stop)
    except Exception as e:
        if j.thread is not None:
            j.thread.join()
        say_error(j.r.cell, e)
        return None
