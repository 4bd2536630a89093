"""The speed witness: the time a grade uses comes from the course's own check, never from the
submission's process (harness/witness.hpp says how the check does it).

While a cell compiles, cuobjdump takes the compiled runner's device code out as .cubin files
(box/build/witness/, in the cell's sandbox: extract). After the cell's memcheck, the lesson's check
built from the course's own main.cu (the judge's binary) runs in the cell's sandbox with the speed
test cases only: it times the course's kernel and the ceiling, then the same launches with the
submission's kernels loaded from those files, checks that output itself, and writes one JSON line per
exercise to a descriptor the grader opened (run). merge() puts those times into the verdict's speed
evidence in place of whatever the runner recorded: an exercise the witness did not time (its kernel
missing or renamed, its output wrong at that size, a crash, a time limit, device code that allocates
on the device heap, which outlives the reload of that code) has no time, and its speed rule is short
with no credit, never "not measured". The submission's host code never runs in the witness, so no
macro, no function of the harness's and no CUDA call it redefines reaches the timing.
"""
from __future__ import annotations

import json
import os
import struct
from typing import Any

from .box import Box
from .rubric import _number
from .runfolder import Cell

EXTRACT_LIMIT_S = 60
MAX_LINES_BYTES = 1 << 20
CUBIN_DIR = "witness"  # in box/build
MAX_CUBIN_BYTES = 256 << 20


def cubin_dir(box: str) -> str:
    return os.path.join(box, "build", CUBIN_DIR)


def extract(box: Box, cell: Cell, box_dir: str, binary: str, cuobjdump: str) -> str | None:
    """cuobjdump -xelf all BINARY into box/build/witness/, in the cell's sandbox while it may still
    write there (compile role). None, or why the device code could not be taken out."""
    out = cubin_dir(box_dir)
    step = box.run(cell.dir, cell.number, "witness-extract", EXTRACT_LIMIT_S, "compile",
                   ["bash", "-c", 'mkdir -p "$1" && cd "$1" && exec "$2" -xelf all "$3"', "extract", out, cuobjdump, binary],
                   None, cap=1 << 16)
    if not step.started:
        return "cuobjdump could not start in the sandbox (see witness-extract.log)"
    if step.timed_out or step.rc != 0 or step.mem_killed:
        return "cuobjdump could not take the device code out of the compiled runner (exit %d)" % step.rc
    try:
        cubins = sorted(n for n in os.listdir(out) if n.endswith(".cubin"))
    except OSError as e:
        return "the compiled runner's device code is not there (%s)" % e.strerror
    if not cubins:
        return "the compiled runner holds no device code for this GPU"
    for n in cubins:
        calls = heap_calls(os.path.join(out, n))
        if calls is None:
            return "the compiled runner's device code could not be read (%s)" % n
        if calls:
            return ("your device code allocates on the device heap (%s): what it keeps there outlives the"
                    " witness's fresh start of each timed run, so nothing of this lesson is timed" % ", ".join(calls))
    return None


def _undefined_functions(elf: bytes) -> list[str] | None:
    """The undefined function symbols of a 64-bit little-endian ELF file (a cubin), or None when it
    is not one or its tables are out of bounds."""
    if len(elf) < 64 or elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    if shentsize < 64 or shoff + shnum * shentsize > len(elf):
        return None
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names: list[str] = []
    for _, kind, _, _, off, size, link, _, _, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        if entsize < 24 or link >= shnum or off + size > len(elf):
            return None
        str_off, str_size = sections[link][4], sections[link][5]
        if str_off + str_size > len(elf):
            return None
        strtab = elf[str_off:str_off + str_size]
        for at in range(off, off + size - entsize + 1, entsize):
            name, info, _, shndx = struct.unpack_from("<IBBH", elf, at)
            if shndx == 0 and info & 0xF == 2 and name < len(strtab):  # undefined, STT_FUNC
                names.append(strtab[name:strtab.find(b"\0", name)].decode("ascii", "replace"))
    return names


