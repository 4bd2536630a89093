#!/usr/bin/env bash
# grade.sh — grade students' main.cu files with the lessons' own checks, on a machine WITH a GPU,
# treating every submission as hostile.
#
# usage: scripts/grade.sh SUBMISSIONS [options]
#        scripts/grade.sh --gradebook-from CELLS [--out DIR]
#
# SUBMISSIONS holds one folder per student, each holding any subset of NN_name/main.cu, where
# NN_name is a lesson folder (01_naive_transpose ... 06_bank_conflicts). Every (student, lesson)
# is one cell. For each cell:
#   1. compile: the lesson's check.cu against the student's main.cu (the RUNNER), in a sandbox;
#   2. run: the runner, in a sandbox, records every value the student's code hands back to the
#      check (common/transcript.hpp); nothing it prints is believed;
#   3. judge: the lesson's check built from the course's OWN main.cu (the JUDGE), outside the
#      sandbox, runs every test case with its own inputs and CPU references and judges the
#      runner's recorded values. Its doctest result is the cell's grade;
#   4. with --sanitize, racecheck and memcheck over the runner's GPU checks, in the sandbox.
# The sandbox (bubblewrap) shows the system read-only, the course without its solutions (the
# student pack's tree) and the cell's own files; not the other submissions, cells or gradebook.
# It has no network, a private /tmp and /dev/shm of --scratch-mib each (nothing else writable but
# the build folder while compiling), its own PID namespace (nothing it starts
# outlives it), its own user id when grade.sh runs as root, and limits on time, processes, file
# size and output. README.md ("For instructors") states the threat model.
#
#   --out DIR            where everything goes (default: build-grade): DIR/gradebook.csv,
#                        DIR/gradebook.md, DIR/common/ (the course and its judges, built once),
#                        DIR/prebuilt/ and DIR/course-view/ (what a sandbox sees of the course:
#                        the libraries of common/ and the student pack's tree), DIR/cells/NNNN/
#                        (one folder per cell: result.txt and the logs)
#   --timeout S          seconds one run may take (default: 60); the judge gets the same again
#   --sanitize           also run each cell's GPU checks under compute-sanitizer racecheck and
#                        memcheck; a finding is reported even if the checks passed
#   --sanitize-timeout S seconds one sanitizer run may take (default: 600)
#   --seed N             the seed mixed into every random input (default: drawn at random; the
#                        gradebook says which, so that a run can be repeated)
#   --hidden-shapes FILE extra shapes for every lesson's checks (format: common/transcript.hpp;
#                        keep the file away from students)
#   --scratch-mib N, --file-mib N, --output-kib N, --procs N
#                        a cell's limits: its /tmp and /dev/shm (default 256 MiB each), any file it
#                        writes (1024 MiB), what it prints (1024 KiB kept, the rest counted),
#                        processes (64)
#   --arch LIST          CMAKE_CUDA_ARCHITECTURES (default: the GPU's own, via nvidia-smi)
#   --jobs N             cells compiled at the same time (default: half the CPU cores); the
#                        checks themselves run one at a time, so they never share the GPU
#   --no-sandbox         grade without bubblewrap (said in the gradebook): a submission can then
#                        read and write whatever the instructor can
#   --host-only          run the host test cases only, needing no GPU: for testing the grader
#   -DNAME=VALUE         passed to every cmake configure (e.g. -DCMAKE_PREFIX_PATH=/opt/doctest)
#   --gradebook-from CELLS   grade nothing: write the gradebook of an earlier run's cell folder
#                        (DIR/cells) into --out; needs no GPU
#   --                   end of options (for a SUBMISSIONS folder whose name starts with -)
#
# Gradebook (CSV and Markdown, one row per cell, sorted by student then lesson): student, lesson,
# compiled, checks passed, checks total (doctest test cases of the lesson's check, as the judge
# counted them), first failure or finding (empty when the cell is fully right). Folders in a
# student's submission that are not lesson folders, lesson folders without main.cu and empty
# submissions get a row too.
# Exit: 0 every cell passed; 1 a cell did not (or the grader could not build the course);
# 2 bad command line; 3 no usable GPU, or no usable sandbox (nothing is graded).
set -uo pipefail
export LC_ALL=C  # byte order for sorting; names are copied as bytes, never interpreted

me=grade.sh
repo=$(cd -- "$(dirname -- "$0")/.." && pwd -P)

usage_error() { echo "$me: $*; see --help" >&2; exit 2; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]; }
abs_path() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
seconds_since() { awk -v a="$1" -v b="${2:-$(date +%s.%N)}" 'BEGIN { printf "%.2f", b - a }'; }

# ================================================================= the gradebook writer
# A cell's result.txt holds one key=value per line: student, lesson, compiled (yes / no / -),
# passed, total, finding. A cell passed when it compiled, passed == total > 0 and finding is
# empty. Rows come out in the order of the cell folders' names.

