"""Lesson 05's idea figures: matmul_tiled<T>'s tiles of A and B marching along K into shared
memory, one element of each tile loaded once and read by T threads, and (after the main path) one
thread's register tile in matmul_register_tiled (the outer product it computes for each k), and
where each kernel's FMA operands come from: global loads and shared reads per 64 FMAs.
load_sources.svg shows measured numbers: Nsight Compute's counters for matmul_naive and
matmul_tiled<T> (where their global loads are served, what their warps wait on), read from
results/h200/ncu.txt through scripts/quote_results.py, never typed in.

Every size comes from lessons/05_tiled_matmul/main.cu: T is the smallest tile of the kernels it
times (`launch_tiled<16>`), and the register-tiled kernel's block tile (kBM x kBN), slab depth
(kBK) and each thread's outputs (kTM x kTN). The threads per block and where a thread's rows and
columns lie follow from those, as the kernel computes them.
"""
import math
import re
from fractions import Fraction

import quote_results
from figlib import models
from figlib.svg import Svg

LESSON = "05_tiled_matmul"
SOURCE = "lessons/05_tiled_matmul/main.cu"
FLOAT4 = 4  # floats in one 16-byte load: a thread's rows (and columns) come in runs of this many


def sizes() -> dict:
    c = {name: models.constant(SOURCE, "k" + name) for name in ("BM", "BN", "BK", "TM", "TN")}
    c["threads_x"] = c["BN"] // c["TN"]   # kThreadsX
    c["threads_y"] = c["BM"] // c["TM"]   # kThreadsY
    return c


def tile_t() -> int:
    """T of matmul_tiled<T>: the smallest tile the lesson launches (`launch_tiled<16>` in kVariants)."""
    tiles = [int(t) for t in re.findall(r"launch_tiled<(\d+)>", models.source_text(SOURCE))]
    if not tiles:
        raise models.ModelError(f"{SOURCE}: no launch_tiled<T> in kVariants")
    return min(tiles)


