#!/usr/bin/env bash
# exercises.sh — the student's loop: build an exercise, run its checks, see what is left to do.
#
#   scripts/exercises.sh                  every exercise, then a progress table (same as `status`)
#   scripts/exercises.sh status           the same
#   scripts/exercises.sh check NN         one exercise (NN = 01 .. 06, or its folder name): build it, lint it
#                                         (grading/ub_lint.py: undefined behaviour g++ -O3 sees in its device
#                                         code, which nvcc may silently delete), run its
#                                         host and GPU checks, and show the first failing check's message;
#                                         then the static facts of its kernels and, once the GPU checks
#                                         pass, its speed beside the course solution's on this GPU model and,
#                                         where the lesson is about them, its hardware counters (Nsight
#                                         Compute; EXERCISE_COUNTERS=0: not measured)
#   scripts/exercises.sh watch NN         `check NN` again on every save of exercises/NN_name/ (Ctrl-C stops;
#                                         --rounds N: stop after N checks)
#   scripts/exercises.sh hint NN          the exercise's next hint, one more each time (the ones already
#                                         shown are listed first; exercises/NN_name/.hints_shown counts them)
#   scripts/exercises.sh reset NN         put back the exercise as it was given (exercises/NN_name/main.cu);
#                                         your version is kept beside it as main.cu.backup-DATE-TIME, and
#                                         at a terminal you are asked first (--yes: do not ask)
#   scripts/exercises.sh --table-from F   only print the table for canned results (the course's own test)
# Options (before the command): --build DIR  build folder (default: build-exercises);
#                               -- ARGS      arguments for cmake's configure step, e.g. -DCMAKE_CUDA_ARCHITECTURES=90
#
# An exercise is "solved" when it compiles, its host checks pass, its GPU checks RAN and passed, and
# neither the lint nor a required rule of its rubric finds a fault the checks cannot see.
# Without a usable GPU its GPU checks are "skipped: no GPU", and it is not solved, however right it is.
# Exit code: 0 when every exercise asked about is solved, 1 when one is not, 2 for a bad command line
# or no Python 3 here (the table and the solved rule are grading/pipeline.py's; hint and reset need none).
# Each check runs with a time limit (EXERCISE_TIME_LIMIT seconds, default 600), so a kernel that never
# finishes costs a failed check, not a stuck terminal. Full logs: DIR/exercise-logs/.
set -uo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"  # before the cd below, for usage()
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$self"; }  # the comment block at the top, without its '# '

