// lesson.cuh — everything a lesson's main.cu includes from common/, and the runner that
// turns any failure into one clear line and a documented exit code.
#pragma once

#include "cli.hpp"
#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "device_info.cuh"
#include "results.hpp"
#include "timer.cuh"
#include "verify.hpp"

namespace course {

/// Exit codes of every lesson executable (also listed in README.md).
enum ExitCode : int {
    kExitOk = 0,           // every kernel matched the CPU reference
    kExitFailed = 1,       // a kernel's output was wrong, or a CUDA call failed
    kExitUsage = 2,        // bad command line
    kExitNoGpu = 3,        // no usable GPU (no device, no driver, not built for this GPU)
    kExitDoesNotFit = 4,   // the requested size does not fit in the GPU's memory or limits
};

/// Calls body(argc, argv) and maps exceptions to the exit codes above, each with one line on
/// stderr. body returns kExitOk or kExitFailed.
int run_lesson(int argc, char** argv, int (*body)(int, char**));

/// Rounds a / b up, for grid sizes: ceil_div(1000, 256) == 4.
constexpr unsigned ceil_div(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }

}  // namespace course
