#!/usr/bin/env bash
# Host test: scripts/grade.sh without a usable GPU grades nothing, says so in one line and exits 3.
#   test_no_gpu.sh real         this machine as it is (exit 77, skipped, if it has a GPU)
#   test_no_gpu.sh smi-fails    an nvidia-smi that finds no GPU, first on PATH
#   test_no_gpu.sh runtime [CMAKE ARGS]   an nvidia-smi that lists a GPU, but CUDA_VISIBLE_DEVICES=""
#                               hides it from the CUDA runtime: caught after common/ is built, by the
#                               same test the checks use, before any submission is compiled
# Prints "OK: exit code 3: <the line>" only when every assertion holds.
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
scripts=$here/../../../scripts
mode=${1:-real}; shift
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
"$scripts/make_test_submissions.sh" "$tmp/submissions" > /dev/null || { echo "FAIL: make_test_submissions.sh"; exit 1; }
mkdir -p "$tmp/bin"
env=()
case $mode in
  real)
    if nvidia-smi -L > /dev/null 2>&1; then echo "SKIPPED: this machine has a GPU (nvidia-smi -L works)"; exit 77; fi ;;
  smi-fails)
    printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' > "$tmp/bin/nvidia-smi" ;;
  runtime)
    printf '#!/bin/sh\n[ "$1" = -L ] || exit 9\necho "GPU 0: Pretend GPU (UUID: GPU-00000000-0000-0000-0000-000000000000)"\n' > "$tmp/bin/nvidia-smi"
    env=(CUDA_VISIBLE_DEVICES=) ;;
  *) echo "usage: $0 real|smi-fails|runtime [cmake args]"; exit 2 ;;
esac
[ -f "$tmp/bin/nvidia-smi" ] && chmod +x "$tmp/bin/nvidia-smi"
# (runtime: --no-sandbox, so that the GPU is what is tested, also where bubblewrap is missing)
extra=(); [ "$mode" = runtime ] && extra=(--no-sandbox --course-cache "$tmp/cache")
env ${env[@]+"${env[@]}"} PATH="$tmp/bin:$PATH" "$scripts/grade.sh" "$tmp/submissions" --out "$tmp/out" ${extra[@]+"${extra[@]}"} "$@" > "$tmp/log" 2>&1
rc=$?
cat "$tmp/log"
last=$(tail -n 1 "$tmp/log")
[ $rc -eq 3 ] || { echo "FAIL: exit code $rc, expected 3"; exit 1; }
[[ $last == "grade.sh: no usable GPU: "*"(nothing graded)" ]] || { echo "FAIL: the last line does not say why nothing was graded"; exit 1; }
if [ "$mode" != runtime ]; then
  [ "$(grep -c '' "$tmp/log")" -eq 1 ] || { echo "FAIL: more than one line of output"; exit 1; }
  [ ! -e "$tmp/out" ] || { echo "FAIL: it wrote into --out before finding out there is no GPU"; exit 1; }
else
  [ -z "$(find "$tmp/out/cells" -name build -type d)" ] || { echo "FAIL: it built a submission without a GPU"; exit 1; }
fi
echo "OK: exit code 3: $last"
