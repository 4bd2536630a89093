#!/usr/bin/env bash
# make_test_submissions.sh DIR — a folder of made-up student submissions to try scripts/grade.sh
# on. Each is a lesson's own main.cu with one small textual edit (an edit whose text is not found
# exactly once stops the script, so it never silently writes an unedited, correct file). The
# names have spaces, an apostrophe, a double quote, a comma, a leading dash and a non-ASCII letter.
#
# student (folder)              lesson                what is wrong -> what `grade.sh --sanitize` should report
# Ada Lovelace                  01_naive_transpose    nothing -> compiled, every check passed, no finding
# Ada Lovelace                  02_shared_transpose   nothing -> compiled, every check passed, no finding
# O'Brien, Pat "wrong index"    01_naive_transpose    transpose_naive_strided_writes writes out[row][col]
#                                                     of a rows x cols matrix instead of out[col][row] ->
#                                                     the awkward-shape test case fails, first at 257 x 1031
#                                                     (1 x N and N x 1 pass: there both layouts agree)
# -Zoë missing barrier          02_shared_transpose   no __syncthreads() between the tile's load and store
#                                                     in transpose_tiled -> the checks pass or fail
#                                                     depending on timing; racecheck reports hazards in
#                                                     transpose_tiled (RACE) either way
# Lin does not compile          02_shared_transpose   an undeclared variable -> does not compile, with nvcc's
#                                                     first error line
# Sam never terminates          01_naive_transpose    a loop whose step is blockDim.y / 32 == 0 in
#                                                     transpose_naive_strided_writes -> timed out (the host
#                                                     test cases before it count as passed); no sanitizer run
# Kim out of bounds             02_shared_transpose   transpose_tiled's store drops its out_row < cols test,
#                                                     so tiles on the right edge write past the end of the
#                                                     output -> memcheck: Invalid __global__ write
#                                                     (MEMCHECK); without the sanitizer the checks may pass
#                                                     (the writes land in memory nobody checks) or fail with
#                                                     an illegal-address error
# Lee stray folders             03_dynamic_shared     a lesson folder without main.cu -> reported as such
# Lee stray folders             07_extra_credit       not a lesson folder -> reported as such
#
# make_test_submissions.sh DIR --attacks GRADE_OUT [--attacks-cache CACHE] [--attacks-only] also
# writes the hostile submissions of tests/grading/attacks/ (each a lesson's or an exercise's
# main.cu with an attack appended; the student folders atk00 ... atk13) with the real paths of
# this course, of DIR, of GRADE_OUT (grade.sh's --out) and of CACHE (grade.sh's --course-cache,
# default build-grade-cache in this course) written in, as an attacker who knows them would, and
# folders that are links or have hostile names (atk15 ... atk17), or hard links (atk22, atk23: DIR
# must be on the course's filesystem), and work done in reduced precision or by a library (atk50 ...
# atk55, each beside its honest twin). The row each must produce is in
# tests/grading/attacks/expected.txt. --attacks-only leaves out the others.
set -euo pipefail
if [ $# -lt 1 ] || [ "$1" = --help ] || [ "$1" = -h ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  [ $# -eq 1 ] && exit 0 || exit 2
fi
repo=$(cd -- "$(dirname -- "$0")/.." && pwd -P)
dir=$1; shift
attacks_out="" attacks_cache="" attacks_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --attacks) [ -n "${2-}" ] || { echo "make_test_submissions.sh: --attacks needs grade.sh's --out folder" >&2; exit 2; }
               attacks_out=$2; shift 2 ;;
    --attacks-cache) [ -n "${2-}" ] || { echo "make_test_submissions.sh: --attacks-cache needs grade.sh's --course-cache folder" >&2; exit 2; }
               attacks_cache=$2; shift 2 ;;
    --attacks-only) attacks_only=1; shift ;;
    *) echo "make_test_submissions.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ $attacks_only -eq 0 ] || [ -n "$attacks_out" ] || { echo "make_test_submissions.sh: --attacks-only needs --attacks" >&2; exit 2; }
