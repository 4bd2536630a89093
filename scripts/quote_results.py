#!/usr/bin/env python3
"""Writes every measured figure the READMEs quote from the committed runs in results/.

    scripts/quote_results.py            rewrite every figure and block from results/
    scripts/quote_results.py --check    change nothing; print a diff and exit 1 where a README
                                        disagrees with what it would write
    scripts/quote_results.py --list     print each marker, its file and what it resolves to (a named
                                        one as NAME = EXPRESSION -> figure)
    scripts/quote_results.py --untraced list the figures (a number with a decimal point and a unit, or
                                        a percentage) that no marker traces yet; changes nothing
    scripts/quote_results.py --untraced-fails   the same list, and exit 1 if it is not empty (CTest
                                        readme.untraced)

A figure sits between two HTML comments (invisible on GitHub and on the course site); the first
says where it comes from:

    the tiled kernel reaches <!-- q: pct("h200", "02", "transpose_tiled (32x32, 32x8 thr)") -->38.0%<!-- /q -->

A figure that is not a measurement (a target asked for, a design constant of the code, arithmetic
on tile sizes) is said so, with the reason, so that --untraced does not count it; never a figure a
run printed or one computed from what a run printed (that takes a q: marker):

    short of the <!-- not measured: the target of the issue -->1.8x<!-- /not measured --> asked for

A whole block (a console table, a list) sits between begin and end markers, each on a line of its own:

    <!-- q-begin: text("h200/lessons.txt", "01_naive_transpose", "8192 x 8192 fp32 transpose") -->
    ...written by this script...
    <!-- q-end -->

A page that learners read (a lesson's README and notes, an exercise's README) names its figures
instead of spelling their expressions, so that its raw Markdown stays readable in an editor: the
marker says a name, and one block of definitions at the very end of the file, after a blank line,
says what each name is, one `name = expression` per line, closed by `-->` on a line of its own:

    the tiled kernel reaches <!-- q: tiled_pct -->38.0%<!-- /q --> of the copy's speed, in
    [lines <!-- q: span_tiled -->29–41<!-- /q -->](main.cu#L29-L41) ...

    <!-- q-names: where each figure above comes from (scripts/quote_results.py)
    tiled_pct = pct("h200", "02", "transpose_tiled (32x32, 32x8 thr)")
    span_tiled = span("lessons/02_shared_transpose/main.cu", r"__global__ void transpose_tiled\\(")
    -->

A name is lowercase letters, digits and _, starts with a letter and has at most 18 characters;
markers may share one (the same figure twice); a q-begin marker may say one too. A name that a
marker uses and the block does not define, one defined twice, one defined and never used, a line
of the block that is not a definition, and a block that does not end the file are errors, each
named with its file and line.

What a marker may say (a Python expression of these functions, numbers, strings, + - * /):
  pct(run, lesson, kernel, problem=None, d=1)   percent_of_ceiling of one row of results/RUN/results.csv: "38.0%"
  rate(run, lesson, kernel, problem=None, d=1)  its rate, without the unit: "1539.1"
  ms(run, lesson, kernel, problem=None, d=3)    its median time in ms: "0.349"
      run: a folder under results/ holding results.csv ("h200", "h100/reduction"); lesson: the CSV's
      lesson name, or "NN" for the lesson folder lessons/NN_*; kernel: the CSV's kernel name, exactly;
      problem: a piece of the problem column, needed where the lesson ran several problems.
      The CSV keeps 6 significant digits (1622.95) and the lesson's console table (results/RUN/*.txt)
      printed the same number to its own decimals (1622.9): a figure is rounded from whichever text
      decides it (to_decimals), so it always reads as the console printed it at the same decimals,
      never as a rounding of a rounding (1622.95 -> 1623.0).
  raw(file, section, label, col=1, nth=1)       the col-th number printed after `label` on the nth line
      that starts with `label` (after its indentation) in section `=== SECTION ===` of results/FILE
      (section None: the whole file), as printed: raw("h200/lessons.txt", "02_shared_transpose",
      "DRAM, random inside 2 MiB pieces", 4) -> "336.0"
  grep(file, regex, group=1, nth=1)             a group of the nth match of a regular expression in results/FILE
  total(file, regex)                            the sum of every group of every match (print it with f())
  count(file, regex)                            how many lines match
  ncu(file, section, kernel, metric, nth=1)     a metric of the nth profiled launch of `kernel` (the start of
      its name: "reduce_tree_shared<1>", "cub::DeviceReduceKernel") in an Nsight Compute log: ncu("h200/ncu.txt", "lessons/01_naive_transpose/ncu.sh", "copy_kernel", "dram__bytes_read.sum")
  span(file, first, last=None)                  line numbers "A–B" of a source file of the repository, from the
      first line matching regex `first` to the first line from there matching `last` (default: a line
      that is exactly "}"): the code to read, as [lines A–B](main.cu#LA-LB) in a lesson README (the
      link's anchor is written from the span too, for a named span as for a spelled one)
  lines(file, section, start, end=None)         block: the lines from the first line containing `start`
      (in that section) to the first line after it containing `end`, or to the next blank line;
      blocks add up with +, ["..."] is a line of its own
  rows(file, section, [label, ...], after=None)  block: for each label, the first line that starts with it
      (after the first line containing `after`)
  fence(lines)                                  those lines in a code fence; text(...) is fence(lines(...))
  A block's lines are indented like its q-begin marker (for a block inside a list item).
  summary(run, run, ...)                        block: a Markdown table, per lesson of the first run, of
      its ceiling and its slowest and fastest step, with the same rows of the other runs
  f(value, spec)                                a number formatted with a format spec: f(pct(...) - pct(...), ".1f");
      one figure to fixed decimals (".1f") is rounded as rounded() does, never from its float
  rounded(figure, d)                            a figure to d decimals from the texts it was printed with, not
      from the figure the README shows (39.4538% shows 39.5%; rounded to 0 decimals it is 39); a printed
      text on a half with nothing more precise rounds half up (18.15 -> 18.2)
  smallest(a, b, ...), largest(a, b, ...)       the smallest or largest of several figures, as printed
  shown(figure)                                 the figure as printed (87.8 for 87.8393%), so that a difference
      of two shown figures is the difference a reader computes: f(shown(pct(...)) - shown(pct(...)), ".1f")
A number from pct/rate/ms/raw/grep/ncu keeps its printed text; arithmetic on them gives a plain
number, which must be formatted with f(). Anything that cannot be traced (no such file, row,
section, label or metric; a row named twice) is an error: the figure is left as it was and the
script exits 1 after naming each one with its file and line.
"""
import argparse
import ast
import csv
import decimal
import difflib
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

