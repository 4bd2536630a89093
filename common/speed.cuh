// speed.cuh — the `speed: <id>` test case each exercise has in its lesson's check.cu (checks only:
// it includes testing.hpp, never a lesson). One exercise, one fixed size far larger than L2, and
// two timings in this one process: the kernel the exercise fills in, and the lesson's ceiling (the
// fastest the same job can go: a copy for the transposes, CUB's sum for the reduction, cuBLAS for
// the matmul). Each is the median of kSpeedRuns runs timed with CUDA events, after a warm-up.
// The ratio of the two cancels most of what differs between two runs (clocks, another process):
// grading compares the submission's ratio with the course solution's (grading/README.md).
//
// The timed kernel's output is poisoned before its runs and checked after them, through
// course::submitted, like every other GPU check: a fast kernel that is wrong fails here too.
// Under --small (the memcheck subset) these test cases are not run at all (check_main.hpp).
#pragma once

#include "device_info.cuh"
#include "lesson.cuh"
#include "testing.hpp"
#include "timer.cuh"

#include <string>

namespace course {

constexpr int kSpeedWarmup = 3;  // untimed: clocks up, caches and the TLB in their usual state
constexpr int kSpeedRuns = 21;   // timed: the median of these

/// The speed cases' transposes: 8192 x 4096 floats, 128 MiB each way, so the 256 MiB a transpose
/// moves is over 4x the 50 MiB L2 of an H100 or H200. Not square: rows and columns mixed up fail.
constexpr int kSpeedRows = 8192, kSpeedCols = 4096;

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
    const std::vector<float> host_in = random_floats(std::size_t{1} * rows * cols, seeded(0x5eed));
    DeviceBuffer<float> in(host_in), out(host_in.size());
    const Timing copy = time_speed([&] {
        CUDA_CHECK(cudaMemcpy(out.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice));
    });
    out.poison();  // after the copy: every element the transpose leaves unwritten stays NaN
    const Timing t = time_speed([&] { launch(in.data(), out.data(), rows, cols); });
    report_speed(exercise, kernel, t, "copy", copy, std::to_string(rows) + "x" + std::to_string(cols));
    const VerifyResult r = compare_exact(submitted(out.to_host()), transpose_cpu(host_in, rows, cols), rows);
    INFO(r.summary());
    CHECK(r.ok());
}

}  // namespace course
