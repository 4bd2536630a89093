#!/usr/bin/env bash
# grade.sh — grade students' main.cu files with the lessons' own checks, on a machine WITH a GPU.
#
# usage: scripts/grade.sh SUBMISSIONS [options]
#        scripts/grade.sh --gradebook-from CELLS [--out DIR]
#
# SUBMISSIONS holds one folder per student, each holding any subset of NN_name/main.cu, where
# NN_name is a lesson folder (01_naive_transpose ... 06_bank_conflicts). Every (student, lesson)
# is one cell: its main.cu is copied into a build folder of its own, that lesson's check.cu is
# compiled against it, and the check runs in a process of its own with COURSE_REQUIRE_GPU=1 and
# a time limit (its whole process group is killed at the limit). A submission that does not
# compile, crashes, hangs, writes out of bounds or breaks its GPU context costs only its cell.
#
#   --out DIR            where everything goes (default: build-grade): DIR/gradebook.csv,
#                        DIR/gradebook.md, DIR/common/ (course_common, built once) and
#                        DIR/cells/NNNN/ (one folder per cell: result.txt, build and check logs)
#   --timeout S          seconds one check run may take (default: 60)
#   --sanitize           also run each compiled cell's GPU checks under compute-sanitizer
#                        racecheck and memcheck; a finding is reported even if the checks passed
#   --sanitize-timeout S seconds one sanitizer run may take (default: 600)
#   --arch LIST          CMAKE_CUDA_ARCHITECTURES (default: the GPU's own, via nvidia-smi)
#   --jobs N             cells compiled at the same time (default: half the CPU cores); the
#                        checks themselves run one at a time, so they never share the GPU
#   -DNAME=VALUE         passed to every cmake configure (e.g. -DCMAKE_PREFIX_PATH=/opt/doctest)
#   --gradebook-from CELLS   grade nothing: write the gradebook of an earlier run's cell folder
#                        (DIR/cells) into --out; needs no GPU
#   --                   end of options (for a SUBMISSIONS folder whose name starts with -)
#
# Gradebook (CSV and Markdown, one row per cell, sorted by student then lesson): student, lesson,
# compiled, checks passed, checks total (doctest test cases of the lesson's check), first failure
# or sanitizer finding (empty when the cell is fully right). Folders in a student's submission
# that are not lesson folders, lesson folders without main.cu and empty submissions get a row too.
# Exit: 0 every cell passed; 1 a cell did not (or the grader could not build the course);
# 2 bad command line; 3 no usable GPU (nothing is graded).
set -uo pipefail
export LC_ALL=C  # byte order for sorting; names are copied as bytes, never interpreted

me=grade.sh
repo=$(cd -- "$(dirname -- "$0")/.." && pwd -P)

usage_error() { echo "$me: $*; see --help" >&2; exit 2; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]; }
abs_path() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }

# ================================================================= the gradebook writer
# A cell's result.txt holds one key=value per line: student, lesson, compiled (yes / no / -),
# passed, total, finding. A cell passed when it compiled, passed == total > 0 and finding is
# empty. Rows come out in the order of the cell folders' names.