csv_field() {  # RFC 4180: quote a field holding a comma, quote or line break; double its quotes
  local s=$1
  if [[ $s == *[,\"$'\n\r']* || $s == " "* || $s == *" " ]]; then s="\"${s//\"/\"\"}\""; fi
  printf '%s' "$s"
}
md_field() {  # Markdown table cell: escape what would end the cell or start markup (an HTML tag,
              # emphasis, code); "transpose_tiled<(int)32>" stays as it is
  printf '%s' "$1" | sed -E 's/\\/\\\\/g; s/\|/\\|/g; s/<([A-Za-z\/!?])/\\<\1/g; s/\*/\\*/g; s/`/\\`/g'
}

# write_gradebook CELLS OUTDIR: writes OUTDIR/gradebook.csv and .md; returns 0 if every cell passed.
write_gradebook() {
  local cells=$1 outdir=$2 csv md f key value failed=0 ncells=0 npassed=0
  local student lesson compiled passed total finding
  csv=$outdir/gradebook.csv md=$outdir/gradebook.md
  mkdir -p -- "$outdir" || return 1
  printf '%s\n' "student,lesson,compiled,checks passed,checks total,first failure or sanitizer finding" > "$csv"
  printf '%s\n' "| student | lesson | compiled | checks passed | checks total | first failure or sanitizer finding |" \
                "| --- | --- | --- | --- | --- | --- |" > "$md"
  for f in "$cells"/*/result.txt; do
    [ -f "$f" ] || continue
    student="" lesson="" compiled="" passed="" total="" finding=""
    while IFS= read -r line || [ -n "$line" ]; do
      key=${line%%=*} value=${line#*=}
      case $key in
        student) student=$value ;; lesson) lesson=$value ;; compiled) compiled=$value ;;
        passed) passed=$value ;; total) total=$value ;; finding) finding=$value ;;
      esac
    done < "$f"
    ncells=$((ncells + 1))
    if [ "$compiled" = yes ] && [[ $total =~ ^[0-9]+$ ]] && [ "$total" -gt 0 ] && [ "$passed" = "$total" ] &&
       [ -z "$finding" ]; then
      npassed=$((npassed + 1))
    else
      failed=1
      [ -n "$finding" ] || finding="${passed:-0} of ${total:-0} test cases passed"  # never a blank failure
    fi
    local field sep=""
    for field in "$student" "$lesson" "$compiled" "$passed" "$total" "$finding"; do
      printf '%s%s' "$sep" "$(csv_field "$field")" >> "$csv"; sep=,
    done
    printf '\n' >> "$csv"
    printf '|' >> "$md"
    for field in "$student" "$lesson" "$compiled" "$passed" "$total" "$finding"; do
      printf ' %s |' "$(md_field "$field")" >> "$md"
    done
    printf '\n' >> "$md"
  done
  printf '\n%d cells: %d passed, %d did not.\n' "$ncells" "$npassed" "$((ncells - npassed))" >> "$md"
  [ -f "$cells/run-info.txt" ] && { printf '\n'; cat -- "$cells/run-info.txt"; } >> "$md"  # sandbox, seed
  [ "$ncells" -gt 0 ] || { echo "$me: no cell results (*/result.txt) in $cells" >&2; return 1; }
  return $failed
}

# ================================================================= command line
submissions="" out="" timeout_s=60 sanitize=0 sanitize_timeout=600 arch="" jobs="" from=""
seed="" hidden="" no_sandbox=0 host_only=0
scratch_mib=256 file_mib=1024 output_kib=1024 procs=64
cmake_defs=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage_error "--out needs a folder"; out=$2; shift 2 ;;
    --timeout) is_uint "${2-}" || usage_error "--timeout needs a whole number of seconds > 0"; timeout_s=$2; shift 2 ;;
    --sanitize) sanitize=1; shift ;;
    --sanitize-timeout) is_uint "${2-}" || usage_error "--sanitize-timeout needs a whole number of seconds > 0"
                        sanitize_timeout=$2; shift 2 ;;
    --seed) [[ ${2-} =~ ^[0-9]{1,10}$ ]] && [ "$2" -le 4294967295 ] || usage_error "--seed needs a whole number from 0 to 4294967295"
            seed=$2; shift 2 ;;
    --hidden-shapes) [ -f "${2-}" ] && [ -r "$2" ] || usage_error "--hidden-shapes needs a readable file"
                     hidden=$(cd -- "$(dirname -- "$2")" && pwd -P)/$(basename -- "$2"); shift 2 ;;
    --arch) [ -n "${2-}" ] || usage_error "--arch needs a list, e.g. 90 or 80;90"; arch=$2; shift 2 ;;
    --jobs) is_uint "${2-}" || usage_error "--jobs needs a number > 0"; jobs=$2; shift 2 ;;
    --no-sandbox) no_sandbox=1; shift ;;
    --host-only) host_only=1; shift ;;
    --scratch-mib) is_uint "${2-}" || usage_error "--scratch-mib needs a number > 0"; scratch_mib=$2; shift 2 ;;
    --file-mib) is_uint "${2-}" || usage_error "--file-mib needs a number > 0"; file_mib=$2; shift 2 ;;
    --output-kib) is_uint "${2-}" || usage_error "--output-kib needs a number > 0"; output_kib=$2; shift 2 ;;
    --procs) is_uint "${2-}" || usage_error "--procs needs a number > 0"; procs=$2; shift 2 ;;
    --gradebook-from) [ -n "${2-}" ] || usage_error "--gradebook-from needs a folder"; from=$2; shift 2 ;;
    -D?*) cmake_defs+=("$1"); shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; [ $# -le 1 ] || usage_error "one SUBMISSIONS folder, not $#"; [ $# -eq 0 ] || submissions=$1; shift $# ;;
    -*) usage_error "unknown option '$1'" ;;
    *) [ -z "$submissions" ] || usage_error "one SUBMISSIONS folder, not two ('$submissions', '$1')"
       submissions=$1; shift ;;
  esac
done
out=$(abs_path "${out:-$repo/build-grade}")

if [ -n "$from" ]; then
  [ -z "$submissions" ] || usage_error "--gradebook-from grades nothing: give no SUBMISSIONS"
  [ -d "$from" ] || usage_error "--gradebook-from '$from' is not a folder"
  write_gradebook "$from" "$out"; status=$?
  cat -- "$out/gradebook.md"
  exit $status
fi

