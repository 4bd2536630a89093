"""Library shortcuts in a submission: an exercise whose work a library does earns nothing for it.

The student's code is every line of the submission that is not a line of the lesson's own main.cu
(the course's solution, compared line by line with Python's difflib, whitespace folded): the
exercise regions, and any helper, macro, alias or #include written anywhere else. On those lines:
  - a library namespace or intrinsic that ships with CUDA: cub, thrust, cooperative_groups, nvcuda
    (wmma), cuda:: (libcu++: cuda::std, cuda::atomic_ref ...), cutlass, cute, and the warp
    reductions __reduce_{add,min,max,and,or,xor}_sync; and any name the student's lines make an
    alias of one (`namespace cg = cooperative_groups;`, `using R = cub::BlockReduce<...>;`,
    `using cub::BlockReduce;`, typedef);
  - an #include the lesson's main.cu does not have, unless it is a C or C++ standard header or the
    CUDA runtime's (which do none of an exercise's work);
  - and, since macros and token pasting hide names (`#define R CAT(c, ub)::BlockReduce`), the same
    names in the submission's preprocessed text (nvcc -E, once for the device side and once for
    the host side, run in the cell's sandbox: grading/shortcuts.py), on each line of main.cu whose
    expansion is not the lesson's own expansion of the same line.
The course's own library use stays allowed: a line the lesson has (lesson 04's CUB comparison in
main.cu) is the course's, and its expansion is compared with the lesson's expansion of it.

Why an honest submission never meets this rule: the exercises ask for kernels written with the
language itself (shared memory, shuffles, barriers, atomics); none of these names is needed, and
the course's own uses of them are on lines the lesson has.
"""
from __future__ import annotations

import difflib
import re

from . import regions

NAMESPACES = ("cub", "thrust", "cooperative_groups", "nvcuda", "cutlass", "cute")
INTRINSICS = tuple("__reduce_%s_sync" % op for op in ("add", "min", "max", "and", "or", "xor"))
_TOKEN = re.compile(r"[A-Za-z_]\w*|::")
_INCLUDE = re.compile(r"^\s*#\s*include\s*([<\"])([^>\"]*)[>\"]")
# Headers that do none of an exercise's work: the C and C++ standard libraries and the CUDA runtime's.
_C = ("assert", "ctype", "errno", "float", "inttypes", "limits", "math", "stdarg", "stdbool", "stddef",
      "stdint", "stdio", "stdlib", "string", "time")
_CXX = ("algorithm", "array", "atomic", "cassert", "cctype", "cerrno", "cfloat", "chrono", "cinttypes", "climits",
        "cmath", "cstdarg", "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "functional",
        "initializer_list", "iomanip", "iostream", "iterator", "limits", "map", "memory", "new", "numeric",
        "optional", "random", "set", "sstream", "stdexcept", "string", "tuple", "type_traits", "unordered_map",
        "utility", "vector")
STANDARD_HEADERS = frozenset([c + ".h" for c in _C] + list(_CXX) + ["cuda_runtime.h", "cuda_runtime_api.h"])


def strip_code(text: str) -> list[str]:
    """TEXT's lines with comments removed and string and character literals emptied, the line
    count kept (a library's name in a comment or a string is not code)."""
    out, i, n = [], 0, len(text)
    buf: list[str] = []
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            buf.append("\n" * text.count("\n", i, j) or " ")
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            buf.append(c + c)
            i = min(j + 1, n)
        else:
            buf.append(c)
            i += 1
    out = "".join(buf).split("\n")
    return out


def names_in(tokens: list[str], aliases: set[str]) -> list[str]:
    """The library names among TOKENS (one line's): a namespace, `cuda::`, an intrinsic, an alias."""
    found = []
    for k, t in enumerate(tokens):
        if t in NAMESPACES or t in INTRINSICS or t in aliases:
            name = t
        elif t == "cuda" and k + 1 < len(tokens) and tokens[k + 1] == "::":
            name = "cuda::"
        else:
            continue
        if name not in found:
            found.append(name)
    return found


_LIB = r"(?:::\s*)?(?:%s|cuda\s*::)" % "|".join(NAMESPACES + INTRINSICS)


def aliases_of(lines: list[str]) -> set[str]:
    """Names that LINES (stripped code) make stand for a library: namespace aliases, using-aliases,
    using-declarations and typedefs of library names, to a fixed point (an alias of an alias)."""
    text = " ".join(lines)
    found: set[str] = set()
    while True:
        lib = _LIB if not found else r"(?:%s|%s)" % (_LIB, "|".join(sorted(found)))
        new = set(re.findall(r"\bnamespace\s+(\w+)\s*=\s*%s" % lib, text))
        new |= set(re.findall(r"\busing\s+(\w+)\s*=[^;]*?\b%s" % lib, text))
        new |= {m.split("::")[-1].strip() for m in re.findall(r"\busing\s+(%s[\w\s:<>,]*?)\s*;" % lib, text)}
        for decl in re.findall(r"\btypedef\b([^;]*)", text):
            if re.search(r"\b%s" % lib, decl):
                new |= set(re.findall(r"(\w+)\s*$", decl))
        new = {n for n in new if n and re.fullmatch(r"[A-Za-z_]\w*", n) and n not in ("namespace", "cuda")}
        if new <= found:
            return found
        found |= new


