// Checks for lesson 04's going-further companion. This file #includes the companion's own main.cu
// (CMake passes its path as COURSE_LESSON_SOURCE), so the code tested is the code it runs. The two
// deliberately broken kernels (reduce_tree_missing_sync, reduce_tree_divergent_sync) are never run
// here: these checks also run under compute-sanitizer's racecheck and synccheck, which must stay clean.
#include COURSE_LESSON_SOURCE

#include "testing.hpp"

#include <cstdint>

namespace {

/// Spins for `cycles` SM clock cycles: a kernel that is still running when the host looks.
__global__ void spin(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

}  // namespace

TEST_CASE("the command line refuses both demos at once, and a bad n, with a UsageError") {
    const char* both[] = {"04_reduction_going_further", "--racy", "--divergent-barrier"};
    CHECK_THROWS_AS(lesson(3, const_cast<char**>(both)), course::UsageError);
    for (const char* bad : {"0", "-3", "abc", "2^31"}) {
        INFO("bad value: ", std::string(bad));
        const char* args[] = {"04_reduction_going_further", "--n", bad};
        CHECK_THROWS_AS(lesson(3, const_cast<char**>(args)), course::UsageError);
    }
}

GPU_TEST_CASE("one atomicAdd per element is exact on small integers, output poisoned first") {
    for (const long long n : {1LL, 1000LL, (1LL << 20) + 3}) {
        CAPTURE(n);
        const std::vector<int> ints = course::random_ints(static_cast<std::size_t>(n), course::seeded(7u + static_cast<std::uint32_t>(n)), -8, 8);
        const std::vector<float> x(ints.begin(), ints.end());  // every partial sum stays far below 2^24: exact
        course::DeviceBuffer<float> in(x), out(1);
        out.poison();
        zero_then_launch(reduce_atomic_per_element, course::ceil_div(n, kBlock), in.data(), n, out.data());
        CHECK(static_cast<double>(course::submitted(out.to_host())[0]) == sum_cpu<double>(x));
    }
}

GPU_TEST_CASE("wait_at_most gives up on a kernel still running, and reports success once it is done") {
    int device = 0, khz = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));  // the rated peak: an upper bound
    spin<<<1, 1>>>(static_cast<long long>(khz) * 1000);                      // at least about 1 s
    CUDA_CHECK_LAUNCH();
    CHECK(course::submitted(wait_at_most(0.05)) == cudaErrorNotReady);
    CHECK(course::submitted(wait_at_most(60)) == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);
}
