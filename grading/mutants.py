#!/usr/bin/env python3
"""One-line mutants of the lessons' EXERCISE regions: the mistakes students make, made on purpose.

    mutants.py list [--lesson NN] [--diff]     every mutant: its id, rule and line (with --diff, as a diff)
    mutants.py show ID                         one mutant as a unified diff
    mutants.py apply ID OUT                    the mutated main.cu written to OUT
    mutants.py count                           how many mutants each rule makes, per lesson

A one-line mutant changes exactly one line inside an `// EXERCISE BEGIN` ... `// EXERCISE END`
region of lessons/NN_name/main.cu (never a marker line, never a comment-only line) by one rule, such
as a dropped __syncthreads(), swapped tile indices, an off-by-one bound, the padding removed, a
wrong loop stride or a half-warp shuffle mask. The list is deterministic: lessons in folder order,
lines in file order, rules in the order of RULES, occurrences left to right. An id is
`NN_name:REGION+OFFSET:rule:K`: the region's id, the line's offset from its BEGIN line (the BEGIN
line is +0), and K counting that rule's changes on that line from 0. So an id names the same change
however the code above the region changes (grading/equivalent_mutants.txt relies on it).

A region mutant replaces a whole region, markers included (REGION_RULES), with what no one-line
rule can make: the exercise's own stub (rule `stub`, every region: what the student is given, which
must fail), lesson 01's naive transpose in a tiled gap (`naive_in_tiled`, lesson 02's and lesson
03's two: no shared memory at all), and each of lesson 01's regions written the other way round (`other_coalescing`:
still correct, but the coalesced side and the strided side swapped), and a correct kernel that misses
its exercise's idea (`misses_idea`: both sides strided, an interleaved tree, a warp sum through shared
memory, ...; MISSES_IDEA). Its id is
`NN_name:REGION+0:rule:0`, after the lesson's one-line mutants in the list.

The regions are read by grading/regions.py, as scripts/make_exercises.cmake reads them.

scripts/mutation_run.sh builds and grades each mutant (checks, memcheck, static evidence) on a
machine with a GPU and reports which layer caught it.
"""
import difflib
import os
import re
import sys

from . import cmdline
from . import regions as markers

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def _sub_each(pattern, replacement):
    """A rule that applies `replacement` at each match of `pattern` separately (one mutant per match)."""
    regex = re.compile(pattern)

    def rule(line):
        out = []
        for m in regex.finditer(line):
            new = m.expand(replacement) if isinstance(replacement, str) else replacement(m)
            if new is not None and new != m.group(0):
                out.append(line[: m.start()] + new + line[m.end():])
        return out

    return rule


def _swap_pair(a, b):
    """A rule that swaps every `a` and `b` on the line at once (a line must hold both)."""

    def rule(line):
        if a not in line or b not in line:
            return []
        marker = "\x00"
        return [line.replace(a, marker).replace(b, a).replace(marker, b)]

    return rule


def _swap_subscripts(line):
    """X[i][j] -> X[j][i] for each two-subscript access (a transposed tile index)."""
    out = []
    for m in re.finditer(r"\b(\w+)\[([^\[\]]+)\]\[([^\[\]]+)\](?!\[)", line):
        if m.group(2).strip() == m.group(3).strip():
            continue
        if line[: m.start()].rstrip().endswith("float") or "__shared__" in line:
            continue  # a declaration: swapping its extents is the padding rule's business
        out.append(line[: m.start()] + f"{m.group(1)}[{m.group(3)}][{m.group(2)}]" + line[m.end():])
    return out


def _padding(line):
    """The padding removed: a shared tile's padded extent, a pitch of edge + 1, a pad constant."""
    out = []
    if "__shared__" in line:
        out += [line[: m.start()] + "[kTile]" + line[m.end():] for m in re.finditer(r"\[kPitch\]", line)]
        out += [line[: m.start()] + f"[{m.group(1)}]" + line[m.end():]
                for m in re.finditer(r"\[(\w+) \+ (?:1|kAPad|kPad)\]", line)]
    out += [line[: m.start()] + m.group(1) + line[m.end():] for m in re.finditer(r"(pitch = \w+) \+ 1\b", line)]
    out += [line[: m.start()] + m.group(1) + line[m.end():] for m in re.finditer(r"\((kTile|kPitch|edge) \+ 1\)", line)]
    out += [line[: m.start()] + m.group(1) + "0" + line[m.end():] for m in re.finditer(r"(\bk\w*Pad = )[1-9]\d*", line)]
    return out