# ---------------------------------------------------------------- the table
# Input: one line per exercise, "name compiles host gpu [static [lint]]", where compiles is ok|FAILED, host is
# ok|FAILED|-, gpu is passed|failed|timeout|skipped|- ("-": not run, because it did not compile),
# static (optional) is ok|FAILED|-: FAILED when the compiled kernel breaks a contract its rubric
# marks required (grading/static_evidence.py), which the GPU checks cannot see, and lint (optional)
# is ok|FAILED|-: FAILED when GCC reports undefined behaviour in the device code (grading/ub_lint.py).
# The solved rule and the table are grading/pipeline.py's alone (the rule every grading tool
# shares): `python3 -m grading.pipeline table FILE` prints the table, exit 0 when all are solved.
print_table() {
  need_python
  python3 -m grading.pipeline table "$1"
}
# The table, "solved" and the checks' tools are Python: without python3 (or the course's
# grading/pipeline.py) say so in one line and exit 2, before anything is built.
need_python() {
  command -v python3 > /dev/null && [ -f grading/pipeline.py ] && return 0
  echo "exercises.sh: needs Python 3 (python3 on PATH, and the course's grading/pipeline.py): the progress table and what counts as solved come from grading/pipeline.py" >&2
  exit 2
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
# solution's. Sets $static: ok, FAILED (a required rule fell short) or - (no rubric or no
# cuobjdump: nothing judged, and nothing held against the exercise).
static_evidence() {
  local name=$1 verbose=$2 rubric="lessons/$1/rubric.json" tool=grading/static_evidence.py rc
  static=-
  [ -f "$rubric" ] && [ -f "$tool" ] || return 0
  grep -q '"rules"' "$rubric" || return 0  # a rubric of speed rules only
  # cuobjdump: on PATH, or beside the nvcc this build uses (CMake found it, PATH need not have it).
  if [ -z "${CUOBJDUMP:-}" ] && ! command -v cuobjdump > /dev/null; then
    local nvcc
    nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt" 2> /dev/null | head -n 1)
    [ -n "$nvcc" ] && [ -x "$(dirname "$nvcc")/cuobjdump" ] && export CUOBJDUMP="$(dirname "$nvcc")/cuobjdump"
  fi
  python3 -m grading.static_evidence check "$rubric" "$build/exercise_$name" > "$logs/$name.static.txt" 2>&1
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

# ub_lint NAME VERBOSE: grading/ub_lint.py on the exercise's main.cu: its device code compiled as host
# C++ by g++ -O3, for undefined behaviour nvcc may silently delete (a loop that indexes one past a
# thread's register array), which no run of the kernel can show. Sets $lint: ok, FAILED (GCC reported
# it: the grader fails the exercise too) or - (not applicable: code it cannot render as host C++,
# or no g++; nothing held against the exercise).
ub_lint() {
  local name=$1 verbose=$2 tool=grading/ub_lint.py rc
  lint=-
  [ -f "$tool" ] || return 0
  run_limited "$logs/$name.lint.txt" python3 -m grading.ub_lint "exercises/$name/main.cu"
  rc=$?
  case $rc in
    0) lint=ok ;;
    1) lint=FAILED ;;
  esac
  if [ "$verbose" = 1 ]; then
    case $rc in
      0) echo "lint: ok (no undefined behaviour g++ -O3 can see in the device code)" ;;
      1) echo "lint: FAILED. Undefined behaviour, which nvcc may silently delete, so that no check can see it:"
         sed 's/^/  /' "$logs/$name.lint.txt" ;;
      *) echo "lint: $(tail -n 1 "$logs/$name.lint.txt")" ;;
    esac
  fi
  return 0
}

# speed_evidence NAME VERBOSE: the student's kernel timed beside the course solution's on this GPU,
# in the rubric's words. Runs the check's `speed: ...` test cases (each times the exercise's kernel
# and the lesson's ceiling, a copy / CUB / cuBLAS, in the same process) with --evidence, and judges
# those lines with grading/evidence.py against the solution's figures the course recorded for this
# GPU (results/<gpu>/evidence/solution.csv). Only after the GPU checks passed: a wrong kernel's time
# means nothing. Without a GPU it says the speed is not measured, and shows no number.
# A speed test case that fails (its output is checked too) makes the GPU checks FAILED.
speed_evidence() {
  local name=$1 verbose=$2 rubric="lessons/$1/rubric.json" tool=grading/evidence.py evidence rc
  [ "$verbose" = 1 ] || return 0
  case "$gpu" in
    skipped) echo "speed: not measured (no usable GPU here; the speed test cases need one)"; return 0 ;;
    passed) ;;
    *) echo "speed: not measured (the GPU checks must pass first: a wrong kernel's time means nothing)"; return 0 ;;
  esac
  evidence="$logs/$name.evidence.jsonl"
  : > "$evidence"
  run_limited "$logs/$name.speed.txt" "$build/exercise_${name}_check" --gpu "--test-case=speed: *" --evidence "$evidence"
  rc=$?
  case $rc in
    0) ;;
    77) echo "speed: not measured ($(head -n 1 "$logs/$name.speed.txt"))"; return 0 ;;
    124|137) gpu=timeout; echo "speed: stopped after ${limit} s (output so far: $logs/$name.speed.txt)"; return 0 ;;
    *) gpu=failed
       echo "speed: its test case FAILED (exit code $rc; it checks the timed kernel's output too). The first failing check:"
       first_failure "$logs/$name.speed.txt"
       echo "(full output: $logs/$name.speed.txt)"
       return 0 ;;
  esac
  if [ ! -s "$evidence" ]; then echo "speed: not measured (this check has no speed test case)"; return 0; fi
  if [ ! -f "$tool" ] || [ ! -f "$rubric" ]; then
    echo "speed (not judged here: no $([ -f "$rubric" ] && echo "grading/evidence.py" || echo "$rubric")):"
    grep '^speed ' "$logs/$name.speed.txt"
    return 0
  fi
  if ! python3 -m grading.evidence judge "$rubric" --lines "$evidence" > "$logs/$name.speed.json" 2> "$logs/$name.speed.err"; then
    if [ ! -s "$logs/$name.speed.json" ]; then
      echo "speed: not judged ($(tail -n 1 "$logs/$name.speed.err"))"
      grep '^speed ' "$logs/$name.speed.txt"
      return 0
    fi
  fi
  python3 - "$logs/$name.speed.json" "$evidence" <<'PY'
