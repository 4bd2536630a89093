#!/usr/bin/env bash
# evidence_cost.sh OUT [off|on|both] [GRADE.SH OPTIONS...] — what the lint, the memcheck subset and the
# performance evidence cost per cell (issue 25: at most 1.5x the time per cell without them).
# Grades one class with bench/throughput.sh (in a work folder, $EVIDENCE_COST_WORK, default
# /tmp/evidence-cost: THROUGHPUT_STUDENTS students, default 3, each handing in every lesson's own
# main.cu; no attacks unless THROUGHPUT_ATTACKS=1), without them (off: grade.sh --no-lint
# --no-memcheck --no-performance, the grading of before) and with them (on: grade.sh's default), and keeps under
# OUT, for each: MODE.txt (throughput.sh's summary), MODE/ (gradebook.csv and .md, run-info.txt,
# timing.txt: one line per cell, from its cell.json, evidence/NNNN.json: each cell's judged rules); then cost.txt
# (bench/cost_table.py): per-cell medians of each step side by side and the ratio of a cell's time on to off; and, after
# an "on" run, checks.txt: bench/check_cost.sh on that run's judges (each lesson's runner,
# its memcheck subset and option variants timed one by one, and their slowest test cases). "both"
# (the default) runs off then on; run them as two commands where one command has a time limit
# (each is a fresh grading of the same class; the class is made once). Needs a GPU and bubblewrap.
set -uo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
[ $# -ge 1 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
out=$1; shift
modes=(off on)
case "${1-}" in
  off|on) modes=("$1"); shift ;;
  both) shift ;;
esac
mkdir -p "$out" && out=$(cd -- "$out" && pwd -P) || exit 1
work=${EVIDENCE_COST_WORK:-/tmp/evidence-cost}
mkdir -p "$work" && work=$(cd -- "$work" && pwd -P) || exit 1
export THROUGHPUT_STUDENTS=${THROUGHPUT_STUDENTS:-3} THROUGHPUT_ATTACKS=${THROUGHPUT_ATTACKS:-0}
rc=0
for mode in "${modes[@]}"; do
  evidence=1; [ "$mode" = off ] && evidence=0
  THROUGHPUT_EVIDENCE=$evidence "$here/throughput.sh" "$work" "$@" | tee "$out/$mode.txt"
  r=${PIPESTATUS[0]}
  n=1; while [ -e "$work/run-$((n + 1))/cells" ]; do n=$((n + 1)); done
  run=$work/run-$n
  rm -rf "$out/$mode" && mkdir -p "$out/$mode/evidence"
  cp "$run/gradebook.csv" "$run/gradebook.md" "$run/cells/run-info.txt" "$out/$mode/" 2> /dev/null
  (cd "$here/.." && python3 -m grading.cellrecord timing "$run/cells" --names) > "$out/$mode/timing.txt" || rc=1
  for d in "$run"/cells/[0-9]*/; do
    c=$(basename "$d")
    [ -f "$d/evidence.json" ] && cp "$d/evidence.json" "$out/$mode/evidence/$c.json"
  done
  sed "s|$work|/tmp/evidence-cost|g" -i "$out/$mode.txt" "$out/$mode/run-info.txt" 2> /dev/null
  [ "$r" -le 1 ] || rc=$r  # (1: a cell did not pass, which the class of correct students should not have)
  if [ "$mode" = on ]; then
    "$here/check_cost.sh" "$run/common" > "$out/checks.txt" 2>&1
    sed "s|$work|/tmp/evidence-cost|g" -i "$out/checks.txt"
  fi
done
[ -f "$out/off/timing.txt" ] && [ -f "$out/on/timing.txt" ] || exit $rc
python3 "$here/cost_table.py" "$out" > "$out/cost.txt"
cat "$out/cost.txt"
exit $rc