def _redundant_rows(line):
    """A tile loop where every thread row walks every row: `y = threadIdx.y; ...; y += STEP` -> `y = 0; ...; y += 1`."""
    m = re.search(r"for \(int (\w+) = threadIdx\.y; (.*?); \1 \+= ([^)]+)\)", line)
    if not m:
        return []
    var = m.group(1)
    return [line[: m.start()] + f"for (int {var} = 0; {m.group(2)}; {var} += 1)" + line[m.end():]]


# (name, what it models, rule). A rule maps one source line to the list of its mutated versions.
RULES = [
    ("drop_barrier", "a __syncthreads() left out", _sub_each(r"__syncthreads\(\);", "")),
    ("drop_fence", "a __threadfence() left out", _sub_each(r"__threadfence\(\);", "")),
    ("half_mask", "a shuffle mask naming only lanes 0-15",
     _sub_each(r"(?<=__shfl_)(\w+_sync\()(kFullMask|0xffffffffu?|~0u|-1)", r"\g<1>0x0000ffffu")),
    ("off_by_one", "a bound one too far: < becomes <=", _sub_each(r"(?<=\w)(\)?) < (?=\w)", r"\1 <= ")),
    ("off_by_one_short", "a bound one too short: <= becomes <", _sub_each(r"(?<=\w) <= (?=\w)", " < ")),
    ("swap_subscripts", "a tile read or written transposed: X[i][j] becomes X[j][i]", _swap_subscripts),
    ("swap_block_indices", "blockIdx.x and blockIdx.y swapped", _swap_pair("blockIdx.x", "blockIdx.y")),
    ("swap_thread_indices", "threadIdx.x and threadIdx.y swapped", _swap_pair("threadIdx.x", "threadIdx.y")),
    ("no_padding", "the padding removed from a shared tile", _padding),
    ("redundant_rows", "every thread row walks every tile row", _redundant_rows),
    ("wrong_stride", "a loop stride of 1 instead of the block's", _sub_each(r"(?<=\+= )(?!1\b)[\w.* ]+(?=\))", "1")),
    ("wrong_halving", "a halving loop that skips rounds: /= 2 becomes /= 4", _sub_each(r"/= 2\b", "/= 4")),
    ("vector_dimension", "a 16-byte path chosen on the wrong dimension",
     lambda line: [line[: m.start()] + f"{d} % 4 == 0" + line[m.end():]
                   for m in re.finditer(r"\b([MNK]) % 4 == 0", line) for d in "MNK" if d != m.group(1)]),
    ("drop_alignment", "a 16-byte path taken without checking the pointer's alignment",
     _sub_each(r" && aligned16\(\w+\)", "")),
    ("no_swizzle", "the XOR swizzle left out", _sub_each(r"\((\w+) \^ \([^()]+\)\)", r"\1")),
    ("swizzle_half", "a swizzle over 16 banks, not 32", _sub_each(r"& 31\b", "& 15")),
    ("return_own_slot", "each thread returns its own slot, not the total every thread should get",
     _sub_each(r"(?<=return )(\w+)\[0\](?=;)", r"\1[threadIdx.x]")),
    ("drop_reset", "a counter left as it is for the next launch", _sub_each(r"^(\s*)\*\w+ = 0;", r"\1")),
]


def regions(text):
    """[(region id, BEGIN line index, END line index)] (0-based, both markers included), in file order
    (grading/regions.py reads them; a marker it refuses raises its MarkerError)."""
    return [(r.id, r.begin, r.end) for r in markers.parse(text)]


def stub_of(lines, begin, end, rid):
    """The region's lines as the exercise has them: a TODO line, then each STUB line's code, indented
    like its marker (as scripts/make_exercises.cmake writes it; the TODO's text is left out)."""
    region = next(r for r in markers.parse("\n".join(lines)) if r.begin == begin)
    return ["%s// TODO(%s): the exercise as given (its stub)" % (region.indent, rid)] + region.stubs


