// Lesson 05 — matrix multiplication: one dot product per thread, shared-memory tiles, register
// tiles, measured against cuBLAS SGEMM in the same run.
// What it shows: matmul_naive; matmul_tiled<T>, the Programming Guide's idea (T x T tiles of A and
// B staged in shared memory, each element used T times) through a sub-matrix view, for T = 16 (as
// the documents have it) and 32; a traffic model next to the measured speedups, and why they
// disagree; matmul_register_tiled (8 x 8 outputs per thread, 16-byte loads, double-buffered tiles);
// cuBLAS as the ceiling and the FP32 peak above it. The Programming Guide assumes dimensions that
// are multiples of the tile (here any M, N, K); the Parallel Patterns blog's "16x less global
// traffic" holds for the cache-less model, not for time.
// Leaves out: tensor cores, TMA, split-K, autotuning. common/matmul.cuh holds what this lesson
// shares with going_further/ (warp tiles, cp.async, sizes). Read next: going_further/,
// lessons/06_bank_conflicts; CUTLASS's "Efficient GEMM in CUDA".
#include "lesson.cuh"
#include "matmul.cuh"
#include "sm_clock.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

// ---------------------------------------------------------------- a sub-matrix view

/// A row-major matrix that this struct does not own: element (r, c) is data[r * stride + c].
/// Because `stride` stays the parent's row length, a block of a matrix is the same type with
/// another `data` pointer and a smaller extent: block() copies nothing. Unlike the guide's
/// GetSubMatrix, block() clips rows/cols at the parent's edge, so a tile hanging over the
/// border knows how much of it is real and the kernel needs no other bounds arithmetic.
template <class T>
struct MatrixView {
    T* data;
    int rows, cols, stride;

    __host__ __device__ T& at(int r, int c) const { return data[static_cast<long long>(r) * stride + c]; }
    __host__ __device__ bool contains(int r, int c) const { return r < rows && c < cols; }
    /// The tile_rows x tile_cols block at block coordinates (block_row, block_col).
    __host__ __device__ MatrixView block(int block_row, int block_col, int tile_rows, int tile_cols) const {
        const int r0 = block_row * tile_rows, c0 = block_col * tile_cols;
        const int r = rows - r0 < tile_rows ? rows - r0 : tile_rows;
        const int c = cols - c0 < tile_cols ? cols - c0 : tile_cols;
        return {data + static_cast<long long>(r0) * stride + c0, r, c, stride};
    }
};

// ---------------------------------------------------------------- kernels
// C (M x N) = A (M x K) * B (K x N), all row-major fp32. Every kernel handles any M, N, K >= 1.

constexpr int kNaiveBlock = 16;  // 16 x 16 threads, as in the documents

/// One thread, one element of C: K loads of A (along a row) and K loads of B (down a column).
/// Neighbouring threads (threadIdx.x) share the A element and read consecutive B elements.
__global__ void matmul_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = sum;
}

/// T x T threads compute one T x T block of C. Step t loads block (blockIdx.y, t) of A and
/// (t, blockIdx.x) of B into shared memory, one element per thread, then every thread reads a
/// row of one and a column of the other from there: each global element is loaded once per
/// block instead of T times.
template <int T>
__global__ void matmul_tiled(MatrixView<const float> A, MatrixView<const float> B, MatrixView<float> C) {
    // EXERCISE BEGIN 05.tiled
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    const int ty = threadIdx.y, tx = threadIdx.x;
    const MatrixView<float> c_block = C.block(blockIdx.y, blockIdx.x, T, T);
    float sum = 0.0f;
    const int steps = (A.cols + T - 1) / T;
    for (int t = 0; t < steps; ++t) {
        const MatrixView<const float> a_block = A.block(blockIdx.y, t, T, T);
        const MatrixView<const float> b_block = B.block(t, blockIdx.x, T, T);
        // Outside the matrix we store zeros: they add nothing to the dot product, so the
        // inner loop needs no bounds checks and every thread reaches both barriers.
        As[ty][tx] = a_block.contains(ty, tx) ? a_block.at(ty, tx) : 0.0f;
        Bs[ty][tx] = b_block.contains(ty, tx) ? b_block.at(ty, tx) : 0.0f;
        __syncthreads();  // the tiles are complete
#pragma unroll
        for (int e = 0; e < T; ++e) sum += As[ty][e] * Bs[e][tx];
        __syncthreads();  // everybody is done reading before the next step overwrites them
    }
    if (c_block.contains(ty, tx)) c_block.at(ty, tx) = sum;
    // EXERCISE END
}

