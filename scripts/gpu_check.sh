#!/usr/bin/env bash
# gpu_check.sh — for a machine WITH an NVIDIA GPU: build every lesson, run every check (GPU
# checks must pass, never skip), run every lesson at its default size, and run the four
# compute-sanitizer tools over every lesson's GPU checks. Prints a summary last.
#
# usage: scripts/gpu_check.sh [options]
#   --build DIR      build folder                      (default: build-gpu)
#   --out DIR        where logs and results.csv go     (default: DIR/gpu-check)
#   --arch LIST      CMAKE_CUDA_ARCHITECTURES          (default: this GPU's, via nvidia-smi)
#   --only NAME      one lesson, e.g. 02_shared_transpose (repeatable)
#   --no-sanitize    skip compute-sanitizer
#   --no-lessons     skip running the lessons
#   --ncu            also run each selected lesson's Nsight Compute script (lessons/NN_*/ncu*.sh)
#   any other argument after -- goes to cmake's configure step
set -uo pipefail
cd "$(dirname "$0")/.."

build=build-gpu out="" arch="" sanitize=1 lessons=1 ncu=0 only=() extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --no-sanitize) sanitize=0; shift ;;
    --no-lessons) lessons=0; shift ;;
    --ncu) ncu=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "gpu_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
out=${out:-$build/gpu-check}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_check.sh: no NVIDIA GPU visible (nvidia-smi -L failed); use 'cmake --workflow --preset check' on machines without one" >&2
  exit 3
fi
note "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
note "nvcc: $(nvcc --version | tail -n 1)"

all_lessons=$(cd lessons && ls -d [0-9][0-9]_*)
if [ ${#only[@]} -eq 0 ]; then selected=($all_lessons); else selected=("${only[@]}"); fi
targets=()
if [ ${#only[@]} -gt 0 ]; then
  targets=(--target common_check)
  for l in "${selected[@]}"; do targets+=("$l" "${l}_check"); done
fi

config=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release)
command -v ninja >/dev/null && config+=(-G Ninja)
[ -n "$arch" ] && config+=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
if ! cmake "${config[@]}" "${extra[@]}" > "$out/build.txt" 2>&1 || ! cmake --build "$build" -j "${targets[@]}" >> "$out/build.txt" 2>&1; then
  tail -n 40 "$out/build.txt"; note "BUILD FAILED (see $out/build.txt)"; exit 1
fi
note "build: ok"

# Checks: the GPU must be there (COURSE_REQUIRE_GPU turns a would-be skip into a failure).
labels=$(IFS='|'; echo "${selected[*]}|common")
if COURSE_REQUIRE_GPU=1 ctest --test-dir "$build" -L "^($labels)\$" --output-on-failure > "$out/ctest.txt" 2>&1; then
  note "checks: $(grep -E 'tests passed' "$out/ctest.txt")"
else
  status=1; note "checks: FAILED"; grep -E 'tests passed|Failed|\*\*\*' "$out/ctest.txt" | tee -a "$summary"
fi

if [ $lessons -eq 1 ]; then
  rm -f "$out/results.csv"
  : > "$out/lessons.txt"
  for l in "${selected[@]}"; do
    echo "=== $l ===" >> "$out/lessons.txt"
    if "$build/$l" --csv "$out/results.csv" >> "$out/lessons.txt" 2>&1; then note "lesson $l: ok"
    else status=1; note "lesson $l: FAILED (exit $?)"; fi
    # More runs a lesson asks for: each line of lessons/NN_*/extra_runs.txt is one argument list.
    if [ -f "lessons/$l/extra_runs.txt" ]; then
      while read -r -a args; do
        [ ${#args[@]} -eq 0 ] && continue
        echo "=== $l ${args[*]} ===" >> "$out/lessons.txt"
        if "$build/$l" "${args[@]}" --csv "$out/results.csv" < /dev/null >> "$out/lessons.txt" 2>&1; then note "lesson $l ${args[*]}: ok"
        else status=1; note "lesson $l ${args[*]}: FAILED (exit $?)"; fi
      done < "lessons/$l/extra_runs.txt"
    fi
  done
fi

if [ $sanitize -eq 1 ]; then
  : > "$out/sanitizers.txt"
  for tool in memcheck racecheck synccheck initcheck; do
    for l in "${selected[@]}"; do
      args=(--tool "$tool" --error-exitcode 99)
      [ "$tool" = memcheck ] && args+=(--leak-check full)
      echo "=== $tool $l ===" >> "$out/sanitizers.txt"
      COURSE_REQUIRE_GPU=1 compute-sanitizer "${args[@]}" "$build/${l}_check" --gpu >> "$out/sanitizers.txt" 2>&1
      rc=$?
      if [ $rc -eq 0 ]; then note "sanitizer $tool $l: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizers.txt" | tail -n 1)"
      else status=1; note "sanitizer $tool $l: FAILED (exit $rc)"; fi
    done
  done
fi

if [ $ncu -eq 1 ]; then
  : > "$out/ncu.txt"
  for l in "${selected[@]}"; do
    for script in lessons/"$l"/ncu*.sh; do
      [ -x "$script" ] || continue
      echo "=== $script ===" >> "$out/ncu.txt"
      if "$script" "$build" >> "$out/ncu.txt" 2>&1; then note "ncu $script: ok"
      else status=1; note "ncu $script: FAILED (see $out/ncu.txt)"; fi
    done
  done
fi

echo
echo "----- summary ($out) -----"
cat "$summary"
[ $status -eq 0 ] && echo "ALL OK" || echo "SOMETHING FAILED"
exit $status
