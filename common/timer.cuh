// timer.cuh — time GPU work the way the course measures everything:
// CUDA events around each launch, a few untimed warm-up runs, then the median of N repeats.
#pragma once

#include "device_buffer.cuh"
#include "measure.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace course {

struct Timing {
    double median_ms = 0;
    double min_ms = 0;
    double max_ms = 0;
    int repeats = 0;
};

/// One run of `launch()` between two CUDA events on the default stream: its time in milliseconds.
template <class Launch>
double time_once(CudaEvent& start, CudaEvent& stop, Launch&& launch) {
    CUDA_CHECK(cudaEventRecord(start.get()));
    launch();
    CUDA_CHECK(cudaEventRecord(stop.get()));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return ms;
}

/// The median, the fastest and the slowest of some runs' times (all zero when there are none).
inline Timing summarize(std::vector<double> samples) {
    Timing t;
    t.repeats = static_cast<int>(samples.size());
    if (samples.empty()) return t;
    t.min_ms = *std::min_element(samples.begin(), samples.end());
    t.max_ms = *std::max_element(samples.begin(), samples.end());
    t.median_ms = median(std::move(samples));
    return t;
}

/// Run `launch()` `warmup` times untimed, then `repeats` times, each bracketed by CUDA events
/// on the default stream. `launch` must enqueue the same work every time (and check its launch).
/// Why the median: one slow repeat (a clock change, another process) does not move it.
template <class Launch>
Timing time_gpu(Launch&& launch, int warmup, int repeats) {
    if (repeats < 1) throw std::invalid_argument("time_gpu: repeats must be at least 1");
    for (int i = 0; i < warmup; ++i) launch();
    CUDA_CHECK(cudaDeviceSynchronize());

    CudaEvent start, stop;
    std::vector<double> samples;
    samples.reserve(repeats);
    for (int i = 0; i < repeats; ++i) samples.push_back(time_once(start, stop, launch));
    return summarize(std::move(samples));
}

}  // namespace course