// load4 and store4 (common/matmul.cuh): four consecutive floats of a row as one 16-byte access
// when all four exist and the row is 16-byte aligned, element by element at the edges.

constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8;
constexpr int kThreadsX = kBN / kTN, kThreadsY = kBM / kTM, kRegThreads = kThreadsX * kThreadsY;
static_assert(kBM * kBK == 4 * kRegThreads && kBK * kBN == 4 * kRegThreads && kTM == 8 && kTN == 8,
              "each thread loads one float4 of each slab and reads its 8 values of A (of B) as two float4s");

/// Register tiling. A block of 16 x 16 threads computes a 128 x 128 block of C; each thread owns
/// 8 x 8 outputs held in registers. Per step of kBK = 8 along K, the block stages a 128 x 8 slab
/// of A and an 8 x 128 slab of B (one float4 of each per thread); then, for each k, a thread reads
/// 8 values of A and 8 of B from shared memory and does 64 FMAs with them (an outer product):
/// 4 float4 shared loads per 64 FMAs, where matmul_tiled needs 2 shared reads per FMA.
///   * A is stored transposed (As[k][m]) so a thread's 8 values of A are contiguous: float4.
///   * A thread's rows are 2 runs of 4, 64 apart (columns likewise). Within a warp the A reads
///     are then broadcasts and the B reads are consecutive float4s: no bank conflicts, and the
///     final stores of C are coalesced float4s.
///   * Two shared buffers: while the block computes on one slab, each thread already holds the
///     next slab's global loads in registers, and writes them to the other buffer afterwards.
///     One __syncthreads per step suffices: the buffer written in step t was last read in step
///     t-1, and every thread has passed the barrier that ended step t-1.
/// Why these sizes: with 8-deep slabs each thread loads exactly one float4 of each slab, and
/// __launch_bounds__(kRegThreads, 2) makes the compiler fit 2 blocks per SM: 128 registers per
/// thread and no spills (nvcc -Xptxas -v, CUDA 13.0, sm_90). Deeper slabs: notes.md, "Experiments with matmul_register_tiled".
__global__ void __launch_bounds__(kRegThreads, 2)
    matmul_register_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                          int N, int K) {
    // EXERCISE BEGIN 05.register_tiled
    // EXERCISE STUB: const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
    // EXERCISE STUB: for (int m = 0; m < kTM; ++m)
    // EXERCISE STUB:     for (int n = 0; n < kTN; ++n) {
    // EXERCISE STUB:         const int row = blockIdx.y * kBM + ty * kTM + m, col = blockIdx.x * kBN + tx * kTN + n;
    // EXERCISE STUB:         if (row >= M || col >= N) continue;
    // EXERCISE STUB:         float sum = 0.0f;
    // EXERCISE STUB:         for (int k = 0; k < K; ++k) sum += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
    // EXERCISE STUB:         C[static_cast<long long>(row) * N + col] = sum;
    // EXERCISE STUB:     }
    // +4 floats per row of As: the transposing stores of two threads with the same m but k four
    // apart would otherwise hit the same bank. 4 (not 1) keeps every row 16-byte aligned.
    constexpr int kAPad = 4;
    __shared__ __align__(16) float As[2][kBK][kBM + kAPad];
    __shared__ __align__(16) float Bs[2][kBK][kBN];

    const int tid = threadIdx.x;
    const int tx = tid % kThreadsX, ty = tid / kThreadsX;
    const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    const bool a_vec = K % 4 == 0 && aligned16(A);
    const bool b_vec = N % 4 == 0 && aligned16(B);
    const bool c_vec = N % 4 == 0 && aligned16(C);
    // This thread's float4 of each slab: A[row0 + am][k0 + ak..+3] and B[k0 + bk][col0 + bn..+3].
    const int am = tid / (kBK / 4), ak = (tid % (kBK / 4)) * 4;
    const int bk = tid / (kBN / 4), bn = (tid % (kBN / 4)) * 4;

    float4 a_next, b_next;
    auto fetch = [&](int k0) {  // global memory -> registers
        a_next = load4(A, M, K, row0 + am, k0 + ak, a_vec);
        b_next = load4(B, K, N, k0 + bk, col0 + bn, b_vec);
    };
    auto stash = [&](int buf) {  // registers -> shared memory, A transposed
        As[buf][ak + 0][am] = a_next.x;
        As[buf][ak + 1][am] = a_next.y;
        As[buf][ak + 2][am] = a_next.z;
        As[buf][ak + 3][am] = a_next.w;
        *reinterpret_cast<float4*>(&Bs[buf][bk][bn]) = b_next;
    };

    float acc[kTM][kTN] = {};
    const int steps = (K + kBK - 1) / kBK;
    fetch(0);
    stash(0);
    __syncthreads();
    for (int t = 0; t < steps; ++t) {
        const int buf = t & 1;
        const bool more = t + 1 < steps;
        if (more) fetch((t + 1) * kBK);  // in flight while we compute below
#pragma unroll
        for (int k = 0; k < kBK; ++k) {
            const float4 a0 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4 + 4 * kThreadsY]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4 + 4 * kThreadsX]);
            const float a[kTM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[kTN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int m = 0; m < kTM; ++m)
#pragma unroll
                for (int n = 0; n < kTN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
        }
        if (more) stash(buf ^ 1);
        __syncthreads();
    }

