"""Progress: one line per cell graded, on the console and in the progress log, with the count of
cells done, the time since grading began and an estimate of the time left."""
from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

from .exits import ME
from .names import visible


def hms(t: float) -> str:
    t = int(t)
    return "%dh%02dm" % (t // 3600, t % 3600 // 60) if t >= 3600 else "%dm%02ds" % (t // 60, t % 60)


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Progress:
    """The cells done of TODO in this run; LOG the progress log."""

    def __init__(self, log: str, todo: int) -> None:
        self.log, self.todo = log, todo
        self.done = 0
        self.t0 = time.time()
        self.lock = threading.Lock()

    def line(self, line: str) -> None:
        """LINE after the count of cells done in this run, the time since grading began and an
        estimate of the time left; on the console and in the progress log."""
        line = visible(line)  # (names are shown escaped already; a judge's or a log's text too)
        with self.lock:
            self.done += 1
            n = self.done
            el = time.time() - self.t0
            left = ", about %s left" % hms(el * (self.todo - n) / n) if n < self.todo else ""
            print("%s: [%d/%d, %s%s] %s" % (ME, n, self.todo, hms(el), left, line), flush=True)
            with open(self.log, "a", encoding="utf-8") as f:
                f.write("%s [%d/%d] %s\n" % (now_utc(), n, self.todo, line))