# The hidden shapes, checked before anything is built: a lesson the course has, then as many
# numbers as that lesson's check.cu takes (hidden_shapes(...) there), each from 1 up.
if [ -n "$hidden" ]; then
  bad=$(awk '{ sub(/#.*/, "") } NF == 0 { next }
    { n = ($1 == "04_reduction") ? 1 : ($1 == "05_tiled_matmul") ? 3 : ($1 ~ /^0[1236]_/) ? 2 : -1
      ok = (n == NF - 1) && ($1 ~ /^(01_naive_transpose|02_shared_transpose|03_dynamic_shared|04_reduction|05_tiled_matmul|06_bank_conflicts)$/)
      for (i = 2; i <= NF; i++) if ($i !~ /^[1-9][0-9]*$/) ok = 0
      if (!ok) { printf "line %d: \"%s\" (a lesson, then %s positive whole numbers)", NR, $0, (n < 0 ? "its" : n); exit } }' "$hidden")
  [ -z "$bad" ] || usage_error "--hidden-shapes $hidden, $bad"
fi

[ -n "$submissions" ] || usage_error "no SUBMISSIONS folder given"
[ -d "$submissions" ] || usage_error "SUBMISSIONS '$submissions' is not a folder"
submissions=$(cd -- "$submissions" && pwd -P)

# ================================================================= a GPU, before building anything
# The first look is nvidia-smi; after common/ is built, the course's own test (the check of
# common/ with COURSE_REQUIRE_GPU=1, which asks the CUDA runtime and runs a probe kernel) decides.
if [ $host_only -eq 0 ]; then
  if ! command -v nvidia-smi > /dev/null 2>&1; then
    echo "$me: no usable GPU: nvidia-smi not found; grading runs the GPU checks, so run it on a machine with an NVIDIA GPU (nothing graded)" >&2
    exit 3
  fi
  if ! smi=$(nvidia-smi -L 2>&1) || ! grep -q '^GPU [0-9]' <<< "$smi"; then
    echo "$me: no usable GPU: nvidia-smi -L says '$(head -n 1 <<< "$smi")'; grading runs the GPU checks, so run it on a machine with an NVIDIA GPU (nothing graded)" >&2
    exit 3
  fi
fi

# ================================================================= the sandbox, before building anything
# Cells run as a user of their own (uid_base + cell number) when grade.sh runs as root: then the
# process limit counts that cell's processes alone, and a cell can read nothing only root may.
# Run as another user, every cell runs as that user and the limit is that user's count + --procs.
as_root=0; [ "$(id -u)" -eq 0 ] && as_root=1
# Two grade.sh runs on one machine must not share user ids (each kills its cells' users' processes):
# each run holds one of ten slots (a lock), and its cells' users are 100000 + 10000 * slot + cell.
uid_base=100000
if [ $as_root -eq 1 ] && [ $no_sandbox -eq 0 ] && command -v flock > /dev/null; then
  for slot in 0 1 2 3 4 5 6 7 8 9; do
    exec {slot_fd}> "/tmp/.course-grade-slot-$slot.lock" && flock -n "$slot_fd" && { uid_base=$((100000 + 10000 * slot)); break; }
    exec {slot_fd}>&-; slot_fd=""
  done
  if [ -z "${slot_fd-}" ]; then echo "$me: ten grade.sh runs are already going on this machine; wait for one to end" >&2; exit 1; fi
fi
sandbox_version="none"
if [ $no_sandbox -eq 0 ]; then
  if ! command -v bwrap > /dev/null 2>&1; then
    echo "$me: no sandbox: bubblewrap (bwrap) not found; install it (Debian/Ubuntu: apt install bubblewrap), or grade without one with --no-sandbox (nothing graded)" >&2
    exit 3
  fi
  if [ $as_root -eq 1 ] && ! command -v setpriv > /dev/null 2>&1; then
    echo "$me: no sandbox: setpriv (util-linux) not found, needed to run cells as users of their own (nothing graded)" >&2
    exit 3
  fi
  probe_pre=(); [ $as_root -eq 1 ] && probe_pre=(setpriv --reuid="$uid_base" --regid="$uid_base" --clear-groups)
  if ! why=$("${probe_pre[@]}" bwrap --unshare-all --die-with-parent --ro-bind / / --proc /proc --dev /dev true 2>&1); then
    echo "$me: no sandbox: bubblewrap cannot create its namespaces here ($(head -n 1 <<< "$why")); user namespaces may be off (sysctl kernel.unprivileged_userns_clone, AppArmor, a container), or grade without one with --no-sandbox (nothing graded)" >&2
    exit 3
  fi
  sandbox_version=$(bwrap --version 2>/dev/null | head -n 1)
fi
for tool in cmake timeout prlimit; do
  command -v "$tool" > /dev/null || { echo "$me: '$tool' not found" >&2; exit 1; }
done
if [ $sanitize -eq 1 ] && ! command -v compute-sanitizer > /dev/null; then
  echo "$me: --sanitize needs compute-sanitizer (part of the CUDA toolkit) on PATH" >&2; exit 1
fi
if [ -z "$jobs" ]; then
  jobs=$(( $(nproc 2> /dev/null || echo 2) / 2 )); [ "$jobs" -ge 1 ] || jobs=1
fi
[ -n "$seed" ] || seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')

# ================================================================= the cells
lessons=()
for d in "$repo"/lessons/[0-9][0-9]_*/; do
  [ -f "$d/check.cu" ] && lessons+=("$(basename -- "$d")")
done
lesson_list=$(IFS=,; echo "${lessons[*]}"); lesson_list=${lesson_list//,/, }
is_lesson() { local l; for l in "${lessons[@]}"; do [ "$l" = "$1" ] && return 0; done; return 1; }
clean() { local s=$1; printf '%s' "${s//[[:cntrl:]]/ }"; }  # one line per value in result.txt

cells_dir=$out/cells
marker=$cells_dir/.made-by-grade.sh  # so that a second run deletes only what a first one made
if [ -e "$cells_dir" ] && [ ! -f "$marker" ]; then
  echo "$me: $cells_dir exists and was not made by $me; give another --out" >&2; exit 2
fi
case "$out/" in "$submissions/"*) usage_error "--out must not be inside SUBMISSIONS (a sandbox would see it)" ;; esac
case "$submissions/" in "$out/"*) usage_error "SUBMISSIONS must not be inside --out" ;; esac
rm -rf -- "$cells_dir" "$out/gradebook.csv" "$out/gradebook.md" "$out/course-view"
mkdir -p -- "$cells_dir" && : > "$marker" || exit 1
chmod 755 "$out" "$cells_dir"
if [ $no_sandbox -eq 0 ] && [ $as_root -eq 1 ] && ! setpriv --reuid="$uid_base" --regid="$uid_base" --clear-groups test -x "$cells_dir"; then
  echo "$me: no sandbox: a cell could not reach $out (cells run as users of their own); open every folder above it to other users (chmod o+x), or give another --out (nothing graded)" >&2
  exit 3
