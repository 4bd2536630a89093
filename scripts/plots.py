#!/usr/bin/env python3
"""plots.py — draw the course's charts from the results CSV that the lessons write.

    scripts/plots.py                                   # results/h200/results.csv -> results/h200/plots/
    scripts/plots.py --csv build-gpu/gpu-check/results.csv --out /tmp/plots

The default CSV is the course's committed one, found from where this script is (so it works from
any folder); --csv and --out paths are taken relative to the current folder, as usual.

The CSV is what `<lesson> --csv FILE` appends (ResultsTable::append_csv in common/host.cpp):

    lesson,gpu,problem,kernel,ms,rate,unit,percent_of_ceiling,check

one line per row of a lesson's results table. Rows in a row with the same lesson, GPU and problem
form one table; the table's ceiling (cudaMemcpy, CUB, cuBLAS, measured in the same run) is its row
at exactly 100 %, and every other row's percent_of_ceiling is already relative to it. Charts:

    <lesson>.png                    every step of the lesson (or of a companion, which the CSV names
                                    like a lesson: 02_shared_transpose_opencl) as a bar of "% of the
                                    ceiling measured in the same run", the ceiling line at 100 %
    06_bank_conflicts_strides.png   lesson 06's stride microbenchmark, if the CSV has it: measured
                                    slowdown against the bank model's conflict degree
    <lesson>_sweep.png              a size sweep, if the CSV has one (tables whose problem text says
                                    "sweep", or tables for three or more other M x N x K sizes): the
                                    rate of each kernel beside cuBLAS. Since lesson 05's split, the
                                    sweep is its companion's (05_tiled_matmul_going_further --sweep:
                                    05_tiled_matmul_going_further_sweep.png); CSVs from before the
                                    split hold it as lesson 05's (05_tiled_matmul_sweep.png)
    course.png                      every lesson's ladder in one figure

Every number drawn is one the CSV holds. If a lesson's table was appended more than once (several
runs into one file), the last one is drawn; a lesson's ladder is the first problem it wrote a table
with a ceiling for (its default run). The GPU and CUDA version in each caption come from the
CSV's gpu column ("NVIDIA H200 (sm_90, CUDA 13.0)"), or from summary.txt beside the CSV if that
column lacks the CUDA version.

Needs Python 3 and matplotlib (Debian/Ubuntu: apt install python3-matplotlib; or pip install matplotlib).
Without matplotlib it says so in one line, naming the Python it ran under, and exits with 1.
"""

import argparse
import csv
import decimal
import math
import os
import re
import sys
import textwrap

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt
except ImportError as e:  # said in main(), after --help has had its chance
    MATPLOTLIB_MISSING = str(e)
else:
    MATPLOTLIB_MISSING = None

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CSV = os.path.join(REPO, "results", "h200", "results.csv")

LESSON_COLOURS = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#e377c2", "#bcbd22"]
FAIL_COLOUR = "#d62728"  # a wrong output: red and hatched, whatever the lesson's colour
CEILING_COLOUR = "#7f7f7f"
LABEL_BOX = {"facecolor": "white", "edgecolor": "none", "pad": 0.5}  # a label stays readable over the 100 % line
SIZE = re.compile(r"(\d+)\s*[x×]\s*(\d+)\s*[x×]\s*(\d+)")
STRIDE_ROW = re.compile(r"s\[lane \* (\d+)\].*model degree (\d+)")


# ---------------------------------------------------------------- reading


class Table:
    """One results table of one lesson run: rows in CSV order."""

    def __init__(self, lesson, gpu, problem, unit):
        self.lesson, self.gpu, self.problem, self.unit = lesson, gpu, problem, unit
        self.rows = []

    def ceiling(self):
        """The ceiling row (at exactly 100 % of itself), or None."""
        return next((r for r in self.rows if r["pct"] is not None and abs(r["pct"] - 100.0) < 1e-9), None)

    def is_sweep(self):
        return "sweep" in self.problem.lower()

    def is_strides(self):
        return self.ceiling() is None and any(STRIDE_ROW.search(r["kernel"]) for r in self.rows)


