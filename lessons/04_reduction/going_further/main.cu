// Lesson 04, going further — what the documents claim about a sum, run: a float loop on the CPU,
// one atomicAdd per element against it, and two broken barriers under compute-sanitizer.
// What it shows: the CPU loop in float stops growing at 2^24 (floats there are 2 apart) while the
// double loop, the lesson's reference, does not; one atomicAdd per element (the Parallel Patterns
// blog's "6x faster than the CPU") timed beside one CPU core; lesson 04's tree with its barrier
// left out (a race: racecheck reports it, whatever sum comes out) and moved inside
// `if (t < stride)` (undefined: synccheck reports it; the program waits at most 20 s in case the
// block hangs). A broken kernel's answer is reported, not judged: it may be right.
// Leaves out: the working reductions (lesson 04), grid-wide sync (cooperative launches).
// Read next: lessons/05_tiled_matmul; CUDA C++ Programming Guide, "Synchronization Functions";
// the compute-sanitizer documentation (racecheck, synccheck).
#include "float_sum.hpp"
#include "lesson.cuh"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

constexpr long long kDefaultN = 1LL << 26;  // as lesson 04: 256 MiB
constexpr int kBlock = 256;                 // threads per block, as in lesson 04

/// The kernels add into *out: zero it first.
template <class Kernel>
void zero_then_launch(Kernel kernel, unsigned grid, const float* in, long long n, float* out) {
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float)));
    kernel<<<grid, kBlock>>>(in, n, out);
    CUDA_CHECK_LAUNCH();
}

/// Lesson 04's step 1: every thread adds its element straight into the result, one at a time.
__global__ void reduce_atomic_per_element(const float* __restrict__ in, long long n, float* out) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, in[i]);
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
    long long n = kDefaultN;
    bool racy = false, divergent = false;
    course::TimingOptions timing;
    course::Cli cli("04_reduction_going_further",
                    "Sums n floats on the CPU in float and in double, times one atomicAdd per element against "
                    "the float loop, then runs lesson 04's tree with a missing and with a divergent barrier.");
    cli.option("--n", &n, "number of floats to sum (2^26 = 256 MiB)", 1, 2147483647)
        .flag("--racy", &racy, "after the CPU sums, run only the tree with the missing barrier (for racecheck)")
        .flag("--divergent-barrier", &divergent,
              "after the CPU sums, run only the tree whose barrier only some threads reach (for synccheck)");
    course::add_timing_options(cli, timing);
    if (!cli.parse(argc, argv)) return course::kExitOk;
    if (racy && divergent) throw course::UsageError("--racy and --divergent-barrier each run one demo: give one of them");
    if (racy || divergent) cli.note_ignored(racy ? "--racy" : "--divergent-barrier", {"--warmup", "--repeats"});
    cli.note_ignored("this program (it prints no results table)", {"--csv"});

    // Whether the GPU part can run is known before the CPU part starts. Without a GPU the CPU sums
    // still run, up to the default size: for a larger n, filling gigabytes on the host only to say
    // then that there is no GPU would take long and could exhaust a small machine's memory.
    const std::string no_gpu = course::gpu_unavailable_reason();
    if (!no_gpu.empty() && n > kDefaultN)
        throw course::NoGpuError(no_gpu + "; without a GPU the CPU sums run only up to --n " + std::to_string(kDefaultN));
    if (no_gpu.empty()) course::require_device_memory(4.0 * n + (1 << 20), std::to_string(n) + " floats");

    // The same input as lesson 04: values in [0, 1), all positive, so the float loop's stall shows.
    const std::vector<float> host_in = course::random_floats(static_cast<std::size_t>(n), 404, 0.0f, 1.0f);
    const double sum_abs = sum_abs_cpu(host_in);
    auto host_ms = [](auto&& work) {  // a host timer, one run each: the loops are long enough
        const auto start = std::chrono::steady_clock::now();
        work();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    float cpu_float = 0;
    double reference = 0;
    const double cpu_float_ms = host_ms([&] { cpu_float = sum_cpu<float>(host_in); });
    const double cpu_double_ms = host_ms([&] { reference = sum_cpu<double>(host_in); });
    std::printf("CPU, one core: float accumulator %.9g, double accumulator %.9g\n", cpu_float, reference);

    // Everything above ran on the CPU; from here on the GPU is needed.
    if (!no_gpu.empty()) throw course::NoGpuError(no_gpu);
    course::print_device_report(course::query_device());
    if (racy) return racy_demo(host_in, reference, sum_abs);
    if (divergent) return divergent_barrier_demo(host_in, reference, sum_abs);

    // No ceiling here: the ladder and CUB are lesson 04's.
    course::ResultsTable table("sum of " + std::to_string(n) + " floats in [0, 1); GPU: median of " +
                                   std::to_string(timing.repeats) + " runs; CPU: host timer, one run; GB/s of bytes read",
                               "GB/s");
    const double bytes_read = 4.0 * n;
    const SumCheck float_check = check_sum(cpu_float, reference, sum_abs, n, n);
    table.add("CPU loop, float accumulator", cpu_float_ms, course::gb_per_s(bytes_read, cpu_float_ms), float_check.text);
    table.add("CPU loop, double accumulator (the reference)", cpu_double_ms, course::gb_per_s(bytes_read, cpu_double_ms), "-");
    course::DeviceBuffer<float> in(host_in), out(1);
    auto atomic_sum = [&] { zero_then_launch(reduce_atomic_per_element, course::ceil_div(n, kBlock), in.data(), n, out.data()); };
    out.poison();  // a kernel that never writes the result leaves a NaN, which fails
    atomic_sum();
    const SumCheck atomic_check = check_sum(out.to_host()[0], reference, sum_abs, n, n);
    const double atomic_ms = course::time_gpu(atomic_sum, timing.warmup, timing.repeats).median_ms;
    table.add("atomic_per_element (+memset)", atomic_ms, course::gb_per_s(bytes_read, atomic_ms), atomic_check.text);
    table.print();
    std::printf("\nOne atomicAdd per element: %.3f ms on the GPU; the float loop: %.3f ms on one CPU core "
                "(host timer).\nHere the atomic version is %.1fx %s than the CPU.\n",
                atomic_ms, cpu_float_ms, std::max(atomic_ms, cpu_float_ms) / std::min(atomic_ms, cpu_float_ms),
                atomic_ms > cpu_float_ms ? "slower" : "faster");
    if (!atomic_check.pass) return course::kExitFailed;

    racy_demo(host_in, reference, sum_abs);
    return divergent_barrier_demo(host_in, reference, sum_abs);
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
