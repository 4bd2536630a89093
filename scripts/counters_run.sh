#!/usr/bin/env bash
# counters_run.sh — for a machine WITH an NVIDIA GPU and Nsight Compute: the hardware counters of
# the course's own solutions (lessons 01, 02, 03, 05, 06), judged by each lesson's rubric.json
# "counters" rules (grading/counters.py). The course's solutions must meet every rule; the raw ncu
# output is kept so the values can be committed and recorded as the rubrics' solution values.
#
# usage: scripts/counters_run.sh [options]
#   --build DIR       build folder                            (default: build-gpu; configured if new)
#   --out DIR         where the results go                    (default: DIR/counters)
#   --only NAME       one lesson, e.g. 02_shared_transpose    (repeatable)
#   --timeout S       seconds per ncu run                     (default: 240)
#   --deadline S      start no lesson after S seconds         (default: 900)
#   --full            every shape of the profiled test case, not only --small's
# Writes OUT/env.txt, OUT/summary.txt and per lesson OUT/NN_name/: report.txt (the table),
# result.json (counters.py measure --json), values.json (evidence.py --counters input) and raw/
# (ncu's own output and command line). Exit 0 when every lesson's counters were read and every
# rule was met, 1 otherwise, 2 for bad usage, 3 without a GPU.
#
#   scripts/counters_run.sh --record DIR [--gpu NAME]
# (no GPU needed) writes the values measured in DIR (a copy of OUT, committed under results/) into
# the lessons' rubrics: "solution" of each measured counters rule, and DIR in the "recorded" note.
set -uo pipefail
cd "$(dirname "$0")/.."

build=build-gpu out="" only=() timeout=240 deadline=900 full=() record="" gpu=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --deadline) deadline=$2; shift 2 ;;
    --full) full=(--full); shift ;;
    --record) record=$2; shift 2 ;;
    --gpu) gpu=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "counters_run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$timeout" "$deadline"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "counters_run.sh: --timeout and --deadline take a whole number of seconds, not '$n'" >&2; exit 2; }
done
lessons=(01_naive_transpose 02_shared_transpose 03_dynamic_shared 05_tiled_matmul 06_bank_conflicts)
[ ${#only[@]} -gt 0 ] && lessons=("${only[@]}")
for l in "${lessons[@]}"; do
  [ -f "lessons/$l/rubric.json" ] || { echo "counters_run.sh: no lessons/$l/rubric.json" >&2; exit 2; }
done

if [ -n "$record" ]; then
  rc=0
  for l in "${lessons[@]}"; do
    if [ ! -f "$record/$l/result.json" ]; then echo "$l: no $record/$l/result.json: nothing recorded"; continue; fi
    python3 -m grading.counters record "$record/$l/result.json" --rubric "lessons/$l/rubric.json" \
      --source "${record%/}/$l" ${gpu:+--gpu "$gpu"} || rc=1
  done
  exit $rc
fi

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "counters_run.sh: no NVIDIA GPU visible (nvidia-smi -L failed)" >&2
  exit 3
fi
out=${out:-$build/counters}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
{
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | head -n 1)"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -n 1)"
  echo "ncu: $(${NCU:-ncu} --version 2>/dev/null | tail -n 1)"
  echo "user: $(id -un) (uid $(id -u))"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | grep -q . && echo '(with local changes)')"
} > "$out/env.txt"
cat "$out/env.txt" | tee -a "$summary"

if [ ! -f "$build/CMakeCache.txt" ]; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')
  cmake --preset default -B "$build" -DCMAKE_CUDA_ARCHITECTURES="$cap" > "$out/configure.txt" 2>&1 \
    || { note "configure failed: $out/configure.txt"; exit 1; }
fi
targets=()
for l in "${lessons[@]}"; do targets+=(--target "${l}_check"); done
if ! cmake --build "$build" "${targets[@]}" > "$out/build.txt" 2>&1; then
  note "build failed: $out/build.txt"
  exit 1
fi

start=$SECONDS status=0
for l in "${lessons[@]}"; do
  if [ $((SECONDS - start)) -ge "$deadline" ]; then
    note "$l: not run (the deadline of $deadline s has passed)"
    status=1
    continue
  fi
  mkdir -p "$out/$l"
  python3 -m grading.counters measure "$build/${l}_check" --rubric "lessons/$l/rubric.json" --timeout "$timeout" \
    --save "$out/$l/raw" --values "$out/$l/values.json" --json "${full[@]}" > "$out/$l/result.json" 2> "$out/$l/stderr.txt"
  rc=$?
  if [ $rc -ne 0 ]; then
    note "$l: counters.py failed (exit $rc): $(tail -n 1 "$out/$l/stderr.txt")"
    status=1
    continue
  fi
  python3 - "$out/$l/result.json" > "$out/$l/report.txt" <<'EOF'
import json, sys
sys.path.insert(0, "grading")
import counters
counters.report(json.load(open(sys.argv[1])))
EOF
  cat "$out/$l/report.txt"
  line=$(python3 - "$out/$l/result.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rows = r["rows"]
count = lambda s: sum(1 for x in rows if x["status"] == s)
secs = sum(x.get("seconds", 0) for x in r["runs"])
if not r["counters"]["read"]:
    print("NOT READ: " + r["counters"]["reason"])
else:
    print(f"{count('ok')} ok, {count('short')} short, {count('not measured')} not measured, {count('missing')} missing"
          f" ({secs:.0f} s under ncu)")
EOF
)
  note "$l: $line"
  [[ "$line" == *" 0 short, 0 not measured, 0 missing"* ]] || status=1
done
note "total: $((SECONDS - start)) s; exit $status (0: every lesson's counters read, every rule met by the course's solution)"
exit $status
