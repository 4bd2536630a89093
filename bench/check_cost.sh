#!/usr/bin/env bash
# check_cost.sh BUILD [LESSON...] — where a graded cell's GPU time goes, per lesson, measured on the
# course's own checks in the build folder BUILD (a `cmake --build` of NN_check; grade.sh's judges
# are RUN/common): each command below timed once, wall seconds, then every test case that took over
# 0.05 s (doctest --duration) of the runs marked *. Unsandboxed (what the sandbox adds is
# throughput.sh's "an empty sandbox starts in"); needs a GPU and compute-sanitizer on PATH.
#   run            check --gpu --seed 1: the runner as default grading runs it (speed cases too) *
#   run-no-speed   the same without the `speed: ...` test cases (grade.sh --no-performance)
#   small          check --gpu --small: the memcheck subset's test cases, no sanitizer
#   memcheck       compute-sanitizer --tool memcheck ... --small: the memcheck subset as grade.sh runs it *
#   memcheck-heap  the same with --check-device-heap no (no device-side malloc in the course)
#   memcheck-lib   the same with the libraries' kernels (cuBLAS, CUB) not checked:
#                  --kernel-name-exclude regex=gemm|gemv|xmma|cutlass|cub (mangled names)
# Prints to stdout (bench/evidence_cost.sh keeps it as OUT/checks.txt).
set -uo pipefail
[ $# -ge 1 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
build=$1; shift
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
lessons=("$@")
[ ${#lessons[@]} -gt 0 ] || mapfile -t lessons < <(sed -n 's/^\([0-9][0-9]_[a-z_0-9]*\).*/\1/p' "$here/../lessons/lessons.txt")
export COURSE_REQUIRE_GPU=1
command -v compute-sanitizer > /dev/null || echo "(compute-sanitizer not on PATH: its rows fail)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2> /dev/null | sed 's/^/GPU: /'
compute-sanitizer --version 2> /dev/null | sed -n 's/^Version/compute-sanitizer/p'
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
timed() {  # NAME CMD...: one line "NAME  seconds  exit"; the output kept in $tmp/NAME.log
  local name=$1; shift
  local t0 t1 rc
  t0=$(date +%s.%N)
  "$@" > "$tmp/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  awk -v n="$name" -v a="$t0" -v b="$t1" -v r="$rc" 'BEGIN { printf "  %-14s %7.2f s  exit %d\n", n, b - a, r }'
}
slow() {  # NAME: the test cases' seconds summed (the rest of the wall time is the process's own:
  # start, CUDA context, the sanitizer), then those of $tmp/NAME.log over 0.05 s, slowest first
  grep -E '^[0-9]+\.[0-9]+ s: ' "$tmp/$1.log" | awk -v n="$1" '{ t += $1 } END { printf "      %s: test cases %.2f s in all\n", n, t }'
  grep -E '^[0-9]+\.[0-9]+ s: ' "$tmp/$1.log" | awk '$1 > 0.05' | sort -rn | head -12 | sed "s/^/      $1: /"
}
ms=(compute-sanitizer --tool memcheck --error-exitcode 99)
for l in "${lessons[@]}"; do
  c=$build/${l}_check
  [ -x "$c" ] || { echo "$l: no $c"; continue; }
  echo "$l:"
  timed run "$c" --gpu --seed 1 --duration=true
  timed run-no-speed "$c" --gpu --seed 1 --test-case-exclude="speed: *"
  timed small "$c" --gpu --small --seed 1
  timed memcheck "${ms[@]}" "$c" --gpu --small --seed 1 --duration=true
  timed memcheck-heap "${ms[@]}" --check-device-heap no "$c" --gpu --small --seed 1
  timed memcheck-lib "${ms[@]}" --kernel-name-exclude "regex=gemm|gemv|xmma|cutlass|cub" "$c" --gpu --small --seed 1
  slow run
  slow memcheck
  for v in memcheck memcheck-heap memcheck-lib; do grep -h "ERROR SUMMARY" "$tmp/$v.log" | sed "s/^/      $v: /"; done
done
