"""How the grader stops: ME (its name in every message), Exit (an exit code and what to say, raised
up to cli.main) and Stop.die (said at once: every step killed, the process ended)."""
from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from typing import Callable, NoReturn

from . import run

ME = "grade.sh"


class Exit(Exception):
    """Ends the run with CODE, after MESSAGE (on stdout for 0, else on stderr)."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def usage_error(msg: str) -> NoReturn:
    """A bad command line: exit 2."""
    raise Exit(2, "%s: %s; see --help" % (ME, msg))


@dataclass
class Stop:
    """Where a run that must stop says why: SLICE (--slice K/N, a Slurm task) and OUT (--out,
    once known)."""
    slice: str = ""
    out: str = ""
    before_exit: Callable[[], None] | None = None  # (a new run not grading yet: --out's previous files put back)

    def die(self, code: int, message: str) -> NoReturn:
        """Says why nothing (more) is graded and exits; a Slurm task also leaves the reason where the
        gradebook job finds it."""
        print("%s: %s" % (ME, message), file=sys.stderr, flush=True)
        run.kill_everything()
        self.undo()
        if self.slice and self.out and os.path.isfile(os.path.join(self.out, "cells", ".made-by-grade.sh")):
            try:
                with open(os.path.join(self.out, "cells", ".slice-%s.why" % self.slice.split("/")[0]), "w") as f:
                    f.write("task %s on %s: %s\n" % (self.slice, socket.gethostname(), message))
            except OSError:
                pass
        sys.stdout.flush()
        os._exit(code)

    def undo(self) -> None:
        """before_exit, once (a failure in it is said, never raised)."""
        undo, self.before_exit = self.before_exit, None
        if undo is not None:
            try:
                undo()
            except OSError as e:
                print("%s: could not put --out's previous files back (%s): they are in %s/.previous-run"
                      % (ME, e, self.out), file=sys.stderr, flush=True)
