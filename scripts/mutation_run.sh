#!/usr/bin/env bash
# mutation_run.sh — build and grade every mutant of the lessons' EXERCISE regions (grading/mutants.py:
# one-line mistakes, each exercise's stub, and the region-level mistakes), and report which layer of
# default grading catches each, in order: compile, lint (grading/ub_lint.py: undefined behaviour
# GCC sees in the device code compiled as host C++, on the CPU), host checks, GPU checks, memcheck (the --small
# subset), speed (the `speed: ...` test cases judged by grading/evidence.py against the course
# solution's speed measured in the same run) and static rules (the rubric's facts of the compiled
# kernels, grading/static_evidence.py). Meant for a machine with a GPU; the course's own files are
# never changed (it works on a copy).
#
#   scripts/mutation_run.sh --out DIR [options] [-- cmake configure args]
#     --out DIR          where the results go (created): mutants.csv, summary.txt, solution.csv, env.txt,
#                        and logs/ (the course code's and the uncaught mutants' logs; index.txt)
#     --deadline S       a hard budget of S seconds from the start: no mutant or layer is started after
#                        it (a running one is stopped), and what is done is written; 0 (default): none
#     --lesson NN        only that lesson's mutants (repeatable; default: all)
#     --only ID          only that mutant (repeatable), e.g. 04_reduction:04.shuffle+2:half_mask:0
#     --jobs N           parallel compile jobs (default: the cores less two, which the checks use)
#     --memcheck-jobs N  memcheck runs at once (default 4; they judge correctness, not time)
#     --solution-every N the course solution's speed cases run before the mutants build, again before
#                        the first mutant's speed case, then once each time the mutants measured
#                        pass another N of the list (default 20), and at the end
#     --no-memcheck      leave the memcheck layer out
#     --no-lint          leave the lint layer out
#     --work DIR         scratch folder (default: build-mutants): DIR/src, DIR/build, DIR/logs
#     --dry-run          list the mutants and the plan; build and run nothing (no GPU or compiler needed)
# How it is spent: one CMake tree holds the lessons and every mutant (targets mutNNN_check:
# the lesson's check compiled against the mutant's main.cu, which also holds the kernels the static rules read), built by one ninja with
# -k 0 in the background, while the GPU checks of each mutant already built run one at a time
# (up to the first failed assertion), and memcheck runs (a few at once) on each mutant they passed.
# Then the static rules (on the CPU) and last, on a quiet machine, the speed case of the region
# each surviving mutant changes, one at a time, between the solution's own speed rounds. The solution's ratio to its own median over the rounds is the
# run-to-run spread a speed threshold must exceed (summary.txt).
# The course's own code goes through every layer first; where a layer catches it, summary.txt says so
# on its first lines (the run goes on: that layer's verdicts on the lesson's mutants mean nothing).
# Each run of a check is limited to MUTANT_TIME_LIMIT seconds (default 60; under memcheck
# MEMCHECK_TIME_LIMIT, default 180): a hang is "timeout", which catches the mutant.
# Mutants named in grading/equivalent_mutants.txt (`id: why`) are reported, not counted.
# Exit code: 0 when the run completed (whatever survived; also when the deadline cut it, which
# summary.txt says), 1 when it could not run, 2 for a bad command line.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# course_py TREE MODULE ARGS...: the course tool grading/MODULE.py of the course copy TREE, run as a
# module of its package from TREE (the tools import each other: python3 -m, absolute paths only).
course_py() { local tree=$1 module=$2; shift 2; (cd "$tree" && python3 -m "grading.$module" "$@"); }
usage() { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; }
die() { echo "mutation_run.sh: $*" >&2; exit 1; }

