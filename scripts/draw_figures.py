#!/usr/bin/env python3
"""Draws the lessons' idea figures (SVG) from the lessons' own model code.

    scripts/draw_figures.py              write every figure into lessons/NN_name/figures/
    scripts/draw_figures.py --check      change nothing; exit 1 if a figure is missing, stale or
                                         no longer drawn (CTest readme.idea_figures)
    scripts/draw_figures.py --lesson 04  only lesson 04's figures

Each lesson's drawings are in scripts/figlib/lessonNN.py: FIGURES maps a file name to a function
that returns the SVG text. They take their numbers from the lessons: lessons 01 and 06's sector
and bank models (the lines the site's explorers run, compiled natively) and the constants of
each main.cu. A figure shows a measured number only as the course printed it in results/, read
through quote_results.py (lesson 06's shared_cap.svg: results/h100/lessons.txt; lesson 05's
load_sources.svg: results/h200/ncu.txt).
Needs Python 3.9+ and a C++ compiler (g++).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from figlib.models import ROOT  # noqa: E402

LESSONS = ["01", "02", "03", "04", "05", "06"]


def drawings(lesson: str) -> tuple[str, dict[str, str]]:
    """The lesson's folder and {file name: SVG text} for each figure its module draws."""
    module = importlib.import_module(f"figlib.lesson{lesson}")
    return module.LESSON, {name: draw() for name, draw in module.FIGURES.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 on a stale figure")
    ap.add_argument("--lesson", action="append", choices=LESSONS, help="only this lesson (repeatable)")
    args = ap.parse_args(argv)
    problems, written = [], []
    for lesson in args.lesson or LESSONS:
        try:
            folder, figures = drawings(lesson)
        except ModuleNotFoundError as e:
            problems.append(f"lesson {lesson}: no figure module ({e})")
            continue
        out = os.path.join(ROOT, "lessons", folder, "figures")
        rel = os.path.relpath(out, ROOT)
        on_disk = {n for n in os.listdir(out) if n.endswith(".svg")} if os.path.isdir(out) else set()
        for name in sorted(on_disk - set(figures)):
            problems.append(f"{rel}/{name}: no longer drawn by scripts/figlib/lesson{lesson}.py (delete it)")
        for name, svg in figures.items():
            path = os.path.join(out, name)
            old = open(path, encoding="utf-8").read() if os.path.isfile(path) else None
            if old == svg:
                continue
            if args.check:
                problems.append(f"{rel}/{name}: {'missing' if old is None else 'stale'}")
            else:
                os.makedirs(out, exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(svg)
                written.append(f"{rel}/{name}")
    for p in problems:
        print(f"draw_figures.py: {p}", file=sys.stderr)
    if args.check:
        if problems:
            print("draw_figures.py: run scripts/draw_figures.py and commit the figures", file=sys.stderr)
            return 1
        print("draw_figures.py: every idea figure is current")
        return 0
    print(f"draw_figures.py: wrote {len(written)} figure(s)" + (": " + ", ".join(written) if written else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
