#!/usr/bin/env bash
# mutation_dry_run.sh — scripts/mutation_run.sh --dry-run on a machine without a GPU or a compiler:
# it lists every mutant of grading/mutants.py once (each exercise's stub among them) with the layers
# it would run, builds nothing, and refuses bad command lines with exit code 2.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
# No nvcc, no nvidia-smi, no compute-sanitizer: only the system's own programs.
export PATH=/usr/bin:/bin
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

out=$(bash "$root/scripts/mutation_run.sh" --dry-run --work "$work/w" --deadline 450); rc=$?
[ $rc -eq 0 ] && ok "--dry-run exits 0 without a GPU or nvcc" || fail "--dry-run exited $rc: $out"
expected=$(cd "$root" && python3 -m grading.mutants list | cut -f1)
listed=$(printf '%s\n' "$out" | sed -n 's/^mut[0-9][0-9][0-9] \([^ ]*\): compile; .*/\1/p')
[ "$listed" = "$expected" ] && ok "every mutant listed once, in the generator's order ($(echo "$expected" | wc -l))" \
  || fail "the listed mutants differ from grading/mutants.py list"
n=$(echo "$expected" | wc -l)
printf '%s\n' "$out" | grep -q "^$n mutants of: 01_" && ok "the count line says $n" || fail "no count line for $n: $(head -n 2 <<< "$out")"
stubs=$(echo "$expected" | grep -c ':stub:')
[ "$stubs" -eq 13 ] && ok "13 exercise stubs are mutants" || fail "$stubs stubs"
printf '%s\n' "$out" | grep -q " $stubs exercise stubs" && ok "the plan counts them" || fail "the plan does not count $stubs stubs"
printf '%s\n' "$out" | grep -q '^mut[0-9]* 02_shared_transpose:02\.tiled+0:naive_in_tiled:0: compile; lint; host; GPU checks; memcheck --small; speed; static' \
  && ok "a region mutant goes through every layer" || fail "no naive_in_tiled line with every layer"
printf '%s\n' "$out" | grep -q 'deadline: 450 s' && ok "the deadline is shown" || fail "no deadline line"
[ -e "$work/w" ] && fail "--dry-run created its work folder" || ok "and it builds nothing (no work folder)"

out=$(bash "$root/scripts/mutation_run.sh" --dry-run --lesson 04 --no-memcheck); rc=$?
[ $rc -eq 0 ] && ! printf '%s\n' "$out" | grep -q '^mut[0-9]* 0[^4]' && ok "--lesson 04 lists only lesson 04" || fail "--lesson 04: $out"
printf '%s\n' "$out" | grep -q 'memcheck' && fail "--no-memcheck still plans memcheck" || ok "--no-memcheck leaves memcheck out"
out=$(bash "$root/scripts/mutation_run.sh" --dry-run --lesson 03 --no-lint); rc=$?
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^mut[0-9]* 03_dynamic_shared:03\.[a-z0-9_]*+[0-9]*:off_by_one:0: compile; host;' \
  && ok "--no-lint leaves the lint out" || fail "--no-lint: $(head -n 5 <<< "$out")"

for bad in "--deadline soon" "--frobnicate" "--only no_such_mutant --dry-run" "--jobs"; do
  # shellcheck disable=SC2086  # the words of each bad command line
  bash "$root/scripts/mutation_run.sh" $bad > "$work/bad.txt" 2>&1; rc=$?
  [ $rc -eq 2 ] && ok "'$bad' exits 2" || fail "'$bad' exited $rc: $(cat "$work/bad.txt")"
done
bash "$root/scripts/mutation_run.sh" --deadline 60 > "$work/bad.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- '--out DIR is needed' "$work/bad.txt" && ok "a real run without --out is refused" || fail "no --out: $rc $(cat "$work/bad.txt")"

[ $failures -eq 0 ] && echo "all dry-run tests passed" || echo "$failures failed"
[ $failures -eq 0 ]