import json, sys
result = json.load(open(sys.argv[1], encoding="utf-8"))
gpus = set()
for line in open(sys.argv[2], encoding="utf-8", errors="replace"):
    try:
        gpus.add(json.loads(line).get("gpu") or "")
    except (ValueError, AttributeError):
        pass
rows = [r for r in result.get("rules", []) if r.get("kind") == "speed"]
print("speed beside the course solution%s:" % (" on " + ", ".join(sorted(g for g in gpus if g)) if any(gpus) else ""))
if not rows:
    print("  not judged: the rubric has no speed rule")
mark = {"met": "ok", "short": "short", "not measured": "-"}
for r in rows:
    yours = ""
    if r.get("ms") and r.get("ceiling_ms"):
        yours = "%s %.3f ms, %s %.3f ms: " % (r.get("kernel", "your kernel"), r["ms"], r.get("ceiling", "ceiling"), r["ceiling_ms"])
    print("  [%-5s] %s: %s%s" % (mark.get(r.get("status"), "-"), r.get("exercise", "?"), yours, r.get("words", "")))
PY
  return 0
}

# counters_evidence NAME VERBOSE: where the lesson is about a hardware counter (its rubric has
# "counters" rules), grading/counters.py runs the exercise's check once under Nsight Compute and
# shows the counters in the rubric's words, or why they cannot be read and what stands in for them.
# Shown only by `check NN` after the GPU checks passed; never changes "solved". EXERCISE_COUNTERS=0
# leaves it out (ncu takes a few seconds per lesson).
counters_evidence() {
  local name=$1 verbose=$2 rubric="lessons/$1/rubric.json" tool=grading/counters.py
  [ "$verbose" = 1 ] && [ "$gpu" = passed ] && [ "${EXERCISE_COUNTERS:-1}" != 0 ] || return 0
  [ -f "$rubric" ] && grep -q '"counters"' "$rubric" || return 0
  if [ ! -f "$tool" ]; then
    echo "counters: not shown (no $tool here)"; return 0
  fi
  run_limited "$logs/$name.counters.txt" python3 -m grading.counters measure "$build/exercise_${name}_check" --rubric "$rubric" --timeout 120
  case $? in
    0) cat "$logs/$name.counters.txt" ;;
    124|137) echo "counters: stopped after ${limit} s (output so far: $logs/$name.counters.txt)" ;;
    *) echo "counters: not shown ($(tail -n 1 "$logs/$name.counters.txt"))" ;;
  esac
  return 0
}

