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
#      check (grading/transcript.hpp); nothing it prints is believed;
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
#   --hidden-shapes FILE extra shapes for every lesson's checks (format: grading/transcript.hpp;
#                        keep the file away from students)
#   --scratch-mib N, --file-mib N, --output-kib N, --procs N
#                        a cell's limits: its /tmp and /dev/shm (default 256 MiB each), any file it
#                        writes (1024 MiB), what it prints (1024 KiB kept, the rest counted),
#                        processes (64)
#   --arch LIST          CMAKE_CUDA_ARCHITECTURES (default: the GPU's own, via nvidia-smi)
#   --jobs N             cells compiled at the same time (default: half the CPU cores); a cell's
#                        checks start as soon as it is compiled, while the others compile
#   --share N            N cells' checks at the same time on each GPU (default 1: one at a time).
#                        Grading checks results, not speed, so cells can share a GPU; but a
#                        classmate's cell could starve a shared one of memory or time, so every
#                        cell that did not pass everything is graded again, alone on its GPU, and
#                        that is its grade: the gradebook is the one --share 1 writes. Needs root
#                        and the sandbox (a cell's leftover processes are then found by its user id)
#   --no-sandbox         grade without bubblewrap (said in the gradebook): a submission can then
#                        read and write whatever the instructor can
#   --host-only          run the host test cases only, needing no GPU: for testing the grader
#   -DNAME=VALUE         passed to every cmake configure (e.g. -DCMAKE_PREFIX_PATH=/opt/doctest)
#   --gradebook-from CELLS   grade nothing: write the gradebook of an earlier run's cell folder
#                        (DIR/cells) into --out; needs no GPU
#   --resume             go on with a run that was stopped (Ctrl-C, TERM, a lost machine), same
#                        SUBMISSIONS and --out: cells with a result are neither regraded nor
#                        recompiled; the seed is the first run's (kept in DIR/cells/seed), and
#                        options that change a grade must be the same
#   --weights FILE       lines "NN_name WEIGHT" (WEIGHT >= 0, default 1; # starts a comment line)
#                        for DIR/scores.csv; also with --gradebook-from
#   --gpus all|I,J,...   one cell on each of these GPUs at a time (all: those in
#                        CUDA_VISIBLE_DEVICES when set, else every GPU nvidia-smi lists); a cell's
#                        sandbox gets its GPU's device node alone and CUDA_VISIBLE_DEVICES=its UUID
#   --slurm              write (not run) a Slurm job array that grades the class into --out (on a
#                        filesystem every node sees) and a gradebook job that runs after it:
#                        DIR/slurm/grade-array.sbatch, gradebook.sbatch, submit.sh. Needs no GPU.
#     --partition P, --account A   their #SBATCH lines
#     --gpus-per-task N  GPUs per task (default 1; 0 asks for none); more than 1: --gpus all
#     --tasks N          tasks in the array (default: one per 20 students)
#     --submit           also run submit.sh (sbatch)
#   --slice K/N          (what a Slurm task runs, with --resume) grade students K, K+N, K+2N, ...
#                        of the plan --slurm made; writes no gradebook
#   --                   end of options (for a SUBMISSIONS folder whose name starts with -)
#
# Gradebook (CSV and Markdown, one row per cell, sorted by student then lesson): student, lesson,
# compiled, checks passed, checks total (doctest test cases of the lesson's check, as the judge
# counted them), first failure or finding (empty when the cell is fully right). Folders in a
# student's submission that are not lesson folders, lesson folders without main.cu and empty
# submissions get a row too, and so does a cell that was never graded (a stopped run, a failed or
# lost Slurm task: "not graded: ...", with the reason when a task left one).
# Exports: DIR/scores.csv (student, score, max score, comment: for an LMS gradebook import) and
# DIR/feedback/STUDENT.md (that student's rows). A cell scores its lesson's weight when it passed
# (compiled, every test case passed, no finding), else 0; the max is the sum of all lessons' weights.
# Progress: a line per graded cell, with the count, the time so far and an estimate of the time
# left, printed and written to DIR/progress.log (a Slurm task: DIR/progress-slice-K.log).
# Exit: 0 every cell passed; 1 a cell did not (or the grader could not build the course);
# 2 bad command line; 3 no usable GPU, or no usable sandbox (nothing is graded).
set -uo pipefail
export LC_ALL=C  # byte order for sorting; names are copied as bytes, never interpreted

me=grade.sh
repo=$(cd -- "$(dirname -- "$0")/.." && pwd -P)

# die CODE MESSAGE: says why nothing (more) is graded and exits; a Slurm task (--slice K/N) also
# leaves the reason where the gradebook job finds it, for every cell of its slice.
die() {
  echo "$me: $2" >&2
  if [ -n "${slice:-}" ] && [ -f "${out:-}/cells/.made-by-grade.sh" ]; then
    printf 'task %s on %s: %s\n' "$slice" "$(hostname)" "$2" > "$out/cells/.slice-${slice%/*}.why"
  fi
  if [ "$BASHPID" = "$$" ] && declare -F descendants > /dev/null; then  # what runs in the background
    local p; p=$(descendants $$); [ -n "$p" ] && kill -KILL $p 2> /dev/null  # (the judges' build, the compiling)
  fi
  exit "$1"
}
usage_error() { echo "$me: $*; see --help" >&2; exit 2; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]; }
abs_path() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
seconds_since() { awk -v a="$1" -v b="${2:-$(date +%s.%N)}" 'BEGIN { printf "%.2f", b - a }'; }

# ================================================================= the gradebook writer
# A cell's result.txt holds one key=value per line: student, lesson, compiled (yes / no / -),
# passed, total, finding. A cell passed when it compiled, passed == total > 0 and finding is
# empty (is_pass). Rows come out in the order of the cell folders' names.

is_pass() { [ "$1" = yes ] && [[ $3 =~ ^[0-9]+$ ]] && [ "$3" -gt 0 ] && [ "$2" = "$3" ] && [ -z "$4" ]; }  # COMPILED PASSED TOTAL FINDING

