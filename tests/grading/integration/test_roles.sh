#!/usr/bin/env bash
# The two roles of a check (harness/transcript.hpp), on the course's own code: a lesson's check run
# as the runner (--record) and then as the judge (--judge) of what it recorded, with a seed and
# hidden shapes, must pass with no value missing; the same transcript with one byte changed, or cut
# short, must fail. Without a GPU only the host test cases run (lesson 06 records host values;
# for a lesson that records none there it reports SKIPPED, exit 77).
#   test_roles.sh CHECK LESSON     e.g. build/06_bank_conflicts_check 06_bank_conflicts
# Prints "OK: ..." only when every assertion holds.
set -u
check=$1 lesson=$2
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
seed=$(( (RANDOM << 15 | RANDOM) + 1 ))
cat > "$tmp/hidden.txt" << 'EOF'
# one extra shape per lesson, none of them in the checks' own lists
01_naive_transpose 77 1031
02_shared_transpose 513 77
03_dynamic_shared 100 300
04_reduction 1000003
05_tiled_matmul 129 65 33
06_bank_conflicts 65 129
EOF
fail() { echo "FAIL: $*"; tail -n 25 "$tmp/$2.log" 2> /dev/null; exit 1; }
roles=(--seed "$seed" --hidden-shapes "$tmp/hidden.txt")

"$check" --record "$tmp/t.bin" "${roles[@]}" > "$tmp/record.log" 2>&1 || fail "the runner (--record) failed on the course's own code" record
"$check" --judge "$tmp/t.bin" "${roles[@]}" --verdict "$tmp/verdict.json" > "$tmp/judge.log" 2>&1 || fail "the judge failed the course's own values" judge
grep -q '^judge: 0 value(s) missing from the submission.s run, 0 inconsistent$' "$tmp/judge.log" || fail "the judge's closing line" judge
# A demonstration (harness/testing.hpp: DEMONSTRATION_TEST_CASE) runs in a plain run only: the judge
# skips it, and no other host test case. Lesson 04 has one.
demo=""
[ "$lesson" = 04_reduction ] && demo="a float accumulator stalls at 2^24, a double one does not"
skipped=$(python3 -c 'import json, sys
print("\n".join(t["name"] for t in json.load(open(sys.argv[1]))["test_cases"] if t["skipped"] and not t["gpu"]))' "$tmp/verdict.json") ||
  fail "the judge's verdict cannot be read" judge
[ "$skipped" = "$demo" ] || fail "the judge skipped the host test cases «$skipped», not the demonstrations «$demo»" judge
if [ -n "$demo" ]; then
  "$check" --host --test-case="${demo//,/\\,}" > "$tmp/demo.log" 2>&1 || fail "the demonstration fails in a plain run" demo
  grep -q '^\[doctest\] test cases: *1 | *1 passed' "$tmp/demo.log" || fail "the demonstration did not run in a plain run" demo
fi
gpu=1; grep -q 'GPU test cases skipped' "$tmp/record.log" && gpu=0
if [ "$(stat -c %s "$tmp/t.bin")" -le 20 ]; then
  [ $gpu -eq 0 ] && { echo "SKIPPED: $lesson records no value without a GPU"; exit 77; }
  fail "the runner recorded nothing" record
fi
if [ $gpu -eq 1 ]; then  # the hidden shapes ran: more assertions than without them
  "$check" --seed "$seed" > "$tmp/plain.log" 2>&1 || fail "the check without hidden shapes" plain
  with=$(sed -n 's/^\[doctest\] assertions: *\([0-9]*\).*/\1/p' "$tmp/record.log")
  without=$(sed -n 's/^\[doctest\] assertions: *\([0-9]*\).*/\1/p' "$tmp/plain.log")
  [ "$with" -gt "$without" ] || fail "the hidden shapes added no assertion ($with with, $without without)" record
fi

# Two bytes of the first value changed (bytes 0 and 3 of its first element: an address made
# unaligned, a float's sign and exponent).
cp "$tmp/t.bin" "$tmp/changed.bin"
size=$(stat -c %s "$tmp/changed.bin")
key_len=$(od -An -tu4 -j 20 -N4 "$tmp/t.bin" | tr -d ' ')
type_len=$(od -An -tu4 -j $((24 + key_len)) -N4 "$tmp/t.bin" | tr -d ' ')
data=$((24 + key_len + 4 + type_len + 8))
for at in $data $((data + 3)); do
  byte=$(od -An -tu1 -j "$at" -N1 "$tmp/t.bin" | tr -d ' ')
  printf "$(printf '\\%03o' $(( byte ^ 0x55 )))" | dd of="$tmp/changed.bin" bs=1 seek="$at" conv=notrunc status=none
done
cmp -s "$tmp/t.bin" "$tmp/changed.bin" && fail "could not change the transcript" record
"$check" --judge "$tmp/changed.bin" "${roles[@]}" > "$tmp/changed.log" 2>&1 && fail "the judge passed a transcript with one byte changed" changed
# Cut short: the last value half missing.
head -c $((size - 2)) "$tmp/t.bin" > "$tmp/cut.bin"
"$check" --judge "$tmp/cut.bin" "${roles[@]}" > "$tmp/cut.log" 2>&1 && fail "the judge passed a transcript cut short" cut
grep -q 'malformed at byte' "$tmp/cut.log" || fail "a cut transcript is not called malformed" cut
# Another seed: the runner's values are for other inputs.
"$check" --judge "$tmp/t.bin" --seed $((seed + 1)) --hidden-shapes "$tmp/hidden.txt" > "$tmp/seed.log" 2>&1 &&
  [ $gpu -eq 1 ] && fail "the judge passed values recorded for another seed" seed
echo "OK: $lesson: $(stat -c %s "$tmp/t.bin") bytes recorded (seed $seed$([ $gpu -eq 1 ] && echo ', GPU and host' || echo ', host only')); the judge passes them, and fails two changed bytes and a cut transcript"
