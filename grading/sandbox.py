"""The sandbox: the command line that runs a command in a cell's bubblewrap, and what it needs.

A cell's sandbox shows the system read-only, the course without its solutions (the student pack's
tree: the course view) and the prebuilt libraries, the cell's own box (writable only while
compiling) and nothing else of the course, the submissions or the grader's output (each hidden
under an empty tmpfs). It has no network, a private /tmp and /dev/shm of --scratch-mib each, its
own PID namespace (nothing it starts outlives it), its own user id when the grader runs as root
(setpriv), limits on file size, core dumps and processes (prlimit), and reports to the grader
through --json-status-fd whether it started the command: a failure to start is told apart from
what the submission prints without reading anything the submission wrote.
"""
from __future__ import annotations

import fcntl
import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Iterable, Sequence

UID_FIRST = 100000  # cell user ids: UID_FIRST + SLOT_SIZE * slot + cell number (1 .. SLOT_SIZE - 1)
SLOT_SIZE = 10000
SLOTS = 10
WITNESS_JUDGE = "/course-check"  # where the speed witness's sandbox shows the course's own check
# Every step that runs CUDA, sandboxed or not (the judge too): one hardware work queue per context.
# The course's checks launch on the default stream only, so nothing they time changes; a context
# then starts in about half the time (0.055 s against 0.115 s on an H200, results/h200/two-gpus/README.md).
CUDA_ENV = {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}
PASSENV = ("PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")


@dataclass
class Config:
    """What every cell's sandbox shares."""
    no_sandbox: bool = False
    as_root: bool = True
    host_only: bool = False
    file_mib: int = 1024
    scratch_mib: int = 256
    procs: int = 64
    ro_dirs: list = field(default_factory=list)    # system folders, read-only (a link is made a link)
    links: dict = field(default_factory=dict)      # ro_dirs entries that are links: path -> target
    dev_nodes: list = field(default_factory=list)  # /dev/nvidia*
    hide: list = field(default_factory=list)       # the course, the submissions, --out, /root, /home
    view: str = ""
    prebuilt: str = ""
    extra_ro: list = field(default_factory=list)   # CMAKE_PREFIX_PATH folders given with -D
    hidden: str = ""              # --hidden-shapes file, shown as /hidden-shapes.txt
    env: dict = field(default_factory=dict)        # PASSENV values of the grader's environment


def cell_uid(uid_base: int, cell_number: int) -> int:
    """A cell's user id; never outside its slot's range."""
    if not 1 <= cell_number < SLOT_SIZE:
        raise ValueError("cell number %d outside 1..%d: a run grades at most %d cells"
                         % (cell_number, SLOT_SIZE - 1, SLOT_SIZE - 1))
    return uid_base + cell_number