def mutant_id(lesson, rid, begin, line, rule, k):
    """NN_name:REGION+OFFSET:rule:K, OFFSET counted from the region's BEGIN line (0-based LINE and BEGIN)."""
    return f"{lesson}:{rid}+{line - begin}:{rule}:{k}"


# Region mistakes no one-line rule makes, by (lesson folder prefix, region id): the region's new code.
# Each compiles in its place and is correct; only its access pattern (what the lesson is about) is wrong.
_NAIVE_IN_TILED = [
    "    // lesson 01's transpose in the tiled kernel's place: no shared memory, writes kTile floats apart",
    "    const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;",
    "    for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {",
    "        const int r = row0 + y, c = col0 + threadIdx.x;",
    "        if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];",
    "    }",
]
# The same in lesson 03's dynamic tiles (edge = blockDim.x, rows per pass = blockDim.y, set at launch).
_NAIVE_IN_DYNAMIC = [
    "    // lesson 01's transpose in the dynamic tile's place: no shared memory, writes edge floats apart",
    "    const int edge = blockDim.x, row0 = blockIdx.y * edge, col0 = blockIdx.x * edge;",
    "    for (int y = threadIdx.y; y < edge; y += blockDim.y) {",
    "        const int r = row0 + y, c = col0 + threadIdx.x;",
    "        if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];",
    "    }",
]
# Lesson 01 the other way round, for any launch: one element per step of a grid-stride loop over a
# linear index, consecutive lanes on consecutive floats of `in` (reads coalesced, writes strided) or
# of `out` (writes coalesced, reads strided).
_GRID_STRIDE = [
    "    const long long n = static_cast<long long>(rows) * cols;",
    "    const long long threads = static_cast<long long>(gridDim.x) * gridDim.y * blockDim.x * blockDim.y;",
    "    const long long first = (static_cast<long long>(blockIdx.y) * gridDim.x + blockIdx.x) * blockDim.x * blockDim.y +",
    "                            threadIdx.y * blockDim.x + threadIdx.x;",
]
REGION_CODE = {
    ("02", "02.tiled", "naive_in_tiled"): _NAIVE_IN_TILED,
    ("03", "03.tile", "naive_in_tiled"): _NAIVE_IN_DYNAMIC,
    ("03", "03.tile_in_flight", "naive_in_tiled"): _NAIVE_IN_DYNAMIC,
    ("01", "01.strided_reads", "other_coalescing"): [
        "    // written the other way: coalesced reads, strided writes (the other exercise's pattern)"] + _GRID_STRIDE + [
        "    for (long long i = first; i < n; i += threads) out[(i % cols) * rows + i / cols] = in[i];"],
    ("01", "01.strided_writes", "other_coalescing"): [
        "    // written the other way: strided reads, coalesced writes (the other exercise's pattern)"] + _GRID_STRIDE + [
        "    for (long long i = first; i < n; i += threads) out[i] = in[(i % rows) * cols + i / rows];"],
}

