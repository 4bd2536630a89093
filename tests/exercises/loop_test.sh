#!/usr/bin/env bash
# loop_test.sh WORK — scripts/exercises.sh's hint, reset, watch, and the speed and counters shown by check, end to
# end, on the toy course in tests/exercises/loop (no compiler, no GPU): a copy of it in WORK, with the
# course's exercises.sh, make_exercises.cmake (with grading/regions.py, which it runs) and grading/evidence.py. The toy check's "GPU" and its
# speed measurement are canned (tests/exercises/loop/toy_check.sh, evidence/*.jsonl, and the toy's
# recorded solution figures in results/h100/evidence/solution.csv). Prints what it checks; exits
# non-zero when something is wrong.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work=${1:?usage: loop_test.sh WORK}
rm -rf "$work" && mkdir -p "$work" && cp -R "$root/tests/exercises/loop/." "$work/" || exit 1
mkdir -p "$work/scripts" "$work/exercises/01_toy"
cp "$root/scripts/exercises.sh" "$root/scripts/make_exercises.cmake" "$work/scripts/" || exit 1
mkdir -p "$work/grading" && cp "$root/grading/__init__.py" "$root/grading/evidence.py" "$root/grading/rubric.py" "$root/grading/static_evidence.py" \
  "$root/grading/pipeline.py" "$root/grading/cmdline.py" "$root/grading/regions.py" "$work/grading/" || exit 1
cd "$work" || exit 1
cmake -P scripts/make_exercises.cmake > /dev/null || { echo "FAIL: the generator failed on the toy lesson"; exit 1; }
ex=exercises/01_toy/main.cu
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
expect_in() {  # expect_in TEXT PATTERN WHAT
  if printf '%s\n' "$1" | grep -qE -- "$2"; then ok "$3"; else fail "$3: no /$2/ in:"; printf '%s\n' "$1"; fi
}

# ---- the generator: the hints go to hints.txt, not into the exercise
grep -q 'HINT' "$ex" && fail "the exercise main.cu shows the hints"
grep -q 'out\[i\] = 2' "$ex" && fail "the exercise main.cu holds the solution"
[ "$(grep -cv '^#' exercises/01_toy/hints.txt)" = 2 ] && ok "hints.txt has the lesson's 2 hints" || fail "hints.txt: $(cat exercises/01_toy/hints.txt)"
given=$(cat "$ex")

# ---- hint: one more each time, then all of them
out=$(bash scripts/exercises.sh hint 01); rc=$?
expect_in "$out" '^hint 1 of 2 \(01\.double\): each element of out is twice' "hint 1 first"
printf '%s\n' "$out" | grep -q 'out\[i\] = 2' && fail "the first hint call showed the second hint"
expect_in "$out" '1 more' "says how many are left"
[ $rc -eq 0 ] || fail "hint exited $rc"
[ "$(cat exercises/01_toy/.hints_shown)" = 1 ] && ok ".hints_shown remembers 1" || fail ".hints_shown is '$(cat exercises/01_toy/.hints_shown)'"
out=$(bash scripts/exercises.sh hint 01_toy)
expect_in "$out" '^  hint 1 \(01\.double\)' "the second call lists hint 1 again"
expect_in "$out" '^hint 2 of 2 \(01\.double\): out\[i\] = 2 \* in\[i\];' "and reveals hint 2"
out=$(bash scripts/exercises.sh hint 01)
expect_in "$out" '^all 2 hints of 01_toy are shown' "a third call says all are shown"
[ "$(cat exercises/01_toy/.hints_shown)" = 2 ] && ok "and stays at 2" || fail ".hints_shown is '$(cat exercises/01_toy/.hints_shown)'"
bash scripts/exercises.sh hint 07 > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok "hint on an unknown exercise exits 2" || fail "hint 07 exited $rc"

