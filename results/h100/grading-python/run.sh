#!/usr/bin/env bash
# run.sh OUT DOCTEST_PREFIX — the grader (grading/, through scripts/grade.sh) on a GPU machine, as
# run for this folder: the attack suite and the test submissions (tests/grading/integration/test_attacks.sh
# --gpu), a class of correct students who hand in every lesson, and probes of what can limit a
# cell's memory there (cgroup v2 delegation, RLIMIT_DATA under a CUDA program). From the
# repository root, as root (cells run as users of their own).
set -uo pipefail
out=$1 prefix=$2
repo=$(cd -- "$(dirname -- "$0")/../../.." && pwd -P)
mkdir -p "$out"
{ nvidia-smi; nvcc --version | tail -n 2; cmake --version | head -n 1; bwrap --version; /usr/bin/python3 --version
  uname -r; nproc; } > "$out/env.txt" 2>&1

echo "== the attack suite and the test submissions, GPU checks included"
mkdir -p "$out/attacks"
tests/grading/integration/test_attacks.sh --gpu --keep "$out/attacks" -DCMAKE_PREFIX_PATH="$prefix" --arch 90 --jobs 14 --timeout 30 \
  > "$out/attacks/attacks.txt" 2>&1 || true
tail -n 4 "$out/attacks/attacks.txt"

echo "== a class of correct students (every lesson's own main.cu)"
work=$(mktemp -d); chmod 755 "$work"
for s in 1 2; do
  for d in "$repo"/lessons/[0-9][0-9]_*/; do
    l=$(basename -- "$d"); mkdir -p "$work/class/class-$s/$l"; cp "$d/main.cu" "$work/class/class-$s/$l/"
  done
done
start=$(date +%s)
scripts/grade.sh "$work/class" --out "$work/out" --arch 90 --jobs 14 --timeout 30 --seed 2026 \
  -DCMAKE_PREFIX_PATH="$prefix" > "$out/class-console.txt" 2>&1
echo "grade.sh exit code $? after $(( $(date +%s) - start )) s" | tee -a "$out/class-console.txt"
mkdir -p "$out/class"
cp "$work/out/gradebook.csv" "$work/out/gradebook.md" "$work/out/cells/run-info.txt" "$out/class/"
cat "$work/out"/cells/*/timing.txt > "$out/class/timing.txt"

echo "== memory probes"
{ echo "# cgroup: the filesystem at /sys/fs/cgroup, its controllers, and whether a child can be made"
  stat -fc %T /sys/fs/cgroup; cat /sys/fs/cgroup/cgroup.controllers 2>&1; cat /sys/fs/cgroup/cgroup.subtree_control 2>&1
  if mkdir /sys/fs/cgroup/grade-probe 2>&1; then
    echo "mkdir /sys/fs/cgroup/grade-probe: ok"; ls /sys/fs/cgroup/grade-probe | tr '\n' ' '; echo
    rmdir /sys/fs/cgroup/grade-probe
  fi
  cat /proc/self/cgroup
  echo "# RLIMIT_DATA under the course's own check (a CUDA program: context, kernels, cuBLAS-free)"
  check=$work/out/common/common_check
  for mib in 8192 2048 1024 512 256 128; do
    COURSE_REQUIRE_GPU=1 prlimit --data=$((mib << 20)) -- "$check" --gpu > "$work/probe.log" 2>&1
    echo "--data=${mib}MiB: exit $? ($(grep -a -m 1 -E 'test cases:|error|rror' "$work/probe.log" | cut -c 1-160))"
  done
  echo "# the same check's peak memory, without a limit"
  COURSE_REQUIRE_GPU=1 /usr/bin/python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print("exit", r, "; peak resident memory", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, "MiB")' "$check" --gpu
} > "$out/memory.txt" 2>&1
cat "$out/memory.txt"
rm -rf -- "$work"
