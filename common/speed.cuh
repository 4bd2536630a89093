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
#pragma once

#include "device_info.cuh"
#include "lesson.cuh"
#include "testing.hpp"
#include "timer.cuh"

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace course {

constexpr int kSpeedWarmup = 3;  // untimed: clocks up, caches and the TLB in their usual state
constexpr int kSpeedRuns = 21;   // timed: the median of these

/// The speed cases' transposes: 8192 x 4096 floats, 128 MiB each way, so the 256 MiB a transpose
/// moves is over 4x the 50 MiB L2 of an H100 or H200. Not square: rows and columns mixed up fail.
constexpr int kSpeedRows = 8192, kSpeedCols = 4096;

/// One 64-bit hash per row of a matrix with `cols` columns: FNV-1a over the row's bytes, taken four
/// at a time (then one at a time for what is left), so that every bit of every element counts.
template <class T>
std::vector<std::uint64_t> row_hashes(const std::vector<T>& m, std::size_t cols) {
    static_assert(std::is_trivially_copyable_v<T>, "hashed as bytes");
    std::vector<std::uint64_t> hashes(cols == 0 ? 0 : m.size() / cols);
    const std::size_t row_bytes = cols * sizeof(T);
    for (std::size_t r = 0; r < hashes.size(); ++r) {
        const unsigned char* row = reinterpret_cast<const unsigned char*>(m.data() + r * cols);
        std::uint64_t h = 0xcbf29ce484222325ull;
        std::size_t i = 0;
        for (; i + 4 <= row_bytes; i += 4) {
            std::uint32_t word;
            std::memcpy(&word, row + i, sizeof word);
            h = (h ^ word) * 0x100000001b3ull;
        }
        for (; i < row_bytes; ++i) h = (h ^ row[i]) * 0x100000001b3ull;
        hashes[r] = h;
    }
    return hashes;
}

/// row_hashes(transpose_cpu(in, rows, cols), rows), without building the transpose: output row c is
/// input column c, hashed 64 columns (256 bytes of each input row) at a time: each input cache line
/// is read once, and a pass over the rows touches a quarter as many pages as 16 columns would.
inline std::vector<std::uint64_t> transpose_row_hashes(const std::vector<float>& in, int rows, int cols) {
    std::vector<std::uint64_t> hashes(static_cast<std::size_t>(cols), 0xcbf29ce484222325ull);
    constexpr int kGroup = 64;
    for (int c0 = 0; c0 < cols; c0 += kGroup) {
        const int c1 = c0 + kGroup < cols ? c0 + kGroup : cols;
        for (int r = 0; r < rows; ++r) {
            const float* row = in.data() + static_cast<std::size_t>(r) * cols;
            for (int c = c0; c < c1; ++c) {
                std::uint32_t word;
                std::memcpy(&word, &row[c], sizeof word);
                hashes[c] = (hashes[c] ^ word) * 0x100000001b3ull;
            }
        }
    }
    return hashes;
}

/// n random floats in [-1, 1) from `seed`, fast enough for the speed cases' hundreds of MiB
/// (splitmix64, 24 random bits each; course::random_floats takes several times as long).
inline std::vector<float> speed_floats(std::size_t n, std::uint32_t seed) {
    std::vector<float> v(n);
    std::uint64_t state = seed;
    for (float& x : v) {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        x = static_cast<float>(z >> 40) * (1.0f / 8388608.0f) - 1.0f;  // k / 2^23 - 1, k < 2^24: exact
    }
    return v;
}

/// The submitted row hashes of `got` (rows x cols) against those of `expected`: a VerifyResult
/// whose "(row, 0)" is the first output row that differs.
template <class T>
VerifyResult compare_rows(const std::vector<T>& got, const std::vector<T>& expected, std::size_t cols) {
    return compare_exact(submitted(row_hashes(got, cols)), row_hashes(expected, cols), 1);
}

/// `launch()` run kSpeedWarmup times, then timed kSpeedRuns times (timer.cuh).
template <class Launch>
Timing time_speed(Launch&& launch) {
    return time_gpu(launch, kSpeedWarmup, kSpeedRuns);
}

/// The one report of a speed case (course::speed, grading/transcript.hpp), on this GPU.
inline void report_speed(const std::string& exercise, const std::string& kernel, const Timing& k,
                         const std::string& ceiling, const Timing& c, const std::string& shape) {
    SpeedDetails d;
    d.runs = static_cast<std::uint32_t>(k.repeats);
    d.spread = k.median_ms > 0 ? (k.max_ms - k.min_ms) / k.median_ms : 0.0;
    d.shape = shape;
    d.gpu = query_device().name;
    speed(exercise, kernel, k.median_ms, ceiling, c.median_ms, d);
}

/// The speed case of a transposing exercise (lessons 01, 02, 03, 06): `launch(in, out, rows, cols)`
/// beside cudaMemcpy device-to-device of the same bytes, then its output against the CPU transpose.
template <class Launch>
void check_transpose_speed(const std::string& exercise, const std::string& kernel, Launch&& launch) {
    const int rows = kSpeedRows, cols = kSpeedCols;
    const std::vector<float> host_in = speed_floats(std::size_t{1} * rows * cols, seeded(0x5eed));
    DeviceBuffer<float> in(host_in), out(host_in.size());
    const Timing copy = time_speed([&] {
        CUDA_CHECK(cudaMemcpy(out.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice));
    });
    out.poison();  // after the copy: every element the transpose leaves unwritten stays NaN
    const Timing t = time_speed([&] { launch(in.data(), out.data(), rows, cols); });
    report_speed(exercise, kernel, t, "copy", copy, std::to_string(rows) + "x" + std::to_string(cols));
    const VerifyResult r = compare_exact(submitted(row_hashes(out.to_host(), rows)), transpose_row_hashes(host_in, rows, cols), 1);
    INFO("one hash per output row, (row, 0): ", r.summary());
    CHECK(r.ok());
}

}  // namespace course
