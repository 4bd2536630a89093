#!/usr/bin/env bash
# Host test of grade.sh's exports, on canned cell results (tests/grading/integration/canned/mixed, plus a cell
# that was never graded: a cell.json with no result) with tests/grading/integration/canned/weights.txt:
# scores.csv (student, score, max score, comment; RFC 4180 quoting of names with commas, quotes,
# spaces, non-ASCII letters; a leading dash quoted as OWASP says against spreadsheet formulas) and feedback/STUDENT.md must be exactly the expected
# files; a cell earns its lesson's weight only when it passed with no finding; the never-graded
# cell gets a row that says so; a bad weights file is refused (exit 2); --weights C,P sets the shares
# of correctness and performance in a passed cell's score, and a bad C,P is refused (exit 2); a
# main.cu that is also a classmate's (a hard link) is noted in the student's feedback without the
# classmate's name.
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
grade=$here/../../../scripts/grade.sh
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cp -r "$here/canned/mixed" "$tmp/cells"
mkdir "$tmp/cells/0012" && printf '{"version": 3, "student": "Ada Lovelace", "lesson": "03_dynamic_shared", "slice": null, "compiled": "", "timing": {}, "result": null, "shared": null, "note": "", "feedback_note": ""}\n' > "$tmp/cells/0012/cell.json"
"$grade" --gradebook-from "$tmp/cells" --out "$tmp/out" --weights "$here/canned/weights.txt" > "$tmp/stdout" 2>&1
[ $? -eq 1 ] || fail "exit code $?, expected 1 (cells did not pass)"
diff -u "$here/expected/exports.scores.csv" "$tmp/out/scores.csv" || fail "scores.csv differs from expected/exports.scores.csv"
diff -u "$here/expected/exports.feedback.Ada.md" "$tmp/out/feedback/Ada Lovelace.md" || fail "feedback/Ada Lovelace.md differs"
diff -u "$here/expected/exports.feedback.OBrien.md" "$tmp/out/feedback/O'Brien, Pat \"wrong index\".md" || fail "the feedback of O'Brien differs"
[ "$(ls "$tmp/out/feedback" | wc -l)" -eq 10 ] || fail "expected one feedback file per student (10)"
# a shown name with an escape in it (\x20) gets a file name of its own (escapes spelled _, and a hash),
# never one another student could have by name (grading/names.py)
[ -f "$tmp/out/feedback/-Zoë missing barrier.md" ] && [ -f "$tmp/out/feedback/_x20spaced, piped _ back_slash_x20~210ceaa72130.md" ] ||
  fail "a student whose name starts with a dash or a space (shown \\x20), or holds a pipe or backslash, has no feedback file"

# The rules the expected files encode, spelled out:
s=$tmp/out/scores.csv
grep -qx 'student,score,max score,comment' "$s" || fail "no LMS header"
grep -q '^Ada Lovelace,2.33,5.50,' "$s" || fail "Ada: 2 (01, weight 2, performance not measured) + 0.5 x 65.4% (02: 50% + 50% x (0.9 x speed credit 0.2308 + 0.1 x 4/4 rules)) of 2 + 0.5 + 1 + 0 + 1 + 1 = 5.50"
grep -q "^'-Zoë missing barrier,0,5.50," "$s" || fail "a passed cell with a race finding must earn 0 (and a leading - is quoted against formulas)"
grep -q "^\"O'Brien, Pat \"\"wrong index\"\"\",0,5.50," "$s" || fail "a quoted name is not quoted as RFC 4180 says"
grep -q 'not graded: no result' "$tmp/out/gradebook.csv" || fail "the never-graded cell has no row that says so"
fb="$tmp/out/feedback/O'Brien, Pat \"wrong index\".md"
grep -qF '| the same file as another main.cu handed in (hard links: one file under several names) |' "$fb" ||
  fail "O'Brien's feedback does not say that the main.cu is also another name's"
! grep -q 'Sam' "$fb" && ! grep "^\"O'Brien" "$s" | grep -q 'Sam' || fail "a student's feedback or LMS comment names the classmate whose file is the same"

printf '01_naive_transpose 2\n99_no_such_lesson 1\n' > "$tmp/w1"
printf '01_naive_transpose two\n' > "$tmp/w2"
for split in 100,0:2.50 0,100:2.15; do
  "$grade" --gradebook-from "$tmp/cells" --out "$tmp/o-${split%:*}" --weights "$here/canned/weights.txt" --weights "${split%:*}" > /dev/null 2>&1
  grep -q "^Ada Lovelace,${split#*:},5.50," "$tmp/o-${split%:*}/scores.csv" || fail "--weights ${split%:*}: Ada should score ${split#*:}: $(grep '^Ada' "$tmp/o-${split%:*}/scores.csv")"
done
for w in 80,30 80, a,b 80,20,0 -5,105 , 1000,0; do
  "$grade" --gradebook-from "$tmp/cells" --out "$tmp/o3" --weights "$w" > "$tmp/bad" 2>&1
  [ $? -eq 2 ] && grep -q -- "--weights" "$tmp/bad" || fail "a bad --weights C,P ($w) was not refused with a message: $(cat "$tmp/bad")"
done
for w in "$tmp/w1" "$tmp/w2" "$tmp/missing"; do
  "$grade" --gradebook-from "$tmp/cells" --out "$tmp/o2" --weights "$w" > "$tmp/bad" 2>&1
  [ $? -eq 2 ] || fail "a bad weights file ($(cat "$w" 2> /dev/null | tr '\n' ' ')) was not refused: $(cat "$tmp/bad")"
done
[ $failures -eq 0 ] && echo "exports: all assertions passed" || exit 1
