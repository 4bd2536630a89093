"""One cell's record: OUT/cells/NNNN/cell.json, written from CellRecord and read back strictly.

It holds who the cell is (student, lesson, and for a Slurm plan its slice), the notes beside its
row (note: e.g. its main.cu is also a classmate's, a hard link, naming them; feedback_note: the
same for the student's own feedback, naming no classmate; "" for none), its compile's outcome
(compiled: yes, no, "-" not graded; "" while not compiled in this run), the time and memory each
step took (timing: compile_s, compile_mib, lint_s, static_s, then the run's keys, RUN_KEYS), its
result once graded (result: the gradebook's fields, each a string on one line: names as the plan
shows them (names.display_name, then names.class_labels), findings with control characters
escaped) and, for a cell graded
again alone after a shared pass (--share), the shared run's result and timing (shared). The
steps' logs, verdict.json, evidence.json and static.json stay files of their own.

A record of another version, or one that is not what this module writes, is a RecordError that
names the cell's file; so is a cell folder of an earlier grader (result.txt or identity.txt, no
cell.json).

    python3 -m grading.cellrecord timing CELLS [--names]

prints each cell's timing, one line per cell: "NNNN[ student / lesson]: key=value ...", the shared
run's keys as shared_KEY (what bench/throughput.sh and bench/evidence_cost.sh sum);

    python3 -m grading.cellrecord get CELL FIELD

prints one field of a cell's record (compiled, result.passed, timing.gpu, shared.timing.share, ...:
a string as it is, anything else as JSON), for scripts; exit 1 when there is no such field. Both
exit 2 when the folder or a record cannot be read."""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from .names import visible

VERSION = 3  # 2: the result's speed_credit, speed_ratio and rules (grading/score.py); 3: the notes (grading/links.py)
FILE = "cell.json"
LEGACY = ("result.txt", "identity.txt")  # what a cell folder of an earlier grader holds
MAX_BYTES = 1 << 20
COMPILED = ("", "yes", "no", "-")
# The keys of timing that a cell's run writes (after a shared pass they move to shared.timing);
# compile_s, compile_mib, lint_s and static_s are its compile's.
RUN_KEYS = ("run_s", "judge_s", "judge_beside_s", "judged_again", "sanitize_s", "memcheck_s", "witness_s", "evidence_s", "share",
            "run_mib", "judge_mib", "sanitize_mib", "gpu")

_lock = threading.Lock()  # one read-change-write of a record at a time (compile and GPU threads)


class RecordError(Exception):
    """A cell.json that cannot be read as this grader's record (the message names the file)."""


@dataclass
class Result:
    """A graded cell's row of the gradebook, as strings ("" where a field has no value)."""
    compiled: str = ""
    passed: str = ""
    total: str = ""
    course_passed: str = ""
    course_total: str = ""
    finding: str = ""
    performance: str = ""
    performance_short: str = ""
    speed_credit: str = ""
    speed_ratio: str = ""
    rules: str = ""


@dataclass
class Shared:
    """The shared run of a cell graded again alone: its result and its run's timing."""
    result: Result
    timing: dict[str, Any] = field(default_factory=dict)


@dataclass
class CellRecord:
    """What cell.json holds (see the module's docstring)."""
    student: str
    lesson: str
    slice: int | None = None
    compiled: str = ""
    timing: dict[str, Any] = field(default_factory=dict)
    result: Result | None = None
    shared: Shared | None = None
    note: str = ""
    feedback_note: str = ""
    version: int = VERSION

    def fields(self) -> dict[str, str]:
        """student, lesson, slice ("" for none), the notes and the result's fields ("" before it is graded)."""
        d = {"student": self.student, "lesson": self.lesson, "slice": "" if self.slice is None else str(self.slice),
             "note": self.note, "feedback_note": self.feedback_note}
        d.update(dataclasses.asdict(self.result or Result()))
        return d


def path(cell_dir: str) -> str:
    return os.path.join(cell_dir, FILE)


def to_json(rec: CellRecord) -> str:
    d = dataclasses.asdict(rec)
    ordered = {"version": d.pop("version")}
    ordered.update(d)
    return json.dumps(ordered, indent=1, ensure_ascii=True) + "\n"


def _strings(d: Any, keys: tuple[str, ...], what: str) -> dict[str, str]:
    if not isinstance(d, dict) or set(d) != set(keys) or not all(isinstance(d[k], str) for k in keys):
        raise ValueError("%s is not an object of the strings %s" % (what, ", ".join(keys)))
    return d


def _timing(d: Any, what: str) -> dict[str, Any]:
    if not isinstance(d, dict) or not all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in d.values()):
        raise ValueError("%s is not an object of numbers and strings" % what)
    return d


def _result(d: Any, what: str) -> Result:
    return Result(**_strings(d, tuple(f.name for f in dataclasses.fields(Result)), what))


