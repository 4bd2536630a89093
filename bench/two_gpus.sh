#!/usr/bin/env bash
# two_gpus.sh OUT [GRADE.SH OPTIONS...] — one GPU against two, side by side, in one sitting (the
# goal: two GPUs grade a class at least 1.8x as fast as one). Needs a machine with two GPUs or more
# (it refuses on fewer), bubblewrap and what grade.sh needs; about 7 minutes on two H200s.
#   0. makes a class of correct students in OUT/class: TWO_GPUS_STUDENTS (default 8) made-up
#      students who each hand in every lesson's own main.cu (8 x 6 = 48 cells);
#   1. cold start: one more made-up student's six lessons graded on GPUs 0 and 1 into OUT/warm,
#      which builds the course and its judges into the course cache OUT/cache (timed: the cold
#      start; its first result, against the warm runs', is what a cold start adds);
#   2. the class on GPU 0 alone (grade.sh --gpus 0) into OUT/one;
#   3. the same class, at the same seed (TWO_GPUS_SEED, default 2026), on GPUs 0 and 1
#      (--gpus 0,1) into OUT/two;
#   4. on a machine of more than two GPUs, the same class on all of them into OUT/all (unless
#      TWO_GPUS_ALL=no: a larger class within a time limit).
# Runs 2 and 3 both start warm: the course from the cache. The report (bench/two_gpus_report.py,
# also OUT/summary.txt) gives each run's wall time, cells per hour, the speed-up, the speed-up as
# if both had built the course cold, each GPU's busy time, the median GPU time of a cell, when the
# first result came, the pace after it (what a class of 200 would take at that pace), per-step
# sums from the cells' timing and whether the two gradebooks agree.
# OUT/warm, OUT/one and OUT/two keep (beside grade.sh's whole --out) gradebook.csv, run-info.txt,
# progress.log, console.txt, wall.txt and timing.txt (one line per cell: "NNNN student / lesson: key=value ..."): the raw
# output to commit (paths under OUT written as /tmp/two-gpus).
set -uo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
repo=$(cd -- "$here/.." && pwd -P)
[ $# -ge 1 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
out=$1; shift
students=${TWO_GPUS_STUDENTS:-8}
seed=${TWO_GPUS_SEED:-2026}
all=${TWO_GPUS_ALL:-yes}
[[ $students =~ ^[0-9]+$ ]] && [ "$students" -ge 1 ] || { echo "two_gpus.sh: TWO_GPUS_STUDENTS must be a whole number > 0, not '$students'"; exit 2; }
[[ $seed =~ ^[0-9]+$ ]] || { echo "two_gpus.sh: TWO_GPUS_SEED must be a whole number, not '$seed'"; exit 2; }
[[ $all = yes || $all = no ]] || { echo "two_gpus.sh: TWO_GPUS_ALL must be yes or no, not '$all'"; exit 2; }
for a in "$@"; do
  case $a in --gpus|--seed|--out|--course-cache|--no-course-cache|--resume|--slurm|--share)
    echo "two_gpus.sh: $a is set by the script itself (GPUs, seed, folders); give other grade.sh options only"; exit 2 ;;
  esac
done
ngpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU [0-9]')
if [ "$ngpus" -lt 2 ]; then
  echo "two_gpus.sh: this machine has $ngpus GPU(s) (nvidia-smi -L); one GPU against two needs a machine with at least two: nothing measured"
  exit 3
fi
mkdir -p -- "$out" && out=$(cd -- "$out" && pwd -P) || exit 1
for d in class warm one two all cache; do
  [ ! -e "$out/$d" ] || { echo "two_gpus.sh: $out/$d exists: give a new OUT"; exit 2; }
done
chmod 755 "$out"  # (a cell runs as a user of its own: every folder above the course cache must be open)