#pragma unroll
    for (int m = 0; m < kTM; ++m) {
        const int row = row0 + (m / 4) * 4 * kThreadsY + ty * 4 + m % 4;
#pragma unroll
        for (int j = 0; j < kTN / 4; ++j) {
            const int col = col0 + j * 4 * kThreadsX + tx * 4;
            const float4 v = make_float4(acc[m][4 * j], acc[m][4 * j + 1], acc[m][4 * j + 2], acc[m][4 * j + 3]);
            store4(C, M, N, row, col, v, c_vec);
        }
    }
    // EXERCISE END
}

// ---------------------------------------------------------------- launchers
// The check (check.cu) calls these same functions, so it tests exactly what runs here.

using Launcher = void (*)(const float* A, const float* B, float* C, int M, int N, int K);

void launch_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(kNaiveBlock, kNaiveBlock);
    const dim3 grid(course::ceil_div(N, kNaiveBlock), course::ceil_div(M, kNaiveBlock));
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
    CUDA_CHECK_LAUNCH();
}

template <int T>
void launch_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    const MatrixView<const float> a{A, M, K, K}, b{B, K, N, N};
    const MatrixView<float> c{C, M, N, N};
    const dim3 block(T, T);
    const dim3 grid(course::ceil_div(N, T), course::ceil_div(M, T));
    matmul_tiled<T><<<grid, block>>>(a, b, c);
    CUDA_CHECK_LAUNCH();
}

void launch_register_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 grid(course::ceil_div(N, kBN), course::ceil_div(M, kBM));
    matmul_register_tiled<<<grid, kRegThreads>>>(A, B, C, M, N, K);
    CUDA_CHECK_LAUNCH();
}

struct Variant {
    const char* name;
    Launcher launch;
    int tile_rows, tile_cols;  // the block of C one thread block computes: sets its global traffic
};
/// The kernels of this lesson, in the order they are presented.
const Variant kVariants[] = {
    {"matmul_naive", launch_naive, 1, 1},
    {"matmul_tiled<16>", launch_tiled<16>, 16, 16},
    {"matmul_tiled<32>", launch_tiled<32>, 32, 32},
    {"register_tiled 128x128x8 8x8", launch_register_tiled, kBM, kBN},
};

// ---------------------------------------------------------------- the traffic model

/// Bytes a kernel would read from global memory if nothing were cached: a block computing a
/// tile_rows x tile_cols block of C reads tile_rows rows of A and tile_cols columns of B, all K
/// long, so A is read once per block column and B once per block row. The naive kernel is the
/// 1 x 1 case: 2 * M * N * K floats.
double traffic_model_bytes(long long M, long long N, long long K, int tile_rows, int tile_cols) {
    const long long block_cols = (N + tile_cols - 1) / tile_cols, block_rows = (M + tile_rows - 1) / tile_rows;
    return 4.0 * (static_cast<double>(M) * K * block_cols + static_cast<double>(K) * N * block_rows);
}

// ---------------------------------------------------------------- the lesson

