"""Lesson 02's idea figures: what each shows, and where its numbers come from.

barrier_race.svg reverse_in_block_static (one block of kMaxStaticReverse threads, as main.cu launches
                it) on a time line: warp 0 and the warp that stores what warp 0 reads (thread t stores
                s[t], reads s[n - 1 - t]), (a) without the barrier, in an order the hardware may pick,
                (b) with __syncthreads(). The index lines are checked against main.cu (reverse_warps).
tile_trip.svg   A tile's trip through shared memory: a warp reads a row of the input tile
                (coalesced) into a row of the shared tile; after the barrier it reads a COLUMN of the
                shared tile and writes it as a row of the output (coalesced), at the swapped block
                position. Each tile row is coloured by the warp that moves it (warp w: rows w, w +
                kRowsPerPass, ...), so the column one warp reads back crosses every warp's rows: the barrier.
                One element is traced (white dot) in in, in the shared tile and in out, with the lane and
                warp that write it and read it back: tile_moves runs transpose_tiled's two loops for the
                drawn block, their lines checked against main.cu, and the figure stops if they no
                longer move it as labelled (or colour a row by another warp than the one that moves it).
                Tile size, block shape and padding: kTile and kRowsPerPass of the lesson's
                main.cu (the padded tile is kTile x (kTile + 1), as launch_transpose_tiled<kTile + 1>).
bank_pitch.svg  The column read of that tile in shared memory, pitch kTile against kTile + 1: where
                each of the 32 lanes' words lies among the 32 banks, and the wavefronts lesson 06's
                bank model gives (models.banks_strided(4, pitch): lane l reads word l * pitch).
float4_tile.svg The float4 kernel (the first padded_float4 launch in kTransposes with more than one
                float4 per thread: tile kTileW, 8 x kRows threads): the float4s one thread loads into
                registers before its first shared store, and warp 0's first load; then the two block
                orders of tile_origin / tile_grid: which tiles of in and out the first blocks move.
source_warp.svg Warp 0 of block (0, 0) of transpose_tiled_source_mapping (kSourceTile x kSourceTile
                threads, a warp 32 threads counted along x first: 16 x 2) on in and on out: the
                elements it touches and the 32-byte sectors they fall in; below, warp 0 of the padded
                transpose_tiled (one row of 32 floats on each side). The lanes' addresses are the
                kernels' own index arithmetic (checked against main.cu's lines, see warp_addresses),
                at the lesson's default shape; the sectors are lesson 01's sector model on them.
"""
import re

from figlib import models
from figlib.svg import Svg

LESSON = "02_shared_transpose"
MAIN = "lessons/02_shared_transpose/main.cu"
# One colour per warp of a block (threadIdx.y = 0..kRowsPerPass - 1), told apart in the tile figure:
# eight colours with eight different names (blue, orange, green, brown, pink, yellow, grey, black),
# so no two warps share a family the way blue and sky blue, or orange and yellow, would.
WARP_COLOURS = ("blue", "red", "green", "#8c510a", "purple", "yellow", "#999999", "#333333")
# The element tile_trip traces, in a colour no warp has.
TRACE_COLOUR = "paper"


def _grid(s: Svg, x: float, y: float, cols: int, rows: int, cell_w: float, cell_h: float,
          stroke: str = "grid", every: int = 1) -> None:
    """Thin lines every `every` cells, and a frame."""
    for c in range(every, cols, every):
        s.line(x + c * cell_w, y, x + c * cell_w, y + rows * cell_h, stroke=stroke, width=0.5)
    for r in range(every, rows, every):
        s.line(x, y + r * cell_h, x + cols * cell_w, y + r * cell_h, stroke=stroke, width=0.5)
    s.rect(x, y, cols * cell_w, rows * cell_h, fill="none", stroke="ink", width=1.2)


