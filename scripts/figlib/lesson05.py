"""Lesson 05's idea figures: the tiles of A and B marching along K into shared memory, and one
thread's register tile (the outer product it computes for each k).

Every size comes from lessons/05_tiled_matmul/main.cu: the register-tiled kernel's block tile
(kBM x kBN), its slab depth (kBK) and each thread's outputs (kTM x kTN). The threads per block
and where a thread's rows and columns lie follow from those, as the kernel computes them.
"""
import os
import re

from figlib import models
from figlib.svg import Svg

LESSON = "05_tiled_matmul"
SOURCE = "lessons/05_tiled_matmul/main.cu"
FLOAT4 = 4  # floats in one 16-byte load: a thread's rows (and columns) come in runs of this many


def constant(name: str) -> int:
    """A `constexpr int` of main.cu. models.constant reads `constexpr int kX = 8;`; main.cu declares
    the register tile's sizes in one line (`constexpr int kBM = 128, kBN = 128, ...;`), so a name
    it does not find is looked up among the declarators of such a line."""
    try:
        return models.constant(SOURCE, name)
    except models.ModelError:
        with open(os.path.join(models.ROOT, SOURCE), encoding="utf-8") as f:
            text = f.read()
        for decl in re.findall(r"constexpr\s+int\s+([^;]*);", text):
            m = re.search(r"(?:^|,)\s*" + re.escape(name) + r"\s*=\s*(\d+)\s*(?:,|$)", decl)
            if m:
                return int(m.group(1))
        raise


def sizes() -> dict:
    c = {name: constant("k" + name) for name in ("BM", "BN", "BK", "TM", "TN")}
    c["threads_x"] = c["BN"] // c["TN"]   # kThreadsX
    c["threads_y"] = c["BM"] // c["TM"]   # kThreadsY
    return c