INLINE = re.compile(r"<!-- q: (.+?) -->(.*?)<!-- /q -->")
NAMED = re.compile(r"[A-Za-z_]\w*")  # a marker that says only a name: its expression is in the q-names block
NAMES_BEGIN = re.compile(r"^<!-- q-names\b")
DEFINITION = re.compile(r"^(\S+) = (.+)$")
NAME = re.compile(r"[a-z][a-z0-9_]*")
NAME_MAX = 18
BEGIN = re.compile(r"^(\s*)<!-- q-begin: (.+) -->\s*$")
END = "<!-- q-end -->"
NOT_MEASURED = re.compile(r"<!-- not measured:(.*?)-->(.*?)<!-- /not measured -->")
NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".wt", ".deps"}


class QuoteError(Exception):
    pass


class Num:
    """A traced number: its value, its text as it will appear in the README, and every decimal text
    the results print it with (the CSV's and the console's), from which any other rounding of it
    is made: never from the float, never from a text already rounded for the README."""

    def __init__(self, value, text, printed=None):
        self.value, self.text = value, text
        self.printed = printed or [text.rstrip("%").replace(",", "")]

    def _v(other):
        return other.value if isinstance(other, Num) else other

    def __add__(self, o): return self.value + Num._v(o)
    def __radd__(self, o): return Num._v(o) + self.value
    def __sub__(self, o): return self.value - Num._v(o)
    def __rsub__(self, o): return Num._v(o) - self.value
    def __mul__(self, o): return self.value * Num._v(o)
    def __rmul__(self, o): return Num._v(o) * self.value
    def __truediv__(self, o): return self.value / Num._v(o)
    def __rtruediv__(self, o): return Num._v(o) / self.value
    def __neg__(self): return -self.value


def fixed(token, d):
    """A decimal text to d decimals, rounding half up as the text says (79.85 -> 79.9; formatting
    the float would give 79.8, its binary value being just below)."""
    q = decimal.Decimal(1).scaleb(-d)
    return str(decimal.Decimal(token.replace(",", "")).quantize(q, rounding=decimal.ROUND_HALF_UP))


def decimals(token):
    return max(0, -decimal.Decimal(token.replace(",", "")).as_tuple().exponent)


def on_half(token, d):
    """Whether a printed text lies exactly halfway between two figures of d decimals (1622.95 for
    d=1). The text is itself rounded (the CSV keeps 6 significant digits), so the number it was
    printed from may lie on either side of that half: the text cannot say which way d decimals go."""
    scaled = decimal.Decimal(token.replace(",", "")).scaleb(d)
    return decimals(token) > d and scaled - scaled.to_integral_value(rounding=decimal.ROUND_FLOOR) == decimal.Decimal("0.5")


def to_decimals(printed, d):
    """One figure to d decimals from the texts it was printed with (each the same number, rounded
    correctly to its own decimals): the first, most decimals first, that decides it. A text with
    exactly d decimals is the answer; one with more decides unless it lies on a half (on_half);
    one on a half leaves it to the next. So a figure from the CSV shows what the console printed
    for it (1622.95 in the CSV, 1622.9 on the console: 1622.9), never a rounding of a rounding.
    Where no text decides, the most precise one rounds half up (18.15 -> 18.2)."""
    ordered = sorted(printed, key=decimals, reverse=True)
    for token in ordered:
        if decimals(token) <= d or not on_half(token, d):
            return fixed(token, d)
    return fixed(ordered[0], d)


