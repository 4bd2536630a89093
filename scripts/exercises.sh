#!/usr/bin/env bash
# exercises.sh — the student's loop: build an exercise, run its checks, see what is left to do.
#
#   scripts/exercises.sh                  every exercise, then a progress table (same as `status`)
#   scripts/exercises.sh status           the same
#   scripts/exercises.sh check NN         one exercise (NN = 01 .. 06, or its folder name): build it, run its
#                                         host and GPU checks, and show the first failing check's message
#   scripts/exercises.sh --table-from F   only print the table for canned results (the course's own test)
# Options (before the command): --build DIR  build folder (default: build-exercises);
#                               -- ARGS      arguments for cmake's configure step, e.g. -DCMAKE_CUDA_ARCHITECTURES=90
#
# An exercise is "solved" when it compiles, its host checks pass, and its GPU checks RAN and passed.
# Without a usable GPU its GPU checks are "skipped: no GPU", and it is not solved, however right it is.
# Exit code: 0 when every exercise asked about is solved, 1 when one is not, 2 for a bad command line.
# Each check runs with a time limit (EXERCISE_TIME_LIMIT seconds, default 600), so a kernel that never
# finishes costs a failed check, not a stuck terminal. Full logs: DIR/exercise-logs/.
set -uo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"  # before the cd below, for usage()
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$self"; }  # the comment block at the top, without its '# '

# ---------------------------------------------------------------- the table
# Input: one line per exercise, "name compiles host gpu [static]", where compiles is ok|FAILED, host is
# ok|FAILED|-, gpu is passed|failed|timeout|skipped|- ("-": not run, because it did not compile) and
# static (optional) is ok|FAILED|-: FAILED when the compiled kernel breaks a contract its rubric
# marks required (grading/static_evidence.py), which the GPU checks cannot see.
print_table() {
  local file=$1 name compiles host gpu static shown solved=0 total=0 skipped=0
  printf '%-22s| %-10s| %-12s| %s\n' "exercise" "compiles?" "host checks" "GPU checks"
  printf '%s\n' "----------------------+-----------+-------------+------------------"
  while read -r name compiles host gpu static; do
    case "$name" in ''|'#'*) continue ;; esac
    total=$((total + 1))
    case "$gpu" in
      passed)
        if [ "${static:--}" = FAILED ]; then shown="not yet (static evidence)"
        elif [ "$compiles" = ok ] && [ "$host" = ok ]; then shown=solved; solved=$((solved + 1)); else shown=passed; fi ;;
      failed) shown="not yet" ;;
      timeout) shown="not yet (time limit)" ;;
      skipped) shown="skipped: no GPU"; skipped=$((skipped + 1)) ;;
      *) shown="-" ;;
    esac
    printf '%-22s| %-10s| %-12s| %s\n' "$name" "$compiles" "$host" "$shown"
  done < "$file"
  if [ $skipped -gt 0 ]; then
    echo "GPU checks skipped: no usable GPU here. An exercise counts as solved only when its GPU checks ran and passed."
  fi
  echo "$solved/$total solved"
  [ $solved -eq $total ] && [ $total -gt 0 ]
}

# ---------------------------------------------------------------- building and running one exercise
build=build-exercises
extra=()
configured=0

configure() {
  [ $configured -eq 1 ] && return 0
  configured=1
  if [ -f "$build/CMakeCache.txt" ] && [ ${#extra[@]} -eq 0 ]; then return 0; fi
  echo "configuring $build (cmake --preset exercises) ..."
  if ! cmake --preset exercises -B "$build" "${extra[@]}" > "$logs/configure.txt" 2>&1; then
    tail -n 30 "$logs/configure.txt"
    echo "exercises.sh: cmake could not configure the course (full log: $logs/configure.txt)" >&2
    exit 1
  fi
}

# Prints the first failed assertion of a doctest log, with its test case and everything it logged.
first_failure() {
  awk '
    /^==========+$/ { header = ""; in_header = 1; next }
    in_header { header = header $0 "\n"; if ($0 == "") in_header = 0; next }
    !done && /(ERROR|FATAL ERROR|TEST CASE FAILED|THREW exception)/ { printf "%s", header; printing = 1 }
    printing { print; if ($0 == "") { done = 1; printing = 0 } }
  ' "$1"
}

limit=${EXERCISE_TIME_LIMIT:-600}
run_limited() {  # run_limited LOG COMMAND...: the command's exit code, 124 when it ran out of time
  local log=$1
  shift
  if command -v timeout >/dev/null; then timeout -k 10 "$limit" "$@" > "$log" 2>&1; else "$@" > "$log" 2>&1; fi
}

# static_evidence NAME VERBOSE: the rubric's facts of the compiled exercise (lessons/NAME/rubric.json,
# read by grading/static_evidence.py from cuobjdump's output; no GPU needed), beside the course
# solution's. Sets $static: ok, FAILED (a required rule fell short) or - (no rubric, no python3 or
# no cuobjdump: nothing judged, and nothing held against the exercise).
static_evidence() {
  local name=$1 verbose=$2 rubric="lessons/$1/rubric.json" tool=grading/static_evidence.py rc
  static=-
  [ -f "$rubric" ] && [ -f "$tool" ] || return 0
  if ! command -v python3 >/dev/null; then
    [ "$verbose" = 1 ] && echo "static evidence: not shown (no python3 here)"
    return 0
  fi
  python3 "$tool" check "$rubric" "$build/exercise_$name" > "$logs/$name.static.txt" 2>&1
  rc=$?
  case $rc in
    0) static=ok ;;
    1) static=FAILED ;;
  esac
  if [ "$verbose" = 1 ]; then
    if [ $rc -le 1 ]; then cat "$logs/$name.static.txt"; else echo "static evidence: not shown ($(tail -n 1 "$logs/$name.static.txt"))"; fi
    [ $rc -eq 1 ] && echo "static evidence: FAILED (a SHORT line above is a contract the GPU checks cannot see)"
  fi
  return 0
}

