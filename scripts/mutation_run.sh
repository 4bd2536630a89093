#!/usr/bin/env bash
# mutation_run.sh — build and grade every one-line mutant of the lessons' EXERCISE regions
# (grading/mutants.py), and report which layer catches each: the compiler, the host checks, the GPU
# checks, memcheck, or the static evidence (grading/static_evidence.py and the lesson's rubric.json).
# Meant for a machine with a GPU; the course's own files are never changed (it works on a copy).
#
#   scripts/mutation_run.sh [options] [-- cmake configure args]
#     --lesson NN     only that lesson's mutants (repeatable; default: all)
#     --only ID       only that mutant (repeatable), e.g. 04_reduction:65:half_mask:0
#     --memcheck      also run the GPU checks of each mutant the checks passed under compute-sanitizer's
#                     memcheck (MEMCHECK_ARGS: extra doctest arguments, e.g. a filter of small cases)
#     --work DIR      scratch folder (default: build-mutants): DIR/src, DIR/build, DIR/logs
#     --out FILE      the results, one CSV row per mutant (default: DIR/mutants.csv)
#     --dry-run       list the mutants and what would run; build nothing
# Each check runs with a time limit (MUTANT_TIME_LIMIT seconds, default 300): a mutant that hangs is
# caught ("timeout"). Before any mutant, the course's own code must build and pass its checks here;
# otherwise the run stops, since a layer that fails the solution says nothing about the mutants.
# The speed evidence is not a layer yet (its column says "not measured").
# Exit code: 0 when the run completed (whatever survived), 1 when it could not run, 2 for a bad command line.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
usage() { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; }

lessons_wanted=() only=() memcheck=0 work=build-mutants out="" dry=0 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --lesson) [ $# -ge 2 ] || { usage >&2; exit 2; }; lessons_wanted+=("$2"); shift 2 ;;
    --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; only+=("$2"); shift 2 ;;
    --memcheck) memcheck=1; shift ;;
    --work) [ $# -ge 2 ] || { usage >&2; exit 2; }; work=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "mutation_run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
command -v python3 > /dev/null || { echo "mutation_run.sh: python3 is needed" >&2; exit 1; }
case "$work" in /*) ;; *) work="$root/$work" ;; esac
out=${out:-$work/mutants.csv}
limit=${MUTANT_TIME_LIMIT:-300}

# The mutants, as "id<TAB>new line".
list=$(python3 "$root/grading/mutants.py" list) || { echo "mutation_run.sh: grading/mutants.py list failed" >&2; exit 1; }
selected=()
while IFS=$'\t' read -r id _; do
  lesson=${id%%:*}
  if [ ${#lessons_wanted[@]} -gt 0 ]; then
    keep=0
    for l in "${lessons_wanted[@]}"; do case "$lesson" in "$l"|"$l"_*) keep=1 ;; esac; done
    [ $keep -eq 1 ] || continue
  fi
  if [ ${#only[@]} -gt 0 ]; then
    keep=0
    for o in "${only[@]}"; do [ "$o" = "$id" ] && keep=1; done
    [ $keep -eq 1 ] || continue
  fi
  selected+=("$id")
done <<< "$list"
[ ${#selected[@]} -gt 0 ] || { echo "mutation_run.sh: no mutant matches" >&2; exit 2; }
lessons=$(printf '%s\n' "${selected[@]}" | cut -d: -f1 | sort -u)

if [ $dry -eq 1 ]; then
  echo "${#selected[@]} mutants of: $(echo $lessons)"
  for id in "${selected[@]}"; do
    lesson=${id%%:*}
    echo "$id: build $lesson ${lesson}_check; ${lesson}_check --host; ${lesson}_check --gpu$([ $memcheck -eq 1 ] && echo "; memcheck")$([ -f "$root/lessons/$lesson/rubric.json" ] && echo "; static evidence")"
  done
  exit 0
fi

# ---- a copy of the course to mutate, configured once
mkdir -p "$work/logs" || exit 1
logs=$work/logs
echo "copying the course to $work/src ..."
rm -rf "$work/src" && mkdir -p "$work/src" || exit 1
(cd "$root" && tar --exclude='./build*' --exclude='./.git' --exclude='./.wt' --exclude='./.deps' -cf - .) \
  | (cd "$work/src" && tar -xf -) || { echo "mutation_run.sh: could not copy the course" >&2; exit 1; }
echo "configuring $work/build ..."
if ! (cd "$work/src" && cmake --preset default -B "$work/build" "${extra[@]}") > "$logs/configure.txt" 2>&1; then
  tail -n 20 "$logs/configure.txt"; echo "mutation_run.sh: configure failed ($logs/configure.txt)" >&2; exit 1
fi

limited() { timeout -k 10 "$limit" "$@"; }

# grade LESSON LOGPREFIX: sets caught (compile|host|checks|timeout|memcheck|static|static-advice|survived),
# gpu (passed|failed|skipped|-) and static_words.
grade() {
  local lesson=$1 log=$2 rc rubric="$work/src/lessons/$1/rubric.json"
  caught="" gpu="-" static_words=""
  if ! cmake --build "$work/build" --target "$lesson" "${lesson}_check" > "$log.build.txt" 2>&1; then caught=compile; return; fi
  if ! limited "$work/build/${lesson}_check" --host > "$log.host.txt" 2>&1; then caught=host; return; fi
  limited "$work/build/${lesson}_check" --gpu > "$log.gpu.txt" 2>&1
  rc=$?
  case $rc in
    0) gpu=passed ;;
    77) gpu=skipped ;;
    124|137) gpu=timeout; caught=timeout; return ;;
    *) gpu=failed; caught=checks; return ;;
  esac
  if [ $memcheck -eq 1 ] && [ $gpu = passed ]; then
    # shellcheck disable=SC2086  # MEMCHECK_ARGS: words for doctest
    if ! limited compute-sanitizer --tool memcheck --error-exitcode 99 "$work/build/${lesson}_check" --gpu ${MEMCHECK_ARGS:-} \
         > "$log.memcheck.txt" 2>&1; then caught=memcheck; return; fi
  fi
  if [ -f "$rubric" ]; then
    python3 "$work/src/grading/static_evidence.py" check "$rubric" "$work/build/$lesson" > "$log.static.txt" 2>&1
    rc=$?
    static_words=$(grep -E '^\s+\[(SHORT|short)' "$log.static.txt" | head -n 1 | sed 's/^ *//; s/  */ /g')
    case $rc in
      1) caught=static; return ;;
      0) [ -n "$static_words" ] && { caught=static-advice; return; } ;;
      *) static_words="static evidence not read: $(tail -n 1 "$log.static.txt")" ;;
    esac
  fi
  caught=survived
}

