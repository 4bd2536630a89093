"""Lesson 03's idea figures: what a block may ask for, how many blocks an SM then holds, and one
dynamic buffer carved into three arrays.

smem_per_block.svg: the shared memory each launch of the lesson asks for (every tile edge of
    kTileSizes and --tile 256, sized as transpose_smem_bytes(); the reversal at its default n)
    against the two per-block limits: 48 KiB for every kernel (kDefaultPerBlock in main.cu) and
    the opt-in limit.
carveout_blocks.svg: blocks per SM of transpose_dynamic_tile for tiles 64 and 128 under the
    carveout hints the lesson tries: the hint rounded up to a size the SM supports, each block
    costing its tile plus the reserved KiB, and the thread limit (transpose_block()).
record_layout.svg: record_layout(kRecordThreads), the lesson's order (largest alignment first),
    against chars first for an odd count, where the floats and doubles start misaligned.
rows_in_flight.svg: lesson 01's schematic timeline of loads in flight, drawn for this lesson's two
    kernels: transpose_dynamic_tile_plain (its rolled loop: one load, the shared store that waits
    for it, the next row) against transpose_dynamic_tile (kRowsInFlight loads, then the stores).

The tile sizes, thread shapes and the record layout are computed here exactly as main.cu
computes them (the functions are named); the per-SM and per-block limits are not constants of the
code (the lesson reads them from the GPU at run time), so they are the documented limits of
compute capability 9.0 (H100, H200), which the figures name as such.
"""
from __future__ import annotations

import re

from figlib import models
from figlib.lesson01 import in_flight_timeline
from figlib.svg import Svg

LESSON = "03_dynamic_shared"
SRC = f"lessons/{LESSON}/main.cu"
KIB = 1024

# Compute capability 9.0 (H100, H200), CUDA C++ Programming Guide: the lesson reads these from the
# GPU at run time (its device report prints them), so they are stated here, not read from code.
CC90 = {
    "smem_per_sm": 228 * KIB,         # the most shared memory one SM can be configured to
    "optin_per_block": 227 * KIB,     # cudaDevAttrMaxSharedMemoryPerBlockOptin
    "reserved_per_block": 1 * KIB,    # cudaDevAttrReservedSharedMemoryPerBlock
    "threads_per_sm": 2048,
    "blocks_per_sm": 32,
    "carveout_sizes_kib": [0, 8, 16, 32, 64, 100, 132, 164, 196, 228],
}


def source() -> str:
    return models.source_text(SRC)


def tile_sizes() -> list[int]:
    """kTileSizes of main.cu (the tiles timed by default)."""
    m = re.search(r"constexpr int kTileSizes\[\] = \{([\d,\s]+)\};", source())
    if not m:
        raise models.ModelError(f"{SRC}: no 'constexpr int kTileSizes[] = {{...}};'")
    return [int(v) for v in m.group(1).split(",")]


def default_per_block() -> int:
    """kDefaultPerBlock of main.cu: the shared memory every kernel may have without opting in."""
    m = re.search(r"constexpr std::size_t kDefaultPerBlock = (\d+) \* (\d+);", source())
    if not m:
        raise models.ModelError(f"{SRC}: no 'constexpr std::size_t kDefaultPerBlock = A * B;'")
    return int(m.group(1)) * int(m.group(2))


def transpose_smem_bytes(tile: int) -> int:
    """main.cu's transpose_smem_bytes(): a tile x (tile + 1) floats."""
    return tile * (tile + 1) * 4


