#!/usr/bin/env bash
# Host test of grade.sh --slurm, for real: a one-node Slurm cluster (Debian's slurm-wlm and munge)
# started here, on localhost, with a configuration written here; the node has no GPU.
#  1. grade.sh --slurm --tasks 2 --gpus-per-task 0 --submit writes the job array and the gradebook
#     job and submits them; every task finds no usable GPU, so every cell of every student must
#     get a row saying that its task's node had no usable GPU (never a gap), written by the
#     gradebook job after the whole array (afterany);
#  2. a second submit grades only cells without a result: a cell given a result in between keeps it;
#  3. --gpus-per-task 2 writes "#SBATCH --gpus-per-task=2" and has each task use all its GPUs.
# Skipped (exit 77) with the reason when slurm-wlm or munge is missing, or slurmd cannot start here.
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
grade=$here/../../../scripts/grade.sh
for tool in slurmctld slurmd munged sbatch; do
  command -v "$tool" > /dev/null || { echo "SKIPPED: $tool not found (Debian: apt install slurm-wlm munge)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: starting slurmd needs root"; exit 77; }
. "$here/need_bwrap.sh"
tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
cleanup() { local p; for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2> /dev/null; done; sleep 1; rm -rf -- "$tmp"; }
trap cleanup EXIT
failures=0
cell_field() { PYTHONPATH=$here/../../.. python3 -m grading.cellrecord get "$@" 2> /dev/null; }  # (grading/cellrecord.py)
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# munge, with a key of its own and its socket here
mkdir -p "$tmp/munge" && chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/key" bs=1024 count=1 2> /dev/null && chmod 400 "$tmp/munge/key"
munged --key-file="$tmp/munge/key" --socket="$tmp/munge/sock" --pid-file="$tmp/munge/pid" --log-file="$tmp/munge/log" \
       --seed-file="$tmp/munge/seed" --force > "$tmp/munge.out" 2>&1 ||
  { echo "SKIPPED: munged cannot start here: $(tail -n 1 "$tmp/munge.out")"; exit 77; }
pids+=("$(cat "$tmp/munge/pid")")

host=$(hostname -s)
port=$(( 20000 + RANDOM % 20000 ))
mkdir -p "$tmp/state" "$tmp/spool"
cat > "$tmp/slurm.conf" <<CONF
ClusterName=gradetest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -c -f "$SLURM_CONF" > "$tmp/slurmctld.out" 2>&1 ||
  { echo "SKIPPED: slurmctld cannot start here: $(tail -n 2 "$tmp/slurmctld.out" "$tmp/slurmctld.log" 2> /dev/null | tr '\n' ' ')"; exit 77; }
sleep 1; pids+=("$(cat "$tmp/slurmctld.pid" 2> /dev/null)")
slurmd -f "$SLURM_CONF" > "$tmp/slurmd.out" 2>&1 ||
  { echo "SKIPPED: slurmd cannot start here: $(tail -n 3 "$tmp/slurmd.log" "$tmp/slurmd.out" 2> /dev/null | tr '\n' ' ')"; exit 77; }
sleep 1; pids+=("$(cat "$tmp/slurmd.pid" 2> /dev/null)")
for _ in $(seq 1 30); do sinfo -h -o %T 2> /dev/null | grep -q idle && break; sleep 1; done
sinfo -h -o %T 2> /dev/null | grep -q idle ||
  { echo "SKIPPED: the Slurm node did not come up: $(sinfo 2>&1 | tail -n 1); $(tail -n 3 "$tmp/slurmd.log" | tr '\n' ' ')"; exit 77; }

