#!/usr/bin/env bash
# ncu.sh — the Nsight Compute measurements quoted in this lesson's README.md: the naive and
# shared-tile kernels, where their global loads are served, and what they wait on.
# (The register-tiled kernel beside the going-further ladder and cuBLAS's own kernel:
# going_further/ncu.sh.)
# usage: lessons/05_tiled_matmul/ncu.sh [build-dir]   (default: build)
set -euo pipefail
build=${1:-build}
echo "== naive and shared-memory tiles =="
ncu --clock-control none -k regex:"matmul_naive|matmul_tiled" --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,smsp__inst_executed_op_shared_ld.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,gpu__time_duration.sum "$build/05_tiled_matmul" --kernel matmul_ --warmup 0 --repeats 1 --no-clock
