#!/usr/bin/env bash
# grade.sh — grade students' main.cu files with the lessons' own checks (scripts/grade.sh --help).
# The grader is the Python package grading/ (standard library only); this runs it with Debian's
# Python 3, found by its full path so that a PATH narrowed by the caller still finds it.
here=$(cd -- "$(dirname -- "$0")/.." && pwd -P) || exit 2
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3) || { echo "grade.sh: python3 not found (the grader is grading/grade.py)" >&2; exit 2; }
exec "$py" "$here/grading/grade.py" "$@"
