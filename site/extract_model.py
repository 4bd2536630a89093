#!/usr/bin/env python3
"""Copies the lines between `// SITE MODEL BEGIN` and `// SITE MODEL END` of a lesson's main.cu
into a file the WebAssembly build includes, so the explorers run the very lines the lesson's
host checks test. Each region starts with a #line directive: a compiler error names main.cu.

    extract_model.py lessons/06_bank_conflicts/main.cu build/site/l06_model.inc
"""
import sys


def extract(source):
    out, start = [], None
    with open(source, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, start=1):
        marker = line.strip()
        if marker.startswith("// SITE MODEL BEGIN"):
            if start is not None:
                raise ValueError(f"{source}:{number}: SITE MODEL BEGIN inside the region opened at line {start}")
            start = number
            out.append(f'#line {number + 1} "{source}"')
        elif marker.startswith("// SITE MODEL END"):
            if start is None:
                raise ValueError(f"{source}:{number}: SITE MODEL END without a SITE MODEL BEGIN")
            start = None
        elif start is not None:
            out.append(line)
    if start is not None:
        raise ValueError(f"{source}:{start}: SITE MODEL BEGIN is never closed")
    if not out:
        raise ValueError(f"{source}: no SITE MODEL BEGIN / END region")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        text = extract(argv[1])
    except (OSError, ValueError) as e:
        print(f"extract_model.py: {e}", file=sys.stderr)
        return 1
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(f"// Generated from {argv[1]} by site/extract_model.py: edit the lesson, not this file.\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