command_line="$*"
memcheck_missing=0
lessons_wanted=() only=() memcheck=1 lint=1 work=build-mutants out="" dry=0 extra=() deadline=0 every=20 memcheck_jobs=4
jobs=$(( $(nproc 2> /dev/null || echo 4) - 2 ))  # two cores left for the checks that run meanwhile
number() { [[ "$2" =~ ^[0-9]+$ ]] || { echo "mutation_run.sh: $1 needs a number, not '$2'" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --lesson|--only|--work|--out|--deadline|--jobs|--memcheck-jobs|--solution-every)
      [ $# -ge 2 ] || { echo "mutation_run.sh: $1 needs a value (see --help)" >&2; exit 2; } ;;&
    --lesson) lessons_wanted+=("$2"); shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --deadline) number "$1" "$2"; deadline=$2; shift 2 ;;
    --jobs) number "$1" "$2"; jobs=$2; shift 2 ;;
    --memcheck-jobs) number "$1" "$2"; memcheck_jobs=$2; shift 2 ;;
    --solution-every) number "$1" "$2"; every=$2; [ "$every" -gt 0 ] || every=20; shift 2 ;;
    --memcheck) shift ;;  # the default now; kept for old command lines
    --no-memcheck) memcheck=0; shift ;;
    --no-lint) lint=0; shift ;;
    --dry-run) dry=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "mutation_run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ $dry -eq 1 ] || [ -n "$out" ] || { echo "mutation_run.sh: --out DIR is needed (see --help)" >&2; exit 2; }
[ "$jobs" -ge 1 ] || jobs=1
[ "$memcheck_jobs" -ge 1 ] || memcheck_jobs=1
command -v python3 > /dev/null || die "python3 is needed"
# cuobjdump (the static rules) beside nvcc, where it is not on PATH itself.
if [ -z "${CUOBJDUMP:-}" ] && ! command -v cuobjdump > /dev/null && command -v nvcc > /dev/null \
   && [ -x "$(dirname "$(command -v nvcc)")/cuobjdump" ]; then
  export CUOBJDUMP="$(dirname "$(command -v nvcc)")/cuobjdump"
fi
# compute-sanitizer likewise; without one the memcheck layer is off (and summary.txt says so), never
# "caught" by a missing program.
sanitizer=$(command -v compute-sanitizer || true)
if [ -z "$sanitizer" ] && command -v nvcc > /dev/null && [ -x "$(dirname "$(command -v nvcc)")/compute-sanitizer" ]; then
  sanitizer="$(dirname "$(command -v nvcc)")/compute-sanitizer"
fi
if [ $memcheck -eq 1 ] && [ -z "$sanitizer" ] && [ $dry -eq 0 ]; then
  echo "note: no compute-sanitizer on PATH or beside nvcc: the memcheck layer is off"
  memcheck=0 memcheck_missing=1
fi
start=$(date +%s)  # not $SECONDS: the memcheck and static jobs run in child shells, with their own
limit=${MUTANT_TIME_LIMIT:-60}
memcheck_limit=${MEMCHECK_TIME_LIMIT:-180}

# ---- the mutants: "id<TAB>rule<TAB>lesson", in the generator's order
list=$(course_py "$root" mutants list) || die "grading/mutants.py list failed"
ids=() rules=() lessons_of=()
while IFS=$'\t' read -r id _; do
  [ -n "$id" ] || continue
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
  ids+=("$id"); rules+=("$(echo "$id" | cut -d: -f3)"); lessons_of+=("$lesson")