fi
ncell=0
cell_dirs=() cell_sources=() cell_lessons=()
new_cell() {  # new_cell STUDENT LESSON [SOURCE]: a cell folder, with result.txt when there is nothing to build
  ncell=$((ncell + 1))
  local dir; dir=$cells_dir/$(printf '%04d' "$ncell")
  mkdir -p -- "$dir"
  printf 'student=%s\nlesson=%s\n' "$(clean "$1")" "$(clean "$2")" > "$dir/identity.txt"
  if [ $# -ge 3 ]; then
    cell_dirs+=("$dir") cell_sources+=("$3") cell_lessons+=("$2")
  fi
  last_cell=$dir
}
finish_cell() {  # finish_cell DIR COMPILED PASSED TOTAL FINDING
  { cat -- "$1/identity.txt"
    printf 'compiled=%s\npassed=%s\ntotal=%s\nfinding=%s\n' "$2" "$3" "$4" "$(clean "$5")"; } > "$1/result.txt"
}

shopt -s nullglob
for sdir in "$submissions"/*; do
  student=$(basename -- "$sdir")
  if [ ! -d "$sdir" ]; then
    new_cell "$student" ""; finish_cell "$last_cell" - "" "" "not a student folder (a file at the top of SUBMISSIONS)"
    continue
  fi
  entries=("$sdir"/*)
  if [ ${#entries[@]} -eq 0 ]; then
    new_cell "$student" ""; finish_cell "$last_cell" - "" "" "empty submission (no NN_name/main.cu)"
    continue
  fi
  for entry in "${entries[@]}"; do
    name=$(basename -- "$entry")
    if [ -d "$entry" ] && is_lesson "$name"; then
      if [ -f "$entry/main.cu" ]; then
        new_cell "$student" "$name" "$entry/main.cu"
      else
        new_cell "$student" "$name"; finish_cell "$last_cell" - "" "" "no main.cu in $name/"
      fi
    else
      new_cell "$student" "$name"
      finish_cell "$last_cell" - "" "" "not a lesson folder (expected NN_name/main.cu, NN_name one of: $lesson_list)"
    fi
  done
done
shopt -u nullglob
if [ $ncell -eq 0 ]; then
  echo "$me: '$submissions' holds no student folders" >&2; exit 2
fi
echo "$me: $ncell cells (${#cell_dirs[@]} to build) from $submissions; everything goes to $out"
{ if [ $no_sandbox -eq 1 ]; then echo "Graded WITHOUT a sandbox (--no-sandbox): every submission could read and write what the instructor can."
  else echo "Graded in a sandbox ($sandbox_version); limits: ${timeout_s} s, $procs processes, files $file_mib MiB, scratch $scratch_mib MiB, output $output_kib KiB."; fi
  echo "Inputs drawn with --seed $seed${hidden:+, with hidden shapes}${host_only:+}."
  [ $host_only -eq 1 ] && echo "Host test cases only (--host-only): no GPU check was run."
  [ $as_root -eq 1 ] && [ $no_sandbox -eq 0 ] && echo "Cells ran as user ids $((uid_base + 1)) to $((uid_base + ncell))."
} > "$cells_dir/run-info.txt"

# ================================================================= interruption
# Every cell's processes belong to a user of their own (as root) and to a PID namespace that
# dies with its bubblewrap; on Ctrl-C or TERM end what is running and say where things are.
on_signal() {
  local pid
  for pid in $(jobs -p); do kill -TERM "$pid" 2> /dev/null; done
  [ $as_root -eq 1 ] && [ -n "${cell_uid-}" ] && pkill -KILL -u "$cell_uid" 2> /dev/null
  echo "$me: interrupted; partial results in $cells_dir" >&2
  exit 130
}
trap on_signal INT TERM

# ================================================================= the course, once (trusted)
# common/ and every lesson's check built from the course's own main.cu: these checks are the
# judges. Built outside any sandbox, from the course tree, before any submission is looked at.
config=(-DCMAKE_BUILD_TYPE=Release)
command -v ninja > /dev/null && config+=(-G Ninja)
[ -n "$arch" ] && config+=("-DCMAKE_CUDA_ARCHITECTURES=$arch")
config+=(${cmake_defs[@]+"${cmake_defs[@]}"})
common=$out/common
judge_targets=(course_common course_test_main common_check)  # and the checks of the lessons submitted
for l in $(printf '%s\n' ${cell_lessons[@]+"${cell_lessons[@]}"} | sort -u); do judge_targets+=("${l}_check"); done
echo "$me: building the course and its judges once (log: $common.log)"
if ! { cmake -S "$repo" -B "$common" "${config[@]}" &&
       cmake --build "$common" --target course_common course_test_main common_check; } > "$common.log" 2>&1; then
  tail -n 20 "$common.log" >&2
  echo "$me: could not build the course's common/ (see $common.log); nothing graded" >&2
  exit 1
fi
if [ $host_only -eq 0 ]; then
  probe=$(COURSE_REQUIRE_GPU=1 "$common/common_check" --gpu 2>&1 < /dev/null); rc=$?
  if [ $rc -ne 0 ]; then
    reason=$(grep -m 1 'COURSE_REQUIRE_GPU is set but' <<< "$probe" | sed 's/^.*COURSE_REQUIRE_GPU is set but //; s/^no usable CUDA GPU: //')
    if [ -n "$reason" ]; then
      echo "$me: no usable GPU: nvidia-smi lists one, but the CUDA runtime says $reason (nothing graded)" >&2; exit 3
    fi
    printf '%s\n' "$probe" | tail -n 5 >&2
    echo "$me: the check of common/ failed on this GPU (exit $rc); nothing graded" >&2; exit 1
  fi
fi

if ! cmake --build "$common" --target "${judge_targets[@]}" >> "$common.log" 2>&1; then
  tail -n 20 "$common.log" >&2
  echo "$me: could not build the course's checks, the judges (see $common.log); nothing graded" >&2
  exit 1
fi

# The two libraries a cell links, apart from the judges (which hold the course's solutions, so no
# sandbox may see them: a runner could run one in its place).
prebuilt=$out/prebuilt
mkdir -p "$prebuilt" && cp -- "$common"/libcourse_common.a "$common"/libcourse_test_main.a "$prebuilt/" || exit 1

# What a sandbox sees of the course: the student pack's tree (no solutions, no grading), which
# builds a lesson's check against any main.cu (-DCOURSE_GRADE_LESSON).
view=$out/course-view
if ! { cmake -DOUT="$out/course-view.tar.gz" -P "$repo/scripts/make_student_pack.cmake" &&
       mkdir -p "$view" && tar -xzf "$out/course-view.tar.gz" -C "$view" --strip-components=1; } > "$out/course-view.log" 2>&1; then
  cat "$out/course-view.log" >&2
  echo "$me: could not make the course view for the sandbox (see $out/course-view.log); nothing graded" >&2
  exit 1
fi
rm -f -- "$out/course-view.tar.gz"
chmod -R a+rX "$view" "$prebuilt"

# ================================================================= the sandbox
# sandboxed ROLE BOX: the command prefix that runs a command in a cell's sandbox (array `sb`).
# ROLE compile: BOX (the cell's source and build folder) writable; run: read-only.
ro_dirs=()
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc /opt; do [ -e "$d" ] && ro_dirs+=("$d"); done
covered() { local d; for d in "${ro_dirs[@]}"; do case "$1/" in "$d/"*) return 0 ;; esac; done; return 1; }
for tool in cmake ninja nvcc compute-sanitizer c++; do  # tools installed outside the system folders
  p=$(command -v "$tool" 2> /dev/null) || continue
  p=$(dirname -- "$(dirname -- "$(readlink -f -- "$p")")")
  covered "$p" || ro_dirs+=("$p")
done
extra_ro=()  # CMAKE_PREFIX_PATH folders (doctest, ...) given with -D
for d in ${cmake_defs[@]+"${cmake_defs[@]}"}; do
  case $d in -DCMAKE_PREFIX_PATH=*|-Ddoctest_DIR=*)
    IFS=';:' read -r -a parts <<< "${d#*=}"
    for p in "${parts[@]}"; do [ -d "$p" ] && extra_ro+=("$(cd -- "$p" && pwd -P)"); done ;;
  esac
done
hide=()  # the course, the submissions and the grading folder, wherever they are
while IFS= read -r h; do hide+=("$h"); done < <(printf '%s\n' "$repo" "$submissions" "$out" /root /home | awk '{ print length, $0 }' | sort -n | cut -d' ' -f2-)
passenv=(PATH LD_LIBRARY_PATH CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES NVIDIA_DRIVER_CAPABILITIES)
sandboxed() {
  local role=$1 box=$2 d v
  if [ $no_sandbox -eq 1 ]; then sb=(); return; fi
  sb=(prlimit --core=0 --fsize=$((file_mib * 1024 * 1024)))
  if [ $as_root -eq 1 ]; then
    sb+=(--nproc="$procs" -- setpriv --reuid="$cell_uid" --regid="$cell_uid" --clear-groups)
  else
    sb+=(--nproc=$(( $(ps -U "$(id -u)" --no-headers | wc -l) + procs )) --)
  fi
  sb+=(bwrap --unshare-all --die-with-parent --new-session --clearenv)
  for d in "${ro_dirs[@]}"; do
    if [ -L "$d" ]; then sb+=(--symlink "$(readlink -- "$d")" "$d"); else sb+=(--ro-bind "$d" "$d"); fi
  done
  sb+=(--ro-bind /sys /sys --proc /proc --dev /dev)
  for d in /dev/nvidia*; do [ -e "$d" ] && sb+=(--dev-bind "$d" "$d"); done
  sb+=(--size $((scratch_mib * 1024 * 1024)) --tmpfs /dev/shm --remount-ro /dev)
  sb+=(--size $((scratch_mib * 1024 * 1024)) --tmpfs /tmp)
  for d in "${hide[@]}"; do sb+=(--tmpfs "$d"); done
  sb+=(--ro-bind "$view" "$view" --ro-bind "$prebuilt" "$prebuilt")
  for d in ${extra_ro[@]+"${extra_ro[@]}"}; do sb+=(--ro-bind "$d" "$d"); done
  if [ "$role" = compile ]; then sb+=(--bind "$box" "$box"); else sb+=(--ro-bind "$box" "$box"); fi
  [ -n "$hidden" ] && sb+=(--ro-bind "$hidden" /hidden-shapes.txt)
  for d in "${hide[@]}" /; do sb+=(--remount-ro "$d"); done  # writable: /tmp, /dev/shm (both capped) and a compiling BOX
  for v in "${passenv[@]}"; do [ -n "${!v-}" ] && sb+=(--setenv "$v" "${!v}"); done
  sb+=(--setenv HOME /tmp --setenv TMPDIR /tmp --chdir /tmp)
  [ $host_only -eq 0 ] && sb+=(--setenv COURSE_REQUIRE_GPU 1)
  sb+=(--)
}
# What the sandbox itself costs: an empty command in it, timed (three times, the median).
sandbox_s=0
if [ $no_sandbox -eq 0 ]; then
  cell_uid=$uid_base
  sandboxed run "$prebuilt"
  if ! why=$("${sb[@]}" true 2>&1); then
    echo "$me: no sandbox: a cell's sandbox cannot start ($(head -n 1 <<< "$why")); every folder above --out must be open to other users (chmod o+x), as a cell runs as a user of its own (nothing graded)" >&2
    exit 3
  fi
  sandbox_s=$(for k in 1 2 3; do t0=$(date +%s.%N); "${sb[@]}" true > /dev/null 2>&1; seconds_since "$t0"; echo; done | sort -n | sed -n 2p)
fi
hidden_arg=(); [ -n "$hidden" ] && hidden_arg=(--hidden-shapes "$([ $no_sandbox -eq 1 ] && echo "$hidden" || echo /hidden-shapes.txt)")

# boxed DIR NAME LIMIT ROLE BOX TRANSCRIPT COMMAND...: runs COMMAND in the cell's sandbox with
# a time limit. Its stdout and stderr go to DIR/NAME.log, cut at --output-kib (what was cut is
# counted in DIR/NAME.cut); fd 3 is TRANSCRIPT. Sets rc (124/137: timed out), max_procs.
boxed() {
  local dir=$1 name=$2 limit=$3 role=$4 box=$5 transcript=$6; shift 6
  sandboxed "$role" "$box"
  local cap=$((output_kib * 1024))
  [ $as_root -eq 1 ] && [ $no_sandbox -eq 0 ] && pkill -KILL -u "$cell_uid" 2> /dev/null  # never two runs of one user
  ( for fd in /proc/$BASHPID/fd/*; do  # the sandbox gets stdin, stdout, stderr and fd 3, nothing else
      fd=${fd##*/}; [ "$fd" -gt 3 ] 2> /dev/null && eval "exec $fd>&-"
    done
    timeout -k 5 "$limit" ${sb[@]+"${sb[@]}"} "$@" 3> "$transcript" < /dev/null 2>&1 |
      { dd of="$dir/$name.log" bs="$cap" count=1 iflag=fullblock 2> /dev/null; wc -c > "$dir/$name.cut"; }
    echo "${PIPESTATUS[0]}" > "$dir/$name.rc" ) &
  local bg=$! n base=0 who=$cell_uid
  [ $as_root -eq 1 ] || { who=$(id -u); base=$(pgrep -c -u "$who"); }  # not root: the cell's share of this user's
  max_procs=0
  while kill -0 "$bg" 2> /dev/null; do
    if [ $no_sandbox -eq 0 ]; then
      n=$(pgrep -c -u "$who" 2> /dev/null); n=$(( ${n:-0} - base ))  # (pgrep -c prints 0 and fails when none)
      [ "$n" -gt "$max_procs" ] && max_procs=$n
    fi
    sleep 0.2
  done
  wait "$bg" 2> /dev/null
  rc=$(cat -- "$dir/$name.rc" 2> /dev/null || echo 1)
  if [ $as_root -eq 1 ] && [ $no_sandbox -eq 0 ]; then
    pkill -KILL -u "$cell_uid" 2> /dev/null
    for n in $(seq 1 50); do pgrep -u "$cell_uid" > /dev/null || break; sleep 0.2; done  # a big tmpfs takes a while to go
  fi
}

