// measure.hpp — the host-only arithmetic of timing: the median of repeats, GB/s and TFLOP/s.
//
// No CUDA here, so programs that time something else (the OpenCL companion of lesson 02)
// report their numbers the same way. timer.cuh, which times CUDA launches, includes it.
#pragma once

#include <vector>

namespace course {

/// Median of a set of samples (the middle one, or the mean of the two middle ones).
double median(std::vector<double> samples);

/// Bytes per millisecond -> GB/s, with GB = 1e9 bytes (not GiB).
inline double gb_per_s(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

/// Floating-point operations per millisecond -> TFLOP/s (1e12).
inline double tflop_per_s(double flops, double ms) { return flops / (ms * 1e-3) / 1e12; }

}  // namespace course