# ---- the course's own code first
echo "checking the course's own code (it must pass before any mutant counts) ..."
for lesson in $lessons; do
  grade "$lesson" "$logs/$lesson.solution"
  if [ "$caught" != survived ]; then
    echo "mutation_run.sh: lesson $lesson's own code is caught by '$caught' here (logs: $logs/$lesson.solution.*): fix that first" >&2
    exit 1
  fi
  solution_gpu=$gpu
done
[ "$solution_gpu" = skipped ] && echo "note: no usable GPU: the GPU checks are skipped, so this run measures only compile, host and static layers"

echo "id,rule,caught_by,gpu_checks,speed,static_words" > "$out"
for id in "${selected[@]}"; do
  lesson=${id%%:*}
  rule=$(echo "$id" | cut -d: -f3)
  file="$work/src/lessons/$lesson/main.cu"
  cp "$root/lessons/$lesson/main.cu" "$file" || exit 1
  python3 "$root/grading/mutants.py" apply "$id" "$file" || { echo "mutation_run.sh: could not apply $id" >&2; exit 1; }
  grade "$lesson" "$logs/$(echo "$id" | tr ':' '_')"
  cp "$root/lessons/$lesson/main.cu" "$file"
  printf '%s,%s,%s,%s,%s,"%s"\n' "$id" "$rule" "$caught" "$gpu" "not measured" "${static_words//\"/\'}" >> "$out"
  echo "$id: $caught"
done

echo
echo "== by layer (the first that catches each mutant) =="
tail -n +2 "$out" | cut -d, -f3 | sort | uniq -c | sort -rn
echo "results: $out   logs: $logs"
if grep -q ',skipped,' "$out"; then
  echo "GPU checks were skipped (no usable GPU): 'survived' here does not mean the checks miss it."
fi
exit 0
