// witness_host.cpp — the speed witness's options in a check built without CUDA (lesson 02's OpenCL
// check, course_host): there is no CUDA kernel to time, so --time-submission and --witness are
// refused with one line, like any other option that does not apply (witness.cpp is the real one).
#include "witness.hpp"

#include "cli.hpp"  // UsageError

namespace course::witness {

void load(const std::string& dir) {
    throw UsageError("--time-submission " + dir + ": this check runs no CUDA kernel (the speed witness times CUDA kernels)");
}

void set_output(const std::string& path) {
    throw UsageError("--witness " + path + ": this check runs no CUDA kernel (the speed witness times CUDA kernels)");
}

}  // namespace course::witness