# A correct kernel that misses the idea its exercise's lesson teaches (the rubrics' "idea"), one per
# exercise where one can be written in the region: each passes the checks (lesson 06's layouts
# excepted: the course's bank model is one of its checks) and must lose at least 15 of 100 points
# (scripts/make_score_class.sh's "pointless" rows).
MISSES_IDEA = {
    ("01", "01.strided_reads"): [
        "    // both sides strided: consecutive lanes walk a diagonal, a row plus a column apart in `in` and in `out`"] + _GRID_STRIDE + [
        "    for (long long i = first; i < n; i += threads) {",
        "        const long long r = i % rows, c = (i / rows + r) % cols;",
        "        out[c * rows + r] = in[r * cols + c];",
        "    }"],
    ("02", "02.tiled"): [
        "    // a tile, but stored back by its rows: each warp writes 32 different rows of `out`",
        "    __shared__ float tile[kTile][kPitch];",
        "    const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;",
        "    for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {",
        "        const int r = row0 + y, c = col0 + threadIdx.x;",
        "        if (r < rows && c < cols) tile[y][threadIdx.x] = in[r * cols + c];",
        "    }",
        "    __syncthreads();",
        "    for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {",
        "        const int r = row0 + y, c = col0 + threadIdx.x;",
        "        if (r < rows && c < cols) out[c * rows + r] = tile[y][threadIdx.x];",
        "    }"],
    ("03", "03.tile_in_flight"): [
        "    // one load in flight: the plain loop with the step blockDim.y, which nvcc leaves rolled",
        "    extern __shared__ float tile[];",
        "    const int edge = blockDim.x, pitch = edge + 1;",
        "    const int row0 = blockIdx.y * edge, col0 = blockIdx.x * edge;",
        "    for (int y = threadIdx.y; y < edge; y += blockDim.y) {",
        "        const int r = row0 + y, c = col0 + threadIdx.x;",
        "        if (r < rows && c < cols) tile[y * pitch + threadIdx.x] = in[r * cols + c];",
        "    }",
        "    __syncthreads();",
        "    for (int y = threadIdx.y; y < edge; y += blockDim.y) {",
        "        const int out_row = col0 + y, out_col = row0 + threadIdx.x;",
        "        if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[threadIdx.x * pitch + y];",
        "    }"],
    ("03", "03.records"): [
        "    // straight from global memory: each thread copies another thread's record, no shared buffer",
        "    const int first = blockIdx.x * blockDim.x, count = min(static_cast<int>(blockDim.x), n - first), t = threadIdx.x;",
        "    if (t < count) {",
        "        const int from = first + count - 1 - t;",
        "        a_out[first + t] = a[from];",
        "        b_out[first + t] = b[from];",
        "        c_out[first + t] = c[from];",
        "    }"],
    ("04", "04.tree"): [
        "    // interleaved addressing: the active threads are every (2 x stride)-th, spread over all the warps",
        "    __shared__ float s[kBlock];",
        "    const int t = threadIdx.x;",
        "    s[t] = v;",
        "    __syncthreads();",
        "    for (int stride = 1; stride < kBlock; stride *= 2) {",
        "        if (t % (2 * stride) == 0) s[t] += s[t + stride];",
        "        __syncthreads();",
        "    }",
        "    return s[0];"],
    ("04", "04.shuffle"): [
        "    // through shared memory: each warp halves its 32 values in its own slice, with __syncwarp() between rounds",
        "    __shared__ float s[kWarp * kWarp];  // a slice per warp, for blocks of up to 1024 threads",
        "    const int lane = threadIdx.x % kWarp;",
        "    float* w = s + threadIdx.x / kWarp * kWarp;",
        "    w[lane] = v;",
        "    __syncwarp();",
        "    for (int offset = kWarp / 2; offset > 0; offset /= 2) {",
        "        if (lane < offset) w[lane] += w[lane + offset];",
        "        __syncwarp();",
        "    }",
        "    return w[0];"],
    ("04", "04.last_block"): [
        "    // the last block found, but one of its threads adds every partial, one after another",
        "    const float block_total = block_sum_shuffle<kThreads>(thread_sum_vec4<kLastBlockUnroll>(in, n));",
        "    __shared__ bool is_last;",
        "    if (threadIdx.x == 0) {",
        "        partials[blockIdx.x] = block_total;",
        "        __threadfence();",
        "        is_last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;",
        "        __threadfence();",
        "    }",
        "    __syncthreads();",
        "    if (!is_last || threadIdx.x != 0) return;",
        "    float total = 0.0f;",
        "    for (unsigned b = 0; b < gridDim.x; ++b) total += __ldcg(&partials[b]);",
        "    *out = total;",
        "    *blocks_done = 0;"],
    ("05", "05.tiled"): [
        "    // no tiles: every thread reads its whole row of A and column of B from global memory",
        "    const int ty = threadIdx.y, tx = threadIdx.x;",
        "    const MatrixView<float> c_block = C.block(blockIdx.y, blockIdx.x, T, T);",
        "    if (!c_block.contains(ty, tx)) return;",
        "    const MatrixView<const float> a_rows = A.block(blockIdx.y, 0, T, A.cols), b_cols = B.block(0, blockIdx.x, B.rows, T);",
        "    float sum = 0.0f;",
        "    for (int k = 0; k < A.cols; ++k) sum += a_rows.at(ty, k) * b_cols.at(k, tx);",
        "    c_block.at(ty, tx) = sum;"],
    ("06", "06.swizzled"): [
        "// an XOR of the row's low four bits only: a column still meets itself in 16 banks (2-way conflicts)",
        "template <int kTile>",
        "struct SwizzledTile {",
        "    static constexpr int kWords = kTile * kTile;",
        "    __host__ __device__ static constexpr int at(int r, int c) { return r * kTile + (c ^ (r & 15)); }",
        "};"],
}
REGION_CODE.update({(lesson, rid, "misses_idea"): code for (lesson, rid), code in MISSES_IDEA.items()})

