"""similarity.csv: pairs of students whose exercise code of one lesson is the same, or nearly so,
once identifier names, whitespace and comments are set aside. It never changes a grade: it says
where to look.

A student's exercise code is what they wrote where the exercise as handed out has its TODOs: the
exercise is the lesson's main.cu with each EXERCISE region replaced by its TODO comment and stub
(grading/regions.py reads the markers), and a submission is lined up with it line by line
(difflib), so that the lines between the last line before a TODO block and the first line after it
are that block's code. A block left as handed out (the stub) is no code of the student's.

The code of a lesson's blocks, in order, is read as C++ tokens: comments and whitespace dropped,
every string literal one token, and every identifier that is not a C++ or CUDA word renamed to a
placeholder by its first appearance ($1, $2, ...): a copy whose names, comments and blank lines
were changed reads as the same tokens. Two students' token sequences are scored by difflib's
ratio (2 x matched tokens / all tokens, 0..1): 1.0 is the same code under other names; a pair at
or above THRESHOLD is listed. Standard library only.
"""
from __future__ import annotations

import difflib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

from . import cellrecord, plan, regions
from .names import csv_field

THRESHOLD = 0.8  # listed at or above; tests/grading/unit/test_similarity.py holds the margins
MAX_SOURCE = 1 << 20
HEADER = ["lesson", "student", "other student", "score", "tokens", "students with this same code", "exercises"]

_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<number>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.])*)
  | (?P<ident>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<punct>::|->|\+\+|--|<<=|>>=|<<|>>|&&|\|\||\.\.\.|[-+*/%&|^!=<>]=|\S)
  | (?P<space>\s+)""", re.S | re.X)

KEYWORDS = frozenset("""
    alignas alignof asm auto bool break case catch char class const consteval constexpr constinit const_cast continue
    decltype default delete do double dynamic_cast else enum explicit extern false float for friend goto if inline int
    long mutable namespace new noexcept nullptr operator private protected public register reinterpret_cast return
    short signed sizeof static static_assert static_cast struct switch template this throw true try typedef typeid
    typename union unsigned using virtual void volatile while size_t uint32_t int32_t uint64_t int64_t
    define include pragma unroll ifdef ifndef endif undef
    __global__ __device__ __host__ __shared__ __constant__ __restrict__ __forceinline__ __noinline__ __launch_bounds__
    threadIdx blockIdx blockDim gridDim warpSize __syncthreads __syncwarp __threadfence __threadfence_block
    __shfl_sync __shfl_down_sync __shfl_up_sync __shfl_xor_sync __ballot_sync __any_sync __all_sync
    atomicAdd atomicSub atomicExch atomicCAS atomicMax atomicMin atomicInc __ldg float2 float4 int2 int4 dim3
    min max fmaf fminf fmaxf
""".split())


def tokens(code: str) -> list[str]:
    """CODE as C++ tokens: comments and whitespace dropped, a string literal one token, identifiers
    other than C++ and CUDA words renamed by first appearance; a member .x/.y/.z/.w stays."""
    out: list[str] = []
    names: dict[str, str] = {}
    for m in _TOKEN.finditer(code):
        kind, text = m.lastgroup, m.group()
        if kind in ("comment", "space"):
            continue
        if kind == "string":
            text = '"'
        elif kind == "ident" and text not in KEYWORDS and not (out and out[-1] in (".", "->") and text in ("x", "y", "z", "w")):
            text = names.setdefault(text, "$%d" % (len(names) + 1))
        out.append(text)
    return out


def score(a: list[str], b: list[str]) -> float:
    """How alike two token sequences are: difflib's ratio, 0..1."""
    if not a or not b:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


@dataclass
class Layout:
    """A lesson's exercise as handed out: its lines, and each TODO block's (first, end) line and
    stub tokens, by region id."""
    lines: list[str]
    blocks: dict[str, tuple[int, int]] = field(default_factory=dict)
    stubs: dict[str, list[str]] = field(default_factory=dict)


def layout(repo: str, lesson: str) -> Layout | None:
    """The exercise of lessons/LESSON/main.cu (None: no lesson file, or markers it cannot read)."""
    path = os.path.join(repo, "lessons", lesson, "main.cu")
    try:
        text, _ = regions.exercise(path, path)
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            found = regions.parse(f.read(), path, regions.read_todos(os.path.join(os.path.dirname(path), regions.TODOS_FILE)))
    except (OSError, regions.MarkerError):
        return None
    lay = Layout(text.split("\n"))
    for r in found:
        start = next((i for i, line in enumerate(lay.lines) if line.startswith("%s// TODO(%s): " % (r.indent, r.id))), None)
        if start is not None:
            end = start + 1 + len(r.todo) + len(r.stubs)
            lay.blocks[r.id] = (start, end)
            lay.stubs[r.id] = tokens("\n".join(lay.lines[start:end]))
    return lay


