// speed.cuh — the `speed: <id>` test case each exercise has in its lesson's check.cu (checks only:
// it includes testing.hpp, never a lesson). One exercise, one fixed size far larger than L2, and
// two timings in this one process: the kernel the exercise fills in, and the lesson's ceiling (the
// fastest the same job can go: a copy for the transposes, CUB's sum for the reduction, cuBLAS for
// the matmul). Each is the median of kSpeedRuns runs timed with CUDA events, after a warm-up.
// The ratio of the two cancels most of what differs between two runs (clocks, another process):
// grading compares the submission's ratio with the course solution's (grading/README.md).
//
// The timed kernel's output is poisoned before its runs and checked after them, through
// course::submitted, like every other GPU check: a fast kernel that is wrong fails here too. What
// goes through the seam is one hash per row of the output (row_hashes), not the output itself:
// 128 MiB per speed case would make a graded run's transcript hundreds of MiB (grading caps it) and
// its judging slow, while a hash of every word still fails any wrong element, naming its row.
// Under --small (the memcheck subset) these test cases are not run at all (check_main.hpp).
//
// The big inputs, the hashes and the expected hashes are made on the GPU, by the small kernels at
// the end of this file: on the CPU (drawing hundreds of MiB, copying them up and the outputs back,
// hashing every row) they took over a second per lesson, in the student's run and again in the
// judge's. They give the very values of the CPU functions next to them (speed_float is shared by
// both; each hash is row_hashes' FNV-1a over the same 4-byte words), which the checks' GPU test
// cases compare on small matrices.
#pragma once

#include "device_info.cuh"
#include "lesson.cuh"
#include "testing.hpp"
#include "timer.cuh"
#include "witness.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace course {

constexpr int kSpeedWarmup = 3;  // untimed: clocks up, caches and the TLB in their usual state
constexpr int kSpeedRuns = 21;   // timed: the median of these

/// The speed cases' transposes: 8192 x 4096 floats, 128 MiB each way, so the 256 MiB a transpose
/// moves is over 4x the 50 MiB L2 of an H100 or H200. Not square: rows and columns mixed up fail.
constexpr int kSpeedRows = 8192, kSpeedCols = 4096;

/// FNV-1a, 64-bit: the start value, and one step taking in a 32-bit word (or a byte).
constexpr std::uint64_t kFnvStart = 0xcbf29ce484222325ull;
__host__ __device__ inline std::uint64_t fnv1a(std::uint64_t h, std::uint32_t word) { return (h ^ word) * 0x100000001b3ull; }

/// One 64-bit hash per row of a matrix with `cols` columns: FNV-1a over the row's bytes, taken four
/// at a time (then one at a time for what is left), so that every bit of every element counts.
template <class T>
std::vector<std::uint64_t> row_hashes(const std::vector<T>& m, std::size_t cols) {
    static_assert(std::is_trivially_copyable_v<T>, "hashed as bytes");
    std::vector<std::uint64_t> hashes(cols == 0 ? 0 : m.size() / cols);
    const std::size_t row_bytes = cols * sizeof(T);
    for (std::size_t r = 0; r < hashes.size(); ++r) {
        const unsigned char* row = reinterpret_cast<const unsigned char*>(m.data() + r * cols);
        std::uint64_t h = kFnvStart;
        std::size_t i = 0;
        for (; i + 4 <= row_bytes; i += 4) {
            std::uint32_t word;
            std::memcpy(&word, row + i, sizeof word);
            h = fnv1a(h, word);
        }
        for (; i < row_bytes; ++i) h = fnv1a(h, row[i]);
        hashes[r] = h;
    }
    return hashes;
}

/// Element i of speed_floats(n, seed): splitmix64's (i + 1)-th output from `seed` (its state after
/// i + 1 steps is seed + (i + 1) * the golden-ratio step), 24 random bits as a float in [-1, 1).
/// A pure function of (seed, i), so a GPU thread computes the same element as the CPU loop.
__host__ __device__ inline float speed_float(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<float>(z >> 40) * (1.0f / 8388608.0f) - 1.0f;  // k / 2^23 - 1, k < 2^24: exact
}

/// n random floats in [-1, 1) from `seed`, fast enough for hundreds of MiB (splitmix64, 24 random
/// bits each; course::random_floats takes several times as long). Every one is a multiple of 2^-23.
/// The speed cases draw theirs on the GPU (fill_speed_floats below); this is its CPU definition.
inline std::vector<float> speed_floats(std::size_t n, std::uint32_t seed) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = speed_float(seed, i);
    return v;
}

