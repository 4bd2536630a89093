#!/usr/bin/env bash
# maintainer_check.sh — for the course's maintainers, on a machine WITH an NVIDIA GPU: are the
# exercises real exercises? For every lesson, both ways round:
#   * the lesson's own main.cu (the solution) passes its host and GPU checks, the GPU required;
#   * the exercise generated from it (exercises/NN_name/main.cu, unsolved) compiles, passes its host
#     checks (except 06, whose host checks judge the tile layouts the student writes, and so must
#     fail), and FAILS its GPU checks (not skipped, not stopped by the time limit): the messages of
#     each exercise's first failing check are printed, for a maintainer to read.
# Also: the committed exercises are what the lessons generate, and the student's progress table
# (scripts/exercises.sh) reports 0 solved and "not yet" for every GPU check.
#
# usage: scripts/maintainer_check.sh [--build DIR] [--out DIR] [--arch LIST] [-- cmake configure args]
#   --build DIR   build folder (default: build-maintainer)
#   --out DIR     where the summary and logs go (default: DIR/maintainer-check)
#   --arch LIST   CMAKE_CUDA_ARCHITECTURES (default: this GPU's, via nvidia-smi)
# Exit: 0 everything as expected, 1 something is not, 2 bad command line, 3 no GPU (nothing run).
set -uo pipefail
cd "$(dirname "$0")/.."

build=build-maintainer out="" arch="" extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "maintainer_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "maintainer_check.sh: no NVIDIA GPU visible (nvidia-smi -L failed): the maintainer check needs one; nothing was run" >&2
  exit 3
fi

out=${out:-$build/maintainer-check}
mkdir -p "$out"
summary="$out/maintainer_check.txt"   # everything below, with the messages
verdicts="$out/verdicts.txt"          # one line per finding, printed again at the end
: > "$summary"
: > "$verdicts"
status=0
note() { echo "$*" | tee -a "$summary"; }
verdict() { echo "$*" >> "$verdicts"; note "$*"; }
bad() { status=1; verdict "NOT AS EXPECTED: $*"; }
# Exercises whose host checks judge the student's code (so they fail while it is unsolved).
host_judged=" 06_bank_conflicts "

verdict "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
verdict "nvcc: $(nvcc --version | tail -n 1)"

if cmake -DCHECK=ON -P scripts/make_exercises.cmake > "$out/up_to_date.txt" 2>&1; then
  verdict "exercises up to date with the lessons: yes"
else
  bad "the committed exercises differ from what the lessons generate:"; cat "$out/up_to_date.txt" | tee -a "$summary"
fi

lessons=$(cd lessons && ls -d [0-9][0-9]_*)
# A lesson's CUDA companion (lessons/NN_name/going_further/) has no exercise: its check must pass.
companions=$(cd lessons && for d in [0-9][0-9]_*/going_further; do [ -f "$d/main.cu" ] && echo "${d%/going_further}_going_further"; done)
targets=()
for l in $lessons; do targets+=("${l}_check" "exercise_$l" "exercise_${l}_check"); done
for c in $companions; do targets+=("${c}_check"); done
config=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCOURSE_FULL=ON)  # COURSE_FULL: the companions too
command -v ninja >/dev/null && config+=(-G Ninja)
[ -n "$arch" ] && config+=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
if ! cmake "${config[@]}" "${extra[@]}" > "$out/build.txt" 2>&1 || ! cmake --build "$build" -j --target "${targets[@]}" >> "$out/build.txt" 2>&1; then
  tail -n 40 "$out/build.txt"; note "BUILD FAILED (see $out/build.txt)"; exit 1
fi
verdict "build: ok (every lesson's check, every exercise and its check)"

# ---- the solutions (and the companions): every check passes, the GPU required
for l in $lessons $companions; do
  COURSE_REQUIRE_GPU=1 "$build/${l}_check" --host > "$out/lesson_$l.host.txt" 2>&1; host=$?
  COURSE_REQUIRE_GPU=1 timeout -k 10 900 "$build/${l}_check" --gpu > "$out/lesson_$l.gpu.txt" 2>&1; gpu=$?
  if [ $host -eq 0 ] && [ $gpu -eq 0 ]; then verdict "lesson   $l: host checks passed, GPU checks passed"
  else bad "lesson $l: host checks exit $host, GPU checks exit $gpu (both must be 0; logs: $out/lesson_$l.*.txt)"; fi
done

# ---- the exercises, through the student's own script: its progress table, then each one's message
scripts/exercises.sh --build "$build" status > "$out/exercises_status.txt" 2>&1; table_rc=$?
cp "$build/exercise-logs/results.txt" "$out/exercises_results.txt"
for l in $lessons; do
  read -r name compiles host gpu < <(grep "^$l " "$out/exercises_results.txt")
  want_host=ok
  case "$host_judged" in *" $l "*) want_host=FAILED ;; esac
  if [ "${compiles:-}" = ok ] && [ "${host:-}" = "$want_host" ] && [ "${gpu:-}" = failed ]; then
    verdict "exercise $l: compiles, host checks $host (expected $want_host), GPU checks fail while unsolved"
  else
    bad "exercise $l: compiles=${compiles:-?} host=${host:-?} (expected $want_host) gpu=${gpu:-?} (expected failed)"
  fi
done
if [ $table_rc -ne 1 ] || ! grep -q "^0/.* solved$" "$out/exercises_status.txt"; then
  bad "scripts/exercises.sh status exited $table_rc (expected 1) or did not report 0 solved"
fi
note ""
note "----- scripts/exercises.sh status -----"
tee -a "$summary" < "$out/exercises_status.txt"

note ""
note "----- the first failing check of each unsolved exercise (scripts/exercises.sh check NN) -----"
for l in $lessons; do
  note ""
  scripts/exercises.sh --build "$build" check "${l%%_*}" > "$out/exercise_check_$l.txt" 2>&1
  tee -a "$summary" < "$out/exercise_check_$l.txt"
done

echo
echo "----- summary: $summary -----"
cat "$verdicts"
[ $status -eq 0 ] && echo "MAINTAINER CHECK: ALL AS EXPECTED" || echo "MAINTAINER CHECK: SOMETHING IS NOT AS EXPECTED"
exit $status
