#!/usr/bin/env bash
# two_trees.sh OLD NEW OUT [GRADE.SH OPTIONS...] — one class graded by two versions of the course at
# the same seed, to show that a change of the grader changed nothing but timings. OLD and NEW are
# two copies of the course (e.g. `git archive REV | tar -C OLD -x` for each commit). Each makes its
# own class with its own scripts/make_test_submissions.sh DIR --attacks OUT (the test submissions
# and the attack suite, which write that copy's paths in) plus TWO_TREES_STUDENTS (default 4)
# made-up students who hand in every lesson's own main.cu (TWO_TREES_CLASS_ONLY=1: those alone), and
# grades it with its own grade.sh:
# with two GPUs at the same time (OLD on GPU 0, NEW on GPU 1; TWO_TREES_GPUS="2 3" names two others
# of a larger machine, "0,1 2,3" gives each two), else one after the other. Each run is
# stopped after TWO_TREES_SECONDS (default 480), keeping what it graded. Then each gradebook is
# written again from its cells by that version's own `grade.sh --gradebook-from` and the two are
# compared: OUT/gradebook.diff, and the count of rows that agree, differ, or were graded by one only.
# Needs what grade.sh needs (a GPU, bubblewrap). Default grade.sh options: --seed 7 --timeout 30
# --mem-mib 2048 (give others after OUT: they go to both runs).
set -uo pipefail
[ $# -ge 3 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
old=$(cd -- "$1" && pwd -P) && new=$(cd -- "$2" && pwd -P) || exit 2
out=$3; shift 3
for t in "$old" "$new"; do
  [ -x "$t/scripts/grade.sh" ] && [ -x "$t/scripts/make_test_submissions.sh" ] || { echo "two_trees.sh: $t is not a copy of the course"; exit 2; }
done
students=${TWO_TREES_STUDENTS:-4} seconds=${TWO_TREES_SECONDS:-480} pair=${TWO_TREES_GPUS:-0 1}
[[ $students =~ ^[0-9]+$ && $seconds =~ ^[0-9]+$ ]] || { echo "two_trees.sh: TWO_TREES_STUDENTS and TWO_TREES_SECONDS are whole numbers"; exit 2; }
[[ $pair =~ ^([0-9]+(,[0-9]+)*)\ ([0-9]+(,[0-9]+)*)$ ]] || { echo "two_trees.sh: TWO_TREES_GPUS is two --gpus lists, e.g. \"0 1\" or \"0,1 2,3\""; exit 2; }
gpu_old=${BASH_REMATCH[1]} gpu_new=${BASH_REMATCH[3]}
[ -e "$out" ] && [ -n "$(ls -A -- "$out")" ] && { echo "two_trees.sh: '$out' exists and is not empty; give a new folder"; exit 2; }
mkdir -p -- "$out" && out=$(cd -- "$out" && pwd -P) && chmod 755 "$out" || exit 1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
{ nvidia-smi -L; nvcc --version | tail -n 1; } > "$out/env.txt" 2>&1

grade() {  # NAME TREE GPU [GRADE.SH OPTIONS...]
  local d=$out/$1 t=$2 g=$3 s0
  shift 3
  mkdir -p "$d"
  if [ "${TWO_TREES_CLASS_ONLY:-0}" = 1 ]; then
    mkdir -p "$d/class"
  else
    "$t/scripts/make_test_submissions.sh" "$d/class" --attacks "$d/out" > "$d/make.txt" 2>&1 || return 1
  fi
  for s in $(seq 1 "$students"); do
    for l in $(grep -v '^#' "$t/lessons/lessons.txt" | awk 'NF { print $1 }'); do
      mkdir -p "$d/class/class-$s/$l" && cp "$t/lessons/$l/main.cu" "$d/class/class-$s/$l/"
    done
  done
  s0=$(date +%s)
  timeout -s INT -k 20 "$seconds" "$t/scripts/grade.sh" "$d/class" --out "$d/out" --seed 7 --timeout 30 --mem-mib 2048 \
    --gpus "$g" "$@" > "$d/console.txt" 2>&1
  echo "grade.sh exit $? after $(( $(date +%s) - s0 )) s" | tee -a "$d/console.txt"
  "$t/scripts/grade.sh" --gradebook-from "$d/out/cells" --out "$d/gradebook" > "$d/gradebook.txt" 2>&1
}
shift_args=("$@")
if [ "$gpus" -ge 2 ]; then
  grade old "$old" "$gpu_old" "${shift_args[@]}" & grade new "$new" "$gpu_new" "${shift_args[@]}" & wait
else
  grade old "$old" "$gpu_old" "${shift_args[@]}"; grade new "$new" "$gpu_old" "${shift_args[@]}"
fi
diff "$out/old/gradebook/gradebook.csv" "$out/new/gradebook/gradebook.csv" > "$out/gradebook.diff"
python3 - "$out/old/gradebook/gradebook.csv" "$out/new/gradebook/gradebook.csv" <<'PY' | tee "$out/summary.txt"
import csv, sys
def rows(p):
    with open(p, encoding="utf-8", newline="") as f:
        return {(r["student"], r["lesson"]): r for r in csv.DictReader(f)}
old, new = rows(sys.argv[1]), rows(sys.argv[2])
interrupted = lambda r: r["first failure or sanitizer finding"].startswith("not graded: no result")
same = differ = one = 0
for key in sorted(set(old) | set(new)):
    a, b = old.get(key), new.get(key)
    if a is None or b is None or interrupted(a) or interrupted(b):
        one += 1
        continue
    cols = [c for c in a if c in b and a[c] != b[c]]
    if cols:
        differ += 1
        print("differs: %s / %s: %s" % (key[0], key[1], ", ".join(cols)))
    else:
        same += 1
print("%d rows agree, %d differ, %d graded by one version only (or by neither)" % (same, differ, one))
PY
