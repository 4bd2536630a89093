// cuda_check.cuh — turn every failing CUDA call into a C++ exception that says what failed.
//
// Why throw instead of exit()? A lesson's doctest check can then report the failure as a
// failed test (with the message below) instead of the whole check binary vanishing.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace course {

/// A failed CUDA runtime call. what() names the expression, file, line, error name and text.
class CudaError : public std::runtime_error {
public:
    CudaError(cudaError_t code, const char* expr, const char* file, int line)
        : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                             " failed: " + cudaGetErrorName(code) + " (" +
                             cudaGetErrorString(code) + ")"),
          code_(code) {}
    cudaError_t code() const { return code_; }

private:
    cudaError_t code_;
};

}  // namespace course

/// Wrap every CUDA runtime call: CUDA_CHECK(cudaMalloc(&p, bytes));
#define CUDA_CHECK(expr)                                                        \
    do {                                                                        \
        cudaError_t course_err_ = (expr);                                       \
        if (course_err_ != cudaSuccess)                                         \
            throw ::course::CudaError(course_err_, #expr, __FILE__, __LINE__);  \
    } while (0)

/// Put this right after every kernel launch: a bad launch configuration (too many threads,
/// too much shared memory) is reported here, not silently ignored.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