/// `launch()` run kSpeedWarmup times, then timed kSpeedRuns times (timer.cuh). In a graded run (the
/// runner records, the judge judges) once after one untimed launch: no time of either feeds a grade
/// (the speed witness times what a grade uses, grading/witness.py), and the output checked after it
/// is still a second launch's, so a kernel that leaves its next launch wrong (a counter not reset, a
/// sum added to the last) still fails. A student's own run, the mutation run and the witness time
/// them in full.
template <class Launch>
Timing time_speed(Launch&& launch) {
    if (transcript::role() != transcript::Role::Plain) return time_gpu(launch, 1, 1);
    return time_gpu(launch, kSpeedWarmup, kSpeedRuns);
}

/// The one report of a speed case (course::speed, harness/transcript.hpp), on this GPU.
inline void report_speed(const std::string& exercise, const std::string& kernel, const Timing& k,
                         const std::string& ceiling, const Timing& c, const std::string& shape) {
    SpeedDetails d;
    d.runs = static_cast<std::uint32_t>(k.repeats);
    d.spread = k.median_ms > 0 ? (k.max_ms - k.min_ms) / k.median_ms : 0.0;
    d.shape = shape;
    static const std::string gpu = query_device().name;  // (once: cudaGetDeviceProperties is not free)
    d.gpu = gpu;
    speed(exercise, kernel, k.median_ms, ceiling, c.median_ms, d);
}

/// How long the GPU is kept busy before each of the witness's timed launches (gpu_busy_for, below):
/// longer than the host takes to record the start event and enqueue the launch, redirected or not.
constexpr std::uint64_t kBusyBeforeTimedNs = 300000;

/// Keeps the GPU busy for about `ns` nanoseconds (one thread reading the global timer), enqueued on
/// the default stream before a timed launch: the host's work to enqueue that launch (more for the
/// submission's kernels, launched through witness::Redirect, than for the course's own) then falls
/// while the GPU is busy, and the timed window holds the GPU's work alone. Without it a launch of a
/// few microseconds (lesson 04's last-block sum) measured the host's path as well, and the course's
/// own solution, timed as a submission, came out at 82% to 91% of itself. Defined with the kernels below.
inline void gpu_busy_for(std::uint64_t ns);

/// The witness's timed runs of `launch` (under a Redirect when `theirs`): each run starts afresh, so
/// that no run inherits anything from the one before. The submission's code is loaded again (its
/// __device__ variables as its file gives them: a kernel that counts its launches starts over); then
/// one untimed launch (a freshly loaded kernel's first launch also loads it) and the timed one, each
/// after every buffer of this process was cleared whole, slack included (witness::scrub) and
/// `prepare(seed)` drew the inputs from a seed of its own (witness::fresh_seed: no launch ever sees
/// an input an earlier one saw, so an answer kept anywhere is the wrong one) and poisoned the
/// outputs; after the timed launch `problem(seed)` checks the output against that seed's reference.
/// The first problem ends the runs: `why` says it (`wrong` when it is the output).
template <class Prepare, class Launch, class Problem>
Timing witness_runs(bool theirs, Prepare& prepare, Launch& launch, Problem& problem, std::string& why, bool& wrong) {
    CudaEvent start, stop;
    std::vector<double> samples;
    for (int i = 0; i < kSpeedRuns && why.empty(); ++i) {
        if (theirs) witness::reload();
        witness::scrub();
        prepare(witness::fresh_seed());
        {
            witness::Redirect on(theirs);
            launch();
        }
        witness::scrub();
        const std::uint32_t seed = witness::fresh_seed();
        prepare(seed);
        CUDA_CHECK(cudaDeviceSynchronize());
        gpu_busy_for(kBusyBeforeTimedNs);  // (not redirected: the course's own kernel)
        {
            witness::Redirect on(theirs);
            samples.push_back(time_once(start, stop, launch));
        }
        why = witness::failure();
        if (why.empty() && theirs && witness::launches() == 0) why = "no kernel was launched";
        if (why.empty()) {
            why = problem(seed);
            wrong = !why.empty();
        }
    }
    return summarize(std::move(samples));
}