# run_exercise NAME VERBOSE: appends "NAME compiles host gpu" to $results; VERBOSE=1 explains failures.
run_exercise() {
  local name=$1 verbose=$2 compiles=ok host=- gpu=- static=- lint=- rc log
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
    ub_lint "$name" "$verbose"
    if run_limited "$log.host.txt" "$build/exercise_${name}_check" --host; then host=ok; else host=FAILED; fi
    if [ "$verbose" = 1 ]; then
      if [ $host = ok ]; then echo "host checks: ok"
      else echo "host checks: FAILED. The first failing check:"; first_failure "$log.host.txt"; echo "(full output: $log.host.txt)"; fi
    fi
    run_limited "$log.gpu.txt" "$build/exercise_${name}_check" --gpu "--test-case-exclude=speed: *"
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
    counters_evidence "$name" "$verbose"
  fi
  echo "$name $compiles $host $gpu $static $lint" >> "$results"
}

# ---------------------------------------------------------------- hint, reset, watch

# show_hint NAME: every hint already shown, then the next one; remembers how many in .hints_shown.
show_hint() {
  local name=$1 file="exercises/$1/hints.txt" state="exercises/$1/.hints_shown" shown=0 total i=0 line
  if [ ! -f "$file" ]; then
    echo "exercise $name has no hints (no exercises/$name/hints.txt); its README.md and TODO comments say what to write"
    return 0
  fi
  total=$(grep -cv '^#' "$file")
  if [ -f "$state" ]; then shown=$(tr -cd '0-9' < "$state"); shown=${shown:-0}; fi
  [ "$shown" -gt "$total" ] && shown=$total
  if [ "$shown" -ge "$total" ]; then
    echo "all $total hints of $name are shown:"
  else
    shown=$((shown + 1))
  fi
  while IFS= read -r line; do
    case "$line" in '#'*) continue ;; esac
    i=$((i + 1))
    [ $i -gt "$shown" ] && break
    if [ $i -eq "$shown" ] && [ "$shown" -le "$total" ]; then echo "hint $i of $total (${line%%: *}): ${line#*: }"
    else echo "  hint $i (${line%%: *}): ${line#*: }"; fi
  done < "$file"
  echo "$shown" > "$state"
  [ "$shown" -lt "$total" ] && echo "($((total - shown)) more: run 'scripts/exercises.sh hint ${name%%_*}' again)"
  return 0
}

# original_exercise NAME OUT: writes the exercise as it was given to OUT, from the first source that
# has it: the lesson (where the course's solutions are, generated again), the pack's own copy
# (exercises/NAME/.original_main.cu), or the last git commit. Fails when none has it.
original_exercise() {
  local name=$1 out=$2
  if [ -f "lessons/$name/main.cu" ] && [ -f scripts/make_exercises.cmake ]; then
    cmake -DLESSON="$name" -DOUTPUT="$out" -P scripts/make_exercises.cmake > /dev/null 2>&1 && return 0
  fi
  if [ -f "exercises/$name/.original_main.cu" ]; then
    cp "exercises/$name/.original_main.cu" "$out" && return 0
  fi
  if command -v git > /dev/null && git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git show "HEAD:./exercises/$name/main.cu" > "$out" 2> /dev/null && return 0
  fi
  return 1
}

reset_exercise() {
  local name=$1 file="exercises/$1/main.cu" original backup answer
  original=$(mktemp) || exit 1
  if ! original_exercise "$name" "$original"; then
    rm -f "$original"
    echo "exercises.sh: cannot find exercise $name as it was given (no lesson, no exercises/$name/.original_main.cu, no git history); nothing changed" >&2
    exit 1
  fi
  if [ -f "$file" ] && cmp -s "$original" "$file"; then
    rm -f "$original"
    echo "exercises/$name/main.cu is already the exercise as it was given: nothing to reset"
    return 0
  fi
  backup="$file.backup-$(date +%Y%m%d-%H%M%S)"
  [ -e "$backup" ] && backup="$backup-$$"
  if [ "$assume_yes" != 1 ] && [ -t 0 ]; then
    printf 'Replace exercises/%s/main.cu with the exercise as it was given? Yours is kept as %s [y/N] ' "$name" "$backup"
    read -r answer || answer=""
    case "$answer" in
      y|Y|yes|YES) ;;
      *) rm -f "$original"; echo "nothing changed"; return 0 ;;
    esac
  fi
  if [ -f "$file" ]; then
    cp -p "$file" "$backup" || { rm -f "$original"; echo "exercises.sh: could not back up $file; nothing changed" >&2; exit 1; }
    echo "your version: $backup"
  fi
  cp "$original" "$file" && rm -f "$original"
  echo "exercises/$name/main.cu is the exercise as it was given again"
  return 0
}