def preprocessed_lines(text: str, source: str) -> dict[int, list[str]]:
    """{line of SOURCE: tokens} from the output of a preprocessor (gcc's line markers: `# N "file"`);
    only the lines that come from the file SOURCE (as the marker names it)."""
    out: dict[int, list[str]] = {}
    line, here = 0, False
    for raw in text.split("\n"):
        m = re.match(r'#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"', raw)
        if m:
            line, here = int(m.group(1)), m.group(2) == source
            continue
        if here and raw.strip():
            out.setdefault(line, []).extend(_TOKEN.findall(strip_code(raw)[0]))
        line += 1
    return out


def _fold(line: str) -> str:
    return " ".join(line.split())


def course_lines(lesson: list[str], submission: list[str]) -> dict[int, int]:
    """{index of a submission line: index of the same line in the lesson's main.cu}, for the lines
    difflib matches (whitespace folded); every other line is the student's."""
    a, b = [_fold(x) for x in lesson], [_fold(x) for x in submission]
    matched = {}
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            matched[block.b + k] = block.a + k
    return matched


def include_of(line: str) -> str | None:
    """The header an #include line names, as written (<x> or "x"), or None."""
    m = _INCLUDE.match(line)
    return None if m is None else ("<%s>" % m.group(2) if m.group(1) == "<" else '"%s"' % m.group(2))


def _region_of(text: str) -> dict[int, str]:
    """{0-based line: exercise id} for the lines inside the submission's EXERCISE regions."""
    try:
        found = regions.parse(text)
    except regions.MarkerError:  # (a submission's broken markers: no region, every line judged alike)
        return {}
    return {i: r.id for r in found for i in range(r.begin, r.end + 1) if r.end >= r.begin}


def _names(line: str, pre: list[dict[int, list[str]]], number: int, aliases: set[str]) -> set[str]:
    """The library names of one line (0-based NUMBER): in its code and in each preprocessed pass."""
    found = set(names_in(_TOKEN.findall(line), aliases))
    for p in pre:
        found |= set(names_in(p.get(number + 1, []), aliases))
    return found


def shortcuts(lesson_text: str, submission_text: str, lesson_pre: list[dict[int, list[str]]],
              submission_pre: list[dict[int, list[str]]]) -> list[tuple[int, str, str]]:
    """[(0-based line, exercise id or '', what)] for each line of the student's that uses a library
    (what: "`cub`", "#include <mma.h>"). *_PRE: the preprocessed passes (preprocessed_lines), [] for none."""
    lesson, sub = strip_code(lesson_text), strip_code(submission_text)
    matched = course_lines(lesson, sub)
    aliases = aliases_of(lesson + sub)
    lesson_includes = {include_of(x) for x in lesson_text.split("\n")}
    where = _region_of(submission_text)
    raw = submission_text.split("\n")
    out = []
    for i, line in enumerate(sub):
        names = _names(line, submission_pre, i, aliases)
        if i in matched:
            names -= _names(lesson[matched[i]], lesson_pre, matched[i], aliases)
        header = include_of(raw[i]) if i < len(raw) and i not in matched else None
        if header and header not in lesson_includes and header.strip('<>"') not in STANDARD_HEADERS:
            out.append((i, where.get(i, ""), "#include %s" % header))
        if names:
            out.append((i, where.get(i, ""), ", ".join("`%s`" % n[:40] for n in sorted(names))))
    return out


def findings(lesson_text: str, submission_text: str, lesson_pre: list[dict[int, list[str]]],
             submission_pre: list[dict[int, list[str]]], lesson_name: str) -> list[str]:
    """The cell's findings: one per exercise region whose code uses a library, then one for the
    student's lines outside the regions (new includes, helpers, macros, aliases)."""
    found = shortcuts(lesson_text, submission_text, lesson_pre, submission_pre)
    out = []
    for ex in sorted({e for _, e, _ in found if e}) + ([""] if any(not e for _, e, _ in found) else []):
        mine = [(i, what) for i, e, what in found if e == ex]
        i, what = mine[0]
        more = "; %d more line(s)" % (len(mine) - 1) if len(mine) > 1 else ""
        if ex:
            out.append("%s: a library does the exercise's work (%s at main.cu:%d%s), which earns no credit: the lesson "
                       "teaches writing it" % (ex, what, i + 1, more))
        else:
            out.append("library code the lesson's main.cu does not have, outside the exercise regions (%s at main.cu:%d%s;"
                       " lessons/%s/main.cu's own library use is the course's): an exercise done by a library earns no "
                       "credit" % (what, i + 1, more, lesson_name))
    return out