# (name, what it models). Region rules replace a whole region (see the module's docstring).
REGION_RULES = [
    ("stub", "the exercise as given: the region's stub, which must fail its checks"),
    ("naive_in_tiled", "lesson 01's naive transpose in a tiled gap (lesson 02's, lesson 03's two): no shared memory at all"),
    ("other_coalescing", "a lesson 01 region written the other way: the coalesced and the strided side swapped"),
    ("misses_idea", "a correct kernel that misses the idea its exercise's lesson teaches (interleaved tree, shared-memory warp sum, ...)"),
]


def region_mutants_of(lesson, text):
    """[(id, rule, BEGIN line number, old region text, new region text)] for one lesson's main.cu."""
    lines = text.split("\n")
    out = []
    for rid, begin, end in regions(text):
        old = "\n".join(lines[begin:end + 1])
        for name, _ in REGION_RULES:
            new = stub_of(lines, begin, end, rid) if name == "stub" else REGION_CODE.get((lesson[:2], rid, name))
            if new is not None:
                out.append((mutant_id(lesson, rid, begin, begin, name, 0), name, begin + 1, old, "\n".join(new)))
    return out


def exercise_lines(text):
    """Indices (0-based) of the lines inside EXERCISE regions that are code (no markers, no comment-only lines)."""
    return [i for _, i, _ in _region_lines(text)]


def _region_lines(text):
    """(region id, line index, BEGIN index) of each code line inside a region, in file order."""
    lines, out = text.split("\n"), []
    for rid, begin, end in regions(text):
        for i in range(begin + 1, end):
            stripped = lines[i].strip()
            if stripped and not stripped.startswith("//") and not stripped.startswith("#pragma"):
                out.append((rid, i, begin))
    return out


def code_part(line):
    """The line without a trailing // comment (rules never change comments)."""
    m = re.search(r"//", line)
    return (line[: m.start()], line[m.start():]) if m else (line, "")


def mutants_of(lesson, text):
    """[(id, rule, line number, old text, new text)] for one lesson's main.cu text: its one-line
    mutants (old and new: one line), then its region mutants (old: the region, markers included)."""
    lines = text.split("\n")
    out = []
    for rid, i, begin in _region_lines(text):
        code, comment = code_part(lines[i])
        for name, _, rule in RULES:
            for k, new_code in enumerate(rule(code)):
                new = new_code + comment
                if new.strip() == "" and comment:
                    new = new_code.rstrip() + comment
                out.append((mutant_id(lesson, rid, begin, i, name, k), name, i + 1, lines[i], new))
    return out + region_mutants_of(lesson, text)


def lessons(root=ROOT):
    folder = os.path.join(root, "lessons")
    if not os.path.isdir(folder):
        return []
    return sorted(d for d in os.listdir(folder)
                  if re.match(r"^\d\d_", d) and os.path.isfile(os.path.join(folder, d, "main.cu")))


def read_lesson(lesson, root=ROOT):
    with open(os.path.join(root, "lessons", lesson, "main.cu"), encoding="utf-8") as f:
        return f.read()


def all_mutants(root=ROOT, only=None):
    out = []
    for lesson in lessons(root):
        if only and not (lesson == only or lesson.startswith(only + "_")):
            continue
        out += mutants_of(lesson, read_lesson(lesson, root))
    return out


