#!/usr/bin/env bash
# make_score_class.sh DIR — a class of correct submissions of every lesson at known speeds, and of
# kernels that miss their exercise's idea, to show the score rule of grading/score.py at work on a GPU:
#   scripts/make_score_class.sh DIR && scripts/grade.sh DIR --seed 7 --out OUT
#   scripts/make_score_class.sh --check OUT      each row of OUT/gradebook.csv against what it must score
# Every submission is the lesson's own main.cu, or a mutant of it made by grading/mutants.py (no code
# is copied here), or the solution with its exercise regions' comments taken out:
#
# student (folder)     lesson: what it holds                                              must score
# solution             01 02 03 04 05 06: the course's solution                           100%
# near-solution        01 02 04 05 06: the solution with its regions' comments taken out   >= 97%
#                      and one comment line put in (the same code); 03: 03_dynamic_shared:03.tile_in_flight+4:off_by_one:0, one
#                      more group of the load loop, all guarded (grading/equivalent_mutants.txt)
# padding-removed      02: 02.tiled+1:no_padding:0; 03: 03.tile+2:no_padding:0;            < 85%
#                      06: 06.padded+11:no_padding:0
# padding-removed-2    03: 03.tile_in_flight+2:no_padding:0; 06: 06.padded+10:no_padding:0 < 85%
# redundant-loop       02: 02.tiled+3:redundant_rows:0; 03: 03.tile+4:redundant_rows:0     < 85%
# redundant-loop-2     02: 02.tiled+9:redundant_rows:0; 03: 03.tile_in_flight+4:redundant_rows:0  < 85%
# naive-in-tiled       02: 02.tiled+0:naive_in_tiled:0; 03: 03.tile+0:naive_in_tiled:0     < 70%
# naive-in-tiled-2     03: 03.tile_in_flight+0:naive_in_tiled:0                            < 70%
# other-coalescing     01: 01.strided_reads+0:other_coalescing:0 (lesson 01's naive         < 70%
#                      kernels are the lesson itself: this is its naive-in-the-gap)
# other-coalescing-2   01: 01.strided_writes+0:other_coalescing:0 (faster than the pattern   < 70%
#                      asked: no speed credit)
# pointless            a correct kernel that misses its exercise's idea (the rubrics' "idea";  < 85%
#                      grading/mutants.py's misses_idea, REGION+0:misses_idea:0): 01.strided_reads
#                      (both sides strided), 02.tiled (the tile stored back by rows), 03.tile_in_flight
#                      (one load in flight), 04.tree (interleaved addressing), 05: 05.register_tiled's
#                      stub (one thread, 64 naive dot products), 06.swizzled (r & 15: 2-way conflicts)
# pointless-2          03.records (no shared buffer), 04.shuffle (through shared memory), 05.tiled   < 85%
#                      (no tiles)
# pointless-3          04.last_block (one thread adds the partials)                        < 85%
# A pointless row must also pass correctness, but for 06 (the course's bank model, one of its checks,
# fails a conflicting layout) and 05.tiled (the required rule of two barriers per step fails a kernel
# with none): those score 0, and say why.
# (Lesson 06's exercise is a tile layout: no redundant loop or naive tile applies; its padding
# removed may already fail correctness, which scores 0.)
# --check exits 0 when every row scores as it must, 1 naming each that does not, 2 on bad input.
set -euo pipefail
if [ $# -lt 1 ] || [ "$1" = --help ] || [ "$1" = -h ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  [ $# -eq 1 ] && exit 0 || exit 2
fi
repo=$(cd -- "$(dirname -- "$0")/.." && pwd -P)
py=$(command -v /usr/bin/python3 || command -v python3)

if [ "$1" = --check ]; then
  [ $# -eq 2 ] && [ -f "$2/gradebook.csv" ] || { echo "make_score_class.sh: --check needs grade.sh's --out folder (with gradebook.csv)" >&2; exit 2; }
  exec "$py" - "$2/gradebook.csv" <<'PY'
import csv, sys
import re
must = {"solution": (">=", 100), "near-solution": (">=", 97), "padding-removed": ("<", 85), "redundant-loop": ("<", 85),
        "naive-in-tiled": ("<", 70), "other-coalescing": ("<", 70), "pointless": ("<", 85)}
# pointless rows that fail correctness by design (see --help); every other one must pass it
may_fail = {("pointless", "06_bank_conflicts"), ("pointless-2", "05_tiled_matmul")}
bad = rows = 0
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    for row in csv.DictReader(f):
        kind = re.sub(r"-[0-9]+$", "", row["student"])
        if kind not in must:
            print("unexpected row: %s / %s" % (row["student"], row["lesson"])); bad += 1; continue
        rows += 1
        op, limit = must[kind]
        score = float(row["score"].rstrip("%"))
        ok = score >= limit if op == ">=" else score < limit
        if kind == "pointless" and (row["student"], row["lesson"]) not in may_fail and row["correctness"] != "passed":
            ok = False  # a pointless kernel is correct: failing its checks would prove nothing of the score
        print("%-4s %-20s %-20s %5s (must be %s %d%%)  %s  %s" % ("ok" if ok else "BAD", row["student"], row["lesson"],
              row["score"], op, limit, row["performance"], row["first failure or sanitizer finding"]))
        bad += not ok
print("%d rows, %d as they must be" % (rows, rows - bad))
sys.exit(1 if bad or rows != 36 else 0)
PY
fi

[ $# -eq 1 ] || { echo "make_score_class.sh: one folder, or --check OUT (see --help)" >&2; exit 2; }
dir=$1
if [ -e "$dir" ] && [ -n "$(ls -A -- "$dir")" ]; then
  echo "make_score_class.sh: '$dir' exists and is not empty; give a new folder" >&2; exit 2
fi
mkdir -p -- "$dir"
lesson_of() { case $1 in 01*) echo 01_naive_transpose ;; 02*) echo 02_shared_transpose ;; 03*) echo 03_dynamic_shared ;;
                         04*) echo 04_reduction ;; 05*) echo 05_tiled_matmul ;; 06*) echo 06_bank_conflicts ;; esac; }
