#!/usr/bin/env bash
# Host test of scripts/grade.sh --share (several cells' checks at once on one GPU), with
# --host-only cells (no GPU needed), on a class of three students (lesson 06: the one whose host
# test cases judge values of the submission, so that a cell can pass without a GPU):
#   Ada     06_bank_conflicts   the lesson's own main.cu              -> passes
#   Bo      06_bank_conflicts   the unsolved exercise (its host checks fail) -> fails
#   Cy      06_bank_conflicts   the lesson's own main.cu              -> passes
# 1. --share without root or without the sandbox is refused (exit 2);
# 2. the same class graded with --share 1 and with --share 3 (same --seed) gives the same
#    gradebook, row for row;
# 3. with --share 3 the failing cell was graded twice: its first, shared result is kept as
#    its cell.json's shared result and its grade is the one graded alone (timing.share 1, shared.timing.share
#    3); the cells that passed were graded once, shared (timing.share 3, no shared result).
# usage: test_share.sh [CMAKE ARGS]
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
repo=$here/../../..
grade=$repo/scripts/grade.sh
. "$here/need_bwrap.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: --share needs root (cells run as user ids of their own)"; exit 77; }
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf -- "$tmp"' EXIT
failures=0
cell_field() { PYTHONPATH=$repo python3 -m grading.cellrecord get "$@" 2> /dev/null; }  # (grading/cellrecord.py)
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for s in Ada Bo Cy; do mkdir -p "$tmp/subs/$s/06_bank_conflicts"; done
cp "$repo/lessons/06_bank_conflicts/main.cu" "$tmp/subs/Ada/06_bank_conflicts/"
cp "$repo/exercises/06_bank_conflicts/main.cu" "$tmp/subs/Bo/06_bank_conflicts/"
cp "$repo/lessons/06_bank_conflicts/main.cu" "$tmp/subs/Cy/06_bank_conflicts/"

# 1. refused where cells cannot be told apart
"$grade" "$tmp/subs" --out "$tmp/x" --host-only --share 2 --no-sandbox > "$tmp/bad.txt" 2>&1
[ $? -eq 2 ] && grep -q -- '--share needs root and the sandbox' "$tmp/bad.txt" || fail "--share with --no-sandbox was not refused: $(tail -n 1 "$tmp/bad.txt")"
"$grade" "$tmp/subs" --out "$tmp/x" --host-only --share 0 > "$tmp/bad.txt" 2>&1
[ $? -eq 2 ] || fail "--share 0 was not refused: $(tail -n 1 "$tmp/bad.txt")"

# 2. one at a time, then three at a time
args=("$tmp/subs" --host-only --timeout 60 --seed 12345 --jobs 2 "$@")
"$grade" "${args[@]}" --out "$tmp/one" > "$tmp/one.txt" 2>&1; rc1=$?
"$grade" "${args[@]}" --out "$tmp/three" --share 3 > "$tmp/three.txt" 2>&1; rc3=$?
[ $rc1 -eq 1 ] && [ $rc3 -eq 1 ] || fail "expected exit 1 (a cell fails) from both runs, got $rc1 and $rc3"
rows() { grep -v '^student,' "$1/gradebook.csv"; }
[ "$(rows "$tmp/one" | wc -l)" -eq 3 ] || fail "the --share 1 gradebook does not have 3 rows: $(cat "$tmp/one/gradebook.csv")"
grep -q '^Ada,06_bank_conflicts,yes,\([1-9][0-9]*\),\1,,' "$tmp/one/gradebook.csv" || fail "Ada's lesson 06 did not pass: $(grep '^Ada' "$tmp/one/gradebook.csv")"
[ "$(rows "$tmp/one")" = "$(rows "$tmp/three")" ] ||
  fail "the gradebooks differ: --share 1: $(rows "$tmp/one") --share 3: $(rows "$tmp/three")"
grep -q '^Bo,06_bank_conflicts,yes,.*,not passed,not measured,0%,,$' "$tmp/three/gradebook.csv" ||
  fail "Bo's unsolved exercise is not a failing row: $(grep '^Bo,06' "$tmp/three/gradebook.csv")"

# 3. who was graded again
grep -q 'did not pass everything while sharing a GPU' "$tmp/three.txt" || fail "the --share run did not say it grades failing cells again"
for d in "$tmp"/three/cells/[0-9]*/; do
  id=$(cell_field "$d" student)/$(cell_field "$d" lesson)
  if [ "$id" = Bo/06_bank_conflicts ]; then
    cell_field "$d" shared.result.compiled > /dev/null || fail "$id: failing cell has no shared result (not graded again?)"
    [ "$(cell_field "$d" timing.share)" = 1 ] && [ "$(cell_field "$d" shared.timing.share)" = 3 ] || fail "$id: cell.json does not show a shared then a lone run: $(cat "$d/cell.json")"
  else
    [ "$(cell_field "$d" shared)" = null ] || fail "$id: a passing cell was graded again"
    [ "$(cell_field "$d" timing.share)" = 3 ] || fail "$id: not graded shared: $(cat "$d/cell.json")"
  fi
done
grep -q -- '--share 3' "$tmp/three/cells/run-info.txt" || fail "run-info.txt does not say --share 3"

[ $failures -eq 0 ] && echo "share: all assertions passed" || { tail -n 30 "$tmp/three.txt"; exit 1; }
