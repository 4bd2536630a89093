#!/usr/bin/env bash
# ncu.sh — the Nsight Compute measurements quoted in going_further/README.md: lesson 05's
# register-tiled kernel, every rung of the ladder, and cuBLAS's own kernel: how many instructions
# each issues, how often an SMSP issues one, what the warps wait on, the shared-memory wavefronts
# of their loads (LDS), and the bank conflicts ncu counts for their loads and cp.async copies (LDGSTS).
# usage: lessons/05_tiled_matmul/going_further/ncu.sh [build-dir]   (default: build)
set -euo pipefail
build=${1:-build}
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,launch__registers_per_thread,launch__block_size,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed_op_ldgsts.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio
echo "== lesson 05: the register-tiled kernel and cuBLAS =="
ncu --clock-control none -k regex:"matmul_register_tiled|gemm" --metrics "$metrics" "$build/05_tiled_matmul" --kernel register --warmup 0 --repeats 1 --no-clock
echo "== going further: every rung and cuBLAS =="
ncu --clock-control none -k regex:"matmul_warp_tiled|matmul_pipelined|gemm" --metrics "$metrics" "$build/05_tiled_matmul_going_further" --warmup 0 --repeats 1