csv_field() {  # RFC 4180: quote a field holding a comma, quote or line break; double its quotes
  local s=$1
  if [[ $s == *[,\"$'\n\r']* || $s == " "* || $s == *" " ]]; then s="\"${s//\"/\"\"}\""; fi
  printf '%s' "$s"
}
md_field() {  # Markdown table cell: escape what would end the cell or start markup (an HTML tag,
              # emphasis, code); "transpose_tiled<(int)32>" stays as it is
  printf '%s' "$1" | sed -E 's/\\/\\\\/g; s/\|/\\|/g; s/<([A-Za-z\/!?])/\\<\1/g; s/\*/\\*/g; s/`/\\`/g'
}

# A cell folder holds identity.txt (student, lesson) from the start and result.txt once graded;
# a cell with identity.txt but no result.txt was never finished (an interrupted run, a failed or
# lost Slurm task) and gets a row that says so, never a gap.
#
# Exports beside the gradebook: scores.csv, one row per student (student, score, max score,
# comment) for an LMS gradebook import, and feedback/STUDENT.md, that student's rows. A cell
# earns its lesson's weight (--weights; 1 unless the file says otherwise) when it passed:
# compiled, every test case passed, no finding; otherwise 0 (a race that passed by luck is not a
# pass). The max score is the sum of the weights of all the course's lessons, submitted or not.

lesson_weight() {  # lesson_weight LESSON: its weight from the --weights file (default 1)
  local w=${weights[$1]-}
  printf '%s' "${w:-1}"
}
# read_weights FILE: lines "NN_name weight" (# comments, blank lines allowed) into `weights`
read_weights() {
  local file=$1 name w rest n=0
  while read -r name w rest || [ -n "$name" ]; do
    n=$((n + 1))
    case $name in ''|'#'*) continue ;; esac
    is_lesson "$name" || usage_error "--weights $file, line $n: '$name' is not a lesson (one of: $lesson_list)"
    [[ $w =~ ^[0-9]+(\.[0-9]+)?$ ]] && [ -z "$rest" ] || usage_error "--weights $file, line $n: expected 'NN_name WEIGHT' with WEIGHT a number >= 0, got '$name $w $rest'"
    weights[$name]=$w
  done < "$file"
}
num() { awk -v x="$1" 'BEGIN { if (x == int(x)) printf "%d", x; else printf "%.2f", x }'; }  # 3, 2.50

# write_student STUDENT SCORE PASSEDLIST FAILEDLIST ROWS: one row of scores.csv and the feedback file
write_student() {
  local student=$1 score=$2 passed_l=$3 failed_l=$4 rows=$5 missing="" l comment fb
  for l in "${lessons[@]}"; do
    [ "$(lesson_weight "$l")" != 0 ] || continue
    case " $passed_l $failed_l " in *" $l "*) ;; *) missing="$missing $l" ;; esac
  done
  comment="passed:${passed_l:- none}"
  [ -n "$failed_l" ] && comment="$comment; not passed:$failed_l"
  [ -n "$missing" ] && comment="$comment; not submitted:$missing"
  comment="$comment; details in feedback/$student.md"
  printf '%s,%s,%s,%s\n' "$(csv_field "$student")" "$(num "$score")" "$(num "$max_score")" "$(csv_field "$comment")" >> "$scores"
  fb=$feedback/$student.md
  { printf '# Feedback for %s\n\nScore: %s of %s (a lesson counts when it compiled, passed every test case and had no finding).\n\n' \
      "$(md_field "$student")" "$(num "$score")" "$(num "$max_score")"
    printf '%s\n' "| lesson | compiled | checks passed | checks total | first failure or sanitizer finding |" "| --- | --- | --- | --- | --- |"
    printf '%s' "$rows"
    [ -n "$missing" ] && printf '\nNot submitted:%s\n' "$missing"
  } > "$fb"
}

# write_gradebook CELLS OUTDIR: writes OUTDIR/gradebook.csv and .md, OUTDIR/scores.csv and
# OUTDIR/feedback/; returns 0 if every cell passed.
write_gradebook() {
  local cells=$1 outdir=$2 csv md f key value failed=0 ncells=0 npassed=0 nungraded=0 d ok
  local student lesson compiled passed total finding scores feedback slice why
  local -A st_score=() st_passed=() st_failed=() st_rows=()
  local st_order=()
  csv=$outdir/gradebook.csv md=$outdir/gradebook.md scores=$outdir/scores.csv feedback=$outdir/feedback
  mkdir -p -- "$outdir" || return 1
  rm -rf -- "$feedback"; mkdir -p -- "$feedback" || return 1
  max_score=0
  for l in "${lessons[@]}"; do max_score=$(awk -v a="$max_score" -v b="$(lesson_weight "$l")" 'BEGIN { print a + b }'); done
  printf '%s\n' "student,lesson,compiled,checks passed,checks total,first failure or sanitizer finding" > "$csv"
  printf '%s\n' "| student | lesson | compiled | checks passed | checks total | first failure or sanitizer finding |" \
                "| --- | --- | --- | --- | --- | --- |" > "$md"
  printf '%s\n' "student,score,max score,comment" > "$scores"
  for d in "$cells"/*/; do
    f=$d/result.txt
    [ -f "$f" ] || f=$d/identity.txt
    [ -f "$f" ] || continue
    student="" lesson="" compiled="" passed="" total="" finding="" slice=""
    while IFS= read -r line || [ -n "$line" ]; do
      key=${line%%=*} value=${line#*=}
      case $key in
        student) student=$value ;; lesson) lesson=$value ;; compiled) compiled=$value ;;
        passed) passed=$value ;; total) total=$value ;; finding) finding=$value ;; slice) slice=$value ;;
      esac
    done < "$f"
    if [ ! -f "$d/result.txt" ]; then  # a Slurm task that ended early left its reason in .slice-K.why
      compiled=- nungraded=$((nungraded + 1)) why=""
      [ -n "$slice" ] && [ -f "$cells/.slice-$slice.why" ] && why=$(head -c 400 "$cells/.slice-$slice.why" | tr '\n' ' ')
      finding="not graded: ${why:-no result: its run was interrupted, or its Slurm task was lost}; grade again with --resume"
    fi
    ncells=$((ncells + 1)) ok=0
    if is_pass "$compiled" "$passed" "$total" "$finding"; then
      npassed=$((npassed + 1)) ok=1
    else
      failed=1
      [ -n "$finding" ] || finding="${passed:-0} of ${total:-0} test cases passed"  # never a blank failure
    fi
    [ -n "${st_score[$student]+x}" ] || { st_order+=("$student"); st_score[$student]=0; }
    if is_lesson "$lesson"; then
      if [ $ok -eq 1 ]; then
        st_score[$student]=$(awk -v a="${st_score[$student]}" -v b="$(lesson_weight "$lesson")" 'BEGIN { print a + b }')
        st_passed[$student]="${st_passed[$student]-} $lesson"
      else st_failed[$student]="${st_failed[$student]-} $lesson"; fi
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
    local row="|"
    for field in "$lesson" "$compiled" "$passed" "$total" "$finding"; do row="$row $(md_field "$field") |"; done
    st_rows[$student]="${st_rows[$student]-}$row"$'\n'
  done
  for student in ${st_order[@]+"${st_order[@]}"}; do
    write_student "$student" "${st_score[$student]}" "${st_passed[$student]-}" "${st_failed[$student]-}" "${st_rows[$student]}"
  done
  printf '\n%d cells: %d passed, %d did not.\n' "$ncells" "$npassed" "$((ncells - npassed))" >> "$md"
  [ $nungraded -gt 0 ] && printf '%d of them were never graded (no result); grade again with --resume.\n' "$nungraded" >> "$md"
  [ -f "$cells/run-info.txt" ] && { printf '\n'; cat -- "$cells/run-info.txt"; } >> "$md"  # sandbox, seed
  [ "$ncells" -gt 0 ] || { echo "$me: no cell results (*/result.txt) in $cells" >&2; return 1; }
  return $failed
}

