#!/usr/bin/env bash
# The attack suite: grade.sh on the hostile submissions of tests/grading/attacks/, each of which
# must end in its row of attacks/expected.txt, without touching anything outside its cell.
#
#   test_attacks.sh [--gpu] [--keep DIR] [grade.sh options, e.g. -DCMAKE_PREFIX_PATH=... --arch 90]
#
# Without --gpu the cells run their host test cases only (grade.sh --host-only): no GPU needed, the
# sandbox, the limits and the judge all as in a real run (CI runs this). With --gpu the whole
# check runs, and the classic test submissions (make_test_submissions.sh) are graded in the same
# run; --keep DIR copies the gradebook and grade.sh's output there (results/<gpu>/grading/).
# Besides each row, it asserts: the course (a copy, graded from) is byte for byte unchanged; no
# run printed a classmate's or the course's file; no process of any cell is left; the victim
# graded first still passes; a file handed in by two students (hard links) names the other in both
# rows, and similarity.csv lists them. Prints "OK: ..." only when everything holds; exit 77 (skipped) when
# bubblewrap is missing or cannot create namespaces on this machine, saying why.
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
repo=$(cd -- "$here/../../.." && pwd -P)
gpu=0 keep="" args=()
while [ $# -gt 0 ]; do
  case $1 in
    --gpu) gpu=1; shift ;;
    --keep) keep=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
. "$here/need_bwrap.sh"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf -- "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A copy of the course to grade from, so that an attack that got through harms only the copy.
mkdir -p "$tmp/course"
tar -C "$repo" --exclude='./build*' --exclude=./.git --exclude=./.deps --exclude=./.wt --exclude=./.whl -cf - . |
  tar -C "$tmp/course" -xf -
