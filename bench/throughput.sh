#!/usr/bin/env bash
# throughput.sh OUT [GRADE.SH OPTIONS...] — how long grading a class takes (issue: grading a whole
# class). Makes a class in OUT/class (once): the test submissions and the attack suite of
# scripts/make_test_submissions.sh, plus six made-up students who hand in every lesson's own
# main.cu; grades it with scripts/grade.sh into a new OUT/run-N with the options given; prints the
# wall time, cells per hour, where the time went (sums of the timing in the cells' cell.json) and what that
# means for 200 students x 6 lessons. Needs what grade.sh needs (a GPU, bubblewrap).
# throughput.sh OUT --resume-last [GRADE.SH OPTIONS...] goes on with the newest OUT/run-N (grade.sh
# --resume, same options): a run too long for one sitting is measured over several, and its wall
# time is the sum of theirs (kept in OUT/run-N.wall). With THROUGHPUT_SITTING_S=S in the
# environment a sitting interrupts grade.sh (as Ctrl-C does) after S seconds.
# THROUGHPUT_STUDENTS=N (default 6) sets how many made-up students hand in all six lessons: 24
# cells of test submissions and attacks plus 6 N (a larger class weighs the fixed start less).
# THROUGHPUT_ATTACKS=0 leaves out the test submissions and attacks: a class of correct students
# only (6 N cells), e.g. for a --sanitize run short enough for one sitting.
# THROUGHPUT_EVIDENCE=0 grades as before the lint, the performance evidence and the memcheck subset
# existed (grade.sh --no-lint --no-memcheck --no-performance); 1 (default) grades with them, grade.sh's default. Run
# it both ways on one OUT (the same class) to measure what they cost per cell: the last lines
# print per-cell medians of each step (each cell's timing) and of all of a cell's checks together.
set -uo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
repo=$(cd -- "$here/.." && pwd -P)
[ $# -ge 1 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
out=$1; shift
mkdir -p "$out" && out=$(cd -- "$out" && pwd -P) || exit 1
chmod 755 "$out"
students=${THROUGHPUT_STUDENTS:-6}
[[ $students =~ ^[0-9]+$ ]] || { echo "THROUGHPUT_STUDENTS must be a whole number, not '$students'"; exit 2; }
attacks=${THROUGHPUT_ATTACKS:-1}
[[ $attacks =~ ^[01]$ ]] || { echo "THROUGHPUT_ATTACKS must be 0 or 1, not '$attacks'"; exit 2; }
evidence=${THROUGHPUT_EVIDENCE:-1}
[[ $evidence =~ ^[01]$ ]] || { echo "THROUGHPUT_EVIDENCE must be 0 or 1, not '$evidence'"; exit 2; }
mode=(); [ "$evidence" = 0 ] && mode=(--no-lint --no-memcheck --no-performance)
if [ ! -d "$out/class" ]; then
  if [ "$attacks" = 1 ]; then
    "$repo/scripts/make_test_submissions.sh" "$out/class" --attacks "$out/run-1" > /dev/null || exit 1
  fi
  for s in $(seq 1 "$students"); do
    for d in "$repo"/lessons/[0-9][0-9]_*/; do
      l=$(basename -- "$d"); mkdir -p "$out/class/class-$s/$l"; cp "$d/main.cu" "$out/class/class-$s/$l/"
    done
  done
fi
n=1; while [ -e "$out/run-$n/cells" ]; do n=$((n + 1)); done
resume=(); before=0
if [ "${1-}" = --resume-last ]; then
  shift; n=$((n - 1)); [ $n -ge 1 ] || { echo "--resume-last: no run in $out to go on with"; exit 2; }
  resume=(--resume); before=$(cat "$out/run-$n.wall" 2> /dev/null || echo 0)
fi
run=$out/run-$n
echo "== grade.sh ${resume[*]-} ${mode[*]-} $* ($run; THROUGHPUT_EVIDENCE=$evidence)"
t0=$(date +%s.%N)
limit=(); [ -n "${THROUGHPUT_SITTING_S-}" ] && limit=(timeout -s INT -k 60 "$THROUGHPUT_SITTING_S")
${limit[@]+"${limit[@]}"} "$repo/scripts/grade.sh" "$out/class" --out "$run" ${resume[@]+"${resume[@]}"} ${mode[@]+"${mode[@]}"} "$@" >> "$run.log" 2>&1
rc=$?
wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" -v w="$before" 'BEGIN { printf "%.0f", w + b - a }')
echo "$wall" > "$run.wall"
[ ${#resume[@]} -eq 0 ] || echo "(wall time summed over the sittings of this run: $before s before this one)"
if [ ${#limit[@]} -gt 0 ] && { [ $rc -eq 124 ] || [ $rc -eq 130 ]; }; then
  echo "stopped after this sitting's $THROUGHPUT_SITTING_S s ($wall s so far): $(grep -c '' "$run/progress.log" 2> /dev/null) lines in progress.log; go on with: $0 $out --resume-last $*"
  exit 3
fi
[ -f "$run/gradebook.csv" ] || { echo "grade.sh exited $rc without a gradebook:"; tail -n 20 "$run.log"; exit 1; }
cells=$(grep -c '' "$run/gradebook.csv"); cells=$((cells - 1))
# Each cell's timing, one line per cell ("NNNN: key=value ...", a cell graded again alone with its
# shared run's keys as shared_KEY), read from its cell.json by grading/cellrecord.py.
(cd "$repo" && python3 -m grading.cellrecord timing "$run/cells") > "$run.timing" || { echo "cannot read the cells' timing"; exit 1; }
values() { tr ' ' '\n' < "$run.timing" | sed -n "s/^$1=//p"; }
sum() { values "$1" | awk '{ s += $1 } END { printf "%.0f", s }'; }
count() { values "$1" | grep -c ''; }
builds=$(sed -n -e "s/^The course and its judges were built once, in \([0-9.]*\) s\.$/\1/p" \
             -e "s/^The course and its judges came from the course cache (.*), ready in \([0-9.]*\) s\.$/\1 (from the course cache)/p" "$run/cells/run-info.txt")
common=$(head -n 1 <<< "$builds"); again=$(tail -n +2 <<< "$builds" | paste -sd, - | sed 's/,/ s, /g')
echo "exit $rc; $cells cells ($(count compile_s) compiled, $(count run_s) run$( [ "$(count shared_run_s)" -eq 0 ] || echo ", $(count shared_run_s) of them graded again alone")) in $wall s: $((cells * 3600 / wall)) cells per hour"
echo "time summed over the cells: compile $(sum compile_s) s (CPU, $(grep -o -- '--jobs [0-9]*' <<< "$*" || echo 'default --jobs') at a time);" \
     "checks: runner $(($(sum run_s) + $(sum shared_run_s))) s, judge $(($(sum judge_s) + $(sum shared_judge_s))) s, sanitizers $(($(sum sanitize_s) + $(sum shared_sanitize_s))) s," \
     "memcheck subset $(($(sum memcheck_s) + $(sum shared_memcheck_s))) s, evidence $(($(sum evidence_s) + $(sum shared_evidence_s))) s; static facts $(sum static_s) s (CPU)"
echo "the course and its judges, built once: ${common:-?} s${again:+ (again at each resume, already built: $again s)}"; grep "^Time per cell" "$run/cells/run-info.txt"
# median KEY...: over the cells whose timing has any of the KEYs, the median of their sum in a cell
median() {
  awk -v keys="$*" 'BEGIN { n = split(keys, k, " "); for (i = 1; i <= n; i++) want[k[i]] = 1 }
    { s = 0; seen = 0
      for (j = 2; j <= NF; j++) { i = index($j, "="); if (i > 0 && (substr($j, 1, i - 1) in want)) { s += substr($j, i + 1); seen = 1 } }
      if (seen) printf "%.2f\n", s }' "$run.timing" | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { printf "-"; exit } printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo "medians per cell (THROUGHPUT_EVIDENCE=$evidence): compile $(median compile_s) s, static facts $(median static_s) s (CPU, while the cell compiles);" \
     "on the GPU: run $(median run_s) s, judge $(median judge_s) s, memcheck subset $(median memcheck_s) s (of the cells it ran on)," \
     "evidence $(median evidence_s) s, sanitizers $(median sanitize_s) s; all checks of a cell $(median run_s judge_s memcheck_s evidence_s sanitize_s) s;" \
     "compile, static facts and checks $(median compile_s static_s run_s judge_s memcheck_s evidence_s sanitize_s) s"
echo "200 students x 6 lessons = 1200 cells at this rate: $(awk -v w="$wall" -v c="$cells" 'BEGIN { t = w * 1200 / c; printf "%dh%02dm", t / 3600, (t % 3600) / 60 }')"