def read_tables(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        need = {"lesson", "gpu", "problem", "kernel", "ms", "rate", "unit", "percent_of_ceiling", "check"}
        if not reader.fieldnames or not need <= set(reader.fieldnames):
            raise SystemExit(f"plots.py: {path} is not a lesson results CSV (columns: {', '.join(sorted(need))})")
        tables = []
        for line in reader:
            pct = float(line["percent_of_ceiling"])
            row = {"kernel": line["kernel"], "ms": float(line["ms"]), "rate": float(line["rate"]),
                   "pct": pct if pct >= 0 else None, "check": line["check"]}
            key = (line["lesson"], line["gpu"], line["problem"], line["unit"])
            t = tables[-1] if tables else None
            # A new table starts where the key changes, or where a kernel repeats (the next run).
            if t is None or (t.lesson, t.gpu, t.problem, t.unit) != key or any(r["kernel"] == row["kernel"] for r in t.rows):
                t = Table(*key)
                tables.append(t)
            t.rows.append(row)
    return tables


def lessons_in(tables):
    """Lesson names in the order they first appear."""
    seen = []
    for t in tables:
        if t.lesson not in seen:
            seen.append(t.lesson)
    return seen


def ladder_of(tables, lesson):
    """The lesson's ladder: the first problem it wrote a table with a ceiling for (its default run),
    and of that problem the last table (the latest run, if several were appended)."""
    candidates = [t for t in tables if t.lesson == lesson and t.ceiling() is not None and not t.is_sweep()]
    if not candidates:
        return None
    return [t for t in candidates if t.problem == candidates[0].problem][-1]


def sweeps_of(tables, lesson, ladder):
    """Tables of a size sweep: problem text that says "sweep", or else, where the lesson wrote
    tables for three or more M x N x K sizes besides its ladder, those tables."""
    marked = [t for t in tables if t.lesson == lesson and t.is_sweep()]
    if marked:
        return marked
    others = [t for t in tables if t.lesson == lesson and t.problem != ladder.problem and SIZE.search(t.problem)]
    return others if len({SIZE.search(t.problem).groups() for t in others}) >= 3 else []


def gpu_caption(gpu, summary_path):
    """'NVIDIA H200 (sm_90, CUDA 13.0)', with the CUDA version from summary.txt if the CSV lacks it."""
    if re.search(r"CUDA \d+\.\d+", gpu):
        return gpu
    try:
        with open(summary_path) as f:
            found = re.search(r"CUDA (\d+\.\d+)", f.read())
    except OSError:
        found = None
    return f"{gpu}, CUDA {found.group(1)}" if found else f"{gpu}, CUDA version not recorded"


def lesson_title(lesson):
    number, _, name = lesson.partition("_")
    return f"Lesson {number} · {name.replace('_', ' ')}"


def rate_text(rate, unit):
    digits = 0 if rate >= 100 else 1 if rate >= 10 else 2
    return f"{rate:.{digits}f} {unit}"


def pct_text(pct):
    # Rounded as the lessons' printf rounds the unrounded ratio: the CSV's 103.05 came from
    # 103.050..., which the lesson printed as 103.1%, while the float 103.05 lies just below it.
    places = decimal.Decimal("0.01") if pct < 1 else decimal.Decimal("0.1")  # 0.03 % is not 0.0 %
    return f"{decimal.Decimal(repr(pct)).quantize(places, rounding=decimal.ROUND_HALF_UP)}%"


def save(fig, out, name, written):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110, metadata={"Software": None})  # no version stamp: the same CSV, the same file
    plt.close(fig)
    written.append(path)


def label_room(ends, labels, fontsize, axes_inches=7.8):
    """An x limit that leaves room for each label after its bar (about 0.6 em per character)."""
    need = [100.0 * 1.08]
    for end, label in zip(ends, labels):
        share = min(0.8, len(label) * 0.6 * fontsize / 72 / axes_inches)  # of the axes width
        need.append(end / (1 - share) * 1.02)
    return max(need)