def tiles_along_k() -> str:
    """matmul_tiled<T>: C's T x T tile, A's row panel and B's column panel, cut into T x T tiles
    along K; step t loads tile t of each into shared memory."""
    T = tile_t()
    bm, bn, bk = T, T, T
    steps, t = 5, 2                  # tiles drawn along K, and the step shown
    px = 4.0                         # px per element, the same in every direction
    kw = steps * bk * px             # K drawn
    margin = 8 * px                  # rows (columns) of A, B and C drawn beyond the block's own
    ax, bx = 70, 70 + kw + 44        # left edges of A, and of B and C
    by = 56                          # top of B
    cy = by + kw + 36                # top of A and C
    mh, nw = bm * px + 2 * margin, bn * px + 2 * margin
    s = Svg(760, cy + mh + 70, f"matmul_tiled<{T}> marching along K: C's {T} x {T} tile needs A's row panel "
                               f"and B's column panel, cut into {T} x {T} tiles; step t loads one tile of each "
                               "into shared memory")
    s.text(12, 26, f"matmul_tiled<{T}>: a thread block walks along K, one tile of A and one of B at a time",
           size=15, bold=True)

    def slab_fill(i: int) -> str:
        return "light_green" if i < t else ("orange" if i == t else "paper")

    # The whole matrices, faint; the panels the block needs, solid.
    s.rect(ax, cy, kw, mh, fill="muted", stroke="grid", dash="4 3")
    s.rect(bx, by, nw, kw, fill="muted", stroke="grid", dash="4 3")
    s.rect(bx, cy, nw, mh, fill="muted", stroke="grid", dash="4 3")
    pa, pb = cy + margin, bx + margin        # top of A's panel, left of B's panel
    for i in range(steps):
        s.rect(ax + i * bk * px, pa, bk * px, bm * px, fill=slab_fill(i), stroke="ink", width=0.5)
        s.rect(pb, by + i * bk * px, bn * px, bk * px, fill=slab_fill(i), stroke="ink", width=0.5)
    s.rect(ax, pa, kw, bm * px, fill="none", stroke="ink", width=1.5)
    s.rect(pb, by, bn * px, kw, fill="none", stroke="ink", width=1.5)
    s.rect(pb, pa, bn * px, bm * px, fill="light_blue", stroke="blue", width=2)
    s.text(pb + bn * px / 2, pa + bm * px / 2 - 4, "C's tile", size=12, anchor="middle", bold=True)
    s.text(pb + bn * px / 2, pa + bm * px / 2 + 12, f"{bm} × {bn}", size=12, anchor="middle")

    # Names of the matrices, and the sizes with the constants' names.
    s.text(ax, cy + mh + 18, "A (M × K)", size=13, bold=True)  # left, clear of tile t's leader line
    s.text(bx + nw + 10, by + 14, "B (K × N)", size=13, bold=True)
    s.text(bx + nw + 10, cy + mh - 6, "C (M × N)", size=13, bold=True)
    s.text(ax - 6, pa + bm * px / 2 + 4, f"T = {bm}", size=12, anchor="end")
    s.text(bx + nw + 10, pa + bm * px / 2 - 12, f"{bm} × {bn} threads,", size=12)
    s.text(bx + nw + 10, pa + bm * px / 2 + 4, "one output each:", size=12)
    s.text(bx + nw + 10, pa + bm * px / 2 + 20, "thread (ty, tx) sums C[ty][tx]", size=12)
    s.text(pb + bn * px / 2, by + kw + 14, f"T = {bn}", size=12, anchor="middle")
    s.text(ax + kw - 30, pa - 8, "K →", size=12, anchor="middle")
    s.text(pb - 6, by + kw / 2 + 20, "K ↓", size=12, anchor="end")
    # Slab t: where it is, how deep.
    xa = ax + t * bk * px
    s.line(xa + bk * px / 2, pa + bm * px + 4, xa + bk * px / 2, cy + mh + 30, stroke="red", width=1)
    s.text(xa + bk * px / 2 + 4, cy + mh + 40, f"tile t of A: {bm} × {bk}", size=12, fill="red")
    yb = by + t * bk * px
    s.line(pb + bn * px + 4, yb + bk * px / 2, bx + nw + 6, yb + bk * px / 2, stroke="red", width=1)
    s.text(bx + nw + 10, yb + bk * px / 2 + 4, f"tile t of B: {bk} × {bn}", size=12, fill="red")

    # Shared memory, top left: where step t's slabs go.
    s.rect(16, by, bx - 36, cy - by - 16, fill="paper", stroke="grid", rx=6)
    s.text(26, by + 20, "shared memory, step t", size=13, bold=True)
    bs_x = bx - 34 - bn * px                  # Bs level with B's slab t
    s.rect(bs_x, yb, bn * px, bk * px, fill="orange", stroke="ink")
    s.line(pb - 2, yb + bk * px / 2, bs_x + bn * px + 2, yb + bk * px / 2, stroke="ink", arrow=True)
    s.text(bs_x - 8, yb + bk * px / 2 + 4, f"Bs[{bk}][{bn}]", size=12, anchor="end", mono=True)
    as_y = cy - 16 - 16 - bm * px              # As above A's tile t
    as_x = xa
    s.rect(as_x, as_y, bk * px, bm * px, fill="orange", stroke="ink")
    s.line(xa + bk * px / 2, pa - 2, xa + bk * px / 2, as_y + bm * px + 2, stroke="ink", arrow=True)
    s.text(as_x - 8, as_y + bm * px / 2 + 4, f"As[{bm}][{bk}]", size=12, anchor="end", mono=True)
    s.text(26, by + 44, "each thread stores one element", size=12)
    s.text(26, by + 60, "of each; __syncthreads(); then", size=12)
    s.text(26, by + 76, "thread (ty, tx) reads row ty of As", size=12)
    s.text(26, by + 92, "and column tx of Bs", size=12)

    # Legend.
    ly = cy + mh + 62
    for x, fill, words in [(12, "light_green", "steps before t: already summed"),
                           (262, "orange", "step t: in shared memory now"),
                           (502, "paper", "steps still to come")]:
        s.rect(x, ly - 11, 14, 14, fill=fill, stroke="ink")
        s.text(x + 20, ly, words, size=12)
    return s.to_string()