/// With --time-submission (harness/witness.hpp: this process is the course's own check, the grader's
/// witness of the submission's speed): `launch` timed by witness_runs() with the course's kernels and
/// then with the submission's in their place, each launch after `prepare(seed)` (the inputs drawn
/// from `seed`, all of them, and the outputs poisoned) and each timed one followed by
/// `problem(seed)` ("" when the output is that seed's right answer, else what is wrong: a reference
/// made after the launch, from `seed`, never from memory the kernel could have written). Reported
/// beside the ceiling `c` timed above in this same process; the course's kernel's time is this one
/// (timed the same way as the submission's), not `k`. Without --time-submission it does nothing.
template <class Prepare, class Launch, class Problem>
void witness_speed(const std::string& exercise, const std::string& kernel, const Timing& k, const std::string& ceiling,
                   const Timing& c, const std::string& shape, Prepare&& prepare, Launch&& launch, Problem&& problem) {
    if (!witness::active()) return;
    witness::Report r;
    r.exercise = exercise, r.kernel = kernel, r.ceiling = ceiling, r.shape = shape, r.gpu = query_device().name;
    r.solution_ms = k.median_ms, r.ceiling_ms = c.median_ms;
    witness::clear();
    try {
        std::string mine_wrong;
        bool unused = false;
        const Timing mine = witness_runs(false, prepare, launch, problem, mine_wrong, unused);
        if (!mine_wrong.empty()) throw std::runtime_error("the course's own kernel, timed by the witness: " + mine_wrong);
        r.solution_ms = mine.median_ms;
        witness::clear();
        const Timing t = witness_runs(true, prepare, launch, problem, r.problem, r.wrong_output);
        r.submission_ms = t.median_ms, r.runs = t.repeats;
        r.spread = t.median_ms > 0 ? (t.max_ms - t.min_ms) / t.median_ms : 0.0;
    } catch (const std::exception& e) {
        r.problem = witness::failure().empty() ? std::string("the timed runs failed: ") + e.what() : witness::failure();
        r.wrong_output = false;
    }
    witness::report(r);
}

#ifdef __CUDACC__  // (harness/check.cpp, a host-only test, includes this file for the CPU functions above)

// ---------------------------------------------------------------- on the GPU: inputs and hashes
// The course's own kernels, kept plain: one thread per element, or per hashed row or column. The
// hashes are slow by GPU standards (a thread walks a whole row), a few milliseconds in all.

namespace speed_kernels {

__global__ void fill_speed_floats(float* out, std::size_t n, std::uint64_t seed) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = speed_float(seed, i);
}

/// hashes[r]: FNV-1a of row r's `row_words` 32-bit words, as row_hashes takes them.
__global__ void row_hashes(const std::uint32_t* words, std::size_t rows, std::size_t row_words, std::uint64_t* hashes) {
    const std::size_t r = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const std::uint32_t* row = words + r * row_words;
    std::uint64_t h = kFnvStart;
    for (std::size_t i = 0; i < row_words; ++i) h = fnv1a(h, row[i]);
    hashes[r] = h;
}

/// hashes[c]: FNV-1a of column c of a rows x cols matrix of 32-bit words, top to bottom: the hash
/// of row c of its transpose. At each step a warp reads 32 neighbours of one row (coalesced).
__global__ void column_hashes(const std::uint32_t* words, int rows, int cols, std::uint64_t* hashes) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    std::uint64_t h = kFnvStart;
    for (int r = 0; r < rows; ++r) h = fnv1a(h, words[static_cast<std::size_t>(r) * cols + c]);
    hashes[c] = h;
}

/// hashes[c]: column_hashes' hash of column c of the rows x cols matrix fill_speed_floats draws from
/// `seed`, made from speed_float alone, reading no memory (the witness's reference for a transpose:
/// nothing a kernel wrote can change it). Each step's element is independent of the hash, so the
/// loop is bound by the hash's chain of multiplies, not by memory.
__global__ void transposed_speed_hashes(std::uint64_t seed, int rows, int cols, std::uint64_t* hashes) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    std::uint64_t h = kFnvStart;
    for (int r = 0; r < rows; ++r) h = fnv1a(h, __float_as_uint(speed_float(seed, static_cast<std::uint64_t>(r) * cols + c)));
    hashes[c] = h;
}

__global__ void busy_for(std::uint64_t ns) {
    std::uint64_t t0 = 0, t = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

}  // namespace speed_kernels

inline void gpu_busy_for(std::uint64_t ns) {
    speed_kernels::busy_for<<<1, 1>>>(ns);
    CUDA_CHECK_LAUNCH();
}

/// Fills `n` floats at `out` (device memory) with speed_floats(n, seed).
inline void fill_speed_floats(float* out, std::size_t n, std::uint32_t seed) {
    if (n == 0) return;
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096));
    speed_kernels::fill_speed_floats<<<blocks, 256>>>(out, n, seed);
    CUDA_CHECK_LAUNCH();
}