def tiles_along_k() -> str:
    """C's block tile, A's row panel and B's column panel; the panels cut into BK-wide slabs; step t
    loads slab t of each into shared memory."""
    z = sizes()
    bm, bn, bk = z["BM"], z["BN"], z["BK"]
    steps, t = 24, 9                 # slabs drawn along K, and the step shown
    px = 1.0                         # px per element, the same in every direction
    kw = steps * bk * px             # K drawn
    margin = 40 * px                 # rows (columns) of A, B and C drawn beyond the block's own
    ax, bx = 70, 70 + kw + 44        # left edges of A, and of B and C
    by = 56                          # top of B
    cy = by + kw + 36                # top of A and C
    mh, nw = bm * px + 2 * margin, bn * px + 2 * margin
    s = Svg(700, cy + mh + 70, f"The A and B tiles marching along K: C's {bm} x {bn} block tile needs A's "
                               f"row panel and B's column panel, cut into slabs {bk} deep; step t loads one "
                               "slab of each into shared memory")
    s.text(12, 26, "A thread block walks along K, one slab of A and one of B at a time", size=15, bold=True)

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
    s.text(pb + bn * px / 2, pa + bm * px / 2 - 6, "C's block tile", size=13, anchor="middle", bold=True)
    s.text(pb + bn * px / 2, pa + bm * px / 2 + 12, f"{bm} × {bn}", size=13, anchor="middle")

    # Names of the matrices, and the sizes with the constants' names.
    s.text(ax + kw / 2, cy + mh + 18, "A (M × K)", size=13, anchor="middle", bold=True)
    s.text(bx + nw + 10, by + 14, "B (K × N)", size=13, bold=True)
    s.text(bx + nw + 10, cy + mh - 6, "C (M × N)", size=13, bold=True)
    s.text(ax - 6, pa + bm * px / 2 + 4, f"BM = {bm}", size=12, anchor="end")
    s.text(bx + nw + 10, pa + bm * px / 2 - 20, f"BM × BN = {bm} × {bn}", size=12)
    s.text(bx + nw + 10, pa + bm * px / 2 - 4, f"outputs: {z['threads_x'] * z['threads_y']} threads,", size=12)
    s.text(bx + nw + 10, pa + bm * px / 2 + 12, f"TM × TN = {z['TM']} × {z['TN']} each", size=12)
    s.text(pb + bn * px / 2, by + kw + 14, f"BN = {bn}", size=12, anchor="middle")
    s.text(ax + kw - 30, pa - 8, "K →", size=12, anchor="middle")
    s.text(pb - 6, by + kw / 2 + 20, "K ↓", size=12, anchor="end")
    # Slab t: where it is, how deep.
    xa = ax + t * bk * px
    s.line(xa + bk * px / 2, pa + bm * px + 4, xa + bk * px / 2, cy + mh + 30, stroke="red", width=1)
    s.text(xa + bk * px / 2 + 4, cy + mh + 40, f"slab t: BK = {bk} columns of A", size=12, fill="red")
    yb = by + t * bk * px
    s.line(pb + bn * px + 4, yb + bk * px / 2, bx + nw + 6, yb + bk * px / 2, stroke="red", width=1)
    s.text(bx + nw + 10, yb + bk * px / 2 + 4, f"slab t: BK = {bk} rows of B", size=12, fill="red")

    # Shared memory, top left: where step t's slabs go.
    s.rect(16, by, bx - 36, cy - by - 16, fill="paper", stroke="grid", rx=6)
    s.text(26, by + 20, "shared memory, step t", size=13, bold=True)
    bs_x = bx - 34 - bn * px                  # Bs level with B's slab t
    s.rect(bs_x, yb, bn * px, bk * px, fill="orange", stroke="ink")
    s.line(pb - 2, yb + bk * px / 2, bs_x + bn * px + 2, yb + bk * px / 2, stroke="ink", arrow=True)
    s.text(bs_x + bn * px, yb + bk * px + 16, f"Bs: B's slab t, {bk} × {bn}", size=12, anchor="end")
    as_y = cy - 52                             # As above A's slab t
    as_x = xa + bk * px / 2 - bm * px / 2
    s.rect(as_x, as_y, bm * px, bk * px, fill="orange", stroke="ink")
    s.line(xa + bk * px / 2, pa - 2, xa + bk * px / 2, as_y + bk * px + 2, stroke="ink", arrow=True)
    s.text(26, as_y - 8, f"As: A's slab t, transposed: {bk} × {bm}", size=12)
    s.text(26, yb + bk * px + 50, "then __syncthreads(), and every", size=12)
    s.text(26, yb + bk * px + 66, "thread multiplies out of As and Bs", size=12)

    # Legend.
    ly = cy + mh + 62
    for x, fill, words in [(12, "light_green", "steps before t: already summed"),
                           (262, "orange", "step t: in shared memory now"),
                           (502, "paper", "steps still to come")]:
        s.rect(x, ly - 11, 14, 14, fill=fill, stroke="ink")
        s.text(x + 20, ly, words, size=12)
    return s.to_string()