lessons=("$repo"/lessons/[0-9][0-9]_*/)
hand_in() {  # hand_in CLASS STUDENT: the student hands in every lesson's own main.cu
  local d l
  for d in "${lessons[@]}"; do
    l=$(basename -- "$d"); mkdir -p "$1/$2/$l"; cp "$d/main.cu" "$1/$2/$l/"
  done
}
for s in $(seq 1 "$students"); do hand_in "$out/class" "$(printf 'student %02d' "$s")"; done
hand_in "$out/warm-class" "warm-up"

# grade NAME CLASS GRADE.SH-OPTIONS...: one run into OUT/NAME, its wall time in OUT/NAME/wall.txt
grade() {
  local name=$1 class=$2; shift 2
  echo "== $name: grade.sh $* (into $out/$name)"
  local t0 rc
  t0=$(date +%s.%N)
  "$repo/scripts/grade.sh" "$class" --out "$out/$name" --course-cache "$out/cache" --seed "$seed" "$@" > "$out/$name.console" 2>&1
  rc=$?
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' > "$out/$name.wall"
  mkdir -p "$out/$name"
  mv "$out/$name.console" "$out/$name/console.txt"; mv "$out/$name.wall" "$out/$name/wall.txt"; echo "$t0" > "$out/$name/start.txt"
  grep -a '^grade.sh: \(building\|the course and\|grading on\|compiling\)' "$out/$name/console.txt" | cut -c 1-200
  echo "   exit $rc after $(cat "$out/$name/wall.txt") s"
  [ -f "$out/$name/gradebook.csv" ] || { echo "two_gpus.sh: grade.sh wrote no gradebook:"; tail -n 15 "$out/$name/console.txt"; return 1; }
  timing "$out/$name/cells" > "$out/$name/timing.txt"
  cp "$out/$name/cells/run-info.txt" "$out/$name/"
}
# timing CELLS: one line per cell, "NNNN student / lesson: key=value ...", from its record
timing() {
  if [ -f "$repo/grading/cellrecord.py" ]; then
    (cd "$repo" && python3 -m grading.cellrecord timing "$1" --names)
  else
    local d
    for d in "$1"/[0-9]*/; do
      [ -f "$d/timing.txt" ] || continue
      printf '%s %s / %s: %s\n' "$(basename "$d")" "$(sed -n 's/^student=//p' "$d/identity.txt")" \
        "$(sed -n 's/^lesson=//p' "$d/identity.txt")" "$(tr '\n' ' ' < "$d/timing.txt")"
    done
  fi
}

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
  echo "CPU cores: $(nproc)"; nvcc --version | tail -n 2; cmake --version | head -n 1; bwrap --version
  top=$(git -C "$repo" rev-parse --show-toplevel 2> /dev/null)  # (a copy inside another checkout is not that one)
  echo "commit: $([ "$top" = "$repo" ] && git -C "$repo" rev-parse --short HEAD || echo '? (not a git checkout)')"
  opts="$*"; echo "options: ${opts//$repo/<course>}; seed $seed; $students students x ${#lessons[@]} lessons"; } > "$out/env.txt" 2>&1
grade warm "$out/warm-class" --gpus 0,1 "$@" || exit 1
grade one "$out/class" --gpus 0 "$@" || exit 1
grade two "$out/class" --gpus 0,1 "$@" || exit 1
runs="warm one two"
if [ "$ngpus" -gt 2 ] && [ "$all" = yes ]; then  # 4. on a machine of more GPUs: the same class on all of them (OUT/all)
  grade all "$out/class" --gpus "$(seq -s, 0 $((ngpus - 1)))" "$@" || exit 1
  runs="$runs all"
fi
for d in $runs; do
  sed -i "s|$out|/tmp/two-gpus|g" "$out/$d/console.txt" "$out/$d/run-info.txt" "$out/$d/progress.log" "$out/$d/gradebook.csv" 2> /dev/null
done
python3 "$here/two_gpus_report.py" "$out" | tee "$out/summary.txt"
