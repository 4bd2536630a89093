"""The EXERCISE markers of a lesson's main.cu, read in one place: scripts/make_exercises.cmake (which
writes the exercises from them), grading/mutants.py and grading/ub_render.py all read them here.
The markers, each a comment line of its own (scripts/make_exercises.cmake describes them in full):

    // EXERCISE BEGIN <id>[: <what to write>]   id: NN.name, unique in the file
    // EXERCISE TODO: <more of the TODO comment>
    // EXERCISE STUB: <a line of code the exercise has instead>
    // EXERCISE HINT: <one hint>
    ...the solution...
    // EXERCISE END

A region whose BEGIN gives only its id takes its text from exercise_todos.txt beside the file.

    python3 -m grading.regions exercise [--where NAME] INPUT OUTPUT [HINTS]
                                                          one file's exercise (and its hints); an
                                                          error names the file NAME (default: INPUT)
    python3 -m grading.regions lesson NN_name OUTPUT           one exercise's main.cu, as committed
    python3 -m grading.regions write | check                   every exercise, written / compared
    python3 -m grading.regions ids FILE                        the region ids of FILE, one a line

Standard library only, and nothing else of grading/ but cmdline.py (its command line, read by
argparse): the student pack ships them with the lint.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field

MARKER = re.compile(r"([ \t]*)// EXERCISE ([A-Z]+)(.*)")
ID = r"[0-9][0-9]\.[a-z0-9_]+"
TODOS_FILE = "exercise_todos.txt"


class MarkerError(Exception):
    """A marker the generator refuses: `where:line: message`, as the generator prints it."""


@dataclass
class Entry:
    """A region's text from exercise_todos.txt."""
    what: str
    more: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)


@dataclass
class Region:
    """One region: BEGIN and END as 0-based line indices (markers included)."""
    id: str
    begin: int
    end: int = -1
    indent: str = ""
    what: str | None = None  # None: only the id, and no exercise_todos.txt was given
    todo: list[str] = field(default_factory=list)    # the TODO comment's further lines
    stubs: list[str] = field(default_factory=list)   # the exercise's code lines, indented
    hints: list[str] = field(default_factory=list)


def marker(line: str) -> tuple[str, str, str] | None:
    """(indentation, KEYWORD, the rest) when LINE is an EXERCISE marker line, else None."""
    m = MARKER.fullmatch(line)
    return (m.group(1), m.group(2), m.group(3)) if m else None


