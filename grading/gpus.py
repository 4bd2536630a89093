"""The GPUs, as nvidia-smi (read outside every sandbox) lists them; and what holds a GPU, asked of
NVML (the library nvidia-smi reads) in the grader's own process where it loads, else of nvidia-smi."""
from __future__ import annotations

import ctypes
import re
import subprocess
import threading
import time
from typing import Callable


def smi(*args: str) -> str | None:
    """nvidia-smi's output, or None when it cannot run or fails."""
    try:
        p = subprocess.run(["nvidia-smi"] + list(args), capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return p.stdout.decode("utf-8", "replace")


def first_line_of_list() -> tuple[bool, str]:
    """nvidia-smi -L: (ok, first line said)."""
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    text = (p.stdout + p.stderr).decode("utf-8", "replace")
    ok = p.returncode == 0 and re.search(r"^GPU [0-9]", text, re.M) is not None
    return ok, (text.splitlines() or [""])[0]


def listed() -> list[tuple[str, str, str]] | None:
    """[(index, uuid, minor)] of every GPU; minor from the driver's /proc entry of its PCI address
    (nvidia-smi has no field for it), else the index. None when nvidia-smi cannot list them."""
    out = smi("--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader")
    if out is None:
        return None
    gpus = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 3:
            continue
        i, u, bus = parts[:3]
        bus = bus.lower()[-12:]
        minor = i
        try:
            with open("/proc/driver/nvidia/gpus/%s/information" % bus) as f:
                m = re.search(r"^Device Minor:\s*(\S+)", f.read(), re.M)
                if m:
                    minor = m.group(1)
        except OSError:
            pass
        gpus.append((i, u, minor))
    return gpus


def choose(arg: str, gpus: list[tuple[str, str, str]], visible_env: str) -> list[tuple[str, str, str]]:
    """--gpus ARG ('all' or I,J,...) -> [(index, uuid, minor)]; raises ValueError with the reason."""
    if arg == "all":
        want = [w for w in visible_env.split(",") if w] if visible_env else [g[0] for g in gpus]
    else:
        want = arg.split(",")
    chosen = []
    for w in want:
        g = next((g for g in gpus if w in (g[0], g[1])), None)
        if g is None:
            raise ValueError("--gpus: no GPU '%s' (nvidia-smi lists: %s)" % (w, " ".join(x[0] for x in gpus)))
        if g in chosen:
            raise ValueError("--gpus: GPU %s given twice" % g[0])
        chosen.append(g)
    if not chosen:
        raise ValueError("--gpus: no GPU to grade on")
    return chosen


class _ProcessInfo(ctypes.Structure):  # nvmlProcessInfo_t (v2 and v3)
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong), ("gpuInstanceId", ctypes.c_uint),
                ("computeInstanceId", ctypes.c_uint)]


class Nvml:
    """NVML through ctypes, loaded once: the compute processes of a GPU in about a millisecond,
    where an nvidia-smi process took tens to hundreds of milliseconds, three times a cell on the
    GPUs' critical path. Anything it cannot answer (no library, an error, a UUID it does not know,
    more processes than it asked room for) is None, and nvidia-smi answers instead."""

    NOT_AVAILABLE = (1 << 64) - 1

    def __init__(self, library: str = "libnvidia-ml.so.1") -> None:
        self.library = library
        self.lib: ctypes.CDLL | None = None
        self.tried = False
        self.lock = threading.Lock()

    def _load(self) -> ctypes.CDLL | None:
        if not self.tried:
            self.tried = True
            try:
                lib = ctypes.CDLL(self.library)
                if lib.nvmlInit_v2() == 0:
                    self.lib = lib
            except (OSError, AttributeError):
                self.lib = None
        return self.lib

    def _handles(self, lib: ctypes.CDLL, uuid: str) -> list[ctypes.c_void_p] | None:
        if uuid:
            h = ctypes.c_void_p()
            return [h] if lib.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(h)) == 0 else None
        n = ctypes.c_uint()
        if lib.nvmlDeviceGetCount_v2(ctypes.byref(n)) != 0:
            return None
        handles = [ctypes.c_void_p() for _ in range(n.value)]
        if any(lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) != 0 for i, h in enumerate(handles)):
            return None
        return handles

    def _name(self, lib: ctypes.CDLL, pid: int) -> str:
        buf = ctypes.create_string_buffer(256)
        return buf.value.decode("utf-8", "replace") if lib.nvmlSystemGetProcessName(pid, buf, 256) == 0 else "?"

    def in_use(self, uuid: str = "") -> str | None:
        """As in_use() says, or None when NVML cannot answer."""
        with self.lock:
            lib = self._load()
            if lib is None:
                return None
            handles = self._handles(lib, uuid)
            if handles is None:
                return None
            said = []
            for h in handles:
                infos = (_ProcessInfo * 64)()
                count = ctypes.c_uint(64)
                if lib.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(count), infos) != 0:
                    return None  # (an error, or more than 64 processes: nvidia-smi lists them)
                for p in infos[:count.value]:
                    if ours(p.pid):
                        continue
                    mem = "[N/A]" if p.usedGpuMemory == self.NOT_AVAILABLE else "%d MiB" % (p.usedGpuMemory >> 20)
                    said.append("%d, %s, %s" % (p.pid, self._name(lib, p.pid), mem))
            return " ".join(said[:3])


