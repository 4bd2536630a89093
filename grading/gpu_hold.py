"""Each grading GPU held open while its cells are graded.

Every step of a cell that touches the GPU is a process of its own (the run, the judge, the memcheck
subset, the speed witness), and each starts CUDA afresh. Measured on two H200s
(results/h200/two-gpus/README.md): while no other process has the GPU open, cuInit took about
0.13 s and is serialized between processes, so two GPUs' steps that start at once wait for each
other. A process of the grader's own that keeps a context open on the GPU for the whole run (it
does nothing else: no memory beyond the context's, no kernel) brings cuInit to about 0.025 s.

The holder is the course's process, outside every sandbox; the checks that a GPU is free
(grading/gpus.py) do not count it. If that cannot be told (NVML shows the holder under another
process id, as in some containers) or CUDA does not start in it, the GPUs are not held and
run-info.txt says why: grading goes on as before.
"""
from __future__ import annotations

import os
import select
import subprocess
import sys

from . import gpus as gpus_

START_LIMIT_S = 30
# Python's ctypes on the driver's library: a context, then nothing until the grader closes stdin.
HOLD = r"""
import ctypes, sys
cuda = ctypes.CDLL("libcuda.so.1")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
if cuda.cuInit(0) or cuda.cuDeviceGet(ctypes.byref(dev), 0) or cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev):
    sys.exit(3)
sys.stdout.write("held\n")
sys.stdout.flush()
sys.stdin.buffer.read()
"""


class Holder:
    """One holding process per GPU UUID; start() says why not, stop() ends them."""

    def __init__(self, uuids: list[str], script: str = HOLD) -> None:
        self.uuids = uuids
        self.script = script
        self.procs: list[subprocess.Popen] = []

    def _start_one(self, uuid: str) -> str:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=uuid)
        p = subprocess.Popen([sys.executable, "-c", self.script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env, close_fds=True)
        self.procs.append(p)
        assert p.stdout is not None
        ready, _, _ = select.select([p.stdout], [], [], START_LIMIT_S)
        said = p.stdout.readline() if ready else b""
        if said != b"held\n":
            try:  # (its output ended: it is ending, and its exit code comes a moment later)
                rc = p.wait(timeout=2) if ready else p.poll()
            except subprocess.TimeoutExpired:
                rc = None
            return "CUDA did not start in the holding process (exit %s)" % rc
        gpus_.held_pids.add(p.pid)
        busy = gpus_.in_use(uuid)
        if busy:
            return "the check that the GPU is free still sees a process (%s)" % busy
        return ""

    def start(self) -> str:
        """Holds every GPU: '' when each is held, else why not (and none is held)."""
        for uuid in self.uuids:
            why = self._start_one(uuid)
            if why:
                self.stop()
                return "GPU %s: %s" % (uuid, why)
        return ""

    def stop(self) -> None:
        for p in self.procs:
            try:
                if p.stdin is not None:
                    p.stdin.close()
                p.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                p.kill()
                p.wait()
            finally:
                if p.stdout is not None:
                    p.stdout.close()
                gpus_.held_pids.discard(p.pid)
        self.procs = []


def info(uuids: list[str], why: str) -> str:
    """run-info.txt's line on the holding processes."""
    if why:
        return "GPUs not held open between steps (%s): each step started CUDA on its own." % why
    return ("GPUs held open between steps: one idle process of the grader's on each (%s), so that a step's CUDA starts"
            " faster; the checks that a GPU is free do not count it." % " ".join(uuids))