done <<< "$list"
n=${#ids[@]}
[ "$n" -gt 0 ] || { echo "mutation_run.sh: no mutant matches" >&2; exit 2; }
lessons=$(printf '%s\n' "${lessons_of[@]}" | sort -u)
equivalents="$root/grading/equivalent_mutants.txt"
is_equivalent() { [ -f "$equivalents" ] && grep -q "^$1:" "$equivalents"; }

if [ $dry -eq 1 ]; then
  stubs=0 region=0 equiv=0
  for i in "${!ids[@]}"; do
    case "${rules[$i]}" in stub) stubs=$((stubs + 1)) ;; naive_in_tiled|other_coalescing) region=$((region + 1)) ;; esac
    is_equivalent "${ids[$i]}" && equiv=$((equiv + 1))
  done
  echo "$n mutants of: $(echo $lessons)"
  echo "  $((n - stubs - region)) one-line, $stubs exercise stubs, $region other region mutants; $equiv listed as equivalent (not counted)"
  echo "build: one CMake tree ($work/build) with the lessons and each mutant as target mutNNN_check, ninja -k 0 -j $jobs"
  echo "solution: every layer on the course's own code first; its speed cases before the mutants build, before the first mutant's, every $every mutants of the list, and at the end"
  for i in "${!ids[@]}"; do
    lesson=${lessons_of[$i]}
    printf 'mut%03d %s: compile;%s host; GPU checks%s; speed; static%s%s\n' "$i" "${ids[$i]}" \
      "$([ $lint -eq 1 ] && echo " lint;")" "$([ $memcheck -eq 1 ] && echo "; memcheck --small")" \
      "$([ -f "$root/lessons/$lesson/rubric.json" ] || echo " (no rubric: not judged)")" \
      "$(is_equivalent "${ids[$i]}" && echo " [equivalent]")"
  done
  echo "deadline: $([ "$deadline" -gt 0 ] && echo "$deadline s" || echo none); outputs: ${out:-DIR}/mutants.csv summary.txt solution.csv env.txt"
  exit 0
fi

left() { if [ "$deadline" -gt 0 ]; then echo $((deadline - ($(date +%s) - start))); else echo 1000000; fi; }
past_deadline() { [ "$(left)" -le 0 ]; }
limited() {  # limited COMMAND...: the command under the per-run limit, cut to what the deadline leaves
  local t=$limit l
  l=$(left)
  [ "$l" -lt "$t" ] && t=$l
  [ "$t" -ge 1 ] || return 124
  timeout -k 5 "$t" "$@"
}

mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
case "$work" in /*) ;; *) work="$root/$work" ;; esac
logs=$work/logs state=$work/state build=$work/build
rm -rf "$state" "$logs" "$work/solution_problems.txt" && mkdir -p "$state" "$logs" || die "cannot create $work"

# ---- env.txt: what ran where
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$root" rev-parse HEAD 2> /dev/null || echo unknown)$(git -C "$root" status --porcelain 2> /dev/null | grep -q . && echo ' (with uncommitted changes)')"
  echo "command: scripts/mutation_run.sh $command_line"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2> /dev/null | head -n 1 || echo none)"
  echo "nvcc: $(nvcc --version 2> /dev/null | grep -i release || echo none)"
  echo "compute-sanitizer: ${sanitizer:-none} $("${sanitizer:-false}" --version 2> /dev/null | grep -i version | head -n 1)$([ $memcheck_missing -eq 1 ] && echo " (MEMCHECK LAYER OFF: none found)")"
  echo "cmake: $(cmake --version | head -n 1)"
  echo "g++ (the lint): $(g++ --version 2> /dev/null | head -n 1 || echo none)$([ $lint -eq 0 ] && echo " (LINT LAYER OFF: --no-lint)")"
  echo "cores: $(nproc 2> /dev/null); compile jobs: $jobs; memcheck jobs: $memcheck_jobs; deadline: $deadline s; check time limit: $limit s (memcheck: $memcheck_limit s)"
  echo "mutants: $n"
} > "$out/env.txt"
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -n 1)

# ---- a copy of the course, with every mutant's main.cu and a target for each
echo "copying the course to $work/src ..."
rm -rf "$work/src" && mkdir -p "$work/src" || die "cannot create $work/src"
(cd "$root" && tar --exclude='./build*' --exclude='./.git' --exclude='./.wt' --exclude='./.deps' -cf - .) \
  | (cd "$work/src" && tar -xf -) || die "could not copy the course"
printf '%s\n' "${ids[@]}" > "$work/ids.txt"
course_py "$root" mutation_report write "$root" "$work/src" "$work/ids.txt" || die "could not write the mutants"
mapfile -t regions_of < "$work/src/mutants/regions.txt"
echo "configuring $build ..."
if ! (cd "$work/src" && cmake --preset default -B "$build" "${extra[@]}") > "$logs/configure.txt" 2>&1; then
  tail -n 20 "$logs/configure.txt"; die "configure failed ($logs/configure.txt)"
fi
rm -rf "$build/ready" && mkdir -p "$build/ready"

# ---- the layers. Each writes its outcome to $state/NAME.LAYER (NAME: mutNNN or solution.LESSON).
# run_checks NAME CHECK: host, then the GPU checks without the speed cases.
run_checks() {
  local name=$1 check=$2 rc
  limited "$check" --host > "$logs/$name.host.txt" 2>&1
  rc=$?
  case $rc in 0) echo ok ;; 124|137) echo timeout ;; *) echo FAILED ;; esac > "$state/$name.host"
  if [ $rc -ne 0 ]; then echo - > "$state/$name.gpu"; return; fi
  # The first failed assertion decides (--abort-after=1): a caught mutant costs no more GPU time.
  limited "$check" --gpu --test-case-exclude='speed: *' --abort-after=1 > "$logs/$name.gpu.txt" 2>&1
  rc=$?
  case $rc in 0) echo passed ;; 77) echo skipped ;; 124|137) echo timeout ;; *) echo FAILED ;; esac > "$state/$name.gpu"
}
# run_memcheck NAME CHECK: the --small subset under compute-sanitizer's memcheck.
run_memcheck() {
  local name=$1 check=$2 rc
  if past_deadline; then echo "not run (deadline)" > "$state/$name.memcheck"; return; fi
  limit=$memcheck_limit limited "$sanitizer" --tool memcheck --error-exitcode 99 "$check" --gpu --small > "$logs/$name.memcheck.txt" 2>&1
  rc=$?
  case $rc in 0) echo clean ;; 77) echo skipped ;; 99) echo ERROR ;; 124|137) echo timeout ;; *) echo FAILED ;; esac > "$state/$name.memcheck"
}
# run_static NAME LESSON PROGRAM: the rubric's static rules on the compiled program.
run_static() {
  local name=$1 lesson=$2 program=$3 rubric="$work/src/lessons/$2/rubric.json" rc
  if [ ! -f "$rubric" ]; then echo "-" > "$state/$name.static"; return; fi
  if past_deadline; then echo "not run (deadline)" > "$state/$name.static"; return; fi
  course_py "$work/src" static_evidence check "$rubric" "$program" > "$logs/$name.static.txt" 2>&1
  rc=$?
  local words
  words=$(grep -E '^\s+\[(SHORT|short)' "$logs/$name.static.txt" | head -n 1 | sed 's/^ *//; s/  */ /g')
  case $rc in
    1) echo "CONTRACT $words" ;;
    0) if [ -n "$words" ]; then echo "SHORT $words"; else echo ok; fi ;;
    *) echo "not judged: $(tail -n 1 "$logs/$name.static.txt")" ;;
  esac > "$state/$name.static"
}
# run_lint NAME SOURCE: grading/ub_lint.py on the main.cu (g++ -O3 on its device code as host C++).
run_lint() {
  local name=$1 source=$2
  if past_deadline; then echo "not run (deadline)" > "$state/$name.lint"; return; fi
  (cd "$work/src" && limited python3 -m grading.ub_lint --json "$source") > "$logs/$name.lint.txt" 2>&1
  course_py "$work/src" mutation_report lint "$logs/$name.lint.txt" > "$state/$name.lint"
}
export -f run_static run_lint limited left past_deadline course_py
export state logs limit deadline start work

