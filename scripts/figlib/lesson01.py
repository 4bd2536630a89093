"""Lesson 01's idea figures: which 32-byte sectors one warp touches.

warp_sectors.svg: one warp reading a row (lane l at byte 4 l) against one warp reading a column
    of the lesson's default matrix (lane l one row further down); every sector, every lane's
    4 bytes in it and the bytes moved for the bytes used, from lesson 01's sector model
    (models.sectors_strided, the sectors_touched() the lesson prints and the site's explorer runs).
naive_two_sides.svg: the two naive kernels, in and out side by side, with the elements one warp
    reads and writes; which side is strided, and its sectors, again from the sector model, for
    the lesson's default shape (common/transpose_bench.cuh) and its 32-thread warp row (kBlockX).
"""
from __future__ import annotations

import os
import re

from figlib import models
from figlib.svg import Svg

LESSON = "01_naive_transpose"
SRC = f"lessons/{LESSON}/main.cu"
SECTOR = 32  # bytes: the unit the model counts (lesson 01's sectors_touched())
FLOAT = 4    # the lesson's element: fp32


def default_shape() -> tuple[int, int]:
    """The lesson's default --rows and --cols (common/transpose_bench.cuh, TransposeOptions)."""
    with open(os.path.join(models.ROOT, "common", "transpose_bench.cuh"), encoding="utf-8") as f:
        m = re.search(r"long long rows = (\d+), cols = (\d+);", f.read())
    if not m:
        raise models.ModelError("common/transpose_bench.cuh: no 'long long rows = N, cols = M;'")
    return int(m.group(1)), int(m.group(2))


def grouped(answer: models.SectorAnswer) -> list[tuple[int, list[int]]]:
    """(sector, the lanes whose first byte lies in it), in sector order."""
    return [(s, [lane for lane in range(32) if answer.first_sector[lane] == s]) for s in answer.sectors]


def lanes_label(lanes: list[int]) -> str:
    if len(lanes) == 1:
        return f"lane {lanes[0]}"
    return f"lanes {lanes[0]}\u2013{lanes[-1]}"