# mutant STUDENT ID: the lesson's main.cu with grading/mutants.py's mutant ID applied.
mutant() {
  local lesson=${2%%:*}
  mkdir -p -- "$dir/$1/$lesson"
  (cd "$repo" && "$py" -m grading.mutants apply "$2" "$dir_abs/$1/$lesson/main.cu")
  ! cmp -s "$repo/lessons/$lesson/main.cu" "$dir/$1/$lesson/main.cu" || { echo "make_score_class.sh: $2 changed nothing" >&2; exit 1; }
}
dir_abs=$(cd -- "$dir" && pwd -P)
for nn in 01 02 03 04 05 06; do
  lesson=$(lesson_of $nn)
  mkdir -p -- "$dir/solution/$lesson"
  cp -- "$repo/lessons/$lesson/main.cu" "$dir/solution/$lesson/main.cu"
done
# near-solution: the regions' comment lines and trailing comments taken out (markers kept), and
# one comment line written after each BEGIN marker (lesson 01's regions hold no comment)
for nn in 01 02 04 05 06; do
  lesson=$(lesson_of $nn)
  mkdir -p -- "$dir/near-solution/$lesson"
  (cd "$repo" && "$py" - "lessons/$lesson/main.cu" "$dir_abs/near-solution/$lesson/main.cu" <<'PY'
import sys
from grading import mutants
with open(sys.argv[1], encoding="utf-8") as f:
    text = f.read()
lines, drop = text.split("\n"), set()
for _, begin, end in mutants.regions(text):
    for i in range(begin + 1, end):
        s = lines[i].strip()
        if s.startswith("// EXERCISE"):
            continue
        if s.startswith("//"):
            drop.add(i)
        else:
            code, comment = mutants.code_part(lines[i])
            lines[i] = code.rstrip() if comment else lines[i]
new = "\n".join(l + ("\n" + l[:len(l) - len(l.lstrip())] + "// (the course's code, its text changed)"
                    if l.strip().startswith("// EXERCISE BEGIN") else "") for i, l in enumerate(lines) if i not in drop)
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write(new)
PY
  )
done
mutant near-solution "03_dynamic_shared:03.tile_in_flight+4:off_by_one:0"
for id in "02_shared_transpose:02.tiled+1:no_padding:0" "03_dynamic_shared:03.tile+2:no_padding:0" \
          "06_bank_conflicts:06.padded+11:no_padding:0"; do mutant padding-removed "$id"; done
for id in "03_dynamic_shared:03.tile_in_flight+2:no_padding:0" "06_bank_conflicts:06.padded+10:no_padding:0"; do
  mutant padding-removed-2 "$id"; done
for id in "02_shared_transpose:02.tiled+3:redundant_rows:0" "03_dynamic_shared:03.tile+4:redundant_rows:0"; do
  mutant redundant-loop "$id"; done
for id in "02_shared_transpose:02.tiled+9:redundant_rows:0" "03_dynamic_shared:03.tile_in_flight+4:redundant_rows:0"; do
  mutant redundant-loop-2 "$id"; done
for id in "02_shared_transpose:02.tiled+0:naive_in_tiled:0" "03_dynamic_shared:03.tile+0:naive_in_tiled:0"; do
  mutant naive-in-tiled "$id"; done
mutant naive-in-tiled-2 "03_dynamic_shared:03.tile_in_flight+0:naive_in_tiled:0"
mutant other-coalescing "01_naive_transpose:01.strided_reads+0:other_coalescing:0"
mutant other-coalescing-2 "01_naive_transpose:01.strided_writes+0:other_coalescing:0"
for id in "01_naive_transpose:01.strided_reads+0:misses_idea:0" "02_shared_transpose:02.tiled+0:misses_idea:0" \
          "03_dynamic_shared:03.tile_in_flight+0:misses_idea:0" "04_reduction:04.tree+0:misses_idea:0" \
          "05_tiled_matmul:05.register_tiled+0:stub:0" "06_bank_conflicts:06.swizzled+0:misses_idea:0"; do
  mutant pointless "$id"; done
for id in "03_dynamic_shared:03.records+0:misses_idea:0" "04_reduction:04.shuffle+0:misses_idea:0" \
          "05_tiled_matmul:05.tiled+0:misses_idea:0"; do
  mutant pointless-2 "$id"; done
mutant pointless-3 "04_reduction:04.last_block+0:misses_idea:0"
echo "make_score_class.sh: wrote $(find "$dir" -name main.cu | wc -l) main.cu files for $(ls -- "$dir" | wc -l) students into $dir"