# solution_round: the speed cases of every lesson's own code, appended to $out/solution.csv.
round=0
solution_round() {
  round=$((round + 1))
  local lesson f="$work/solution.round$round.jsonl"
  : > "$f"
  for lesson in $lessons; do
    past_deadline && break
    limited "$build/${lesson}_check" --gpu --test-case='speed: *' --evidence "$f" > "$logs/solution.$lesson.speed$round.txt" 2>&1
  done
  course_py "$root" mutation_report solution-rows "$f" "$out/solution.csv" "$gpu_name"
}
# run_speed NAME LESSON CHECK REGION: the speed case of the exercise region the mutant changes
# (all of the lesson's when it is not known), judged against this run's solution rounds.
run_speed() {
  local name=$1 lesson=$2 check=$3 region=${4:--} rc f="$logs/$1.speed.jsonl" rubric="$work/src/lessons/$2/rubric.json"
  local cases='speed: *'
  [ "$region" != - ] && cases="speed: $region"
  : > "$f"
  if past_deadline; then echo "not run (deadline)" > "$state/$name.speed"; return; fi
  limited "$check" --gpu --test-case="$cases" --evidence "$f" > "$logs/$name.speed.txt" 2>&1
  rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo timeout > "$state/$name.speed"; return; fi
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then echo FAILED > "$state/$name.speed"; return; fi
  if [ ! -f "$work/src/grading/evidence.py" ] || [ ! -f "$rubric" ]; then echo "not judged (no grading/evidence.py or rubric)" > "$state/$name.speed"; return; fi
  if [ ! -s "$f" ]; then echo "not measured (no speed case ran)" > "$state/$name.speed"; return; fi
  course_py "$work/src" evidence judge "$rubric" --lines "$f" --solutions "$out/solution.csv" > "$logs/$name.speed.json" 2> "$logs/$name.speed.err"
  course_py "$root" mutation_report speed "$logs/$name.speed.json" > "$state/$name.speed"
}

# ---- the course's own code first
solution_targets=()
for lesson in $lessons; do solution_targets+=("${lesson}_check"); done
echo "building the course's own lessons: $(echo $lessons) ..."
timeout -k 5 "$(left)" cmake --build "$build" -j "$jobs" --target "${solution_targets[@]}" > "$logs/solution.build.txt" 2>&1
case $? in
  0) ;;
  124|137) die "the deadline came while the course's own code was building ($logs/solution.build.txt)" ;;
  *) tail -n 30 "$logs/solution.build.txt"; die "the course's own code does not build ($logs/solution.build.txt)" ;;
esac
# The course solution's speed, first, on a quiet machine (before the mutants build): whatever the
# deadline cuts later, solution.csv has this round.
rm -f "$out/solution.csv"
echo "the course solution's speed cases (round 1) ..."
solution_round
# The mutants build in the background from here on, while the course's code and then each built
# mutant run their checks (correctness does not mind a busy CPU; the speed cases run later).
mutant_targets=()
for i in "${!ids[@]}"; do mutant_targets+=("$(printf 'mut%03d_ready' "$i")"); done
build_started=$SECONDS
cmake --build "$build" -j "$jobs" --target "${mutant_targets[@]}" -- -k 0 > "$logs/mutants.build.txt" 2>&1 &
builder=$!
kill_tree() {  # kill_tree PID: that process and everything it started (ninja, nvcc), children first
  local child
  for child in $(ps -o pid= --ppid "$1" 2> /dev/null); do kill_tree "$child"; done
  kill "$1" 2> /dev/null
}
stop_builder() { kill -0 "$builder" 2> /dev/null && kill_tree "$builder"; wait "$builder" 2> /dev/null; }
trap 'stop_builder; exit 130' INT TERM

# The lint of every mutant (on the CPU, two at a time), beside the checks below; the report waits for it.
linter=""
if [ $lint -eq 1 ]; then
  for i in "${!ids[@]}"; do printf 'mut%03d %s\n' "$i" "$work/src/mutants/$(printf 'mut%03d' "$i")/main.cu"; done \
    | xargs -r -P 2 -L 1 bash -c 'run_lint "$@"' _ &
  linter=$!
fi