def read_todos(path: str) -> dict[str, Entry]:
    """exercise_todos.txt: `NN.name: what to write`, then lines indented by two spaces (`  HINT: `
    a hint); `#` starts a comment line. {} when there is no such file."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        lines = f.read().split("\n")
    out: dict[str, Entry] = {}
    current: Entry | None = None
    for n, line in enumerate(lines, 1):
        head = re.fullmatch(r"(%s): (.*[^ ].*)" % ID, line)
        indented = re.fullmatch(r"  (.*[^ ].*)", line)
        if line == "" or line.startswith("#"):
            continue
        if head:
            if head.group(1) in out:
                raise MarkerError("%s:%d: %s has two entries" % (path, n, head.group(1)))
            current = out[head.group(1)] = Entry(head.group(2))
        elif indented and current is not None:
            hint = re.fullmatch(r"HINT: (.*[^ ].*)", indented.group(1))
            (current.hints if hint else current.more).append(hint.group(1) if hint else indented.group(1))
        else:
            raise MarkerError("%s:%d: write `NN.name: what to write`, then lines indented by two spaces" % (path, n))
    return out


class _Reader:
    """The markers of one file, line by line; `problem` says what is wrong with a line, or ''."""

    def __init__(self, todos: dict[str, Entry] | None, todos_path: str) -> None:
        self.todos, self.todos_path = todos, todos_path
        self.regions: list[Region] = []
        self.open: Region | None = None
        self.used: list[str] = []

    def begin(self, i: int, indent: str, rest: str) -> str:
        if self.open:
            return "EXERCISE BEGIN inside region %s (opened at line %d): regions do not nest" % (self.open.id, self.open.begin + 1)
        only = re.fullmatch(" (%s)" % ID, rest)
        full = re.fullmatch(" (%s): (.*[^ ].*)" % ID, rest)
        named = only or full
        region = Region(named.group(1) if named else "", i, indent=indent)
        if only and self.todos is not None:
            if region.id not in self.todos:
                return "region %s has no text: none after its id, and no entry in %s" % (region.id, self.todos_path)
            entry = self.todos[region.id]
            self.used.append(region.id)
            region.what, region.todo, region.hints = entry.what, list(entry.more), list(entry.hints)
        elif full:
            region.what = full.group(2)
        elif not only:
            return "malformed EXERCISE BEGIN: write `// EXERCISE BEGIN NN.name: what to write`"
        if any(r.id == region.id for r in self.regions):
            return "region id %s is used twice in this file" % region.id
        self.regions.append(region)
        self.open = region
        return ""

    def inside(self, i: int, indent: str, keyword: str, rest: str) -> str:
        region = self.open
        if region is None:
            if keyword == "END":
                return "EXERCISE END without an EXERCISE BEGIN"
            return "EXERCISE %s outside a region (no EXERCISE BEGIN before it)" % keyword
        if keyword == "END":
            if rest:
                return "malformed EXERCISE END: nothing may follow it"
            region.end, self.open = i, None
            return ""
        if keyword == "HINT":
            m = re.fullmatch(r": (.*[^ ].*)", rest)
            if not m:
                return "malformed EXERCISE HINT: write `// EXERCISE HINT: one hint, on one line`"
            region.hints.append(m.group(1))
            return ""
        m = re.fullmatch(r":( (.*))?", rest)
        if not m:
            return "malformed EXERCISE %s: write `// EXERCISE %s: text`" % (keyword, keyword)
        text = m.group(2) or ""
        if keyword == "TODO":
            region.todo.append(text)
        else:
            region.stubs.append(indent + text if text else "")
        return ""

    def line(self, i: int, line: str) -> str:
        m = marker(line)
        if m is None:
            return "an EXERCISE marker must be on a line of its own" if re.search(r"// EXERCISE[ :]", line) else ""
        indent, keyword, rest = m
        if keyword == "BEGIN":
            return self.begin(i, indent, rest)
        if keyword in ("TODO", "STUB", "HINT", "END"):
            return self.inside(i, indent, keyword, rest)
        return "unknown marker EXERCISE %s (known: BEGIN, TODO, STUB, HINT, END)" % keyword


def parse(text: str, where: str = "main.cu", todos: dict[str, Entry] | None = None, todos_path: str = TODOS_FILE) -> list[Region]:
    """The regions of TEXT, in file order; MarkerError (`WHERE:line: message`) on the first marker
    the generator refuses. With TODOS (exercise_todos.txt, read), a region that gives only its id
    takes its text from there, and an entry no region uses is refused; without, such a region's
    `what` is None."""
    reader = _Reader(todos, todos_path)
    for i, line in enumerate(text.split("\n")):
        problem = reader.line(i, line)
        if problem:
            raise MarkerError("%s:%d: %s" % (where, i + 1, problem))
    if reader.open:
        raise MarkerError("%s:%d: region %s is never closed (no EXERCISE END after it)" % (where, reader.open.begin + 1, reader.open.id))
    for rid in todos or {}:
        if rid not in reader.used:
            raise MarkerError("%s:1: %s has an entry %s that no `// EXERCISE BEGIN %s` region uses" % (where, TODOS_FILE, rid, rid))
    return reader.regions


def spans(text: str) -> list[tuple[int, int]]:
    """[(BEGIN line, END line)] (1-based, markers included) of a file that may break the rules (a
    student's): a BEGIN marker opens a region (in place of an open one), an END closes the open one;
    never refuses anything."""
    out, begin = [], None
    for k, line in enumerate(text.split("\n"), 1):
        m = marker(line)
        if m and m[1] == "BEGIN":
            begin = k
        elif m and m[1] == "END" and begin is not None:
            out.append((begin, k))
            begin = None
    return out


def exercise(path: str, where: str) -> tuple[str, str]:
    """(the exercise's text, its hints: `id: hint` lines) from the lesson file PATH, with
    exercise_todos.txt beside it; MarkerError names WHERE."""
    todos_path = os.path.join(os.path.dirname(path), TODOS_FILE)
    todos = read_todos(todos_path)
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        text = f.read()
    starts = {r.begin: r for r in parse(text, where, todos, todos_path)}
    lines = text.split("\n")
    out: list[str] = []
    hints: list[str] = []
    region: Region | None = None
    for i, line in enumerate(lines):
        region = starts.get(i, region)
        if region is not None:
            if i == region.end:  # the region, markers and solution, becomes its TODO comment and stub
                out += ["%s// TODO(%s): %s\n" % (region.indent, region.id, region.what)]
                out += ["%s//   %s\n" % (region.indent, t) for t in region.todo] + [s + "\n" for s in region.stubs]
                hints += ["%s: %s\n" % (region.id, h) for h in region.hints]
                region = None
        elif not re.match(r"[ \t]*// SITE MODEL (BEGIN|END)", line):
            out.append(line + ("\n" if i < len(lines) - 1 else ""))
    return "".join(out), "".join(hints)


def course_exercises(root: str) -> dict[str, tuple[str, str]]:
    """{NN_name: (exercises/NN_name/main.cu's text, its hints.txt's text or '')} from every
    lessons/NN_name/main.cu under ROOT, as scripts/make_exercises.cmake writes them."""
    folder = os.path.join(root, "lessons")
    names = sorted(d for d in (os.listdir(folder) if os.path.isdir(folder) else [])
                   if re.match(r"[0-9][0-9]_", d) and os.path.isfile(os.path.join(folder, d, "main.cu")))
    if not names:
        raise MarkerError("make_exercises: no lessons/NN_name/main.cu under %s (the student pack has none)" % root)
    out = {}
    for name in names:
        source, number = "lessons/%s/main.cu" % name, name[:2]
        body, hints = exercise(os.path.join(root, source), source)
        header = ("// Exercise %s: generated from %s by scripts/make_exercises.cmake.\n"
                  "// Write the code each TODO(%s.*) asks for; exercises/%s/README.md says what \"solved\" means\n"
                  "// and has hints. Check it: scripts/exercises.sh check %s    All of them: scripts/exercises.sh\n"
                  % (name, source, number, name, number))
        if hints:
            hints = ("# Hints for exercise %s, from the EXERCISE HINT lines of %s (scripts/make_exercises.cmake).\n"
                     "# scripts/exercises.sh hint %s shows them one at a time; each line is <region>: <hint>.\n%s"
                     % (name, source, number, hints))
        out[name] = (header + body, hints)
    return out


def _read(path: str) -> str | None:
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        return f.read()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)


def write_or_check(root: str, check: bool) -> int:
    """Writes every exercise that differs from what its lesson generates (hints.txt removed where the
    lesson has no hints), or with CHECK writes nothing and names each such file: 1 if one does."""
    stale = []
    for name, (text, hints) in course_exercises(root).items():
        for rel, want in (("exercises/%s/main.cu" % name, text), ("exercises/%s/hints.txt" % name, hints)):
            path = os.path.join(root, rel)
            have = _read(path)
            if have == want or (have is None and want == "" and rel.endswith("hints.txt")):
                continue
            if check:
                stale.append(rel)
            elif want == "" and rel.endswith("hints.txt"):
                os.unlink(path)
                print("-- removed %s (its lesson has no EXERCISE HINT lines)" % rel)
            else:
                _write(path, want)
                print("-- wrote %s" % rel)
    for rel in stale:
        print("stale: %s differs from what its lesson generates" % rel, file=sys.stderr)
    if stale:
        print("make_exercises: the exercises above are out of date with their lessons; "
              "run `cmake -P scripts/make_exercises.cmake` and commit the result", file=sys.stderr)
        return 1
    if check:
        print("-- all %d exercises are up to date with their lessons" % len(course_exercises(root)))
    return 0


def _command_line(args: list[str]) -> argparse.Namespace | None:
    """ARGS read by argparse: exercise [--where W] IN OUT [HINTS] (--where only right after
    exercise), lesson LESSON OUT, ids FILE, write, check. None: any other command line."""
    from . import cmdline  # (here: ub_lint.py, run as a file, imports this module outside the package)
    p = cmdline.Parser("python3 -m grading.regions")
    sub = p.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("exercise")
    ex.add_argument("--where", type=cmdline.value)
    for operand in ("infile", "out"):
        ex.add_argument(operand, type=cmdline.value)
    ex.add_argument("hints", nargs="?", type=cmdline.value)
    lesson = sub.add_parser("lesson")
    for operand in ("lesson", "out"):
        lesson.add_argument(operand, type=cmdline.value)
    sub.add_parser("ids").add_argument("file", type=cmdline.value)
    sub.add_parser("write")
    sub.add_parser("check")
    if args[:2] == ["exercise", "--where"] and len(args) > 2:
        tokens = ["exercise", "--where", cmdline.MARK + args[2]] + cmdline.marked(args[3:])
    else:
        tokens = cmdline.marked(args, commands=("exercise", "lesson", "ids", "write", "check"))
    try:
        return p.parse_args(tokens)
    except cmdline.Refused:
        return None


def main(argv: list[str]) -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    a = _command_line(argv[1:])
    if a is None:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        if a.command == "exercise":
            text, hints = exercise(os.path.abspath(a.infile), a.where or a.infile)
            _write(a.out, text)
            if a.hints is not None:
                _write(a.hints, hints)
            return 0
        if a.command == "lesson":
            every = course_exercises(root)
            if a.lesson not in every:
                print("make_exercises: LESSON needs OUTPUT and one of: %s" % ";".join(every), file=sys.stderr)
                return 2
            _write(a.out, every[a.lesson][0])
            return 0
        if a.command == "ids":
            with open(a.file, encoding="utf-8", errors="surrogateescape", newline="") as f:
                print("".join(r.id + "\n" for r in parse(f.read(), a.file)), end="")
            return 0
        return write_or_check(root, a.command == "check")
    except MarkerError as e:
        print(e, file=sys.stderr)
        return 1
    except OSError as e:
        print("python3 -m grading.regions: %s: %s" % (e.filename, e.strerror), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