# The course cache (grade.sh --course-cache) outside the course's copy: the copy must stay as it was.
gen=(--attacks "$tmp/out" --attacks-cache "$tmp/cache"); [ $gpu -eq 0 ] && gen+=(--attacks-only)
"$tmp/course/scripts/make_test_submissions.sh" "$tmp/subs" "${gen[@]}" > /dev/null || { echo "FAIL: make_test_submissions.sh"; exit 1; }
(cd "$tmp/course" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$tmp/before.sha"

# Without a GPU the transcripts are small, and a 64 MiB file limit keeps the transcript flood quick;
# with one, a lesson records up to about 200 MB, under grade.sh's default limit (1024 MiB).
# --mem-mib 2048: the memory hog meets its limit quickly (a correct cell's steps take at most about
# 620 MiB on an H100: results/h100/grading-python/).
mode=(--file-mib 1024 --mem-mib 2048); [ $gpu -eq 0 ] && mode=(--host-only --file-mib 64 --mem-mib 2048)
start=$(date +%s)
console=$tmp/console.txt; [ -n "$keep" ] && mkdir -p "$keep" && console=$keep/console.txt  # written as it goes
"$tmp/course/scripts/grade.sh" "$tmp/subs" --out "$tmp/out" --course-cache "$tmp/cache" --timeout 20 --jobs 2 ${mode[@]+"${mode[@]}"} \
  ${args[@]+"${args[@]}"} 2>&1 | tee "$console" | grep --line-buffered -a '^grade.sh: ' | cut -c 1-300
rc=${PIPESTATUS[0]}
[ "$console" = "$tmp/console.txt" ] || cp "$console" "$tmp/console.txt"
echo "grade.sh exit code $rc after $(( $(date +%s) - start )) s"
[ $rc -eq 1 ] || { fail "grade.sh exit code $rc, expected 1 (some cells must fail)"; tail -n 30 "$tmp/console.txt"; }

# Every row, read from the cells' cell.json by grading/cellrecord.py: one line per graded cell, its
# fields apart by the unit separator (a control character, which a record's values hold escaped).
declare -A row
rows() {
  PYTHONPATH=$repo python3 -c 'import os, sys
from grading import cellrecord
for e in sorted(os.listdir(sys.argv[1])):
    r = cellrecord.read(os.path.join(sys.argv[1], e)) if e.isdigit() else None
    if r is not None and r.result is not None:
        x = r.result
        print("\x1f".join((r.student, r.lesson, x.compiled, x.passed, x.total, x.course_passed, x.course_total, x.finding)))' "$1"
}
while IFS=$'\x1f' read -r student lesson compiled passed total cpassed ctotal finding; do
  row["$student|$lesson"]="$compiled|$passed|$total|$cpassed|$ctotal|$finding"
done < <(rows "$tmp/out/cells")
n=0
while IFS=$'\t' read -r student lesson compiled rule pattern; do
  [[ -z $student || $student == \#* ]] && continue
  n=$((n + 1))
  got=${row["$student|$lesson"]-}
  [ -n "$got" ] || { fail "$student / $lesson: no row"; continue; }
  IFS='|' read -r g_compiled g_passed g_total g_cpassed g_ctotal g_finding <<< "$got"
  [ "$g_compiled" = "$compiled" ] || fail "$student / $lesson: compiled=$g_compiled, expected $compiled ($g_finding)"
  # Without a GPU, lesson 01's host test cases ask the submission for no value: none counts (the
  # course's own tests, reported apart), and the finding says so. There "all" means every one of
  # the course's own test cases passed, and the finding is matched without that sentence.
  nothing=0
  if [ $gpu -eq 0 ] && [ "$g_total" = 0 ] && [[ $g_finding == *"no test case judged a value of the submission ("* ]]; then
    nothing=1
    g_finding=$(sed -E 's/(; )?no test case judged a value of the submission \([0-9]+ of [0-9]+ of the course.s own test cases passed, not counted\)//' <<< "$g_finding")
  fi
  case $rule in
    all) if [ $nothing -eq 1 ]; then
           [ -n "$g_ctotal" ] && [ "$g_ctotal" -gt 0 ] && [ "$g_cpassed" = "$g_ctotal" ] ||
             fail "$student / $lesson: $g_cpassed of $g_ctotal of the course's own test cases passed, expected all"
         else
           [ -n "$g_total" ] && [ "$g_total" -gt 0 ] && [ "$g_passed" = "$g_total" ] ||
             fail "$student / $lesson: $g_passed of $g_total passed, expected all"
         fi ;;
    not_all) [ -n "$g_total" ] && [ "$g_passed" != "$g_total" ] || fail "$student / $lesson: $g_passed of $g_total passed, expected fewer" ;;
  esac
  if [ -z "$pattern" ]; then
    [ -z "$g_finding" ] || fail "$student / $lesson: finding '$g_finding', expected none"
  else
    [[ $g_finding =~ ^($pattern)$ ]] || fail "$student / $lesson: finding '$g_finding' does not match '$pattern'"
  fi
  echo "row: $student / $lesson: $g_passed of $g_total${g_finding:+ — $g_finding}"
done < "$here/../attacks/expected.txt"
# One file handed in by two students (atk13, atk23: hard links): each row's note names the other's
# main.cu, and similarity.csv lists the pair as the same code.
notes=$(PYTHONPATH=$repo python3 -c 'import os, sys
from grading import cellrecord
for e in sorted(os.listdir(sys.argv[1])):
    r = cellrecord.read(os.path.join(sys.argv[1], e)) if e.isdigit() else None
    if r is not None:
        print("%s|%s" % (r.student, r.note))' "$tmp/out/cells")
for pair in "atk13 honest last|atk23 twin of atk13" "atk23 twin of atk13|atk13 honest last"; do
  grep -qxF "${pair%|*}|the same file as ${pair#*|}/06_bank_conflicts/main.cu (hard links: one file under several names)" <<< "$notes" ||
    fail "${pair%|*}'s row does not name ${pair#*|}'s main.cu as the same file"
done
grep -q '^06_bank_conflicts,atk13 honest last,atk23 twin of atk13,1.00,' "$tmp/out/similarity.csv" ||
  fail "similarity.csv does not list atk13 and atk23 as the same code: $(head -n 5 "$tmp/out/similarity.csv" 2>&1)"

# With a GPU: the forged speeds (atk19, atk20, atk24) earn nothing beyond the same slow kernel's
# honest speed (atk18), the grader's witness timing each of them; the kernel that skips work at the
# speed case's size after its first launch there (atk21) is not timed at all, and its wrong output
# there is a finding (its own run's check, or the witness's); the kernel that traps in the witness
# (atk25) is not timed, earns no speed credit and scores no more than its honest twin; nor is the
# kernel whose code allocates on the device heap (atk26), which outlives the witness's reloads. The
# lesson 04 sum that keeps its answer in its output's slack (atk28) earns no more than its twin (atk27).
if [ $gpu -eq 1 ]; then
  PYTHONPATH=$repo python3 - "$tmp/out/cells" <<'PY' || fail "a forged speed earned credit (above)"
import json, os, sys
from grading import cellrecord, score
speed = {}
for e in sorted(os.listdir(sys.argv[1])):
    r = cellrecord.read(os.path.join(sys.argv[1], e)) if e.isdigit() else None
    if r is None or r.result is None or not r.student.startswith(("atk18", "atk19", "atk20", "atk21", "atk24", "atk25", "atk26",
                                                                 "atk27", "atk28")):
        continue
    ev = json.load(open(os.path.join(sys.argv[1], e, "evidence.json")))
    exercise = "04.last_block" if r.student.startswith(("atk27", "atk28")) else "02.tiled"
    rows = [x for x in ev["rules"] if x["kind"] == "speed" and x["exercise"] == exercise]
    speed[r.student[:5]] = (rows[0], r.result.finding, score.cell_score(r.result.passed == r.result.total, r.fields()))
    print("speed %s: %s (%s) %s" % (r.student, rows[0]["status"], rows[0].get("ratio"), rows[0]["words"]))
ok = True
honest = speed["atk18"][0].get("ratio")
if not (isinstance(honest, float) and honest < 0.8):
    print("FAIL: the honest slow kernel's ratio is %r, expected a time under 80%% of the solution's" % honest); ok = False
for k in ("atk19", "atk20", "atk24"):
    r = speed[k][0].get("ratio")
    if not (isinstance(r, float) and r <= honest * 1.15 + 0.02):
        print("FAIL: %s graded at %r of the solution's speed, its honest twin at %r" % (k, r, honest)); ok = False
row, finding, _ = speed["atk21"]
if row["status"] != "short" or not row["words"].startswith("not timed by the grader") or not (
        "speed case's size" in finding or finding.startswith("speed: 02.tiled: ")):
    print("FAIL: atk21: %s / %r / finding %r" % (row["status"], row["words"], finding)); ok = False
# The kernels the witness does not time: no speed credit, no finding, no more than their honest twin.
for k, name, why in (("atk25", "atk25 forge trap", lambda w: w.startswith("not timed by the grader")),
                     ("atk26", "atk26 forge heap", lambda w: "device heap (malloc)" in w)):
    row, finding, got = speed[k]
    if row["status"] != "short" or not why(row["words"]) or row.get("credit") != 0.0 or finding or not got <= speed["atk18"][2]:
        print("FAIL: %s: %s / %r / credit %r / finding %r / score %r, its honest twin's %r"
              % (k, row["status"], row["words"], row.get("credit"), finding, got, speed["atk18"][2])); ok = False
    else:
        print("score %s: %.1f%% (atk18 honest slow: %.1f%%)" % (name, 100 * got, 100 * speed["atk18"][2]))
# The sum kept in its output's slack (atk28): every launch sums honestly, at its twin's (atk27) speed and score
# (within the timing's noise: 15% of the ratio, 2 points of the score).
twin, kept = speed["atk27"], speed["atk28"]
honest = twin[0].get("ratio")
if not (isinstance(honest, float) and honest < 0.8):
    print("FAIL: the honest slow sum's ratio is %r, expected a time under 80%% of the solution's" % honest); ok = False
r = kept[0].get("ratio")
if not (isinstance(r, float) and isinstance(honest, float) and r <= honest * 1.15 + 0.02) or kept[1] or kept[2] > twin[2] + 0.02:
    print("FAIL: atk28 kept state: ratio %r / finding %r / score %r, its honest twin's ratio %r, score %r"
          % (r, kept[1], kept[2], honest, twin[2])); ok = False
else:
    print("score atk28 kept state: %.1f%% at %.2f of the solution's speed (atk27 honest slow sum: %.1f%% at %.2f)"
          % (100 * kept[2], r, 100 * twin[2], honest))
sys.exit(0 if ok else 1)
PY
fi

# With a GPU: work done in reduced precision or by a library (atk50 ... atk54) fails correctness, so
# it scores no more than its honest twin (atk52: the same naive matmul; atk55: the lesson's own
# reduction); the precision findings are there (cuobjdump is on every GPU grading machine).
if [ $gpu -eq 1 ]; then
  PYTHONPATH=$repo python3 - "$tmp/out/cells" <<'PY' || fail "reduced precision or a library's work earned more than its honest twin (above)"
import os, sys
from grading import cellrecord, score
got = {}
for e in sorted(os.listdir(sys.argv[1])):
    r = cellrecord.read(os.path.join(sys.argv[1], e)) if e.isdigit() else None
    if r is not None and r.result is not None and r.student[:5] in ("atk50", "atk51", "atk52", "atk53", "atk54", "atk55"):
        got[r.student[:5]] = (score.cell_score(r.result.passed == r.result.total and not r.result.finding, r.fields()), r.result.finding)
ok = True
for attack, twin, words in (("atk50", "atk52", "05.register_tiled: computes in reduced precision (HMMA"),
                            ("atk51", "atk52", "05.register_tiled: computes in reduced precision (F2FP"),
                            ("atk53", "atk55", "04.shuffle: a library does"), ("atk54", "atk55", "04.tree: a library does")):
    (s, finding), (t, _) = got[attack], got[twin]
    print("score %s: %.1f%% (%s: %.1f%%)" % (attack, 100 * s, twin, 100 * t))
    if not finding.startswith(words) or s > t or t <= 0:
        print("FAIL: %s scored %r beside %s's %r, finding %r" % (attack, s, twin, t, finding)); ok = False
sys.exit(0 if ok else 1)
PY
fi

(cd "$tmp/course" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$tmp/after.sha"
diff -q "$tmp/before.sha" "$tmp/after.sha" > /dev/null || { fail "the course was changed:"; diff "$tmp/before.sha" "$tmp/after.sha" | head; }
leaks=$(grep -l -a '^LEAKED' "$tmp"/out/cells/*/run.log 2> /dev/null)
[ -z "$leaks" ] || fail "a run read a file it must not see: $(grep -h -a -m 1 '^LEAKED' $leaks | head -n 1)"
grep -q -a 'TAMPERED' "$tmp"/out/cells/*/cell.json "$tmp"/out/gradebook.* "$tmp/console.txt" && fail "a result, the gradebook or grade.sh's output was tampered with"
ls -d "$tmp"/cache/*/common > /dev/null 2>&1 || fail "the course was not built into the course cache (--course-cache)"
tampered=$(grep -r -l -a 'TAMPERED' "$tmp/cache" 2> /dev/null)
[ -z "$tampered" ] || fail "a cell wrote into the course cache: $tampered"
sleep 1
range=$(sed -n 's/^Cells ran as user ids \([0-9]*\) to \([0-9]*\)\.$/\1 \2/p' "$tmp/out/cells/run-info.txt")
# (only this run's: another grader on the machine may be grading its own copy of the escape attack)
escaped=$(pgrep -x atk_escape 2> /dev/null | while read -r p; do u=$(ps -o uid= -p "$p" | tr -d ' ')
  [ -n "$u" ] && { [ -z "$range" ] || { [ "$u" -ge "${range% *}" ] && [ "$u" -le "${range#* }" ]; }; } && echo "$p"; done)
if [ -n "$escaped" ]; then fail "the escape attack's process outlived its cell"; kill -KILL $escaped 2> /dev/null; fi
left=""
# (a wholly dead zombie, state Z with one thread, runs nothing: the sandbox's exited bwrap waits
# there for PID 1 to reap it; grading/run.py's process_table leaves such zombies out too)
[ -n "$range" ] && left=$(ps -eo uid=,pid=,stat=,nlwp=,comm= | awk -v lo="${range% *}" -v hi="${range#* }" \
  '$1 >= lo && $1 <= hi && !($3 ~ /^Z/ && $4 <= 1)')
[ -z "$left" ] || fail "processes of a cell's user outlived grading: $left"
# (each cell on its own: a cell's build folder is about 7 MiB, its logs are capped, and the disk
# filler's scratch is 256 MiB; the sum grew with the cells to 252 MiB on a GPU with 35 cells)
big=$(du -sm "$tmp"/out/cells/*/ | awk '$1 >= 64')
[ -z "$big" ] || fail "a cell's folder holds 64 MiB or more: a run wrote outside its scratch: $big"
grep -a '^Time per cell' "$tmp/console.txt"

if [ -n "$keep" ]; then
  cp "$tmp/out/gradebook.csv" "$tmp/out/gradebook.md" "$keep/"
  # ATTACKS_KEEP_CELLS=1: the cells' logs and results too (no box: sources and binaries), for a GPU run's record
  [ -n "${ATTACKS_KEEP_CELLS-}" ] && tar -C "$tmp/out" --exclude='cells/*/box' -czf "$keep/cells.tgz" cells
  sed "s|$tmp|/tmp/grading|g" -i "$keep/console.txt" "$keep/gradebook.md" "$keep/gradebook.csv"
fi
if [ $failures -gt 0 ]; then
  echo "--- grade.sh's output"; tail -n 40 "$tmp/console.txt"
  echo "FAILED: $failures problem(s)"; exit 1
fi
echo "OK: $n attack rows as expected; the course unchanged, nothing leaked, no process left"