# ================================================================= command line
submissions="" out="" timeout_s=60 sanitize=0 sanitize_timeout=600 arch="" jobs="" from=""
seed="" hidden="" no_sandbox=0 host_only=0 resume=0 weights_file="" gpus_arg="" slice="" share=1
slurm=0 partition="" account="" gpus_per_task=1 tasks="" submit=0
scratch_mib=256 file_mib=1024 output_kib=1024 procs=64
cmake_defs=() passed_on=()  # passed_on: the options a Slurm task repeats
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage_error "--out needs a folder"; out=$2; shift 2 ;;
    --timeout) is_uint "${2-}" || usage_error "--timeout needs a whole number of seconds > 0"; timeout_s=$2; passed_on+=("$1" "$2"); shift 2 ;;
    --sanitize) sanitize=1; passed_on+=("$1"); shift ;;
    --sanitize-timeout) is_uint "${2-}" || usage_error "--sanitize-timeout needs a whole number of seconds > 0"
                        sanitize_timeout=$2; passed_on+=("$1" "$2"); shift 2 ;;
    --seed) [[ ${2-} =~ ^[0-9]{1,10}$ ]] && [ "$2" -le 4294967295 ] || usage_error "--seed needs a whole number from 0 to 4294967295"
            seed=$2; shift 2 ;;
    --hidden-shapes) [ -f "${2-}" ] && [ -r "$2" ] || usage_error "--hidden-shapes needs a readable file"
                     hidden=$(cd -- "$(dirname -- "$2")" && pwd -P)/$(basename -- "$2"); passed_on+=("$1" "$hidden"); shift 2 ;;
    --arch) [ -n "${2-}" ] || usage_error "--arch needs a list, e.g. 90 or 80;90"; arch=$2; passed_on+=("$1" "$2"); shift 2 ;;
    --jobs) is_uint "${2-}" || usage_error "--jobs needs a number > 0"; jobs=$2; passed_on+=("$1" "$2"); shift 2 ;;
    --share) is_uint "${2-}" || usage_error "--share needs a number of cells > 0"; share=$2; passed_on+=("$1" "$2"); shift 2 ;;
    --no-sandbox) no_sandbox=1; passed_on+=("$1"); shift ;;
    --host-only) host_only=1; passed_on+=("$1"); shift ;;
    --scratch-mib) is_uint "${2-}" || usage_error "--scratch-mib needs a number > 0"; scratch_mib=$2; passed_on+=("$1" "$2"); shift 2 ;;
    --file-mib) is_uint "${2-}" || usage_error "--file-mib needs a number > 0"; file_mib=$2; passed_on+=("$1" "$2"); shift 2 ;;
    --output-kib) is_uint "${2-}" || usage_error "--output-kib needs a number > 0"; output_kib=$2; passed_on+=("$1" "$2"); shift 2 ;;
    --procs) is_uint "${2-}" || usage_error "--procs needs a number > 0"; procs=$2; passed_on+=("$1" "$2"); shift 2 ;;
    --gradebook-from) [ -n "${2-}" ] || usage_error "--gradebook-from needs a folder"; from=$2; shift 2 ;;
    --resume) resume=1; shift ;;
    --weights) [ -f "${2-}" ] && [ -r "$2" ] || usage_error "--weights needs a readable file (lines 'NN_name weight')"
               weights_file=$(cd -- "$(dirname -- "$2")" && pwd -P)/$(basename -- "$2"); shift 2 ;;
    --gpus) [[ ${2-} == all || ${2-} =~ ^[0-9]+(,[0-9]+)*$ ]] || usage_error "--gpus needs 'all' or GPU indexes like 0,1,3"
            gpus_arg=$2; shift 2 ;;
    --slice) [[ ${2-} =~ ^([0-9]+)/([0-9]+)$ ]] && [ "${BASH_REMATCH[2]}" -gt 0 ] && [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] ||
               usage_error "--slice needs K/N with 0 <= K < N"
             slice=$2; shift 2 ;;
    --slurm) slurm=1; shift ;;
    --partition) [ -n "${2-}" ] || usage_error "--partition needs a name"; partition=$2; shift 2 ;;
    --account) [ -n "${2-}" ] || usage_error "--account needs a name"; account=$2; shift 2 ;;
    --gpus-per-task) [[ ${2-} =~ ^[0-9]+$ ]] || usage_error "--gpus-per-task needs a number (0: ask Slurm for no GPU)"; gpus_per_task=$2; shift 2 ;;
    --tasks) is_uint "${2-}" || usage_error "--tasks needs a number > 0"; tasks=$2; shift 2 ;;
    --submit) submit=1; shift ;;
    -D?*) cmake_defs+=("$1"); passed_on+=("$1"); shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; [ $# -le 1 ] || usage_error "one SUBMISSIONS folder, not $#"; [ $# -eq 0 ] || submissions=$1; shift $# ;;
    -*) usage_error "unknown option '$1'" ;;
    *) [ -z "$submissions" ] || usage_error "one SUBMISSIONS folder, not two ('$submissions', '$1')"
       submissions=$1; shift ;;
  esac
done
out=$(abs_path "${out:-$repo/build-grade}")
if [ $slurm -eq 0 ]; then
  [ -z "$partition$account$tasks" ] && [ $submit -eq 0 ] && [ "$gpus_per_task" -eq 1 ] ||
    usage_error "--partition, --account, --gpus-per-task, --tasks and --submit go with --slurm"
else
  [ -z "$slice" ] && [ -z "$gpus_arg" ] || usage_error "--slurm chooses --slice and --gpus itself"
  [ $resume -eq 0 ] || usage_error "--slurm always resumes (its tasks grade only cells without a result): leave out --resume"
fi
[ -z "$slice" ] || [ $resume -eq 1 ] || usage_error "--slice grades a slice of a plan made before (by --slurm): add --resume"

lessons=()
for d in "$repo"/lessons/[0-9][0-9]_*/; do
  [ -f "$d/check.cu" ] && lessons+=("$(basename -- "$d")")
