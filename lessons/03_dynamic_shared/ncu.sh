#!/usr/bin/env bash
# ncu.sh — the Nsight Compute measurement quoted in this lesson's README.md.
# usage: lessons/03_dynamic_shared/ncu.sh [build-dir]   (default: build)
set -euo pipefail
build=${1:-build}
ncu --clock-control none -k regex:transpose_dynamic_tile --metrics gpu__time_duration.sum,launch__block_size,launch__shared_mem_per_block_dynamic,launch__shared_mem_config_size,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum "$build/03_dynamic_shared" --repeats 1 --warmup 0