def register_tile() -> str:
    """One thread's kTM x kTN outputs in the block tile, and the outer product that updates them for
    each k: a column of A's slab times a row of B's slab, both read into registers."""
    z = sizes()
    bm, bn, bk, tm, tn = z["BM"], z["BN"], z["BK"], z["TM"], z["TN"]
    ty, tx, k = 3, 6, 5                          # the thread and the step k shown
    gap_m, gap_n = FLOAT4 * z["threads_y"], FLOAT4 * z["threads_x"]   # 64: the two runs' distance
    rows = [(m // FLOAT4) * gap_m + ty * FLOAT4 + m % FLOAT4 for m in range(tm)]
    cols = [(n // FLOAT4) * gap_n + tx * FLOAT4 + n % FLOAT4 for n in range(tn)]
    p = 1.75                                     # px per element along M and N
    q = 6                                        # px per element along K (drawn deeper to be seen)
    ax, cx = 40, 40 + bk * q + 12                # A's slab, C's tile (left edges)
    by, cy = 64, 64 + bk * q + 12                # B's slab, C's tile (top edges)
    s = Svg(700, cy + bm * p + 96, f"One thread's register tile: {tm} x {tn} outputs of C, updated for each k by "
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
    s.text(ax + bk * q / 2, by + 18, "A's slab,", size=12, anchor="middle")
    s.text(ax + bk * q / 2, by + 34, f"{bm} × {bk}", size=12, anchor="middle")
    s.text(cx + bn * p + 8, by + bk * q / 2 + 4, f"B's slab, {bk} × {bn}", size=12)
    s.text(cx + bn * p / 2, cy + bm * p + 16, f"C's block tile, {bm} × {bn}", size=12, anchor="middle")
    s.text(ax, cy + bm * p + 34, f"this thread's {tm * tn} outputs (blue): {tm * tn // FLOAT4 ** 2} patches of "
                                 f"{FLOAT4} × {FLOAT4}, {gap_m} rows or columns apart", size=12, fill="blue")

    # The registers, zoomed: a (TM), b (TN), acc (TM x TN).
    cell = 19
    gx = cx + bn * p + 86                     # left of acc
    gy = cy + 24                              # top of acc
    s.text(gx - cell - 10, by + 8, "in registers", size=13, bold=True)
    for n in range(tn):
        s.rect(gx + n * cell, gy - cell - 8, cell, cell, fill="purple", stroke="ink")
        s.text(gx + n * cell + cell / 2, gy - 8 - cell / 2 + 4, str(n), size=10, anchor="middle", fill="paper")
    s.text(gx + tn * cell + 8, gy - 8 - cell / 2 - 2, f"b[{tn}]", size=12)
    s.text(gx + tn * cell + 8, gy - 8 - cell / 2 + 12, f"row {k} of B's slab", size=11)
    for m in range(tm):
        s.rect(gx - cell - 8, gy + m * cell, cell, cell, fill="orange", stroke="ink")
        s.text(gx - cell - 8 + cell / 2, gy + m * cell + cell / 2 + 4, str(m), size=10, anchor="middle")
        for n in range(tn):
            s.rect(gx + n * cell, gy + m * cell, cell, cell, fill="light_blue", stroke="blue", width=0.75)
    s.rect(gx + 2 * cell, gy + 5 * cell, cell, cell, fill="blue", stroke="ink", width=1.5)
    s.rect(gx + 2 * cell, gy - cell - 8, cell, cell, fill="none", stroke="ink", width=2.5)
    s.rect(gx - cell - 8, gy + 5 * cell, cell, cell, fill="none", stroke="ink", width=2.5)
    s.text(gx - cell - 12, gy + tm * cell / 2 - 4, f"a[{tm}]", size=12, anchor="end")
    s.text(gx - cell - 12, gy + tm * cell / 2 + 10, f"column {k}", size=11, anchor="end")
    s.text(gx - cell - 12, gy + tm * cell / 2 + 23, "of A's slab", size=11, anchor="end")
    s.text(gx + tn * cell / 2, gy + tm * cell + 18, f"acc[{tm}][{tn}]", size=12, anchor="middle", bold=True)
    s.text(gx + tn * cell / 2, gy + tm * cell + 34, "acc[5][2] += a[5] · b[2]", size=12, anchor="middle", mono=True)

    loads = (tm + tn) // FLOAT4
    y = cy + bm * p + 62
    s.text(12, y, f"For each k: {loads} float4 loads from shared memory ({tm} values of A, {tn} of B), then "
                  f"{tm * tn} FMAs on registers:", size=13)
    s.text(12, y + 18, f"one 16-byte shared load per {tm * tn // loads} FMAs. matmul_tiled needs 2 shared loads "
                       "for every FMA.", size=13)
    return s.to_string()


FIGURES = {"tiles_along_k.svg": tiles_along_k, "register_tile.svg": register_tile}
