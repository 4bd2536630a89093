"""CPUs of their own for the GPUs' steps. While the cells compile (16 at a time on a 32-CPU
machine), a cell's checks on its GPU (the run, the judge, the memcheck subset, the speed witness:
processes that also work on the CPU) shared CPU cores with the compilers, and with two GPUs the
compiles run beside more of the checks: on two H200s the median cell's checks took longer with
both GPUs grading than with one (results/h200/two-gpus/README.md, template-48d3571). So, where
the machine has cores enough, each GPU of the machine has whole cores (both hardware threads of
each) kept for its steps, PER_GPU_WORKER logical CPUs for each of its workers, and the compiles and
the CPU work beside them (lint, static facts) run on the other cores, with taskset; the compiles
keep at least half the cores. Elsewhere nothing is pinned."""
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


def split(run_gpus: list[str], machine_gpus: int, share: int = 1, allowed: set[int] | None = None,
          siblings: Callable[[int], str] = _siblings) -> tuple[str, str] | None:
    """(this run's GPUs' CPUs, the compiles' CPUs) as taskset lists. Each of the MACHINE_GPUS GPUs
    has whole cores at the end holding PER_GPU_WORKER x SHARE logical CPUs (GPU 0 the last ones),
    the same in every run on the machine: two runs on two GPUs never pin their steps together, and
    no run compiles on a GPU's cores. RUN_GPUS: the indices of this run's GPUs, as nvidia-smi
    gives them. None for an index it does not know, when the compiles would keep less than half
    the cores, or when there is no taskset."""
    if not run_gpus or not all(i.isdigit() and int(i) < machine_gpus for i in run_gpus) or share < 1 \
            or shutil.which("taskset") is None:
        return None
    left = cores(allowed if allowed is not None else os.sched_getaffinity(0), siblings)
    total = len(left)
    blocks: list[list[int]] = []
    for _ in range(machine_gpus):
        block: list[int] = []
        while left and len(block) < PER_GPU_WORKER * share:
            block = left.pop() + block
        blocks.append(block)
    if len(left) * 2 < total or not all(blocks):
        return None
    return text([c for i in run_gpus for c in blocks[int(i)]]), text([c for core in left for c in core])


def info(pinned: tuple[str, str] | None, machine_gpus: int, share: int) -> str:
    """run-info.txt's line of the CPUs."""
    if pinned is None:
        return ("CPUs: not pinned (too few cores to keep %d logical CPUs for each of the machine's %d GPU(s) and half "
                "of the cores for the compiles, or no taskset)." % (PER_GPU_WORKER * share, machine_gpus))
    return ("CPUs: the GPUs' steps (run, judge, sanitizers, memcheck subset, speed witness) ran on CPUs %s, kept for them; "
            "the compiles, the lint and the static facts on CPUs %s (taskset)." % pinned)