def shared_tile() -> str:
    """matmul_tiled<T>, one step: thread (ty, tx) stores A's element into As[ty][tx] and B's into
    Bs[ty][tx]; after the barrier thread (ty, tx) reads row ty of As and column tx of Bs. So one
    element of As, loaded from global memory by one thread, is read by the T threads of a row of
    the block, and one of Bs by the T threads of a column."""
    T = tile_t()
    ty0, e0, tx0 = 5 * T // 16, 11 * T // 16, 3 * T // 16   # the row, the e and the column shown
    assert len({ty0, e0, tx0}) == 3, "three different indices, so the figure cannot conflate them"
    cell = 11
    side = T * cell
    ax, cx = 120, 120 + side + 40          # As; Bs and the threads (C's tile)
    by, cy = 84, 84 + side + 40            # Bs; As and the threads
    s = Svg(780, cy + side + 100, f"matmul_tiled<{T}>, one step: As[{ty0}][{e0}] is loaded from A once, by "
                                  f"thread ({ty0}, {e0}), and read by the {T} threads of row {ty0}; Bs[{e0}][{tx0}] "
                                  f"is loaded once by thread ({e0}, {tx0}) and read by the {T} threads of column {tx0}")
    s.text(12, 24, f"matmul_tiled<{T}>: one element loaded once, read by {T} threads", size=15, bold=True)
    s.text(12, 44, "Thread (ty, tx) stores As[ty][tx] and Bs[ty][tx]; after __syncthreads() it sums "
                   "As[ty][e] · Bs[e][tx] over e.", size=12)

    def grid(x: float, y: float, fill_of) -> None:
        for r in range(T):
            for c in range(T):
                s.rect(x + c * cell, y + r * cell, cell, cell, fill=fill_of(r, c), stroke="grid", width=0.5)
        s.rect(x, y, side, side, fill="none", stroke="ink", width=1.2)

    grid(ax, cy, lambda r, c: "orange" if (r, c) == (ty0, e0) else ("light_orange" if r == ty0 else "paper"))
    grid(cx, by, lambda r, c: "purple" if (r, c) == (e0, tx0) else ("light_purple" if c == tx0 else "paper"))

    def thread_fill(r: int, c: int) -> str:
        if r == ty0 and c == tx0:
            return "blue"
        return "light_orange" if r == ty0 else ("light_purple" if c == tx0 else "light_blue")
    grid(cx, cy, thread_fill)
    # The two threads that loaded the two elements: ringed.
    for r, c, colour in [(ty0, e0, "orange"), (e0, tx0, "purple")]:
        s.rect(cx + c * cell - 1.5, cy + r * cell - 1.5, cell + 3, cell + 3, fill="none", stroke="ink", width=2)
    s.text(cx, by - 8, f"Bs: B's tile t in shared memory, {T} × {T}", size=12)
    s.text(ax, cy - 8, f"As: A's tile t, {T} × {T}", size=12)
    s.text(cx + side / 2, cy + side + 18, f"the block's {T} × {T} threads: thread (ty, tx) computes C[ty][tx]",
           size=12, anchor="middle")
    # From global memory, once each.
    ya = cy + ty0 * cell + cell / 2
    s.line(16, ya, ax - 2, ya, stroke="ink", width=1.4, arrow=True)
    s.text(16, ya - 8, "from A, once", size=12, bold=True)
    yb = by + e0 * cell + cell / 2
    s.line(ax + 10, yb, cx - 2, yb, stroke="ink", width=1.4, arrow=True)
    s.text(ax + 10, yb - 8, "from B, once", size=12, bold=True)
    # Read by T threads: the row, the column.
    s.line(ax + (e0 + 1) * cell + 2, ya, cx - 2, ya, stroke="orange", width=2, arrow=True)
    s.line(cx + tx0 * cell + cell / 2, by + (e0 + 1) * cell + 2, cx + tx0 * cell + cell / 2, cy - 2,
           stroke="purple", width=2, arrow=True)
    # What each highlight is, to the right of the threads.
    lx = cx + side + 16
    y = cy + ty0 * cell + cell / 2
    s.line(cx + side + 2, y, lx - 2, y, stroke="orange", width=1.5)
    s.text(lx, y + 4, f"row {ty0} (orange): all {T} threads", size=12)
    s.text(lx, y + 19, f"read As[{ty0}][{e0}] (at e = {e0})", size=12)
    y = cy + (ty0 + 4) * cell
    s.text(lx, y + 4, f"column {tx0} (purple): all {T}", size=12)
    s.text(lx, y + 19, f"threads read Bs[{e0}][{tx0}]", size=12)
    s.text(lx, y + 34, f"(at e = {e0})", size=12)
    s.text(lx, y + 58, f"blue: thread ({ty0}, {tx0}) multiplies", size=12)
    s.text(lx, y + 73, "the two", size=12)
    s.text(lx, by + 20, "ringed: the thread that", size=12)
    s.text(lx, by + 35, "loaded it from global memory:", size=12)
    s.text(lx, by + 50, f"({ty0}, {e0}) loaded As[{ty0}][{e0}],", size=12)
    s.text(lx, by + 65, f"({e0}, {tx0}) loaded Bs[{e0}][{tx0}]", size=12)
    y = cy + side + 50
    s.text(12, y, f"Per step the block loads 2 × {T} × {T} floats from global memory (one of A and one of B per "
                  f"thread),", size=13)
    s.text(12, y + 18, f"and each is read by {T} threads from shared memory. In matmul_naive each of those {T} "
                       "threads loads", size=13)
    s.text(12, y + 36, f"the element from global memory itself: the tile cuts the model's global reads {T}×.", size=13)
    return s.to_string()


