#!/usr/bin/env bash
# ncu.sh — the Nsight Compute measurement quoted in going_further/README.md: the two 16-byte-shared
# transposes, with the metrics lesson 02's ncu.sh collects for its own kernels (DRAM, shared
# instructions, what the warps wait on), so the two tables compare row for row.
# usage: lessons/02_shared_transpose/going_further/ncu.sh [build-dir]   (default: build)
set -euo pipefail
build=${1:-build}
ncu --clock-control none -k regex:transpose --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio "$build/02_shared_transpose_going_further" --repeats 1 --warmup 0
