#!/usr/bin/env bash
# The session's last device call: on an H200, the course's gpu_check (--ncu, no sanitizers);
# on an H100, the old grader (42c78a5) and the new one on the same class, for throughput.
set -o pipefail
D=$PWD/.deps/usr; export PATH=$D/bin:$PATH
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if [[ $gpu == *H200* ]]; then
  { date -u; echo "commit $1"; nvidia-smi; nvcc --version; cmake --version | head -1; ncu --version | tail -1; echo "cores: $(nproc)"; } > /tmp/env.txt 2>&1
  timeout 330 scripts/gpu_check.sh --arch 90 --ncu --no-sanitize --out /tmp/gc -- -DCMAKE_PREFIX_PATH=$D 2>&1 | tee /tmp/console.txt
  rc=$?; echo "gpu_check exit: $rc" >> /tmp/console.txt
  mkdir -p /tmp/gc; cp /tmp/env.txt /tmp/console.txt /tmp/gc/; tar czf $OUT/gc-h200.tgz -C /tmp gc; exit $rc
fi
out=/tmp/tp; mkdir -p $out
{ date -u; nvidia-smi; nproc; } > $out/env.txt 2>&1
work=$(mktemp -d); chmod 755 $work
for tree in old new; do
  root=$PWD; [ $tree = old ] && root=$PWD/.wt/final/old
  for s in 1 2; do for d in "$root"/lessons/0[1-6]_*/; do
    l=$(basename "$d"); mkdir -p $work/class-$tree/student-$s/$l; cp "$d/main.cu" $work/class-$tree/student-$s/$l/; done; done
  chmod -R a+rX $work
  t0=$(date +%s.%N)
  (cd "$root" && timeout 160 scripts/grade.sh $work/class-$tree --out $work/out-$tree --arch 90 --jobs 14 --timeout 30 --seed 2026 -DCMAKE_PREFIX_PATH=$D) > $out/$tree-console.txt 2>&1
  rc=$?; t1=$(date +%s.%N)
  echo "$tree grader: exit $rc, $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.1f", b-a}') s for 12 cells" | tee -a $out/summary.txt
  cp $work/out-$tree/gradebook.csv $out/$tree-gradebook.csv 2>/dev/null
  cat $work/out-$tree/cells/*/timing.txt > $out/$tree-timing.txt 2>/dev/null
done
tar czf $OUT/tp-h100.tgz -C /tmp tp