def command(cfg: Config, role: str, box: str, uid: int | None = None, gpu_uuid: str = "", gpu_minor: str = "",
            nproc_base: int = 0, status_fd: str | None = None, data_mib: int = 0, judge: str = "") -> list[str]:
    """The prefix that runs a command in a cell's sandbox. ROLE compile: BOX writable; run: read-only.
    JUDGE: the course's own check of the cell's lesson, shown read-only as WITNESS_JUDGE (the speed
    witness, grading/witness.py; only in that step: a runner never sees the course's compiled code).
    UID: the cell's user (as root); NPROC_BASE: not root, the processes this user already has (the
    limit is that plus --procs). STATUS_FD: bwrap's --json-status-fd. DATA_MIB: RLIMIT_DATA of every
    process in it (0: none), a hard stop beside the grader's watchdog on resident memory."""
    mib = 1024 * 1024
    if cfg.no_sandbox:  # with --gpus, the cell's GPU is still the only one it is shown
        pre = ["prlimit", "--data=%d" % (data_mib * mib), "--"] if data_mib else []
        cuda = ["%s=%s" % kv for kv in CUDA_ENV.items()] if not cfg.host_only else []
        return pre + (["env", "CUDA_VISIBLE_DEVICES=" + gpu_uuid] + cuda if gpu_uuid else [])
    sb = ["prlimit", "--core=0", "--fsize=%d" % (cfg.file_mib * mib)]
    if data_mib:
        sb.append("--data=%d" % (data_mib * mib))
    if cfg.as_root:
        sb += ["--nproc=%d" % cfg.procs, "--", "setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"]  # type: ignore[str-format]
    else:
        sb += ["--nproc=%d" % (nproc_base + cfg.procs), "--"]
    sb += ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]
    if status_fd is not None:
        sb += ["--json-status-fd", str(status_fd)]
    for d in cfg.ro_dirs:
        if d in cfg.links:
            sb += ["--symlink", cfg.links[d], d]
        else:
            sb += ["--ro-bind", d, d]
    sb += ["--ro-bind", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev"]
    for d in cfg.dev_nodes:  # with --gpus: of the GPUs' own nodes (/dev/nvidiaN), the cell's GPU's alone
        if gpu_minor != "" and re.fullmatch(r"/dev/nvidia[0-9]+", d) and d != "/dev/nvidia%s" % gpu_minor:
            continue
        sb += ["--dev-bind", d, d]
    size = str(cfg.scratch_mib * mib)
    sb += ["--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    sb += ["--size", size, "--tmpfs", "/tmp"]
    for d in cfg.hide:
        sb += ["--tmpfs", d]
    sb += ["--ro-bind", cfg.view, cfg.view, "--ro-bind", cfg.prebuilt, cfg.prebuilt]
    for d in cfg.extra_ro:
        sb += ["--ro-bind", d, d]
    sb += ["--bind" if role == "compile" else "--ro-bind", box, box]
    if cfg.hidden:
        sb += ["--ro-bind", cfg.hidden, "/hidden-shapes.txt"]
    if judge:
        sb += ["--ro-bind", judge, WITNESS_JUDGE]
    for d in cfg.hide + ["/"]:  # writable: /tmp, /dev/shm (both capped) and a compiling BOX
        sb += ["--remount-ro", d]
    for v in PASSENV:
        if gpu_uuid and v == "CUDA_VISIBLE_DEVICES":
            continue
        if cfg.env.get(v):
            sb += ["--setenv", v, cfg.env[v]]
    if gpu_uuid:
        sb += ["--setenv", "CUDA_VISIBLE_DEVICES", gpu_uuid]
    sb += ["--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--chdir", "/tmp"]
    if not cfg.host_only:
        sb += ["--setenv", "COURSE_REQUIRE_GPU", "1"] + [a for k, v in CUDA_ENV.items() for a in ("--setenv", k, v)]
    return sb + ["--"]


def hide_list(paths: Iterable[str]) -> list[str]:
    """Folders to hide, shortest first (a parent's tmpfs before a child's), without repeats."""
    seen = []
    for p in sorted(paths, key=len):
        if p not in seen:
            seen.append(p)
    return seen


def system_dirs(tools: Sequence[str] = ("cmake", "ninja", "nvcc", "compute-sanitizer", "cuobjdump", "c++"),
                paths: Sequence[str] = ()) -> tuple[list[str], dict[str, str]]:
    """The read-only system folders, and the prefixes of tools installed outside them (TOOLS found
    on PATH, PATHS given as absolute paths of programs). Returns (ro_dirs, links)."""
    ro = [d for d in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt") if os.path.lexists(d)]
    links = {d: os.readlink(d) for d in ro if os.path.islink(d)}
    covered = lambda p: any((p + "/").startswith(d + "/") for d in ro)
    for tool in list(tools) + [p for p in paths if p]:
        p = shutil.which(tool)
        if not p:
            continue
        p = os.path.dirname(os.path.dirname(os.path.realpath(p)))
        if not covered(p):
            ro.append(p)
    return ro, links


def prefix_dirs(cmake_defs: Iterable[str]) -> list[str]:
    """Folders of -DCMAKE_PREFIX_PATH=... and -Ddoctest_DIR=... that a compile must see."""
    out = []
    for d in cmake_defs:
        m = re.match(r"-D(CMAKE_PREFIX_PATH|doctest_DIR)(:[A-Z]+)?=(.*)", d)
        if not m:
            continue
        for p in re.split(r"[;:]", m.group(3)):
            if p and os.path.isdir(p):
                out.append(os.path.realpath(p))
    return out


class Slot:
    """One of ten slots of cell user ids per machine (a lock in /tmp, shared with any other
    grader run): a run's cells are UID_FIRST + SLOT_SIZE * slot + 1 ... + SLOT_SIZE - 1."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self.base = UID_FIRST

    def take(self) -> bool:
        """Takes the first free slot (its lock held while the grader runs); False when all ten are taken."""
        for slot in range(SLOTS):
            fd = os.open("/tmp/.course-grade-slot-%d.lock" % slot, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.fd, self.base = fd, UID_FIRST + SLOT_SIZE * slot
            return True
        return False
