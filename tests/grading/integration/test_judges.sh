#!/usr/bin/env bash
# Host test: when the course's own checks (the judges) do not build, grade.sh says so, exits 1,
# grades nothing and leaves nothing running. The judges build in the background while the first
# cells compile, so both must be stopped; and the course cache's entry that was being built is
# not marked complete (the next run builds it again). A copy of the course whose lesson 01 check
# has an #error grades one student (--host-only: no GPU needed).
# usage: test_judges.sh [CMAKE ARGS]
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
repo=$(cd -- "$here/../../.." && pwd -P)
. "$here/need_bwrap.sh"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf -- "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mkdir "$tmp/course"
tar -C "$repo" --exclude='./build*' --exclude=./.git --exclude=./.deps --exclude=./.wt -cf - . |
  tar -C "$tmp/course" -xf - || { echo "FAIL: copying the course"; exit 1; }
printf '\n#error "a judge that does not build (tests/grading/integration/test_judges.sh)"\n' >> "$tmp/course/lessons/01_naive_transpose/check.cu"
"$repo/scripts/make_test_submissions.sh" "$tmp/all" > /dev/null || { echo "FAIL: make_test_submissions.sh"; exit 1; }
mkdir "$tmp/subs" && cp -r -- "$tmp/all/Ada Lovelace" "$tmp/subs/"

"$tmp/course/scripts/grade.sh" "$tmp/subs" --out "$tmp/out" --host-only --timeout 30 "$@" > "$tmp/run.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "grade.sh exited $rc, expected 1; its output: $(tail -n 5 "$tmp/run.txt")"
grep -q "could not build the course's checks, the judges" "$tmp/run.txt" || fail "grade.sh did not say that the judges did not build: $(tail -n 5 "$tmp/run.txt")"
log=$(ls "$tmp"/course/build-grade-cache/*/common.log 2> /dev/null | head -n 1)
[ -n "$log" ] || fail "the course was not built in its course cache (build-grade-cache)"
grep -q "see ${log:-common.log}" "$tmp/run.txt" || fail "grade.sh did not name the log: $(tail -n 2 "$tmp/run.txt")"
grep -q 'a judge that does not build' "${log:-/dev/null}" || fail "common.log does not hold the compiler's error"
ls "$tmp"/course/build-grade-cache/*/complete > /dev/null 2>&1 && fail "the course cache's entry was marked complete though a judge did not build"
for d in "$tmp"/out/cells/[0-9]*/; do
  [ "$(PYTHONPATH=$repo python3 -m grading.cellrecord get "$d" result)" = null ] || fail "a cell was graded: $d"
done
[ -e "$tmp/out/gradebook.csv" ] && fail "a gradebook was written"
sleep 1
left=$(pgrep -a -f "$tmp/" | grep -v -F "pgrep")
[ -z "$left" ] || fail "processes of this run are left: $left"
[ $failures -eq 0 ] && { echo "judges: all assertions passed"; exit 0; }
echo "judges: $failures failure(s)"; exit 1