if [ -e "$dir" ] && [ -n "$(ls -A -- "$dir")" ]; then
  echo "make_test_submissions.sh: '$dir' exists and is not empty; give a new folder" >&2; exit 2
fi
mkdir -p -- "$dir"

# submit STUDENT LESSON: the lesson's own main.cu, unchanged.
submit() {
  mkdir -p -- "$dir/$1/$2"
  cp -- "$repo/lessons/$2/main.cu" "$dir/$1/$2/main.cu"
}
# edit STUDENT LESSON OLD NEW: the lesson's main.cu with the text OLD (which must occur exactly
# once) replaced by NEW. Plain bash string operations: OLD is matched literally.
edit() {
  local student=$1 lesson=$2 old=$3 new=$4 text rest count
  text=$(< "$repo/lessons/$lesson/main.cu")
  rest=${text//"$old"/}
  count=$(( (${#text} - ${#rest}) / ${#old} ))
  if [ "$count" -ne 1 ]; then
    echo "make_test_submissions.sh: $student/$lesson: the text to edit occurs $count times in lessons/$lesson/main.cu, not once:" >&2
    printf '%s\n' "$old" >&2
    exit 1
  fi
  mkdir -p -- "$dir/$student/$lesson"
  printf '%s\n' "${text/"$old"/"$new"}" > "$dir/$student/$lesson/main.cu"
}

# attack STUDENT LESSON BASE NAME: BASE (lessons or exercises) LESSON's main.cu, then the attack
# tests/grading/attacks/NAME.cu with @COURSE@, @SUBMISSIONS@, @OUT@ and @CACHE@ replaced by real paths.
attack() {
  local text code
  text=$(< "$repo/$3/$2/main.cu")
  code=$(< "$repo/tests/grading/attacks/$4.cu")
  code=${code//@COURSE@/$repo}; code=${code//@SUBMISSIONS@/$dir_abs}; code=${code//@OUT@/$out_abs}; code=${code//@CACHE@/$cache_abs}
  mkdir -p -- "$dir/$1/$2"
  printf '%s\n\n%s\n' "$text" "$code" > "$dir/$1/$2/main.cu"
}
# forge STUDENT NAME [OLD NEW]: lesson 02's main.cu with its tile's padding removed (correct and
# slow: the store phase's column reads are a 32-way bank conflict), OLD replaced by NEW in it when
# given, then the attack tests/grading/attacks/NAME.cu: each reports or earns a speed it did not.
slow02_old='    __shared__ float tile[kTile][kPitch];'
slow02_new='    __shared__ float tile[kTile][kTile];'
forge() {
  local text code
  text=$(< "$repo/lessons/02_shared_transpose/main.cu")
  [ "${text//"$slow02_old"/}" != "$text" ] || { echo "make_test_submissions.sh: lesson 02's tile declaration moved" >&2; exit 1; }
  text=${text/"$slow02_old"/"$slow02_new"}
  if [ $# -ge 4 ]; then
    [ "${text//"$3"/}" != "$text" ] || { echo "make_test_submissions.sh: $1: the text to edit is not in lesson 02's main.cu" >&2; exit 1; }
    text=${text/"$3"/"$4"}
  fi
  mkdir -p -- "$dir/$1/02_shared_transpose"
  if [ "$2" = "-" ]; then
    printf '%s\n' "$text" > "$dir/$1/02_shared_transpose/main.cu"
  else
    code=$(< "$repo/tests/grading/attacks/$2.cu")
    printf '%s\n\n%s\n' "$text" "$code" > "$dir/$1/02_shared_transpose/main.cu"
  fi
}
# slow04 STUDENT NAME [OLD NEW]...: lesson 04's main.cu with reduce_vec4_last_block made slow (each
# thread reads the input a second time and adds that sum times zero: correct, about half the speed),
# each OLD replaced by NEW in it, then tests/grading/attacks/NAME.cu when NAME is not "-".
slow04_old='    const float block_total = block_sum_shuffle<kThreads>(thread_sum_vec4<kLastBlockUnroll>(in, n));'
slow04_new='    float again = 0.0f;  // (slow twin) the input read four more times, added as zero: well under the solution'"'"'s speed
    for (int rep = 0; rep < 4; ++rep)
        for (long long i = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; i < n; i += static_cast<long long>(gridDim.x) * kThreads)
            again += __ldcg(&in[i]) * (rep + 1);
    const float block_total = block_sum_shuffle<kThreads>(thread_sum_vec4<kLastBlockUnroll>(in, n) + (again - again));'
slow04() {
  local student=$1 name=$2 text
  shift 2
  text=$(< "$repo/lessons/04_reduction/main.cu")
  set -- "$slow04_old" "$slow04_new" "$@"
  while [ $# -ge 2 ]; do
    [ "${text//"$1"/}" != "$text" ] || { echo "make_test_submissions.sh: $student: the text to edit is not in lesson 04's main.cu" >&2; exit 1; }
    text=${text/"$1"/"$2"}
    shift 2
  done
  mkdir -p -- "$dir/$student/04_reduction"
  if [ "$name" = "-" ]; then
    printf '%s\n' "$text" > "$dir/$student/04_reduction/main.cu"
  else
    printf '%s\n\n%s\n' "$text" "$(< "$repo/tests/grading/attacks/$name.cu")" > "$dir/$student/04_reduction/main.cu"
  fi
}
# region STUDENT LESSON ID NAME: the lesson's main.cu with exercise ID's region replaced by the part of
# tests/grading/attacks/NAME.cu after its `// REGION` line; the part before it goes at the top of the file.
region() {
  local src="$repo/lessons/$2/main.cu" code="$repo/tests/grading/attacks/$4.cu"
  grep -q "^ *// EXERCISE BEGIN $3\([: ]\|\$\)" "$src" || { echo "make_test_submissions.sh: $1: no region $3 in lessons/$2/main.cu" >&2; exit 1; }
  grep -qx '// REGION' "$code" || { echo "make_test_submissions.sh: $1: $4.cu has no // REGION line" >&2; exit 1; }
  mkdir -p -- "$dir/$1/$2"
  awk -v id="$3" -v code="$code" '
    BEGIN { while ((getline l < code) > 0) { if (l == "// REGION") r = 1; else if (r) body = body l "\n"; else head = head l "\n" }
            printf "%s", head }
    $0 ~ "^ *// EXERCISE BEGIN " id "([: ]|$)" { print; printf "%s", body; skip = 1; next }
    skip && $0 ~ "^ *// EXERCISE END" { skip = 0 }
    !skip { print }' "$src" > "$dir/$1/$2/main.cu"
}
if [ -n "$attacks_out" ]; then
  dir_abs=$(cd -- "$dir" && pwd -P)
  out_abs=$(mkdir -p -- "$attacks_out" && cd -- "$attacks_out" && pwd -P)
  cache_abs=${attacks_cache:-$repo/build-grade-cache}
  [[ $cache_abs == /* ]] || cache_abs=$PWD/$cache_abs
  submit "atk00 victim" 01_naive_transpose
  attack "atk01 forge summary" 06_bank_conflicts exercises forge_summary
  attack "atk02 forge atexit" 06_bank_conflicts exercises forge_atexit
  attack "atk03 tamper" 01_naive_transpose lessons tamper
  attack "atk04 course write" 01_naive_transpose lessons course_write
  attack "atk05 read other" 01_naive_transpose lessons read_other
  attack "atk06 include other" 01_naive_transpose lessons include_other
  attack "atk07 escape" 01_naive_transpose lessons escape
  submit "atk07z honest after escape" 01_naive_transpose
  attack "atk08 fork bomb" 01_naive_transpose lessons fork_bomb
  attack "atk09 flood" 01_naive_transpose lessons flood
  attack "atk10 disk fill" 01_naive_transpose lessons disk_fill
  attack "atk11 transcript flood" 01_naive_transpose lessons transcript_flood
  attack "atk12 use judge" 06_bank_conflicts exercises use_judge
  submit "atk13 honest last" 06_bank_conflicts
  attack "atk14 memory hog" 01_naive_transpose lessons memory_hog
  # What a class's folder can hold besides code: links to the solution and to a classmate's
  # folder, and a name that a spreadsheet would read as a formula, with a line break in it.
  mkdir -p -- "$dir/atk15 link to solution/06_bank_conflicts" "$dir/atk16 link to classmate"
  ln -s -- "$repo/lessons/06_bank_conflicts/main.cu" "$dir/atk15 link to solution/06_bank_conflicts/main.cu"
  ln -s -- "../atk13 honest last/06_bank_conflicts" "$dir/atk16 link to classmate/06_bank_conflicts"
  submit "atk17 =1+1"$'\n'"newline" 06_bank_conflicts
  # Forged speed: the routes, each on the same slow kernel, beside it honest (atk18).
  forge "atk18 honest slow" -
  forge "atk19 forge macro" forge_macro
  forge "atk20 forge interpose" forge_interpose
  forge "atk21 forge size" forge_size '    // EXERCISE BEGIN 02.tiled
' '    // EXERCISE BEGIN 02.tiled
    static unsigned char ran[1 << 15];  // (forge_size.cu) the speed case: every block the first time, half after
    const unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    if (rows == 8192 && cols == 4096 && block < (1u << 15)) {
        if (blockIdx.x % 2 == 1 && ran[block]) return;
        if (threadIdx.x == 0 && threadIdx.y == 0) ran[block] = 1;
    }
'
  forge "atk24 forge poison" forge_poison '    // EXERCISE BEGIN 02.tiled
' '    // EXERCISE BEGIN 02.tiled
    __shared__ bool written;  // (forge_poison.cu) the speed case: an odd block whose output is not poisoned skips
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        written = false;
        if (rows == 8192 && cols == 4096 && blockIdx.x % 2 == 1) {
            const float first = out[static_cast<long long>(blockIdx.x) * kTile * rows + blockIdx.y * kTile];
            written = first == first;  // not NaN: not the poison
        }
    }
    __syncthreads();
    if (written) return;
'
  forge "atk25 forge trap" forge_trap '    // EXERCISE BEGIN 02.tiled
' '    // EXERCISE BEGIN 02.tiled
    static unsigned launches;  // (forge_trap.cu) the speed case traps while fewer than 2 launches were counted
    if (rows == 8192 && cols == 4096 && launches < 2) __trap();
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(&launches, 1u);
'
  forge "atk26 forge heap" forge_heap '    // EXERCISE BEGIN 02.tiled
' '    // EXERCISE BEGIN 02.tiled
    static int* kept;  // (forge_heap.cu) memory on the device heap, which outlives a reload of this code
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0 && kept == nullptr)
        kept = static_cast<int*>(malloc(sizeof(int)));
'
  # State kept between timed runs: lesson 04's last-block sum, slow, honest (atk27) and keeping its sum
  # in the slack of its output allocation, replayed after a spin (atk28: kept_state.cu).
  slow04 "atk27 honest slow sum" -
  slow04 "atk28 kept state" kept_state '    // EXERCISE BEGIN 04.last_block
' '    // EXERCISE BEGIN 04.last_block
    unsigned* const kept = reinterpret_cast<unsigned*>(out);  // (kept_state.cu) out[1..3]: tag, fingerprint, sum
    unsigned print = 0;
    if (n >= (1LL << 22)) {
        for (int j = 0; j < 8; ++j) print = print * 31u + __float_as_uint(__ldg(&in[n / 8 * j + 7]));
        if (__ldcg(&kept[1]) == 0x6b657074u && __ldcg(&kept[2]) == print) {
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                unsigned long long t0 = 0, t = 0;
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
                do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < 8000);
                *out = __uint_as_float(__ldcg(&kept[3]));
            }
            return;
        }
    }
' '        *blocks_done = 0;
' '        *blocks_done = 0;
        if (n >= (1LL << 22)) kept[2] = print, kept[3] = __float_as_uint(total), kept[1] = 0x6b657074u;  // (kept_state.cu)
'
  # Work done another way (grading/shortcuts.py): TF32 tensor cores and a half round trip at the
  # matmul's speed case only, beside the same naive kernel honest (atk52); cooperative groups' reduce
  # for the warp sum and CUB's BlockReduce (its name pasted by a macro) for the tree, beside the
  # lesson's own solution (atk55). Each fails its correctness, so it scores no more than its twin.
  region "atk50 precision tf32" 05_tiled_matmul 05.register_tiled precision_tf32
  region "atk51 precision half" 05_tiled_matmul 05.register_tiled precision_half
  region "atk52 honest naive matmul" 05_tiled_matmul 05.register_tiled naive_register_tiled
  region "atk53 library cg reduce" 04_reduction 04.shuffle library_cg
  region "atk54 library cub macro" 04_reduction 04.tree library_cub
  submit "atk55 honest reduction" 04_reduction
  # Hard links: the course's solution under another name (never read), and one file handed in by
  # two students (both graded, each row naming the other). DIR must be on the course's filesystem.
  mkdir -p -- "$dir/atk22 hard link to solution/06_bank_conflicts" "$dir/atk23 twin of atk13/06_bank_conflicts"
  ln -- "$repo/lessons/06_bank_conflicts/main.cu" "$dir/atk22 hard link to solution/06_bank_conflicts/main.cu"
  ln -- "$dir/atk13 honest last/06_bank_conflicts/main.cu" "$dir/atk23 twin of atk13/06_bank_conflicts/main.cu"
fi
if [ $attacks_only -eq 1 ]; then
  echo "make_test_submissions.sh: wrote $(find "$dir" -name main.cu | wc -l) main.cu files for $(ls -- "$dir" | wc -l) students into $dir"
  exit 0
fi

submit "Ada Lovelace" 01_naive_transpose
submit "Ada Lovelace" 02_shared_transpose

edit "O'Brien, Pat \"wrong index\"" 01_naive_transpose \
'    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) out[col * rows + row] = in[row * cols + col];' \
'    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) out[row * cols + col] = in[row * cols + col];'

edit "-Zoë missing barrier" 02_shared_transpose \
'    __syncthreads();
    // Swapped roles: output row = input column col0 + y, output column = input row row0 + x.' \
'    // Swapped roles: output row = input column col0 + y, output column = input row row0 + x.'

edit "Lin does not compile" 02_shared_transpose \
'tile[y][threadIdx.x] = in[r * cols + c];' \
'tile[y][threadIdx.x] = in[r * width + c];'

edit "Sam never terminates" 01_naive_transpose \
'    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) out[col * rows + row] = in[row * cols + col];' \
'    const int step = blockDim.y / kBlockX;  // rows per pass, meant to be gridDim.y * blockDim.y
    // (volatile: so that the compiler cannot turn the loop into a trip count of 2^32 - 1 and end it)
    for (volatile int row = blockIdx.y * blockDim.y + threadIdx.y; row < rows; row += step)
        if (col < cols) out[col * rows + row] = in[row * cols + col];'

edit "Kim out of bounds" 02_shared_transpose \
'        if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[threadIdx.x][y];' \
'        if (out_col < rows) out[out_row * rows + out_col] = tile[threadIdx.x][y];'

mkdir -p -- "$dir/Lee stray folders/03_dynamic_shared" "$dir/Lee stray folders/07_extra_credit"
echo "I ran out of time for this one." > "$dir/Lee stray folders/03_dynamic_shared/notes.txt"
cp -- "$repo/lessons/03_dynamic_shared/main.cu" "$dir/Lee stray folders/07_extra_credit/main.cu"

echo "make_test_submissions.sh: wrote $(find "$dir" -name main.cu | wc -l) main.cu files for $(ls -- "$dir" | wc -l) students into $dir"
