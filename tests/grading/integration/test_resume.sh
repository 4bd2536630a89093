#!/usr/bin/env bash
# Host test of scripts/grade.sh --resume and --gpus, with --host-only cells (no GPU needed):
#  1. a run is stopped (TERM) after its first cell was graded; the cells graded are kept;
#  2. --resume with other options that change a grade (or another --seed) is refused;
#  3. --resume grades only the rest: the finished cells' cell.json and build.log are
#     untouched (not regraded, not recompiled), the seed is the first run's, the gradebook has
#     every row, and progress.log one line per cell graded; the course and its judges, which the
#     first run built into the course cache, come from it (nothing built again);
#  4. the rest is graded with --gpus 0,1 on two stand-in GPUs: an nvidia-smi first on PATH that
#     lists two made-up GPUs (no GPU is used: --host-only). Each cell must have run with
#     CUDA_VISIBLE_DEVICES set to its worker's GPU's UUID (the submissions print it), and both
#     workers must have taken cells. What a real GPU must show (each cell on its own GPU, the
#     speed-up) is not tested here.
# usage: test_resume.sh [CMAKE ARGS]
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
grade=$here/../../../scripts/grade.sh
. "$here/need_bwrap.sh"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf -- "$tmp"' EXIT
failures=0
cell_field() { PYTHONPATH=$here/../../.. python3 -m grading.cellrecord get "$@" 2> /dev/null; }  # (grading/cellrecord.py)
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$here/../../../scripts/make_test_submissions.sh" "$tmp/all" > /dev/null || { echo "FAIL: make_test_submissions.sh"; exit 1; }
mkdir "$tmp/subs"
for s in "Ada Lovelace" "O'Brien, Pat \"wrong index\"" "-Zoë missing barrier" "Lin does not compile"; do cp -r -- "$tmp/all/$s" "$tmp/subs/"; done
for f in "$tmp"/subs/*/*/main.cu; do  # each run prints the GPU it was given
  printf '\n#include <cstdio>\n#include <cstdlib>\nstatic const int shown_gpu = std::printf("VISIBLE=%%s\\n", std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "(unset)");\n' >> "$f"
done
args=("$tmp/subs" --out "$tmp/out" --course-cache "$tmp/cache" --host-only --timeout 30 "$@")

# 1. stop the first run once a cell is graded
"$grade" "${args[@]}" > "$tmp/run1.txt" 2>&1 &
pid=$!
for _ in $(seq 1 3000); do
  grep -q '\[1/' "$tmp/out/progress.log" 2> /dev/null && break
  kill -0 $pid 2> /dev/null || break
  sleep 0.1
done
kill -TERM $pid 2> /dev/null
wait $pid; rc=$?
[ $rc -eq 130 ] || fail "the stopped run exited $rc, expected 130 (interrupted); its output: $(tail -n 5 "$tmp/run1.txt")"
grep -q 'interrupted; the cells graded so far are kept' "$tmp/run1.txt" || fail "the stopped run did not say how to go on"
done1=() left1=()
for d in "$tmp"/out/cells/[0-9]*/; do
  if cell_field "$d" result.compiled > /dev/null; then done1+=("$d"); else left1+=("$d"); fi
done
[ ${#done1[@]} -ge 1 ] && [ ${#left1[@]} -ge 1 ] || fail "expected some cells graded and some not after the stop, got ${#done1[@]} and ${#left1[@]}"
stamp() { local d; for d in "$@"; do stat -c '%n %Y.%y %s' "$d/cell.json" "$d/build.log" 2>&1; md5sum "$d/cell.json"; done; }
before=$(stamp "${done1[@]}")
seed=$(cat "$tmp/out/cells/seed")

# 2. a resume that would grade differently is refused
"$grade" "$tmp/subs" --out "$tmp/out" --course-cache "$tmp/cache" --host-only --timeout 31 --resume "$@" > "$tmp/bad.txt" 2>&1
[ $? -eq 2 ] && grep -q 'options that change a grade differ' "$tmp/bad.txt" || fail "--resume with another --timeout was not refused: $(cat "$tmp/bad.txt")"
"$grade" "${args[@]}" --resume --seed $((seed + 1)) > "$tmp/bad.txt" 2>&1
[ $? -eq 2 ] && grep -q "graded with --seed $seed" "$tmp/bad.txt" || fail "--resume with another --seed was not refused: $(cat "$tmp/bad.txt")"
"$grade" "$tmp/subs" --out "$tmp/nothing" --host-only --resume > "$tmp/bad.txt" 2>&1
[ $? -eq 2 ] || fail "--resume with nothing to resume was not refused"
[ "$before" = "$(stamp "${done1[@]}")" ] || fail "a refused --resume touched a finished cell"

# 3 and 4. resume on two stand-in GPUs
mkdir "$tmp/bin"
cat > "$tmp/bin/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in
  *--query-gpu=index,uuid,pci.bus_id*) printf '0, GPU-test-0000, 00000000:00:06.0\n1, GPU-test-1111, 00000000:00:07.0\n' ;;
  *--query-compute-apps*) ;;
  *) echo "stand-in nvidia-smi: unexpected arguments: $*" >&2; exit 9 ;;