echo "checking the course's own code (every layer must pass it, or that layer's verdicts mean nothing) ..."
no_gpu=0
for lesson in $lessons; do
  name=solution.$lesson
  [ $lint -eq 1 ] && run_lint "$name" "$work/src/lessons/$lesson/main.cu"
  run_checks "$name" "$build/${lesson}_check"
  gpu=$(cat "$state/$name.gpu")
  [ "$gpu" = skipped ] && no_gpu=1
  if [ $memcheck -eq 1 ] && [ "$gpu" = passed ]; then run_memcheck "$name" "$build/${lesson}_check"; fi
  run_static "$name" "$lesson" "$build/${lesson}_check"
  bad=""
  [ "$(cat "$state/$name.host")" = ok ] || bad=host
  case "$(cat "$state/$name.lint" 2> /dev/null || echo -)" in UB*) bad="${bad:+$bad, }lint ($(cat "$state/$name.lint"))" ;; esac
  case "$gpu" in passed|skipped) ;; *) bad="${bad:+$bad, }GPU checks ($gpu)" ;; esac
  [ -f "$state/$name.memcheck" ] && [ "$(cat "$state/$name.memcheck")" != clean ] && bad="${bad:+$bad, }memcheck ($(cat "$state/$name.memcheck"))"
  case "$(cat "$state/$name.static")" in ok|-|"not judged"*) ;; *) bad="${bad:+$bad, }static ($(cat "$state/$name.static"))" ;; esac
  if [ -n "$bad" ]; then
    # Not a stop: one GPU call should still measure the rest. summary.txt says it first.
    echo "lesson $lesson: caught by $bad (logs: $logs/$name.*)" >> "$work/solution_problems.txt"
    echo "WARNING: lesson $lesson's own code is caught by $bad here: that layer says nothing about its mutants"
  fi
done
[ $no_gpu -eq 1 ] && echo "note: no usable GPU: GPU checks, memcheck and speed are skipped; this run measures compile, host and static only"