done
lesson_list=$(IFS=,; echo "${lessons[*]}"); lesson_list=${lesson_list//,/, }
is_lesson() { local l; for l in "${lessons[@]}"; do [ "$l" = "$1" ] && return 0; done; return 1; }
declare -A weights=()
[ -z "$weights_file" ] || read_weights "$weights_file"

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
if [ $host_only -eq 0 ] && [ $slurm -eq 0 ]; then
  if ! command -v nvidia-smi > /dev/null 2>&1; then
    die 3 "no usable GPU: nvidia-smi not found; grading runs the GPU checks, so run it on a machine with an NVIDIA GPU (nothing graded)"
  fi
  if ! smi=$(nvidia-smi -L 2>&1) || ! grep -q '^GPU [0-9]' <<< "$smi"; then
    die 3 "no usable GPU: nvidia-smi -L says '$(head -n 1 <<< "$smi")'; grading runs the GPU checks, so run it on a machine with an NVIDIA GPU (nothing graded)"
  fi
fi
# --gpus: one worker per GPU, each with the GPU's index, UUID (what CUDA_VISIBLE_DEVICES names in
# its cells) and minor number (its /dev/nvidiaN, the one device node of a GPU its sandbox gets).
# "all" is the GPUs in CUDA_VISIBLE_DEVICES when that is set (what Slurm gives a job), else every
# GPU nvidia-smi lists. (The test of this plumbing without a GPU puts a stand-in nvidia-smi on
# PATH: tests/grading/test_gpus.sh; it checks where cells ran, never a GPU result.)
gpu_index=() gpu_uuid=() gpu_minor=()
if [ -n "$gpus_arg" ]; then
  # (nvidia-smi has no query field for the minor number: the driver's /proc entry of the GPU's PCI
  # address says it, "Device Minor:"; where that cannot be read, the index stands in for it)
  listed=$(nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader 2> /dev/null | tr -d ' ') ||
    die 3 "--gpus: nvidia-smi cannot list the GPUs (nothing graded)"
  listed=$(while IFS=, read -r i u b; do
      bus=${b,,}; bus=${bus#"${bus%????:??:??.?}"}
      m=$(sed -n 's/^Device Minor:[[:space:]]*//p' "/proc/driver/nvidia/gpus/$bus/information" 2> /dev/null)
      printf '%s,%s,%s\n' "$i" "$u" "${m:-$i}"
    done <<< "$listed")
  if [ "$gpus_arg" = all ]; then
    if [ -n "${CUDA_VISIBLE_DEVICES-}" ]; then want=${CUDA_VISIBLE_DEVICES//,/ }; else want=$(cut -d, -f1 <<< "$listed"); fi
  else want=${gpus_arg//,/ }; fi
  for g in $want; do
    line=$(awk -F, -v g="$g" '$1 == g || $2 == g' <<< "$listed" | head -n 1)
    [ -n "$line" ] || usage_error "--gpus: no GPU '$g' (nvidia-smi lists: $(cut -d, -f1 <<< "$listed" | tr '\n' ' '))"
    IFS=, read -r i u m <<< "$line"
    for k in ${gpu_index[@]+"${!gpu_index[@]}"}; do [ "${gpu_index[$k]}" != "$i" ] || usage_error "--gpus: GPU $i given twice"; done
    gpu_index+=("$i") gpu_uuid+=("$u") gpu_minor+=("$m")
  done
  [ ${#gpu_index[@]} -gt 0 ] || usage_error "--gpus: no GPU to grade on"
fi

# ================================================================= the sandbox, before building anything
# Cells run as a user of their own (uid_base + cell number) when grade.sh runs as root: then the
# process limit counts that cell's processes alone, and a cell can read nothing only root may.
# Run as another user, every cell runs as that user and the limit is that user's count + --procs.
as_root=0; [ "$(id -u)" -eq 0 ] && as_root=1
if [ "$share" -gt 1 ] && { [ $as_root -eq 0 ] || [ $no_sandbox -eq 1 ]; }; then
  usage_error "--share needs root and the sandbox: cells that share a GPU are told apart by their own user ids"
fi
# Two grade.sh runs on one machine must not share user ids (each kills its cells' users' processes):
# each run holds one of ten slots (a lock), and its cells' users are 100000 + 10000 * slot + cell.
uid_base=100000
if [ $as_root -eq 1 ] && [ $no_sandbox -eq 0 ] && command -v flock > /dev/null; then
  for slot in 0 1 2 3 4 5 6 7 8 9; do
    exec {slot_fd}> "/tmp/.course-grade-slot-$slot.lock" && flock -n "$slot_fd" && { uid_base=$((100000 + 10000 * slot)); break; }
    exec {slot_fd}>&-; slot_fd=""
  done
  if [ -z "${slot_fd-}" ]; then die 1 "ten grade.sh runs are already going on this machine; wait for one to end"; fi
fi
sandbox_version="none"
if [ $no_sandbox -eq 0 ] && [ $slurm -eq 0 ]; then
  if ! command -v bwrap > /dev/null 2>&1; then
    die 3 "no sandbox: bubblewrap (bwrap) not found; install it (Debian/Ubuntu: apt install bubblewrap), or grade without one with --no-sandbox (nothing graded)"
  fi
  if [ $as_root -eq 1 ] && ! command -v setpriv > /dev/null 2>&1; then
    die 3 "no sandbox: setpriv (util-linux) not found, needed to run cells as users of their own (nothing graded)"
  fi
  probe_pre=(); [ $as_root -eq 1 ] && probe_pre=(setpriv --reuid="$uid_base" --regid="$uid_base" --clear-groups)
  if ! why=$("${probe_pre[@]}" bwrap --unshare-all --die-with-parent --ro-bind / / --proc /proc --dev /dev true 2>&1); then
    die 3 "no sandbox: bubblewrap cannot create its namespaces here ($(head -n 1 <<< "$why")); user namespaces may be off (sysctl kernel.unprivileged_userns_clone, AppArmor, a container), or grade without one with --no-sandbox (nothing graded)"
  fi
  sandbox_version=$(bwrap --version 2>/dev/null | head -n 1)
fi
for tool in cmake timeout prlimit; do
  [ $slurm -eq 0 ] || break
  command -v "$tool" > /dev/null || { die 1 "'$tool' not found"; }
done
if [ $slurm -eq 0 ] && [ $sanitize -eq 1 ] && ! command -v compute-sanitizer > /dev/null; then
  die 1 "--sanitize needs compute-sanitizer (part of the CUDA toolkit) on PATH"
fi
if [ -z "$jobs" ]; then
  jobs=$(( $(nproc 2> /dev/null || echo 2) / 2 )); [ "$jobs" -ge 1 ] || jobs=1
fi

# ================================================================= the cells
clean() { local s=$1; printf '%s' "${s//[[:cntrl:]]/ }"; }  # one line per value in result.txt

# The plan: every cell gets a folder, numbered in the order of the students' and lessons' names,
# with identity.txt; the same SUBMISSIONS always gives the same numbers, so that --resume (and a
# Slurm task, which grades one slice of the students) finds its cells again. The seed and the
# options that change a grade are kept in the cells folder: every cell of one gradebook is graded
# with the same ones.
cells_dir=$out/cells
marker=$cells_dir/.made-by-grade.sh  # so that a second run deletes only what a first one made
if [ -e "$cells_dir" ] && [ ! -f "$marker" ]; then
  echo "$me: $cells_dir exists and was not made by $me; give another --out" >&2; exit 2
fi
case "$out/" in "$submissions/"*) usage_error "--out must not be inside SUBMISSIONS (a sandbox would see it)" ;; esac
case "$submissions/" in "$out/"*) usage_error "SUBMISSIONS must not be inside --out" ;; esac
options="submissions=$submissions host_only=$host_only sanitize=$sanitize timeout=$timeout_s sanitize_timeout=$sanitize_timeout no_sandbox=$no_sandbox hidden=${hidden:+$(cksum < "$hidden" | cut -d' ' -f1)}"
if [ $resume -eq 1 ] || { [ $slurm -eq 1 ] && [ -f "$marker" ]; }; then  # keep what is there
  [ -f "$marker" ] || usage_error "--resume: nothing to resume in $out (no cells folder made by $me)"
  stored=$(cat -- "$cells_dir/seed" 2> /dev/null) || usage_error "--resume: $cells_dir/seed is missing; grade into a new --out"
  [ -z "$seed" ] || [ "$seed" = "$stored" ] || usage_error "--resume: this gradebook was graded with --seed $stored, not $seed"
  seed=$stored
  [ "$(cat -- "$cells_dir/options" 2> /dev/null)" = "$options" ] ||
    usage_error "--resume: the options that change a grade differ from the first run's ($(cat -- "$cells_dir/options" 2> /dev/null)); resume with the same ones, or grade into a new --out"
  fresh=0
else
  rm -rf -- "$cells_dir" "$out/gradebook.csv" "$out/gradebook.md" "$out/scores.csv" "$out/feedback" "$out/course-view" "$out/progress.log"
  mkdir -p -- "$cells_dir" && : > "$marker" || exit 1
  [ -n "$seed" ] || seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
  printf '%s\n' "$seed" > "$cells_dir/seed" && printf '%s\n' "$options" > "$cells_dir/options" || exit 1
  fresh=1
fi
chmod 755 "$out" "$cells_dir"
if [ $slurm -eq 0 ] && [ $no_sandbox -eq 0 ] && [ $as_root -eq 1 ] && ! setpriv --reuid="$uid_base" --regid="$uid_base" --clear-groups test -x "$cells_dir"; then
  die 3 "no sandbox: a cell could not reach $out (cells run as users of their own); open every folder above it to other users (chmod o+x), or give another --out (nothing graded)"
fi
slice_k=""; slice_n=""
[ -z "$slice" ] || { slice_k=${slice%/*}; slice_n=${slice#*/}; rm -f -- "$cells_dir/.slice-$slice_k.why"; }
nstudents=0
if [ $slurm -eq 1 ] && [ -z "$tasks" ]; then  # one Slurm task per 20 students
  for sdir in "$submissions"/*; do [ -e "$sdir" ] && nstudents=$((nstudents + 1)); done
  tasks=$(( (nstudents + 19) / 20 )); [ "$tasks" -ge 1 ] || tasks=1
  nstudents=0
fi
[ $slurm -eq 1 ] && slice_n=$tasks
ncell=0 nskipped=0
cell_dirs=() cell_sources=() cell_lessons=()
# new_cell STUDENT LESSON [SOURCE]: the next cell folder; with SOURCE, a cell to build and run
# (unless it is another slice's, or --resume finds its result). Sets last_cell ("" when the cell
# is not this run's to write).
new_cell() {
  ncell=$((ncell + 1))
  local dir id; dir=$cells_dir/$(printf '%04d' "$ncell")
  id=$(printf 'student=%s\nlesson=%s' "$(clean "$1")" "$(clean "$2")")
  if [ -f "$dir/identity.txt" ]; then
    [ "$(head -n 2 -- "$dir/identity.txt")" = "$id" ] ||
      usage_error "--resume: SUBMISSIONS changed since the first run (cell $(basename -- "$dir") was '$(head -n 2 -- "$dir/identity.txt" | cut -d= -f2- | tr '\n' '/')', now '$1/$2'); grade into a new --out"
  else
    [ -z "$slice_n" ] || id="$id"$'\n'"slice=$(( (nstudents - 1) % slice_n ))"
    mkdir -p -- "$dir" && printf '%s\n' "$id" > "$dir/.identity.tmp" &&
      mv -f -- "$dir/.identity.tmp" "$dir/identity.txt"
  fi
  last_cell=$dir
  if [ -n "$slice_k" ] && [ $(( (nstudents - 1) % slice_n )) -ne "$slice_k" ]; then last_cell=""; return; fi
  [ $slurm -eq 1 ] && return  # the plan only: the tasks grade
  if [ -f "$dir/result.txt" ] && ! grep -q '^finding=not graded: ' "$dir/result.txt"; then
    nskipped=$((nskipped + 1)); last_cell=""; return  # graded before (--resume)
  fi
  if [ $# -ge 3 ]; then
    rm -rf -- "$dir/box" "$dir/result.txt"
    cell_dirs+=("$dir") cell_sources+=("$3") cell_lessons+=("$2")
  fi
}
finish_cell() {  # finish_cell DIR COMPILED PASSED TOTAL FINDING: result.txt, whole or not at all
  [ -n "$1" ] || return 0
  { cat -- "$1/identity.txt"
    printf 'compiled=%s\npassed=%s\ntotal=%s\nfinding=%s\n' "$2" "$3" "$4" "$(clean "$5")"; } > "$1/.result.tmp" &&
    mv -f -- "$1/.result.tmp" "$1/result.txt"
}

shopt -s nullglob
for sdir in "$submissions"/*; do
  student=$(basename -- "$sdir")
  nstudents=$((nstudents + 1))
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
[ -z "$slice_n" ] || [ "$slice_n" -le "$nstudents" ] || [ $slurm -eq 0 ] || tasks=$nstudents slice_n=$nstudents

# ================================================================= --slurm: write the job scripts
# A job array (task K grades the students K, K + N, K + 2N, ... into the shared cells folder, with
# --resume --slice K/N, on the GPUs Slurm gives it) and a gradebook job that runs after the whole
# array, however its tasks ended (afterany): a cell without a result gets a row that says why.
if [ $slurm -eq 1 ]; then
  sdir=$out/slurm; mkdir -p -- "$sdir" || exit 1
  q() { printf '%q' "$1"; }
  task_args=("$submissions" --out "$out" --resume --seed "$seed" ${passed_on[@]+"${passed_on[@]}"})
  [ "$gpus_per_task" -gt 1 ] && task_args+=(--gpus all)
  header() {  # header NAME: the #SBATCH lines both jobs share
    printf '#!/bin/bash\n# Written by grade.sh --slurm; submit both jobs with: bash %s\n' "$(q "$sdir/submit.sh")"
    printf '#SBATCH --job-name=%s\n#SBATCH --ntasks=1\n' "$1"
    [ -n "$partition" ] && printf '#SBATCH --partition=%s\n' "$partition"
    [ -n "$account" ] && printf '#SBATCH --account=%s\n' "$account"
    return 0
  }
  { header grade-cells
    printf '#SBATCH --array=0-%d\n#SBATCH --output=%s/task-%%a.log\n' $((tasks - 1)) "$sdir"
    [ "$gpus_per_task" -gt 0 ] && printf '#SBATCH --gpus-per-task=%d\n' "$gpus_per_task"
    printf '# exit 0 and 1 (a cell did not pass) are a finished task; anything else is a failed one\n'
    printf '%s' "$(q "$repo/scripts/grade.sh")"; for a in "${task_args[@]}"; do printf ' %s' "$(q "$a")"; done
    printf ' --slice "$SLURM_ARRAY_TASK_ID/%d"\nrc=$?; [ $rc -le 1 ] || exit $rc\n' "$tasks"
  } > "$sdir/grade-array.sbatch"
  { header grade-gradebook
    printf '#SBATCH --output=%s/gradebook.log\n' "$sdir"
    printf '%s --gradebook-from %s --out %s' "$(q "$repo/scripts/grade.sh")" "$(q "$cells_dir")" "$(q "$out")"
    [ -n "$weights_file" ] && printf ' --weights %s' "$(q "$weights_file")"
    printf '\nrc=$?; [ $rc -le 1 ] || exit $rc\n'
  } > "$sdir/gradebook.sbatch"
  { printf '#!/bin/bash\n# Submits the grading array, then the gradebook job that waits for all of it.\nset -e\n'
    printf 'array=$(sbatch --parsable %s)\narray=${array%%%%;*}\n' "$(q "$sdir/grade-array.sbatch")"
    printf 'book=$(sbatch --parsable --dependency=afterany:$array %s)\nbook=${book%%%%;*}\n' "$(q "$sdir/gradebook.sbatch")"
    printf 'echo "submitted: grading job array $array (%d tasks), then gradebook job $book; the gradebook will be in %s"\n' "$tasks" "$(q "$out")/gradebook.md"
  } > "$sdir/submit.sh"
  echo "Inputs drawn with --seed $seed${hidden:+, with hidden shapes}." > "$cells_dir/run-info.txt"
  [ $host_only -eq 1 ] && echo "Host test cases only (--host-only): no GPU check was run." >> "$cells_dir/run-info.txt"
  echo "Graded on a Slurm cluster: $tasks tasks; their logs are in $sdir." >> "$cells_dir/run-info.txt"
  echo "$me: $ncell cells of $nstudents students, in a Slurm job array of $tasks task(s): wrote $sdir/grade-array.sbatch, $sdir/gradebook.sbatch and $sdir/submit.sh"
  if [ $submit -eq 1 ]; then
    command -v sbatch > /dev/null || die 1 "--submit: sbatch not found (submit later with: bash $sdir/submit.sh)"
    bash "$sdir/submit.sh" || die 1 "--submit: sbatch refused the jobs (see above)"
  else
    echo "$me: submit them with: bash $(q "$sdir/submit.sh")"
  fi
  exit 0
fi

echo "$me: $ncell cells (${#cell_dirs[@]} to build$([ $nskipped -eq 0 ] || echo ", $nskipped graded before")) from $submissions; everything goes to $out"
{ if [ $fresh -eq 0 ]; then echo "Resumed on $(hostname)${slice:+ as Slurm task $slice}: ${#cell_dirs[@]} cells graded in that run."; fi
  if [ $no_sandbox -eq 1 ]; then echo "Graded WITHOUT a sandbox (--no-sandbox): every submission could read and write what the instructor can."
  else echo "Graded in a sandbox ($sandbox_version); limits: ${timeout_s} s, $procs processes, files $file_mib MiB, scratch $scratch_mib MiB, output $output_kib KiB."; fi
  [ $fresh -eq 1 ] && echo "Inputs drawn with --seed $seed${hidden:+, with hidden shapes}."
  [ $fresh -eq 1 ] && [ $host_only -eq 1 ] && echo "Host test cases only (--host-only): no GPU check was run."
  [ $as_root -eq 1 ] && [ $no_sandbox -eq 0 ] && echo "Cells ran as user ids $((uid_base + 1)) to $((uid_base + ncell))."
} >> "$cells_dir/run-info.txt"

if [ ${#cell_dirs[@]} -eq 0 ]; then  # --resume found every cell graded
  echo "$me: no cell left to grade"
  [ -z "$slice" ] || exit 0
  write_gradebook "$cells_dir" "$out"; status=$?
  cat -- "$out/gradebook.md"
  exit $status
fi

# ================================================================= interruption
# Every cell's processes belong to a user of their own (as root) and to a PID namespace that
# dies with its bubblewrap; on Ctrl-C or TERM end what is running and say where things are.
# Every process this run started is stopped first (so that none starts another) and then killed:
# the background compiling and the workers run each build and check in subshells of their own,
# which ending the jobs alone would leave running, to write into the cells after this run has
# ended (a resumed run would then read a stale "compiled" of this one).
descendants() { local p; for p in $(pgrep -P "$1"); do echo "$p"; descendants "$p"; done; }
on_signal() {
  local pids
  pids=$(descendants $$); [ -n "$pids" ] && kill -STOP $pids 2> /dev/null
  pids=$(descendants $$); [ -n "$pids" ] && kill -KILL $pids 2> /dev/null
  if [ $as_root -eq 1 ] && [ $no_sandbox -eq 0 ]; then  # every process of this run's cells' users
    ps -eo uid=,pid= | awk -v lo=$((uid_base + 1)) -v hi=$((uid_base + 9999)) '$1 >= lo && $1 <= hi { print $2 }' |
      xargs -r kill -KILL 2> /dev/null
  fi
  echo "$me: interrupted; the cells graded so far are kept: grade the rest with the same command and --resume" >&2
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
# A Slurm task builds its own copy (OUT/slice-K/), beside the other tasks on the shared filesystem.
work=$out; [ -z "$slice_k" ] || work=$out/slice-$slice_k
common=$work/common
judge_targets=(course_common course_test_main common_check)  # and the checks of the lessons submitted
for l in $(printf '%s\n' ${cell_lessons[@]+"${cell_lessons[@]}"} | sort -u); do judge_targets+=("${l}_check"); done
common_t0=$(date +%s.%N)
echo "$me: building the course and its judges once (log: $common.log)"
if ! { cmake -S "$repo" -B "$common" "${config[@]}" &&
       cmake --build "$common" --target course_common course_test_main common_check; } > "$common.log" 2>&1; then
  tail -n 20 "$common.log" >&2
  die 1 "could not build the course's common/ (see $common.log); nothing graded"
fi
if [ $host_only -eq 0 ]; then
  probe=$(COURSE_REQUIRE_GPU=1 "$common/common_check" --gpu 2>&1 < /dev/null); rc=$?
  if [ $rc -ne 0 ]; then
    reason=$(grep -m 1 'COURSE_REQUIRE_GPU is set but' <<< "$probe" | sed 's/^.*COURSE_REQUIRE_GPU is set but //; s/^no usable CUDA GPU: //')
    if [ -n "$reason" ]; then
      die 3 "no usable GPU: nvidia-smi lists one, but the CUDA runtime says $reason (nothing graded)"
    fi
    printf '%s\n' "$probe" | tail -n 5 >&2
    die 1 "the check of common/ failed on this GPU (exit $rc); nothing graded"
  fi
fi

# The judges are needed when the first cell is judged, not before: they build while the first cells
# compile (the wait is just before the grading starts).
rm -f -- "$common.judges-rc"
( cmake --build "$common" --target "${judge_targets[@]}" >> "$common.log" 2>&1; echo $? > "$common.judges-rc" ) &
judges_pid=$!

# The two libraries a cell links, apart from the judges (which hold the course's solutions, so no
# sandbox may see them: a runner could run one in its place).
prebuilt=$work/prebuilt
mkdir -p "$prebuilt" && cp -- "$common"/libcourse_common.a "$common"/libcourse_test_main.a "$prebuilt/" || exit 1

# What a sandbox sees of the course: the student pack's tree (no solutions, no grading), which
# builds a lesson's check against any main.cu (-DCOURSE_GRADE_LESSON).
view=$work/course-view
rm -rf -- "$view"
if ! { cmake -DOUT="$work/course-view.tar.gz" -P "$repo/scripts/make_student_pack.cmake" &&
       mkdir -p "$view" && tar -xzf "$work/course-view.tar.gz" -C "$view" --strip-components=1; } > "$work/course-view.log" 2>&1; then
  cat "$work/course-view.log" >&2
  die 1 "could not make the course view for the sandbox (see $work/course-view.log); nothing graded"
fi
rm -f -- "$work/course-view.tar.gz"
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
  if [ $no_sandbox -eq 1 ]; then  # no sandbox: with --gpus, the cell's GPU still the only one it is shown
    sb=(); [ -z "${cell_gpu_uuid-}" ] || sb=(env CUDA_VISIBLE_DEVICES="$cell_gpu_uuid"); return
  fi
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
  for d in /dev/nvidia*; do  # with --gpus: of the GPUs' own nodes (/dev/nvidiaN), the cell's GPU's alone
    [ -e "$d" ] || continue
    [ -n "${cell_gpu_minor-}" ] && [[ $d =~ ^/dev/nvidia[0-9]+$ ]] && [ "$d" != "/dev/nvidia$cell_gpu_minor" ] && continue
    sb+=(--dev-bind "$d" "$d")
  done
  sb+=(--size $((scratch_mib * 1024 * 1024)) --tmpfs /dev/shm --remount-ro /dev)
  sb+=(--size $((scratch_mib * 1024 * 1024)) --tmpfs /tmp)
  for d in "${hide[@]}"; do sb+=(--tmpfs "$d"); done
  sb+=(--ro-bind "$view" "$view" --ro-bind "$prebuilt" "$prebuilt")
  for d in ${extra_ro[@]+"${extra_ro[@]}"}; do sb+=(--ro-bind "$d" "$d"); done
  if [ "$role" = compile ]; then sb+=(--bind "$box" "$box"); else sb+=(--ro-bind "$box" "$box"); fi
  [ -n "$hidden" ] && sb+=(--ro-bind "$hidden" /hidden-shapes.txt)
  for d in "${hide[@]}" /; do sb+=(--remount-ro "$d"); done  # writable: /tmp, /dev/shm (both capped) and a compiling BOX
  for v in "${passenv[@]}"; do
    [ -n "${cell_gpu_uuid-}" ] && [ "$v" = CUDA_VISIBLE_DEVICES ] && continue
    [ -n "${!v-}" ] && sb+=(--setenv "$v" "${!v}")
  done
  [ -n "${cell_gpu_uuid-}" ] && sb+=(--setenv CUDA_VISIBLE_DEVICES "$cell_gpu_uuid")
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
    die 3 "no sandbox: a cell's sandbox cannot start ($(head -n 1 <<< "$why")); every folder above --out must be open to other users (chmod o+x), as a cell runs as a user of its own (nothing graded)"
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
  if [ "$rc" -eq 0 ] && [ -x "$box/build/${lesson}_check" ]; then echo yes; else echo no; fi > "$dir/.compiled.tmp"
  mv -f -- "$dir/.compiled.tmp" "$dir/compiled"  # whole or not at all: a worker waits for this file
  return 0
}
gpu_in_use() {  # prints what holds the GPU (compute processes), nothing when it is free; with --gpus, this worker's GPU
  [ $host_only -eq 1 ] && return 0
  nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader 2> /dev/null |
    grep -v '^$' | { if [ -n "${cell_gpu_uuid-}" ]; then grep -F "$cell_gpu_uuid"; else cat; fi; } | cut -d, -f2- | head -n 3 | tr '\n' ' '
}
wait_gpu_free() {  # up to 20 s
  local i busy
  for i in $(seq 1 40); do busy=$(gpu_in_use); [ -z "$busy" ] && return 0; sleep 0.5; done
  gpu_busy=$busy
  return 1
}
# --share: the cells no longer wait for a free GPU, so it must be free of other programs first.
if [ "$share" -gt 1 ] && [ $host_only -eq 0 ]; then
  for g in $(seq 0 $(( ${#gpu_index[@]} > 0 ? ${#gpu_index[@]} - 1 : 0 ))); do
    cell_gpu_uuid=${gpu_uuid[$g]-}
    wait_gpu_free || die 3 "the GPU${gpu_index[$g]:+ ${gpu_index[$g]}} is in use by another program ($gpu_busy); --share needs it free (nothing graded)"
  done
  cell_gpu_uuid=""
fi
# In the background, in the order the workers take the cells: each cell's checks start as soon as
# it is compiled (a worker waits for its DIR/compiled), while the next cells compile.
for dir in "${cell_dirs[@]}"; do rm -f -- "$dir/compiled"; done  # (--resume: a build of the stopped run)
echo "$me: compiling ${#cell_dirs[@]} cells, $jobs at a time, each in its sandbox; checks start as cells are ready"
compile_all() {
  local i
  # below the checks in priority: they are what keeps the GPUs busy (on two H200s the judges took
  # 21% longer than on one, with 28 compilers beside them), and compiling stays ahead of them
  renice -n 10 -p "$BASHPID" > /dev/null 2>&1 || true
  for i in "${!cell_dirs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    build_cell "${cell_dirs[$i]}" "${cell_sources[$i]}" "${cell_lessons[$i]}" &
  done
  wait
}
compile_all &
compile_pid=$!
wait_compiled() {  # wait_compiled DIR: until the cell's build has ended (0), or the compiling stopped (1)
  while [ ! -f "$1/compiled" ]; do kill -0 "$compile_pid" 2> /dev/null || [ -f "$1/compiled" ] || return 1; sleep 0.2; done
}

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

summary_re='test cases: *([0-9]+) \| *([0-9]+) passed \| *([0-9]+) failed'
judge_re='^judge: ([0-9]+) value\(s\) missing from the submission.s run, ([0-9]+) inconsistent'
# grade_cell I: runs and judges cell I (compiled before) and writes its result.txt. Returns 1,
# with stop_reason set, when its worker must take no more cells (its GPU is not the grader's).
grade_cell() {
  local i=$1 dir lesson box label err brc cut check mode t0 t1 t2 run_rc judge_rc total passed missing inconsistent first
  dir=${cell_dirs[$i]} lesson=${cell_lessons[$i]} box=${cell_dirs[$i]}/box
  label="$(sed -n 's/^student=//p' "$dir/identity.txt") / $lesson"
  wait_compiled "$dir" || { stop_reason="the compiling stopped before the cell of $label was built"; return 1; }
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
    progress "$label: does not compile"
    return 0
  fi
  if [ "$cell_share" -eq 1 ] && ! wait_gpu_free; then  # something outside the grader holds the GPU: grade nothing more on it
    stop_reason="the GPU${cell_gpu_index:+ $cell_gpu_index} was in use by another program before the cell of $label ($gpu_busy)"
    return 1
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
  if [ "$cell_share" -eq 1 ] && ! wait_gpu_free; then
    add "left the GPU in use after it ended ($gpu_busy)"
    stop_reason="the GPU was still in use after the cell of $label"
  fi
  # 2. the judge: the course's own check, outside the sandbox, judging the recorded values
  ( cd -- "$dir" && COURSE_REQUIRE_GPU=$((1 - host_only)) exec env ${cell_gpu_uuid:+CUDA_VISIBLE_DEVICES="$cell_gpu_uuid"} timeout -k 5 $((timeout_s + 60)) \
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
  # could also write to, so they describe but never decide. Not after a run that was stopped (its
  # time or file limit): that cell fails already, and under a sanitizer it would only run into the
  # much longer --sanitize-timeout, twice.
  if [ $sanitize -eq 1 ] && [ $host_only -eq 0 ] && [ "$run_rc" -ne 124 ] && [ "$run_rc" -ne 137 ] && [ "$run_rc" -ne 153 ] && [ -z "$stop_reason" ]; then
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
      if [ "$cell_share" -eq 1 ] && ! wait_gpu_free; then
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
  printf 'run_s=%s\njudge_s=%s\nsanitize_s=%s\nshare=%s\n' "$(seconds_since "$t0" "$t1")" "$(seconds_since "$t1" "$t2")" \
    "$(seconds_since "$t2")" "$cell_share" >> "$dir/timing.txt"
  [ -n "$cell_gpu_index" ] && printf 'gpu=%s\n' "$cell_gpu_index" >> "$dir/timing.txt"
  finish_cell "$dir" yes "${passed:-0}" "$total" "$(shorten "$finding")"
  progress "$label: ${passed:-0} of ${total:-?} test cases passed${finding:+ — $finding}"
  [ -z "$stop_reason" ]
}

# progress LINE: LINE, after the count of cells done in this run, the time since grading began and
# an estimate of the time left, on the console and in OUT/progress.log (with the time of day).
hms() { local t=$1; if [ "$t" -ge 3600 ]; then printf '%dh%02dm' $((t / 3600)) $((t % 3600 / 60)); else printf '%dm%02ds' $((t / 60)) $((t % 60)); fi; }
progress() {
  local n el left=""
  n=$( { flock 9; n=$(( $(cat "$done_file") + 1 )); echo "$n" > "$done_file"; echo "$n"; } 9> "$done_file.lock" )
  el=$(( $(date +%s) - grade_t0 ))
  [ "$n" -lt "$ntodo" ] && left=", about $(hms $(( el * (ntodo - n) / n ))) left"
  echo "$me: [$n/$ntodo, $(hms "$el")$left] $1"
  printf '%s [%s/%s] %s\n' "$(date -u +%FT%TZ)" "$n" "$ntodo" "$1" >> "$progress_log"
}
# The cells go to the workers through a queue (the next place in the list todo, in a file, under a
# lock): --share workers per --gpus GPU (without --gpus, on the GPU(s) the environment gives),
# each cell on the GPU of the worker that took it.
next_cell() {
  { flock 9; local n; n=$(cat "$queue"); [ "$n" -lt ${#todo[@]} ] || return 1; echo $((n + 1)) > "$queue"; echo "${todo[$n]}"; } 9> "$queue.lock"
}
worker() {  # worker W SHARE: grades cells on GPU W modulo the number of GPUs, SHARE cells on it at a time
  local i g=0
  [ ${#gpu_index[@]} -gt 0 ] && g=$(($1 % ${#gpu_index[@]}))
  cell_gpu_index=${gpu_index[$g]-} cell_gpu_uuid=${gpu_uuid[$g]-} cell_gpu_minor=${gpu_minor[$g]-} cell_share=$2 stop_reason=""
  while i=$(next_cell); do
    grade_cell "$i" || { printf '%s\n' "$stop_reason" > "$cells_dir/.stop-$1"; return 0; }
  done
}
run_workers() {  # run_workers SHARE: every cell of todo
  local w n=${#gpu_index[@]} pids=()
  [ "$n" -ge 1 ] || n=1
  echo 0 > "$queue" || exit 1
  if [ $((n * $1)) -eq 1 ]; then worker 0 1; return; fi
  [ "$n" -gt 1 ] && echo "$me: grading on $n GPUs (${gpu_index[*]}), $1 cell(s) on each at a time"
  for ((w = 0; w < n * $1; w++)); do worker "$w" "$1" & pids+=($!); done
  wait "${pids[@]}"
}
wait "$judges_pid" 2> /dev/null
if [ "$(cat -- "$common.judges-rc" 2> /dev/null)" != 0 ]; then
  tail -n 20 "$common.log" >&2
  die 1 "could not build the course's checks, the judges (see $common.log); nothing graded"
fi
echo "The course and its judges were built once, in $(seconds_since "$common_t0") s." >> "$cells_dir/run-info.txt"
progress_log=$out/progress.log; [ -z "$slice_k" ] || progress_log=$out/progress-slice-$slice_k.log
queue=$cells_dir/.queue${slice_k:+-$slice_k} done_file=$cells_dir/.done${slice_k:+-$slice_k}
echo 0 > "$done_file" && rm -f -- "$cells_dir"/.stop-* || exit 1
ntodo=${#cell_dirs[@]} grade_t0=$(date +%s)
printf '%s grading %s cells on %s (log of one line per cell: %s)\n' "$(date -u +%FT%TZ)" "$ntodo" "$(hostname)" "$progress_log" >> "$progress_log"
cell_gpu_index="" cell_gpu_uuid="" cell_gpu_minor="" cell_share=1
todo=("${!cell_dirs[@]}")
run_workers "$share"
# --share: a cell that did not pass everything is graded again, alone on its GPU; its first result
# (result-shared.txt) is kept beside, but the grade is the second.
if [ "$share" -gt 1 ]; then
  again=()
  for i in "${todo[@]}"; do
    dir=${cell_dirs[$i]} r=${cell_dirs[$i]}/result.txt
    [ -f "$r" ] && [ "$(cat -- "$dir/compiled" 2> /dev/null)" = yes ] || continue  # not compiled: nothing to grade again
    is_pass yes "$(sed -n 's/^passed=//p' "$r")" "$(sed -n 's/^total=//p' "$r")" "$(sed -n 's/^finding=//p' "$r")" && continue
    mv -f -- "$r" "$dir/result-shared.txt" && sed -i -E 's/^(run_s|judge_s|sanitize_s|share)=/shared_\1=/' "$dir/timing.txt"
    again+=("$i")
  done
  if [ ${#again[@]} -gt 0 ] && ! ls "$cells_dir"/.stop-* > /dev/null 2>&1; then
    echo "$me: ${#again[@]} cell(s) did not pass everything while sharing a GPU: grading each again, alone on its GPU"
    todo=("${again[@]}") ntodo=$((ntodo + ${#again[@]}))
    run_workers 1
  fi
fi
wait "$compile_pid" 2> /dev/null
stopped=$(cat "$cells_dir"/.stop-* 2> /dev/null | paste -sd ';' | sed 's/;/; /g')
for dir in "${cell_dirs[@]}"; do  # the cells no worker graded: when every worker stopped
  [ -f "$dir/result.txt" ] || finish_cell "$dir" - "" "" "not graded: ${stopped:-no worker took it}"
done

# ================================================================= the time it took
median_of() {  # median_of KEY: the median of KEY=seconds over the cells' timing.txt
  cat "$cells_dir"/*/timing.txt 2> /dev/null | sed -n "s/^$1=//p" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
timing="Time per cell (median of $(cat "$cells_dir"/*/timing.txt 2> /dev/null | grep -c '^run_s=') cells run, --share $share): compile $(median_of compile_s) s, run $(median_of run_s) s, judge $(median_of judge_s) s"
[ $no_sandbox -eq 0 ] && timing="$timing; an empty sandbox starts in $sandbox_s s"
echo "$timing." >> "$cells_dir/run-info.txt"

# ================================================================= the gradebook
if [ -n "$slice" ]; then  # a Slurm task: the gradebook job writes the gradebook, after every task
  echo "$me: task $slice done: ${#cell_dirs[@]} cells graded"
  exit 0
fi
write_gradebook "$cells_dir" "$out"; status=$?
echo
cat -- "$out/gradebook.md"
echo
echo "$me: gradebook in $out/gradebook.csv and $out/gradebook.md; scores per student in $out/scores.csv, feedback in $out/feedback/"
exit $status
