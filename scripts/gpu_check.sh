#!/usr/bin/env bash
# gpu_check.sh — for a machine WITH an NVIDIA GPU: build every lesson, run every check (GPU
# checks must pass, never skip), run every lesson at its default size plus the extra runs its
# README quotes (lessons/NN_*/extra_runs.txt; lesson 04's companion's two broken kernels), run the
# four compute-sanitizer tools over every lesson's GPU checks, and run lesson 02's OpenCL companion
# on the GPU's OpenCL driver. A lesson's CUDA companion (lessons/NN_name/going_further/, program
# and tests NN_name_going_further) goes wherever its lesson goes: built, checked, run with its own
# extra_runs.txt, sanitized, profiled. Prints a summary last.
#
# usage: scripts/gpu_check.sh [options]
#   --build DIR      build folder                      (default: build-gpu)
#   --out DIR        where logs and results.csv go     (default: DIR/gpu-check)
#   --arch LIST      CMAKE_CUDA_ARCHITECTURES          (default: this GPU's, via nvidia-smi)
#   --only NAME      one lesson, e.g. 02_shared_transpose (repeatable; a lesson brings its companion,
#                    e.g. 05_tiled_matmul_going_further, which can also be named alone)
#   --no-sanitize    skip compute-sanitizer
#   --no-lessons     skip running the lessons
#   --ncu            also run each selected lesson's Nsight Compute script (lessons/NN_*/ncu*.sh)
#   --t4             the code a T4 (Colab's free GPU, sm_75) runs, on this GPU: build for compute_75
#                    PTX only (CMAKE_CUDA_ARCHITECTURES=75-virtual, the driver compiles it for this
#                    GPU at start-up, so every sm_75 code path runs), check that the binaries hold
#                    nothing else, and run checks and lessons with COURSE_EMULATE_T4=1 (a T4's
#                    shared-memory and memory limits; see common/device_info.cuh). No OpenCL or ncu
#                    steps; default build folder build-t4
#   any other argument after -- goes to cmake's configure step
set -uo pipefail
cd "$(dirname "$0")/.."

build="" out="" arch="" sanitize=1 lessons=1 ncu=0 t4=0 only=() extra=()
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
    --t4) t4=1; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "gpu_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ $t4 -eq 1 ]; then
  [ -n "$arch" ] && [ "$arch" != 75-virtual ] && { echo "gpu_check.sh: --t4 builds for 75-virtual; leave out --arch" >&2; exit 2; }
  [ $ncu -eq 1 ] && { echo "gpu_check.sh: --t4 has no ncu step (the profiler scripts measure this GPU's own build)" >&2; exit 2; }
  arch=75-virtual build=${build:-build-t4}
  export COURSE_EMULATE_T4=1
fi
build=${build:-build-gpu}
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
if [ ${#only[@]} -eq 0 ]; then named=($all_lessons); else named=("${only[@]}"); fi
# Each lesson, then its CUDA companion if it has one (lessons/NN_name/going_further/main.cu).
selected=()
for l in "${named[@]}"; do
  [[ " ${selected[*]} " == *" $l "* ]] || selected+=("$l")
  c=${l}_going_further
  if [ -f "lessons/$l/going_further/main.cu" ] && [[ " ${selected[*]} " != *" $c "* ]]; then selected+=("$c"); fi
done
# The folder of a lesson or companion: NN_name_going_further lives in lessons/NN_name/going_further.
dir_of() { case "$1" in *_going_further) echo "lessons/${1%_going_further}/going_further" ;; *) echo "lessons/$1" ;; esac; }
# The selected lessons, companions and their checks (and, below, the OpenCL companion): not the
# exercises or the site.
targets=(--target common_check harness_check)
for l in "${selected[@]}"; do targets+=("$l" "${l}_check"); done
for l in "${selected[@]}"; do  # a companion's ncu.sh also profiles its lesson's program
  case "$l" in *_going_further) targets+=("${l%_going_further}") ;; esac
  [ -f "lessons/$l/probes.cu" ] && targets+=("${l}_probes")  # lesson 06's probe tool, for its ncu scripts
done

# COURSE_FULL=ON: the companions (lessons 02's and 05's going_further, lesson 02's OpenCL program) are configured too.
config=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCOURSE_FULL=ON)
command -v ninja >/dev/null && config+=(-G Ninja)
[ -n "$arch" ] && config+=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
if ! cmake "${config[@]}" "${extra[@]}" > "$out/build.txt" 2>&1 || ! cmake --build "$build" -j "${targets[@]}" >> "$out/build.txt" 2>&1; then
  tail -n 40 "$out/build.txt"; note "BUILD FAILED (see $out/build.txt)"; exit 1
