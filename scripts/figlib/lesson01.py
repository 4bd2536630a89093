"""Lesson 01's idea figures: which 32-byte sectors one warp touches.

warp_sectors.svg: one warp reading a row (lane l at byte 4 l) against one warp reading a column
    of the lesson's default matrix (lane l one row further down); every sector, every lane's
    4 bytes in it and the bytes moved for the bytes used, from lesson 01's sector model
    (models.sectors_strided, the sectors_touched() the lesson prints and the site's explorer runs).
naive_two_sides.svg: the two naive kernels, in and out side by side, with the elements one warp
    reads and writes; which side is strided, and its sectors, again from the sector model, for
    the lesson's default shape (common/transpose_bench.cuh) and its 32-thread warp row (kBlockX).
block_sectors.svg: one block's kBlockX x kBlockY patch on the strided side, each column coloured by
    its warp (warp w walks column w, lane l on row l); the sector model (warp w at byte offset 4 w)
    says the warps' columns fill the same 32 whole sectors, one per row. Beside it, one sector as
    the two kernels send it on: the loads merged in L1 (one request to L2), the stores not (one per warp).
loads_in_flight.svg: a schematic timeline (no measured numbers) of one thread of copy_kernel,
    one load in flight before its store, against one of copy_4_per_thread, kPerThread loads issued
    before the first store; and the bytes in flight each keeps.
"""
from __future__ import annotations

import re

from figlib import models
from figlib.svg import Svg

LESSON = "01_naive_transpose"
SRC = f"lessons/{LESSON}/main.cu"
SECTOR = 32  # bytes: the unit the model counts (lesson 01's sectors_touched())
FLOAT = 4    # the lesson's element: fp32


def default_shape() -> tuple[int, int]:
    """The lesson's default --rows and --cols (common/transpose_bench.cuh, TransposeOptions)."""
    m = re.search(r"long long rows = (\d+), cols = (\d+);", models.source_text("common/transpose_bench.cuh"))
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
    cell, h, gap, x0 = 9, 26, 6, 30
    box = cell * SECTOR // FLOAT
    per_row = 8  # column sectors drawn per line in (b)
    W = x0 + per_row * box + (per_row - 1) * (gap + 10) + x0  # the same margin on both sides
    s = Svg(W, 470, "One warp reading a row touches 4 sectors; reading a column it touches 32 sectors")

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
        ("transpose_naive_strided_reads", "threadIdx.x picks the row: a warp walks down a column of in", cols, 1),
        ("transpose_naive_strided_writes", "threadIdx.x picks the column: a warp walks along a row of in", 1, rows),
    ]
    W, H = 780, 540
    s = Svg(W, H, "The naive transpose both ways: one side of each kernel is strided, the other coalesced")
    n, cell = 36, 4.5           # the corner of each matrix drawn: n x n elements
    side = n * cell
    for k, (name, walk, read_stride, write_stride) in enumerate(kernels):
        top = 14 + k * 270
        s.text(20, top + 14, name, size=14, bold=True, mono=True)
        s.text(20, top + 33, f"{walk}; warp 0 of block (0, 0) drawn", size=12)
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


WARP_COLOURS = ["blue", "orange", "green", "red", "sky", "yellow", "purple", "#999999"]


