"""The GPUs, as nvidia-smi (read outside every sandbox) lists them."""
from __future__ import annotations

import re
import subprocess
import time


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


def in_use(uuid: str = "") -> str:
    """What holds the GPU (compute processes; with UUID, on that GPU), '' when it is free."""
    out = smi("--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader") or ""
    lines = [l for l in out.splitlines() if l.strip() and (not uuid or uuid in l)]
    return " ".join(l.split(",", 1)[1].strip() if "," in l else l for l in lines[:3])


def wait_free(uuid: str = "", seconds: float = 20) -> str:
    """'' once the GPU is free (up to SECONDS), else what holds it."""
    busy = ""
    for _ in range(int(seconds * 2)):
        busy = in_use(uuid)
        if not busy:
            return ""
        time.sleep(0.5)
    return busy
