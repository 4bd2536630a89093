#!/usr/bin/env bash
# speed_cases.sh OUT [--build DIR [--no-build]] [--rounds N] [--no-memcheck] [--deadline SECONDS] — on a machine
# with a GPU: the checks' side of the speed evidence (harness/speed.cuh), raw output under OUT.
#   1. builds the six lesson checks and the six exercise checks (their stubs) in DIR (default
#      build-speed; --no-build: DIR is built already);
#   2. runs every lesson's `speed: ...` test cases N times (default 3), each run a process of its
#      own with --evidence OUT/evidence.jsonl and doctest's --duration=true (each case's seconds);
#   3. the two grading roles on them: --record, then --judge --verdict: the verdict's "evidence"
#      must hold every speed case with a "submission" (the judge's closing line: 0 missing);
#   4. --small, plain and (unless --no-memcheck) under compute-sanitizer memcheck: the memcheck subset,
#      with its wall time beside the full --gpu run's; no speed case may run in it;
#   5. the exercise stubs' speed cases: each must fail, except 05.register_tiled (a correct, slow stub).
# Prints one line per finding and ends with "speed cases: N problem(s)" (exit 1 if N > 0).
# --deadline SECONDS: start no new step past it (what is done is kept; the summary says what was not).
set -uo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
repo=$(cd -- "$here/../.." && pwd -P)
[ $# -ge 1 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
out=$1; shift
build=$repo/build-speed rounds=3 memcheck=1 deadline=0 do_build=1
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --no-memcheck) memcheck=0; shift ;;
    --no-build) do_build=0; shift ;;
    --deadline) deadline=$2; shift 2 ;;
    *) echo "speed_cases.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "--rounds must be a whole number from 1" >&2; exit 2; }
[[ $deadline =~ ^[0-9]+$ ]] || { echo "--deadline must be a whole number of seconds" >&2; exit 2; }
mkdir -p "$out" && out=$(cd -- "$out" && pwd -P) || exit 1
start=$(date +%s)
problems=0
note() { echo "$*" | tee -a "$out/summary.txt"; }
problem() { problems=$((problems + 1)); note "PROBLEM: $*"; }
late() { [ "$deadline" -gt 0 ] && [ $(( $(date +%s) - start )) -ge "$deadline" ]; }
: > "$out/summary.txt"
lessons=(01_naive_transpose 02_shared_transpose 03_dynamic_shared 04_reduction 05_tiled_matmul 06_bank_conflicts)
export COURSE_REQUIRE_GPU=1