def tile_trip() -> str:
    tile = models.constant(MAIN, "kTile")            # 32: the tile's side, a warp's width
    rows_per_pass = models.constant(MAIN, "kRowsPerPass")  # 8: threadIdx.y runs 0..7
    pitch = tile + 1                                  # transpose_tiled<kTile + 1>: the padded tile
    passes = tile // rows_per_pass                    # rows each thread moves
    y_row = 5                                         # the warp drawn: threadIdx.y = 5, first pass
    lane = 3                                          # the traced element: lane 3 of that warp loads it
    # A small matrix of tiles: `in` has 3 tile rows and 4 tile columns, so `out` has 4 and 3.
    t_rows, t_cols, by, bx = 3, 4, 1, 2
    row0, col0 = by * tile, bx * tile

    # The traced element, from the kernel's own loops (tile_moves): who writes it into the tile,
    # who reads it back, and where it lies in in and in out.
    writes, reads = tile_moves(bx, by)
    # Every tile row drawn in the colour of the warp that moves it: the loops must agree.
    for (i, j), (w, _, _, _) in writes.items():
        if w != i % rows_per_pass:
            raise models.ModelError(f"tile row {i} is written by warp {w}, drawn as warp {i % rows_per_pass}")
    for (i, j), (w, _, _, (o_row, _)) in reads.items():
        if w != (o_row - col0) % rows_per_pass:
            raise models.ModelError(f"row {o_row - col0} of out's tile is stored by warp {w}, drawn otherwise")
    cell_at = (y_row, lane)                           # tile[y][threadIdx.x], y = threadIdx.y at the first pass
    l_warp, l_lane, l_y, (in_r, in_c) = writes[cell_at]
    s_warp, s_lane, s_y, (out_r, out_c) = reads[cell_at]
    if (l_warp, l_lane, l_y) != (y_row, lane, y_row) or (out_r, out_c) != (in_c, in_r) or s_warp == l_warp:
        raise models.ModelError("the traced element: the kernel's loops no longer move it as the figure says")
    in_at, out_at = (in_r - row0, in_c - col0), (out_r - col0, out_c - row0)   # within each tile
    in_name = f"in[row0+{in_at[0]}][col0+{in_at[1]}]"
    tile_name = f"tile[{cell_at[0]}][{cell_at[1]}]"
    out_name = f"out[col0+{out_at[0]}][row0+{out_at[1]}]"

    s = Svg(780, 560, f"A {tile} x {tile} tile's trip: a row of in, read by one warp, goes into a row of the "
                      f"shared tile; after the barrier a column of the shared tile is written as a row of out, "
                      f"at the swapped block position. One element traced: {in_name}, written by lane {lane} of "
                      f"warp {l_warp} into {tile_name}, read by lane {s_lane} of warp {s_warp} and written to "
                      f"{out_name}")
    s.text(390, 22, f"One block, {tile} x {rows_per_pass} threads, moves one {tile} x {tile} tile "
                    f"(each thread {passes} rows)", size=15, anchor="middle", bold=True)

    # --- the two matrices, small, with the block's tile in each
    th = 15  # px per tile in the thumbnails
    def thumbnail(x: float, y: float, title: str, rows: int, cols: int, hit: tuple[int, int],
                  fill: str, stroke: str, labels: tuple[str, str]) -> None:
        """A matrix as a grid of tiles, the block's tile (row, column) = hit marked."""
        s.text(x, y - 10, title, size=12, bold=True)
        for r in range(rows):
            for c in range(cols):
                s.rect(x + c * th, y + r * th, th, th, fill=fill if (r, c) == hit else "muted", stroke="grid")
        s.rect(x + hit[1] * th, y + hit[0] * th, th, th, fill="none", stroke=stroke, width=2)
        s.text(x + cols * th + 10, y + 14, labels[0], size=11)
        s.text(x + cols * th + 10, y + 29, labels[1], size=11)

    ix, iy, ox, oy = 60, 62, 560, 62  # the two thumbnails' corners
    thumbnail(ix, iy, "in (rows x cols)", t_rows, t_cols, (by, bx), "light_blue", "blue",
              (f"block (bx, by) = ({bx}, {by}):", f"bx = blockIdx.x, by = blockIdx.y"))
    thumbnail(ox, oy, "out (cols x rows)", t_cols, t_rows, (bx, by), "light_orange", "orange",
              (f"out's block: x = {by}, y = {bx}", "(x: tile column, y: tile row)"))
    s.text(420, 70, "the same block writes its tile to", size=11, anchor="middle", italic=True)
    s.text(420, 85, "the swapped position: x and y swap", size=11, anchor="middle", italic=True)
    s.line(330, 100, 535, 100, stroke="ink", width=1, arrow=True, dash="4,3")

    # --- the three tiles, large: in's tile, the shared tile, out's tile
    cell = 5
    top = 160
    ax, sx, bxp = 40, 305, 575          # left edges of the three large tiles
    side = tile * cell
    s.text(ax + side / 2, top - 12, f"the tile of in ({tile} x {tile})", size=12, anchor="middle", bold=True)
    s.text(sx + pitch * cell / 2, top - 26, f"shared memory: tile[{tile}][{pitch}]", size=12, anchor="middle",
           bold=True)
    s.text(sx + pitch * cell / 2, top - 12, "one column of padding", size=11, anchor="middle")
    s.text(bxp + side / 2, top - 12, f"the tile of out ({tile} x {tile})", size=12, anchor="middle", bold=True)
    # the zoom lines from the thumbnails
    s.line(ix + bx * th + th / 2, iy + (by + 1) * th, ax + side / 2, top - 28, stroke="blue", width=1, dash="2,3")
    s.line(ox + by * th + th / 2, oy + (bx + 1) * th, bxp + side / 2, top - 28, stroke="orange", width=1,
           dash="2,3")

    # Every tile row coloured by the warp that moves it: warp w (threadIdx.y = w) loads rows w,
    # w + rows_per_pass, ... of in into the same rows of the shared tile, and after the barrier
    # stores rows w, w + rows_per_pass, ... of out (the shared tile's columns of those numbers).
    assert rows_per_pass <= len(WARP_COLOURS), "one colour per warp of the block"
    for r in range(tile):
        for x0 in (ax, sx, bxp):
            s.rect(x0, top + r * cell, side, cell, fill=WARP_COLOURS[r % rows_per_pass], stroke="none", width=0)
    s.rect(sx + tile * cell, top, cell, side, fill="grid", stroke="none", width=0)
    for x0, cols in ((ax, tile), (sx, pitch), (bxp, tile)):
        _grid(s, x0, top, cols, tile, cell, cell, every=rows_per_pass)
    s.line(sx + tile * cell, top, sx + tile * cell, top + side, stroke="ink", width=0.8, dash="2,2")
    # warp y_row's first row of in and of the shared tile, the column it reads back, its row of out
    for x, y, w, h in ((ax, top + y_row * cell, side, cell), (sx, top + y_row * cell, side, cell),
                       (sx + y_row * cell, top, cell, side), (bxp, top + y_row * cell, side, cell)):
        s.rect(x, y, w, h, fill="none", stroke="ink", width=2)

    # the two phases
    mid = top + y_row * cell + cell / 2
    s.line(ax + side + 6, mid, sx - 6, mid, stroke="ink", width=2, arrow=True)
    s.text((ax + side + sx) / 2, mid - 22, "1. load", size=12, anchor="middle", bold=True)
    s.text((ax + side + sx) / 2, mid - 8, "row to row", size=11, anchor="middle")
    s.line(sx + pitch * cell + 6, mid, bxp - 6, mid, stroke="ink", width=2, arrow=True)
    s.text((sx + pitch * cell + bxp) / 2, mid - 22, "2. store", size=12, anchor="middle", bold=True)
    s.text((sx + pitch * cell + bxp) / 2, mid - 8, "column to row", size=11, anchor="middle")
    s.text(sx + pitch * cell + 4, top + side - 4, "pad", size=10, fill="ink")

    # the traced element: a white dot in each of its three places, its name and movers below each tile
    def dot(x: float, y: float) -> None:
        s.circle(x, y, 4.5, fill=TRACE_COLOUR, stroke="ink", width=1.5)

    ny = top + side + 20
    for x0, (r, c), lines in ((ax, in_at, (in_name, f"loaded by lane {l_lane} of warp {l_warp} (y = {l_y})")),
                              (sx, cell_at, (tile_name, f"written by lane {l_lane} of warp {l_warp},",
                                             f"read by lane {s_lane} of warp {s_warp} (y = {s_y})")),
                              (bxp, out_at, (out_name, f"stored by lane {s_lane} of warp {s_warp} (y = {s_y})"))):
        dot(x0 + c * cell + cell / 2, top + r * cell + cell / 2)
        centre = x0 + side / 2
        dot(centre - 7 * len(lines[0]) / 2 - 10, ny - 4)
        s.text(centre, ny, lines[0], size=12, anchor="middle", mono=True)
        for k, words in enumerate(lines[1:]):
            s.text(centre, ny + 16 + 15 * k, words, size=11, anchor="middle")

    # the barrier
    by_box = ny + 44
    s.rect(sx + pitch * cell / 2 - 130, by_box, 260, 22, fill="light_green", stroke="green", rx=4)
    s.text(sx + pitch * cell / 2, by_box + 15, "__syncthreads() between 1 and 2", size=11,
           anchor="middle", mono=True)

    # captions, and the colour of each warp
    cy = by_box + 50
    rows = ", ".join(str(y_row + k * rows_per_pass) for k in range(passes))
    s.text(ax, cy - 3, f"1. Warp {y_row} (threadIdx.y = {y_row}) reads rows {rows} of in's tile, "
                       f"{tile} consecutive floats each (coalesced),", size=12)
    s.text(ax, cy + 13, "and writes them into the same rows of the shared tile. Framed: its first row.", size=12)
    s.text(ax, cy + 35, f"2. After the barrier, warp {y_row} reads columns {rows} of the shared tile "
                        f"(framed: column {y_row}).", size=12)
    s.text(ax, cy + 51, f"All {rows_per_pass} warps wrote each column: hence the barrier. Column {y_row} "
                        f"becomes row {y_row} of out: {tile} consecutive floats, coalesced.", size=12)
    s.text(ax, cy + 73, f"White dot: one element. Warp {l_warp} writes it, warp {s_warp} reads it back. "
                        f"Block (bx, by) = ({bx}, {by}) has row0 = {row0}, col0 = {col0}:", size=12)
    s.text(ax, cy + 89, f"in[{in_r}][{in_c}] becomes out[{out_r}][{out_c}].", size=12)
    ly = cy + 114
    s.text(ax, ly + 9, "colour = the warp that moves the row:", size=12)
    for w in range(rows_per_pass):
        x = ax + 240 + w * 60
        s.rect(x, ly, 14, 10, fill=WARP_COLOURS[w], stroke="none", width=0)
        s.text(x + 18, ly + 9, f"warp {w}", size=11)
    s.height = ly + 28
    return s.to_string()