def apply(text, line_number, new, old=None):
    """TEXT with the line at LINE_NUMBER (1-based) replaced by NEW, or with as many lines as OLD has
    (a region mutant) replaced by NEW's lines."""
    lines = text.split("\n")
    count = 1 if old is None else len(old.split("\n"))
    lines[line_number - 1:line_number - 1 + count] = new.split("\n")
    return "\n".join(lines)


def diff(lesson, text, line_number, new, old=None):
    path = f"lessons/{lesson}/main.cu"
    return "".join(difflib.unified_diff(text.splitlines(keepends=True),
                                        apply(text, line_number, new, old).splitlines(keepends=True),
                                        fromfile="a/" + path, tofile="b/" + path, n=1))


def find(mutant_id, root=ROOT):
    lesson = mutant_id.split(":", 1)[0]
    if lesson not in lessons(root):
        raise KeyError(f"no lesson {lesson!r} (mutant ids look like 02_shared_transpose:02.tiled+9:drop_barrier:0)")
    for m in mutants_of(lesson, read_lesson(lesson, root)):
        if m[0] == mutant_id:
            return m
    raise KeyError(f"no mutant {mutant_id!r}: `mutants.py list --lesson {lesson[:2]}` lists them")


def _parsers():
    """Each command's parser (argparse): list [--lesson NN] [--diff] (the first --lesson counts;
    other arguments are ignored, as they always were), show ID, apply ID OUT, count."""
    ps = {name: cmdline.Parser("mutants.py " + name) for name in ("list", "show", "apply", "count")}
    ps["list"].add_argument("--lesson", action="append", type=cmdline.value)
    ps["list"].add_argument("--diff", action="store_true")
    ps["list"].add_argument("ignored", nargs="*", type=cmdline.value)
    for name, operands in (("show", ("id",)), ("apply", ("id", "out"))):
        for operand in operands:
            ps[name].add_argument(operand, type=cmdline.value)
    return ps


def _command_line(args):
    """ARGS read by the command's parser (argparse); None: any other command line.
    cmdline.Unknown: --lesson with nothing after it."""
    parser = _parsers().get(args[0])
    if parser is None:
        return None
    listing = args[0] == "list"
    tokens = cmdline.marked(args[1:], flags=("--diff",) if listing else (), valued=("--lesson",) if listing else ())
    try:
        a = parser.parse_intermixed_args(tokens)
    except cmdline.Unknown:
        raise
    except cmdline.Refused:
        return None
    a.command = args[0]
    return a


def _list(only, as_diff):
    for mid, rule, number, old, new in all_mutants(only=only):
        if as_diff:
            lesson = mid.split(":", 1)[0]
            print(f"# {mid}")
            print(diff(lesson, read_lesson(lesson), number, new, old), end="")
        else:
            print(f"{mid}\t{new.strip()}" if "\n" not in new else f"{mid}\t({rule}: {len(new.split(chr(10)))} lines for the region)")


def main(argv):
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    try:
        a = _command_line(args)
        if a is None:
            print("mutants.py: unknown command line (see --help)", file=sys.stderr)
            return 2
        if a.command == "list":
            _list(a.lesson[0] if a.lesson else None, a.diff)
        elif a.command == "show":
            mid, _, number, old, new = find(a.id)
            lesson = mid.split(":", 1)[0]
            print(diff(lesson, read_lesson(lesson), number, new, old), end="")
        elif a.command == "apply":
            mid, _, number, old, new = find(a.id)
            with open(a.out, "w", encoding="utf-8") as f:
                f.write(apply(read_lesson(mid.split(":", 1)[0]), number, new, old))
        else:
            counts = {}
            for mid, rule, *_ in all_mutants():
                key = (mid.split(":", 1)[0], rule)
                counts[key] = counts.get(key, 0) + 1
            for (lesson, rule), n in sorted(counts.items()):
                print(f"{lesson}\t{rule}\t{n}")
            print(f"total\t\t{sum(counts.values())}")
        return 0
    except cmdline.Unknown as e:
        print(f"mutants.py: {e.arg} needs a value (see --help)", file=sys.stderr)
        return 2
    except (KeyError, IndexError, OSError, markers.MarkerError) as e:
        print(f"mutants.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