def footer(fig, text):
    fig.text(0.01, 0.005, text, fontsize=8, color="#444444", ha="left", va="bottom")


# ---------------------------------------------------------------- charts


def bar_label(row, unit, is_ceiling):
    text = f"{pct_text(row['pct'])}  ({rate_text(row['rate'], unit)})"
    if is_ceiling:
        text += "  ceiling"
    check = row["check"]
    if not (check.startswith("ok") or check.startswith("-")):  # FAIL, or a result with no error bound
        text += f"  check: {check}"
    return text


def plot_ladder(table, colour, caption, source, out, written):
    rows = table.rows
    ceiling = table.ceiling()
    fig_h = 1.9 + 0.42 * len(rows)
    fig, ax = plt.subplots(figsize=(11, fig_h))
    y = list(range(len(rows)))[::-1]  # first row on top, as the lesson prints it
    pcts = [r["pct"] for r in rows]
    colours = [CEILING_COLOUR if r is ceiling else (FAIL_COLOUR if r["check"].startswith("FAIL") else colour) for r in rows]
    bars = ax.barh(y, pcts, color=colours, height=0.65)
    for r, b in zip(rows, bars):
        if r["check"].startswith("FAIL"):
            b.set_hatch("//")
    ax.set_yticks(y)
    ax.set_yticklabels([r["kernel"] for r in rows], fontsize=9)
    ax.axvline(100, color="black", linestyle="--", linewidth=1)
    labels = [bar_label(r, table.unit, r is ceiling) for r in rows]
    ax.set_xlim(0, label_room([max(p, 100.0) if r is ceiling else p for p, r in zip(pcts, rows)], labels, 8.5))
    for r, yy, text in zip(rows, y, labels):
        ax.text(r["pct"] + ax.get_xlim()[1] * 0.006, yy, text, va="center", fontsize=8.5, bbox=LABEL_BOX)
    ax.set_xlabel("% of the ceiling measured in the same run (dashed line: 100 %)")
    fig.suptitle(f"{lesson_title(table.lesson)}: each step as % of {ceiling['kernel']}", fontsize=12, x=0.01,
                 ha="left")
    ax.set_title(textwrap.shorten(table.problem, 150), fontsize=8.5, color="#444444", loc="left")
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    footer(fig, f"{caption} · drawn by scripts/plots.py from {source}")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, out, f"{table.lesson}.png", written)


def plot_strides(table, caption, source, out, written):
    """Measured slowdown (time / time at stride 1) against the model's conflict degree."""
    points = {}  # degree -> [(stride, slowdown)]
    for r in table.rows:
        m = STRIDE_ROW.search(r["kernel"])
        if m:
            points.setdefault(int(m.group(2)), []).append((int(m.group(1)), r["rate"]))
    degrees = sorted(points)
    fig, ax = plt.subplots(figsize=(8.5, 6))
    lo, hi = 0.8, max(max(degrees), max(s for v in points.values() for _, s in v)) * 1.35
    ax.plot([lo, hi], [lo, hi], color="#999999", linestyle="--", linewidth=1, label="the model: slowdown = degree")
    for d in degrees:
        ax.scatter([d] * len(points[d]), [s for _, s in points[d]], s=60, color="#17becf", edgecolor="black", zorder=3)
        strides = ", ".join("0 (broadcast)" if st == 0 else str(st) for st, _ in points[d])
        measured = ", ".join(f"{s:.2f}×" for _, s in points[d])
        right = d <= 2  # labels right of the low points, left of the high ones: all stay inside
        ax.annotate(f"stride {strides}: {measured}", (d, points[d][0][1]), textcoords="offset points",
                    xytext=(10 if right else -10, -3 if right else 4), ha="left" if right else "right", fontsize=8.5)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ticks = [2**k for k in range(0, int(math.log2(hi)) + 1)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.set_yticks(ticks)
    ax.set_yticklabels([f"{t}×" for t in ticks])
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("the bank model's conflict degree (wavefronts per warp load)")
    ax.set_ylabel("measured time / time at stride 1")
    ax.set_title(f"{lesson_title(table.lesson)}: every lane loads s[lane * stride]", fontsize=12, loc="left")
    ax.legend(loc="upper left", fontsize=9, frameon=False)
    ax.grid(True, which="major", color="#eeeeee")
    footer(fig, f"{caption} · drawn by scripts/plots.py from {source}")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, out, f"{table.lesson}_strides.png", written)