csv_field() {  # RFC 4180: quote a field holding a comma, quote or line break; double its quotes
  local s=$1
  if [[ $s == *[,\"$'\n\r']* || $s == " "* || $s == *" " ]]; then s="\"${s//\"/\"\"}\""; fi
  printf '%s' "$s"
}
md_field() {  # Markdown table cell: escape what would end the cell or start markup (an HTML tag,
              # emphasis, code); "transpose_tiled<(int)32>" stays as it is
  printf '%s' "$1" | sed -E 's/\\/\\\\/g; s/\|/\\|/g; s/<([A-Za-z\/!?])/\\<\1/g; s/\*/\\*/g; s/`/\\`/g'
}

# write_gradebook CELLS OUTDIR: writes OUTDIR/gradebook.csv and .md; returns 0 if every cell passed.
write_gradebook() {
  local cells=$1 outdir=$2 csv md f key value failed=0 ncells=0 npassed=0
  local student lesson compiled passed total finding
  csv=$outdir/gradebook.csv md=$outdir/gradebook.md
  mkdir -p -- "$outdir" || return 1
  printf '%s\n' "student,lesson,compiled,checks passed,checks total,first failure or sanitizer finding" > "$csv"
  printf '%s\n' "| student | lesson | compiled | checks passed | checks total | first failure or sanitizer finding |" \
                "| --- | --- | --- | --- | --- | --- |" > "$md"
  for f in "$cells"/*/result.txt; do
    [ -f "$f" ] || continue
    student="" lesson="" compiled="" passed="" total="" finding=""
    while IFS= read -r line || [ -n "$line" ]; do
      key=${line%%=*} value=${line#*=}
      case $key in
        student) student=$value ;; lesson) lesson=$value ;; compiled) compiled=$value ;;
        passed) passed=$value ;; total) total=$value ;; finding) finding=$value ;;
      esac
    done < "$f"
    ncells=$((ncells + 1))
    if [ "$compiled" = yes ] && [[ $total =~ ^[0-9]+$ ]] && [ "$total" -gt 0 ] && [ "$passed" = "$total" ] &&
       [ -z "$finding" ]; then
      npassed=$((npassed + 1))
    else
      failed=1
      [ -n "$finding" ] || finding="${passed:-0} of ${total:-0} test cases passed"  # never a blank failure
    fi
    local field sep=""
    for field in "$student" "$lesson" "$compiled" "$passed" "$total" "$finding"; do
      printf '%s%s' "$sep" "$(csv_field "$field")" >> "$csv"; sep=,
    done
    printf '\n' >> "$csv"
    printf '|' >> "$md"
    for field in "$student" "$lesson" "$compiled" "$passed" "$total" "$finding"; do
      printf ' %s |' "$(md_field "$field")" >> "$md"
    done
    printf '\n' >> "$md"
  done
  printf '\n%d cells: %d passed, %d did not.\n' "$ncells" "$npassed" "$((ncells - npassed))" >> "$md"
  [ "$ncells" -gt 0 ] || { echo "$me: no cell results (*/result.txt) in $cells" >&2; return 1; }
  return $failed
}

# ================================================================= command line
submissions="" out="" timeout_s=60 sanitize=0 sanitize_timeout=600 arch="" jobs="" from=""
cmake_defs=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage_error "--out needs a folder"; out=$2; shift 2 ;;
    --timeout) is_uint "${2-}" || usage_error "--timeout needs a whole number of seconds > 0"; timeout_s=$2; shift 2 ;;
    --sanitize) sanitize=1; shift ;;
    --sanitize-timeout) is_uint "${2-}" || usage_error "--sanitize-timeout needs a whole number of seconds > 0"
                        sanitize_timeout=$2; shift 2 ;;
    --arch) [ -n "${2-}" ] || usage_error "--arch needs a list, e.g. 90 or 80;90"; arch=$2; shift 2 ;;
    --jobs) is_uint "${2-}" || usage_error "--jobs needs a number > 0"; jobs=$2; shift 2 ;;
    --gradebook-from) [ -n "${2-}" ] || usage_error "--gradebook-from needs a folder"; from=$2; shift 2 ;;
    -D?*) cmake_defs+=("$1"); shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; [ $# -le 1 ] || usage_error "one SUBMISSIONS folder, not $#"; [ $# -eq 0 ] || submissions=$1; shift $# ;;
    -*) usage_error "unknown option '$1'" ;;
    *) [ -z "$submissions" ] || usage_error "one SUBMISSIONS folder, not two ('$submissions', '$1')"
       submissions=$1; shift ;;
  esac
done
out=$(abs_path "${out:-$repo/build-grade}")

if [ -n "$from" ]; then
  [ -z "$submissions" ] || usage_error "--gradebook-from grades nothing: give no SUBMISSIONS"
  [ -d "$from" ] || usage_error "--gradebook-from '$from' is not a folder"
  write_gradebook "$from" "$out"; status=$?
  cat -- "$out/gradebook.md"
  exit $status
fi

[ -n "$submissions" ] || usage_error "no SUBMISSIONS folder given"
[ -d "$submissions" ] || usage_error "SUBMISSIONS '$submissions' is not a folder"
submissions=$(cd -- "$submissions" && pwd -P)

