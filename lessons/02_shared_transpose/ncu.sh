#!/usr/bin/env bash
# ncu.sh — the Nsight Compute measurement quoted in this lesson's README.md.
# usage: lessons/02_shared_transpose/ncu.sh [build-dir]   (default: build)
set -euo pipefail
build=${1:-build}
ncu --clock-control none -k regex:transpose --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum "$build/02_shared_transpose" --repeats 1 --warmup 0