# A fingerprint of the exercise's sources: their names, sizes and contents (not mtimes, which an
# editor saving twice in one second, or restoring a file, would leave unchanged or change for nothing).
fingerprint() {
  find "exercises/$1" -maxdepth 1 -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.h' -o -name '*.hpp' \) \
    -print 2>/dev/null | LC_ALL=C sort | while IFS= read -r f; do printf '%s ' "$f"; cksum < "$f"; done
}

# watch_exercise NAME ROUNDS: check, wait for a saved change, check again... ROUNDS > 0 stops after
# that many checks (for scripts and tests); 0 runs until Ctrl-C. inotifywait (inotify-tools), where
# it is installed, wakes the loop at once; otherwise it looks every EXERCISE_WATCH_INTERVAL s (1).
watch_exercise() {
  local name=$1 rounds=$2 n=0 before interval=${EXERCISE_WATCH_INTERVAL:-1}
  trap 'echo; echo "watch: stopped"; exit 0' INT TERM
  while :; do
    before=$(fingerprint "$name")
    : > "$results"
    run_exercise "$name" 1
    echo
    print_table "$results"
    n=$((n + 1))
    if [ "$rounds" -gt 0 ] && [ $n -ge "$rounds" ]; then return 0; fi
    echo "watching exercises/$name/ : save a change to check again (Ctrl-C stops)"
    while [ "$(fingerprint "$name")" = "$before" ]; do
      if command -v inotifywait > /dev/null; then
        inotifywait -qq -t 5 -e close_write,moved_to,create,modify "exercises/$name" > /dev/null 2>&1
      else
        sleep "$interval"
      fi
    done
    echo
    echo "== a change in exercises/$name/: checking again =="
  done
}

# ---------------------------------------------------------------- command line
command=status target="" assume_yes=0 rounds=0
while [ $# -gt 0 ]; do
  case "$1" in
    --table-from) [ $# -ge 2 ] && [ -f "$2" ] || { echo "exercises.sh: --table-from needs a file" >&2; exit 2; }
                  print_table "$2"; exit $? ;;
    --build) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    status) command=status; shift ;;
    check|watch|hint|reset)
           [ $# -ge 2 ] || { echo "exercises.sh: '$1' needs an exercise, e.g. '$1 02'" >&2; exit 2; }
           command=$1; target=$2; shift 2 ;;
    --yes) assume_yes=1; shift ;;
    --rounds) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || { echo "exercises.sh: --rounds needs a number" >&2; exit 2; }
              rounds=$2; shift 2 ;;
    *) echo "exercises.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

all=$(cd exercises 2>/dev/null && ls -d [0-9][0-9]_*/ 2>/dev/null | tr -d /)
if [ -z "$all" ]; then echo "exercises.sh: no exercises/NN_name folders here" >&2; exit 2; fi
if [ "$command" != status ]; then
  name=""
  [[ "$target" =~ ^[0-9a-z_]+$ ]] && name=$(printf '%s\n' $all | grep -E "^${target}(_|$)" | head -n 1)
  if [ -z "$name" ]; then
    echo "exercises.sh: no exercise '$target'; there are: $(echo $all)" >&2
    exit 2
  fi
fi
case "$command" in
  hint) show_hint "$name"; exit $? ;;
  reset) reset_exercise "$name"; exit $? ;;
esac
need_python
logs="$build/exercise-logs"
mkdir -p "$logs"
results="$logs/results.txt"
: > "$results"

if [ "$command" = watch ]; then
  watch_exercise "$name" "$rounds"
  print_table "$results" > /dev/null
  exit $?
fi
if [ "$command" = check ]; then
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