# ---- reset: the exercise as given, the student's version kept beside it
printf '%s\n// my work: DOES_NOT_COMPILE\n' "$given" > "$ex"
out=$(bash scripts/exercises.sh reset 01 < /dev/null); rc=$?
[ $rc -eq 0 ] || fail "reset exited $rc: $out"
[ "$(cat "$ex")" = "$given" ] && ok "reset restored the exercise from the lesson" || fail "reset left: $(cat "$ex")"
backups=(exercises/01_toy/main.cu.backup-*)
if [ ${#backups[@]} -eq 1 ] && grep -q 'my work' "${backups[0]}"; then ok "the student's version is kept as ${backups[0]##*/}"
else fail "backups: ${backups[*]}"; fi
expect_in "$out" 'your version: exercises/01_toy/main.cu.backup-' "reset says where the student's version is"
out=$(bash scripts/exercises.sh reset 01 < /dev/null)
expect_in "$out" 'nothing to reset' "a second reset changes nothing"
backups=(exercises/01_toy/main.cu.backup-*)
[ ${#backups[@]} -eq 1 ] && ok "and makes no second backup" || fail "backups: ${backups[*]}"
# Without the lesson (as in the student pack) and without git: the pack's copy, or a clear refusal.
mv lessons lessons.away
echo "// more work" >> "$ex"
bash scripts/exercises.sh reset 01 < /dev/null > reset.txt 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'nothing changed' reset.txt && ok "with no source of the original, reset refuses and says so" \
  || fail "reset with no original exited $rc: $(cat reset.txt)"
grep -q 'more work' "$ex" && ok "and the student's file is untouched" || fail "the refused reset changed $ex"
printf '%s\n' "$given" > exercises/01_toy/.original_main.cu
bash scripts/exercises.sh reset 01 --yes > /dev/null 2>&1
[ "$(cat "$ex")" = "$given" ] && ok "reset restores from the pack's .original_main.cu" || fail "reset from .original_main.cu left: $(cat "$ex")"
rm exercises/01_toy/.original_main.cu exercises/01_toy/main.cu.backup-*
mv lessons.away lessons

# ---- speed: never for an exercise whose GPU checks fail
out=$(TOY_EVIDENCE=$work/evidence/fast.jsonl bash scripts/exercises.sh check 01 2>&1)
expect_in "$out" '^speed: not measured \(the GPU checks must pass first' "no speed shown before the GPU checks pass"
printf '%s\n' "$out" | grep -q 'of the solution' && fail "a speed was shown for an unsolved exercise: $out"

# ---- watch: check, wait for a save, check again
log=$work/watch.txt
bash scripts/exercises.sh watch 01 --rounds 2 > "$log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do grep -q 'watching exercises/01_toy/' "$log" && break; sleep 0.5; done
grep -q 'watching exercises/01_toy/' "$log" || fail "watch never got to waiting: $(cat "$log")"
expect_in "$(cat "$log")" '0/1 solved' "the first check: not solved yet"
sed -i.orig 's|^\( *\)// TODO(01.double).*|&\n\1out[i] = 2 * in[i];|' "$ex" && rm -f "$ex.orig"
for _ in $(seq 1 120); do kill -0 $pid 2> /dev/null || break; sleep 0.5; done
if kill -0 $pid 2> /dev/null; then kill $pid; fail "watch did not notice the save: $(cat "$log")"; fi
wait $pid; rc=$?
expect_in "$(cat "$log")" 'a change in exercises/01_toy/: checking again' "watch noticed the save"
expect_in "$(tail -n 3 "$log")" '1/1 solved' "the second check: solved"
[ $rc -eq 0 ] && ok "watch --rounds 2 exits 0 when solved" || fail "watch exited $rc"

# Ctrl-C stops it (job control on, so that the background job gets SIGINT as at a terminal).
log=$work/watch_interrupted.txt  # a new file: the old one already says "watching"
set -m
bash scripts/exercises.sh watch 01 > "$log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do grep -q 'watching exercises/01_toy/' "$log" && break; sleep 0.5; done
kill -INT $pid
for _ in $(seq 1 20); do kill -0 $pid 2> /dev/null || break; sleep 0.5; done
if kill -0 $pid 2> /dev/null; then kill -KILL $pid; fail "Ctrl-C (SIGINT) did not stop watch"; fi
wait $pid; rc=$?
set +m
expect_in "$(cat "$log")" 'watch: stopped' "Ctrl-C stops watch"
[ $rc -eq 0 ] && ok "and it exits 0" || fail "watch exited $rc after Ctrl-C"

# ---- speed beside the solution (the exercise is solved now), in the rubric's words.
# The toy solution's recorded ceiling fractions on the H100: 0.300/0.310, 0.301/0.312, 0.300/0.311,
# median 0.9647. fast: 0.300/0.320 = 0.9375 of the copy's speed, 0.9375/0.9647 = 97% of the solution's.
speed_check() {  # speed_check CANNED: `check 01` with that canned measurement; sets out and rc
  out=$(TOY_EVIDENCE=$work/evidence/$1.jsonl bash scripts/exercises.sh check 01 2>&1); rc=$?
}
speed_check fast
expect_in "$out" '^speed beside the course solution on NVIDIA H100 80GB HBM3:' "the speed is shown with the GPU's name"
expect_in "$out" '^  \[ok   \] 01\.double: twice 0\.320 ms, copy 0\.300 ms: 97% of the solution.s speed \(at least 80% asked\)' \
  "a fast kernel: 97% of the solution's speed, met"
[ $rc -eq 0 ] && ok "and the exercise is solved" || fail "check exited $rc"
# slow: 0.300/0.900 = 0.3333, / 0.9647 = 35%: the rubric's words, and still solved (speed is not correctness).
speed_check slow
expect_in "$out" "^  \[short\] 01\.double: twice 0\.900 ms, copy 0\.300 ms: correct, but 35% of the solution's speed on this GPU: the toy says double in one pass" \
  "a slow kernel: the rubric's words with 35%"
[ $rc -eq 0 ] && expect_in "$(tail -n 1 <<< "$out")" '^1/1 solved' "a slow kernel is still solved" || fail "check exited $rc for a slow kernel"
# A GPU the course has no recorded figure for: only the ceiling fraction (0.300/0.400 = 75%).
speed_check other_gpu
expect_in "$out" '\[-    \] 01\.double: .*no recorded solution figure for NVIDIA A100-SXM4-40GB; your kernel ran at 75% of the copy.s speed' \
  "another GPU: no solution figure, the ceiling fraction only"
printf '%s\n' "$out" | grep -q 'of the solution.s speed' && fail "a ratio to the solution was invented for a GPU without a figure: $out"
# A time under half the ceiling's is not believed.
speed_check implausible
expect_in "$out" '\[short\] 01\.double: .*implausible: the submission reported 0\.1 ms, under half its ceiling.s 0\.3 ms' \
  "an implausible time is not credited"
# No GPU: not measured, and no number at all.
out=$(TOY_GPU=none TOY_EVIDENCE=$work/evidence/fast.jsonl bash scripts/exercises.sh check 01 2>&1); rc=$?
expect_in "$out" '^speed: not measured \(no usable GPU here' "no GPU: the speed is not measured"
printf '%s\n' "$out" | grep -qE '[0-9]+% of the|[0-9] ms' && fail "no GPU, yet a speed was shown: $out"
expect_in "$out" 'skipped: no GPU' "and the table says skipped: no GPU"
[ $rc -eq 1 ] && ok "and check exits 1 (not solved without a GPU)" || fail "check without a GPU exited $rc"
# A check with no speed test case (no canned measurement): says so.
out=$(bash scripts/exercises.sh check 01 2>&1)
expect_in "$out" '^speed: not measured \(this check has no speed test case\)' "a check without speed cases: not measured"

# ---- counters: a rubric with "counters" rules gets them shown after the speed, or why they cannot
# be read (here a stand-in ncu that answers as the driver does for a user without the permission).
cp "$root/grading/counters.py" "$root/grading/counters_rules.py" "$root/grading/ncu.py" grading/ || exit 1
python3 - lessons/01_toy/rubric.json <<'PY'
import json, sys
rubric = json.load(open(sys.argv[1]))
rubric["counters"] = [{"exercise": "01.double", "kernel": "^twice\\(", "launch": "(^| )twice(<|[(]|$)", "test_case": "doubles",
                       "metric": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "per": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                       "op": "<=", "value": 6, "short": "correct, but the stores cost more than 6 sectors per request"}]
json.dump(rubric, open(sys.argv[1], "w"), indent=1)
PY
printf '#!/bin/sh\ncat "%s"\nexit 1\n' "$root/tests/evidence/handwritten_ncu/ERR_NVGPUCTRPERM.txt" > fake_ncu && chmod +x fake_ncu
out=$(NCU=$work/fake_ncu TOY_EVIDENCE=$work/evidence/fast.jsonl bash scripts/exercises.sh check 01 2>&1); rc=$?
expect_in "$out" '^hardware counters' "counters are shown after the speed"
expect_in "$out" 'counters not read: .*ERR_NVGPUCTRPERM' "and why they cannot be read (no permission)"
[ $rc -eq 0 ] && expect_in "$(tail -n 1 <<< "$out")" '^1/1 solved' "unread counters leave the exercise solved" || fail "check exited $rc"
out=$(EXERCISE_COUNTERS=0 NCU=$work/fake_ncu TOY_EVIDENCE=$work/evidence/fast.jsonl bash scripts/exercises.sh check 01 2>&1)
printf '%s\n' "$out" | grep -q 'counters' && fail "EXERCISE_COUNTERS=0 still measured counters: $out" || ok "EXERCISE_COUNTERS=0 leaves them out"
# No recorded figures in the pack at all (no results/*/evidence): the ceiling fraction only.
mv results results.away
speed_check fast
expect_in "$out" 'no recorded solution figure for NVIDIA H100 80GB HBM3; your kernel ran at 94% of the copy.s speed' \
  "no solution.csv: no figure, and no invented ratio"
mv results.away results

# ---- the lint: undefined behaviour GCC sees in the device code fails the exercise, whose checks
# (here canned) pass; the finding names the line. Then the same loop with its bound fixed is clean.
cp "$root/grading/ub_lint.py" "$root/grading/ub_render.py" "$root/grading/regions.py" grading/ || exit 1
cat >> "$ex" <<'CU'
__global__ void toy_rows(const float* in, float* out) {
    float v[4];
    for (int k = 0; k <= 4; ++k) v[k] = in[threadIdx.x + 32 * k];  // one row too many
    for (int k = 0; k < 4; ++k) out[threadIdx.x + 32 * k] = 2 * v[k];
}
CU
line=$(grep -n 'one row too many' "$ex" | cut -d: -f1)
out=$(TOY_EVIDENCE=$work/evidence/fast.jsonl bash scripts/exercises.sh check 01 2>&1); rc=$?
expect_in "$out" '^lint: FAILED' "the lint fails a loop one past its register array"
expect_in "$out" "^  exercises/01_toy/main.cu:$line: (iteration 4 invokes undefined behavior|array subscript 4 is above array bounds)" \
  "and names the line in GCC's words"
expect_in "$(tail -n 3 <<< "$out")" 'not yet \(undefined behaviour\)' "the table says not yet (undefined behaviour)"
[ $rc -eq 1 ] && ok "and check exits 1" || fail "check with undefined behaviour exited $rc"
sed -i.orig 's/k <= 4; ++k) v\[k\]/k < 4; ++k) v[k]/' "$ex" && rm -f "$ex.orig"
out=$(TOY_EVIDENCE=$work/evidence/fast.jsonl bash scripts/exercises.sh check 01 2>&1); rc=$?
expect_in "$out" '^lint: ok' "with the bound fixed the lint is clean"
[ $rc -eq 0 ] && ok "and the exercise is solved again" || fail "check after the fix exited $rc"

[ $failures -eq 0 ] && echo "all loop tests passed" || echo "$failures failed"
[ $failures -eq 0 ]
