"""CPUs of their own for the GPUs' steps. While the cells compile (16 at a time on a 32-CPU
machine), a cell's checks on its GPU (the run, the judge, the memcheck subset, the speed witness:
processes that also work on the CPU) shared CPU cores with the compilers: on two H200s a cell's
checks took 10% longer while compiles ran beside them, and with two GPUs the compiles run beside
more of the checks. So, where the machine has cores enough, the GPUs' steps run on whole cores
(both hardware threads of each) kept for them, PER_GPU_WORKER logical CPUs for each GPU worker,
and the compiles and the CPU work beside them (lint, static facts) on the other cores, with
taskset; the compiles keep at least half the cores. Elsewhere nothing is pinned."""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable

PER_GPU_WORKER = 4  # logical CPUs kept for each GPU worker's steps (one step at a time, a few threads)


def _siblings(cpu: int) -> str:
    """The logical CPUs of CPU's core, as the kernel lists them ('' when it does not say)."""
    try:
        with open("/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % cpu) as f:
            return f.read().strip()
    except OSError:
        return ""


def _parse(text: str) -> set[int]:
    """'0-3,8' -> {0, 1, 2, 3, 8}."""
    out: set[int] = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def cores(allowed: set[int], siblings: Callable[[int], str] = _siblings) -> list[list[int]]:
    """The cores of the ALLOWED CPUs, each the sorted list of its allowed logical CPUs, in order."""
    seen: dict[tuple[int, ...], list[int]] = {}
    for cpu in sorted(allowed):
        core = tuple(sorted(_parse(siblings(cpu)) & allowed)) or (cpu,)
        seen.setdefault(core, list(core))
    return sorted(seen.values())


def text(cpus: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5' (taskset -c)."""
    out: list[str] = []
    for c in sorted(cpus):
        if out and int(out[-1].split("-")[-1]) == c - 1:
            out[-1] = "%s-%d" % (out[-1].split("-")[0], c)
        else:
            out.append(str(c))
    return ",".join(out)


def split(workers: int, allowed: set[int] | None = None, siblings: Callable[[int], str] = _siblings) -> tuple[str, str] | None:
    """(the GPUs' CPUs, the compiles' CPUs) as taskset lists for WORKERS GPU workers: the last whole
    cores holding PER_GPU_WORKER logical CPUs for each worker; None when the compiles would keep
    less than half the cores, or there is no taskset."""
    if workers < 1 or shutil.which("taskset") is None:
        return None
    all_cores = cores(allowed if allowed is not None else os.sched_getaffinity(0), siblings)
    kept: list[list[int]] = []
    while all_cores and sum(len(c) for c in kept) < PER_GPU_WORKER * workers:
        kept.insert(0, all_cores.pop())
    if not kept or len(all_cores) < len(kept):
        return None
    return text([c for core in kept for c in core]), text([c for core in all_cores for c in core])


def info(pinned: tuple[str, str] | None, workers: int) -> str:
    """run-info.txt's line of the CPUs."""
    if pinned is None:
        return "CPUs: not pinned (too few cores to keep %d logical CPUs for each of %d GPU worker(s) and half for the compiles, or no taskset)." % (PER_GPU_WORKER, workers)
    return ("CPUs: the GPUs' steps (run, judge, sanitizers, memcheck subset, speed witness) ran on CPUs %s, kept for them; "
            "the compiles, the lint and the static facts on CPUs %s (taskset)." % pinned)
