#!/bin/sh
# The toy check (compile.cmake writes it with __SOURCE__ filled in): the host checks pass; the "GPU"
# checks pass once main.cu doubles. Like the course's checks it takes --host, --gpu, doctest's
# --test-case=/--test-case-exclude= and --evidence FILE. Its "GPU" is the environment:
#   TOY_GPU=none       no usable GPU: --gpu reports SKIPPED and exits 77
#   TOY_EVIDENCE=FILE  the speed test case's measurement: FILE's lines are appended to --evidence's
#                      file (canned lines, tests/exercises/loop/evidence/); unset: no speed test case
source='__SOURCE__'
mode="" evidence="" speed=0
while [ $# -gt 0 ]; do
  case "$1" in
    --host) mode=host ;;
    --gpu) mode=gpu ;;
    --evidence) evidence=$2; shift ;;
    --test-case=speed:*) speed=1 ;;
  esac
  shift
done
[ "$mode" = host ] && exit 0
if [ "${TOY_GPU:-}" = none ]; then echo "SKIPPED: GPU test cases not run: no CUDA device (the toy's TOY_GPU=none)"; exit 77; fi
if ! grep -q 'out\[i\] = 2 \* in\[i\]' "$source"; then
  printf '===============================================================================\nmain.cu:1:\nTEST CASE:  doubles\n\nmain.cu:2: ERROR: CHECK( out == 2 * in ) is NOT correct!\n\n'
  exit 1
fi
if [ $speed -eq 1 ] && [ -n "${TOY_EVIDENCE:-}" ]; then
  echo "speed 01.double: (the toy's canned measurement)"
  [ -n "$evidence" ] && cat "$TOY_EVIDENCE" >> "$evidence"
fi
echo '[doctest] test cases: 1 | 1 passed'
exit 0
