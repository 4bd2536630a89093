#!/usr/bin/env bash
# ncu.sh — the Nsight Compute measurement quoted in this lesson's README.md.
# usage: lessons/01_naive_transpose/ncu.sh [build-dir]   (default: build)
set -euo pipefail
build=${1:-build}
ncu --clock-control none -k regex:"copy_kernel|transpose_naive" \
    --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
    "$build/01_naive_transpose" --repeats 1 --warmup 0