def register_tile() -> str:
    """One thread's kTM x kTN outputs in the block tile, and the outer product that updates them for
    each k: a column of A's slab times a row of B's slab, both read into registers."""
    z = sizes()
    bm, bn, bk, tm, tn = z["BM"], z["BN"], z["BK"], z["TM"], z["TN"]
    ty, tx, k = 3, 6, 3                          # the thread and the step k shown
    m0, n0 = 5, 2                                # the accumulator shown: acc[m0][n0] += a[m0] * b[n0]
    assert k not in (m0, n0), "k, m and n are different indices: draw them with different values"
    gap_m, gap_n = FLOAT4 * z["threads_y"], FLOAT4 * z["threads_x"]   # 64: the two runs' distance
    rows = [(m // FLOAT4) * gap_m + ty * FLOAT4 + m % FLOAT4 for m in range(tm)]
    cols = [(n // FLOAT4) * gap_n + tx * FLOAT4 + n % FLOAT4 for n in range(tn)]
    p = 1.75                                     # px per element along M and N
    q = 6                                        # px per element along K (drawn deeper to be seen)
    ax, cx = 40, 40 + bk * q + 12                # A's slab, C's tile (left edges)
    by, cy = 64, 64 + bk * q + 12                # B's slab, C's tile (top edges)
    s = Svg(760, cy + bm * p + 96, f"One thread's register tile: {tm} x {tn} outputs of C, updated for each k by "
                                   f"the outer product of {tm} values of A's slab and {tn} of B's, held in registers")
    s.text(12, 24, f"One thread: {tm} × {tn} outputs in registers, one outer product per k", size=15, bold=True)
    s.text(12, 44, f"thread (ty, tx) = ({ty}, {tx}) of {z['threads_y']} × {z['threads_x']}; step k = {k} "
                   f"of the slab's {bk}", size=12)

    # A's slab (BM x BK) and B's slab (BK x BN), with column k of A and row k of B.
    s.rect(ax, cy, bk * q, bm * p, fill="muted", stroke="ink")
    s.rect(cx, by, bn * p, bk * q, fill="muted", stroke="ink")
    s.rect(ax + k * q, cy, q, bm * p, fill="light_orange", stroke="orange")
    s.rect(cx, by + k * q, bn * p, q, fill="light_purple", stroke="purple")
    s.rect(cx, cy, bn * p, bm * p, fill="paper", stroke="blue", width=2)
    s.line(cx + gap_n * p, cy, cx + gap_n * p, cy + bm * p, stroke="grid", dash="4 3")
    s.line(cx, cy + gap_m * p, cx + bn * p, cy + gap_m * p, stroke="grid", dash="4 3")
    # The thread's values: runs of FLOAT4, gap apart.
    for r0 in sorted({r - r % FLOAT4 for r in rows}):
        s.rect(ax + k * q, cy + r0 * p, q, FLOAT4 * p, fill="orange", stroke="ink")
    for c0 in sorted({c - c % FLOAT4 for c in cols}):
        s.rect(cx + c0 * p, by + k * q, FLOAT4 * p, q, fill="purple", stroke="ink")
    for r0 in sorted({r - r % FLOAT4 for r in rows}):
        for c0 in sorted({c - c % FLOAT4 for c in cols}):
            s.rect(cx + c0 * p, cy + r0 * p, FLOAT4 * p, FLOAT4 * p, fill="blue", stroke="ink")
    s.text(ax + bk * q / 2, cy + bm * p + 16, f"A's slab, {bm} × {bk}", size=12, anchor="middle")
    s.text(cx + bn * p + 8, by + bk * q / 2 + 4, f"B's slab, {bk} × {bn}", size=12)
    s.text(cx + bn * p / 2, cy + bm * p + 16, f"C's block tile, {bm} × {bn}", size=12, anchor="middle")
    s.text(ax, cy + bm * p + 36, f"this thread's {tm * tn} outputs (blue): {tm * tn // FLOAT4 ** 2} patches of "
                                 f"{FLOAT4} × {FLOAT4}, {gap_m} rows or columns apart", size=12, fill="blue")

    # The registers, zoomed: a (TM), b (TN), acc (TM x TN).
    cell = 19
    gx = cx + bn * p + 124                    # left of acc (a[]'s labels fit between C's tile and a[])
    gy = cy + 24                              # top of acc
    s.text(gx - cell - 10, by + 8, "in registers", size=13, bold=True)
    for n in range(tn):
        s.rect(gx + n * cell, gy - cell - 8, cell, cell, fill="purple", stroke="ink")
        s.text(gx + n * cell + cell / 2, gy - 8 - cell / 2 + 4, str(n), size=10, anchor="middle", fill="paper")
    s.text(gx + tn * cell + 8, gy - 8 - cell / 2 - 2, f"b[{tn}]", size=12)
    s.text(gx + tn * cell + 8, gy - 8 - cell / 2 + 12, f"row k = {k} of B's slab", size=11)
    for m in range(tm):
        s.rect(gx - cell - 8, gy + m * cell, cell, cell, fill="orange", stroke="ink")
        s.text(gx - cell - 8 + cell / 2, gy + m * cell + cell / 2 + 4, str(m), size=10, anchor="middle")
        for n in range(tn):
            s.rect(gx + n * cell, gy + m * cell, cell, cell, fill="light_blue", stroke="blue", width=0.75)
    s.rect(gx + n0 * cell, gy + m0 * cell, cell, cell, fill="blue", stroke="ink", width=1.5)
    s.rect(gx + n0 * cell, gy - cell - 8, cell, cell, fill="none", stroke="ink", width=2.5)
    s.rect(gx - cell - 8, gy + m0 * cell, cell, cell, fill="none", stroke="ink", width=2.5)
    s.text(gx - cell - 12, gy + tm * cell / 2 - 4, f"a[{tm}]", size=12, anchor="end")
    s.text(gx - cell - 12, gy + tm * cell / 2 + 10, f"column k = {k}", size=11, anchor="end")
    s.text(gx - cell - 12, gy + tm * cell / 2 + 23, "of A's slab", size=11, anchor="end")
    s.text(gx + tn * cell / 2, gy + tm * cell + 18, f"acc[{tm}][{tn}]", size=12, anchor="middle", bold=True)
    s.text(gx + tn * cell / 2, gy + tm * cell + 34, f"acc[{m0}][{n0}] += a[{m0}] · b[{n0}]", size=12,
           anchor="middle", mono=True)

    loads = (tm + tn) // FLOAT4
    y = cy + bm * p + 62
    s.text(12, y, f"For each k: {loads} float4 loads from shared memory ({tm} values of A, {tn} of B), then "
                  f"{tm * tn} FMAs on registers:", size=13)
    s.text(12, y + 18, f"one shared value per {tm * tn // (tm + tn)} FMAs, where matmul_tiled reads 2 shared values "
                       "for every FMA.", size=13)
    return s.to_string()


def tile_shapes() -> dict[str, tuple[int, int]]:
    """kVariants' name -> the block of C one thread block computes (tile_rows, tile_cols), the
    numbers main.cu's traffic model uses. kBM and kBN are replaced by their values."""
    text = models.source_text(SOURCE)
    z = sizes()
    value = lambda v: int(v) if v.isdigit() else z[v[1:]]  # noqa: E731
    shapes = {name: (value(r), value(c))
              for name, r, c in re.findall(r'\{"([^"]+)",\s*launch_\w+(?:<\d+>)?,\s*(\w+),\s*(\w+)\}', text)}
    if not shapes:
        raise models.ModelError(f"{SOURCE}: no kVariants entries")
    return shapes


def operand_sources() -> list[dict]:
    """Per FMA, where each kernel's two operands come from, counted from its loops:
    matmul_naive: A[...] and B[...] from global memory, 2 per FMA.
    matmul_tiled<T>: per step a thread loads 2 floats from global memory into As and Bs, then does
      T FMAs, each reading As[ty][e] and Bs[e][tx]: 2 shared reads per FMA, 2 / T global.
    matmul_register_tiled: per step of kBK a thread loads (kBM·kBK + kBK·kBN) / threads floats from
      global memory; for each k it reads kTM values of A and kTN of B as float4s and does kTM·kTN FMAs.
    Each kernel's global loads per FMA are checked against main.cu's traffic model (kVariants'
    tile rows and columns: 1/rows + 1/cols floats per FMA), and the register kernel's float4 reads
    against the loads its inner loop spells out."""
    text = models.source_text(SOURCE)
    z = sizes()
    shapes = tile_shapes()
    threads = z["threads_x"] * z["threads_y"]
    rows = [{"name": "matmul_naive", "global": Fraction(2), "shared": Fraction(0), "shared_reads": Fraction(0),
             "float_width": 1, "how": "both operands from global memory: A[row·K + k], B[k·N + col]"}]
    for T in sorted(int(t) for t in set(re.findall(r"launch_tiled<(\d+)>", text))):
        rows.append({"name": f"matmul_tiled<{T}>", "global": Fraction(2, T), "shared": Fraction(2),
                     "shared_reads": Fraction(2), "float_width": 1,
                     "how": f"As[ty][e] and Bs[e][tx] from shared memory; 2 global loads per {T} FMAs"})
    fmas_per_step = z["BK"] * z["TM"] * z["TN"]
    global_per_step = Fraction(z["BM"] * z["BK"] + z["BK"] * z["BN"], threads)
    shared_per_k = z["TM"] + z["TN"]
    reg_name = next((n for n in shapes if n.startswith("register_tiled")), None)
    if reg_name is None:
        raise models.ModelError(f"{SOURCE}: no register_tiled entry in kVariants")
    rows.append({"name": reg_name, "global": global_per_step / fmas_per_step,
                 "shared": Fraction(shared_per_k, z["TM"] * z["TN"]),
                 "shared_reads": Fraction(shared_per_k // FLOAT4, z["TM"] * z["TN"]), "float_width": FLOAT4,
                 "how": f"per k: {shared_per_k // FLOAT4} float4 shared reads ({z['TM']} of A, {z['TN']} of B); "
                        f"{global_per_step / FLOAT4} float4 global loads per {fmas_per_step} FMAs"})
    # The register kernel's inner loop: one float4 read of As or Bs per line.
    reads = re.findall(r"reinterpret_cast<const float4\*>\(&[AB]s\[buf\]\[k\]", text)
    if len(reads) != shared_per_k // FLOAT4:
        raise models.ModelError(f"{SOURCE}: {len(reads)} float4 shared reads per k, the figure assumes "
                                f"{shared_per_k // FLOAT4}")
    for row in rows:
        r, c = shapes[row["name"]]
        if row["global"] != Fraction(1, r) + Fraction(1, c):
            raise models.ModelError(f"{row['name']}: {row['global']} global loads per FMA, main.cu's traffic "
                                    f"model says 1/{r} + 1/{c}")
    return rows


def operand_sources_figure() -> str:
    """A bar per kernel: the floats its FMAs read from shared memory and from global memory, per 64
    FMAs (one k of a thread's register tile), each read as the source writes it (a float, or a
    float4) a segment. These are not instructions: the compiler merges matmul_tiled's As[ty][e]
    reads into 16-byte loads (lesson 05's notes count 1.25 shared-load instructions per FMA), so
    the footer compares floats only."""
    rows = operand_sources()
    z = sizes()
    per = z["TM"] * z["TN"]                      # one k of a register tile: the unit of the bars
    scale = 3.5                                  # px per float
    x0, top, pitch = 232, 108, 66
    s = Svg(760, top + pitch * len(rows) + 78,
            f"Where each kernel's multiply-adds get their operands, per {per} FMAs: matmul_naive reads "
            f"{int(rows[0]['global'] * per)} floats from global memory; matmul_tiled as many from shared memory, "
            f"plus a few from global; the register tiles {int(rows[-1]['shared'] * per)} from shared memory in "
            f"{int(rows[-1]['shared_reads'] * per)} float4 reads, and {rows[-1]['global'] * per} from global")
    s.text(12, 26, f"Where an FMA's two operands come from, per {per} FMAs", size=15, bold=True)
    s.text(12, 46, f"{per} FMAs: one k of a register tile's {z['TM']} × {z['TN']} outputs. A bar's length is "
                   "the floats read;", size=12)
    s.text(12, 62, "each segment is one read as the source writes it (the compiler merges some: see the notes).",
           size=12)
    for x, fill, words in [(12, "blue", "from shared memory"), (192, "red", "from global memory")]:
        s.rect(x, 74, 14, 14, fill=fill, stroke="ink")
        s.text(x + 20, 86, words, size=12)

    def frac(v: Fraction) -> str:
        return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"

    for i, row in enumerate(rows):
        y = top + i * pitch
        s.text(12, y + 14, row["name"], size=12, mono=True, bold=True)
        per_fma = " + ".join(f"{frac(row[k])} {k}" for k in ("shared", "global") if row[k])
        s.text(12, y + 30, f"per FMA: {per_fma}", size=11)
        x, labels = x0, []
        for key, fill in (("shared", "blue"), ("global", "red")):
            floats = row[key] * per
            if not floats:
                continue
            s.rect(x, y, float(floats) * scale, 20, fill=fill, stroke="ink", width=0.75)
            width = row["float_width"] if key == "shared" else 1
            loads = floats / width               # reads as the source writes them, per `per` FMAs
            if loads.denominator == 1 and loads > 1:
                for j in range(1, int(loads)):
                    sx = x + float(floats) * scale * j / int(loads)
                    s.line(sx, y + 1, sx, y + 19, stroke="paper", width=0.6 if loads > 20 else 1.5)
            x += float(floats) * scale
            noun = "float" if floats == 1 else "floats"
            labels.append(f"{frac(floats)} {key} {noun}" + (f" ({frac(loads)} float4 reads)" if width > 1 else ""))
        label = " + ".join(labels)
        if x < x0 + 60 * scale:                  # a short bar: its numbers beside it
            s.text(x + 8, y + 15, label, size=12)
        else:
            s.text(x0, y + 35, label, size=12)
        s.text(x0, y + 50 if x >= x0 + 60 * scale else y + 35, row["how"], size=11, fill="#555555")
    tiled, reg = rows[1], rows[-1]
    assert z["TM"] == z["TN"], "a value of A is used kTN times, one of B kTM times: the footer says one number"
    y = top + pitch * len(rows) + 14
    s.text(12, y, "matmul_tiled reads as many floats from shared memory as matmul_naive loads from global memory,",
           size=13)
    s.text(12, y + 18, "all through the queue in front of the shared-memory pipe (MIO throttle). A register tile",
           size=13)
    s.text(12, y + 36, f"reads each value once and uses it {z['TN']} times: "
                       f"{frac(tiled['shared'] / reg['shared'])}× fewer floats read from shared memory.", size=13)
    return s.to_string()

NCU_FILE = "h200/ncu.txt"                          # under results/
NCU_SECTION = "lessons/05_tiled_matmul/ncu.sh"
SECTOR_BYTES = 32
BYTES = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}   # ncu's units (powers of 1000)
LONG_SCOREBOARD = "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
MIO_THROTTLE = "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"


def profiled_kernels() -> list[str]:
    """The kernels lesson 05's ncu.sh profiles, as Nsight Compute names them: matmul_naive and
    matmul_tiled<T> for each T the lesson launches."""
    text = models.source_text(SOURCE)
    return ["matmul_naive"] + [f"matmul_tiled<{T}>"
                               for T in sorted(int(t) for t in set(re.findall(r"launch_tiled<(\d+)>", text)))]


def problem_size() -> str:
    """The matmul the profile ran ("4096 x 4096 x 4096"), as the program printed it there."""
    line = quote_results.Sources(models.ROOT).lines(NCU_FILE, NCU_SECTION, "(M x N x K)")[0]
    m = re.match(r"\s*(\d+ x \d+ x \d+) \(M x N x K\)", line)
    if not m:
        raise models.ModelError(f"results/{NCU_FILE}: no 'M x N x K' in '{line}'")
    return m.group(1)


def load_sources() -> list[dict]:
    """Per kernel, the first profiled launch in results/h200/ncu.txt (section ncu.sh): the sectors
    its global loads asked of L1, split into served by L1 (sectors x L1 hit rate), from DRAM
    (dram__bytes_read / 32 B) and from L2 (the rest of L1's misses); the sectors L1 read from L2
    (lts__t_sectors_srcunit_tex_op_read) must lie between what came from DRAM and L1's misses; and
    the two stall ratios. Each entry keeps the counters' printed texts for the labels."""
    src = quote_results.Sources(models.ROOT)

    def metric(kernel: str, name: str):
        return src.ncu(NCU_FILE, NCU_SECTION, kernel, name)

    rows = []
    for kernel in profiled_kernels():
        asked = metric(kernel, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
        l1_hit = metric(kernel, "l1tex__t_sector_hit_rate.pct")
        to_l2 = metric(kernel, "lts__t_sectors_srcunit_tex_op_read.sum")
        dram = metric(kernel, "dram__bytes_read.sum")
        unit = src.ncu_unit(NCU_FILE, NCU_SECTION, kernel, "dram__bytes_read.sum")
        if unit not in BYTES:
            raise models.ModelError(f"results/{NCU_FILE}: {kernel}'s dram__bytes_read.sum is in '{unit}'")
        by_l1 = asked.value * l1_hit.value / 100
        from_dram = dram.value * BYTES[unit] / SECTOR_BYTES
        missed = asked.value - by_l1
        if not from_dram <= to_l2.value <= missed:
            raise models.ModelError(f"{kernel}: L1 read {to_l2.text} sectors from L2; the figure's split needs "
                                    f"that between the DRAM sectors ({from_dram:,.0f}) and L1's misses ({missed:,.0f})")
        rows.append({"kernel": kernel, "asked": asked.value, "l1_hit": l1_hit.text,
                     "dram": f"{dram.text} {unit.replace('byte', 'B')}",
                     "parts": (by_l1, missed - from_dram, from_dram),
                     "long_scoreboard": metric(kernel, LONG_SCOREBOARD), "mio": metric(kernel, MIO_THROTTLE)})
    return rows


def load_sources_figure() -> str:
    """(a) A stacked bar per kernel: the sectors its global loads asked of L1, served by L1, from L2
    and from DRAM (linear scale, billions of sectors); (b) the cycles its warps waited per issued
    instruction on a global load (long scoreboard) and on the shared pipe (MIO throttle)."""
    rows = load_sources()
    names = [r["kernel"] for r in rows]
    width, x0, right = 760, 190, 40
    span = width - x0 - right
    g = 1e9                                              # the unit of panel (a): billions of sectors
    top_a = math.ceil(max(r["asked"] for r in rows) / g / 2) * 2
    xa = lambda v: x0 + v / g / top_a * span             # noqa: E731
    stalls = [max(r["long_scoreboard"].value, r["mio"].value) for r in rows]
    top_b = math.ceil(max(stalls) / 5) * 5
    xb = lambda v: x0 + v / top_b * span                 # noqa: E731
    a_y, a_pitch = 118, 58                               # panel (a): first bar's top, bar to bar
    b_top = a_y + a_pitch * len(rows) + 70               # panel (b): its title
    b_y, b_pitch = b_top + 56, 50
    foot = b_y + b_pitch * len(rows) + 48
    s = Svg(width, foot + 70,
            "Nsight Compute on an H200: the global-load sectors each kernel asks of L1 and where they are "
            f"served (L1, L2, DRAM), and the cycles its warps wait per instruction on global loads and on the "
            f"shared pipe, for {', '.join(names)}")
    s.text(12, 26, "Where the global loads are served, and what the warps wait on", size=15, bold=True)
    s.text(12, 46, f"Nsight Compute on an H200, the first profiled launch of each kernel, {problem_size()} "
                   "(M x N x K)", size=12)

    # (a) sectors asked of L1, stacked by who served them
    s.text(12, 76, "(a) Sectors (32 bytes) the global loads ask of L1, by where they are served", size=13, bold=True)
    parts = (("served by L1", "green"), ("from L2", "orange"), ("from DRAM", "purple"))
    for i, (words, fill) in enumerate(parts):
        s.rect(x0 + i * 150, 88, 14, 14, fill=fill, stroke="ink")
        s.text(x0 + i * 150 + 20, 100, words, size=12)
    axis_a = a_y + a_pitch * len(rows) - 22           # the axis below the bars (ticks only: labels sit there)
    s.line(x0, axis_a, xa(top_a * g), axis_a, stroke="ink", width=0.8)
    for v in range(0, top_a + 1, 2):
        s.line(xa(v * g), axis_a, xa(v * g), axis_a + 4, stroke="ink", width=0.8)
        s.text(xa(v * g), axis_a + 16, str(v), size=10, anchor="middle")
    s.text(x0 + span / 2, axis_a + 32, "billion sectors, linear scale", size=11, anchor="middle")
    for i, r in enumerate(rows):
        y = a_y + i * a_pitch
        s.text(12, y + 14, r["kernel"], size=12, mono=True, bold=True)
        x = x0
        for value, (_, fill) in zip(r["parts"], parts):
            w = xa(value) - x0
            if w > 0.05:
                s.rect(x, y, w, 20, fill=fill, stroke="ink", width=0.75)
            x += w
        l1, l2, dram = (v / g for v in r["parts"])
        label = f"L1 {l1:.2f} + L2 {l2:.2f} + DRAM {dram:.2f}"
        facts = f"L1 hit rate {r['l1_hit']}%, DRAM read {r['dram']}"
        if x > x0 + span / 2:                    # a long bar: its numbers below it
            s.text(x0, y + 35, f"{label} billion; {facts}", size=11)
        else:
            s.text(x + 8, y + 10, f"{label} billion", size=11)
            s.text(x + 8, y + 24, facts, size=11, fill="#555555")

    # (b) the two stall ratios, side by side
    s.line(12, b_top - 30, width - 12, b_top - 30, stroke="grid")
    s.text(12, b_top, "(b) What the warps wait on: cycles waited per issued instruction", size=13, bold=True)
    waits = (("long scoreboard: a global load", "red", "long_scoreboard"),
             ("MIO throttle: the shared-memory pipe", "blue", "mio"))
    for i, (words, fill, _) in enumerate(waits):
        s.rect(x0 + i * 250, b_top + 12, 14, 14, fill=fill, stroke="ink")
        s.text(x0 + i * 250 + 20, b_top + 24, words, size=12)
    axis_b = b_y + b_pitch * len(rows) - 12
    s.line(x0, axis_b, xb(top_b), axis_b, stroke="ink", width=0.8)
    for v in range(0, top_b + 1, 5):
        s.line(xb(v), axis_b, xb(v), axis_b + 4, stroke="ink", width=0.8)
        s.text(xb(v), axis_b + 16, str(v), size=10, anchor="middle")
    s.text(x0 + span / 2, axis_b + 32, "cycles per issued instruction", size=11, anchor="middle")
    for i, r in enumerate(rows):
        y = b_y + i * b_pitch
        s.text(12, y + 18, r["kernel"], size=12, mono=True, bold=True)
        for j, (_, fill, key) in enumerate(waits):
            yy = y + j * 17
            s.rect(x0, yy, max(xb(r[key].value) - x0, 0.5), 15, fill=fill, stroke="ink", width=0.75)
            s.text(xb(r[key].value) + 6, yy + 12, r[key].text, size=11)

    # how the split is computed, and which run
    s.text(12, foot, "(a) splits the sectors asked of L1 (l1tex__t_sectors_pipe_lsu_mem_global_op_ld): served by L1 = "
                     "sectors × L1 hit", size=11, italic=True)
    s.text(12, foot + 16, f"rate (l1tex__t_sector_hit_rate); from DRAM = dram__bytes_read / {SECTOR_BYTES} bytes; "
                          "from L2 = the rest of L1's misses.", size=11, italic=True)
    s.text(12, foot + 32, "(b): smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active, and the same "
                          "for mio_throttle.", size=11, italic=True)
    s.text(12, foot + 48, f"Run: NVIDIA H200, results/{NCU_FILE} ({NCU_SECTION}), a separate run from the "
                          "timings the lesson quotes.", size=11, italic=True)
    return s.to_string()


FIGURES = {"tiles_along_k.svg": tiles_along_k, "shared_tile.svg": shared_tile, "register_tile.svg": register_tile,
           "load_sources.svg": load_sources_figure, "operand_sources.svg": operand_sources_figure}