def heap_calls(path: str) -> list[str] | None:
    """The device-heap allocators a cubin calls (malloc, new, __nv_aligned_device_malloc: each an
    undefined function the driver supplies, named with "malloc"), sorted; None when the file cannot
    be read as one. Memory they allocate survives the witness's reload of the submission's code."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        elf = f.read(MAX_CUBIN_BYTES + 1)
    names = _undefined_functions(elf) if len(elf) <= MAX_CUBIN_BYTES else None
    return None if names is None else sorted({n for n in names if "malloc" in n.lower()})


def command(judge_in_box: str, cubins: str, seed: int) -> list[str]:
    """The witness's command in the sandbox: the course's check, speed cases only, writing to fd 3."""
    return [judge_in_box, "--gpu", "--test-case=speed: *", "--seed", str(seed), "--time-submission", cubins,
            "--witness", "/dev/fd/3"]


def read_lines(path: str) -> dict[str, dict[str, Any]]:
    """The witness's JSON lines, by exercise (the first line of each; a line that is not a JSON
    object with a string "exercise" is skipped). Read at most MAX_LINES_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_LINES_BYTES)
    out: dict[str, dict[str, Any]] = {}
    for raw in data.splitlines():
        try:
            line = json.loads(raw.decode("utf-8", "strict"))
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(line, dict) and isinstance(line.get("exercise"), str) and line["exercise"] not in out:
            out[line["exercise"]] = line
    return out


def wrong_outputs(lines: dict[str, dict[str, Any]]) -> list[str]:
    """The witness's findings of correctness: an exercise whose kernel, run by the witness at the
    speed case's size, gave a wrong output (which the runner's own check, in the submission's
    process, did not report)."""
    out = []
    for ex, line in sorted(lines.items()):
        if line.get("wrong_output") is True:
            problem = str(line.get("problem") or "")
            out.append("the grader's own run of %s at the speed case's size found a wrong output (%s)"
                       % (ex, problem[:200]))
    return out


def _sample(ms: float, ceiling_ms: float, line: dict[str, Any]) -> dict[str, Any]:
    runs = line.get("runs") if isinstance(line.get("runs"), int) else 0
    spread = line.get("spread") if isinstance(line.get("spread"), (int, float)) else 0.0
    return {"ms": ms, "ceiling_ms": ceiling_ms, "runs": runs, "spread": spread}


def merge(evidence: list[Any] | None, lines: dict[str, dict[str, Any]], failed: str, unavailable: str = "") -> list[Any] | None:
    """The verdict's speed evidence with every time taken from the witness: for each exercise, the
    course's kernel, the ceiling and the submission's kernel, all three timed in the witness's one
    process. FAILED: why the witness as a whole gave nothing ("" when it ran to its end): no time,
    held against the cell. UNAVAILABLE: why this grading machine cannot run a witness at all (no
    cuobjdump): not measured, for every cell alike. The runner's own times are dropped either way."""
    if not isinstance(evidence, list):
        return evidence
    merged = []
    for e in evidence:
        if not isinstance(e, dict) or not isinstance(e.get("exercise"), str):
            merged.append(e)
            continue
        e = dict(e)
        line = lines.get(e["exercise"])
        e["submission"], e["timed_by"] = None, "witness"
        if unavailable or line is None:
            if unavailable:
                e["witness_unavailable"] = unavailable
            else:
                e["witness_problem"] = failed or "the grader's witness reported no time for it"
            merged.append(e)
            continue
        sol, ceiling, sub = _number(line.get("solution_ms")), _number(line.get("ceiling_ms")), _number(line.get("submission_ms"))
        if sol is not None and ceiling is not None:
            e["solution"] = _sample(sol, ceiling, line)
        problem = line.get("problem") if isinstance(line.get("problem"), str) else "malformed witness line"
        if problem or sub is None or ceiling is None:
            e["witness_problem"] = problem or "the grader's witness reported no time for it"
        else:
            e["submission"] = _sample(sub, ceiling, line)
        merged.append(e)
    return merged
