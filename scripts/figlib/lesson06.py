"""Lesson 06's idea figures: which bank each lane of a warp reads, and how many wavefronts that takes.

Every lane-to-bank line, every wavefront a lane is served in and every count printed in a figure
comes from lesson 06's bank model (`bank_model()` and `probe_table()` in its main.cu, called
through figlib.models on the lesson's own named patterns):
- stride2_wavefronts.svg: `w4_stride2` (s[lane * 2], 4 bytes): two lanes per bank, two wavefronts,
  coloured by the wavefront the model serves each lane in;
- quarter_warps.svg: `w16_stride1` (a float4 per lane): four quarter-warps, one wavefront each;
- swizzle.svg: `UnpaddedTile` against `SwizzledTile` (their at(), cell by cell): where two columns
  of the tile land, and the model's count for a warp reading each;
- pairing.svg: `w16_lanes_mod8` against `w16_lanes_div8`: the same kind of float4 load, served 8
  lanes at a time (4 wavefronts) or, when neighbouring lanes share an address, 16 at a time (2).

One figure shows measured numbers, only as the course printed them on an H100
(results/h100/lessons.txt, read through scripts/quote_results.py, never typed in):
- shared_cap.svg: each layout's measured GB/s beside the shared-memory cap the program printed for
  it, and the copy as a line. The figure checks each printed cap against shared_cap_gbs()'s formula
  on the printed SMs and clock, and each printed drain against the bank model.
"""
from __future__ import annotations

import math
import re

import quote_results
from figlib import models
from figlib.svg import Svg

LESSON = "06_bank_conflicts"

WIDTH = 720
LEFT = 96           # room for the row labels
RIGHT = 24
BANKS = 32
CELL = (WIDTH - LEFT - RIGHT) / BANKS   # one lane or bank box
# One colour and one dash style per wavefront (so the figure reads without colour too).
WAVE_STYLE = [("blue", None), ("orange", "5,3"), ("green", "2,2"), ("purple", "8,3")]


def x_of(i: int) -> float:
    """Centre of box i (lane or bank) in a row of 32."""
    return LEFT + CELL * (i + 0.5)


def boxes(s: Svg, y: float, label: str, fills: list[str], h: float = 18, numbers: bool = True) -> None:
    """A row of 32 numbered boxes with a label on the left."""
    s.text(LEFT - 8, y + h / 2 + 4, label, size=12, anchor="end", bold=True)
    for i, fill in enumerate(fills):
        s.rect(LEFT + CELL * i + 1, y, CELL - 2, h, fill=fill, stroke="grid")
        if numbers:
            s.text(x_of(i), y + h / 2 + 3.5, str(i), size=9, anchor="middle")


def lanes_to_banks(s: Svg, y_lanes: float, y_banks: float, a: models.BankAnswer) -> None:
    """One row of lanes, one row of banks, a line from each lane to each bank it reads, styled by
    the wavefront the model serves it in."""
    used = {b for b in a.bank if b >= 0}
    boxes(s, y_lanes, "lanes", ["muted"] * BANKS)
    boxes(s, y_banks, "banks", ["light_blue" if b in used else "paper" for b in range(BANKS)])
    many = a.wavefronts > len(WAVE_STYLE)  # too many to tell apart: one style, and the count in words
    for lane in range(BANKS):
        if a.bank[lane] < 0:
            continue
        stroke, dash = ("red", None) if many else WAVE_STYLE[a.wavefront[lane]]
        s.line(x_of(lane), y_lanes + 18, x_of(a.bank[lane]), y_banks, stroke=stroke, width=1.4, dash=dash)