def transpose_threads(tile: int) -> int:
    """main.cu's transpose_block(): tile x max(1, min(tile, 256 / tile)) threads."""
    return tile * max(1, min(tile, 256 // tile))


def configured(hint_pct: int, block_bytes: int) -> int:
    """The shared memory an SM is configured to under a carveout hint: the hint (percent of the
    largest size) rounded up to a supported size, and at least the smallest size that holds one block."""
    sizes = [k * KIB for k in CC90["carveout_sizes_kib"]]
    want = hint_pct * CC90["smem_per_sm"] / 100
    size = min(s for s in sizes if s >= want)
    return max(size, min(s for s in sizes if s >= block_bytes))


def blocks_per_sm(hint_pct: int, tile: int) -> tuple[int, int, str]:
    """(configured bytes, blocks per SM, what limits them)."""
    per_block = transpose_smem_bytes(tile) + CC90["reserved_per_block"]
    config = configured(hint_pct, per_block)
    by_smem = config // per_block
    by_threads = CC90["threads_per_sm"] // transpose_threads(tile)
    n = min(by_smem, by_threads, CC90["blocks_per_sm"])
    return config, n, "shared memory" if by_smem <= by_threads else "threads"


def record_offsets(order: list[tuple[str, int]], n: int, align: bool) -> list[tuple[str, int, int, int]]:
    """(name, size, offset, bytes) of n elements of each type in this order; align: main.cu's
    align_up to the type's alignment (= its size for these types), as record_layout() does."""
    out, at = [], 0
    for name, size in order:
        if align:
            at = (at + size - 1) // size * size
        out.append((name, size, at, n * size))
        at += n * size
    return out


def kib(b: float) -> str:
    return f"{b / KIB:g} KiB" if b % KIB == 0 else f"{b / KIB:.1f} KiB"


def smem_per_block() -> str:
    default = default_per_block()
    optin = CC90["optin_per_block"]
    reverse_n = optin // 4  # the reversal's default n: as many floats as one block may hold
    rows = [(f"tile {t}", transpose_smem_bytes(t)) for t in tile_sizes() + [256]]
    rows.append((f"reversal, n = {reverse_n:,} floats", reverse_n * 4))
    W, H = 760, 80 + 34 * len(rows) + 70
    s = Svg(W, H, "Shared memory each launch of lesson 03 asks for per block, against the 48 KiB default "
                  "and the opt-in limit")
    x0, label_w = 20, 190
    bx = x0 + label_w
    scale = (W - bx - 40) / (260 * KIB)
    s.text(x0, 24, "Dynamic shared memory one block asks for (third launch parameter)", size=15, bold=True)
    s.text(x0, 43, "the transpose's tile = tile \u00d7 (tile + 1) floats; the reversal = n floats", size=12)
    top = 62
    # the zones
    y_end = top + 34 * len(rows)
    s.rect(bx, top, default * scale, y_end - top, fill="light_green", stroke="none", width=0)
    s.rect(bx + default * scale, top, (optin - default) * scale, y_end - top, fill="light_orange", stroke="none", width=0)
    s.rect(bx + optin * scale, top, (260 * KIB - optin) * scale, y_end - top, fill="light_red", stroke="none", width=0)
    for b in (default, optin):
        s.line(bx + b * scale, top - 4, bx + b * scale, y_end + 4, stroke="ink", width=1.5, dash="5,3")
    for i, (label, b) in enumerate(rows):
        y = top + 8 + 34 * i
        colour = "green" if b <= default else ("orange" if b <= optin else "red")
        s.text(bx - 8, y + 14, label, size=12, anchor="end")
        s.rect(bx, y, max(b * scale, 1.5), 20, fill=colour, stroke="ink", width=0.6)
        text = f"{b:,} B" if b < KIB else f"{b:,} B = {kib(b)}"
        tx = bx + b * scale + 6
        if tx + 150 > W:
            s.text(bx + b * scale - 6, y + 14, text, size=11, anchor="end",
                   fill="paper" if colour == "red" else "ink", bold=True)
        else:
            s.rect(tx - 2, y + 3, 5.9 * len(text) + 6, 15, fill="paper", stroke="none", width=0)
            s.text(tx, y + 14, text, size=11)
    ly = y_end + 22
    s.text(bx + default * scale, ly, f"{kib(default)} (kDefaultPerBlock)", size=11, anchor="middle")
    s.text(bx + optin * scale, ly, f"{kib(optin)} opt-in limit", size=11, anchor="middle")
    ly += 24
    items = [("light_green", "launches as it is"),
             ("light_orange", "needs the opt-in (cudaFuncSetAttribute)"),
             ("light_red", "more than the GPU has: refused before launch")]
    x = x0
    for fill, text in items:
        s.rect(x, ly - 11, 14, 14, fill=fill, stroke="grid")
        s.text(x + 20, ly, text, size=11)
        x += 20 + 6.4 * len(text) + 22
    s.text(x0, ly + 20, "Per-block limits of compute capability 9.0 (H100, H200); the lesson prints its GPU's "
                        "in the device report.", size=11, italic=True)
    return s.to_string()


def carveout_blocks() -> str:
    hints = [0, 25, 50, 100]   # the hints main.cu tries, besides the default
    tiles = [t for t in tile_sizes() if t >= 64]
    W, H = 780, 540
    s = Svg(W, H, "Blocks per SM of transpose_dynamic_tile under each carveout hint, for tiles 64 and 128")
    s.text(20, 24, "Blocks of transpose_dynamic_tile one SM holds, by carveout hint", size=15, bold=True)
    s.text(20, 43, f"hint = percent of {kib(CC90['smem_per_sm'])}, rounded up to a size the SM supports; "
                   f"each block costs its tile + {kib(CC90['reserved_per_block'])} reserved", size=12)
    panel_w, bar_w = 370, 340
    scale = bar_w / CC90["smem_per_sm"]
    for p, tile in enumerate(tiles):
        px = 20 + p * (panel_w + 10)
        per_block = transpose_smem_bytes(tile) + CC90["reserved_per_block"]
        threads = transpose_threads(tile)
        s.text(px, 76, f"tile {tile}: {transpose_smem_bytes(tile):,} + {CC90['reserved_per_block']:,} B a block, "
                       f"{threads} threads", size=13, bold=True)
        for r, hint in enumerate(hints):
            y = 96 + r * 84
            config, n, limit = blocks_per_sm(hint, tile)
            asked = hint * CC90["smem_per_sm"] / 100
            s.text(px, y + 12, f"hint {hint}%: asks {kib(asked)}, gets {kib(config)}*", size=12)
            s.text(px + bar_w, y + 12, f"{n} block{'s' if n != 1 else ''}", size=13, bold=True, anchor="end")
            # the whole SM's maximum, the configured part, the blocks in it
            s.rect(px, y + 20, bar_w, 24, fill="paper", stroke="grid", dash="3,2")
            s.rect(px, y + 20, config * scale, 24, fill="muted", stroke="ink")
            for b in range(n):
                bx = px + b * per_block * scale
                s.rect(bx, y + 20, transpose_smem_bytes(tile) * scale, 24, fill="sky", stroke="ink", width=0.6)
                s.rect(bx + transpose_smem_bytes(tile) * scale, y + 20, CC90["reserved_per_block"] * scale, 24,
                       fill="ink", stroke="ink", width=0.6)
            why = (f"limited by threads: {n} \u00d7 {threads} = {n * threads:,}" if limit == "threads"
                   else "limited by shared memory")
            if config > configured(hint, 0):
                why += "; one block always fits"
            s.text(px, y + 60, why, size=11, italic=True)
    ly = H - 74
    s.rect(20, ly - 11, 14, 14, fill="sky", stroke="ink", width=0.6)
    s.text(40, ly, "one block's tile", size=11)
    s.rect(160, ly - 11, 5, 14, fill="ink", stroke="ink")
    s.text(171, ly, "reserved per block", size=11)
    s.rect(310, ly - 11, 14, 14, fill="muted", stroke="ink")
    s.text(330, ly, "configured, unused", size=11)
    s.rect(460, ly - 11, 14, 14, fill="paper", stroke="grid", dash="3,2")
    s.text(480, ly, f"up to {kib(CC90['smem_per_sm'])}: left to the L1 cache", size=11)
    s.text(20, ly + 22, f"Limits of compute capability 9.0 (H100, H200): {kib(CC90['smem_per_sm'])} of shared "
                        f"memory and {CC90['threads_per_sm']:,} threads per SM;", size=11, italic=True)
    s.text(20, ly + 38, "the sizes its shared memory can be configured to: "
                        + ", ".join(str(k) for k in CC90["carveout_sizes_kib"]) + " KiB.", size=11, italic=True)
    s.text(20, ly + 54, "* Inferred, not measured: these sizes reproduce the blocks per SM the lesson prints; "
                        "nothing reads the size the driver chose.", size=11, italic=True)
    return s.to_string()


def record_layout() -> str:
    n = models.constant(SRC, "kRecordThreads")
    largest_first = [("double", 8), ("float", 4), ("char", 1)]
    chars_first = [("char", 1), ("float", 4), ("double", 8)]
    cases = [(f"record_layout({n}): largest alignment first, as main.cu carves it", largest_first, n, True),
             (f"the other order, {n - 1} records, no align_up: two arrays start misaligned", chars_first, n - 1, False)]
    W, H = 760, 320
    s = Svg(W, H, "One extern __shared__ buffer carved into a double, a float and a char array")
    s.text(20, 24, "One extern __shared__ buffer, three arrays: each must start at a multiple of its "
                   "type's size", size=14, bold=True)
    fills = {"double": "blue", "float": "sky", "char": "yellow"}
    x0, bar_w = 20, 700
    for c, (title, order, count, align) in enumerate(cases):
        parts = record_offsets(order, count, align)
        total = parts[-1][2] + parts[-1][3]
        scale = bar_w / (13 * n)  # both rows on one scale: 13 bytes per record
        y = 62 + c * 112
        s.text(x0, y, title, size=13, bold=True)
        s.text(x0 + total * scale, y, f"{total:,} bytes in all", size=12, anchor="end")
        ends: list[float] = []  # per line of labels under the bar: where its last label ends
        for name, size, at, nbytes in parts:
            ok = at % size == 0
            bx = x0 + at * scale
            s.rect(bx, y + 10, nbytes * scale, 28, fill=fills[name], stroke="ink")
            label = f"{count} {name}s"
            inside = nbytes * scale > 7.5 * len(label) + 10
            if inside:
                s.text(bx + nbytes * scale / 2, y + 29, label, size=12, anchor="middle",
                       fill="paper" if name == "double" else "ink", bold=True)
            mark = ("" if inside else label + " at ") + f"byte {at:,}"
            if not ok:
                mark += f": {at:,} mod {size} = {at % size}, misaligned"
            s.line(bx, y + 6, bx, y + 44, stroke="ink" if ok else "red", width=2 if not ok else 1)
            width = 6.6 * len(mark)
            tx = bx + nbytes * scale - width if bx + width > x0 + bar_w + 30 else bx + 2
            line = next(i for i in range(len(ends) + 1) if i == len(ends) or ends[i] < tx)
            ends[line:line + 1] = [tx + width + 8]
            s.text(tx, y + 56 + 14 * line, mark, size=11, fill="ink" if ok else "red", bold=not ok)
    s.text(x0, H - 36, "extern __shared__ __align__(16) unsigned char smem[];   // one buffer, bytes set at launch",
           size=11, mono=True)
    s.text(x0, H - 18, "double* sa = reinterpret_cast<double*>(smem + l.doubles);   // and so on for floats, chars",
           size=11, mono=True)
    return s.to_string()


def rows_in_flight() -> str:
    rows = models.constant(SRC, "kRowsInFlight")
    return in_flight_timeline(("transpose_dynamic_tile_plain", "1 load, then its", "shared store"),
                              ("transpose_dynamic_tile", f"{rows} loads into v[k],", "then the shared stores"),
                              rows, "v", "a shared store", "one thread of each kernel, load phase",
                              next_load="the same thread's next row")


FIGURES = {"smem_per_block.svg": smem_per_block, "carveout_blocks.svg": carveout_blocks,
           "record_layout.svg": record_layout, "rows_in_flight.svg": rows_in_flight}