def sector_box(s: Svg, x: float, y: float, cell: float, h: float, sector: int, answer: models.SectorAnswer,
               lanes: list[int], fill: str) -> None:
    """One 32-byte sector as 8 cells of 4 bytes; the cells some lane of the warp uses are filled."""
    used = set()
    for lane in lanes:
        for b in range(answer.address[lane], answer.address[lane] + answer.elem_bytes):
            if b // SECTOR == sector:
                used.add((b % SECTOR) // FLOAT)
    for c in range(SECTOR // FLOAT):
        s.rect(x + c * cell, y, cell, h, fill=fill if c in used else "paper", stroke="grid")
    s.rect(x, y, cell * SECTOR // FLOAT, h, fill="none", stroke="ink", width=1.5)


def fmt(n: int) -> str:
    return f"{n:,}"


def warp_sectors() -> str:
    rows, cols = default_shape()
    row = models.sectors_strided(FLOAT, 1, 0)
    col = models.sectors_strided(FLOAT, cols, 0)
    W = 720
    s = Svg(W, 470, "One warp reading a row touches 4 sectors; reading a column it touches 32 sectors")
    cell, h, gap, x0 = 9, 26, 6, 30
    box = cell * SECTOR // FLOAT

    def heading(y: float, title: str, answer: models.SectorAnswer) -> None:
        n = len(answer.sectors)
        s.text(x0, y, title, size=14, bold=True)
        s.text(x0, y + 19, f"{n} sectors: {fmt(n * SECTOR)} bytes moved for {fmt(32 * FLOAT)} bytes used "
                           f"({answer.efficiency * 100:g}% of what moves is used)", size=13)

    # (a) a row: consecutive floats
    heading(30, f"(a) The warp reads a row: lane l reads the float at byte {FLOAT} \u00d7 l", row)
    y = 66
    for i, (sector, lanes) in enumerate(grouped(row)):
        x = x0 + i * (box + gap)
        sector_box(s, x, y, cell, h, sector, row, lanes, "blue")
        s.text(x + box / 2, y + h + 15, lanes_label(lanes), size=11, anchor="middle")
    s.text(x0 + len(row.sectors) * (box + gap) + 10, y + h / 2 + 5,
           "\u2190 side by side in memory", size=12, italic=True)

    # (b) a column: one row of the matrix apart
    pitch = cols * FLOAT
    heading(150, f"(b) The warp reads a column, rows {fmt(cols)} floats long: lane l reads byte "
                 f"{fmt(pitch)} \u00d7 l", col)
    y = 186
    per_row = 8
    for i, (sector, lanes) in enumerate(grouped(col)):
        r, c = divmod(i, per_row)
        x = x0 + c * (box + gap + 10)
        yy = y + r * (h + 30)
        sector_box(s, x, yy, cell, h, sector, col, lanes, "orange")
        s.text(x + box / 2, yy + h + 15, lanes_label(lanes), size=11, anchor="middle")
    s.text(x0, y + 4 * (h + 30) + 6,
           f"Each lane needs a sector of its own: the sectors lie {fmt(pitch)} bytes (one row) apart in memory.",
           size=12, italic=True)

    # legend
    ly = 438
    s.rect(x0, ly - 11, cell, 14, fill="blue", stroke="grid")
    s.rect(x0 + cell, ly - 11, cell, 14, fill="orange", stroke="grid")
    s.text(x0 + 2 * cell + 6, ly, "4 bytes a lane uses", size=12)
    s.rect(x0 + 175, ly - 11, cell, 14, fill="paper", stroke="grid")
    s.text(x0 + 175 + cell + 6, ly, "4 bytes moved, not used", size=12)
    s.rect(x0 + 360, ly - 11, box, 14, fill="none", stroke="ink", width=1.5)
    s.text(x0 + 360 + box + 6, ly, f"one {SECTOR}-byte sector", size=12)
    return s.to_string()


def naive_two_sides() -> str:
    rows, cols = default_shape()
    warp = models.constant(SRC, "kBlockX")  # a warp is one row of the block: threadIdx.x = 0..31
    kernels = [
        # name, threadIdx.x walks, reads: stride in elements, writes: stride in elements
        ("transpose_naive_strided_reads", "threadIdx.x walks down a column of in", cols, 1),
        ("transpose_naive_strided_writes", "threadIdx.x walks along a row of in", 1, rows),
    ]
    W, H = 780, 540
    s = Svg(W, H, "The naive transpose both ways: one side of each kernel is strided, the other coalesced")
    n, cell = 36, 4.5           # the corner of each matrix drawn: n x n elements
    side = n * cell
    for k, (name, walk, read_stride, write_stride) in enumerate(kernels):
        top = 14 + k * 270
        s.text(20, top + 14, name, size=14, bold=True, mono=True)
        s.text(20, top + 33, f"{walk}; out[c][r] = in[r][c]; warp 0 of block (0, 0) drawn", size=12)
        for j, (label, stride, verb) in enumerate((("in", read_stride, "reads"), ("out", write_stride, "writes"))):
            gx, gy = 20 + j * 390, top + 56
            answer = models.sectors_strided(FLOAT, stride, 0)
            strided = stride != 1
            colour = "orange" if strided else "blue"
            # the matrix corner, its grid
            s.rect(gx, gy, side, side, fill="muted", stroke="grid")
            for i in range(1, n):
                s.line(gx + i * cell, gy, gx + i * cell, gy + side, stroke="grid", width=0.4)
                s.line(gx, gy + i * cell, gx + side, gy + i * cell, stroke="grid", width=0.4)
            s.rect(gx, gy, side, side, fill="none", stroke="ink")
            # the warp's 32 elements: a column (down) or a row (across) of the corner
            # warp 0 of block (0, 0), threadIdx.y = 0: column 0 or row 0 of the matrix
            if strided:
                s.rect(gx, gy, cell, warp * cell, fill=colour, stroke="ink", width=0.8)
                s.line(gx + cell + 5, gy, gx + cell + 5, gy + warp * cell, arrow=True)
                s.text(gx + cell + 10, gy + warp * cell / 2, f"lanes 0\u2192{warp - 1}", size=11)
            else:
                s.rect(gx, gy, warp * cell, cell, fill=colour, stroke="ink", width=0.8)
                s.line(gx, gy + cell + 5, gx + warp * cell, gy + cell + 5, arrow=True)
                s.text(gx + 4, gy + cell + 20, f"lanes 0\u2192{warp - 1}", size=11)
            dims = f"{fmt(rows)} \u00d7 {fmt(cols)}" if label == "in" else f"{fmt(cols)} \u00d7 {fmt(rows)}"
            s.text(gx, gy + side + 16, f"{label} ({dims}, top-left corner)", size=11, italic=True)
            # what the model says about this side
            tx = gx + side + 14
            nsec = len(answer.sectors)
            s.text(tx, gy + 16, f"{verb}: {'strided' if strided else 'coalesced'}", size=13, bold=True,
                   fill="red" if strided else "blue")
            lines = [f"{nsec} sectors per warp",
                     f"{fmt(nsec * SECTOR)} bytes moved",
                     f"for {fmt(warp * FLOAT)} used ({answer.efficiency * 100:g}%)"]
            if strided:
                lines.append(f"lanes {fmt(stride * FLOAT)} bytes apart")
            else:
                lines.append("lanes 4 bytes apart")
            for i, t in enumerate(lines):
                s.text(tx, gy + 38 + i * 18, t, size=12)
    s.line(20, 276, W - 20, 276, stroke="grid")
    return s.to_string()


FIGURES = {"warp_sectors.svg": warp_sectors, "naive_two_sides.svg": naive_two_sides}