# ================================================================= a GPU, before building anything
# The first look is nvidia-smi; after common/ is built, the course's own test (the check of
# common/ with COURSE_REQUIRE_GPU=1, which asks the CUDA runtime and runs a probe kernel) decides.
if ! command -v nvidia-smi > /dev/null 2>&1; then
  echo "$me: no usable GPU: nvidia-smi not found; grading runs the GPU checks, so run it on a machine with an NVIDIA GPU (nothing graded)" >&2
  exit 3
fi
if ! smi=$(nvidia-smi -L 2>&1) || ! grep -q '^GPU [0-9]' <<< "$smi"; then
  echo "$me: no usable GPU: nvidia-smi -L says '$(head -n 1 <<< "$smi")'; grading runs the GPU checks, so run it on a machine with an NVIDIA GPU (nothing graded)" >&2
  exit 3
fi
for tool in cmake timeout; do
  command -v "$tool" > /dev/null || { echo "$me: '$tool' not found" >&2; exit 1; }
done
if [ $sanitize -eq 1 ] && ! command -v compute-sanitizer > /dev/null; then
  echo "$me: --sanitize needs compute-sanitizer (part of the CUDA toolkit) on PATH" >&2; exit 1
fi
if [ -z "$jobs" ]; then
  jobs=$(( $(nproc 2> /dev/null || echo 2) / 2 )); [ "$jobs" -ge 1 ] || jobs=1
fi

# ================================================================= the cells
lessons=()
for d in "$repo"/lessons/[0-9][0-9]_*/; do
  [ -f "$d/check.cu" ] && lessons+=("$(basename -- "$d")")