esac
SMI
chmod +x "$tmp/bin/nvidia-smi"
for bad in "foo" "0,0" "2" "0,"; do
  PATH="$tmp/bin:$PATH" "$grade" "${args[@]}" --resume --gpus "$bad" > "$tmp/bad.txt" 2>&1
  [ $? -eq 2 ] || fail "--gpus '$bad' was not refused: $(tail -n 1 "$tmp/bad.txt")"
done
PATH="$tmp/bin:$PATH" "$grade" "${args[@]}" --resume --gpus 0,1 > "$tmp/run2.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "the resumed run exited $rc, expected 1 (a cell does not compile); its output: $(tail -n 5 "$tmp/run2.txt")"
[ "$before" = "$(stamp "${done1[@]}")" ] || fail "the resumed run regraded or recompiled a cell graded before"
grep -q "${#done1[@]} graded before" "$tmp/run2.txt" || fail "the resumed run did not say how many cells were graded before"
[ "$(cat "$tmp/out/cells/seed")" = "$seed" ] || fail "the seed changed across the resume"
grep -q 'the course and its judges from the course cache' "$tmp/run2.txt" && ! grep -q 'building the course' "$tmp/run2.txt" ||
  fail "the resumed run built the course again instead of taking it from the course cache"
grep -q '^The course and its judges came from the course cache' "$tmp/out/cells/run-info.txt" || fail "run-info.txt does not say the course came from the cache"
[ "$(ls -d "$tmp"/cache/*/ | wc -l)" -eq 1 ] || fail "the course cache does not hold exactly one entry: $(ls "$tmp/cache")"
ncells=$(ls -d "$tmp"/out/cells/[0-9]* | wc -l)
[ "$(grep -c '' "$tmp/out/gradebook.csv")" -eq $((ncells + 1)) ] || fail "gradebook.csv does not have a row per cell"
grep -q 'not graded' "$tmp/out/gradebook.csv" && fail "a cell is not graded after the resume"
[ "$(grep -c ' \[[0-9]*/' "$tmp/out/progress.log")" -eq "$ncells" ] || fail "progress.log does not have exactly one line per graded cell"
grep -q "^Inputs drawn with --seed $seed\.$" "$tmp/out/gradebook.md" || fail "the gradebook does not name the seed"
used=""
for d in "${left1[@]}"; do
  [ "$(cell_field "$d" compiled)" = yes ] || continue
  g=$(cell_field "$d" timing.gpu)
  case $g in 0) want=GPU-test-0000 ;; 1) want=GPU-test-1111 ;; *) fail "$d: no GPU recorded (gpu=$g)"; continue ;; esac
  grep -qx "VISIBLE=$want" "$d/run.log" || fail "$d ran on worker $g but saw CUDA_VISIBLE_DEVICES '$(sed -n 's/^VISIBLE=//p' "$d/run.log")'"
  used="$used $g"
done
[[ $used == *0* && $used == *1* ]] || fail "not both stand-in GPUs took cells (workers:$used)"
for d in "${done1[@]}"; do grep -qx 'VISIBLE=(unset)' "$d/run.log" || [ "$(cell_field "$d" compiled)" != yes ] || fail "$d: a run without --gpus saw a CUDA_VISIBLE_DEVICES"; done

# a resume with nothing left writes the gradebook again and grades nothing
"$grade" "${args[@]}" --resume > "$tmp/run3.txt" 2>&1
grep -q 'no cell left to grade' "$tmp/run3.txt" || fail "a resume of a finished run did not say there is nothing left"

[ $failures -eq 0 ] && echo "resume and --gpus: all assertions passed" || { cat "$tmp/run2.txt"; exit 1; }
