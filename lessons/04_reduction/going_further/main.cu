// Lesson 04, going further — two broken barriers, and what the tools and this GPU make of them.
// What it shows: lesson 04's shared-memory tree twice, each with its barrier wrong: left out of
// the loop (a race: compute-sanitizer --tool racecheck reports it, whatever sum comes out), and
// moved inside `if (t < stride)` (a barrier only some threads reach: undefined, which synccheck
// reports; the program waits at most 20 s in case the block hangs). Each runs once, and its
// answer is reported, not judged: a broken kernel may return the right sum.
// Leaves out: the working reductions (lesson 04), grid-wide sync (cooperative launches).
// Read next: lessons/05_tiled_matmul; CUDA C++ Programming Guide, "Synchronization Functions";
// the compute-sanitizer documentation (racecheck, synccheck).
#include "float_sum.hpp"
#include "lesson.cuh"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

constexpr int kBlock = 256;             // threads per block, as in lesson 04
constexpr long long kBlockDepth = 10;   // the depth lesson 04 allows a block's sum (<= 1024 threads: 2^10)

/// The atomic kernels add into *out: zero it first.
template <class Kernel>
void zero_then_launch(Kernel kernel, unsigned grid, const float* in, long long n, float* out) {
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float)));
    kernel<<<grid, kBlock>>>(in, n, out);
    CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- the broken kernels

/// DELIBERATELY BROKEN, never run by the checks. Lesson 04's tree (reduce_tree_shared) with the
/// barrier inside the loop left out: in round k a thread may read s[t + stride] before the thread
/// that owns it has finished round k-1. The answer may well look right on a given run; that is
/// what makes races dangerous. compute-sanitizer --tool racecheck reports it every time.
__global__ void reduce_tree_missing_sync(const float* __restrict__ in, long long n, float* out) {
    __shared__ float s[kBlock];
    const int t = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * kBlock + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = kBlock / 2; stride > 0; stride /= 2)
        if (t < stride) s[t] += s[t + stride];  // <- the missing __syncthreads() belongs after this
    if (t == 0) atomicAdd(out, s[0]);
}

/// DELIBERATELY BROKEN, never run by the checks. The same tree with its barrier moved INSIDE
/// `if (t < stride)`, the "conditional sync" mistake of the Parallel Patterns blog: in each round
/// only the threads that add reach the barrier. CUDA C++ leaves that undefined. What a given GPU
/// does is another matter; this program runs it once, with a time limit, and compute-sanitizer
/// --tool synccheck says what is wrong.
__global__ void reduce_tree_divergent_sync(const float* __restrict__ in, long long n, float* out) {
    __shared__ float s[kBlock];
    const int t = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * kBlock + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = kBlock / 2; stride > 0; stride /= 2) {
        if (t < stride) {
            s[t] += s[t + stride];
            __syncthreads();  // <- WRONG: the threads with t >= stride never arrive here
        }
    }
    if (t == 0) atomicAdd(out, s[0]);
}

// ---------------------------------------------------------------- running them once

/// One run of reduce_tree_missing_sync. Its answer is reported, not
/// judged: whether it comes out right or wrong, only racecheck can say that the code is broken.
int racy_demo(const std::vector<float>& host_in, double reference, double sum_abs) {
    const long long n = static_cast<long long>(host_in.size());
    course::DeviceBuffer<float> in(host_in), out(1);
    out.poison();
    zero_then_launch(reduce_tree_missing_sync, course::ceil_div(n, kBlock), in.data(), n, out.data());
    const double got = out.to_host()[0];
    const bool right = check_sum(got, reference, sum_abs, kBlockDepth + course::ceil_div(n, kBlock), n).pass;
    std::printf("\n--racy: the tree without its loop barrier returned %.9g (%s this run); the reference is %.9g.\n"
                "Right or wrong, the answer does not show the bug: a race can give either on any run.\n"
                "compute-sanitizer --tool racecheck shows where it is.\n",
                got, right ? "within its error bound" : "WRONG", reference);
    return course::kExitOk;
}

