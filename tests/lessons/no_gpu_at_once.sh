#!/usr/bin/env bash
# no_gpu_at_once.sh — a lesson given a size too large for its host part says "no GPU" at once.
#
#   tests/lessons/no_gpu_at_once.sh PROGRAM ARGS...
#
# Runs PROGRAM ARGS with no GPU visible (CUDA_VISIBLE_DEVICES set empty: the CUDA runtime then
# reports no device, on a machine with GPUs too, so this never starts a large GPU run), at most
# 1 GiB of address space and a 10 s time limit. Passes when the program exits with 3 (no usable
# GPU) and its message, within one second. Before the fix, 04_reduction --n 2147483647 filled
# 8 GiB on the host for 38 s before it said so.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 PROGRAM ARGS..." >&2; exit 2; }
limit_kib=$((1024 * 1024))
start=$(date +%s%N)
err=$( (ulimit -v $limit_kib; CUDA_VISIBLE_DEVICES= timeout 10 "$@" 2>&1 >/dev/null) )
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "$(basename "$1") ${*:2}: exit code $rc after $ms ms (address space limit $((limit_kib / 1024)) MiB)"
echo "stderr: $err"
if [ $rc -ne 3 ]; then echo "FAILED: expected exit code 3 (no usable GPU)"; exit 1; fi
case "$err" in
  *"did not run: "*) ;;
  *) echo "FAILED: no 'did not run: <reason>' message on stderr"; exit 1 ;;
esac
if [ $ms -gt 1000 ]; then echo "FAILED: took $ms ms, more than 1 s"; exit 1; fi
echo "OK: no GPU said at once"