def bank_pitch() -> str:
    tile = models.constant(MAIN, "kTile")
    pitches = (tile, tile + 1)   # transpose_tiled<kTile> and transpose_tiled<kTile + 1>
    answers = [models.banks_strided(4, p) for p in pitches]  # lane l reads word l * pitch (tile[l][0])
    banks = 32
    cell = 8.5
    max_rows = max(-(-tile * p // banks) for p in pitches)
    s = Svg(780, 590, f"The {tile} lanes of a warp read a column of the tile: with a pitch of {pitches[0]} "
                      f"floats all {tile} words lie in bank 0 and take {answers[0].wavefronts} wavefronts; "
                      f"with a pitch of {pitches[1]} they lie in {tile} different banks and take "
                      f"{answers[1].wavefronts} wavefront")
    s.text(390, 22, f"A warp reads column 0 of the tile: lane l reads tile[l][0], word l x pitch",
           size=15, anchor="middle", bold=True)
    s.text(390, 42, "Shared memory drawn as rows of 32 banks (4 bytes each, 128 bytes a row); "
                    "word w is in bank w mod 32", size=12, anchor="middle")

    for k, (pitch, ans) in enumerate(zip(pitches, answers)):
        x0 = 60 + k * 380
        y0 = 100
        words = [a // 4 for a in ans.address]
        total_words = tile * pitch
        mem_rows = -(-total_words // banks)
        colour = "red" if ans.wavefronts > ans.ideal else "green"
        light = "light_red" if ans.wavefronts > ans.ideal else "light_green"
        s.text(x0 + banks * cell / 2, y0 - 30, f"pitch {pitch}: tile[{tile}][{pitch}]", size=14,
               anchor="middle", bold=True)
        for b in (0, 8, 16, 24, 31):
            s.text(x0 + (b + 0.5) * cell, y0 - 6, str(b), size=9, anchor="middle")
        s.text(x0 - 6, y0 - 6, "bank", size=9, anchor="end")
        # the padding words of the pitch-33 tile, in grey
        for w in range(total_words):
            if w % pitch >= tile:
                s.rect(x0 + (w % banks) * cell, y0 + (w // banks) * cell, cell, cell, fill="grid",
                       stroke="none", width=0)
        # the words the warp reads
        for lane, w in enumerate(words):
            s.rect(x0 + (w % banks) * cell, y0 + (w // banks) * cell, cell, cell, fill=colour,
                   stroke="none", width=0)
        _grid(s, x0, y0, banks, mem_rows, cell, cell, every=1)
        for lane in (0, 1, 2, tile - 1):
            w = words[lane]
            s.text(x0 - 6, y0 + (w // banks) * cell + cell - 1, f"lane {lane}", size=9, anchor="end")
        s.text(x0 - 6, y0 + (words[3] // banks) * cell + cell + 2, "...", size=9, anchor="end")
        # lanes per bank: the busiest bank sets the wavefronts
        per_bank = [sum(1 for b in ans.bank if b == bank) for bank in range(banks)]
        hy = y0 + max_rows * cell + 30
        scale = 2.2
        s.text(x0, hy - 8, "lanes per bank", size=11, bold=True)
        base = hy + tile * scale
        s.line(x0, base, x0 + banks * cell, base, stroke="ink", width=1)
        for bank, n in enumerate(per_bank):
            if n:
                s.rect(x0 + bank * cell + 1, base - n * scale, cell - 2, n * scale, fill=colour, stroke="none",
                       width=0)
        busiest = max(per_bank)
        s.text(x0 + banks * cell + 4, base - busiest * scale + 8, str(busiest), size=10)
        s.rect(x0 - 10, base + 12, banks * cell + 20, 46, fill=light, stroke=colour, rx=4)
        if ans.wavefronts > ans.ideal:
            line1 = f"all {tile} lanes in bank {ans.bank[0]}: served one after another"
        else:
            line1 = f"{len(set(ans.bank))} lanes, {len(set(ans.bank))} different banks: served together"
        s.text(x0 + banks * cell / 2, base + 30, line1, size=11, anchor="middle")
        s.text(x0 + banks * cell / 2, base + 48,
               f"{ans.wavefronts} wavefront{'s' if ans.wavefronts != 1 else ''}", size=13, anchor="middle",
               bold=True)
    s.rect(60, 566, 10, 10, fill="grid", stroke="none", width=0)
    s.text(76, 575, "padding: column 32 of each tile row, never read; it shifts the next row by one bank",
           size=11)
    return s.to_string()


def float4_shape() -> tuple[int, int]:
    """(kTileW, kRows) of the float4 kernel with several float4s per thread, from kTransposes."""
    text = models.source_text(MAIN)
    shapes = [(int(a), int(b)) for a, b in
              re.findall(r"launch_transpose_tiled_padded_float4<(\d+), (\d+)>\}", text)]
    many = [(w, r) for w, r in shapes if (w // r) * (w // 32) > 1]
    if not many:
        raise models.ModelError(f"{MAIN}: no launch_transpose_tiled_padded_float4<W, R> with several float4s a thread")
    return many[0]


def tile_order(column_order: bool, row_tiles: int, col_tiles: int) -> dict[tuple[int, int], int]:
    """{(tile row, tile column) of in: the block's place in launch order}, as tile_grid() and
    tile_origin() compute it: x fastest, then y."""
    gx, gy = (row_tiles, col_tiles) if column_order else (col_tiles, row_tiles)
    order = {}
    for by in range(gy):
        for bx in range(gx):
            tile = (bx, by) if column_order else (by, bx)
            order[tile] = by * gx + bx
    return order


def float4_tile() -> str:
    tile_w, rows = float4_shape()
    threads_x = 8                          # launch_transpose_tiled_padded_float4: block(8, kRows)
    passes, strips = tile_w // rows, tile_w // 32
    per_thread = passes * strips
    W, H = 780, 690
    s = Svg(W, H, f"The float4 kernel: each thread of an 8 x {rows} block loads {per_thread} float4s of a "
                  f"{tile_w} x {tile_w} tile before its first shared store; and the two block orders")
    s.text(20, 24, f"(a) A {tile_w} \u00d7 {tile_w} tile, {threads_x} \u00d7 {rows} threads: "
                   f"{per_thread} float4 loads per thread, then the shared stores", size=15, bold=True)
    cell = 5
    x0, y0 = 30, 60
    side = tile_w * cell
    s.text(x0, y0 - 8, f"the tile of in ({tile_w} \u00d7 {tile_w} floats)", size=12, bold=True)
    s.rect(x0, y0, side, side, fill="muted", stroke="grid")
    # warp 0's first load: threadIdx.y 0..3, threadIdx.x 0..7: rows 0..3, floats 0..31
    warp_rows = 32 // threads_x
    s.rect(x0, y0, 32 * cell, warp_rows * cell, fill="light_orange", stroke="orange", width=1)
    # thread (0, 0)'s float4s: rows p * kRows, floats 32 s .. 32 s + 3
    for p in range(passes):
        for st in range(strips):
            s.rect(x0 + 32 * st * cell, y0 + p * rows * cell, 4 * cell, cell, fill="blue", stroke="blue", width=0.6)
            s.text(x0 + (32 * st + 4) * cell + 3, y0 + p * rows * cell + cell + 3, str(p * strips + st), size=9,
                   fill="blue")
    for r in range(rows, tile_w, rows):
        s.line(x0, y0 + r * cell, x0 + side, y0 + r * cell, stroke="grid", width=0.8, dash="2,2")
    s.line(x0 + 32 * cell, y0, x0 + 32 * cell, y0 + side, stroke="grid", width=0.8, dash="2,2")
    s.rect(x0, y0, side, side, fill="none", stroke="ink", width=1.2)
    # registers, then the shared tile
    rx, ry = x0 + side + 60, y0 + 20
    s.text(rx, ry - 8, f"thread (0, 0): registers v[{passes}][{strips}]", size=12, bold=True)
    for k in range(per_thread):
        s.rect(rx + k * 24, ry, 22, 16, fill="blue", stroke="ink", width=0.6)
        s.text(rx + k * 24 + 11, ry + 12, str(k), size=10, anchor="middle", fill="paper", bold=True)
    s.line(x0 + 40 * cell, y0 + 6, rx - 6, ry + 8, stroke="blue", width=1.5, arrow=True)
    s.text(rx, ry + 34, f"1. {per_thread} float4 loads (16 bytes each), issued one after another:", size=12)
    s.text(rx, ry + 50, f"{per_thread * 16} bytes in flight before the first store", size=12, bold=True)
    s.text(rx, ry + 76, f"2. then {4 * per_thread} scalar stores into tile[{tile_w}][{tile_w + 1}]:", size=12)
    s.text(rx, ry + 92, "shared memory stays 4 bytes at a time", size=12)
    s.text(rx, ry + 118, "3. barrier; the store phase reads the tile's columns", size=12)
    s.text(rx, ry + 134, "and writes float4s of out, as the scalar tile does", size=12)
    ly = y0 + side - 30
    s.rect(rx, ly - 11, 14, 12, fill="light_orange", stroke="orange")
    s.text(rx + 20, ly, f"warp 0's first load: {warp_rows} rows \u00d7 32 floats, coalesced", size=11)
    s.rect(rx, ly + 9, 14, 12, fill="blue", stroke="blue")
    s.text(rx + 20, ly + 20, "the float4s of thread (0, 0), numbered in issue order", size=11)

    # (b) the block order
    top = y0 + side + 50
    s.line(20, top - 26, W - 20, top - 26, stroke="grid")
    s.text(20, top, "(b) The block order: which tiles the first blocks to start move (in and out)", size=15,
           bold=True)
    s.text(20, top + 18, "Numbers: launch order (blockIdx.x fastest). Shaded: the first four, which start "
                         "together (observed, not promised).", size=12)
    rt, ct, first, th = 4, 5, 4, 22
    for k, (column, name) in enumerate(((False, "row order: blockIdx.x walks a row of tiles"),
                                        (True, "column order: blockIdx.x walks a column of tiles"))):
        order = tile_order(column, rt, ct)
        bx0 = 30 + k * 380
        by0 = top + 48
        s.text(bx0, by0 - 4, name, size=12, bold=True)
        for m, (label, nr, nc) in enumerate((("in", rt, ct), ("out", ct, rt))):
            gx = bx0 + m * (ct * th + 30)
            gy = by0 + 20
            s.text(gx, gy + nr * th + 14, label, size=11, italic=True)
            for r in range(nr):
                for c in range(nc):
                    n = order[(r, c)] if label == "in" else order[(c, r)]
                    fill = ("light_blue" if label == "in" else "light_orange") if n < first else "paper"
                    s.rect(gx + c * th, gy + r * th, th, th, fill=fill, stroke="grid")
                    s.text(gx + c * th + th / 2, gy + r * th + th / 2 + 4, str(n), size=10, anchor="middle",
                           bold=n < first)
            s.rect(gx, gy, nc * th, nr * th, fill="none", stroke="ink")
    ty = top + 68 + max(rt, ct) * th + 48
    s.text(20, ty, "Row order: the first blocks read whole rows of in and write a column of tiles of out; "
                       "column order:", size=12)
    s.text(20, ty + 17, "the other way round. The bytes are the same; only the order device memory sees them "
                       "in changes.", size=12)
    return s.to_string()


# The index arithmetic warp_addresses() reimplements, as main.cu writes it (spaces squeezed): if the
# kernels change, the figure stops instead of drawing a mapping the code no longer has.
SOURCE_LINES = ("const dim3 block(kSourceTile, kSourceTile);",
                "const int tx = threadIdx.x, ty = threadIdx.y;",
                "const int r = blockIdx.x * kSourceTile + tx, c = blockIdx.y * kSourceTile + ty;",
                "tile[ty][tx] = in[r * cols + c];",
                "const int out_row = blockIdx.y * kSourceTile + tx, out_col = blockIdx.x * kSourceTile + ty;",
                "out[out_row * rows + out_col] = tile[tx][ty];")
TILED_LINES = ("const dim3 block(kTile, kRowsPerPass);",
               "const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;",
               "const int r = row0 + y, c = col0 + threadIdx.x;",
               "tile[y][threadIdx.x] = in[r * cols + c];",
               "const int out_row = col0 + y, out_col = row0 + threadIdx.x;",
               "out[out_row * rows + out_col] = tile[threadIdx.x][y];")


# transpose_tiled's two loops in the order the kernel runs them (spaces squeezed): the load loop,
# the barrier, the store loop. tile_moves() runs them for one block.
TRIP_LOOP = "for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {"
TRIP_ORDER = ("const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;", TRIP_LOOP,
              "const int r = row0 + y, c = col0 + threadIdx.x;", "tile[y][threadIdx.x] = in[r * cols + c];",
              "__syncthreads();", TRIP_LOOP, "const int out_row = col0 + y, out_col = row0 + threadIdx.x;",
              "out[out_row * rows + out_col] = tile[threadIdx.x][y];")


def tile_moves(bx: int, by: int) -> tuple[dict, dict]:
    """Block (bx, by) of transpose_tiled, its loops run as main.cu writes them: for each tile
    element (i, j), who writes it in the load loop and who reads it in the store loop, each as
    (warp, lane, y, (row, column) of in or out). A warp is one threadIdx.y (blockDim.x = kTile = 32),
    its lane threadIdx.x."""
    _require_in_order("__global__ void transpose_tiled(", TRIP_ORDER, "tile_moves")
    _require_lines(TILED_LINES[:1], "tile_moves")     # the block: kTile x kRowsPerPass threads
    tile = models.constant(MAIN, "kTile")
    rows_per_pass = models.constant(MAIN, "kRowsPerPass")
    if tile != WARP:
        raise models.ModelError(f"kTile = {tile}: the figure takes one threadIdx.y for one warp of {WARP}")
    row0, col0 = by * tile, bx * tile
    writes, reads = {}, {}
    for ty in range(rows_per_pass):
        for tx in range(tile):
            for y in range(ty, tile, rows_per_pass):
                r, c = row0 + y, col0 + tx                 # tile[y][threadIdx.x] = in[r * cols + c]
                writes.setdefault((y, tx), []).append((ty, tx, y, (r, c)))
                out_row, out_col = col0 + y, row0 + tx     # out[out_row * rows + out_col] = tile[threadIdx.x][y]
                reads.setdefault((tx, y), []).append((ty, tx, y, (out_row, out_col)))
    cells = {(i, j) for i in range(tile) for j in range(tile)}
    if set(writes) != cells or set(reads) != cells or any(len(v) != 1 for v in (*writes.values(), *reads.values())):
        raise models.ModelError("transpose_tiled: a tile element is not written once and read once")
    return {k: v[0] for k, v in writes.items()}, {k: v[0] for k, v in reads.items()}


def _require_lines(lines: tuple[str, ...], user: str = "warp_addresses") -> None:
    """Each line is somewhere in main.cu (spaces squeezed); else the figure code USER is out of date."""
    text = " ".join(models.source_text(MAIN).split())
    for line in lines:
        if line not in text:
            raise models.ModelError(f"{MAIN} no longer has '{line}': update lesson02.{user}()")


def _require_in_order(head: str, lines: tuple[str, ...], user: str) -> None:
    """The lines come in this order (spaces squeezed) in the function of main.cu that starts with
    HEAD, up to its closing brace; else the figure code USER is out of date."""
    text = models.source_text(MAIN)
    start = text.find(head)
    body = " ".join(text[start:text.find("\n}\n", start)].split()) if start >= 0 else ""
    name = head.split()[-1].rstrip("(")
    at = 0
    for line in lines:
        at = body.find(line, at)
        if at < 0:
            raise models.ModelError(f"{MAIN}: {name} no longer has '{line}' (in this order): "
                                    f"update lesson02.{user}()")
        at += len(line)


def warp_addresses(kernel: str, rows: int, cols: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Warp 0 of block (0, 0): per lane, the (row, column) of in it loads and of out it stores.
    A warp is 32 threads of the block counted along x first (lane = threadIdx.y * blockDim.x +
    threadIdx.x), the loop variable y of transpose_tiled at its first value, threadIdx.y."""
    loads, stores = [], []
    bx = by = 0
    if kernel == "transpose_tiled_source_mapping":
        _require_lines(SOURCE_LINES)
        n = models.constant(MAIN, "kSourceTile")
        for lane in range(32):
            tx, ty = lane % n, lane // n
            r, c = bx * n + tx, by * n + ty
            out_row, out_col = by * n + tx, bx * n + ty
            loads.append((r, c))
            stores.append((out_row, out_col))
    elif kernel == "transpose_tiled":
        _require_lines(TILED_LINES)
        tile = models.constant(MAIN, "kTile")
        for lane in range(32):
            tx, ty = lane % tile, lane // tile
            row0, col0, y = by * tile, bx * tile, ty
            loads.append((row0 + y, col0 + tx))
            stores.append((col0 + y, row0 + tx))
    else:
        raise models.ModelError(f"warp_addresses: no kernel {kernel}")
    for (r, c), (orow, ocol) in zip(loads, stores):
        if not (r < rows and c < cols and orow < cols and ocol < rows):
            raise models.ModelError(f"{kernel}: warp 0 leaves the {rows} x {cols} matrix")
    return loads, stores


def source_warp() -> str:
    from figlib.lesson01 import FLOAT, SECTOR, default_shape
    rows, cols = default_shape()
    n = models.constant(MAIN, "kSourceTile")
    per_sector = SECTOR // FLOAT
    kernels = ("transpose_tiled_source_mapping", "transpose_tiled")
    sides = {}
    for k in kernels:
        loads, stores = warp_addresses(k, rows, cols)
        # in is rows x cols, out is cols x rows, both row-major: the byte addresses, then the model
        sides[k] = [(loads, models.sectors_of_lanes(FLOAT, [(r * cols + c) * FLOAT for r, c in loads])),
                    (stores, models.sectors_of_lanes(FLOAT, [(r * rows + c) * FLOAT for r, c in stores]))]
        for cells, answer in sides[k]:
            # the drawing outlines the sector of each (row, column): it must be the model's
            drawn = sorted({(r * (cols if cells is loads else rows) + c) * FLOAT // SECTOR for r, c in cells})
            if drawn != answer.sectors:
                raise models.ModelError(f"{k}: the drawn sectors are not lesson 01's model's")
    src = sides[kernels[0]]
    til = sides[kernels[1]]
    n_src, n_til = len(src[0][1].sectors), len(til[0][1].sectors)

    W, H = 780, 600
    s = Svg(W, H, f"One warp of transpose_tiled_source_mapping is 16 x 2 threads: it touches 16 rows of in and "
                  f"16 rows of out, {n_src} sectors on each side; a warp of the padded tile touches one row, "
                  f"{n_til} sectors")
    lane_fill = ("blue", "orange")   # threadIdx.y = 0, 1 of the tutorial's warp

    def matrix(x: float, y: float, cells: list[tuple[int, int]], shown_rows: int, shown_cols: int,
               cell: float, fills: list[str]) -> None:
        """The top-left corner of a matrix; each lane's element filled; the sectors it touches
        outlined, their unused floats shaded as moved, not used."""
        s.rect(x, y, shown_cols * cell, shown_rows * cell, fill="muted", stroke="none", width=0)
        sectors = {(r, c // per_sector) for r, c in cells}
        for r, piece in sectors:
            s.rect(x + piece * per_sector * cell, y + r * cell, per_sector * cell, cell, fill="light_red",
                   stroke="none", width=0)
        for (r, c), fill in zip(cells, fills):
            s.rect(x + c * cell, y + r * cell, cell, cell, fill=fill, stroke="none", width=0)
        _grid(s, x, y, shown_cols, shown_rows, cell, cell)
        for r, piece in sectors:
            s.rect(x + piece * per_sector * cell, y + r * cell, per_sector * cell, cell, fill="none",
                   stroke="ink", width=1.8)

    def verdict(x: float, y: float, answer: models.SectorAnswer) -> None:
        k = len(answer.sectors)
        s.text(x, y, f"{k} sectors", size=13, bold=True, fill="red" if k > 4 else "blue")
        s.text(x, y + 16, f"{k * SECTOR} bytes moved for {32 * FLOAT} used", size=11)

    # (a) the tutorial's mapping
    s.text(20, 24, "(a) transpose_tiled_source_mapping: warp 0 of block (0, 0)", size=15, bold=True, mono=False)
    s.text(20, 43, f"A {n} \u00d7 {n} block; a warp is 32 threads counted along x first: {n} \u00d7 {32 // n}. "
                   f"threadIdx.x picks the row on both sides.", size=12)
    cell, top = 11, 92
    tx0 = 30
    s.text(tx0, top - 10, "the block's threads", size=12, bold=True)
    for ty in range(n):
        for tx in range(n):
            lane = ty * n + tx
            fill = lane_fill[ty] if lane < 32 else "paper"
            s.rect(tx0 + tx * cell * 0.75, top + ty * cell * 0.75, cell * 0.75, cell * 0.75, fill=fill,
                   stroke="grid", width=0.5)
    bs = n * cell * 0.75
    s.rect(tx0, top, bs, bs, fill="none", stroke="ink", width=1.2)
    s.text(tx0 + bs / 2, top + bs + 16, "threadIdx.x \u2192", size=11, anchor="middle")
    s.text(tx0 + bs + 6, top + 8, "y = 0: lanes 0\u201315", size=11, fill="blue")
    s.text(tx0 + bs + 6, top + 22, "y = 1: lanes 16\u201331", size=11, fill="orange")
    s.text(tx0, top + bs + 34, "warp 0 = the first 32", size=11)
    s.text(tx0, top + bs + 49, "threads: 16 \u00d7 2", size=11)

    fills = [lane_fill[lane // n] for lane in range(32)]
    shown = 16
    for j, ((cells, answer), label, code) in enumerate(zip(src, ("load from in", "store to out"),
                                                           ("in[threadIdx.x][threadIdx.y]",
                                                            "out[threadIdx.x][threadIdx.y]"))):
        x = 290 + j * 250
        s.text(x, top - 26, label, size=12, bold=True)
        s.text(x, top - 10, code, size=11, mono=True)
        matrix(x, top, cells, shown, shown, cell, fills)
        s.text(x + shown * cell + 6, top + cell - 2, "row 0", size=10)
        s.text(x + shown * cell + 6, top + shown * cell - 2, f"row {shown - 1}", size=10)
        verdict(x, top + shown * cell + 22, answer)
        s.text(x, top + shown * cell + 54, f"{shown} rows \u00d7 {2 * FLOAT} bytes: one sector each", size=11)

    # (b) the padded tile's warp
    y0 = 375
    s.line(20, y0 - 30, W - 20, y0 - 30, stroke="grid")
    tile = models.constant(MAIN, "kTile")
    s.text(20, y0, f"(b) transpose_tiled<{tile + 1}> (the padded tile): warp 0 of block (0, 0)", size=15, bold=True)
    s.text(20, y0 + 19, f"A {tile} \u00d7 {models.constant(MAIN, 'kRowsPerPass')} block: warp 0 is threadIdx.y = 0, "
                        f"threadIdx.x = 0\u2013{tile - 1}, and threadIdx.x picks the column on both sides.", size=12)
    cell_b, shown_rows = 10, 3
    for j, ((cells, answer), label, code) in enumerate(zip(til, ("load from in", "store to out"),
                                                           ("in[0][threadIdx.x]", "out[0][threadIdx.x]"))):
        x = 30 + j * 380
        yb = y0 + 62
        s.text(x, yb - 10, f"{label}: ", size=12, bold=True)
        s.text(x + 90, yb - 10, code, size=11, mono=True)
        matrix(x, yb, cells, shown_rows, tile, cell_b, ["blue"] * 32)
        verdict(x, yb + shown_rows * cell_b + 20, answer)

    # legend
    ly = H - 56
    s.rect(20, ly - 10, 12, 12, fill="blue", stroke="none", width=0)
    s.rect(34, ly - 10, 12, 12, fill="orange", stroke="none", width=0)
    s.text(52, ly, "a float a lane uses", size=11)
    s.rect(190, ly - 10, 12, 12, fill="light_red", stroke="none", width=0)
    s.text(208, ly, "moved, not used", size=11)
    s.rect(330, ly - 10, per_sector * 8, 12, fill="none", stroke="ink", width=1.8)
    s.text(330 + per_sector * 8 + 6, ly, f"one {SECTOR}-byte sector ({per_sector} floats of a row)", size=11)
    s.text(20, ly + 22, f"Drawn: the top-left corners of in ({rows:,} \u00d7 {cols:,}) and out. Sectors: lesson 01's "
                        "sector model on the lanes' byte addresses.", size=11, italic=True)
    s.text(20, ly + 38, f"A warp's 32 floats need at least {32 * FLOAT // SECTOR} sectors "
                        f"({32 * FLOAT} bytes).", size=11, italic=True)
    return s.to_string()


# reverse_in_block_static as main.cu writes it (spaces squeezed), in this order inside the kernel,
# and its launch: the lines barrier_race() reimplements.
REVERSE_KERNEL = "__global__ void reverse_in_block_static"
REVERSE_LINES = ("const int t = threadIdx.x;", "if (t < n) s[t] = d[t];", "__syncthreads();",
                 "if (t < n) d[t] = s[n - 1 - t];")
REVERSE_LAUNCH = ("reverse_in_block_static<<<1, n>>>(d, n);",
                  "launch_reverse_in_block_static(d.data(), kMaxStaticReverse);")
WARP = 32


def reverse_warps() -> dict:
    """The reversal's block as main.cu launches it (n = kMaxStaticReverse threads, one block):
    which s[] warp 0 stores and reads, and the warp that stores what warp 0 reads."""
    _require_in_order(REVERSE_KERNEL, REVERSE_LINES, "barrier_race")
    _require_lines(REVERSE_LAUNCH, "barrier_race")
    n = models.constant(MAIN, "kMaxStaticReverse")
    stores = list(range(WARP))                       # warp 0: thread t stores s[t] ...
    reads = [n - 1 - t for t in stores]              # ... and reads s[n - 1 - t]
    owners = {i // WARP for i in reads}              # thread i stores s[i]: the warps that store them
    if len(owners) != 1 or owners == {0}:
        raise models.ModelError(f"n = {n}: warp 0's reads are stored by warps {sorted(owners)}, "
                                "the figure draws one other warp")
    last = owners.pop()
    return {"n": n, "warps": -(-n // WARP), "last": last, "stores": stores, "reads": reads,
            "last_threads": (last * WARP, min(n, last * WARP + WARP) - 1)}


def barrier_race() -> str:
    """Two warps of reverse_in_block_static's block on a time line: (a) without the barrier, in an
    order the hardware may pick, warp 0 reads s[n-1..n-32] before the last warp has stored them;
    (b) with __syncthreads(), warp 0 waits at the barrier until every warp has stored."""
    r = reverse_warps()
    n, last = r["n"], r["last"]
    lo, hi = r["last_threads"]
    mine = f"s[{r['stores'][0]}..{r['stores'][-1]}]"          # what warp 0 stores
    theirs = f"s[{r['reads'][0]}..{r['reads'][-1]}]"          # what warp 0 reads, in its lanes' order
    back = f"s[{r['stores'][-1]}..{r['stores'][0]}]"          # what the last warp reads
    W = 780
    x0, slot, gap, box_h = 140, 150, 8, 36
    s = Svg(W, 540, f"Two warps of reverse_in_block_static, n = {n}: without the barrier warp 0 may read "
                    f"{theirs} before warp {last} has stored them and gets stale values; with __syncthreads() "
                    "every warp stores before any warp reads")
    s.text(20, 24, "reverse_in_block_static: thread t stores s[t], then reads s[n − 1 − t]", size=15, bold=True)
    s.text(20, 44, f"One block of n = {n} threads (the launch <<<1, n>>>, n = kMaxStaticReverse): "
                   f"{r['warps']} warps of {WARP}.", size=12)
    s.text(20, 60, f"Drawn: warp 0 and warp {last}, which stores what warp 0 reads. Time runs to the right.",
           size=12)

    def row_label(y: float, warp: int, first: int, last_t: int) -> None:
        s.text(20, y + 16, f"warp {warp}", size=12, bold=True)
        s.text(20, y + 31, f"threads {first}–{last_t}", size=11)

    def step(x: float, y: float, code: str, words: str, fill: str, stroke: str = "ink", w: float = slot) -> None:
        s.rect(x, y, w, box_h, fill=fill, stroke=stroke, width=1.5 if stroke != "ink" else 1, rx=3)
        s.text(x + w / 2, y + 15, code, size=11, anchor="middle", mono=True)
        s.text(x + w / 2, y + 30, words, size=11, anchor="middle")

    def idle(x: float, y: float, w: float, words: str, words_w: float = 0) -> None:
        """A stretch of time a warp does nothing; its words centred in the first words_w px."""
        s.rect(x, y, w, box_h, fill="muted", stroke="grid", dash="4 3", rx=3)
        s.text(x + (words_w or w) / 2, y + 23, words, size=11, anchor="middle", fill="#555555", italic=True)

    store, read = "s[t] = d[t];", "d[t] = s[n - 1 - t];"
    # (a) no barrier: warp 0 stores, then reads at once; the last warp has not run yet
    top = 96
    s.text(20, top, "(a) Without the barrier: one order the hardware may pick", size=13, bold=True)
    y0, y1 = top + 16, top + 16 + box_h + 18
    row_label(y0, 0, 0, WARP - 1)
    row_label(y1, last, lo, hi)
    step(x0, y0, store, f"stores {mine}", "light_blue")
    xr = x0 + slot + gap
    step(xr, y0, read, f"reads {theirs}", "light_red", stroke="red")
    idle(x0, y1, 2 * slot + gap, "not run yet", words_w=slot + gap)
    step(x0 + 2 * (slot + gap), y1, store, f"stores s[{lo}..{hi}]", "light_blue")
    step(x0 + 3 * (slot + gap), y1, read, f"reads {back}", "light_green")
    s.line(xr, y0 + box_h, xr, y1 + box_h + 4, stroke="red", width=1.5, dash="4 3")
    ty = y1 + box_h + 28
    s.text(20, ty, f"Warp 0 reads {theirs} before warp {last} stores them: it gets whatever s held before.",
           size=12, fill="red", bold=True)
    s.text(20, ty + 16, f"Warp {last} reads {back} after warp 0 stored them, and gets the right values.", size=12)

    # (b) the barrier: warp 0 waits until every warp has stored
    top = ty + 58
    s.line(20, top - 26, W - 20, top - 26, stroke="grid")
    s.text(20, top, "(b) With __syncthreads() between them: every store comes before any read", size=13, bold=True)
    y0, y1 = top + 30, top + 30 + box_h + 18
    row_label(y0, 0, 0, WARP - 1)
    row_label(y1, last, lo, hi)
    step(x0, y0, store, f"stores {mine}", "light_blue")
    xb = x0 + 2 * slot + gap                          # the barrier: after the last warp's store
    idle(x0 + slot, y0, xb - x0 - slot, "waits at the barrier")
    idle(x0, y1, slot + gap, "not run yet")
    step(x0 + slot + gap, y1, store, f"stores s[{lo}..{hi}]", "light_blue", w=xb - x0 - slot - gap)
    s.rect(xb, y0 - 8, gap, y1 + box_h + 16 - y0, fill="green", stroke="none", width=0)
    s.text(xb + gap / 2, y0 - 12, "__syncthreads()", size=11, anchor="middle", mono=True, fill="green")
    step(xb + gap, y0, read, f"reads {theirs}", "light_green")
    step(xb + gap, y1, read, f"reads {back}", "light_green")
    ty = y1 + box_h + 26
    s.text(20, ty, f"No warp passes the barrier until all {r['warps']} have stored: warp 0 reads what warp {last} "
                   "stored.", size=12, fill="green", bold=True)

    # the order is the hardware's
    fy = ty + 34
    s.text(20, fy, f"The order of the warps is up to the hardware: warp {last} may as well store before warp 0 "
                   "reads, and then warp 0 gets the right values.", size=11, italic=True)
    s.text(20, fy + 16, "The wrong order is possible, not certain; compute-sanitizer --tool racecheck reports the "
                        "hazard either way.", size=11, italic=True)
    s.height = fy + 32
    return s.to_string()


FIGURES = {"barrier_race.svg": barrier_race, "tile_trip.svg": tile_trip, "bank_pitch.svg": bank_pitch,
           "float4_tile.svg": float4_tile, "source_warp.svg": source_warp}