nvml = Nvml()
held_pids: set[int] = set()  # the grader's own processes that hold a GPU open (grading/gpu_hold.py): not "in use"
# The grader's own steps that run beside a cell's on its GPU (the judge of the cell before, which runs
# the course's code only: grading/overlap.py): not "in use" either.
beside_pids: set[int] = set()


def ours(pid: int | None) -> bool:
    """Whether PID is one of the grader's own processes on a GPU (held_pids, beside_pids)."""
    return pid is not None and (pid in held_pids or pid in beside_pids)


def beside() -> Callable[[int | None], None]:
    """What run.run_step tells of a step of the grader's own that runs beside a cell's (its STARTED):
    its process is in beside_pids while it runs."""
    def told(pid: int | None) -> None:
        if pid is not None:
            mine.append(pid)
            beside_pids.add(pid)
        else:
            for p in mine:
                beside_pids.discard(p)
    mine: list[int] = []
    return told
_stats_lock = threading.Lock()
stats = {"checks": 0, "seconds": 0.0, "waited": 0, "nvidia_smi": 0}  # what the checks of free GPUs cost this run


def in_use(uuid: str = "") -> str:
    """What holds the GPU (compute processes; with UUID, on that GPU), '' when it is free: NVML's
    answer, or nvidia-smi's where NVML cannot answer."""
    said = nvml.in_use(uuid)
    if said is not None:
        return said
    with _stats_lock:
        stats["nvidia_smi"] += 1
    out = smi("--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader") or ""
    lines = [l for l in out.splitlines() if l.strip() and (not uuid or uuid in l) and not ours(_pid(l))]
    return " ".join(l.split(",", 1)[1].strip() if "," in l else l for l in lines[:3])


def _pid(line: str) -> int | None:
    """The process id of a line of nvidia-smi --query-compute-apps=gpu_uuid,pid,...."""
    fields = line.split(",")
    return int(fields[1]) if len(fields) > 1 and fields[1].strip().isdigit() else None


def wait_free(uuid: str = "", seconds: float = 20) -> str:
    """'' once the GPU is free (up to SECONDS), else what holds it. A process that just ended can
    still be listed for a moment: asked again after 0.05 s, then in longer naps up to 0.5 s."""
    t0 = time.monotonic()
    busy = ""
    nap = 0.05
    try:
        while True:
            busy = in_use(uuid)
            if not busy or time.monotonic() - t0 >= seconds:
                return busy
            with _stats_lock:
                stats["waited"] += 1
            time.sleep(nap)
            nap = min(0.5, nap * 2)
    finally:
        with _stats_lock:
            stats["checks"] += 1
            stats["seconds"] += time.monotonic() - t0


def stats_line() -> str:
    """run-info.txt's line of what the checks that a GPU is free cost this run."""
    with _stats_lock:
        s = dict(stats)
    return ("GPU-free checks: %d, %.1f s in all; %d asked again (a process still listed); %d answered by nvidia-smi, the others by NVML."
            % (s["checks"], s["seconds"], s["waited"], s["nvidia_smi"]))