def sweep_points(tables):
    """{kernel: {size: rate}} and the sizes in order, from tables whose problem says "sweep"."""
    series, sizes = {}, []
    for t in tables:
        for r in t.rows:
            m, kernel = SIZE.search(t.problem), r["kernel"]
            if not m:  # one table for all sizes: the size is in the kernel column ("cuBLAS 512 x 512 x 512")
                m = SIZE.search(kernel)
                kernel = SIZE.sub("", kernel, count=1).strip(" ,:")
            if not m:
                continue
            size = tuple(int(g) for g in m.groups())
            series.setdefault(kernel, {})[size] = r["rate"]
            if size not in sizes:
                sizes.append(size)
    squares = sorted(s for s in sizes if s[0] == s[1] == s[2])
    return series, squares + [s for s in sizes if s not in squares]


def plot_sweep(lesson, tables, caption, source, out, written):
    series, sizes = sweep_points(tables)
    if not series:
        return
    unit = tables[0].unit
    fig, ax = plt.subplots(figsize=(11, 6))
    x = list(range(len(sizes)))
    colours = iter(LESSON_COLOURS * 3)
    square = [s[0] == s[1] == s[2] for s in sizes]
    for kernel, by_size in series.items():
        library = "cublas" in kernel.lower()
        style = {"marker": "o", "linewidth": 2.6 if library else 1.6, "zorder": 3 if library else 2,
                 "color": "black" if library else next(colours)}
        label = kernel
        for group in (True, False):  # a line through the square sizes; the other shapes stand apart
            xs = [i for i, s in enumerate(sizes) if s in by_size and square[i] == group]
            if xs:
                ax.plot(xs, [by_size[sizes[i]] for i in xs], label=label, linestyle="-" if group else "none", **style)
                label = None  # one legend entry per kernel
    if any(square) and not all(square):
        ax.axvline(square.index(False) - 0.5, color="#bbbbbb", linewidth=1)
    ax.set_xticks(x)
    ax.set_xticklabels(["%d³" % s[0] if s[0] == s[1] == s[2] else "%d×%d×%d" % s for s in sizes], rotation=30,
                       ha="right", fontsize=9)
    ax.set_xlabel("M × N × K")
    ax.set_ylabel(unit)
    ax.set_ylim(bottom=0)
    ax.set_title(f"{lesson_title(lesson)}: size sweep, each kernel beside cuBLAS", fontsize=12, loc="left")
    ax.legend(fontsize=8.5, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(True, color="#eeeeee")
    footer(fig, f"{caption} · drawn by scripts/plots.py from {source}")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, out, f"{lesson}_sweep.png", written)