def exercise_code(lay: Layout, text: str) -> dict[str, str]:
    """{region id: the code of SUBMISSION TEXT in place of that TODO block}, lined up with the
    exercise line by line (whitespace at either end set aside); a block left as handed out is left out."""
    theirs = text.split("\n")
    sm = difflib.SequenceMatcher(None, [line.strip() for line in lay.lines], [line.strip() for line in theirs], autojunk=False)
    pairs = [(a + k, b + k) for a, b, n in sm.get_matching_blocks() for k in range(n)]
    out = {}
    for rid, (start, end) in lay.blocks.items():
        before = max((b for a, b in pairs if a < start), default=-1)
        after = min((b for a, b in pairs if a >= end), default=len(theirs))
        code = "\n".join(theirs[before + 1:after])
        if tokens(code) and tokens(code) != lay.stubs[rid]:
            out[rid] = code
    return out


@dataclass
class Entry:
    """One student's code of one lesson."""
    student: str
    lesson: str
    regions: dict[str, str]
    tokens: list[str] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.tokens = tokens("\n".join(self.regions[r] for r in sorted(self.regions)))
        self.counts = Counter(self.tokens)


def _bound(a: Entry, b: Entry) -> float:
    """An upper bound of score(a, b) in the time of a count (difflib's quick_ratio): the tokens the
    two share, whatever their order."""
    return 2.0 * sum((a.counts & b.counts).values()) / (len(a.tokens) + len(b.tokens))


def _same(a: Entry, b: Entry) -> str:
    """The exercises whose code is the same tokens in both ('' when none)."""
    return " ".join(r for r in sorted(set(a.regions) & set(b.regions)) if tokens(a.regions[r]) == tokens(b.regions[r]))


def pairs(entries: list[Entry], threshold: float = THRESHOLD) -> list[list[str]]:
    """similarity.csv's rows (HEADER): every pair of students of one lesson at or above THRESHOLD,
    the most alike first."""
    rows: list[tuple[float, list[str]]] = []
    by_lesson: dict[str, list[Entry]] = {}
    for e in entries:
        if e.tokens:
            by_lesson.setdefault(e.lesson, []).append(e)
    for lesson, group in by_lesson.items():
        count: dict[tuple[str, ...], int] = {}
        for e in group:
            count[tuple(e.tokens)] = count.get(tuple(e.tokens), 0) + 1
        for a, b in combinations(group, 2):
            if _bound(a, b) < threshold:
                continue
            s = score(a.tokens, b.tokens)
            if s >= threshold:
                same = count[tuple(a.tokens)] if a.tokens == b.tokens else 0
                rows.append((s, [lesson, a.student, b.student, "%.2f" % s, str(min(len(a.tokens), len(b.tokens))),
                                 str(same) if same else "", _same(a, b)]))
    rows.sort(key=lambda r: (-r[0], r[1][0], r[1][1], r[1][2]))
    return [r for _, r in rows]


def cell_entries(cells: str, repo: str) -> list[Entry]:
    """Each graded cell's code (its copy of main.cu in box/src, read without following a link)."""
    layouts: dict[str, Layout | None] = {}
    out = []
    try:
        names = sorted(n for n in os.listdir(cells) if re.fullmatch(r"[0-9]{4,}", n))
    except OSError:
        return []
    for n in names:
        try:
            rec = cellrecord.read(os.path.join(cells, n))
            data = plan.read_source(cells, (n.encode(), b"box", b"src", b"main.cu"), MAX_SOURCE)
        except (OSError, plan.SourceError, cellrecord.RecordError):
            continue
        if rec is None:
            continue
        lesson = rec.lesson
        if lesson not in layouts:
            layouts[lesson] = layout(repo, lesson) if re.fullmatch(r"[0-9]{2}_[A-Za-z0-9_]+", lesson) else None
        lay = layouts[lesson]
        if lay is not None:
            out.append(Entry(rec.student, lesson, exercise_code(lay, data.decode("utf-8", "surrogateescape"))))
    return out


def write(cells: str, outdir: str, repo: str, threshold: float = THRESHOLD) -> int:
    """OUTDIR/similarity.csv from the cells of CELLS; the number of pairs listed."""
    rows = pairs(cell_entries(cells, repo), threshold)
    with open(os.path.join(outdir, "similarity.csv"), "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("".join(",".join(csv_field(x) for x in row) + "\n" for row in [HEADER] + rows))
    return len(rows)