def block_sectors() -> str:
    rows, cols = default_shape()
    warps = models.constant(SRC, "kBlockY")   # a block is kBlockX x kBlockY threads: kBlockY warps
    lanes = models.constant(SRC, "kBlockX")
    if rows != cols:
        raise models.ModelError("block_sectors.svg draws one patch for in and out: needs rows == cols")
    # Warp w of block (0, 0) has threadIdx.y = w; lane l (threadIdx.x = l) is on row l of the patch.
    # Strided reads: lane l reads in[l][w], byte (l * cols + w) * 4; strided writes: out[l][w], the same.
    answers = [models.sectors_strided(FLOAT, cols, w * FLOAT) for w in range(warps)]
    union = sorted(set().union(*(a.sectors for a in answers)))
    # who touches each sector: {sector: [warps]}, from the model
    owners = {sec: [w for w in range(warps) if sec in answers[w].sectors] for sec in union}
    per_sector = {len(v) for v in owners.values()}
    if len(union) != lanes or per_sector != {warps}:
        raise models.ModelError(f"block_sectors.svg: expected {lanes} sectors shared by all {warps} warps")
    W, H = 780, 612
    s = Svg(W, H, f"One block's {lanes} x {warps} patch on the strided side: the {warps} warps' columns fill "
                  f"{len(union)} whole sectors; loads ask L2 once per sector, stores {warps} times")
    s.text(20, 24, f"One block on the strided side: {warps} warps, a {lanes} \u00d7 {warps} patch, "
                   f"{len(union)} sectors", size=15, bold=True)
    s.text(20, 43, "Warp w (threadIdx.y = w) walks down column w; lane l (threadIdx.x = l) is on row l.",
           size=12)
    s.text(20, 60, f"Each row's {warps} floats are one {SECTOR}-byte sector (outlined), so the {warps} columns "
                   f"fill exactly {len(union)} whole sectors.", size=12)
    # the patch: lanes rows x warps columns, each cell coloured by its warp
    cw, ch = 22, 12
    gx, gy = 70, 100
    s.text(gx + warps * cw / 2, gy - 22, "warp", size=11, anchor="middle")
    for w in range(warps):
        s.text(gx + w * cw + cw / 2, gy - 6, str(w), size=11, anchor="middle")
    for r, sec in enumerate(union):
        y = gy + r * ch
        for w in owners[sec]:
            s.rect(gx + w * cw, y, cw, ch, fill=WARP_COLOURS[w], stroke="paper", width=0.6)
        s.rect(gx, y, warps * cw, ch, fill="none", stroke="ink", width=1.2)
        if r % 8 == 0 or r == lanes - 1:
            s.text(gx - 6, y + ch - 2, f"row {r}", size=10, anchor="end")
    s.text(gx + warps * cw / 2, gy + lanes * ch + 16, "in (strided reads) or", size=11, anchor="middle",
           italic=True)
    s.text(gx + warps * cw / 2, gy + lanes * ch + 30, "out (strided writes)", size=11, anchor="middle",
           italic=True)
    # one row (sector) of the patch, as the two kernels send it on
    cell, h = 10, 16
    box = cell * SECTOR // FLOAT

    def piece(x: float, y: float, ws: list[int]) -> None:
        for c in range(SECTOR // FLOAT):
            s.rect(x + c * cell, y, cell, h, fill=WARP_COLOURS[c] if c in ws else "paper", stroke="grid")
        s.rect(x, y, box, h, fill="none", stroke="ink", width=1.5)

    px, l1x, l2x = 330, 480, 640
    panel = 252
    titles = [("transpose_naive_strided_reads: loads of in",
               "L1 merges the 8 loads", f"L2: 1 request per sector, {len(union)} for the block"),
              ("transpose_naive_strided_writes: stores to out",
               "L1 sends each store on", f"L2: {warps} per sector, {warps * len(union)} for the block")]
    for k, (title, l1_note, l2_note) in enumerate(titles):
        top = 84 + k * panel
        s.text(px - 40, top, title, size=13, bold=True, mono=True)
        s.text(px - 40, top + 18, "row 0 of the patch: one sector, one piece from each warp", size=11)
        wy = top + 34
        band = warps * (h + 3)
        mid = wy + band / 2
        for w in range(warps):
            y = wy + w * (h + 3)
            s.text(px - 8, y + 12, f"warp {w}", size=10, anchor="end")
            piece(px, y, [w])
        if k == 0:
            s.rect(l1x - 10, wy - 4, 120, band + 8, fill="light_blue", stroke="blue", rx=6)
            s.text(l1x + 50, wy + 12, "L1", size=13, anchor="middle", bold=True)
            for w in range(warps):
                s.line(px + box + 3, wy + w * (h + 3) + h / 2, l1x + 8, mid, stroke="grid", width=1)
            piece(l1x + 10, mid - h / 2, list(range(warps)))
            s.line(l1x + 10 + box + 4, mid, l2x + 18, mid, stroke="blue", width=2.5, arrow=True)
            s.rect(l2x, wy - 4, 120, band + 8, fill="muted", stroke="ink", rx=6)
            s.text(l2x + 60, wy + 12, "L2", size=13, anchor="middle", bold=True)
            piece(l2x + 20, mid - h / 2, list(range(warps)))
            s.text(l2x + 60, mid + h / 2 + 16, "1 request", size=11, anchor="middle", bold=True)
        else:
            s.rect(l1x - 10, wy - 4, 120, band + 8, fill="paper", stroke="grid", rx=6, dash="4,3")
            s.text(l1x + 50, wy + 12, "L1", size=13, anchor="middle", bold=True)
            s.rect(l2x, wy - 4, 120, band + 8, fill="muted", stroke="ink", rx=6)
            for w in range(warps):
                y = wy + w * (h + 3)
                s.line(px + box + 3, y + h / 2, l2x + 16, y + h / 2, stroke="red", width=1.2, arrow=True)
                piece(l2x + 20, y, [w])
            s.text(l2x + 60, wy + band + 18, f"{warps} requests", size=11, anchor="middle", bold=True)
        s.text(l1x + 50, wy + band + 18, l1_note, size=11, anchor="middle")
        s.text(px - 40, wy + band + 40, l2_note, size=12, italic=True)
    ly = H - 14
    s.rect(20, ly - 11, box, 14, fill="none", stroke="ink", width=1.5)
    s.text(20 + box + 6, ly, f"one {SECTOR}-byte sector = {SECTOR // FLOAT} floats of one row; "
                             "colour = the warp that reads or writes the float", size=12)
    return s.to_string()


def loads_in_flight() -> str:
    per_thread = models.constant(SRC, "kPerThread")
    return in_flight_timeline(("copy_kernel", "1 load, then", "its store"),
                              ("copy_4_per_thread", f"{per_thread} loads into v[k],", "then the stores"),
                              per_thread, "v", "a store", "one thread of each copy",
                              next_load="done: a thread of a new block takes this slot",
                              note="Not taking turns: all of an SM's threads (up to 2,048) do this at once, "
                                   "and their bytes in flight add up.")


def in_flight_timeline(one: tuple[str, str, str], many: tuple[str, str, str], per_thread: int, regs: str,
                       store: str, who: str, next_load: str = "the next thread's load",
                       note: str | None = None) -> str:
    """One load in flight per thread against per_thread, schematic. one, many: (kernel, two lines
    of what its thread does); regs: the register array the loads go to; store: what the orange
    ticks are; next_load: what the first kernel's slot loads next; note: an extra line under the
    legend. Lesson 03 draws its own kernels with it."""
    W, H = 780, 450 + (18 if note else 0)
    s = Svg(W, H, f"A schematic timeline: one load in flight per thread against {per_thread}")
    s.text(20, 24, f"Loads in flight: {who} (schematic, not to scale)", size=15, bold=True)
    s.text(20, 43, "A thread waits at the first instruction that uses a loaded value, not at the load itself.",
           size=12)
    x0, lat, issue = 160, 280, 14   # px: where time starts, one latency, one issue slot
    axis_end = W - 30

    def load_bar(x: float, y: float, label: str, dash: str | None = None) -> None:
        s.rect(x, y, min(lat, axis_end - x), 14, fill="light_blue", stroke="blue", dash=dash)
        s.text(x + 6, y + 11, label, size=10)

    def store_tick(x: float, y: float) -> None:
        s.rect(x, y, issue - 2, 14, fill="orange", stroke="ink", width=0.6)

    def in_flight(y: float, loads: list[float], unit: float, label: str) -> None:
        """A step line of the bytes in flight: +1 load at each issue time, -1 a latency later."""
        events = sorted([(t, 1) for t in loads] + [(t + lat, -1) for t in loads if t + lat < axis_end])
        d, level, at = f"M{x0},{y}", 0, x0
        for t, step in events:
            d += f" L{t},{y - level * unit}"
            level += step
            d += f" L{t},{y - level * unit}"
            at = t
        if level:
            d += f" L{axis_end},{y - level * unit}"
        s.path(d, stroke="blue", width=1.5)
        peak = max(sum(1 for t in loads if t <= u < t + lat) for u in loads)
        s.text(x0 - 8, y - peak * unit / 2 + 4, f"{peak * FLOAT} B", size=10, anchor="end", fill="blue")
        s.text(x0 + lat / 2 + 40, y - peak * unit - 6, label, size=11, anchor="middle", fill="blue")
        del at

    # (a) copy_kernel: load, wait, store; the SM then runs another thread in that slot
    ya = 86
    s.text(20, ya - 8, one[0], size=12, bold=True, mono=True)
    s.text(20, ya + 11, one[1], size=11)
    s.text(20, ya + 25, one[2], size=11)
    load_bar(x0, ya, "load: in flight")
    store_tick(x0 + lat, ya)
    second = x0 + lat + issue
    load_bar(second, ya, next_load, dash="4,3")
    in_flight(ya + 62, [x0, second], 7, f"{FLOAT} bytes in flight")

    # (b) copy_4_per_thread: kPerThread loads issued back to back, then the stores
    yc = 192
    s.text(20, yc - 8, many[0], size=12, bold=True, mono=True)
    s.text(20, yc + 11, many[1], size=11)
    s.text(20, yc + 25, many[2], size=11)
    issued = [x0 + k * issue for k in range(per_thread)]
    for k, t in enumerate(issued):
        load_bar(t, yc + k * 17, f"load {k}")
        store_tick(t + lat, yc + k * 17)
    s.line(x0 + lat, yc - 6, x0 + lat, yc + per_thread * 17 + 2, stroke="ink", width=1, dash="3,3")
    s.text(x0 + lat + 4, yc - 10, f"first use of {regs}[0]: the thread waits here, once", size=10)
    in_flight(yc + per_thread * 17 + 62, issued, 7, f"{per_thread} \u00d7 {FLOAT} = {per_thread * FLOAT} bytes in flight")

    # time axis and the latency
    yt = 350
    s.line(x0, yt, axis_end, yt, stroke="ink", width=1, arrow=True)
    s.text(axis_end, yt + 16, "time", size=11, anchor="end")
    s.line(x0, yt + 12, x0 + lat, yt + 12, stroke="ink", width=1, arrow=True)
    s.text(x0 + lat / 2, yt + 26, "one latency: hundreds of ns from device memory", size=11, anchor="middle")
    if note:
        s.text(20, H - 12, note, size=12)
    foot = H - (18 if note else 0)
    s.text(20, foot - 48, f"Per latency, a thread of {one[0]} moves {FLOAT} bytes, one of {many[0]} "
                       f"{per_thread * FLOAT}.", size=12)
    s.text(20, foot - 30, "Little's law: bandwidth = bytes in flight / latency.", size=12, bold=True)
    s.text(20, foot - 12, f"Blue bar: a load in flight (requested, not yet received). Orange: {store}. "
                       "Blue line: the thread's bytes in flight.", size=11, italic=True)
    return s.to_string()


FIGURES = {"warp_sectors.svg": warp_sectors, "naive_two_sides.svg": naive_two_sides,
           "block_sectors.svg": block_sectors, "loads_in_flight.svg": loads_in_flight}