def plot_course(ladders, caption, source, out, written):
    """Every lesson's steps (ceilings left out: each is the dashed line) in one figure."""
    entries = []  # (y, label, pct, colour, is_header)
    y = 0.0
    for i, t in enumerate(ladders):
        ceiling = t.ceiling()
        colour = LESSON_COLOURS[i % len(LESSON_COLOURS)]
        header = f"{lesson_title(t.lesson)} — 100 % = {ceiling['kernel']}, {rate_text(ceiling['rate'], t.unit)}"
        entries.append((y, header, None, colour, True))
        y -= 1
        for r in t.rows:
            if r is not ceiling:
                entries.append((y, r["kernel"], r["pct"], FAIL_COLOUR if r["check"].startswith("FAIL") else colour, False))
                y -= 1
        y -= 0.6  # a gap between lessons
    bars = [e for e in entries if not e[4]]
    top = max(110.0, max(e[2] for e in bars))
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.3 * len(entries)))
    ax.barh([e[0] for e in bars], [e[2] for e in bars], color=[e[3] for e in bars], height=0.72)
    for yy, label, pct, colour, is_header in entries:
        if is_header:
            ax.text(0, yy, label, fontsize=9.5, fontweight="bold", color=colour, va="center")
        else:
            ax.text(pct + top * 0.01, yy, pct_text(pct), va="center", fontsize=8, bbox=LABEL_BOX)
    ax.set_yticks([e[0] for e in bars])
    ax.set_yticklabels([e[1] for e in bars], fontsize=8.5)
    ax.axvline(100, color="black", linestyle="--", linewidth=1)
    ax.set_xlim(0, top * 1.1)
    ax.set_ylim(y + 0.9, 0.7)
    ax.set_xlabel("% of the ceiling measured in the same run (dashed line: 100 %)")
    ax.set_title("The course's ladder: every step of every lesson against its lesson's ceiling", fontsize=12, loc="left")
    ax.spines[["top", "right"]].set_visible(False)
    footer(fig, f"{caption} · drawn by scripts/plots.py from {source}")
    fig.tight_layout(rect=(0, 0.015, 1, 1))
    save(fig, out, "course.png", written)


# ---------------------------------------------------------------- main


def main(argv):
    parser = argparse.ArgumentParser(description="Draw the course's charts from a lesson results CSV.")
    parser.add_argument("--csv", default=DEFAULT_CSV, help="the CSV (default: the course's %(default)s)")
    parser.add_argument("--out", default=None, help="folder for the PNGs (default: plots/ beside the CSV)")
    parser.add_argument("--summary", default=None,
                        help="where to find the CUDA version if the CSV lacks it (default: summary.txt beside the CSV)")
    args = parser.parse_args(argv)
    if MATPLOTLIB_MISSING:
        exe = sys.executable or "python3"
        raise SystemExit(
            f"plots.py: matplotlib is missing from {exe}, the Python running this script ({MATPLOTLIB_MISSING}): "
            f"install it ({exe} -m pip install matplotlib; Debian/Ubuntu: apt install python3-matplotlib), or run "
            "PYTHON scripts/plots.py with a PYTHON that has it (CMake's configure names one: 'Plots check: PYTHON has matplotlib')")
    if not os.path.isfile(args.csv):
        parser.error(f"no CSV at {args.csv} (write one with a lesson's --csv FILE)")
    out = args.out or os.path.join(os.path.dirname(args.csv) or ".", "plots")
    summary = args.summary or os.path.join(os.path.dirname(args.csv) or ".", "summary.txt")
    os.makedirs(out, exist_ok=True)

    tables = read_tables(args.csv)
    source = args.csv
    written, ladders = [], []
    for i, lesson in enumerate(lessons_in(tables)):
        ladder = ladder_of(tables, lesson)
        if ladder is None:
            print(f"plots.py: {lesson} has no table with a ceiling row; no chart for it", file=sys.stderr)
            continue
        caption = gpu_caption(ladder.gpu, summary)
        ladders.append(ladder)
        plot_ladder(ladder, LESSON_COLOURS[i % len(LESSON_COLOURS)], caption, source, out, written)
        strides = [t for t in tables if t.lesson == lesson and t.is_strides()]
        if strides:
            plot_strides(strides[-1], caption, source, out, written)
        sweeps = sweeps_of(tables, lesson, ladder)
        if sweeps:
            plot_sweep(lesson, sweeps, caption, source, out, written)
    if not ladders:
        raise SystemExit(f"plots.py: no lesson table with a ceiling in {args.csv}")
    plot_course(ladders, gpu_caption(ladders[0].gpu, summary), source, out, written)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
