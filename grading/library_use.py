"""Library shortcuts in a submission: an exercise whose work a library does earns nothing for it.

The student's code is every line of the submission that is not a line of the lesson's own main.cu
(the course's solution, compared line by line with Python's difflib, whitespace folded): the
exercise regions, and any helper, macro, alias or #include written anywhere else. On those lines:
  - a library namespace or intrinsic that ships with CUDA: cub, thrust, cooperative_groups, nvcuda
    (wmma), cuda:: (libcu++: cuda::std, cuda::atomic_ref ...), cutlass, cute, and the warp
    reductions __reduce_{add,min,max,and,or,xor}_sync; and any name the student's lines make an
    alias of one (`namespace cg = cooperative_groups;`, `using R = cub::BlockReduce<...>;`,
    `using cub::BlockReduce;`, typedef);
  - an #include the lesson's main.cu does not have that brings in such code: judged by where the
    preprocessor resolved it (the line markers of nvcc -E name the file, so a relative path into
    the toolkit or a name that hides one is seen): a header of the CUDA toolkit's include folders
    but the runtime's, a CUDA library installed among the system's headers, or a file from outside
    the submission, the course's common/ and harness/ and the system's include folders. Allowed:
    the C and C++ standard headers, the system's (POSIX: <unistd.h>, <sys/prctl.h>, <dlfcn.h>),
    the CUDA runtime's, the course's own ("timer.cuh"). A path that names a CUDA library (cub/,
    thrust/, cuda/, cooperative_groups, mma.h, cuda_fp16.h, cublas ...) is one wherever it resolves;
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
import glob
import os
import re
from collections.abc import Iterable

from . import regions

NAMESPACES = ("cub", "thrust", "cooperative_groups", "nvcuda", "cutlass", "cute")
INTRINSICS = tuple("__reduce_%s_sync" % op for op in ("add", "min", "max", "and", "or", "xor"))
_TOKEN = re.compile(r"[A-Za-z_]\w*|::")
_INCLUDE = re.compile(r"^\s*#\s*include\s*([<\"])([^>\"]*)[>\"]")
# Headers that do none of an exercise's work: the C and C++ standard libraries (C++23, and the C
# headers C++ names), by name where no preprocessed text says where a header resolves.
_C = ("assert", "complex", "ctype", "errno", "fenv", "float", "inttypes", "iso646", "limits", "locale", "math",
      "setjmp", "signal", "stdalign", "stdarg", "stdatomic", "stdbit", "stdbool", "stdckdint", "stddef", "stdint",
      "stdio", "stdlib", "stdnoreturn", "string", "tgmath", "threads", "time", "uchar", "wchar", "wctype")
_CXX = ("algorithm", "any", "array", "atomic", "barrier", "bit", "bitset", "cassert", "ccomplex", "cctype", "cerrno",
        "cfenv", "cfloat", "charconv", "chrono", "cinttypes", "ciso646", "climits", "clocale", "cmath", "codecvt",
        "compare", "complex", "concepts", "condition_variable", "coroutine", "csetjmp", "csignal", "cstdalign",
        "cstdarg", "cstdbool", "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctgmath", "ctime", "cuchar",
        "cwchar", "cwctype", "deque", "exception", "execution", "expected", "filesystem", "flat_map", "flat_set",
        "format", "forward_list", "fstream", "functional", "future", "generator", "initializer_list", "iomanip", "ios",
        "iosfwd", "iostream", "istream", "iterator", "latch", "limits", "list", "locale", "map", "mdspan", "memory",
        "memory_resource", "mutex", "new", "numbers", "numeric", "optional", "ostream", "print", "queue", "random",
        "ranges", "ratio", "regex", "scoped_allocator", "semaphore", "set", "shared_mutex", "source_location", "span",
        "spanstream", "sstream", "stack", "stacktrace", "stdexcept", "stdfloat", "stop_token", "streambuf", "string",
        "string_view", "strstream", "syncstream", "system_error", "thread", "tuple", "type_traits", "typeindex",
        "typeinfo", "unordered_map", "unordered_set", "utility", "valarray", "variant", "vector", "version")
# The CUDA runtime's headers (nvcc includes cuda_runtime.h in every file itself): no exercise's work.
RUNTIME_HEADERS = frozenset(("cuda_runtime.h", "cuda_runtime_api.h", "device_launch_parameters.h", "vector_types.h",
                             "vector_functions.h", "driver_types.h", "builtin_types.h"))
STANDARD_HEADERS = frozenset([c + ".h" for c in _C] + list(_CXX)) | RUNTIME_HEADERS
# What ships with CUDA beyond its runtime, by a header's path below an include folder: its first
# folder or its file name (cub/..., cuda/std/..., cooperative_groups.h, mma.h, cuda_fp16.h, cublas_v2.h).
_LIBRARY_PATH = re.compile(r"(cub|thrust|cuda|nv|nvtx3|cooperative_groups|cutlass|cute|cccl)(/|$)|"
                           r"(cooperative_groups|mma|crt/mma|sm_\d+_intrinsics|cuda_(fp\d+|bf16|awbarrier|pipeline|occupancy|device_runtime|texture|surface)\w*|"
                           r"cu(blas|fft|rand|sparse|solver|dnn|tensor|file|pti|Complex)\w*|nv(rtc|ToolsExt|jpeg|ml|functional)\w*|"
                           r"npp\w*|sm_\w+)(\.h|\.hpp|\.cuh)?$")
# Where a system's own headers live (the C library, POSIX, the compiler's), outside the CUDA toolkit.
SYSTEM_DIRS = ("/usr/include", "/usr/local/include", "/usr/lib/gcc", "/usr/lib64/gcc", "/usr/libexec/gcc",
               "/usr/lib/clang", "/usr/lib/llvm")


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


# A preprocessor's line marker (`# N "file" flags`) at the start of a line, found in the whole text
# at once: whitespace that is not a newline stands where a line alone would take any (\s), so each
# match lies within one line, as when the text is read line by line.
_PP_MARK = re.compile(r'^#[^\S\n]*(\d+)[^\S\n]+"((?:[^"\\\n]|\\.)*)"', re.M)


def line_tokens(raw: str) -> list[str]:
    """The tokens of one line of code, its comments and strings left out."""
    return _TOKEN.findall(strip_code(raw)[0])


def preprocessed_lines(text: str, source: str) -> dict[int, list[str]]:
    """{line of SOURCE: tokens} from the output of a preprocessor (gcc's line markers: `# N "file"`);
    only the lines that come from the file SOURCE (as the marker names it). Only the markers and
    SOURCE's own lines are looked at: the headers' lines (most of the text) are counted, not read."""
    out: dict[int, list[str]] = {}

    def take(raws: list[str], line: int) -> None:
        for raw in raws:
            if raw.strip():
                out.setdefault(line, []).extend(line_tokens(raw))
            line += 1

    line, here, pos = 0, False, 0
    for m in _PP_MARK.finditer(text):
        if here:
            take(text[pos:m.start()].split("\n")[:-1], line)
        line, here = int(m.group(1)), m.group(2) == source
        end = text.find("\n", m.end())
        pos = len(text) + 1 if end < 0 else end + 1
    if here and pos <= len(text):
        take(text[pos:].split("\n"), line)
    return out


_MARKER = re.compile(r'^#[^\S\n]*(\d+)[^\S\n]+"((?:[^"\\\n]|\\.)*)"((?:[^\S\n]+\d)*)[^\S\n]*$', re.M)


def includes_from_markers(markers: Iterable[tuple[str, str, list[str]]], source: str) -> dict[int, str]:
    """included_files over MARKERS, each (line number, file name, flags) in the text's order."""
    out: dict[int, str] = {}
    here, entered = False, None
    for number, name, flags in markers:
        if here and "1" in flags and entered is None and not name.startswith("<"):
            entered = name
        elif name == source and "2" in flags and entered is not None:
            out[int(number) - 2] = os.path.normpath(os.path.join(os.path.dirname(source), entered))
            entered = None
        here = name == source
    return out


def included_files(text: str, source: str) -> dict[int, str]:
    """{0-based line of SOURCE: the file its #include entered}, from a preprocessor's line markers
    (`# 1 "/usr/include/unistd.h" 1` entering a file from SOURCE, `# N "SOURCE" 2` back on the line
    after the #include); a relative path made absolute from SOURCE's folder. A file its include
    guard skips leaves no marker."""
    return includes_from_markers(((m.group(1), m.group(2), m.group(3).split()) for m in _MARKER.finditer(text)), source)


def toolkit_dirs(texts: list[str], nvcc: str | None = None) -> list[str]:
    """The CUDA toolkit's include folders: where cuda_runtime.h resolved in TEXTS (nvcc includes it
    in every file), and beside NVCC (its ../include and ../targets/*/include)."""
    found = {os.path.dirname(os.path.normpath(p)) for t in texts
             for p in re.findall(r'^#\s*\d+\s+"([^"]*/cuda_runtime\.h)"', t, re.M)}
    if nvcc:
        top = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        found |= {os.path.join(top, "include")} | set(glob.glob(os.path.join(top, "targets", "*", "include")))
    return sorted(found)


def _below(path: str, folder: str) -> str | None:
    """PATH relative to FOLDER when it lies below it, else None."""
    folder = folder.rstrip("/")
    return path[len(folder) + 1:] if folder and path.startswith(folder + "/") else None


def library_path(name: str) -> bool:
    """Whether a header's path (below an include folder, or as written: from any of its folders on)
    names a library that ships with CUDA beyond its runtime (cub/, thrust/, cuda/, mma.h, cuda_fp16.h ...)."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    return any(_LIBRARY_PATH.match("/".join(parts[k:])) for k in range(len(parts)))


def foreign_header(path: str, toolkit: list[str], allowed: list[str]) -> str | None:
    """Why the header the preprocessor resolved at PATH does not belong in a submission, or None.
    Allowed: the CUDA runtime's headers in the toolkit's include folders (TOOLKIT), anything below
    ALLOWED (the submission's folder, the course's common/ and harness/), and the system's headers
    (SYSTEM_DIRS: the C and C++ libraries, POSIX) but a CUDA library installed there. Each path is
    judged as written and with its links followed (/usr/local/cuda/include is one)."""
    forms = [os.path.normpath(path)]
    forms.append(os.path.realpath(forms[0]))
    tk = sorted({f for d in toolkit for f in (os.path.normpath(d), os.path.realpath(d))})
    for p in forms:
        for d in tk:
            rel = _below(p, d)
            if rel is None:
                continue
            if any(d == s or _below(d, s) is not None for s in SYSTEM_DIRS) and not library_path(rel):
                continue  # a toolkit installed among the system's headers: its libraries told by name
            return None if rel in RUNTIME_HEADERS else "a header of the CUDA toolkit beyond its runtime"
    if any(_below(p, d) is not None for p in forms for d in allowed):
        return None
    for p in forms:
        for d in SYSTEM_DIRS:
            rel = _below(p, d)
            if rel is not None:
                return "a header of a CUDA library" if library_path(rel) else None
    return "a header from outside the submission and the course"


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


LIBRARY_BY_NAME = "its path names a library that ships with CUDA"


def include_problem(header: str, resolved: dict[int, str | None] | None, line: int) -> str | None:
    """Why a student's #include (HEADER as written, <x> or "x", on 0-based LINE) brings in code that
    may do an exercise's work, or None. A library that ships with CUDA named in its path is one
    wherever it resolves; else where the preprocessor resolved it decides (RESOLVED: {line: why
    not, or None}, from foreign_header; a line with no entry, a file its guard skipped, is allowed).
    Without preprocessed text (RESOLVED None) a quote include by an absolute path or through `..`
    is taken for one from outside the submission and the course."""
    name = header[1:-1]
    if library_path(name):
        return LIBRARY_BY_NAME
    if header.startswith("<") and name in STANDARD_HEADERS:
        return None  # (wherever this system keeps its C and C++ libraries)
    if resolved is not None:
        return resolved.get(line)
    if header.startswith('"') and (name.startswith("/") or ".." in name.replace("\\", "/").split("/")):
        return "a header from outside the submission and the course"
    return None


def shortcuts(lesson_text: str, submission_text: str, lesson_pre: list[dict[int, list[str]]],
              submission_pre: list[dict[int, list[str]]],
              resolved: dict[int, str | None] | None = None) -> list[tuple[int, str, str]]:
    """[(0-based line, exercise id or '', what)] for each line of the student's that uses a library
    (what: "`cub`", "#include <mma.h>"). *_PRE: the preprocessed passes (preprocessed_lines), [] for
    none; RESOLVED: where the submission's #includes resolved (include_problem), None when unknown."""
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
        if header and header not in lesson_includes:
            why = include_problem(header, resolved, i)
            if why:
                by_name = why == LIBRARY_BY_NAME
                out.append((i, where.get(i, ""), "#include %s%s" % (header[:200], "" if by_name else " (%s)" % why)))
        if names:
            out.append((i, where.get(i, ""), ", ".join("`%s`" % n[:40] for n in sorted(names))))
    return out


def findings(lesson_text: str, submission_text: str, lesson_pre: list[dict[int, list[str]]],
             submission_pre: list[dict[int, list[str]]], lesson_name: str,
             resolved: dict[int, str | None] | None = None) -> list[str]:
    """The cell's findings: one per exercise region whose code uses a library, then one for the
    student's lines outside the regions (new includes, helpers, macros, aliases)."""
    found = shortcuts(lesson_text, submission_text, lesson_pre, submission_pre, resolved)
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