int lesson(int argc, char** argv) {
    long long M = 4096, N = 4096, K = 4096;
    std::string only;
    bool tf32 = false, no_clock = false;
    course::TimingOptions timing;
    course::Cli cli("05_tiled_matmul", "C = A * B in fp32: naive, shared-memory tiles, register tiles and cuBLAS, "
                                       "each checked against a CPU double reference and timed.");
    cli.option("--m", &M, "rows of A and C", 1, 65536)
        .option("--n", &N, "columns of B and C", 1, 65536)
        .option("--k", &K, "columns of A, rows of B", 1, 65536)
        .option("--kernel", &only, "time only the lesson kernels whose name contains this text (cuBLAS always runs)")
        .flag("--tf32", &tf32, "also time cuBLAS with TF32 tensor cores (another precision: for reference only)")
        .flag("--no-clock", &no_clock, "do not read the SM clock (each reading runs a kernel for 60 ms more: "
                                       "too many launches under a profiler)");
    course::add_timing_options(cli, timing);
    if (!cli.parse(argc, argv)) return course::kExitOk;
    if (M * K > INT32_MAX || K * N > INT32_MAX || M * N > INT32_MAX)
        throw course::UsageError("each of m*k, k*n and m*n must stay below 2^31 elements");
    std::vector<const Variant*> chosen;
    for (const Variant& v : kVariants)
        if (std::string(v.name).find(only) != std::string::npos) chosen.push_back(&v);
    if (chosen.empty()) throw course::UsageError("--kernel '" + only + "' matches no kernel of this lesson");

    // The prediction first (host arithmetic); the measurement it is compared with comes last.
    std::printf("== the traffic model: bytes read from global memory if no cache helped ==\n");
    for (const Variant* v : chosen)
        std::printf("  %-34s %8.1f GB\n", v->name, traffic_model_bytes(M, N, K, v->tile_rows, v->tile_cols) / 1e9);
    std::printf("\n");

    course::require_gpu();
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);
    course::require_device_memory(4.0 * (M * K + K * N + M * N), "A, B and C");

    Problem p(static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), 51);
    std::printf("Checking %zu outputs (%s) against a CPU double reference;\n"
                "error bound %.3g = gamma_K * max_ij sum_k |a_ik * b_kj| (gamma_K = K u / (1 - K u), u = 2^-24; plus the\n"
                "reference's own error): a correct kernel stays inside it; a missing term fails for certain above twice it.\n\n",
                p.where.size(), p.full ? "all of them" : "corners, edges and random points: the full CPU product is too slow",
                p.tolerance().abs_tol);

    bool all_ok = true;
    const course::SmClock clock;
    course::ResultsTable table(std::to_string(M) + " x " + std::to_string(N) + " x " + std::to_string(K) +
                                   " (M x N x K) fp32 matmul, median of " + std::to_string(timing.repeats),
                               "TFLOP/s");
    // Check, time, then read the SM clock while the same launch runs back to back.
    struct Measured {
        double ms, tflops, clock_mhz;
    };
    auto measure = [&](const std::string& name, auto&& launch, course::Tolerance tol, bool ceiling) {
        const std::string check = p.verify(name, launch, tol);
        all_ok &= check == "ok";
        const course::Timing t = course::time_gpu(launch, timing.warmup, timing.repeats);
        const double tflops = course::tflop_per_s(p.flops(), t.median_ms);
        table.add(name, t.median_ms, tflops, check, ceiling);
        return Measured{t.median_ms, tflops, no_clock ? 0.0 : course::median_sm_clock_during(clock, launch, t.median_ms)};
    };

    const CublasHandle cublas;  // default math: true fp32, no tensor cores
    auto run_cublas = [&] { launch_cublas(cublas, p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k); };
    const Measured cublas_run = measure("cuBLAS SGEMM (fp32)", run_cublas, p.tolerance(), true);

    std::vector<Measured> runs;
    for (const Variant* v : chosen) {
        auto run = [&] { v->launch(p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k); };
        runs.push_back(measure(v->name, run, p.tolerance(), false));
    }

    if (tf32) {
        const CublasHandle cublas_tf32(CUBLAS_TF32_TENSOR_OP_MATH);
        auto run = [&] { launch_cublas(cublas_tf32, p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k); };
        measure("cuBLAS TF32 (other precision, not comparable)", run, p.tolerance(std::ldexp(1.0, -9)), false);
    }
    table.print();
    if (!timing.csv.empty()) table.append_csv(timing.csv, "05_tiled_matmul", gpu.short_description());

    // The traffic model next to what was measured.
    std::printf("\n== global traffic without caches vs measured time ==\n");
    std::printf("  %-34s %16s %12s %18s\n", "kernel", "model reads (GB)", "vs naive", "speedup vs naive");
    const double naive_bytes = traffic_model_bytes(M, N, K, 1, 1);
    const bool have_naive = chosen.front() == &kVariants[0];
    for (std::size_t v = 0; v < chosen.size(); ++v) {
        const double bytes = traffic_model_bytes(M, N, K, chosen[v]->tile_rows, chosen[v]->tile_cols);
        std::printf("  %-34s %16.1f %11.1fx", chosen[v]->name, bytes / 1e9, naive_bytes / bytes);
        if (have_naive) std::printf(" %17.2fx\n", runs[0].ms / runs[v].ms);
        else std::printf(" %18s\n", "-");
    }
    std::printf("  The model counts every load as a DRAM read. In reality L1 and L2 serve most of the naive kernel's\n"
                "  re-reads; the tiled kernels wait less on global loads, more on shared memory (two reads per FMA).\n"
                "  Register tiles cut the loads per FMA and close most of the gap to cuBLAS.\n");

    // cuBLAS is the ceiling of this lesson, not of the GPU: the FP32 peak is.
    std::printf("\n== against the FP32 peak ==\n");
    const int lanes = fp32_lanes_per_sm(gpu.cc_major, gpu.cc_minor);
    double clock_mhz = cublas_run.clock_mhz;
    if (clock_mhz > 0) {
        std::printf("  SM clock %.0f MHz: NVML's SM clock, median of its readings while cuBLAS SGEMM ran back to back\n"
                    "  for 60 ms right after its timing (each kernel's own reading is in the last column).\n",
                    clock_mhz);
    } else {
        const std::string why = no_clock ? "--no-clock" : clock.why_not();
        int khz = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
        clock_mhz = khz / 1000.0;
        std::printf("  SM clock %.0f MHz: the maximum the driver reports (%s), so the peak is an upper bound.\n",
                    clock_mhz, why.c_str());
    }
    double peak = 0;
    if (lanes > 0) {
        peak = fp32_peak_tflops(gpu.sm_count, lanes, clock_mhz);
        std::printf("  FP32 peak = %d SMs x %d FP32 lanes per SM (sm_%d%d) x 2 FLOP per FMA x %.0f MHz = %.1f TFLOP/s\n",
                    gpu.sm_count, lanes, gpu.cc_major, gpu.cc_minor, clock_mhz, peak);
    } else {
        std::printf("  FP32 peak unknown: this program has no FP32 lane count for sm_%d%d.\n", gpu.cc_major, gpu.cc_minor);
    }
    std::printf("  %-34s %10s %12s %11s %15s\n", "kernel", "TFLOP/s", "% of cuBLAS", "% of peak", "SM clock (MHz)");
    auto peak_row = [&](const char* name, const Measured& r) {
        std::printf("  %-34s %10.1f %11.1f%%", name, r.tflops, 100.0 * r.tflops / cublas_run.tflops);
        if (peak > 0) std::printf(" %10.1f%%", 100.0 * r.tflops / peak);
        else std::printf(" %11s", "-");
        if (r.clock_mhz > 0) std::printf(" %15.0f\n", r.clock_mhz);
        else std::printf(" %15s\n", "-");
    };
    peak_row("cuBLAS SGEMM (fp32)", cublas_run);
    for (std::size_t v = 0; v < chosen.size(); ++v) peak_row(chosen[v]->name, runs[v]);

    std::size_t fastest = 0;
    for (std::size_t v = 1; v < runs.size(); ++v)
        if (runs[v].ms < runs[fastest].ms) fastest = v;
    std::printf("\nFastest lesson kernel: %s, %.1f%% of cuBLAS SGEMM", chosen[fastest]->name,
                100.0 * cublas_run.ms / runs[fastest].ms);
    if (peak > 0) std::printf(", %.1f%% of the FP32 peak", 100.0 * runs[fastest].tflops / peak);
    std::printf(".\n%s\n", all_ok ? "All outputs match the CPU reference." : "SOME OUTPUTS ARE WRONG (see above).");
    return all_ok ? course::kExitOk : course::kExitFailed;
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
