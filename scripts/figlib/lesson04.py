"""Lesson 04's idea figures: one block's tree in shared memory, one SM's loads over time with a
block per 256 elements against a grid-stride loop, one warp's shuffles, and the block sum built
from warp sums.

Every count comes from lesson 04's main.cu: kBlock (threads per block, the tree's width) and kWarp
(lanes per warp, whose half is the first shuffle offset). The tree is drawn for a small width, so
that each thread's cell can be read; the figure says what the lesson's kBlock gives. The rounds,
strides, offsets and barrier counts are computed here from those constants, the way the kernels'
loops compute them (`for (stride = kBlock / 2; stride > 0; stride /= 2)`, and the same from kWarp / 2).
"""
from __future__ import annotations

import re

from figlib import models
from figlib.svg import Svg

LESSON = "04_reduction"
MAIN = "lessons/04_reduction/main.cu"

TREE_WIDTH = 16  # the drawn tree: small enough to label every thread (the lesson's is kBlock)


def halvings(width: int) -> list[int]:
    """The strides (or shuffle offsets) of a halving sum over `width` values: width/2, ..., 1."""
    out, s = [], width // 2
    while s > 0:
        out.append(s)
        s //= 2
    return out


def _legend_box(s: Svg, x: float, y: float, fill: str, stroke: str, label: str) -> None:
    s.rect(x, y - 10, 14, 12, fill=fill, stroke=stroke)
    s.text(x + 20, y, label, size=12)


def tree() -> str:
    """block_sum_tree for TREE_WIDTH threads: which thread adds which slot in each round."""
    block = models.constant(MAIN, "kBlock")
    width = TREE_WIDTH
    strides = halvings(width)
    cell, h, pitch = 32, 26, 92
    x0, y0 = 124, 78
    right = x0 + width * cell
    height = y0 + len(strides) * pitch + h + 150
    s = Svg(800, height, f"block_sum_tree drawn for {width} threads: each round the lower half adds the "
                         f"upper half, with a barrier between rounds; the lesson's block has {block} threads")
    s.text(16, 26, f"One block's tree in shared memory (block_sum_tree), drawn for {width} threads",
           size=16, bold=True)
    s.text(16, 46, "Each round, thread t below the stride does s[t] += s[t + stride]; then every thread "
                   "waits at __syncthreads().", size=12)

    def cx(t: int) -> float:
        return x0 + t * cell + cell / 2

    # Lane numbers above the first row.
    for t in range(width):
        s.text(cx(t), y0 - 8, str(t), size=10, anchor="middle", fill="#555555")
    s.text(x0 - 8, y0 - 8, "thread t", size=10, anchor="end", fill="#555555")

    counts = [1] * width  # how many elements each slot sums
    live = width          # slots still to be read
    for row in range(len(strides) + 1):
        y = y0 + row * pitch
        if row == 0:
            s.text(x0 - 10, y + 17, "s[t] = v", size=12, anchor="end", mono=True)
        else:
            stride = strides[row - 1]
            for t in range(stride):
                counts[t] += counts[t + stride]
            live = stride
            s.text(x0 - 10, y + 17, f"stride {stride}", size=12, anchor="end", bold=True)
            s.text(right + 12, y + 8, f"threads 0–{stride - 1} add" if stride > 1 else "thread 0 adds",
                   size=12)
            s.text(right + 12, y + 24, f"threads {stride}–{width - 1} only wait", size=11, fill="#555555")
        for t in range(width):
            active = t < live
            s.rect(x0 + t * cell + 1, y, cell - 2, h, fill="light_blue" if active else "muted",
                   stroke="blue" if active else "grid")
            if active:
                final = row == len(strides) and t == 0
                s.text(cx(t), y + 17, str(counts[t]), size=12, anchor="middle", bold=final)
        # The barrier after this row's writes (the stores, then every round, the last one too:
        # after stride 1 every thread reads s[0]), then the next round's reads.
        by = y + h + 12
        s.line(x0 - 4, by, right + 4, by, stroke="red", width=1.5, dash="6 4")
        s.text(x0 - 10, by + 4, "__syncthreads()", size=10, anchor="end", fill="red", mono=True)
        if row < len(strides):
            nxt = strides[row]
            top = y + pitch - 2
            for t in range(nxt):
                s.line(cx(t), by + 4, cx(t), top, stroke="ink", width=1)
                s.line(cx(t + nxt), by + 4, cx(t) + 4, top, stroke="blue", width=1.6, arrow=True)
    yl = y0 + len(strides) * pitch + h
    s.line(cx(0), yl + 16, cx(0), yl + 2, stroke="ink", width=1.2, arrow=True)
    s.text(cx(0) + 10, yl + 32, f"after the last barrier, every thread reads s[0]: the block's sum "
                                f"({len(strides) + 1} barriers for {width} threads)", size=12, bold=True)
    # Legend and what the lesson's own block does.
    ly = yl + 66
    _legend_box(s, 16, ly, "light_blue", "blue", "a slot still to be read; the number: how many elements it sums")
    s.line(470, ly - 4, 500, ly - 4, stroke="blue", width=1.6, arrow=True)
    s.text(506, ly, "s[t + stride] added into s[t]", size=12)
    _legend_box(s, 16, ly + 22, "muted", "grid", "a slot no thread reads again")
    s.line(300, ly + 18, 330, ly + 18, stroke="red", width=1.5, dash="6 4")
    s.text(336, ly + 22, "a barrier every thread of the block reaches", size=12)
    rounds = len(halvings(block))
    s.text(16, ly + 50, f"The lesson's block has kBlock = {block} threads: the same halving takes {rounds} rounds "
                        f"(stride {block // 2} down to 1)", size=12, bold=True)
    s.text(16, ly + 68, f"and {rounds + 1} barriers, one after the stores and one after each round.",
           size=12, bold=True)
    return s.to_string()


