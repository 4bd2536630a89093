#!/usr/bin/env python3
"""python_budgets.py ROOT — the size budgets of the grading package: no module of ROOT/grading/ (its subpackages too)
over 500 lines and no function (or method) over 60 lines, counted from its `def` line to its last
line. Prints each breach and exits 1; prints "python budgets: N modules, M functions, all within
budget" and exits 0 otherwise. Standard library only (ast)."""
import ast
import glob
import os
import sys

MODULE_LINES = 500
FUNCTION_LINES = 60


def breaches(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    name = os.path.relpath(path)
    lines = len(text.splitlines())
    out = []
    if lines > MODULE_LINES:
        out.append("%s: %d lines, over the %d-line budget of a module" % (name, lines, MODULE_LINES))
    functions = 0
    for node in ast.walk(ast.parse(text, path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions += 1
            n = node.end_lineno - node.lineno + 1
            if n > FUNCTION_LINES:
                out.append("%s:%d: %s() is %d lines, over the %d-line budget of a function"
                           % (name, node.lineno, node.name, n, FUNCTION_LINES))
    return out, functions


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    paths = sorted(glob.glob(os.path.join(argv[1], "grading", "**", "*.py"), recursive=True))
    if not paths:
        print("python budgets: no grading/*.py under %s" % argv[1], file=sys.stderr)
        return 2
    found, functions = [], 0
    for p in paths:
        b, n = breaches(p)
        found += b
        functions += n
    for line in found:
        print(line)
    if found:
        print("python budgets: %d breach(es)" % len(found))
        return 1
    print("python budgets: %d modules, %d functions, all within budget" % (len(paths), functions))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
