#!/usr/bin/env bash
# probe.sh — what two processes on two GPUs wait for: probe.cu's modes (a context started by
# cudaFree(0); 200 cudaMalloc/cudaMemset/cudaFree of 16 MiB; the same from a memory pool; 200 pageable
# copies of 16 MiB to the host; CPU work on fresh pages), each run twice alone on GPU 0 and twice
# on GPUs 0 and 1 at once. Each line: the context's start, the work, the process's wall time (s).
# Needs two GPUs and nvcc; about 20 s.
set -u
ngpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU [0-9]')
[ "$ngpus" -ge 2 ] || { echo "$(basename "$0"): this machine has $ngpus GPU(s) (nvidia-smi -L); the probe needs two: nothing measured"; exit 3; }
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
bin=$(mktemp -d)/probe
nvcc -O2 -arch=native -o "$bin" "$here/probe.cu" || exit 1
w() { local t0; t0=$(date +%s.%N); CUDA_VISIBLE_DEVICES=$1 "$bin" "$2" | tr '\n' ' '; awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "wall %.3f", b-a}'; }
for m in init alloc pool copy host; do
  for i in 1 2; do echo "$m alone: $(w 0 $m)"; done
  for i in 1 2; do a=$( (w 0 $m) & (w 1 $m > "$bin.1"); wait); echo "$m two at once: $a | $(cat "$bin.1")"; done
done
