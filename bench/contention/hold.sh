#!/usr/bin/env bash
# hold.sh BUILD — does a process that holds a context open on each GPU (grading/gpu_hold.py), or one
# hardware work queue per context (CUDA_DEVICE_MAX_CONNECTIONS=1), make other processes' CUDA start
# faster and two GPUs' processes wait less for each other? Each "series" line: hold_probe.cu's cuInit
# and context start, alone on GPU 0 and two at once on GPUs 0 and 1. Each "ratio" line: 6 made-up
# cells (lesson 01's check, 04's, 01's again, the probe: four processes, as a graded cell starts)
# on GPU 0, then 3 + 3 on both GPUs. BUILD: a build folder with 01_naive_transpose_check and
# 04_reduction_check. Needs two GPUs and nvcc; about 4 minutes.
set -u
B=${1:?usage: hold.sh BUILD}
for x in 01_naive_transpose_check 04_reduction_check; do
  [ -x "$B/$x" ] || { echo "hold.sh: no $x in $B: give the build folder of the course's checks"; exit 2; }
done
ngpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU [0-9]')
[ "$ngpus" -ge 2 ] || { echo "hold.sh: this machine has $ngpus GPU(s) (nvidia-smi -L); the probe needs two: nothing measured"; exit 3; }
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
K=$(mktemp -d)/hold_probe
nvcc -O2 -arch=native -o "$K" "$here/hold_probe.cu" -lcuda || exit 1
w() { local t0; t0=$(date +%s.%N); env CUDA_VISIBLE_DEVICES=$1 $2 "$K" parts; awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf " wall %.3f", b-a}'; }
series() { # LABEL ENV
  for i in 1 2 3; do echo "$1 alone: $(w 0 "$2")"; done
  for i in 1 2 3; do a=$( (w 0 "$2") & (w 1 "$2" > "$K.1"); wait); echo "$1 two at once: $a | $(cat "$K.1")"; done
}
cells() { # GPU N ENV
  local i x
  for i in $(seq "$2"); do
    for x in 01_naive_transpose_check 04_reduction_check 01_naive_transpose_check; do
      CUDA_VISIBLE_DEVICES=$1 env $3 "$B/$x" --gpu --seed 7 > /dev/null 2>&1
    done
    CUDA_VISIBLE_DEVICES=$1 env $3 "$K" parts > /dev/null
  done
}
ratio() { # LABEL ENV (waits for its own two jobs only: not for the holders)
  local t0 t1 t2 p0 p1
  t0=$(date +%s.%N); cells 0 6 "$2"; t1=$(date +%s.%N)
  cells 0 3 "$2" & p0=$!; cells 1 3 "$2" & p1=$!; wait "$p0" "$p1"; t2=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v c="$t2" -v l="$1" 'BEGIN{printf "%s: 6 cells on one GPU %.1f s, 3+3 on two %.1f s: %.2fx\n", l, b-a, c-b, (b-a)/(c-b)}'
}
series plain "X=1"
series conn1 "CUDA_DEVICE_MAX_CONNECTIONS=1"
ratio plain "X=1"
ratio conn1 "CUDA_DEVICE_MAX_CONNECTIONS=1"
exec 7> >(CUDA_VISIBLE_DEVICES=0 "$K" hold) 8> >(CUDA_VISIBLE_DEVICES=1 "$K" hold)
sleep 2
nvidia-smi --query-compute-apps=pid,used_memory --format=csv
series kept "X=1"
series kept+conn1 "CUDA_DEVICE_MAX_CONNECTIONS=1"
ratio kept "X=1"
ratio kept+conn1 "CUDA_DEVICE_MAX_CONNECTIONS=1"
exec 7>&- 8>&-