def from_json(data: Any) -> CellRecord:
    """The record of a parsed cell.json; ValueError says what is wrong with it."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("version") != VERSION:
        raise ValueError("a record of version %s; this grader reads version %d (grade into a new --out)"
                         % (visible(json.dumps(data.get("version")))[:40], VERSION))
    keys = {f.name for f in dataclasses.fields(CellRecord)}
    if set(data) != keys:
        raise ValueError("its keys are not %s" % ", ".join(sorted(keys)))
    if not all(isinstance(data[k], str) for k in ("student", "lesson", "note", "feedback_note")):
        raise ValueError("student, lesson, note and feedback_note are not strings")
    sl = data["slice"]
    if sl is not None and (not isinstance(sl, int) or isinstance(sl, bool) or sl < 0):
        raise ValueError("slice is not a whole number or null")
    if data["compiled"] not in COMPILED:
        raise ValueError("compiled is not one of yes, no, -, \"\"")
    shared = data["shared"]
    if shared is not None:
        if not isinstance(shared, dict) or set(shared) != {"result", "timing"}:
            raise ValueError("shared is not an object of result and timing")
        shared = Shared(_result(shared["result"], "shared.result"), _timing(shared["timing"], "shared.timing"))
    return CellRecord(student=data["student"], lesson=data["lesson"], slice=sl, note=data["note"],
                      feedback_note=data["feedback_note"], compiled=data["compiled"],
                      timing=_timing(data["timing"], "timing"),
                      result=None if data["result"] is None else _result(data["result"], "result"), shared=shared)


def read(cell_dir: str) -> CellRecord | None:
    """CELL_DIR's record; None when it has none. RecordError: a record this grader cannot read,
    or a cell folder of an earlier grader."""
    p = path(cell_dir)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        legacy = [n for n in LEGACY if os.path.lexists(os.path.join(cell_dir, n))]
        if legacy:
            raise RecordError("%s: no %s but %s: a cell folder of an earlier grader; grade into a new --out"
                              % (visible(cell_dir), FILE, legacy[0]))
        return None
    except OSError as e:
        raise RecordError("%s: cannot be read (%s)" % (visible(p), e.strerror))
    with os.fdopen(fd, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    try:
        if len(raw) > MAX_BYTES:
            raise ValueError("over %d bytes" % MAX_BYTES)
        return from_json(json.loads(raw.decode("utf-8")))
    except (ValueError, UnicodeDecodeError) as e:  # (json.JSONDecodeError is a ValueError)
        raise RecordError("%s: not a cell record this grader reads: %s" % (visible(p), visible(str(e))[:300]))


def write(cell_dir: str, rec: CellRecord) -> None:
    """cell.json holds REC whole, or what it held before (written beside it, then renamed)."""
    tmp = os.path.join(cell_dir, "." + FILE + ".tmp")
    with open(tmp, "w", encoding="ascii") as f:
        f.write(to_json(rec))
    os.replace(tmp, path(cell_dir))


def change(cell_dir: str, how: Callable[[CellRecord], None]) -> CellRecord:
    """CELL_DIR's record (which must exist), changed by HOW and written back; one at a time."""
    with _lock:
        rec = read(cell_dir)
        if rec is None:
            raise RecordError("%s: no %s" % (visible(cell_dir), FILE))
        how(rec)
        write(cell_dir, rec)
        return rec


def update(cell_dir: str, **values: Any) -> CellRecord:
    """CELL_DIR's record with the fields VALUES set (e.g. compiled="yes", timing={...})."""
    def how(rec: CellRecord) -> None:
        for k, v in values.items():
            setattr(rec, k, v)
    return change(cell_dir, how)


def timing_line(name: str, rec: CellRecord, names: bool) -> str:
    """NAME[ student / lesson]: key=value ..., the shared run's keys as shared_KEY."""
    kv = ["%s=%s" % (k, v) for k, v in rec.timing.items()]
    if rec.shared is not None:
        kv += ["shared_%s=%s" % (k, v) for k, v in rec.shared.timing.items()]
    who = " %s / %s" % (rec.student, rec.lesson) if names else ""
    return "%s%s: %s" % (name, who, " ".join(kv))


def get(cell_dir: str, name: str) -> str:
    """The field NAME (e.g. compiled, result.passed, timing.gpu, shared.timing.share) of CELL_DIR's
    record: a string as it is, anything else as JSON. KeyError: no such field (or it is null
    above); RecordError: no record, or one this grader cannot read."""
    rec = read(cell_dir)
    if rec is None:
        raise RecordError("%s: no %s" % (visible(cell_dir), FILE))
    value: Any = json.loads(to_json(rec))
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(name)
        value = value[part]
    return value if isinstance(value, str) else json.dumps(value)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m grading.cellrecord",
                                description="Reads the cell records (cell.json) of a grade.sh run folder.")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("timing", help="each cell's timing, one line per cell (NNNN[ student / lesson]: key=value ...)")
    t.add_argument("cells", help="the run's cells folder (OUT/cells)")
    t.add_argument("--names", action="store_true", help="each line names the cell's student and lesson")
    g = sub.add_parser("get", help="one field of a cell's record (exit 1: no such field)")
    g.add_argument("cell", help="a cell folder (OUT/cells/NNNN)")
    g.add_argument("field", help="e.g. compiled, result.passed, timing.gpu, shared.timing.share")
    return p


def _print_timing(cells: str, names: bool) -> None:
    entries = sorted(e for e in os.listdir(cells) if os.path.isdir(os.path.join(cells, e)))
    for name in entries:
        rec = read(os.path.join(cells, name))
        if rec is not None:
            print(timing_line(visible(name), rec, names))


def main(argv: list[str] | None = None) -> int:
    """The command line: 0 done, 1 no such field (get), 2 no folder or record, or one this grader cannot read."""
    p = _parser()
    a = p.parse_args(argv)
    try:
        if a.command == "timing":
            _print_timing(a.cells, a.names)
        else:
            print(get(a.cell, a.field))
    except KeyError:
        print("%s: %s: no field %s" % (p.prog, visible(a.cell), visible(a.field)), file=sys.stderr)
        return 1
    except OSError as err:
        print("%s: %s: %s" % (p.prog, visible(err.filename or ""), err.strerror), file=sys.stderr)
        return 2
    except RecordError as err:
        print("%s: %s" % (p.prog, err), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