/// Waits up to `seconds` for the GPU to finish what was launched. Returns cudaSuccess, the error
/// the work ended with, or cudaErrorNotReady if it is still running: a kernel stuck at a barrier
/// would otherwise hang the program (and cudaDeviceSynchronize with it).
cudaError_t wait_at_most(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
        const cudaError_t state = cudaStreamQuery(nullptr);
        if (state != cudaErrorNotReady || std::chrono::steady_clock::now() > deadline) return state;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

/// One run of reduce_tree_divergent_sync, with a time limit. Whatever it
/// returns is reported, not judged: a wrong barrier can give the right answer.
int divergent_barrier_demo(const std::vector<float>& host_in, double reference, double sum_abs) {
    constexpr double kLimitSeconds = 20;
    const long long n = static_cast<long long>(host_in.size());
    course::DeviceBuffer<float> in(host_in), out(1);
    out.poison();
    zero_then_launch(reduce_tree_divergent_sync, course::ceil_div(n, kBlock), in.data(), n, out.data());
    const cudaError_t state = wait_at_most(kLimitSeconds);
    if (state == cudaErrorNotReady) {
        std::printf("\n--divergent-barrier: the kernel did not finish within %.0f s: a block is stuck at the barrier.\n"
                    "Ending the program, which also ends the kernel (exit code 1).\n", kLimitSeconds);
        std::fflush(stdout);
        std::_Exit(course::kExitFailed);  // no destructors: freeing memory would wait for the stuck kernel
    }
    if (state != cudaSuccess) {  // what compute-sanitizer --tool synccheck does: it stops the kernel
        std::printf("\n--divergent-barrier: the kernel was stopped (%s: %s). Under compute-sanitizer that is the\n"
                    "tool stopping it at the barrier errors it reports. Exit code 1.\n",
                    cudaGetErrorName(state), cudaGetErrorString(state));
        return course::kExitFailed;
    }
    const double got = out.to_host()[0];
    const bool right = check_sum(got, reference, sum_abs, kBlockDepth + course::ceil_div(n, kBlock), n).pass;
    std::printf("\n--divergent-barrier: the tree with its barrier inside `if (t < stride)` finished and returned %.9g\n"
                "(%s this run); the reference is %.9g. Finishing, even with the right answer, does not make it\n"
                "correct: a barrier that only some threads of the block reach is undefined behaviour in CUDA C++.\n"
                "compute-sanitizer --tool synccheck reports it.\n",
                got, right ? "within its error bound" : "WRONG", reference);
    return course::kExitOk;
}

// ---------------------------------------------------------------- the program

int lesson(int argc, char** argv) {
    long long n = 4096;
    bool racy = false, divergent = false;
    course::Cli cli("04_reduction_going_further",
                    "Runs lesson 04's tree once with its barrier left out, once with it inside a branch, "
                    "and reports what each returned (run it under compute-sanitizer).");
    cli.option("--n", &n, "number of floats to sum", 1, 1LL << 28)
        .flag("--racy", &racy, "run only the tree with the missing barrier (for racecheck)")
        .flag("--divergent-barrier", &divergent, "run only the tree whose barrier only some threads reach (for synccheck)");
    if (!cli.parse(argc, argv)) return course::kExitOk;
    if (racy && divergent) throw course::UsageError("--racy and --divergent-barrier each run one demo: give one of them, or neither for both");

    // The same input as lesson 04: values in [0, 1), and the double loop as the reference.
    const std::vector<float> host_in = course::random_floats(static_cast<std::size_t>(n), 404, 0.0f, 1.0f);
    double reference = 0;
    for (float v : host_in) reference += v;
    const double sum_abs = sum_abs_cpu(host_in);
    course::require_gpu();
    course::print_device_report(course::query_device());
    if (!divergent) racy_demo(host_in, reference, sum_abs);
    return racy ? course::kExitOk : divergent_barrier_demo(host_in, reference, sum_abs);
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