# ================================================================= compile every cell (sandboxed)
# The cell's own folder: box/src/main.cu (a copy of the submission) and box/build, owned by the
# cell's user; result.txt and the logs beside box/, where the sandbox cannot reach them.
uid_of() { echo $((uid_base + 10#$(basename -- "$1"))); }
build_cell() {  # build_cell DIR SOURCE LESSON: writes DIR/compiled (yes/no) and DIR/build.log
  local dir=$1 source=$2 lesson=$3 box=$1/box t0
  cell_uid=$(uid_of "$dir")
  mkdir -p -- "$box/src" "$box/build"
  cp -- "$source" "$box/src/main.cu" || { echo no > "$dir/compiled"; return 0; }
  [ $as_root -eq 1 ] && [ $no_sandbox -eq 0 ] && chown -R "$cell_uid:$cell_uid" "$box"
  chmod 755 "$dir" "$box"
  t0=$(date +%s.%N)
  boxed "$dir" build 600 compile "$box" /dev/null \
    bash -c 'cmake -S "$1" -B "$2/build" "${@:5}" -DCOURSE_GRADE_LESSON="$3" -DCOURSE_GRADE_SOURCE="$2/src/main.cu" \
               -DCOURSE_GRADE_COMMON="$4" && cmake --build "$2/build" --target "$3_check" -j 1' \
    compile "$view" "$box" "$lesson" "$prebuilt" "${config[@]}"
  echo "compile_s=$(seconds_since "$t0")" > "$dir/timing.txt"
  if [ "$rc" -eq 0 ] && [ -x "$box/build/${lesson}_check" ]; then echo yes > "$dir/compiled"; else echo no > "$dir/compiled"; fi
  return 0
}
echo "$me: compiling ${#cell_dirs[@]} cells, $jobs at a time, each in its sandbox"
for i in "${!cell_dirs[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  build_cell "${cell_dirs[$i]}" "${cell_sources[$i]}" "${cell_lessons[$i]}" &
done
wait

# ================================================================= run and judge every cell
# first_failure LOG: the first failing check of the judge's doctest log, as one line: its logged
# context (the check CAPTUREs kernel, shape and first wrong element) or, without one, the test
# case and doctest's message (an exception, a REQUIRE).
first_failure() {
  awk '
    /^TEST CASE:/ { tc = $0; sub(/^TEST CASE: +/, "", tc); next }
    state == 0 && / ERROR: / { err = $0; sub(/^.* ERROR: /, "", err); state = 1; next }
    state == 1 && /^  logged: / { l = $0; sub(/^  logged: /, "", l); logged = l; state = 2; next }
    state == 2 && /^          / { l = $0; sub(/^ +/, "", l); logged = logged "; " l; next }
    state >= 1 && /^$/ { state = 3 }
    END {
      if (err == "") exit
      if (err ~ /is NOT correct!$/ && logged != "") print logged
      else if (logged != "") print tc ": " err " (" logged ")"
      else print tc ": " err
    }' "$1"
}
strip_args() {  # "transpose_tiled<(int)32>(const float *, int)" -> "transpose_tiled<(int)32>"
  local s=$1 i depth=0
  [[ $s == *")" ]] || { printf '%s' "$s"; return; }
  for ((i = ${#s} - 1; i >= 0; i--)); do
    case ${s:i:1} in ")") depth=$((depth + 1)) ;; "(") depth=$((depth - 1)); [ $depth -eq 0 ] && break ;; esac
  done
  printf '%s' "${s:0:i}"
}
signal_name() { local n; n=$(kill -l "$1" 2> /dev/null) && echo "SIG$n" || echo "signal $1"; }
shorten() { local s=$1; [ ${#s} -le 400 ] || s="${s:0:400}..."; printf '%s' "$s"; }
add() { finding="${finding:+$finding; }$1"; }
# What ended a sandboxed run, as a finding (empty when it exited by itself).
run_finding() {  # run_finding NAME LIMIT DIR
  local name=$1 limit=$2 dir=$3 cut
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "$name timed out after $limit s"
  elif [ "$rc" -eq $((128 + 25)) ]; then echo "$name killed: a file reached the $file_mib MiB limit"
  elif [ "$rc" -gt 128 ]; then echo "$name crashed ($(signal_name $((rc - 128))))"
  elif [ "$rc" -ne 0 ] && [ $no_sandbox -eq 0 ] && head -n 1 "$dir/$name.log" 2> /dev/null | grep -q '^bwrap: '; then
    echo "the sandbox refused to start the $name: $(head -n 1 "$dir/$name.log" | cut -c 8-200)"
  fi
  cut=$(cat "$dir/$name.cut" 2> /dev/null || echo 0)
  [ "${cut:-0}" -gt 0 ] && echo "$name output over $output_kib KiB, cut ($cut bytes more)"
  [ "$max_procs" -ge $((procs - 4)) ] && echo "$name hit the process limit ($procs processes)"
  return 0
}
gpu_in_use() {  # prints what holds the GPU (compute processes), nothing when it is free
  [ $host_only -eq 1 ] && return 0
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2> /dev/null | grep -v '^$' | head -n 3 | tr '\n' ' '
}
wait_gpu_free() {  # up to 20 s
  local i busy
  for i in $(seq 1 40); do busy=$(gpu_in_use); [ -z "$busy" ] && return 0; sleep 0.5; done
  gpu_busy=$busy
  return 1
}

summary_re='test cases: *([0-9]+) \| *([0-9]+) passed \| *([0-9]+) failed'
judge_re='^judge: ([0-9]+) value\(s\) missing from the submission.s run, ([0-9]+) inconsistent'
stop_reason=""
for i in "${!cell_dirs[@]}"; do
  dir=${cell_dirs[$i]} lesson=${cell_lessons[$i]} box=${cell_dirs[$i]}/box
  label="$(sed -n 's/^student=//p' "$dir/identity.txt") / $lesson"
  if [ -n "$stop_reason" ]; then
    finish_cell "$dir" - "" "" "not graded: $stop_reason"; continue
  fi
  if [ "$(cat "$dir/compiled" 2> /dev/null)" != yes ]; then
    err=$(grep -a -m 1 -E ': (fatal )?error|CMake Error|nvcc fatal' "$dir/build.log" 2> /dev/null)  # the compiler's first
    [ -n "$err" ] || err=$(grep -a -m 1 -E '^FAILED: ' "$dir/build.log" 2> /dev/null)        # else the failed step
    err=${err//"$box/src/"/}
    brc=$(cat "$dir/build.rc" 2> /dev/null || echo "?")
    if [ -z "$err" ]; then  # no compiler message: say how the build ended, and its last line
      case $brc in 124|137) err="the build timed out after 600 s" ;;
        *) err="the build ended with exit code $brc: $(grep -a -v '^$' "$dir/build.log" 2> /dev/null | tail -n 1)" ;; esac
    fi
    finding="does not compile: $(shorten "$err")"
    if head -n 1 "$dir/build.log" 2> /dev/null | grep -q '^bwrap: '; then
      finding="the sandbox refused to start the compiler: $(head -n 1 "$dir/build.log" | cut -c 8-200)"
    fi
    cut=$(cat "$dir/build.cut" 2> /dev/null || echo 0); [ "${cut:-0}" -gt 0 ] && add "compiler output over $output_kib KiB, cut"
    finish_cell "$dir" no "" "" "$finding"
    echo "$me: $label: does not compile"
    continue
  fi
  if ! wait_gpu_free; then  # something outside the grader holds the GPU: grade nothing more
    stop_reason="the GPU was in use by another program before this cell ($gpu_busy)"
    finish_cell "$dir" - "" "" "not graded: $stop_reason"; continue
  fi
  cell_uid=$(uid_of "$dir")
  check=$box/build/${lesson}_check
  finding=""
  mode=(); [ $host_only -eq 1 ] && mode=(--host)
  # 1. the runner, sandboxed: records what the submission hands back
  t0=$(date +%s.%N)
  boxed "$dir" run "$timeout_s" run "$box" "$dir/transcript.bin" \
    "$check" ${mode[@]+"${mode[@]}"} --record /dev/fd/3 --seed "$seed" ${hidden_arg[@]+"${hidden_arg[@]}"}
  run_rc=$rc t1=$(date +%s.%N)
  while IFS= read -r line; do add "$line"; done < <(run_finding run "$timeout_s" "$dir")
  if ! wait_gpu_free; then
    add "left the GPU in use after it ended ($gpu_busy)"
    stop_reason="the GPU was still in use after the cell of $label"
  fi
  # 2. the judge: the course's own check, outside the sandbox, judging the recorded values
  ( cd -- "$dir" && COURSE_REQUIRE_GPU=$((1 - host_only)) exec timeout -k 5 $((timeout_s + 60)) \
      "$common/${lesson}_check" ${mode[@]+"${mode[@]}"} --judge "$dir/transcript.bin" --seed "$seed" \
      ${hidden:+--hidden-shapes "$hidden"} ) > "$dir/judge.log" 2>&1 < /dev/null
  judge_rc=$? t2=$(date +%s.%N)
  rm -f -- "$dir/transcript.bin"
  total=$(sed -n 's/.*test cases: *\([0-9]*\) |.*/\1/p' "$dir/judge.log" | tail -n 1)
  passed=""
  [[ $(grep -E 'test cases:' "$dir/judge.log" | tail -n 1) =~ $summary_re ]] && passed=${BASH_REMATCH[2]}
  missing=0 inconsistent=0
  [[ $(grep -E '^judge: ' "$dir/judge.log" | tail -n 1) =~ $judge_re ]] && missing=${BASH_REMATCH[1]} inconsistent=${BASH_REMATCH[2]}
  if [ -z "$passed" ] || [ -z "$total" ] || [ "$judge_rc" -eq 124 ] || [ "$judge_rc" -eq 137 ]; then
    add "the judge did not finish (exit $judge_rc; see judge.log): grader error"
  fi
  if [ "$missing" -gt 0 ] && [ "$run_rc" -eq 0 ]; then
    add "forged or cut short: the run exited 0, but $missing value(s) its checks hand back were never recorded"
  elif [ "$missing" -gt 0 ] && [ -z "$finding" ]; then
    add "the run stopped early (exit $run_rc): $missing value(s) never recorded"
  fi
  [ "$inconsistent" -gt 0 ] && add "inconsistent output: $inconsistent recorded value(s) of the wrong type or size"
  if [ "$judge_rc" -ne 0 ] && [ -n "$passed" ] && [ "$passed" != "$total" ]; then
    first=$(first_failure "$dir/judge.log"); [ -n "$first" ] && add "$first"
  fi
  if grep -q -m 1 -E 'cudaErrorMemoryAllocation|out of memory' "$dir/run.log" 2> /dev/null && [ "$passed" != "$total" ]; then
    add "the run reported that the GPU was out of memory"
  fi

  # 3. the sanitizers, sandboxed, over the runner's GPU checks. The verdict is the tool's exit
  # code (99: it found errors); the count and place are read from its log, which the submission
  # could also write to, so they describe but never decide.
  if [ $sanitize -eq 1 ] && [ $host_only -eq 0 ] && [ "$run_rc" -ne 124 ] && [ "$run_rc" -ne 137 ] && [ -z "$stop_reason" ]; then
    found=()
    for tool in racecheck memcheck; do
      log=$dir/$tool.log
      boxed "$dir" "$tool" "$sanitize_timeout" run "$box" /dev/null \
        compute-sanitizer --tool "$tool" --error-exitcode 99 "$check" --gpu --seed "$seed" ${hidden_arg[@]+"${hidden_arg[@]}"}
      src=$rc
      if [ $tool = racecheck ]; then
        where=$(grep 'Race reported between' "$log" | tail -n 1 | sed -E 's/^.* access at //; s/\+0x[0-9a-f]+.*$//')
        count=$(grep -E 'RACECHECK SUMMARY: [0-9]+ hazards? displayed' "$log" | tail -n 1 | sed -E 's/^.*SUMMARY: ([0-9]+).*$/\1/')
      else
        where=$(grep -E '^=========     at ' "$log" | head -n 1 | sed -E 's/^=========     at //; s/\+0x[0-9a-f]+.*$//')
        count=$(grep -E '^========= ERROR SUMMARY: [0-9]+ errors?' "$log" | tail -n 1 | sed -E 's/^.*SUMMARY: ([0-9]+).*$/\1/')
      fi
      where=$(strip_args "${where#void }")
      if [ "$src" -eq 124 ] || [ "$src" -eq 137 ]; then
        found+=("$tool timed out after $sanitize_timeout s")
      elif [ "$src" -eq 99 ] && [ $tool = racecheck ]; then
        found+=("RACE (racecheck: ${count:-some} hazards${where:+, first in $where})")
      elif [ "$src" -eq 99 ]; then
        what=$(grep -E '^========= [A-Z]' "$log" | grep -v -E 'COMPUTE-SANITIZER|SUMMARY' | head -n 1 | sed 's/^========= //')
        found+=("MEMCHECK (memcheck: ${count:-some} errors${what:+, first: $what}${where:+ in $where})")
      fi
      if ! wait_gpu_free; then
        found+=("left the GPU in use after $tool ($gpu_busy)")
        stop_reason="the GPU was still in use after the cell of $label"; break
      fi
    done
    if [ ${#found[@]} -gt 0 ]; then
      sanitizer=$(IFS=';'; echo "${found[*]}"); sanitizer=${sanitizer//;/; }
      if [ -z "$finding" ] && [ "$passed" = "$total" ]; then finding="passed, $sanitizer"; else add "$sanitizer"; fi
    fi
  fi
  if [ $as_root -eq 1 ] && [ $no_sandbox -eq 0 ] && pgrep -u "$cell_uid" > /dev/null; then
    add "a process of this cell outlived it"; stop_reason="a process of the cell of $label outlived it"
  fi
  printf 'run_s=%s\njudge_s=%s\n' "$(seconds_since "$t0" "$t1")" "$(seconds_since "$t1" "$t2")" >> "$dir/timing.txt"
  finish_cell "$dir" yes "${passed:-0}" "$total" "$(shorten "$finding")"
  echo "$me: $label: ${passed:-0} of ${total:-?} test cases passed${finding:+ — $finding}"
done

# ================================================================= the time it took
median_of() {  # median_of KEY: the median of KEY=seconds over the cells' timing.txt
  cat "$cells_dir"/*/timing.txt 2> /dev/null | sed -n "s/^$1=//p" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
timing="Time per cell (median of $(cat "$cells_dir"/*/timing.txt 2> /dev/null | grep -c '^run_s=') cells run): compile $(median_of compile_s) s, run $(median_of run_s) s, judge $(median_of judge_s) s"
[ $no_sandbox -eq 0 ] && timing="$timing; an empty sandbox starts in $sandbox_s s"
echo "$timing." >> "$cells_dir/run-info.txt"

# ================================================================= the gradebook
write_gradebook "$cells_dir" "$out"; status=$?
echo
cat -- "$out/gradebook.md"
echo
echo "$me: gradebook in $out/gradebook.csv and $out/gradebook.md"
exit $status