# ---- compile, host and GPU checks: each mutant as soon as ninja has built it
echo "checking each mutant as it is built ($n mutants, $jobs compile jobs) ..."
pending=("${!ids[@]}")
done_count=0
memcheckers=()
memcheck_slot() {  # wait until fewer than --memcheck-jobs memcheck runs are going
  local running pid
  while :; do
    running=()
    for pid in "${memcheckers[@]+"${memcheckers[@]}"}"; do kill -0 "$pid" 2> /dev/null && running+=("$pid"); done
    memcheckers=("${running[@]+"${running[@]}"}")
    [ ${#memcheckers[@]} -lt "$memcheck_jobs" ] && return
    sleep 0.5
  done
}
while [ ${#pending[@]} -gt 0 ]; do
  builder_done=0
  kill -0 "$builder" 2> /dev/null || builder_done=1
  progressed=0 still=()
  for i in "${pending[@]}"; do
    name=$(printf 'mut%03d' "$i")
    if past_deadline; then
      echo "not run (deadline)" > "$state/$name.compile"; continue
    fi
    if [ -f "$build/ready/$name" ]; then
      echo ok > "$state/$name.compile"
      run_checks "$name" "$build/${name}_check"
      done_count=$((done_count + 1)); progressed=1
      echo "[$done_count/$n] ${ids[$i]}: host $(cat "$state/$name.host"), GPU $(cat "$state/$name.gpu")"
      # memcheck judges correctness, not time: it runs beside the next mutants' checks.
      if [ $memcheck -eq 1 ] && [ "$(cat "$state/$name.gpu")" = passed ]; then
        memcheck_slot
        run_memcheck "$name" "$build/${name}_check" &
        memcheckers+=($!)
      fi
    elif [ $builder_done -eq 1 ]; then
      echo FAILED > "$state/$name.compile"
      done_count=$((done_count + 1)); progressed=1
      echo "[$done_count/$n] ${ids[$i]}: does not compile"
    else
      still+=("$i")
    fi
  done
  pending=("${still[@]+"${still[@]}"}")
  if past_deadline; then break; fi
  [ $progressed -eq 1 ] || sleep 1
done
stop_builder
echo "build of the mutants: $((SECONDS - build_started)) s"
# Each mutant's compiler errors, from the build log (ninja names the target of a failed step).
awk -v dir="$logs" '
  /^FAILED: / { file = ""; if (match($0, /mut[0-9][0-9][0-9]/)) file = dir "/" substr($0, RSTART, RLENGTH) ".build.txt" }
  /^\[[0-9]+\/[0-9]+\] / { file = "" }
  file != "" { print >> file }
' "$logs/mutants.build.txt"

# ---- memcheck (a few at once) and the static rules (on the CPU), for what compiled
survivors=()
for i in "${!ids[@]}"; do
  name=$(printf 'mut%03d' "$i")
  [ "$(cat "$state/$name.gpu" 2> /dev/null)" = passed ] && survivors+=("$i")
done
static_list=()
for i in "${!ids[@]}"; do
  name=$(printf 'mut%03d' "$i")
  [ "$(cat "$state/$name.compile" 2> /dev/null)" = ok ] && static_list+=("$name ${lessons_of[$i]} $build/${name}_check")
done
echo "static rules on ${#static_list[@]} mutants$([ $memcheck -eq 1 ] && echo ", then the memcheck runs still going (${#survivors[@]} mutants passed the GPU checks)") ..."
printf '%s\n' "${static_list[@]+"${static_list[@]}"}" | xargs -r -P "$jobs" -L 1 bash -c 'run_static "$@"' _
for pid in "${memcheckers[@]+"${memcheckers[@]}"}"; do wait "$pid"; done
[ -n "$linter" ] && wait "$linter"

# ---- speed, one at a time on a quiet machine, between the solution's rounds
if [ $no_gpu -eq 0 ]; then
  echo "speed: the solution's rounds and the mutants that passed the checks$([ $memcheck -eq 1 ] && echo " and memcheck") ..."
  solution_round
  next=$every
  # The last ~20 s before the deadline are kept for the solution's closing round.
  reserve=0
  [ "$deadline" -gt 0 ] && reserve=20
  for i in "${survivors[@]+"${survivors[@]}"}"; do
    name=$(printf 'mut%03d' "$i")
    if [ $memcheck -eq 1 ] && [ "$(cat "$state/$name.memcheck" 2> /dev/null)" != clean ]; then continue; fi
    [ "$(left)" -le "$reserve" ] && { echo "not run (deadline)" > "$state/$name.speed"; continue; }
    if [ "$i" -ge "$next" ]; then solution_round; next=$(( (i / every + 1) * every )); fi
    run_speed "$name" "${lessons_of[$i]}" "$build/${name}_check" "${regions_of[$i]}"
    echo "${ids[$i]}: speed $(cat "$state/$name.speed")"
  done
  past_deadline || solution_round
fi
[ -f "$out/solution.csv" ] || echo "gpu,exercise,kernel,ms,ceiling,ceiling_ms,runs,spread" > "$out/solution.csv"

# ---- mutants.csv and summary.txt
course_py "$root" mutation_report report "$state" "$out" "$work/ids.txt" "$equivalents" \
  "$(($(date +%s) - start))" "$deadline" "$memcheck" "$no_gpu" "$work/solution_problems.txt"
# The logs worth reading beside the results (each cut to 32 KiB): the course's own code's, and every
# layer's of each mutant no layer caught; logs/index.txt names the mutant of each mutNNN.
mkdir -p "$out/logs"
: > "$out/logs/index.txt"
for i in "${!ids[@]}"; do printf 'mut%03d %s\n' "$i" "${ids[$i]}" >> "$out/logs/index.txt"; done
python3 - "$out/mutants.csv" > "$work/uncaught.txt" << 'PY'
import csv, sys
layers = {"compile", "lint", "host", "gpu", "memcheck", "speed", "static"}
for k, r in enumerate(csv.DictReader(open(sys.argv[1], encoding="utf-8"))):
    if r["caught_by"] not in layers:
        print("mut%03d" % k)
PY
for f in "$logs"/solution.* $(sed "s|^|$logs/|; s|\$|.*|" "$work/uncaught.txt"); do
  [ -f "$f" ] && tail -c 32768 "$f" > "$out/logs/${f##*/}"
done
echo "results: $out (mutants.csv, summary.txt, solution.csv, env.txt, logs/)   all logs: $logs"
exit 0
