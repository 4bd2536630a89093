#!/usr/bin/env bash
# lint_mutants.sh — the lint alone (grading/ub_lint.py: the device code compiled as host C++ by
# g++ -O3, for undefined behaviour) over the course's own code, each exercise as given and every
# mutant of grading/mutants.py, on the CPU (no GPU, no nvcc): which ones it fails. The mutation run
# (scripts/mutation_run.sh) runs the same lint as its layer after compile; this is that layer alone.
#
#   scripts/lint_mutants.sh [--out FILE] [--jobs N]
#     --out FILE   where the listing goes (default: stdout): a header (date, commit, g++), then one
#                  line per file "NAME<TAB>OUTCOME" (UB main.cu:LINE: <GCC's words> [<flag>], clean,
#                  or not applicable: <why>), equivalent mutants marked, and a closing count
#     --jobs N     lints at once (default 2)
#     --gxx PROG   the GCC to lint with (default: g++)
# Exit code: 0 when the course's own code and every exercise as given are clean (whatever the
# mutants), 1 when one of them is failed (a false positive to fix), 2 for a bad command line.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="" jobs=2 gxx=g++
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "lint_mutants.sh: --out needs a file" >&2; exit 2; }; out=$2; shift 2 ;;
    --jobs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "lint_mutants.sh: --jobs needs a number > 0" >&2; exit 2; }; jobs=$2; shift 2 ;;
    --gxx) [ $# -ge 2 ] && command -v "$2" > /dev/null || { echo "lint_mutants.sh: --gxx needs a program on PATH" >&2; exit 2; }; gxx=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "lint_mutants.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
# the files: the course's code, the exercises as given, then each mutant
: > "$work/files.txt"
for f in "$root"/lessons/[0-9][0-9]_*/main.cu; do
  l=$(basename "$(dirname "$f")"); printf 'course:%s\t%s\n' "$l" "$f" >> "$work/files.txt"
done
for f in "$root"/exercises/[0-9][0-9]_*/main.cu; do
  l=$(basename "$(dirname "$f")"); printf 'exercise:%s\t%s\n' "$l" "$f" >> "$work/files.txt"
done
mkdir -p "$work/m"
k=0
(cd "$root" && python3 -m grading.mutants list) | cut -f1 | while read -r id; do
  k=$((k + 1))
  (cd "$root" && python3 -m grading.mutants apply "$id" "$work/m/$k.cu") || exit 1
  printf '%s\t%s\n' "$id" "$work/m/$k.cu"
done >> "$work/files.txt" || { echo "lint_mutants.sh: grading/mutants.py failed" >&2; exit 1; }
one() {  # one N: the N-th file of files.txt linted, "NAME<TAB>OUTCOME" into $work/r/N.txt
  local name file
  name=$(sed -n "$1p" "$work/files.txt" | cut -f1)
  file=$(sed -n "$1p" "$work/files.txt" | cut -f2)
  (cd "$root" && python3 -m grading.ub_lint --json --gxx "$gxx" "$file") > "$work/r/$1.json" 2>&1
  printf '%s\t%s\n' "$name" "$(cd "$root" && python3 -m grading.mutation_report lint "$work/r/$1.json")" > "$work/r/$1.txt"
}
export -f one
export root work gxx
mkdir -p "$work/r"
seq 1 "$(wc -l < "$work/files.txt")" | xargs -P "$jobs" -n 1 bash -c 'one "$1"' _
equivalents="$root/grading/equivalent_mutants.txt"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$root" rev-parse HEAD 2> /dev/null || echo unknown)$(git -C "$root" status --porcelain 2> /dev/null | grep -q . && echo ' (with uncommitted changes)')"
  echo "g++: $("$gxx" --version 2> /dev/null | head -n 1 || echo none)"
  echo "command: scripts/lint_mutants.sh$([ "$gxx" != g++ ] && echo " --gxx $gxx") (grading/ub_lint.py on each file)"
  n=$(wc -l < "$work/files.txt")
  for i in $(seq 1 "$n"); do
    line=$(cat "$work/r/$i.txt" 2> /dev/null || printf '%s\tnot run\n' "$(sed -n "${i}p" "$work/files.txt" | cut -f1)")
    id=${line%%$'\t'*}
    if [ -f "$equivalents" ] && grep -q "^$id:" "$equivalents"; then line="$line	(listed as equivalent)"; fi
    echo "$line"
  done > "$work/lines.txt"
  cat "$work/lines.txt"
  mutants=$(grep -vc '^course:\|^exercise:' "$work/lines.txt")
  echo "mutants failed by the lint: $(grep -v '^course:\|^exercise:' "$work/lines.txt" | grep -c $'\tUB ') of $mutants;" \
       "not applicable: $(grep -v '^course:\|^exercise:' "$work/lines.txt" | grep -c $'\tnot applicable')"
  echo "course code and exercises failed by the lint: $(grep '^course:\|^exercise:' "$work/lines.txt" | grep -c $'\tUB ')"
} > "$work/report.txt"
if [ -n "$out" ]; then cp "$work/report.txt" "$out" && echo "lint_mutants.sh: $(tail -n 2 "$work/report.txt" | head -n 1) (in $out)"; else cat "$work/report.txt"; fi
! grep '^course:\|^exercise:' "$work/lines.txt" | grep -q $'\tUB '