def stride2_wavefronts() -> str:
    a = models.bank_pattern("w4_stride2")
    words = [addr // 4 for addr in a.address]
    stride = words[1]
    # The two lanes that ask bank 0, and the lane distance between them, from the model.
    in_bank0 = [lane for lane in range(BANKS) if a.bank[lane] == 0]
    assert len(in_bank0) == 2 and a.wavefronts == 2, "w4_stride2: expected two lanes per bank, two wavefronts"
    gap = in_bank0[1] - in_bank0[0]
    s = Svg(WIDTH, 310, f"s[lane * {stride}]: lanes l and l + {gap} ask the same bank for different words, "
                        "so the warp needs two wavefronts")
    s.text(WIDTH / 2, 24, f"s[lane * {stride}]: lanes l and l + {gap} ask the same bank for different words",
           size=14, anchor="middle", bold=True)
    lanes_to_banks(s, 50, 200, a)
    s.text(x_of(0) - 4, 238, f"bank 0: word {words[in_bank0[0]]} (lane {in_bank0[0]}) "
                             f"and word {words[in_bank0[1]]} (lane {in_bank0[1]})", size=12)
    y = 272
    ordinal = ["first", "second", "third", "fourth"]
    for k in range(a.wavefronts):
        stroke, dash = WAVE_STYLE[k]
        first = min(l for l in range(BANKS) if a.wavefront[l] == k)
        last = max(l for l in range(BANKS) if a.wavefront[l] == k)
        yk = y + 20 * k
        s.line(LEFT, yk - 4, LEFT + 34, yk - 4, stroke=stroke, width=2, dash=dash)
        s.text(LEFT + 42, yk, f"lanes {first}–{last}: served in the {ordinal[k]} wavefront", size=12)
    return s.to_string()


def quarter_warps() -> str:
    a = models.bank_pattern("w16_stride1")
    lanes_per_part = BANKS // a.parts
    band = 96
    s = Svg(WIDTH, 84 + band * a.parts + 20, f"A 16-byte load s4[lane]: the warp is served as {a.parts} quarter-warps; "
                                              f"each quarter's {lanes_per_part} lanes cover all 32 banks in one wavefront")
    s.text(WIDTH / 2, 24, "float4 s4[lane] (pattern w16_stride1): 16 bytes per lane = 4 banks per lane",
           size=14, anchor="middle", bold=True)
    s.text(WIDTH / 2, 44, f"A wavefront moves 128 bytes, one word per bank: {lanes_per_part} lanes of 16 bytes "
                          f"fill it, so the warp goes in {a.parts} parts", size=12, anchor="middle")
    for part in range(a.parts):
        y = 64 + part * band
        lanes = range(part * lanes_per_part, (part + 1) * lanes_per_part)
        wave = a.wavefront[lanes[0]]
        stroke, dash = WAVE_STYLE[wave % len(WAVE_STYLE)]
        s.text(LEFT - 8, y + 13, f"lanes {lanes[0]}–{lanes[-1]}", size=12, anchor="end", bold=True)
        for lane in lanes:
            first = a.bank[lane]
            span = a.width // 4
            x0 = LEFT + CELL * first + 2
            s.rect(x0, y, CELL * span - 4, 18, fill="muted", stroke="ink")
            s.text(x0 + (CELL * span - 4) / 2, y + 13, f"lane {lane}", size=10, anchor="middle")
            for b in range(first, first + span):
                s.line(x0 + (CELL * span - 4) / 2, y + 18, x_of(b), y + 44, stroke=stroke, width=1.2, dash=dash)
        fills = ["paper"] * BANKS
        for lane in lanes:
            for b in range(a.bank[lane], a.bank[lane] + a.width // 4):
                fills[b % BANKS] = "light_blue"
        boxes(s, y + 44, f"wavefront {wave + 1}", fills, h=16)
    y = 64 + a.parts * band + 8
    s.text(WIDTH / 2, y, f"The model: {a.parts} parts × 1 wavefront = {a.wavefronts} wavefronts, "
                         f"the fewest possible ({a.ideal}) for {32 * a.width} bytes", size=13, anchor="middle", bold=True)
    return s.to_string()


def swizzle() -> str:
    """Two 32 x 32 tiles as shared memory holds them (row r of words, bank across): where the
    elements of columns 0 and 5 sit, unpadded and XOR-swizzled, and the model's wavefronts."""
    tile = models.constant("lessons/06_bank_conflicts/main.cu", "kTile")
    cols = [(0, "orange", "light_orange"), (5, "blue", "light_blue")]
    cell, top, gap = 9.0, 78, 56
    grid_w = cell * tile
    x0s = [LEFT - 40, LEFT - 40 + grid_w + gap]
    panels = [("unpadded", f"float tile[{tile}][{tile}]", "tile[r][c] in word 32·r + c"),
              ("swizzled", f"XOR-swizzled tile[{tile}][{tile}]", "tile[r][c] in word 32·r + (c ^ r)")]
    counts = {(layout, c): models.bank_tile_column(layout, c).wavefronts for layout, _, _ in panels for c, _, _ in cols}
    s = Svg(WIDTH, top + grid_w + 120, f"Columns 0 and 5 of a {tile} x {tile} float tile: unpadded, each column "
                                       f"sits in one bank ({counts[('unpadded', 0)]} wavefronts to read it); "
                                       f"swizzled, row r stores column c at c ^ r, so each column touches all 32 banks "
                                       f"({counts[('swizzled', 0)]} wavefront)")
    for x0, (layout, title, how) in zip(x0s, panels):
        s.text(x0, 22, title, size=14, bold=True)
        s.text(x0, 40, how, size=12)
        s.text(x0 + grid_w / 2, top - 20, "bank = word mod 32 →", size=11, anchor="middle")
        for b in range(0, tile, 8):
            s.text(x0 + cell * (b + 0.5), top - 4, str(b), size=9, anchor="middle")
        where = {}
        for c, stroke, fill in cols:
            for r in range(tile):
                word = models.tile_word(layout, r, c)
                assert word // tile == r, "a 32-word row stays in its row"
                where[(r, word % BANKS)] = (stroke, fill)
        for r in range(tile):
            for b in range(BANKS):
                stroke, fill = where.get((r, b), ("grid", "paper"))
                s.rect(x0 + cell * b, top + cell * r, cell, cell, fill=fill if fill == "paper" else stroke, stroke="grid")
        for r in range(0, tile, 8):
            s.text(x0 - 4, top + cell * (r + 0.5) + 3, f"r {r}" if r == 0 else str(r), size=9, anchor="end")
        y = top + grid_w + 22
        for c, stroke, _ in cols:
            n = counts[(layout, c)]
            s.rect(x0, y - 9, 10, 10, fill=stroke, stroke="grid")
            s.text(x0 + 16, y, f"column {c}: a warp reads it in {n} wavefront{'s' if n > 1 else ''}", size=12)
            y += 18
    s.text(LEFT - 40, top + grid_w + 78, "Within a row, c ^ r only permutes the 32 columns; down a column it takes "
                                         "32 different values:", size=12)
    s.text(LEFT - 40, top + grid_w + 96, "one element per bank, as with padding, and no spare words.", size=12, bold=True)
    return s.to_string()


PART_FILLS = ["light_blue", "light_orange", "light_green", "light_purple"]


def pairing() -> str:
    """w16_lanes_mod8 against w16_lanes_div8: which lanes the model serves together (its parts),
    which float4 each lane reads, and the banks each part's wavefront covers."""
    width = WIDTH + 60
    left, cell, h = 204, (width - 204 - RIGHT) / BANKS, 18
    panels = [("w16_lanes_mod8", "lane l reads float4 number l mod 8"),
              ("w16_lanes_div8", "lane l reads float4 number l / 8 (rounded down)")]
    answers = [models.bank_pattern(name) for name, _ in panels]
    height = 40 + sum(112 + (h + 8) * a.parts for a in answers)
    mod8, div8 = answers
    s = Svg(width, height, f"A float4 load: lanes l, l + 8, l + 16, l + 24 on one float4 (w16_lanes_mod8) "
                           f"go 8 lanes at a time, {mod8.wavefronts} wavefronts; lanes in groups of 8 on one "
                           f"float4 (w16_lanes_div8) pair up and go 16 at a time, {div8.wavefronts} wavefronts")

    def row(y: float, label: str, fills: list[str], texts: list[str]) -> None:
        s.text(left - 8, y + h / 2 + 4, label, size=12, anchor="end", bold=True)
        for i in range(BANKS):
            s.rect(left + cell * i + 1, y, cell - 2, h, fill=fills[i], stroke="grid")
            if texts[i]:
                s.text(left + cell * (i + 0.5), y + h / 2 + 3.5, texts[i], size=9, anchor="middle")

    y = 24
    for (name, how), a in zip(panels, answers):
        lanes_per_part = BANKS // a.parts
        part_of = [lane // lanes_per_part for lane in range(BANKS)]
        s.text(RIGHT, y, f"{name}: {how}", size=14, bold=True)
        row(y + 12, "lane", [PART_FILLS[part_of[l] % 4] for l in range(BANKS)], [str(l) for l in range(BANKS)])
        row(y + 12 + h, "reads float4", [PART_FILLS[part_of[l] % 4] for l in range(BANKS)],
            [str(a.address[l] // a.width) for l in range(BANKS)])
        y += 12 + 2 * h + 14
        s.text(left - 8, y + 4, "banks →", size=11, anchor="end")
        for b in range(0, BANKS, 4):
            s.text(left + cell * (b + 0.5), y + 4, str(b), size=9, anchor="middle")
        y += 10
        for part in range(a.parts):
            lanes = range(part * lanes_per_part, (part + 1) * lanes_per_part)
            fills = ["paper"] * BANKS
            for lane in lanes:
                for k in range(a.width // 4):
                    fills[(a.address[lane] // 4 + k) % BANKS] = PART_FILLS[part % 4]
            waves = sorted({a.wavefront[lane] + 1 for lane in lanes})
            row(y, f"wavefront {'+'.join(map(str, waves))}: lanes {lanes[0]}–{lanes[-1]}", fills, [""] * BANKS)
            y += h + 8
        if a.parts == 4:
            why = (f"No lane reads what lane n ^ 1 or n ^ 2 reads: the load goes {lanes_per_part} lanes at a time "
                   f"({lanes_per_part} × 16 bytes = 128 bytes),")
            then = (f"one wavefront each: {a.wavefronts} wavefronts, though lanes 8–31 only repeat "
                    "the data of lanes 0–7.")
        else:
            why = (f"Lane n reads what lane n ^ 1 reads: a pair needs one copy of its 16 bytes, so the load "
                   f"goes {lanes_per_part} lanes at a time,")
            then = f"one wavefront each: {a.wavefronts} wavefronts. (Stores never pair: as a store it goes 8 at a time.)"
        s.text(RIGHT, y + 10, why, size=12)
        s.text(RIGHT, y + 26, then, size=12, bold=True)
        y += 66
    return s.to_string()


RUN, SECTION = "h100", "06_bank_conflicts"
CAP_LAYOUTS = [("tiled 32x32 unpadded", "unpadded"), ("tiled 32x33 padded", "padded"),
               ("tiled 32x32 xor-swizzled", "swizzled")]
COPY = "cudaMemcpy device-to-device"


def shared_cap() -> str:
    """Per layout: the measured GB/s (the timing table) and the shared-memory cap (the cap table),
    both as results/h100/lessons.txt prints them, with the copy's GB/s as a line."""
    src = quote_results.Sources(models.ROOT)
    file = f"{RUN}/lessons.txt"
    after = "== each transpose's shared accesses"
    clock_line = src.rows(file, SECTION, ["one 128-byte wavefront per SM per clock;"], after=after)[0]
    m = re.search(r"(\d+) SMs at ([\d.]+) GHz", clock_line)
    assert m, f"results/{file}: no 'N SMs at X GHz' in '{clock_line.strip()}'"
    sms, ghz = int(m.group(1)), float(m.group(2))
    copy = src.rate(RUN, "06", COPY)
    rows = []
    for kernel, layout in CAP_LAYOUTS:
        line = src.rows(file, SECTION, [kernel], after=after)[0]
        fill, drain, cap = line.strip()[len(kernel):].split()
        fill, drain = int(fill), int(drain)
        # The cap as shared_cap_gbs() computes it, from the printed inputs (the clock is printed
        # rounded to 0.01 GHz, so allow that much).
        model_cap = 2 * 128 * sms * ghz / (fill + drain)
        assert abs(model_cap - float(cap)) <= float(cap) * 0.005 / ghz, (kernel, cap, model_cap)
        assert drain == models.bank_tile_column(layout, 0).wavefronts, (kernel, drain)
        rows.append((kernel, fill, drain, cap, src.rate(RUN, "06", kernel)))
    width, left, right, top, band = 720, 176, 36, 92, 74
    top_gbs = math.ceil(copy.value * 1.2 / 500) * 500   # the axis: a little beyond the copy
    scale = (width - left - right) / top_gbs
    x = lambda gbs: left + min(gbs, top_gbs) * scale
    bottom = top + band * len(rows)
    s = Svg(width, bottom + 112, "Each layout's measured GB/s on an H100 beside its shared-memory cap, with the copy "
                                 "as a line: only the unpadded tile's cap is below the copy, and only that kernel is slow")
    s.text(width / 2, 24, "8192 x 8192 transpose on an H100: measured GB/s against the shared-memory cap",
           size=14, anchor="middle", bold=True)
    s.rect(left, 38, 14, 10, fill="blue", stroke="blue")
    s.text(left + 20, 47, "measured GB/s", size=12)
    s.rect(left + 150, 38, 14, 10, fill="light_orange", stroke="orange")
    s.text(left + 170, 47, "cap from shared memory (fill + drain wavefronts)", size=12)
    for g in range(0, top_gbs + 1, 500):
        s.line(x(g), top - 8, x(g), bottom, stroke="grid", width=0.6)
        s.text(x(g), bottom + 16, str(g), size=10, anchor="middle")
    s.text(left + (width - left - right) / 2, bottom + 34, "GB/s, bytes read + written", size=11, anchor="middle")
    for i, (kernel, fill, drain, cap, rate) in enumerate(rows):
        y = top + band * i
        s.text(left - 8, y + 16, kernel.replace("tiled ", "tile "), size=12, anchor="end", bold=True)
        s.text(left - 8, y + 32, f"{fill} + {drain} wavefronts", size=11, anchor="end")
        over = float(cap) > top_gbs
        s.rect(left, y + 4, x(float(cap)) - left, 20, fill="light_orange", stroke="orange")
        if over:   # off the scale: a break at the axis end, and the printed value
            s.path(f"M{x(top_gbs) - 10},{y + 2} l6,12 l-6,12", stroke="ink", width=1.2)
            s.text(left + 8, y + 19, f"cap {cap} GB/s, off the scale →", size=11)
        else:
            s.text(x(float(cap)) + 6, y + 19, f"cap {cap}", size=11)
        s.rect(left, y + 28, x(rate.value) - left, 20, fill="blue", stroke="blue")
        s.text(x(rate.value) - 6, y + 42, rate.text, size=11, anchor="end", fill="paper", bold=True)
    s.line(x(copy.value), top - 14, x(copy.value), bottom + 2, stroke="red", width=2, dash="6,3")
    s.text(x(copy.value), top - 18, f"copy {copy.text}", size=11, anchor="middle", fill="red", bold=True)
    s.text(24, bottom + 62, "Unpadded, the cap is below the copy: shared memory is the limit and padding pays.",
           size=12, bold=True)
    s.text(24, bottom + 80, "Padded or swizzled, the cap is far above it: both run near the copy.", size=12)
    s.text(24, bottom + 98, f"Caps and rates as results/{RUN}/lessons.txt prints them; each cap = 256 bytes × "
                            f"{sms} SMs × {ghz:.2f} GHz / (fill + drain).", size=11)
    return s.to_string()


FIGURES = {
    "stride2_wavefronts.svg": stride2_wavefronts,
    "swizzle.svg": swizzle,
    "quarter_warps.svg": quarter_warps,
    "pairing.svg": pairing,
    "shared_cap.svg": shared_cap,
}
