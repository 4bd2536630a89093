"""What a step's exit and its logs say, as a cell's findings. The verdict of a step is always its
exit code (or the grader's watchdog); a log is text the submission can write, read only to
describe what the exit code decided, and quoted as the submission's own."""
from __future__ import annotations

import json
import os
import re
import signal

from . import run, static_evidence
from .names import quote_output, visible
from .options import Options


def signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return "signal %d" % n


def log_says(path: str, pattern: bytes) -> bool:
    """Whether a log (text the submission can write: used only to describe, never to grade) matches."""
    try:
        with open(path, "rb") as f:
            data = f.read(4 << 20)
    except OSError:
        return False
    return re.search(pattern, data) is not None


def lint_finding(log: str, rc: int) -> str | None:
    """The cell's lint finding from grading/ub_lint.py --json's output LOG (its last line is the
    result; RC its exit code): "undefined behaviour ..." (a finding: it fails the cell), None (clean)
    or "not applicable (...)". GCC's words quote the submission's names: quoted as its own."""
    try:
        r = json.loads(log.strip().splitlines()[-1])
        status, found = r["status"], r["findings"]
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return "not applicable (the lint printed no result, exit %d)" % rc
    if status == "clean":
        return None
    if status != "ub" or not isinstance(found, list) or not found or not isinstance(found[0], dict):
        return "not applicable (%s)" % visible(str(r.get("why", "") if isinstance(r, dict) else ""))[:300]
    f = found[0]
    line = f.get("line")
    return ("undefined behaviour in the device code, as GCC reads it (g++ -O3 on it as host C++; nvcc may silently "
            "delete what it does, so no check can see it): main.cu:%d: %s [%s]%s"
            % (line if isinstance(line, int) else 0, quote_output(str(f.get("message", ""))),
               visible(str(f.get("flag", "")))[:60], "; %d more" % (len(found) - 1) if len(found) > 1 else ""))


def run_finding(o: Options, cell_dir: str, name: str, step: run.Step, limit: int) -> list[str]:
    """What ended a sandboxed step (CELL_DIR/NAME.log its output), as findings (none when it exited
    by itself)."""
    out = []
    log = os.path.join(cell_dir, name + ".log")
    if not step.started:
        with open(log, "rb") as f:
            first = f.readline(300).decode("utf-8", "replace").strip()
        out.append("the sandbox refused to start the %s: %s" % (name, visible(first)))
    elif step.timed_out:
        out.append("%s timed out after %d s" % (name, limit))
    elif step.mem_killed:
        out.append("%s went over the memory limit (%d MiB) and was stopped" % (name, o.mem_mib))
    elif step.rc == 128 + 25:
        out.append("%s killed: a file reached the %d MiB limit" % (name, o.file_mib))
    elif step.rc > 128:
        out.append("%s crashed (%s)" % (name, signal_name(step.rc - 128)))
    if step.rc != 0 and log_says(log, rb"std::bad_alloc|Cannot allocate memory"):
        out.append("the %s reported running out of host memory (the limit is %d MiB)" % (name, o.mem_mib))
    if step.cut > 0:
        out.append("%s output over %d KiB, cut (%d bytes more)" % (name, o.output_kib, step.cut))
    if not o.no_sandbox and step.max_procs >= o.procs - 4:
        out.append("%s hit the process limit (%d processes)" % (name, o.procs))
    return out


def _kernel(w: str) -> str:
    """"void transpose_tiled<(int)32>(const float *, int)" -> "transpose_tiled<(int)32>"."""
    return static_evidence.short_name(w[5:] if w.startswith("void ") else w)


def _read_lines(log: str) -> list[str]:
    try:
        with open(log, "rb") as f:
            return f.read(8 << 20).decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def _racecheck_words(lines: list[str]) -> str:
    where = [re.sub(r"\+0x[0-9a-f]+.*$", "", line.split(" access at ", 1)[1]) for line in lines
             if "Race reported between" in line and " access at " in line]
    count = [m.group(1) for line in lines for m in [re.search(r"RACECHECK SUMMARY: ([0-9]+) hazards? displayed", line)] if m]
    text = "RACE (racecheck: %s hazards" % (count[-1] if count else "some")
    if where:
        text += ", first in %s" % quote_output(_kernel(where[-1]), 120)
    return text + ")"


def _memcheck_words(lines: list[str]) -> str:
    where = [re.sub(r"\+0x[0-9a-f]+.*$", "", line[len("=========     at "):]) for line in lines
             if line.startswith("=========     at ")]
    count = [m.group(1) for line in lines for m in [re.match(r"^========= ERROR SUMMARY: ([0-9]+) errors?", line)] if m]
    what = [line[len("========= "):] for line in lines if re.match(r"^========= [A-Z]", line)
            and "COMPUTE-SANITIZER" not in line and "SUMMARY" not in line]
    text = "MEMCHECK (memcheck: %s errors" % (count[-1] if count else "some")
    if what:
        text += ", first: %s" % quote_output(what[0], 120)
    if where:
        text += " in %s" % quote_output(_kernel(where[0]), 120)
    return text + ")"


def sanitizer_finding(tool: str, s: run.Step, log: str, limit: int, mem_mib: int = 0) -> list[str]:
    """The verdict is the tool's exit code (99: it found errors); stopped by the grader at its time
    limit or its memory limit (MEM_MIB, --mem-mib), it says which. The count and place are read
    from its log, which the submission could also write to: they are quoted as the log's."""
    if s.timed_out:
        return ["%s timed out after %d s" % (tool, limit)]
    if s.mem_killed:
        return ["%s went over the memory limit (%d MiB) and was stopped" % (tool, mem_mib)]
    if s.rc != 99:
        return []
    lines = _read_lines(log)
    return [_racecheck_words(lines) if tool == "racecheck" else _memcheck_words(lines)]


def memcheck_subset_finding(s: run.Step, log: str, limit: int, mem_mib: int = 0) -> list[str]:
    """The memcheck subset's verdict, from its exit code (99: errors), as --sanitize's memcheck
    says it, or the limit (time, memory: MEM_MIB) it was stopped at; the count and place are read
    from its log (which the submission can also write)."""
    if s.timed_out:
        return ["memcheck on the small shapes timed out after %d s" % limit]
    if s.mem_killed:
        return ["memcheck on the small shapes went over the memory limit (%d MiB) and was stopped" % mem_mib]
    found = sanitizer_finding("memcheck", s, log, limit)
    return [f.replace("MEMCHECK (memcheck: ", "out-of-bounds or invalid memory access (memcheck on the small shapes: ", 1)
            for f in found]
