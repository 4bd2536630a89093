#!/usr/bin/env bash
# ncu.sh — the Nsight Compute measurements quoted in this lesson's README.md.
# usage: lessons/05_tiled_matmul/ncu.sh [build-dir]   (default: build)
#   1. the naive and shared-tile kernels: where their global loads are served, and what they wait on;
#   2. the register-tiled kernel, the going-further ladder and cuBLAS's own kernel: how many
#      instructions each issues, how often an SMSP issues one, and what the warps wait on.
set -euo pipefail
build=${1:-build}
echo "== 1. naive and shared-memory tiles =="
ncu --clock-control none -k regex:"matmul_naive|matmul_tiled" --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,smsp__inst_executed_op_shared_ld.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,gpu__time_duration.sum "$build/05_tiled_matmul" --kernel matmul_ --warmup 0 --repeats 1 --no-clock
echo "== 2. register tiles, going further, cuBLAS =="
# --kernel "d 1" selects "register_tiled 1...", "warp_tiled 1..." and "pipelined 1..."; cuBLAS always runs.
ncu --clock-control none -k regex:"matmul_register_tiled|matmul_warp_tiled|matmul_pipelined|gemm" --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,launch__registers_per_thread,launch__block_size,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio "$build/05_tiled_matmul" --kernel "d 1" --warmup 0 --repeats 1 --no-clock