def agree(a, b):
    """Whether two printed texts can be roundings of one number (a console line of the same run)."""
    da, db = decimal.Decimal(a), decimal.Decimal(b)
    slack = decimal.Decimal(1).scaleb(-decimals(a)) / 2 + decimal.Decimal(1).scaleb(-decimals(b)) / 2
    return abs(da - db) <= slack


def to_float(token):
    return float(token.replace(",", ""))


class Sources:
    """Reads results/ lazily and answers the marker functions."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.results = os.path.join(self.root, "results")
        self.cache = {}
        self.tables = {}  # run -> its console's results tables (console())

    def _read(self, rel):
        path = os.path.normpath(os.path.join(self.results, rel))
        if not path.startswith(self.results + os.sep):
            raise QuoteError(f"{rel}: not a file under results/")
        if path not in self.cache:
            if not os.path.isfile(path):
                raise QuoteError(f"results/{rel} does not exist")
            with open(path, encoding="utf-8", errors="replace") as f:
                self.cache[path] = f.read()
        return self.cache[path]

    # ---------------------------------------------------------------- results.csv
    def _lesson_name(self, lesson):
        if re.fullmatch(r"\d\d", lesson):
            folders = sorted(d for d in os.listdir(os.path.join(self.root, "lessons")) if d.startswith(lesson + "_"))
            if len(folders) != 1:
                raise QuoteError(f"lesson {lesson}: {len(folders)} folders lessons/{lesson}_*")
            return folders[0]
        return lesson

    def row(self, run, lesson, kernel, problem=None):
        rel = f"{run}/results.csv"
        rows = list(csv.DictReader(self._read(rel).splitlines()))
        lesson = self._lesson_name(lesson)
        norm = lambda s: " ".join(s.split())
        in_lesson = [r for r in rows if r["lesson"] == lesson]
        if not in_lesson:
            raise QuoteError(f"results/{rel}: no rows of lesson {lesson} "
                             f"(lessons there: {', '.join(sorted(set(r['lesson'] for r in rows)))})")
        hits = [r for r in in_lesson if norm(r["kernel"]) == norm(kernel)
                and (problem is None or problem in r["problem"])]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            kernels = sorted(set(r["kernel"] for r in in_lesson))
            raise QuoteError(f"results/{rel}: lesson {lesson} has no row '{kernel}'"
                             + (f" in a problem containing '{problem}'" if problem else "")
                             + f" (its kernels: {'; '.join(kernels)})")
        raise QuoteError(f"results/{rel}: lesson {lesson}, '{kernel}' is in {len(hits)} rows: give problem= "
                         f"(one of: {'; '.join(r['problem'] for r in hits)})")

    def console(self, run, row):
        """What the lesson printed for this CSV row in the same run: {"ms", "rate", "percent_of_ceiling"}
        -> text, from its table in results/RUN/*.txt (section `=== LESSON ... ===`, the problem's line,
        the kernel's row); empty where no table prints it, or where what is printed disagrees with
        the CSV (another run's output) or with itself."""
        if run not in self.tables:
            self.tables[run] = {}
            folder = os.path.join(self.results, run)
            for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
                if name.endswith(".txt"):
                    self._tables(self._read(f"{run}/{name}"), self.tables[run])
        found = self.tables[run].get((row["lesson"], row["problem"], " ".join(row["kernel"].split())), [])
        if len(set(found)) != 1:
            return {}
        out = {k: v for k, v in zip(("ms", "rate", "percent_of_ceiling"), found[0]) if v != "-"}
        try:
            return out if all(agree(v, row[k]) for k, v in out.items()) else {}
        except decimal.InvalidOperation:
            return {}

    @staticmethod
    def _tables(text, into):
        """(lesson, problem, kernel) -> [(ms, rate, pct)] of every results table in a console log
        (ResultsTable::print in common/host.cpp: the problem's line, a header, a row per kernel)."""
        lessons, lines = [], text.split("\n")
        for i, line in enumerate(lines):
            head = re.match(r"^=== (.+) ===$", line.strip())
            if head:
                lessons = head.group(1).split()
                continue
            if not (i + 1 < len(lines) and re.match(r"^  kernel +ms +\S+ +% ceiling +check$", lines[i + 1])):
                continue
            for r in lines[i + 2:]:
                m = re.match(r"^  (.+?) {2,}(-?[0-9.]+) +(-?[0-9.]+) +(?:(-?[0-9.]+)%\*?|(-)) +\S.*$", r)
                if not m:
                    break
                for lesson in lessons:
                    into.setdefault((lesson, line, " ".join(m.group(1).split())), []).append(
                        (m.group(2), m.group(3), m.group(4) or m.group(5)))

    def figure(self, run, row, column, d):
        """A CSV column of a row to d decimals, as the lesson printed it where it did (to_decimals)."""
        printed = [row[column]] + [v for k, v in self.console(run, row).items() if k == column]
        return Num(float(row[column]), to_decimals(printed, d), printed)

    def pct(self, run, lesson, kernel, problem=None, d=1):
        n = self.figure(run, self.row(run, lesson, kernel, problem), "percent_of_ceiling", d)
        return Num(n.value, n.text + "%", n.printed)

    def rate(self, run, lesson, kernel, problem=None, d=1):
        return self.figure(run, self.row(run, lesson, kernel, problem), "rate", d)

    def ms(self, run, lesson, kernel, problem=None, d=3):
        return self.figure(run, self.row(run, lesson, kernel, problem), "ms", d)

    # ---------------------------------------------------------------- raw output
    def _section(self, rel, section):
        text = self._read(rel)
        if section is None:
            return text
        lines = text.split("\n")
        header = f"=== {section} ==="
        starts = [i for i, line in enumerate(lines) if line.strip() == header]
        if not starts:
            names = [line.strip()[4:-4] for line in lines if re.match(r"^=== .+ ===$", line.strip())]
            raise QuoteError(f"results/{rel}: no section '{header}' (sections: {'; '.join(names)})")
        out = []
        for line in lines[starts[0] + 1:]:
            if re.match(r"^=== .+ ===$", line.strip()):
                break
            out.append(line)
        return "\n".join(out)

    def raw(self, file, section, label, col=1, nth=1):
        lines = [line.strip() for line in self._section(file, section).split("\n")]
        hits = [line for line in lines if line.startswith(label)
                and (len(line) == len(label) or not line[len(label)].isalnum())]
        where = f"results/{file}" + (f", section {section}" if section else "")
        if len(hits) < nth:
            raise QuoteError(f"{where}: {len(hits)} lines start with '{label}', not {nth}")
        numbers = NUMBER.findall(hits[nth - 1][len(label):])
        if len(numbers) < col:
            raise QuoteError(f"{where}: line '{hits[nth - 1]}' has {len(numbers)} numbers after its label, not {col}")
        token = numbers[col - 1]
        return Num(to_float(token), token)

    def grep(self, file, regex, group=1, nth=1):
        matches = list(re.finditer(regex, self._read(file), re.M))
        if len(matches) < nth:
            raise QuoteError(f"results/{file}: {len(matches)} matches of /{regex}/, not {nth}")
        token = matches[nth - 1].group(group)
        try:
            return Num(to_float(token), token)
        except ValueError:
            raise QuoteError(f"results/{file}: /{regex}/ group {group} is '{token}', not a number")

    def total(self, file, regex):
        """The sum of every group of every match (a column of a log added up)."""
        matches = list(re.finditer(regex, self._read(file), re.M))
        if not matches:
            raise QuoteError(f"results/{file}: no match of /{regex}/")
        try:
            return sum(to_float(g) for m in matches for g in (m.groups() or (m.group(0),)))
        except ValueError:
            raise QuoteError(f"results/{file}: /{regex}/ matches something that is not a number")

    def count(self, file, regex):
        n = len(re.findall(regex, self._read(file), re.M))
        return Num(n, str(n))

    def ncu(self, file, section, kernel, metric, nth=1):
        token = self._ncu_row(file, section, kernel, metric, nth)[-1]
        return Num(to_float(token), token)

    def ncu_unit(self, file, section, kernel, metric, nth=1):
        """The unit Nsight Compute printed beside that metric ("Gbyte", "sector", "%"): for a script
        that must turn the figure into bytes (the idea figures), not a marker's figure."""
        row = self._ncu_row(file, section, kernel, metric, nth)
        return row[-2] if len(row) >= 3 else ""

    def _ncu_row(self, file, section, kernel, metric, nth):
        """The words of the metric's line in the nth profiled launch of `kernel`: name, unit, value."""
        lines = self._section(file, section).split("\n")
        launches = [i for i, line in enumerate(lines) if ", Context " in line
                    and re.match(r"^  (?:void )?" + re.escape(kernel) + r"(?![\w:])", line)]
        where = f"results/{file}" + (f", section {section}" if section else "")
        if len(launches) < nth:
            raise QuoteError(f"{where}: {len(launches)} profiled launches of {kernel}, not {nth}")
        for line in lines[launches[nth - 1] + 1:]:
            if re.match(r"^  \S", line):
                break  # the next launch
            parts = line.split()
            if parts and parts[0] == metric:
                return parts
        raise QuoteError(f"{where}: launch {nth} of {kernel} has no metric {metric}")

    def summary(self, *runs):
        """Block: per lesson of the first run, its ceiling and its slowest and fastest step (of the
        first problem it ran with a ceiling), beside the same rows of the other runs."""
        tables = [list(csv.DictReader(self._read(f"{run}/results.csv").splitlines())) for run in runs]
        heads = []
        for run, rows in zip(runs, tables):
            if not rows:
                raise QuoteError(f"results/{run}/results.csv has no rows")
            heads.append(rows[0]["gpu"])
        out = ["| lesson | step | " + " | ".join(heads) + " |", "| --- | --- |" + " --- |" * len(runs)]
        lessons = sorted(set(r["lesson"] for r in tables[0]))
        for lesson in lessons:
            # The first problem the lesson ran that has a ceiling (the first row at 100%: each lesson
            # times it first) and a step beside it; CPU rows are not steps.
            for problem in dict.fromkeys(r["problem"] for r in tables[0] if r["lesson"] == lesson):
                rows = [r for r in tables[0] if r["lesson"] == lesson and r["problem"] == problem
                        and not r["kernel"].startswith("CPU") and float(r["percent_of_ceiling"]) >= 0]
                ceiling = next((r for r in rows if float(r["percent_of_ceiling"]) == 100), None)
                steps = [r for r in rows if r is not ceiling]
                if ceiling is not None and steps:
                    break
            else:
                continue
            steps.sort(key=lambda r: float(r["percent_of_ceiling"]))
            picks = [("ceiling: " + ceiling["kernel"], ceiling)] + \
                ([(f"slowest: {steps[0]['kernel']}", steps[0]), (f"fastest: {steps[-1]['kernel']}", steps[-1])]
                 if len(steps) > 1 else [(f"step: {steps[0]['kernel']}", steps[0])])
            for n, (label, pick) in enumerate(picks):
                cells = []
                for run, rows_b in zip(runs, tables):
                    match = [r for r in rows_b if r["lesson"] == lesson and r["problem"] == problem
                             and r["kernel"] == pick["kernel"]]
                    if not match:
                        cells.append("not run")
                    elif pick is ceiling:
                        cells.append(f"{self.figure(run, match[0], 'rate', 1).text} {match[0]['unit']}")
                    else:
                        cells.append(f"{self.figure(run, match[0], 'percent_of_ceiling', 1).text}%")
                name = lesson if n == 0 else ""
                out.append(f"| {name} | {label.replace('|', '/')} | " + " | ".join(cells) + " |")
        return out

    def lines(self, file, section, start, end=None):
        """The lines from the first one containing `start` to the first one after it containing
        `end` (both kept), or, without `end`, to the line before the next blank one."""
        lines = self._section(file, section).split("\n")
        where = f"results/{file}" + (f", section {section}" if section else "")
        first = next((i for i, line in enumerate(lines) if start in line), None)
        if first is None:
            raise QuoteError(f"{where}: no line contains '{start}'")
        out = []
        for line in lines[first:]:
            if end is None and not line.strip():
                break
            out.append(line.rstrip())
            if end is not None and end in line:
                break
        else:
            if end is not None:
                raise QuoteError(f"{where}: no line contains '{end}' after '{start}'")
        return out

    def rows(self, file, section, labels, after=None):
        """Block: for each label, the first line (after the first line containing `after`, if
        given) that starts with it once indented."""
        lines = self._section(file, section).split("\n")
        where = f"results/{file}" + (f", section {section}" if section else "")
        if after is not None:
            first = next((i for i, line in enumerate(lines) if after in line), None)
            if first is None:
                raise QuoteError(f"{where}: no line contains '{after}'")
            lines = lines[first:]
        out = []
        for label in labels:
            hit = next((line for line in lines if line.strip().startswith(label)
                        and (len(line.strip()) == len(label) or not line.strip()[len(label)].isalnum())), None)
            if hit is None:
                raise QuoteError(f"{where}: no line starts with '{label}'" + (f" after '{after}'" if after else ""))
            out.append(hit.rstrip())
        return out

    def text(self, file, section, start, end=None):
        return fence(self.lines(file, section, start, end))

    def span(self, file, first, last=None):
        """The line numbers "A-B" in a source FILE of the repository (a lesson's main.cu) of the first
        line matching regex `first` and the first line from there matching `last` (default: the
        first line that is exactly "}", the end of a top-level function or struct)."""
        path = os.path.normpath(os.path.join(self.root, file))
        if not path.startswith(self.root + os.sep) or not os.path.isfile(path):
            raise QuoteError(f"{file}: not a file of the repository")
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        start = next((i for i, line in enumerate(lines) if re.search(first, line)), None)
        if start is None:
            raise QuoteError(f"{file}: no line matches '{first}'")
        end = next((i for i in range(start, len(lines))
                    if (re.search(last, lines[i]) if last else lines[i] == "}")), None)
        if end is None:
            raise QuoteError(f"{file}: no line from {start + 1} on matches '{last or '}'}'")
        return Num(start + 1, f"{start + 1}\u2013{end + 1}")


def fence(lines):
    if not isinstance(lines, list):
        raise QuoteError("fence() takes lines")
    return ["```"] + lines + ["```"]


def shown(value):
    """The number as the README shows it (87.8 for 87.8393%): differences of shown figures add up."""
    if not isinstance(value, Num):
        raise QuoteError("shown() takes a figure")
    return to_float(value.text.rstrip("%"))


def rounded(value, d):
    """A figure to d decimals from the texts it was printed with (to_decimals), not from the text
    the README shows: rounded(pct(...), 0) of 39.4537 is 39, though pct(...) shows 39.5%."""
    if not isinstance(value, Num):
        raise QuoteError("rounded() takes a figure")
    text = to_decimals(value.printed, d)
    return Num(float(text), text, value.printed)


def smallest(*figures):
    return min(figures, key=lambda x: x.value if isinstance(x, Num) else x)


def largest(*figures):
    return max(figures, key=lambda x: x.value if isinstance(x, Num) else x)


def f(value, spec):
    """A number formatted with a format spec. A figure (not arithmetic on figures) to fixed
    decimals (".1f", ",.1f") is rounded from its printed texts (to_decimals), never from its float,
    whose binary value may lie on the other side of a half (97.85 is 97.8499...)."""
    if isinstance(value, Num):
        fixed_spec = re.fullmatch(r",?\.(\d+)f", spec)
        if fixed_spec:
            text = format(decimal.Decimal(to_decimals(value.printed, int(fixed_spec.group(1)))), spec)
            return Num(value.value, text, value.printed)
        return Num(value.value, format(value.value, spec))
    return Num(value, format(value, spec))


def evaluate(expr, sources):
    """Evaluates a marker's expression: calls of the functions above, constants, + - * /."""
    funcs = {"pct": sources.pct, "rate": sources.rate, "ms": sources.ms, "raw": sources.raw,
             "grep": sources.grep, "total": sources.total, "count": sources.count, "ncu": sources.ncu, "text": sources.text, "lines": sources.lines, "rows": sources.rows, "fence": fence,
             "summary": sources.summary, "span": sources.span, "f": f, "shown": shown,
             "smallest": smallest, "largest": largest, "rounded": rounded}
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b}

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, type(None), bool)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            a, b = ev(node.left), ev(node.right)
            if isinstance(a, list) != isinstance(b, list):
                raise QuoteError(f"cannot combine lines and a number: {ast.unparse(node)}")
            return ops[type(node.op)](a.value if isinstance(a, Num) and isinstance(b, Num) else a, b)
        if isinstance(node, ast.List):
            return [ev(e) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in funcs:
            args = [ev(a) for a in node.args]
            kwargs = {k.arg: ev(k.value) for k in node.keywords}
            try:
                return funcs[node.func.id](*args, **kwargs)
            except TypeError as e:
                raise QuoteError(f"{node.func.id}(): {e}")
        raise QuoteError(f"not allowed in a marker: {ast.unparse(node)}")

    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise QuoteError(f"cannot parse '{expr}': {e.msg}")
    try:
        return ev(tree)
    except ZeroDivisionError:
        raise QuoteError(f"'{expr}' divides by zero")


def names_span(lines):
    """(first, last): the line indices of the file's q-names block, from its '<!-- q-names' line to
    its closing '-->' (last is None where it has none); None where the file has no such block."""
    first = next((i for i, line in enumerate(lines) if NAMES_BEGIN.match(line)), None)
    if first is None:
        return None
    return first, next((j for j in range(first + 1, len(lines)) if lines[j].strip() == "-->"), None)


def read_names(rel, lines, errors):
    """The file's named figures, {name: (expression, line number)}, and the indices of the lines of
    its q-names block; appends an error, as 'file:line: ...', for each way the block is malformed."""
    found = names_span(lines)
    if found is None:
        return {}, set()
    first, last = found
    usage = "one 'name = expression' per line, then '-->' on a line of its own"
    if "-->" in lines[first]:
        errors.append(f"{rel}:{first + 1}: '<!-- q-names' starts a block of lines: {usage}")
        return {}, {first}
    if last is None:
        errors.append(f"{rel}:{first + 1}: a '<!-- q-names' block without its closing '-->' line")
        last = len(lines) - 1
    if first > 0 and lines[first - 1].strip():
        errors.append(f"{rel}:{first + 1}: put a blank line before the q-names block (else it joins the paragraph above)")
    after = next((j for j in range(last + 1, len(lines)) if lines[j].strip()), None)
    if after is not None:
        errors.append(f"{rel}:{after + 1}: text after the q-names block, which must end the file "
                      "(one block per file, after everything a reader reads)")
    names = {}
    for j in range(first + 1, last):
        m = DEFINITION.match(lines[j])
        if not m:
            errors.append(f"{rel}:{j + 1}: not a definition in the q-names block: {usage}")
            continue
        name, expr = m.group(1), m.group(2).strip()
        if not NAME.fullmatch(name) or len(name) > NAME_MAX:
            errors.append(f"{rel}:{j + 1}: '{name}' is not a name: lowercase letters, digits and _, "
                          f"starting with a letter, at most {NAME_MAX} characters")
        elif name in names:
            errors.append(f"{rel}:{j + 1}: '{name}' is defined twice (first at line {names[name][1]})")
        else:
            names[name] = (expr, j + 1)
        if "--" in expr:
            errors.append(f"{rel}:{j + 1}: a definition that holds '--' (it would end the comment early, or "
                          "show it as text on GitHub); write each '-' of it as \\x2d")
    return names, set(range(first, last + 1))


def render_inline(expr, sources):
    value = evaluate(expr, sources)
    if isinstance(value, Num):
        return value.text
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise QuoteError(f"'{expr}' is a computed number: say how to print it with f(..., \".1f\")")
    raise QuoteError(f"'{expr}' is not a number")


# A span(...) marker inside a link to a source file: [lines <!-- q: span(...) -->A–B<!-- /q -->](main.cu#LA-LB).
# The link's anchor is written from the span, so that it opens the file at those lines on GitHub and
# cannot go stale when the code moves (--check compares it like any figure).
# A named marker whose definition is a span(...) works the same.
SPAN_LINK = re.compile(r"(<!-- q: (span\(.+?\)|[A-Za-z_]\w*) -->(\d+)(?:\u2013(\d+))?<!-- /q -->[^\[\]]*\]\()"
                       r"([^)\s#]+\.(?:cu|cuh|cpp|hpp|h|cl))(?:#[^)\s]*)?\)")


def anchor_spans(line, names=None):
    """LINE with each source link that holds a span(...) figure anchored at that span's lines
    (names: the file's named figures, {name: (expression, line)})."""
    def anchored(m):
        expr = m.group(2)
        if NAMED.fullmatch(expr):
            expr = (names or {}).get(expr, ("",))[0]
        if not expr.startswith("span("):
            return m.group(0)
        first, last = m.group(3), m.group(4)
        return "%s%s#L%s%s)" % (m.group(1), m.group(5), first, "-L" + last if last and last != first else "")
    return SPAN_LINK.sub(anchored, line)


def render_file(path, text, sources, errors, listing=None):
    """The text of one Markdown file with every marker filled in; appends errors as 'file:line: ...'."""
    rel = os.path.relpath(path, sources.root)
    lines = text.split("\n")
    names, block_lines = read_names(rel, lines, errors)
    used = set()

    def expression(said):
        """A marker's expression and how --list shows it: a name's definition, or what it says."""
        if not NAMED.fullmatch(said):
            return said, said
        used.add(said)
        if said not in names:
            raise QuoteError(f"'{said}' is not defined in this file's q-names block (at the end of the file)")
        return names[said][0], f"{said} = {names[said][0]}"

    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if i in block_lines:  # the definitions: left as they are
            out.append(line)
            i += 1
            continue
        m = BEGIN.match(line)
        if m:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == END), None)
            if end is None:
                errors.append(f"{rel}:{i + 1}: '<!-- q-begin: ... -->' without '{END}' after it")
                out.append(line)
                i += 1
                continue
            indent = m.group(1)
            try:
                expr, shown_as = expression(m.group(2))
                block = evaluate(expr, sources)
                if not isinstance(block, list) or not all(isinstance(b, str) for b in block):
                    raise QuoteError(f"'{expr}' is not a block (use text(...))")
                if listing is not None:
                    listing.append(f"{rel}:{i + 1}: {shown_as} -> {len(block)} lines")
                # A block inside a list item is indented like its begin marker.
                out += [line] + [(indent + b).rstrip() for b in block] + [lines[end]]
            except QuoteError as e:
                errors.append(f"{rel}:{i + 1}: {e}")
                out += lines[i:end + 1]
            i = end + 1
            continue
        if line.strip() == END:
            errors.append(f"{rel}:{i + 1}: '{END}' without a '<!-- q-begin: ... -->' before it")

        def fill(mm):
            try:
                expr, shown_as = expression(mm.group(1))
                new = render_inline(expr, sources)
                if listing is not None:
                    listing.append(f"{rel}:{i + 1}: {shown_as} -> {new}")
                return f"<!-- q: {mm.group(1)} -->{new}<!-- /q -->"
            except QuoteError as e:
                errors.append(f"{rel}:{i + 1}: {e}")
                return mm.group(0)
        out.append(anchor_spans(INLINE.sub(fill, line), names))
        if "<!-- q:" in INLINE.sub("", line) or "<!-- /q -->" in INLINE.sub("", line):
            errors.append(f"{rel}:{i + 1}: a '<!-- q: ... -->' marker without its '<!-- /q -->' on the same line")
        for mm in list(INLINE.finditer(line)) + list(NOT_MEASURED.finditer(line)):
            if "--" in mm.group(1):
                errors.append(f"{rel}:{i + 1}: a marker whose text holds '--': GitHub's Markdown (cmark-gfm) then "
                              "shows the whole comment as text; write each '-' of it as \\x2d")
        for mm in NOT_MEASURED.finditer(line):
            if len(mm.group(1).strip()) < 5:
                errors.append(f"{rel}:{i + 1}: '<!-- not measured: REASON -->' needs its reason")
            elif listing is not None:
                listing.append(f"{rel}:{i + 1}: not measured ({mm.group(1).strip()}): {mm.group(2)}")
        rest = NOT_MEASURED.sub("", line)
        if "<!-- not measured" in rest or "<!-- /not measured -->" in rest:
            errors.append(f"{rel}:{i + 1}: a '<!-- not measured: ... -->' without its "
                          "'<!-- /not measured -->' on the same line")
        i += 1
    for name, (expr, n) in names.items():
        if name not in used:
            errors.append(f"{rel}:{n}: '{name}' is defined in the q-names block, but no marker uses it")
    return "\n".join(out)


FIGURE = re.compile(r"(?<![\w.`/^-])\d[\d,]*\.\d+ ?(?:%|(?:GB/s|TB/s|TFLOP/s|ms|µs|us|ns|cycles|x|s|MB|GB|KB|MHz|GHz|points)\b)")


def untraced(path, text):
    """The figures of one file outside markers, code and console blocks, as 'file:line: figure'."""
    out, fence, block = [], False, False
    lines = text.split("\n")
    definitions = names_span(lines)
    for n, line in enumerate(lines, 1):
        if definitions and n - 1 >= definitions[0] and (definitions[1] is None or n - 1 <= definitions[1]):
            continue  # the q-names block: expressions, not figures
        if BEGIN.match(line):
            block = True
        elif line.strip() == END:
            block = False
            continue
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence or block:
            continue
        bare = re.sub(r"`[^`]*`", "", NOT_MEASURED.sub("", INLINE.sub("", line)))
        out += [f"{path}:{n}: {m.group(0)}" for m in FIGURE.finditer(bare)]
    return out


def markdown_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(d, name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; diff and exit 1 on any difference")
    ap.add_argument("--list", action="store_true", help="print every marker and what it resolves to")
    ap.add_argument("--untraced", action="store_true", help="list the figures no marker traces yet")
    ap.add_argument("--untraced-fails", action="store_true",
                    help="list them as --untraced does, and exit 1 if there is any")
    ap.add_argument("--root", default=ROOT, help="the course's repository (default: the one holding this script)")
    ap.add_argument("files", nargs="*", help="Markdown files (default: every .md file of the repository)")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "results")):
        print(f"quote_results.py: {root} has no results/ folder", file=sys.stderr)
        return 2
    sources = Sources(root)
    if args.untraced or args.untraced_fails:
        found = []
        readmes = [p for p in markdown_files(root) if os.path.basename(p) == "README.md"
                   or os.path.relpath(p, root).startswith("docs" + os.sep)]
        for path in ([os.path.abspath(p) for p in args.files] or readmes):
            with open(path, encoding="utf-8") as fh:
                found += untraced(os.path.relpath(path, root), fh.read())
        print("\n".join(found + [f"quote_results.py: {len(found)} figure(s) without a marker"]))
        if found and args.untraced_fails:
            print("quote_results.py: trace each figure above to results/ with a '<!-- q: ... -->' marker, "
                  "or, if it is not a measurement, say so with '<!-- not measured: REASON -->'", file=sys.stderr)
            return 1
        return 0
    errors, listing, changed, markers = [], ([] if args.list else None), [], 0
    for path in ([os.path.abspath(p) for p in args.files] or markdown_files(root)):
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
        if "<!-- q" not in old and "<!-- not measured" not in old:
            continue
        markers += len(INLINE.findall(old)) + sum(1 for line in old.split("\n") if BEGIN.match(line))
        new = render_file(path, old, sources, errors, listing)
        if new != old:
            rel = os.path.relpath(path, root)
            changed.append(rel)
            if args.check:
                sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                           "a/" + rel, "b/" + rel))
            elif not args.list:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(new)
    for line in listing or []:
        print(line)
    for e in errors:
        print(f"quote_results.py: {e}", file=sys.stderr)
    if args.check:
        if changed:
            print(f"quote_results.py: {len(changed)} file(s) disagree with results/ (the diff above): "
                  f"run scripts/quote_results.py", file=sys.stderr)
        else:
            print(f"quote_results.py: {markers} markers agree with results/")
    elif not args.list:
        print(f"quote_results.py: {markers} markers; rewrote {len(changed)} file(s)"
              + (": " + ", ".join(changed) if changed else ""))
    if errors:
        print(f"quote_results.py: {len(errors)} figure(s) cannot be traced (above)", file=sys.stderr)
    return 1 if errors or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
