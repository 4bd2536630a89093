#!/usr/bin/python3
"""The grader's entry point (scripts/grade.sh execs it): see grading/cli.py, or --help (grading/options.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.dont_write_bytecode = True

from grading.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