/// row_hashes(m.to_host(), cols), computed on the GPU: elements of 1, 2, 4 or 8 bytes whose rows
/// are whole 4-byte words (cols * sizeof(T) a multiple of 4), so that no row ends in loose bytes.
template <class T>
std::vector<std::uint64_t> device_row_hashes(const DeviceBuffer<T>& m, std::size_t cols) {
    static_assert(std::is_trivially_copyable_v<T> && 8 % sizeof(T) == 0, "hashed as 4-byte words");
    if (cols == 0 || (cols * sizeof(T)) % 4 != 0)
        throw std::invalid_argument("device_row_hashes: a row of " + std::to_string(cols) + " elements of " +
                                    std::to_string(sizeof(T)) + " bytes is not whole 4-byte words");
    const std::size_t rows = m.size() / cols;
    DeviceBuffer<std::uint64_t> hashes(rows);
    if (rows > 0) {
        speed_kernels::row_hashes<<<ceil_div(static_cast<long long>(rows), 64), 64>>>(
            reinterpret_cast<const std::uint32_t*>(m.data()), rows, cols * sizeof(T) / 4, hashes.data());
        CUDA_CHECK_LAUNCH();
    }
    return hashes.to_host();
}

/// row_hashes(transpose_cpu(in, rows, cols), rows) of a rows x cols matrix `in` on the GPU: what a
/// correct transpose's output hashes to, without making one.
inline std::vector<std::uint64_t> device_transpose_row_hashes(const DeviceBuffer<float>& in, int rows, int cols) {
    if (rows < 1 || cols < 1 || in.size() != static_cast<std::size_t>(rows) * cols)
        throw std::invalid_argument("device_transpose_row_hashes: the buffer is not rows x cols");
    DeviceBuffer<std::uint64_t> hashes(static_cast<std::size_t>(cols));
    speed_kernels::column_hashes<<<ceil_div(cols, 64), 64>>>(reinterpret_cast<const std::uint32_t*>(in.data()), rows, cols,
                                                             hashes.data());
    CUDA_CHECK_LAUNCH();
    return hashes.to_host();
}

/// device_transpose_row_hashes of the rows x cols matrix fill_speed_floats draws from `seed`, from
/// the seed alone (speed_kernels::transposed_speed_hashes).
inline std::vector<std::uint64_t> transposed_speed_row_hashes(std::uint32_t seed, int rows, int cols) {
    if (rows < 1 || cols < 1) throw std::invalid_argument("transposed_speed_row_hashes: no rows or no columns");
    DeviceBuffer<std::uint64_t> hashes(static_cast<std::size_t>(cols));
    // (a warp per block: 4096 columns are 128 warps, each SM of an H100 or H200 gets about one)
    speed_kernels::transposed_speed_hashes<<<ceil_div(cols, 32), 32>>>(seed, rows, cols, hashes.data());
    CUDA_CHECK_LAUNCH();
    return hashes.to_host();
}

/// The speed case of a transposing exercise (lessons 01, 02, 03, 06): `launch(in, out, rows, cols)`
/// beside cudaMemcpy device-to-device of the same bytes, then its output's row hashes against
/// those of the transpose, taken from the input before anything else ran (in the witness: from each
/// run's seed).
template <class Launch>
void check_transpose_speed(const std::string& exercise, const std::string& kernel, Launch&& launch) {
    const int rows = kSpeedRows, cols = kSpeedCols;
    DeviceBuffer<float> in(std::size_t{1} * rows * cols), out(in.size());
    fill_speed_floats(in.data(), in.size(), seeded(0x5eed));
    const std::vector<std::uint64_t> expected = device_transpose_row_hashes(in, rows, cols);
    const Timing copy = time_speed([&] {
        CUDA_CHECK(cudaMemcpy(out.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice));
    });
    out.poison();  // after the copy: every element the transpose leaves unwritten stays NaN
    const Timing t = time_speed([&] { launch(in.data(), out.data(), rows, cols); });
    report_speed(exercise, kernel, t, "copy", copy, std::to_string(rows) + "x" + std::to_string(cols));
    const VerifyResult r = compare_exact(submitted(device_row_hashes(out, rows)), expected, 1);
    INFO("one hash per output row, (row, 0): ", r.summary());
    CHECK(r.ok());
    witness_speed(exercise, kernel, t, "copy", copy, std::to_string(rows) + "x" + std::to_string(cols),
                  [&](std::uint32_t seed) { fill_speed_floats(in.data(), in.size(), seed); out.poison(); },
                  [&] { launch(in.data(), out.data(), rows, cols); },
                  [&](std::uint32_t seed) {
                      const std::vector<std::uint64_t> got = device_row_hashes(out, rows);
                      return compare_exact(got, transposed_speed_row_hashes(seed, rows, cols), 1).ok()
                                 ? "" : "your kernel's output is wrong at the speed case's size";
                  });
}

#endif  // __CUDACC__

}  // namespace course
