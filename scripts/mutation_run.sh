#!/usr/bin/env bash
# mutation_run.sh — build and grade every mutant of the lessons' EXERCISE regions (grading/mutants.py:
# one-line mistakes, each exercise's stub, and the region-level mistakes), and report which layer of
# default grading catches each, in order: compile, lint (grading/ub_lint.py: undefined behaviour
# GCC sees in the device code compiled as host C++, on the CPU), host checks, GPU checks, memcheck (the --small
# subset), speed (the `speed: ...` test cases judged by grading/evidence.py against the course
# solution's speed measured in the same run) and static rules (the rubric's facts of the compiled
# kernels, grading/static_evidence.py). Meant for a machine with a GPU; the course's own files are
# never changed (it works on a copy).
#
#   scripts/mutation_run.sh --out DIR [options] [-- cmake configure args]
#     --out DIR          where the results go (created): mutants.csv, summary.txt, solution.csv, env.txt,
#                        and logs/ (the course code's and the uncaught mutants' logs; index.txt)
#     --deadline S       a hard budget of S seconds from the start: no mutant or layer is started after
#                        it (a running one is stopped), and what is done is written; 0 (default): none
#     --lesson NN        only that lesson's mutants (repeatable; default: all)
#     --only ID          only that mutant (repeatable), e.g. 04_reduction:04.shuffle+2:half_mask:0
#     --jobs N           parallel compile jobs (default: the cores less two, which the checks use)
#     --memcheck-jobs N  memcheck runs at once (default 4; they judge correctness, not time)
#     --solution-every N the course solution's speed cases run before the mutants build, again before
#                        the first mutant's speed case, then once each time the mutants measured
#                        pass another N of the list (default 20), and at the end
#     --no-memcheck      leave the memcheck layer out
#     --no-lint          leave the lint layer out
#     --work DIR         scratch folder (default: build-mutants): DIR/src, DIR/build, DIR/logs
#     --dry-run          list the mutants and the plan; build and run nothing (no GPU or compiler needed)
# How it is spent: one CMake tree holds the lessons and every mutant (targets mutNNN_check:
# the lesson's check compiled against the mutant's main.cu, which also holds the kernels the static rules read), built by one ninja with
# -k 0 in the background, while the GPU checks of each mutant already built run one at a time
# (up to the first failed assertion), and memcheck runs (a few at once) on each mutant they passed.
# Then the static rules (on the CPU) and last, on a quiet machine, the speed case of the region
# each surviving mutant changes, one at a time, between the solution's own speed rounds. The solution's ratio to its own median over the rounds is the
# run-to-run spread a speed threshold must exceed (summary.txt).
# The course's own code goes through every layer first; where a layer catches it, summary.txt says so
# on its first lines (the run goes on: that layer's verdicts on the lesson's mutants mean nothing).
# Each run of a check is limited to MUTANT_TIME_LIMIT seconds (default 60; under memcheck
# MEMCHECK_TIME_LIMIT, default 180): a hang is "timeout", which catches the mutant.
# Mutants named in grading/equivalent_mutants.txt (`id: why`) are reported, not counted.
# Exit code: 0 when the run completed (whatever survived; also when the deadline cut it, which
# summary.txt says), 1 when it could not run, 2 for a bad command line.
set -uo pipefail
# The run is grading/mutation/ (python3 -m grading.mutation.run, from the course's root; --out is
# relative to the folder this was called from); its layers and the caught rule are grading/pipeline.py's.
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v python3 > /dev/null || { echo "mutation_run.sh: python3 is needed" >&2; exit 1; }
export MUTATION_RUN_CWD="$PWD"
cd "$root" && exec python3 -m grading.mutation.run "$@"