# 1. a class of four students, in two tasks, on a node without a GPU
"$here/../../../scripts/make_test_submissions.sh" "$tmp/all" > /dev/null || { echo "FAIL: make_test_submissions.sh"; exit 1; }
mkdir "$tmp/subs"
for s in "Ada Lovelace" "O'Brien, Pat \"wrong index\"" "-Zoë missing barrier" "Lee stray folders"; do cp -r -- "$tmp/all/$s" "$tmp/subs/"; done
out=$tmp/out
wait_jobs() { for _ in $(seq 1 240); do [ -z "$(squeue -h 2> /dev/null)" ] && return 0; sleep 0.5; done; echo "FAIL: jobs still queued: $(squeue)"; return 1; }
"$grade" "$tmp/subs" --out "$out" --slurm --tasks 2 --gpus-per-task 0 --partition test --submit > "$tmp/submit1.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^submitted: grading job array' "$tmp/submit1.txt" || fail "--slurm --submit exited $rc: $(cat "$tmp/submit1.txt")"
wait_jobs
[ -f "$out/gradebook.csv" ] || { fail "the gradebook job wrote no gradebook: $(cat "$out"/slurm/*.log 2> /dev/null | tail -n 5)"; }
cells=$(ls -d "$out"/cells/[0-9]* | wc -l)
[ "$(grep -c '' "$out/gradebook.csv" 2> /dev/null)" -eq $((cells + 1)) ] || fail "gradebook.csv has not one row per cell ($cells)"
while IFS= read -r student; do
  grep -qF -- "$student" "$out/gradebook.csv" || fail "no row for $student"
done < <(ls "$tmp/subs" | sed 's/"/""/g')
n_nogpu=$(grep -c "not graded: task [01]/2 on $host: no usable GPU: " "$out/gradebook.csv")
n_other=$(grep -c -E 'not a lesson folder|no main.cu' "$out/gradebook.csv")  # rows that need no GPU
[ $((n_nogpu + n_other)) -eq "$cells" ] && [ "$n_nogpu" -gt 0 ] || fail "expected every cell to say its node had no usable GPU (or need none): $(cat "$out/gradebook.csv")"
for k in 0 1; do
  [ "$(stat -c %Y "$out/gradebook.csv")" -ge "$(stat -c %Y "$out/slurm/task-$k.log")" ] || fail "the gradebook was written before task $k ended"
  grep -q 'no usable GPU' "$out/slurm/task-$k.log" || fail "task $k's log does not say why it graded nothing"
done

# 2. a cell graded in between keeps its result; the second submit grades the rest (again no GPU)
target=$(for d in "$out"/cells/[0-9]*; do cell_field "$d" result.compiled > /dev/null || { echo "$d"; break; }; done)
PYTHONPATH=$here/../../.. python3 -c 'import sys; from grading import gradebook; gradebook.finish_cell(sys.argv[1], "yes", "5", "5", "")' "$target"
sum=$(md5sum < "$target/cell.json")
bash "$out/slurm/submit.sh" > "$tmp/submit2.txt" 2>&1 || fail "the second submit failed: $(cat "$tmp/submit2.txt")"
wait_jobs
[ "$(md5sum < "$target/cell.json")" = "$sum" ] || fail "the second submit regraded a cell that had a result"
grep -q "$(cell_field "$target" lesson),yes,5,5,,,,passed,off,100%,,$" "$out/gradebook.csv" || fail "the gradebook lost the cell graded in between"
[ "$(grep -c 'no usable GPU' "$out/gradebook.csv")" -eq $((n_nogpu - 1)) ] || fail "after the second submit, the other cells should still say no usable GPU"

# 3. several GPUs per task
"$grade" "$tmp/subs" --out "$tmp/out3" --slurm --gpus-per-task 2 --account physics > "$tmp/write3.txt" 2>&1 || fail "--slurm without --submit failed: $(cat "$tmp/write3.txt")"
a=$tmp/out3/slurm/grade-array.sbatch
grep -qx '#SBATCH --gpus-per-task=2' "$a" && grep -qx '#SBATCH --account=physics' "$a" && grep -q -- '--gpus all' "$a" &&
  grep -qx '#SBATCH --array=0-0' "$a" || fail "the job array script is not as asked: $(cat "$a")"
"$grade" "$tmp/subs" --out "$tmp/out4" --slurm --gpus 0 > /dev/null 2>&1; [ $? -eq 2 ] || fail "--slurm with --gpus was not refused"
"$grade" "$tmp/subs" --out "$tmp/out4" --submit > /dev/null 2>&1; [ $? -eq 2 ] || fail "--submit without --slurm was not refused"

[ $failures -eq 0 ] && echo "slurm: all assertions passed" || exit 1
