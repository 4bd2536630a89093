// test_main.cpp — the main() of every lesson check: doctest, plus honest GPU skipping.
//
//   check --host   run the host-only test cases (CPU references, models, parsing)
//   check --gpu    run the GPU test cases; with no usable GPU print why and exit 77, which
//                  CTest is told (SKIP_RETURN_CODE) to count as "skipped", never as "passed".
//                  With COURSE_REQUIRE_GPU=1 in the environment a missing GPU fails instead
//                  (scripts/gpu_check.sh sets it, so a GPU run can never silently skip).
//   check          everything; GPU test cases are left out, with a notice, if there is no GPU.
// A GPU test case that runs and hands nothing to course::submitted fails the run, unless it is
// declared the course's own (OWN_GPU_TEST_CASE, harness/testing.hpp): graded, it would judge nothing.
// Any other argument goes to doctest (--test-case=..., --success, --help, ...). The policy itself
// is harness/check_main.hpp, shared with the OpenCL companion's check.
#define DOCTEST_CONFIG_IMPLEMENT
#include "check_main.hpp"
#include "device_info.cuh"

int main(int argc, char** argv) {
    return course::run_checks(argc, argv, {"--gpu", "gpu", "GPU", "COURSE_REQUIRE_GPU", true},
                              [] { return course::gpu_unavailable_reason(); });
}
