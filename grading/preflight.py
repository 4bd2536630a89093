"""Before anything is built: a usable GPU (unless --host-only or --slurm), the GPUs --gpus names,
and a sandbox that starts here (bubblewrap, and setpriv as root), with the tools a run needs. Each
missing piece is said at once, and nothing is graded (exit 3: no GPU or no sandbox)."""
from __future__ import annotations

import os
import shutil
import subprocess

from . import gpus as gpus_
from . import sandbox
from .exits import Stop, usage_error
from .names import visible
from .options import Options

Gpu = tuple  # (index, uuid, minor) of one GPU --gpus names (gpus.choose)

NO_GPU = "grading runs the GPU checks, so run it on a machine with an NVIDIA GPU (nothing graded)"


def check_gpu(o: Options, stop: Stop) -> list[Gpu]:
    """A GPU nvidia-smi lists; the GPUs of --gpus ([] without it)."""
    if not o.host_only and not o.slurm:
        if shutil.which("nvidia-smi") is None:
            stop.die(3, "no usable GPU: nvidia-smi not found; " + NO_GPU)
        ok, first = gpus_.first_line_of_list()
        if not ok:
            stop.die(3, "no usable GPU: nvidia-smi -L says '%s'; %s" % (visible(first), NO_GPU))
    if not o.gpus:
        return []
    listed = gpus_.listed()
    if listed is None:
        stop.die(3, "--gpus: nvidia-smi cannot list the GPUs (nothing graded)")
    try:
        return list(gpus_.choose(o.gpus, listed, os.environ.get("CUDA_VISIBLE_DEVICES", "")))
    except ValueError as e:
        usage_error(str(e))


def _bwrap_starts(as_root: bool, uid: int) -> tuple[int, str]:
    """bwrap's exit code and output for an empty command in every namespace (as UID, as root)."""
    pre = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"] if as_root else []
    try:
        p = subprocess.run(pre + ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc",
                                  "--dev", "/dev", "true"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
        return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return 1, str(e)


def _bwrap_version(as_root: bool, uid: int, stop: Stop) -> str:
    if shutil.which("bwrap") is None:
        stop.die(3, "no sandbox: bubblewrap (bwrap) not found; install it (Debian/Ubuntu: apt install bubblewrap), or grade without one with --no-sandbox (nothing graded)")
    if as_root and shutil.which("setpriv") is None:
        stop.die(3, "no sandbox: setpriv (util-linux) not found, needed to run cells as users of their own (nothing graded)")
    rc, why = _bwrap_starts(as_root, uid)
    if rc != 0:
        stop.die(3, "no sandbox: bubblewrap cannot create its namespaces here (%s); user namespaces may be off (sysctl kernel.unprivileged_userns_clone, AppArmor, a container), or grade without one with --no-sandbox (nothing graded)"
                 % visible((why.splitlines() or [""])[0]))
    v = subprocess.run(["bwrap", "--version"], capture_output=True, stdin=subprocess.DEVNULL)
    return (v.stdout.decode("utf-8", "replace").splitlines() or ["bwrap"])[0]


def check_sandbox(o: Options, as_root: bool, slot: sandbox.Slot, stop: Stop) -> str:
    """The sandbox's version ("none" without one), after taking this run's slot of user ids (as
    root); the tools every run needs. Sets --jobs' default (half the CPU cores)."""
    if o.share > 1 and (not as_root or o.no_sandbox):
        usage_error("--share needs root and the sandbox: cells that share a GPU are told apart by their own user ids")
    if as_root and not o.no_sandbox and not slot.take():
        stop.die(1, "ten grade.sh runs are already going on this machine; wait for one to end")
    version = "none"
    if not o.no_sandbox and not o.slurm:
        version = _bwrap_version(as_root, slot.base, stop)
    if not o.slurm:
        for tool in ("cmake", "prlimit"):
            if shutil.which(tool) is None:
                stop.die(1, "'%s' not found" % tool)
        if o.sanitize and shutil.which("compute-sanitizer") is None:
            stop.die(1, "--sanitize needs compute-sanitizer (part of the CUDA toolkit) on PATH")
    if not o.jobs:
        o.jobs = max(1, (os.cpu_count() or 2) // 2)
    return version