done
lesson_list=$(IFS=,; echo "${lessons[*]}"); lesson_list=${lesson_list//,/, }
is_lesson() { local l; for l in "${lessons[@]}"; do [ "$l" = "$1" ] && return 0; done; return 1; }
clean() { local s=$1; printf '%s' "${s//[[:cntrl:]]/ }"; }  # one line per value in result.txt

cells_dir=$out/cells
marker=$cells_dir/.made-by-grade.sh  # so that a second run deletes only what a first one made
if [ -e "$cells_dir" ] && [ ! -f "$marker" ]; then
  echo "$me: $cells_dir exists and was not made by $me; give another --out" >&2; exit 2
fi
rm -rf -- "$cells_dir" "$out/gradebook.csv" "$out/gradebook.md"
mkdir -p -- "$cells_dir" && : > "$marker" || exit 1
ncell=0
cell_dirs=() cell_sources=() cell_lessons=()
new_cell() {  # new_cell STUDENT LESSON [SOURCE]: a cell folder, with result.txt when there is nothing to build
  ncell=$((ncell + 1))
  local dir; dir=$cells_dir/$(printf '%04d' "$ncell")
  mkdir -p -- "$dir"
  printf 'student=%s\nlesson=%s\n' "$(clean "$1")" "$(clean "$2")" > "$dir/identity.txt"
  if [ $# -ge 3 ]; then
    cell_dirs+=("$dir") cell_sources+=("$3") cell_lessons+=("$2")
  fi
  last_cell=$dir
}
finish_cell() {  # finish_cell DIR COMPILED PASSED TOTAL FINDING
  { cat -- "$1/identity.txt"
    printf 'compiled=%s\npassed=%s\ntotal=%s\nfinding=%s\n' "$2" "$3" "$4" "$(clean "$5")"; } > "$1/result.txt"
}

shopt -s nullglob
for sdir in "$submissions"/*; do
  student=$(basename -- "$sdir")
  if [ ! -d "$sdir" ]; then
    new_cell "$student" ""; finish_cell "$last_cell" - "" "" "not a student folder (a file at the top of SUBMISSIONS)"
    continue
  fi
  entries=("$sdir"/*)
  if [ ${#entries[@]} -eq 0 ]; then
    new_cell "$student" ""; finish_cell "$last_cell" - "" "" "empty submission (no NN_name/main.cu)"
    continue
  fi
  for entry in "${entries[@]}"; do
    name=$(basename -- "$entry")
    if [ -d "$entry" ] && is_lesson "$name"; then
      if [ -f "$entry/main.cu" ]; then
        new_cell "$student" "$name" "$entry/main.cu"
      else
        new_cell "$student" "$name"; finish_cell "$last_cell" - "" "" "no main.cu in $name/"
      fi
    else
      new_cell "$student" "$name"
      finish_cell "$last_cell" - "" "" "not a lesson folder (expected NN_name/main.cu, NN_name one of: $lesson_list)"
    fi
  done
done
shopt -u nullglob
if [ $ncell -eq 0 ]; then
  echo "$me: '$submissions' holds no student folders" >&2; exit 2
fi
echo "$me: $ncell cells (${#cell_dirs[@]} to build) from $submissions; everything goes to $out"

# ================================================================= interruption
# Every command runs under `timeout`, which puts it in a process group of its own; on Ctrl-C
# or TERM, end those groups too (timeout passes the signal on to its group).
running=()
on_signal() {
  local pid pidfile
  for pid in ${running[@]+"${running[@]}"}; do kill -TERM "$pid" 2> /dev/null; done
  for pidfile in "$cells_dir"/*/step.pid; do [ -f "$pidfile" ] && kill -TERM "$(cat "$pidfile")" 2> /dev/null; done
  echo "$me: interrupted; partial results in $cells_dir" >&2
  exit 130
}
trap on_signal INT TERM

# limited DIR SECONDS LOG COMMAND...: runs COMMAND in DIR under timeout (TERM at the limit, KILL
# 10 s later, both to its whole process group), output to LOG; returns COMMAND's exit status,
# 124 or 137 when it ran out of time, 128 + N when signal N ended it.
limited() {
  local dir=$1 limit=$2 log=$3; shift 3
  (cd -- "$dir" && exec timeout -k 10 "$limit" "$@") > "$log" 2>&1 < /dev/null &
  running=("$!")
  wait "$!" 2> /dev/null; local rc=$?  # (2> /dev/null: the gradebook, not bash, reports a crash)
  running=()
  return $rc
}

# ================================================================= common/, once
config=(-DCMAKE_BUILD_TYPE=Release)
command -v ninja > /dev/null && config+=(-G Ninja)
[ -n "$arch" ] && config+=("-DCMAKE_CUDA_ARCHITECTURES=$arch")
config+=(${cmake_defs[@]+"${cmake_defs[@]}"})
common=$out/common
echo "$me: building common/ once (log: $common.log)"
if ! { cmake -S "$repo" -B "$common" "${config[@]}" &&
       cmake --build "$common" --target course_common course_test_main common_check; } > "$common.log" 2>&1; then
  tail -n 20 "$common.log" >&2
  echo "$me: could not build the course's common/ (see $common.log); nothing graded" >&2
  exit 1
fi
probe=$(COURSE_REQUIRE_GPU=1 "$common/common_check" --gpu 2>&1 < /dev/null); rc=$?
if [ $rc -ne 0 ]; then
  reason=$(grep -m 1 'COURSE_REQUIRE_GPU is set but' <<< "$probe" | sed 's/^.*COURSE_REQUIRE_GPU is set but //; s/^no usable CUDA GPU: //')
  if [ -n "$reason" ]; then
    echo "$me: no usable GPU: nvidia-smi lists one, but the CUDA runtime says $reason (nothing graded)" >&2; exit 3
  fi
  printf '%s\n' "$probe" | tail -n 5 >&2
  echo "$me: the check of common/ failed on this GPU (exit $rc); nothing graded" >&2; exit 1
fi

# ================================================================= build every cell
# step DIR LOG COMMAND...: one build step of a cell, under a 10-minute limit, its pid kept in
# DIR/step.pid so that an interruption can end it.
step() {
  local dir=$1 log=$2; shift 2
  timeout -k 10 600 "$@" > "$log" 2>&1 < /dev/null &
  echo $! > "$dir/step.pid"
  wait $! 2> /dev/null; local rc=$?
  rm -f -- "$dir/step.pid"
  return $rc
}
build_cell() {  # build_cell DIR SOURCE LESSON: writes DIR/compiled (yes/no) and DIR/build.log
  local dir=$1 source=$2 lesson=$3
  mkdir -p -- "$dir/src"
  # A copy at a plain path: the check #includes it by name, and the student's folder stays untouched.
  if cp -- "$source" "$dir/src/main.cu" &&
     step "$dir" "$dir/build.log" cmake -S "$repo" -B "$dir/build" "${config[@]}" -DCOURSE_GRADE_LESSON="$lesson" \
       -DCOURSE_GRADE_SOURCE="$dir/src/main.cu" -DCOURSE_GRADE_COMMON="$common" &&
     step "$dir" "$dir/compile.log" cmake --build "$dir/build" --target "${lesson}_check" -j 1 &&
     [ -x "$dir/build/${lesson}_check" ]; then
    echo yes > "$dir/compiled"
  else
    echo no > "$dir/compiled"
  fi
  [ -f "$dir/compile.log" ] && cat -- "$dir/compile.log" >> "$dir/build.log" && rm -f -- "$dir/compile.log"
  return 0
}
echo "$me: compiling ${#cell_dirs[@]} cells, $jobs at a time"
for i in "${!cell_dirs[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  build_cell "${cell_dirs[$i]}" "${cell_sources[$i]}" "${cell_lessons[$i]}" &
done
wait

# ================================================================= run every cell
# first_failure LOG: the first failing check of a doctest log, as one line: its logged context
# (the check CAPTUREs kernel, shape and first wrong element) or, without one, the test case and
# doctest's message (an exception, a crash, a REQUIRE).
first_failure() {
  awk '
    /^TEST CASE:/ { tc = $0; sub(/^TEST CASE: +/, "", tc); next }
    state == 0 && / ERROR: / { err = $0; sub(/^.* ERROR: /, "", err); state = 1; next }
    state == 1 && /^  logged: / { l = $0; sub(/^  logged: /, "", l); logged = l; state = 2; next }
    state == 2 && /^          / { l = $0; sub(/^ +/, "", l); logged = logged "; " l; next }
    state >= 1 && /^$/ { state = 3 }
    END {
      if (err == "") exit
      if (err ~ /is NOT correct!$/ && logged != "") print logged
      else if (logged != "") print tc ": " err " (" logged ")"
      else print tc ": " err
    }' "$1"
}
strip_args() {  # "transpose_tiled<(int)32>(const float *, int)" -> "transpose_tiled<(int)32>"
  local s=$1 i depth=0
  [[ $s == *")" ]] || { printf '%s' "$s"; return; }
  for ((i = ${#s} - 1; i >= 0; i--)); do
    case ${s:i:1} in ")") depth=$((depth + 1)) ;; "(") depth=$((depth - 1)); [ $depth -eq 0 ] && break ;; esac
  done
  printf '%s' "${s:0:i}"
}
signal_name() { local n; n=$(kill -l "$1" 2> /dev/null) && echo "SIG$n" || echo "signal $1"; }
shorten() { local s=$1; [ ${#s} -le 400 ] || s="${s:0:400}..."; printf '%s' "$s"; }

export COURSE_REQUIRE_GPU=1  # a check that finds no usable GPU fails, never skips
summary_re='test cases: *([0-9]+) \| *([0-9]+) passed \| *([0-9]+) failed'
for i in "${!cell_dirs[@]}"; do
  dir=${cell_dirs[$i]} lesson=${cell_lessons[$i]}
  label="$(sed -n 's/^student=//p' "$dir/identity.txt") / $lesson"
  check=$dir/build/${lesson}_check
  if [ "$(cat "$dir/compiled" 2> /dev/null)" != yes ]; then
    err=$(grep -m 1 -E ': (fatal )?error|CMake Error' "$dir/build.log" 2> /dev/null); err=${err//"$dir/src/"/}
    finish_cell "$dir" no "" "" "does not compile: $(shorten "${err:-see build.log}")"
    echo "$me: $label: does not compile"
    continue
  fi
  # How many test cases the check has (doctest lists them without running any).
  limited "$dir" "$timeout_s" "$dir/list.log" "$check" --list-test-cases
  total=$(sed -n 's/.*test cases passing the current filters: *\([0-9]*\).*/\1/p' "$dir/list.log")
  limited "$dir" "$timeout_s" "$dir/check.log" "$check"; rc=$?
  passed="" finding=""
  if [[ $(grep -E 'test cases:' "$dir/check.log" | tail -n 1) =~ $summary_re ]]; then
    passed=${BASH_REMATCH[2]}
  fi
  first=$(first_failure "$dir/check.log")
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    finding="timed out after $timeout_s s"
    tc=$(grep -B 3 'CRASHED: SIGTERM' "$dir/check.log" | sed -n 's/^TEST CASE: *//p' | tail -n 1)
    [ -n "$tc" ] && finding="$finding in: $tc"
  elif [ $rc -gt 128 ]; then
    finding="crashed ($(signal_name $((rc - 128))))"
    tc=$(grep -B 3 'CRASHED:' "$dir/check.log" | sed -n 's/^TEST CASE: *//p' | tail -n 1)
    [ -n "$tc" ] && finding="$finding in: $tc"
  elif [ $rc -ne 0 ]; then
    if [ -n "$first" ]; then finding=$first
    else finding="exit code $rc: $(grep -m 1 -v '^\[doctest\]' "$dir/check.log" | head -c 300)"; fi
  elif [ -z "$passed" ] || [ "$passed" != "$total" ]; then
    finding="exit code 0, but doctest reported ${passed:-no} passed test cases of ${total:-?}"
  fi
  [ -n "$total" ] || finding="${finding:+$finding; }could not list the test cases"

  if [ $sanitize -eq 1 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ]; then
    found=()
    for tool in racecheck memcheck; do
      log=$dir/$tool.log
      limited "$dir" "$sanitize_timeout" "$log" compute-sanitizer --tool "$tool" --error-exitcode 99 "$check" --gpu
      src=$?
      if [ $tool = racecheck ]; then
        where=$(grep -m 1 'Race reported between' "$log" | sed -E 's/^.* access at //; s/\+0x[0-9a-f]+.*$//')
      else
        where=$(grep -m 1 -E '^=========     at ' "$log" | sed -E 's/^=========     at //; s/\+0x[0-9a-f]+.*$//')
      fi
      where=$(strip_args "${where#void }")
      if [ $src -eq 124 ] || [ $src -eq 137 ]; then
        found+=("$tool timed out after $sanitize_timeout s")
      elif [ $tool = racecheck ] && [[ $(grep 'RACECHECK SUMMARY' "$log") =~ ([0-9]+)\ hazards?\ displayed ]] &&
           [ "${BASH_REMATCH[1]}" -gt 0 ]; then
        found+=("RACE (racecheck: ${BASH_REMATCH[1]} hazards${where:+, first in $where})")
      elif [ $tool = memcheck ] && [[ $(grep 'ERROR SUMMARY' "$log") =~ ([0-9]+)\ errors? ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
        what=$(grep -E '^========= [A-Z]' "$log" | grep -v -E 'COMPUTE-SANITIZER|SUMMARY' | head -n 1 | sed 's/^========= //')
        found+=("MEMCHECK (memcheck: ${BASH_REMATCH[1]} errors${what:+, first: $what}${where:+ in $where})")
      elif [ $src -eq 99 ]; then
        found+=("$tool: errors reported (see $tool.log)")
      fi
    done
    if [ ${#found[@]} -gt 0 ]; then
      sanitizer=$(IFS=';'; echo "${found[*]}"); sanitizer=${sanitizer//;/; }
      if [ -z "$finding" ]; then finding="passed, $sanitizer"; else finding="$finding; $sanitizer"; fi
    fi
  fi
  finish_cell "$dir" yes "${passed:-0}" "$total" "$(shorten "$finding")"
  echo "$me: $label: ${passed:-0} of ${total:-?} test cases passed${finding:+ — $finding}"
done

# ================================================================= the gradebook
write_gradebook "$cells_dir" "$out"; status=$?
echo
cat -- "$out/gradebook.md"
echo
echo "$me: gradebook in $out/gradebook.csv and $out/gradebook.md"
exit $status
