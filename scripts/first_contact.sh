#!/usr/bin/env bash
# first_contact.sh — how long a newcomer waits: clone the course into an empty folder, time the
# README's check workflow, then the lessons workflow (each line of its output time-stamped, so the
# time to the first lesson's table can be read off). With --full, also time CI's command
# (`bash .ci/run`, the full workflow) in a second fresh clone.
#
# usage: scripts/first_contact.sh [--full] [--out DIR] [--work DIR] [REPOSITORY]
#   REPOSITORY   what to clone (a path or URL; default: this checkout, its current commit)
#   --out DIR    where the logs and summary.txt go      (default: first-contact)
#   --work DIR   where the clones are made, emptied first (default: a new folder under /tmp)
# Writes OUT/summary.txt (machine, commit, load, each command's exit code and seconds),
# OUT/check.txt, OUT/check_build_steps.txt (each step of its build: seconds it took, seconds from
# the build's start to its end; from ninja's log), OUT/lessons.txt (lines prefixed with seconds
# since 1970) and, with --full, OUT/full.txt.
# The machine is what it is: other work on it slows everything, so the load average is recorded
# before and after each command.
set -uo pipefail
cd "$(dirname "$0")/.."

full=0 out=first-contact work="" repo=$PWD
while [ $# -gt 0 ]; do
  case "$1" in
    --full) full=1; shift ;;
    --out) out=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "first_contact.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) repo=$1; shift ;;
  esac
done
mkdir -p "$out" && out=$(cd "$out" && pwd)
work=${work:-$(mktemp -d /tmp/first-contact.XXXXXX)}
rm -rf "$work" && mkdir -p "$work"
summary=$out/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
load() { say "load average $1: $(cut -d' ' -f1-3 /proc/loadavg)"; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
say "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), GPU: ${gpu:-none}"
say "tools: $(cmake --version | head -n 1), $(command -v nvcc >/dev/null && nvcc --version | tail -n 1 || echo 'no nvcc on PATH')"

# time_in DIR LOG LABEL COMMAND...: run COMMAND in DIR, output to LOG, one summary line
time_in() {
  local dir=$1 log=$2 label=$3 start end rc
  shift 3
  load "before $label"
  start=$EPOCHREALTIME
  (cd "$dir" && "$@") > "$log" 2>&1
  rc=$?
  end=$EPOCHREALTIME
  say "$label: exit $rc, $(seconds "$start" "$end") s"
  load "after $label"
  return $rc
}
stamp_lines() { local line; while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }
lessons_workflow() { cmake --workflow --preset lessons 2>&1 | stamp_lines; return "${PIPESTATUS[0]}"; }

git clone -q "$repo" "$work/course" || { echo "first_contact.sh: cannot clone $repo" >&2; exit 1; }
say "commit: $(git -C "$work/course" log --oneline -1)"
time_in "$work/course" "$out/check.txt" "check workflow (cmake --workflow --preset check, fresh clone)" \
  cmake --workflow --preset check
status=$?
if [ -f "$work/course/build/.ninja_log" ]; then
  awk 'NR > 1 && !seen[$4]++ { printf "%7.1f %7.1f  %s\n", ($2 - $1) / 1000, $2 / 1000, $4 }' \
      "$work/course/build/.ninja_log" | sort -k2 -n > "$out/check_build_steps.txt"
fi
say "lessons workflow started at $EPOCHREALTIME (seconds since 1970; lessons.txt's lines are stamped the same way)"
time_in "$work/course" "$out/lessons.txt" "lessons workflow (cmake --workflow --preset lessons, after it)" lessons_workflow \
  || status=1

if [ $full -eq 1 ]; then
  git clone -q "$repo" "$work/course-full" || { echo "first_contact.sh: cannot clone $repo" >&2; exit 1; }
  time_in "$work/course-full" "$out/full.txt" "full workflow (bash .ci/run, another fresh clone)" bash .ci/run || status=1
fi
rm -rf "$work"
exit $status
