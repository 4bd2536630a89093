#!/usr/bin/env bash
# checks.sh BUILD — lesson 01's and 04's checks (built in BUILD) run alone on GPU 0, then two at
# once on GPUs 0 and 1: unpinned, each pinned to half the CPUs, each pinned to one CPU. Prints the
# machine's CPUs, NUMA nodes and the GPUs' CPU affinity first. Needs two GPUs; about 40 s.
B=${1:?usage: checks.sh BUILD}
for bin in 01_naive_transpose_check 04_reduction_check; do
  [ -x "$B/$bin" ] || { echo "checks.sh: no $bin in $B: give the build folder of the course's checks"; exit 2; }
done
ngpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU [0-9]')
[ "$ngpus" -ge 2 ] || { echo "$(basename "$0"): this machine has $ngpus GPU(s) (nvidia-smi -L); the probe needs two: nothing measured"; exit 3; }
echo "== lscpu"; lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|NUMA|Model name|L3)"
echo "== numa"; cat /sys/devices/system/node/node*/cpulist 2>/dev/null | head
echo "== topo"; nvidia-smi topo -m 2>&1 | head -6
for g in 0 1; do bus=$(nvidia-smi -i $g --query-gpu=pci.bus_id --format=csv,noheader | tr 'A-F' 'a-f' | sed 's/^0000//')
  echo "GPU $g $bus local_cpulist $(cat "/sys/bus/pci/devices/0000${bus#0000}/local_cpulist" 2> /dev/null)"; done
one() { # one GPU CPUSET BIN: the wall seconds of one run of BIN --gpu
  local t0; t0=$(date +%s.%N)
  if [ -n "$2" ]; then CUDA_VISIBLE_DEVICES=$1 taskset -c "$2" "$3" --gpu --seed 7 > /dev/null 2>&1
  else CUDA_VISIBLE_DEVICES=$1 "$3" --gpu --seed 7 > /dev/null 2>&1; fi
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}'; }
half=$(( $(nproc) / 2 ))
for bin in 01_naive_transpose_check 04_reduction_check; do
  echo "== $bin"
  s=""; for i in 1 2 3; do s="$s $(one 0 "" "$B/$bin")"; done; echo "alone on GPU 0:$s"
  s=""; for i in 1 2 3; do a=$( (one 0 "" "$B/$bin") & (one 1 "" "$B/$bin" > /tmp/checks.o1); wait); s="$s $a/$(cat /tmp/checks.o1)"; done; echo "two at once:$s"
  s=""; for i in 1 2 3; do a=$( (one 0 "0-$((half-1))" "$B/$bin") & (one 1 "$half-$(( $(nproc)-1 ))" "$B/$bin" > /tmp/checks.o1); wait); s="$s $a/$(cat /tmp/checks.o1)"; done; echo "two at once, halves pinned:$s"
  s=""; for i in 1 2 3; do a=$( (one 0 "0" "$B/$bin") & (one 1 "$half" "$B/$bin" > /tmp/checks.o1); wait); s="$s $a/$(cat /tmp/checks.o1)"; done; echo "two at once, one core each (0, $half):$s"
done
