#!/usr/bin/env bash
# ncu.sh — the Nsight Compute measurement quoted in this lesson's README.md.
# usage: lessons/04_reduction/ncu.sh [build-dir]   (default: build)
set -euo pipefail
build=${1:-build}
ncu --clock-control none -k regex:"reduce_|DeviceReduce" --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio "$build/04_reduction" --warmup 0 --repeats 1