# speed_evidence NAME VERBOSE: the place for the student's kernel timed beside the course solution's
# on this GPU, in the rubric's words. Not measured by this script yet: it needs thresholds set
# above the run-to-run spread measured on the course's GPUs, which no run has measured so far.
speed_evidence() {
  [ "$2" = 1 ] && [ "$gpu" = passed ] && echo "speed beside the solution: not measured by this script yet"
  return 0
}

# run_exercise NAME VERBOSE: appends "NAME compiles host gpu" to $results; VERBOSE=1 explains failures.
run_exercise() {
  local name=$1 verbose=$2 compiles=ok host=- gpu=- static=- rc log
  configure
  log="$logs/$name"
  [ "$verbose" = 1 ] && echo "== exercise $name: building exercise_$name and its check =="
  if ! cmake --build "$build" --target "exercise_$name" "exercise_${name}_check" > "$log.build.txt" 2>&1; then
    compiles=FAILED
    if [ "$verbose" = 1 ]; then
      grep -E "error|Error" "$log.build.txt" | head -n 20
      echo "build: FAILED (full log: $log.build.txt)"
    fi
  else
    [ "$verbose" = 1 ] && echo "build: ok"
    if run_limited "$log.host.txt" "$build/exercise_${name}_check" --host; then host=ok; else host=FAILED; fi
    if [ "$verbose" = 1 ]; then
      if [ $host = ok ]; then echo "host checks: ok"
      else echo "host checks: FAILED. The first failing check:"; first_failure "$log.host.txt"; echo "(full output: $log.host.txt)"; fi
    fi
    run_limited "$log.gpu.txt" "$build/exercise_${name}_check" --gpu
    rc=$?
    case $rc in
      0) gpu=passed ;;
      77) gpu=skipped ;;
      124|137) gpu=timeout ;;
      *) gpu=failed ;;
    esac
    if [ "$verbose" = 1 ]; then
      case $gpu in
        passed) echo "GPU checks: passed" ;;
        skipped) echo "GPU checks: $(head -n 1 "$log.gpu.txt")" ;;
        timeout) echo "GPU checks: stopped after ${limit} s (a kernel that never finishes?). Output so far: $log.gpu.txt" ;;
        failed)
          echo "GPU checks: FAILED (exit code $rc). The first failing check:"
          first_failure "$log.gpu.txt"
          grep -E '^\[doctest\] (test cases|assertions)' "$log.gpu.txt"
          echo "(full output: $log.gpu.txt)" ;;
      esac
    fi
    static_evidence "$name" "$verbose"
    speed_evidence "$name" "$verbose"
  fi
  echo "$name $compiles $host $gpu $static" >> "$results"
}

# ---------------------------------------------------------------- command line
command=status target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --table-from) [ $# -ge 2 ] && [ -f "$2" ] || { echo "exercises.sh: --table-from needs a file" >&2; exit 2; }
                  print_table "$2"; exit $? ;;
    --build) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    status) command=status; shift ;;
    check) [ $# -ge 2 ] || { echo "exercises.sh: 'check' needs an exercise, e.g. 'check 02'" >&2; exit 2; }
           command=check; target=$2; shift 2 ;;
    *) echo "exercises.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

all=$(cd exercises 2>/dev/null && ls -d [0-9][0-9]_*/ 2>/dev/null | tr -d /)
if [ -z "$all" ]; then echo "exercises.sh: no exercises/NN_name folders here" >&2; exit 2; fi
logs="$build/exercise-logs"
mkdir -p "$logs"
results="$logs/results.txt"
: > "$results"

if [ "$command" = check ]; then
  name=$(printf '%s\n' $all | grep -E "^${target}(_|$)" | head -n 1)
  if [ -z "$name" ]; then
    echo "exercises.sh: no exercise '$target'; there are: $(echo $all)" >&2
    exit 2
  fi
  run_exercise "$name" 1
  echo
  print_table "$results"
  exit $?
fi

for name in $all; do
  echo "checking $name ..."
  run_exercise "$name" 0
done
echo
print_table "$results"
