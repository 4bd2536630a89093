#!/usr/bin/env bash
# One device run (issue 27, item 2): lesson 05 going further before and after its copy-layout fix
# and its paired-lane rung, on one H100, in one call. Run from the repository root with the
# "before" source tree (the same commit without the change) in $BEFORE and doctest in $PREFIX:
#   BEFORE=<tree> PREFIX=<doctest prefix> OUT=<folder> results/h100/05_going_further_lanes/run.sh
# Writes into $OUT: log.txt (everything below, in order).
set -uo pipefail
: "${BEFORE:?}" "${PREFIX:?}" "${OUT:?}"
step() { echo; echo "=== $* ==="; }
step env; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -2; ncu --version | tail -1; cat results/h100/05_going_further_lanes/commit.txt 2>/dev/null
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOURSE_FULL=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$PREFIX" > "$2.cfg.log" 2>&1; }
step build
( cfg "$BEFORE" /tmp/before && cmake --build /tmp/before -j8 --target 05_tiled_matmul_going_further > /tmp/before.build.log 2>&1; echo "before build rc=$?" ) &
( cfg . build-after && cmake --build build-after -j8 --target 05_tiled_matmul_going_further 05_tiled_matmul_going_further_check 05_tiled_matmul 05_tiled_matmul_check > /tmp/after.build.log 2>&1; echo "after build rc=$?" ) &
wait
tail -3 /tmp/before.build.log /tmp/after.build.log
B=/tmp/before/05_tiled_matmul_going_further A=build-after/05_tiled_matmul_going_further
step "ctest: lesson 05 and its going further (after), GPU required"
COURSE_REQUIRE_GPU=1 ctest --test-dir build-after --output-on-failure -L '^05_tiled_matmul(_going_further)?$' 2>&1 | tail -15
# The counters: per kernel, shared loads and their wavefronts, cp.async (LDGSTS) and the wavefronts
# of its shared-memory writes, bank conflicts, and the issue rate. Names this ncu lacks are dropped.
want="gpu__time_duration.sum launch__registers_per_thread smsp__inst_executed.sum smsp__inst_executed_op_shared_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum smsp__inst_executed_op_ldgsts.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum smsp__issue_active.avg.pct_of_peak_sustained_active sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio"
ncu --query-metrics > /tmp/metrics.txt 2>&1
have=""; for m in $want; do base=${m%%.*}; if grep -q "^$base " /tmp/metrics.txt; then have="$have,$m"; else echo "ncu lacks $m"; fi; done; have=${have#,}
for who in before after; do
  bin=$B; [ $who = after ] && bin=$A
  step "ncu, $who: the pipelined rungs and size-aware at 4096^3 (first launch of each)"
  ncu --clock-control none -k regex:"matmul_pipelined|matmul_split_k" --metrics "$have" $bin --warmup 0 --repeats 1 2>&1 | grep -v "^==PROF=="
done
step "4096^3, every rung and cuBLAS: before, after, before, after, before, after"
for i in 1 2 3; do
  step "run $i before"; $B 2>&1 | sed -n '/M x N x K/,$p'
  step "run $i after"; $A 2>&1 | sed -n '/M x N x K/,$p'
done
step "ncu.sh (after), as the lead's gpu_check.sh --ncu will run it"
timeout 120 lessons/05_tiled_matmul/going_further/ncu.sh build-after 2>&1 | grep -v "^==PROF==" | tail -n 400; echo "ncu.sh rc=$?"
step "sweep (after)"
timeout 100 $A --sweep 2>&1 | sed -n '/== sweep: TFLOP/,$p'
echo; echo "=== done ==="
