"""grade.sh's whole run: the command line (options.py; options.HELP is what --help prints), then
the grader (grader.py), and the exit code: 0 every cell passed; 1 a cell did not (or the grader
could not build the course); 2 bad command line; 3 no usable GPU, or no usable sandbox (nothing is
graded); 130 interrupted."""
from __future__ import annotations

import os
import sys

from .exits import Exit
from .grader import Grader
from .names import DataError
from .options import parse


def main(argv: list[str] | None = None) -> int:
    repo = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    os.environ["LC_ALL"] = "C"
    try:
        o = parse(sys.argv[1:] if argv is None else argv)
        status = Grader(o, repo).main()
    except Exit as e:
        if e.message:
            print(e.message, file=sys.stdout if e.code == 0 else sys.stderr)
        status = e.code
    except DataError as e:  # the grader's own Unicode data (names.py) is missing: nothing graded
        print("grade.sh: %s" % e, file=sys.stderr)
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return status