# 1. build
targets=()
for l in "${lessons[@]}"; do targets+=("${l}_check" "exercise_${l}_check"); done
if [ $do_build -eq 1 ]; then
  { cmake --preset default -B "$build" && cmake --build "$build" --target "${targets[@]}"; } > "$out/build.txt" 2>&1 ||
    { note "build failed: see $out/build.txt"; tail -n 30 "$out/build.txt"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
note "GPU: $(sed -n 2p "$out/gpu.txt")"

# 2. the speed cases, plain, each round a process of its own
: > "$out/evidence.jsonl"
for round in $(seq 1 "$rounds"); do
  for l in "${lessons[@]}"; do
    late && { note "deadline: speed round $round of $l not run"; continue; }
    log=$out/speed-$l-$round.txt
    "$build/${l}_check" --gpu --test-case='speed: *' --evidence "$out/evidence.jsonl" --duration=true > "$log" 2>&1 ||
      problem "$l: the speed cases failed in round $round ($log)"
    # doctest --duration=true prints "0.412345 s: speed: 02.tiled" per test case
    while read -r secs name; do
      awk -v s="$secs" 'BEGIN { exit !(s > 0.6) }' && note "slow: $name took $secs s (round $round; aim: 0.6 s)"
    done < <(sed -n 's/^\([0-9.]*\) s: \(speed: .*\)$/\1 \2/p' "$log")
  done
done
n=$(grep -c '' "$out/evidence.jsonl")
[ "$n" -eq $((13 * rounds)) ] || problem "evidence.jsonl has $n lines, expected $((13 * rounds)) (13 exercises x $rounds rounds)"
grep '^speed ' "$out"/speed-*-1.txt | sed 's/^[^:]*://' | tee -a "$out/summary.txt"
# The spread across the rounds of each exercise's fraction of its ceiling (what the thresholds must exceed).
python3 - "$out/evidence.jsonl" << 'EOF' | tee -a "$out/summary.txt"
import json, sys, statistics
by = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    by.setdefault(e["exercise"], []).append(e["ceiling_ms"] / e["ms"])
for ex, f in sorted(by.items()):
    print("%-18s ceiling fraction over %d rounds: median %.3f, min %.3f, max %.3f, spread %.1f%%"
          % (ex, len(f), statistics.median(f), min(f), max(f), 100 * (max(f) - min(f)) / statistics.median(f)))
EOF

# 3. the roles: runner, then judge, on the speed cases
for l in "${lessons[@]}"; do
  late && { note "deadline: roles of $l not run"; continue; }
  "$build/${l}_check" --gpu --test-case='speed: *' --record "$out/roles-$l.bin" > "$out/roles-$l-record.txt" 2>&1 ||
    problem "$l: the runner failed (roles-$l-record.txt)"
  "$build/${l}_check" --gpu --test-case='speed: *' --judge "$out/roles-$l.bin" --verdict "$out/roles-$l-verdict.json" \
    > "$out/roles-$l-judge.txt" 2>&1 || problem "$l: the judge failed the course's own run (roles-$l-judge.txt)"
  python3 - "$out/roles-$l-verdict.json" "$l" >> "$out/summary.txt" 2>&1 << 'EOF'
import json, sys
v = json.load(open(sys.argv[1]))
ev = v.get("evidence", [])
bad = [e["exercise"] for e in ev if e["submission"] is None or e["solution"]["ms"] <= 0]
ok = v.get("complete") is True and ev and not bad and v["missing"] == 0 and v["inconsistent"] == 0
print("%s verdict: %d evidence entries, e.g. %s" % (sys.argv[2], len(ev), json.dumps(ev[:1])))
sys.exit(0 if ok else 1)
EOF
  [ $? -eq 0 ] || problem "$l: the verdict's evidence is missing, null or inconsistent (roles-$l-verdict.json)"
done

# 4. --small: plain, and under memcheck, beside the full --gpu run
for l in "${lessons[@]}"; do
  late && { note "deadline: --small of $l not run"; continue; }
  t0=$(date +%s.%N)
  "$build/${l}_check" --gpu --test-case-exclude='speed: *' > "$out/full-$l.txt" 2>&1 || problem "$l: --gpu failed (full-$l.txt)"
  t1=$(date +%s.%N)
  "$build/${l}_check" --gpu --small --duration=true > "$out/small-$l.txt" 2>&1 || problem "$l: --gpu --small failed (small-$l.txt)"
  t2=$(date +%s.%N)
  grep -q ' s: speed: ' "$out/small-$l.txt" && problem "$l: a speed case ran under --small"
  grep -q '^speed ' "$out/small-$l.txt" && problem "$l: a speed line was printed under --small"
  asserts=$(sed -n 's/^\[doctest\] assertions: *\([0-9]*\).*/\1/p' "$out/small-$l.txt")
  [ "${asserts:-0}" -gt 0 ] || problem "$l: --small checked nothing"
  line="$l: --gpu (no speed cases) $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; --small $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", b - a }') s, $asserts assertions"
  if [ $memcheck -eq 1 ] && command -v compute-sanitizer > /dev/null; then
    t3=$(date +%s.%N)
    timeout 900 compute-sanitizer --tool memcheck --error-exitcode 99 "$build/${l}_check" --gpu --small > "$out/memcheck-small-$l.txt" 2>&1 ||
      problem "$l: memcheck --small failed (memcheck-small-$l.txt)"
    line+="; memcheck --small $(awk -v a="$t3" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s ($(grep -o 'ERROR SUMMARY: [0-9]* error' "$out/memcheck-small-$l.txt" | tail -n 1))"
  fi
  note "$line"
done

# 5. the stubs: every speed case fails, except 05.register_tiled's (its stub is correct and slow)
for l in "${lessons[@]}"; do
  late && { note "deadline: the stubs of $l not run"; continue; }
  for id in $(grep -o 'GPU_TEST_CASE("speed: [0-9a-z._]*")' "$repo/lessons/$l/check.cu" | sed 's/.*speed: \(.*\)")/\1/'); do
    "$build/exercise_${l}_check" --gpu --test-case="speed: $id" > "$out/stub-$id.txt" 2>&1
    rc=$?
    if [ "$id" = 05.register_tiled ]; then
      [ $rc -eq 0 ] && note "stub $id: passes (correct and slow, as designed): $(grep '^speed ' "$out/stub-$id.txt")" ||
        problem "stub $id: the correct stub failed ($out/stub-$id.txt)"
    else
      [ $rc -ne 0 ] && note "stub $id: fails, as it must" || problem "stub $id: PASSED its speed case ($out/stub-$id.txt)"
    fi
  done
done

note "took $(( $(date +%s) - start )) s"
note "speed cases: $problems problem(s)"
[ $problems -eq 0 ]