def default_n_log2() -> int:
    """kDefaultN of main.cu, written `1LL << 26`: the exponent."""
    m = re.search(r"constexpr\s+long\s+long\s+kDefaultN\s*=\s*1LL\s*<<\s*(\d+)\s*;", models.source_text(MAIN))
    if not m:
        raise models.ModelError(f"{MAIN}: no 'constexpr long long kDefaultN = 1LL << <integer>;'")
    return int(m.group(1))


SLOTS = 4  # resident blocks drawn for one SM, for space (the figure says how many the SM holds)
# Compute capability 9.0 (H100, H200), CUDA C++ Programming Guide: the most threads one SM holds.
# With kBlock threads per block that limits the SM to THREADS_PER_SM // kBlock resident blocks.
THREADS_PER_SM = 2048


# Not a constant of main.cu: what nvcc 13.0 makes of reduce_grid_stride's loop for sm_90. Its SASS
# (nvcc -arch=sm_90 -cubin, cuobjdump -sass) unrolls the loop by 4 and issues the 4 loads before
# the adds, so each thread has 4 loads in flight. The figure states it as the compiler's choice.
NVCC_GRID_STRIDE_UNROLL = 4


def grid_stride() -> str:
    """Schematic timeline of one SM: with a block per kBlock elements each block loads once, then
    sums its tree (a barrier per round) and hands on its sum, and its loads stop; with a
    grid-stride loop each resident block keeps loading until the array is done, then sums once.
    The 'loads in flight' row is counted from the drawn bars, so the two rows cannot disagree."""
    block = models.constant(MAIN, "kBlock")
    n_log2 = default_n_log2()
    blocks = (1 << n_log2) // block
    barriers = len(halvings(block)) + 1
    x0, x1 = 190, 780                      # the time axis
    load, tree, hand, gap = 46, 88, 10, 12  # a short block's phases, in px (not to scale)
    period = load + tree + hand + gap
    s = Svg(800, 562, f"Schematic: one SM's resident blocks over time ({SLOTS} of its "
                      f"{THREADS_PER_SM // block} block slots drawn). With one block per {block} elements "
                      "each block loads once and then spends most of its life in its tree's barriers, so the SM "
                      "has few loads in flight; with a grid-stride loop every block keeps loading until the "
                      "array is done and sums its tree once at the end")
    s.text(16, 26, "Why the grid, not the block sum, is the jump: one SM's blocks over time (schematic)",
           size=16, bold=True)
    s.text(16, 46, "Each row is one block resident on the SM; when it ends, the next block takes its place. "
                   "Lengths are not to scale.", size=12)
    s.text(16, 63, f"For space, {SLOTS} block slots are drawn: an H200 SM holds {THREADS_PER_SM} / {block} = "
                   f"{THREADS_PER_SM // block} blocks of {block} threads.", size=12)

    def panel(y: float, title: str, sub: str, bars: list[list[tuple[float, float, str]]]) -> None:
        s.text(16, y, title, size=13, bold=True)
        s.text(16, y + 17, sub, size=12, fill="#555555")
        top = y + 30
        for r, row in enumerate(bars):
            ry = top + r * 22
            s.text(x0 - 8, ry + 13, f"block slot {r + 1}", size=11, anchor="end", fill="#555555")
            for a, b, kind in row:
                a, b = max(a, x0), min(b, x1)
                if b <= a:
                    continue
                fill = {"load": "blue", "tree": "orange", "hand": "red"}[kind]
                s.rect(a, ry, b - a, 16, fill=fill, stroke="paper", width=0.5)
        # Loads in flight on the SM: how many slots are in a load phase, as a step chart (runs of
        # equal count merged into one bar), with a guide line per count and the time-average printed.
        dy = top + len(bars) * 22 + 8
        h_strip = 40
        s.text(x0 - 8, dy + 13, "slots loading", size=11, anchor="end", bold=True)
        s.text(x0 - 8, dy + 28, f"(0 to {len(bars)})", size=11, anchor="end", bold=True)
        s.rect(x0, dy, x1 - x0, h_strip, fill="muted", stroke="grid")
        counts = [sum(1 for row in bars for a, b, kind in row if kind == "load" and a <= x < b)
                  for x in range(x0, x1)]
        for c in range(1, len(bars)):
            y = dy + h_strip - h_strip * c / len(bars)
            s.line(x0, y, x1, y, stroke="grid", width=0.6)
        run_start = 0
        for i in range(1, len(counts) + 1):
            if i == len(counts) or counts[i] != counts[run_start]:
                c = counts[run_start]
                if c:
                    h = h_strip * c / len(bars)
                    s.rect(x0 + run_start, dy + h_strip - h, i - run_start, h, fill="sky", stroke="sky", width=0)
                run_start = i
        average = sum(counts) / len(counts)
        # The average is of the drawn bars, whose lengths are not to scale: the label says so.
        s.text(x0 - 8, dy + 45, f"{average:.1f} on average", size=11, anchor="end", fill="#555555")
        s.text(x0 - 8, dy + 59, "in this drawing", size=11, anchor="end", fill="#555555")

    # One block per kBlock elements: every slot runs short blocks, staggered.
    short = []
    for r in range(SLOTS):
        row, start = [], x0 - (r * period) // SLOTS
        while start < x1:
            a = start
            row += [(a, a + load, "load"), (a + load, a + load + tree, "tree"),
                    (a + load + tree, a + load + tree + hand, "hand")]
            start += period
        short.append(row)
    panel(92, f"One block per {block} elements (step 2): 2^{n_log2} / {block} = {blocks:,} blocks",
          f"each thread: 1 load in flight, once; then the tree's {barriers} barriers, while its block "
          "loads nothing", short)
    s.text(x0 + 4, 92 + 30 + 12, "1 load", size=10, fill="paper", bold=True)
    # Grid-stride: as many blocks as the SM holds, each loading until the end, then one tree.
    end = x1 - 40
    long_ = [[(x0, end - tree // 2 - (r * 6), "load"), (end - tree // 2 - (r * 6), end - r * 6, "tree"),
              (end - r * 6, end - r * 6 + hand, "hand")] for r in range(SLOTS)]
    panel(310, "Grid-stride loop (step 4 on): only as many blocks as the GPU holds at once",
          f"each thread: {NVCC_GRID_STRIDE_UNROLL} loads in flight at a time (nvcc 13.0 unrolls the loop "
          f"by {NVCC_GRID_STRIDE_UNROLL}), hundreds of elements; one tree at the end", long_)
    s.text(x0 + 8, 310 + 30 + 12, f"{NVCC_GRID_STRIDE_UNROLL} loads in flight per thread, over and over",
           size=11, fill="paper", bold=True)
    ly = 528
    for x, fill, words in [(16, "blue", "loading (loads in flight)"), (206, "orange", "the tree and its barriers"),
                           (400, "red", "handing on the sum"), (556, "paper", "a block ends, the next starts")]:
        s.rect(x, ly - 11, 14, 14, fill=fill, stroke="ink", width=0.5)
        s.text(x + 20, ly, words, size=12)
    s.rect(16, ly + 9, 14, 14, fill="sky", stroke="ink", width=0.5)
    s.text(36, ly + 20, "how many of the SM's blocks have loads in flight: what keeps DRAM busy", size=12)
    return s.to_string()


def shuffle() -> str:
    """warp_sum: __shfl_down_sync with offsets kWarp/2 ... 1; lane i takes lane i + offset's value."""
    warp = models.constant(MAIN, "kWarp")
    offsets = halvings(warp)
    cell, h, pitch = 19, 24, 84
    x0, y0 = 150, 82
    right = x0 + warp * cell
    height = y0 + len(offsets) * pitch + h + 122
    s = Svg(780, height, f"warp_sum: {len(offsets)} shuffle steps with offsets "
                         f"{', '.join(map(str, offsets))}; lane i adds the value of lane i + offset, "
                         "through registers, and lane 0 ends with the warp's sum")
    s.text(16, 26, f"One warp's sum with __shfl_down_sync (warp_sum): {warp} lanes, {len(offsets)} steps",
           size=16, bold=True)
    s.text(16, 46, "v += __shfl_down_sync(kFullMask, v, offset): lane i adds the v of lane i + offset, "
                   "register to register.", size=12)

    def cx(i: int) -> float:
        return x0 + i * cell + cell / 2

    for i in range(warp):
        if i % 4 == 0 or i == warp - 1:
            s.text(cx(i), y0 - 8, str(i), size=10, anchor="middle", fill="#555555")
    s.text(x0 - 10, y0 - 8, "lane", size=10, anchor="end", fill="#555555")
    counts = [1] * warp
    needed = warp
    for row in range(len(offsets) + 1):
        y = y0 + row * pitch
        if row == 0:
            s.text(x0 - 10, y + 16, "v (one per lane)", size=12, anchor="end")
        else:
            off = offsets[row - 1]
            for i in range(off):
                counts[i] += counts[i + off]
            needed = off
            s.text(x0 - 10, y + 16, f"offset {off}", size=12, anchor="end", bold=True)
        for i in range(warp):
            active = i < needed
            s.rect(x0 + i * cell + 1, y, cell - 2, h, fill="light_green" if active else "muted",
                   stroke="green" if active else "grid")
            if active:
                s.text(cx(i), y + 16, str(counts[i]), size=9 if counts[i] >= 10 else 11, anchor="middle",
                       bold=row == len(offsets))
        if row < len(offsets):
            off = offsets[row]
            top = y + pitch - 2
            for i in range(off):
                s.line(cx(i + off), y + h + 2, cx(i), top, stroke="orange", width=1.4)
                s.circle(cx(i), top - 1, 2.2, fill="orange", stroke="orange")
    yl = y0 + len(offsets) * pitch + h
    s.text(x0 + 2, yl + 16, "↑ lane 0: the warp's sum", size=12, bold=True)
    ly = yl + 44
    _legend_box(s, 16, ly, "light_green", "green", "a lane whose v lane 0 still needs; the number: elements it sums")
    s.line(520, ly - 10, 550, ly, stroke="orange", width=1.4)
    s.circle(550, ly, 2.2, fill="orange", stroke="orange")
    s.text(558, ly, "lane i gets v of lane i + offset", size=12)
    _legend_box(s, 16, ly + 22, "muted", "grid", "the other lanes add too, but lane 0 never uses their result")
    s.text(16, ly + 48, f"No shared memory and no __syncthreads(): the shuffle itself synchronises the "
                        f"{warp} lanes named", size=12, bold=True)
    s.text(16, ly + 66, f"in its mask. The offsets are kWarp / 2 = {warp // 2} halved down to 1 (kWarp = {warp} "
                        "in main.cu).", size=12, bold=True)
    return s.to_string()


def block_of_warps() -> str:
    """block_sum_shuffle: every warp sums by shuffles, lane 0 stores the warp's sum, one barrier,
    warp 0 sums the warp sums."""
    block = models.constant(MAIN, "kBlock")
    warp = models.constant(MAIN, "kWarp")
    warps = block // warp
    tree_barriers = len(halvings(block)) + 1
    s = Svg(800, 344, f"block_sum_shuffle for {block} threads: {warps} warps each sum by shuffles, lane 0 "
                      f"of each stores its sum in shared memory, one barrier, then warp 0 sums the "
                      f"{warps} warp sums; the tree needs {tree_barriers} barriers")
    s.text(16, 26, f"A block's sum from warp sums (block_sum_shuffle): {block} threads = {warps} warps",
           size=16, bold=True)
    s.text(16, 46, "Shuffles inside each warp, then one warp over the warp sums.", size=12)
    box_w, gap, x0 = 66, 6, 16
    y_warp, y_shared, y_bar, y_w0 = 62, 148, 196, 228
    right = x0 + warps * (box_w + gap) - gap
    lx = right + 14
    for w in range(warps):
        x = x0 + w * (box_w + gap)
        mid = x + box_w / 2
        s.rect(x, y_warp, box_w, 40, fill="light_green", stroke="green", rx=4)
        s.text(mid, y_warp + 17, f"warp {w}", size=12, anchor="middle", bold=True)
        s.text(mid, y_warp + 32, f"lanes {w * warp}–{w * warp + warp - 1}", size=9, anchor="middle")
        s.line(mid, y_warp + 42, mid, y_shared - 2, stroke="ink", width=1.2, arrow=True)
        s.rect(mid - 22, y_shared, 44, 26, fill="light_blue", stroke="blue")
        s.text(mid, y_shared + 17, f"[{w}]", size=11, anchor="middle", mono=True)
        s.line(mid, y_shared + 28, mid, y_w0 - 2, stroke="blue", width=1.2, arrow=True)
    s.text(lx, y_warp + 16, "1. warp_sum in", size=12, bold=True)
    s.text(lx, y_warp + 32, f"every warp ({len(halvings(warp))} shuffles)", size=12)
    s.text(lx, y_shared - 6, "lane 0 of each warp", size=12)
    s.text(lx, y_shared + 10, "stores its sum in", size=12)
    s.text(lx, y_shared + 26, "warp_totals (shared)", size=12, fill="blue")
    s.line(x0, y_bar, right, y_bar, stroke="red", width=1.5, dash="6 4")
    s.text(lx, y_bar + 4, "2. one __syncthreads()", size=12, fill="red", bold=True)
    s.rect(x0, y_w0, right - x0, 40, fill="light_green", stroke="green", rx=4)
    s.text((x0 + right) / 2, y_w0 + 17, f"warp 0: lane i < {warps} reads warp_totals[i], lanes {warps}–{warp - 1} "
                                      "take 0; warp_sum again", size=12, anchor="middle")
    s.text((x0 + right) / 2, y_w0 + 33, "thread 0 ends with the block's sum", size=12, anchor="middle", bold=True)
    s.text(lx, y_w0 + 16, "3. warp 0 sums", size=12, bold=True)
    s.text(lx, y_w0 + 32, "the warp sums", size=12)
    s.text(16, 300, f"One barrier, where the shared-memory tree over {block} threads needs {tree_barriers}; "
                    f"shared memory holds only {warps} floats.", size=12, bold=True)
    s.text(16, 320, f"The scheme works up to kWarp × kWarp = {warp * warp} threads ({warp} warps): warp 0 "
                    "has one lane per warp sum.", size=12)
    return s.to_string()


# The drawn grid of grid_stride_map: a toy, small enough to number every element (the lesson's
# grid is kBlock threads per block times SMs x blocks per SM; the figure says so).
TOY_BLOCKS, TOY_THREADS, TOY_PASSES = 3, 8, 3
FOLLOWED = (1, 2)  # (block, thread) outlined through its passes


def grid_stride_map() -> str:
    """Which elements thread t of block b reads in each pass of reduce_grid_stride's loop, for a
    toy grid: i = b * blockDim + t + pass * gridDim * blockDim, as the kernel computes it. Every
    cell is placed by its index i (row i // stride, column i % stride), so each row is one pass only
    if the formula makes it so."""
    block = models.constant(MAIN, "kBlock")
    stride = TOY_BLOCKS * TOY_THREADS
    n = stride * TOY_PASSES
    fills = ["light_blue", "light_orange", "light_green"]
    strokes = ["blue", "orange", "green"]
    cell, h, pitch = 26, 34, 62
    x0, y0 = 112, 112
    s = Svg(800, y0 + TOY_PASSES * pitch + 90,
            f"Grid-stride addresses for a toy grid of {TOY_BLOCKS} blocks of {TOY_THREADS} threads over {n} "
            f"elements: in each pass the {stride} threads read {stride} neighbouring elements, block 0 first; "
            f"the next pass starts {stride} elements further on")
    s.text(16, 26, f"A grid-stride loop's addresses, drawn for {TOY_BLOCKS} blocks of {TOY_THREADS} threads "
                   f"over {n} floats", size=16, bold=True)
    s.text(16, 46, "i = blockIdx.x * blockDim.x + threadIdx.x, then i += gridDim.x * blockDim.x "
                   f"(= {TOY_BLOCKS} × {TOY_THREADS} = {stride} here) until i ≥ n.", size=12)
    s.text(16, 64, "Each cell is one element of the array, placed by its index; the small number is the "
                   "thread t that reads it.", size=12)
    for c in range(0, stride, 4):
        s.text(x0 + c * cell + cell / 2, y0 - 26, f"+{c}", size=10, anchor="middle", fill="#555555")
    for b in range(TOY_BLOCKS):
        a = x0 + b * TOY_THREADS * cell
        s.line(a + 2, y0 - 10, a + TOY_THREADS * cell - 2, y0 - 10, stroke=strokes[b], width=3)
        s.text(a + TOY_THREADS * cell / 2, y0 - 14, f"block {b}", size=11, anchor="middle", bold=True,
               fill=strokes[b])
    seen = set()
    for p in range(TOY_PASSES):
        for b in range(TOY_BLOCKS):
            for t in range(TOY_THREADS):
                i = b * TOY_THREADS + t + p * stride  # the kernel's index
                seen.add(i)
                row, col = divmod(i, stride)
                x, y = x0 + col * cell, y0 + row * pitch
                followed = (b, t) == FOLLOWED
                s.rect(x + 1, y, cell - 2, h, fill=fills[b], stroke="ink" if followed else strokes[b],
                       width=2.5 if followed else 1)
                s.text(x + cell / 2, y + 14, str(i), size=10, anchor="middle", mono=True)
                s.text(x + cell / 2, y + 28, f"t{t}", size=9, anchor="middle", fill="#555555")
    if seen != set(range(n)):
        raise models.ModelError("grid_stride_map: the toy grid does not read every element exactly once")
    for p in range(TOY_PASSES):
        y = y0 + p * pitch
        s.text(x0 - 10, y + 15, f"pass {p + 1}", size=12, anchor="end", bold=True)
        s.text(x0 - 10, y + 30, f"i = {p * stride}–{p * stride + stride - 1}", size=10, anchor="end",
               fill="#555555")
        if p + 1 < TOY_PASSES:
            s.line(x0 - 40, y + h + 4, x0 - 40, y + pitch - 4, stroke="ink", width=1.2, arrow=True)
            s.text(x0 - 46, y + h + 20, f"+{stride}", size=10, anchor="end", fill="#555555")
    b, t = FOLLOWED
    path = ", ".join(str(b * TOY_THREADS + t + p * stride) for p in range(TOY_PASSES))
    yl = y0 + TOY_PASSES * pitch + 10
    s.text(16, yl, f"Every pass is one sweep over {stride} neighbouring floats, so a warp's lanes read "
                   "neighbouring floats: coalesced.", size=12, bold=True)
    s.text(16, yl + 18, f"One thread, t{t} of block {b}, reads {path} (outlined), adding each into a register.",
           size=12, bold=True)
    s.text(16, yl + 44, f"The lesson's grid: kBlock = {block} threads per block, as many blocks as the GPU "
                        "holds at once (grid_of: SMs × blocks per SM);", size=12)
    s.text(16, yl + 62, f"a pass sweeps gridDim.x × {block} floats, and over 2^{default_n_log2()} floats "
                        "a thread makes hundreds of passes.", size=12)
    return s.to_string()


FIGURES = {"tree.svg": tree, "grid_stride.svg": grid_stride, "shuffle.svg": shuffle,
           "block_of_warps.svg": block_of_warps,
           "grid_stride_map.svg": grid_stride_map}
