#!/usr/bin/env bash
# Host test of the grader's gradebook writer (grading/gradebook.py), on canned cell results (no GPU,
# no build): `grade.sh --gradebook-from CELLS` must write exactly the expected CSV (RFC 4180 quoting
# of commas, quotes and spaces in names; a leading - quoted against spreadsheet formulas; the
# course's own test cases in columns of their own) and Markdown (escaped pipes, backslashes,
# markup), print the Markdown, and exit 1 when a cell did not pass, 0 when all did, 1 when there
# are no cells (2, naming the cell, when a cell record cannot be read). The last four columns:
# correctness, performance (the slowest exercise's speed with its credit and the other rules
# met/judged; off; not measured), the cell's score (--weights C,P, default 50,50) and the first
# performance shortfall; then the note (O'Brien's and Sam's main.cu are one file under two names:
# each row names the other). Names that look alike (canned/lookalikes) are shown apart in every output.
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
grade=$here/../../../scripts/grade.sh
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for case in mixed:1 all_passed:0 lookalikes:1; do
  name=${case%:*} want=${case#*:}
  "$grade" --gradebook-from "$here/canned/$name" --out "$tmp/$name" > "$tmp/$name.stdout" 2>&1
  rc=$?
  [ $rc -eq "$want" ] || fail "$name: exit code $rc, expected $want"
  for ext in csv md; do
    diff -u "$here/expected/$name.$ext" "$tmp/$name/gradebook.$ext" || fail "$name: gradebook.$ext differs from expected/$name.$ext"
  done
  diff -u "$tmp/$name/gradebook.md" "$tmp/$name.stdout" > /dev/null || fail "$name: what it printed is not gradebook.md"
done

# The rules the expected files encode, spelled out for the two hardest rows:
csv=$tmp/mixed/gradebook.csv md=$tmp/mixed/gradebook.md
grep -qxF "\"O'Brien, Pat \"\"wrong index\"\"\",01_naive_transpose,yes,4,5,\"k.name := transpose_naive_strided_writes; rows := 257; cols := 1031; FAIL: 264966 of 264967 differ, first at (0, 1): got 0.25, expected -0.5\",,,not passed,0/5,0%,01.strided_reads: slow,the same file as Sam never terminates/01_naive_transpose/main.cu (hard links: one file under several names)" "$csv" ||
  fail "a name with a comma and quotes is not quoted as RFC 4180 says"
grep -qxF '| \\x20spaced, piped \| back\\slash\\x20 | 04_reduction | yes | 0 | 14 | crashed (SIGSEGV) in: a \`tick\` \<b>bold\</b> \*star\* \| pipe |  | not passed | off | 0% |  |  |' "$md" ||
  fail "pipes, backslashes and markup are not escaped in the Markdown table"
grep -q "^'-Zoë missing barrier,02_shared_transpose," "$csv" || fail "a name starting with - is not quoted against spreadsheet formulas"
grep -q '^Ada Lovelace,01_naive_transpose,yes,5,5,,3,3,' "$csv" || fail "the course's own test cases are not in columns of their own"
# correctness, performance, score and the first shortfall: a passed cell at 52% of the solution's
# speed (speed credit 0.2308) with its 4 other rules met scores 50% + 50% x (0.9 x 0.2308 + 0.1 x 4/4)
# = 65%; not measured (no GPU run) scores all of it; a cell that
# did not pass scores 0 whatever its performance (Kim: 5/5); a shortfall starting with = is quoted
# against spreadsheet formulas, and its pipe and markup are escaped in the Markdown.
grep -qxF "Ada Lovelace,02_shared_transpose,yes,7,7,,,,passed,speed 52% (credit 23%); rules 4/4,65%,\"'=02.tiled: correct, but 52% | of the solution's *speed*\"," "$csv" ||
  fail "the performance columns of a passed cell with a shortfall are not as expected: $(grep '^Ada Lovelace,02' "$csv")"
grep -qF "| passed | speed 52% (credit 23%); rules 4/4 | 65% | =02.tiled: correct, but 52% \| of the solution's \*speed\* |" "$md" || fail "the shortfall is not escaped in the Markdown"
grep -q '^Ada Lovelace,01_naive_transpose,.*,passed,not measured,100%,,$' "$csv" || fail "not measured should score all of a passed cell"
grep -q '^Kim out of bounds,02_shared_transpose,.*,not passed,5/5,0%,,$' "$csv" || fail "a cell that did not pass must score 0 whatever its performance"
grep -q '^Lin does not compile,02_shared_transpose,no,.*,not passed,-,0%,,$' "$csv" || fail "a cell that did not compile has no performance"
"$grade" --gradebook-from "$here/canned/mixed" --out "$tmp/split" --weights 80,20 > /dev/null 2>&1
grep -q '^Ada Lovelace,02_shared_transpose,.*,passed,speed 52% (credit 23%); rules 4/4,86%,' "$tmp/split/gradebook.csv" ||
  fail "--weights 80,20: 80% + 20% x (0.9 x 0.2308 + 0.1) is 86%"
grep -q "^Sam never terminates,01_naive_transpose,.*,not passed,off,0%,,\"the same file as O'Brien, Pat \"\"wrong index\"\"/01_naive_transpose/main.cu (hard links: one file under several names)\"$" "$csv" ||
  fail "both rows of a file handed in twice name the other: $(grep '^Sam' "$csv")"
[ "$(grep -c '' "$csv")" -eq 12 ] || fail "gradebook.csv should have a header and 11 rows"

# Names that look alike (canned/lookalikes: records that hold them as they are, as an older grader
# or a hand wrote them): NFC and NFD "José", Latin and Cyrillic "Ada", "Bob" beside "Bob " and
# "Bob" followed by U+3164 HANGUL FILLER or a no-break space, "m" and "rn" (alike to Unicode TR39),
# and a stray entry named like a lesson. Each is shown apart in the gradebook (above), in
# scores.csv and in the feedback files' names; a name that looks like no other stays as it is.
lk=$tmp/lookalikes
diff -u "$here/expected/lookalikes.scores.csv" "$lk/scores.csv" || fail "lookalikes: scores.csv differs from expected/lookalikes.scores.csv"
(cd "$lk/feedback" && LC_ALL=C ls) | diff -u "$here/expected/lookalikes.feedback.txt" - || fail "lookalikes: the feedback files are not the expected ones"
grep -qxF $'Jose\xcc\x81 [U+0065 U+0301],01_naive_transpose,yes,5,5,,,,passed,off,100%,,' "$lk/gradebook.csv" &&
  grep -qxF $'Jos\xc3\xa9 [U+00E9],01_naive_transpose,yes,5,5,,,,passed,off,100%,,' "$lk/gradebook.csv" || fail "lookalikes: the NFC and NFD José are not marked with their code points"
grep -q '^Ada,01_naive_transpose,' "$lk/gradebook.csv" && grep -q '^Bob,01_naive_transpose,' "$lk/gradebook.csv" || fail "lookalikes: a plain ASCII name was changed"
grep -qF '| Bob\\x20 | 01_naive_transpose |' "$lk/gradebook.md" || fail "lookalikes: a trailing space is not shown"
grep -qF $'01_n\xd0\xb0ive_transpose [U+0430],-,' "$lk/gradebook.csv" || fail "lookalikes: an entry named like a lesson is not marked"
[ "$(grep -c '' "$lk/scores.csv")" -eq 11 ] || fail "lookalikes: scores.csv should have a header and 10 students"

# A cell record the grader cannot read (malformed, of another version, or a cell folder of an
# earlier grader: result.txt, no cell.json) is refused: exit 2, the cell named, no gradebook written.
for bad in malformed version legacy; do
  cp -r "$here/canned/all_passed" "$tmp/bad-$bad"
  case $bad in
    malformed) printf '{"version": 3, "student": ' > "$tmp/bad-$bad/0002/cell.json" ;;
    version) sed -i 's/"version": 3,/"version": 2,/' "$tmp/bad-$bad/0002/cell.json" ;;  # (2: before the notes)
    legacy) rm "$tmp/bad-$bad/0002/cell.json"; printf 'student=Ada\nlesson=01_naive_transpose\ncompiled=yes\n' > "$tmp/bad-$bad/0002/result.txt" ;;
  esac
  "$grade" --gradebook-from "$tmp/bad-$bad" --out "$tmp/bad-$bad-out" > "$tmp/bad.stdout" 2> "$tmp/bad.stderr"
  rc=$?
  [ $rc -eq 2 ] && grep -q "bad-$bad/0002" "$tmp/bad.stderr" && [ "$(grep -c '' "$tmp/bad.stderr")" -eq 1 ] ||
    fail "a $bad cell record: exit $rc, expected 2 and one line naming the cell: $(cat "$tmp/bad.stderr")"
  [ ! -e "$tmp/bad-$bad-out/gradebook.csv" ] || fail "a $bad cell record: a gradebook was written"
done

mkdir -p "$tmp/none"
"$grade" --gradebook-from "$tmp/none" --out "$tmp/none-out" > "$tmp/none.stdout" 2>&1
[ $? -eq 1 ] || fail "a folder without cell results should exit 1"

[ $failures -eq 0 ] && echo "gradebook writer: all assertions passed" || exit 1