fi
note "build: ok"

# --t4: every lesson and check must hold compute_75 PTX and no machine code (no sm_90 fallback).
if [ $t4 -eq 1 ]; then
  note "T4 mode: compute_75 PTX only, JIT-compiled for this GPU; COURSE_EMULATE_T4=1"
  : > "$out/cuobjdump.txt"
  for l in "${selected[@]}"; do
    for bin in "$build/$l" "$build/${l}_check"; do
      elf=$(cuobjdump --list-elf "$bin" 2>&1 | grep -c '^ELF file')
      ptx=$(cuobjdump --list-ptx "$bin" 2>&1 | grep '^PTX file')
      { echo "=== $bin"; cuobjdump --list-elf --list-ptx "$bin" 2>&1; } >> "$out/cuobjdump.txt"
      if [ "$elf" -eq 0 ] && [ -n "$ptx" ] && ! grep -qv 'sm_75' <<< "$ptx"; then :
      else status=1; note "T4 mode: $bin holds more than compute_75 PTX ($elf machine-code images; see $out/cuobjdump.txt)"; fi
    done
  done
  [ $status -eq 0 ] && note "T4 mode: every lesson and check holds only compute_75 PTX (cuobjdump; $out/cuobjdump.txt)"
fi

# Checks: the GPU must be there (COURSE_REQUIRE_GPU turns a would-be skip into a failure).
labels=$(IFS='|'; echo "${selected[*]}|common|harness")
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
    if [ -f "$(dir_of "$l")/extra_runs.txt" ]; then
      while read -r -a args; do
        [ ${#args[@]} -eq 0 ] && continue
        echo "=== $l ${args[*]} ===" >> "$out/lessons.txt"
        if "$build/$l" "${args[@]}" --csv "$out/results.csv" < /dev/null >> "$out/lessons.txt" 2>&1; then note "lesson $l ${args[*]}: ok"
        else status=1; note "lesson $l ${args[*]}: FAILED (exit $?)"; fi
      done < "$(dir_of "$l")/extra_runs.txt"
    fi
  done
fi

# ---- lesson 04's deliberately broken kernels (its companion's), each logged where its README points
is_selected() { local l; for l in "${selected[@]}"; do [ "$l" = "$1" ] && return 0; done; return 1; }
if is_selected 04_reduction_going_further; then
  demo=("$build/04_reduction_going_further" --n 4096)
  if [ $lessons -eq 1 ]; then  # (the default run above ran both at 2^26 floats)
    # the barrier only some threads reach, without a tool: does it finish, and with what? (exit 0 if it does)
    echo "=== 04_reduction_going_further --divergent-barrier --n 4096 ===" >> "$out/lessons.txt"
    if timeout 120 "${demo[@]}" --divergent-barrier >> "$out/lessons.txt" 2>&1
    then note "04_reduction_going_further --divergent-barrier: finished"
    else status=1; note "04_reduction_going_further --divergent-barrier: did not finish or failed (see lessons.txt)"; fi
  fi
  if [ $sanitize -eq 1 ]; then  # the two broken kernels, each under the tool that finds its bug
    timeout 300 compute-sanitizer --tool racecheck "${demo[@]}" --racy > "$out/racecheck_racy.txt" 2>&1
    rc=$?; note "racecheck 04_reduction_going_further --racy (expected to report hazards, rc $rc): $(grep -E 'RACECHECK SUMMARY' "$out/racecheck_racy.txt" | tail -n 1)"
    [ $rc -eq 124 ] && { status=1; note "  ... timed out"; }
    timeout 300 compute-sanitizer --tool synccheck "${demo[@]}" --divergent-barrier > "$out/synccheck_divergent.txt" 2>&1
    rc=$?; note "synccheck 04_reduction_going_further --divergent-barrier (expected to report errors, rc $rc): $(grep -E 'ERROR SUMMARY: [0-9]+ error' "$out/synccheck_divergent.txt" | head -n 1)"
    [ $rc -eq 124 ] && { status=1; note "  ... timed out"; }
  fi
fi

# ---- OpenCL: lesson 02's companion on NVIDIA's OpenCL driver (runs when 02_shared_transpose is selected)
# The driver ships libnvidia-opencl.so.1, but a machine may have no ICD file naming it (PoCL only,
# or none). A private folder holding one nvidia.icd, named by OCL_ICD_VENDORS, makes sure the ICD
# loader sees NVIDIA's platform; the program's default device is the first GPU. (Where the
# environment also sets OCL_ICD_FILENAMES, a list of ICD libraries that ocl-icd 2.3.2 reads, the
# loader loads those too; --list-devices at the top of opencl.txt shows what it found.) The checks
# must run (COURSE_REQUIRE_OPENCL=1: no skip); the program's table goes to opencl.txt and results.csv.
if [ $t4 -eq 0 ] && [[ " ${selected[*]} " == *" 02_shared_transpose "* ]]; then
  if ! cmake --build "$build" --target 02_shared_transpose_opencl 02_shared_transpose_opencl_check >> "$out/build.txt" 2>&1; then
    note "opencl: not built (configure found no OpenCL loader or CL/opencl.hpp; see $out/build.txt)"
  else
    vendors=$(mktemp -d)
    echo libnvidia-opencl.so.1 > "$vendors/nvidia.icd"
    : > "$out/opencl.txt"
    echo "=== OCL_ICD_VENDORS=$vendors (nvidia.icd: libnvidia-opencl.so.1) 02_shared_transpose_opencl --list-devices ===" >> "$out/opencl.txt"
    OCL_ICD_VENDORS=$vendors "$build/02_shared_transpose_opencl" --list-devices >> "$out/opencl.txt" 2>&1
    echo "=== 02_shared_transpose_opencl_check --opencl (COURSE_REQUIRE_OPENCL=1) ===" >> "$out/opencl.txt"
    if OCL_ICD_VENDORS=$vendors COURSE_REQUIRE_OPENCL=1 "$build/02_shared_transpose_opencl_check" --opencl >> "$out/opencl.txt" 2>&1; then
      note "opencl checks: $(grep -E 'test cases:' "$out/opencl.txt" | tail -n 1)"
    else status=1; note "opencl checks: FAILED (see $out/opencl.txt)"; fi
    if [ $lessons -eq 1 ]; then
      echo "=== 02_shared_transpose_opencl (8192 x 8192) ===" >> "$out/opencl.txt"
      if OCL_ICD_VENDORS=$vendors "$build/02_shared_transpose_opencl" --rows 8192 --cols 8192 --csv "$out/results.csv" >> "$out/opencl.txt" 2>&1
      then note "opencl lesson: ok ($(grep -m 1 'OpenCL device:' "$out/opencl.txt"))"
      else status=1; note "opencl lesson: FAILED (exit $?, see $out/opencl.txt)"; fi
      # The kernel without its barrier, once, for the record: whether its output is wrong on this
      # GPU is what the README reports. Its exit code (0 or 1) does not count against the run.
      echo "=== 02_shared_transpose_opencl --kernel transpose_tiled_racy (a deliberate race) ===" >> "$out/opencl.txt"
      OCL_ICD_VENDORS=$vendors "$build/02_shared_transpose_opencl" --kernel transpose_tiled_racy >> "$out/opencl.txt" 2>&1
      echo "(exit code $?)" >> "$out/opencl.txt"
    fi
    rm -rf "$vendors"
  fi
fi
# ---- end of the OpenCL step

if [ $sanitize -eq 1 ]; then
  : > "$out/sanitizers.txt"
  for tool in memcheck racecheck synccheck initcheck; do
    for l in "${selected[@]}"; do
      args=(--tool "$tool" --error-exitcode 99)
      [ "$tool" = memcheck ] && args+=(--leak-check full)
      echo "=== $tool $l ===" >> "$out/sanitizers.txt"
      # The speed test cases time 256 MiB kernels 24 times each: nothing a sanitizer sees there that the
      # other test cases do not show it, at many times their cost. Left out (doctest's own filter).
      COURSE_REQUIRE_GPU=1 compute-sanitizer "${args[@]}" "$build/${l}_check" --gpu --test-case-exclude='speed: *' >> "$out/sanitizers.txt" 2>&1
      rc=$?
      if [ $rc -eq 0 ]; then note "sanitizer $tool $l: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizers.txt" | tail -n 1)"
      else status=1; note "sanitizer $tool $l: FAILED (exit $rc)"; fi
    done
  done
fi

if [ $ncu -eq 1 ]; then
  : > "$out/ncu.txt"
  for l in "${selected[@]}"; do
    for script in "$(dir_of "$l")"/ncu*.sh; do
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
