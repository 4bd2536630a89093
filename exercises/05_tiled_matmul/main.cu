// Exercise 05_tiled_matmul: generated from lessons/05_tiled_matmul/main.cu by scripts/make_exercises.cmake.
// Write the code each TODO(05.*) asks for; exercises/05_tiled_matmul/README.md says what "solved" means
// and has hints. Check it: scripts/exercises.sh check 05    All of them: scripts/exercises.sh
// Lesson 05 — matrix multiplication: from one dot product per thread, to shared-memory tiles,
// to register tiles, measured against cuBLAS in the same run.
//
// What it shows:
//   * matmul_naive: each thread reads a row of A and a column of B straight from global memory;
//   * matmul_tiled<T>: the programming guide's idea — a block stages T x T tiles of A and B in
//     shared memory and every element it loads is used T times — written with a non-owning
//     sub-matrix view (MatrixView::block), for T = 16 (the sources) and T = 32;
//   * a traffic model (bytes each kernel would read from DRAM if there were no caches) printed
//     next to the measured speedups, and why the two disagree;
//   * matmul_register_tiled: each thread keeps an 8 x 8 block of C in registers, reads its
//     operands with 16-byte loads, and overlaps the next global load with the current arithmetic
//     (double-buffered shared tiles): the road to library speed;
//   * cuBLAS SGEMM (plain fp32 math) as the ceiling, timed and checked in the same run.
// Where the sources are wrong: the guide's kernels assume every dimension is a multiple of the
//   tile (here every kernel takes any M, N, K); the blog's "16x less global traffic" is true of
//   the cache-less model, not of what reaches L2 and DRAM, nor of time (the caches already absorb
//   most of the naive kernel's re-reads).
// What it leaves out: tensor cores (TF32, BF16: another precision, another lesson), warp-level
//   tiling, asynchronous copies (cp.async, TMA), split-K for skinny shapes, autotuning.
// Read next: lessons/06_bank_conflicts; the CUDA C++ Programming Guide, "Shared Memory";
//   CUTLASS's "Efficient GEMM in CUDA" (docs/efficient_gemm.md).
#include "lesson.cuh"

#include <cublas_v2.h>

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

constexpr int kNaiveBlock = 16;  // 16 x 16 threads, as in the sources

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
    // TODO(05.tiled): stage T x T tiles of A and B in shared memory, one element per thread, and sum over the tiles.
    //   Use MatrixView::block and contains(): store 0 outside the matrices; two barriers per step along K.
    //   Check: GPU test cases "every kernel matches the CPU double reference..." (1x1x1 to 1024x768x512) and "no kernel writes past the end of C".
}

/// Four consecutive floats m[row][col..col+3] of a rows x cols matrix, zeros outside it. One
/// 16-byte load when all four exist and are 16-byte aligned (col is a multiple of 4 here, so
/// that is `cols % 4 == 0` plus an aligned base pointer), four guarded loads otherwise.
__device__ __forceinline__ float4 load4(const float* __restrict__ m, int rows, int cols, int row, int col,
                                        bool vector_ok) {
    if (row >= rows) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const float* p = m + static_cast<long long>(row) * cols + col;
    if (vector_ok && col + 3 < cols) return *reinterpret_cast<const float4*>(p);
    return make_float4(col + 0 < cols ? p[0] : 0.0f, col + 1 < cols ? p[1] : 0.0f,  //
                       col + 2 < cols ? p[2] : 0.0f, col + 3 < cols ? p[3] : 0.0f);
}

/// The mirror image of load4 for C: one 16-byte store when possible, else only the elements inside.
__device__ __forceinline__ void store4(float* __restrict__ m, int rows, int cols, int row, int col, float4 v,
                                       bool vector_ok) {
    if (row >= rows) return;
    float* p = m + static_cast<long long>(row) * cols + col;
    if (vector_ok && col + 3 < cols) {
        *reinterpret_cast<float4*>(p) = v;
        return;
    }
    if (col + 0 < cols) p[0] = v.x;
    if (col + 1 < cols) p[1] = v.y;
    if (col + 2 < cols) p[2] = v.z;
    if (col + 3 < cols) p[3] = v.w;
}

__device__ __forceinline__ bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

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
/// thread and no spills (nvcc -Xptxas -v, CUDA 13.0, sm_90). Deeper slabs: the README's "Try this".
__global__ void __launch_bounds__(kRegThreads, 2)
    matmul_register_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                          int N, int K) {
    // TODO(05.register_tiled): OPTIONAL STRETCH. The stub below is correct and slow; make it fast without breaking it.
    //   256 threads, 128 x 128 of C per block, 8 x 8 per thread in registers, 8-deep slabs of A and B in shared memory.
    //   Check: the same GPU test cases keep it correct; run the exercise binary to see its speed beside cuBLAS.
    const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
    for (int m = 0; m < kTM; ++m)
        for (int n = 0; n < kTN; ++n) {
            const int row = blockIdx.y * kBM + ty * kTM + m, col = blockIdx.x * kBN + tx * kTN + n;
            if (row >= M || col >= N) continue;
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
            C[static_cast<long long>(row) * N + col] = sum;
        }
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

// ---------------------------------------------------------------- cuBLAS, the ceiling

void cublas_check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
                                 cublasGetStatusString(status) + ")");
}

/// Owns a cuBLAS handle with a chosen math mode. CUBLAS_DEFAULT_MATH keeps SGEMM in true fp32;
/// CUBLAS_TF32_TENSOR_OP_MATH lets it round inputs to TF32 (10-bit mantissa) for tensor cores.
struct CublasHandle {
    cublasHandle_t handle = nullptr;
    explicit CublasHandle(cublasMath_t math = CUBLAS_DEFAULT_MATH) {
        cublas_check(cublasCreate(&handle), "cublasCreate");
        const cublasStatus_t status = cublasSetMathMode(handle, math);
        if (status != CUBLAS_STATUS_SUCCESS) cublasDestroy(handle);
        cublas_check(status, "cublasSetMathMode");
    }
    ~CublasHandle() { cublasDestroy(handle); }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
};

/// cuBLAS is column-major. Read column-major, our row-major C is C^T (N x M), and C^T = B^T A^T,
/// where B^T and A^T are exactly our row-major B and A read column-major. So we ask for the
/// N x M product "B times A" with no transposes and no copies.
void launch_cublas(const CublasHandle& cublas, const float* A, const float* B, float* C, int M, int N, int K) {
    const float alpha = 1.0f, beta = 0.0f;
    cublas_check(cublasSgemm(cublas.handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N),
                 "cublasSgemm");
}

// ---------------------------------------------------------------- CPU side

/// One element of the reference, in double, and the sum of |a_ik * b_kj| that bounds its error.
struct RefEntry {
    double value, abs_sum;
};
RefEntry reference_entry(const std::vector<float>& A, const std::vector<float>& B, int N, int K, int i, int j) {
    RefEntry e{0.0, 0.0};
    for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(A[static_cast<std::size_t>(i) * K + k]) * B[static_cast<std::size_t>(k) * N + j];
        e.value += p;
        e.abs_sum += std::fabs(p);
    }
    return e;
}

/// The full product in double (loop order i, k, j so B and C are walked along rows).
struct Reference {
    std::vector<double> c;
    double max_abs_sum = 0;  // max over (i, j) of sum_k |a_ik * b_kj|
};
Reference matmul_cpu(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K) {
    Reference r{std::vector<double>(static_cast<std::size_t>(M) * N, 0.0), 0.0};
    std::vector<double> abs_sum(static_cast<std::size_t>(N));
    for (int i = 0; i < M; ++i) {
        double* c = &r.c[static_cast<std::size_t>(i) * N];
        std::fill(abs_sum.begin(), abs_sum.end(), 0.0);
        for (int k = 0; k < K; ++k) {
            const double a = A[static_cast<std::size_t>(i) * K + k];
            const float* b = &B[static_cast<std::size_t>(k) * N];
            for (int j = 0; j < N; ++j) {
                c[j] += a * b[j];
                abs_sum[j] += std::fabs(a * b[j]);
            }
        }
        for (double s : abs_sum) r.max_abs_sum = std::max(r.max_abs_sum, s);
    }
    return r;
}

/// How far an fp32 result may lie from the exact one. A dot product of length K summed in fp32
/// in any order (FMA or not, blocked or split) is within gamma_K * sum_k |a_k b_k| of the truth,
/// gamma_K ~ K * 2^-24 (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1); +2
/// covers rounding the result to float. `input_rel_error` adds what rounding the inputs costs
/// (0 for fp32; about 2^-9 per product when cuBLAS rounds them to TF32). A bound, not a guess:
/// a correct kernel can never fail it, and a missing or wrong term of size > bound always does.
course::Tolerance matmul_tolerance(int K, double max_abs_sum, double input_rel_error = 0.0) {
    const double u = std::ldexp(1.0, -24);
    return {0.0, (input_rel_error + (K + 2) * u) * max_abs_sum};
}

/// Bytes a kernel would read from global memory if nothing were cached: a block computing a
/// tile_rows x tile_cols block of C reads tile_rows rows of A and tile_cols columns of B, all K
/// long, so A is read once per block column and B once per block row. The naive kernel is the
/// 1 x 1 case: 2 * M * N * K floats.
double traffic_model_bytes(long long M, long long N, long long K, int tile_rows, int tile_cols) {
    const long long block_cols = (N + tile_cols - 1) / tile_cols, block_rows = (M + tile_rows - 1) / tile_rows;
    return 4.0 * (static_cast<double>(M) * K * block_cols + static_cast<double>(K) * N * block_rows);
}

/// Output positions to check when the full CPU product is too slow: the four corners, points
/// along every edge (where partial tiles live), and `random_count` random points.
std::vector<std::pair<int, int>> sample_positions(int M, int N, int random_count, std::uint32_t seed) {
    std::vector<std::pair<int, int>> p = {{0, 0}, {0, N - 1}, {M - 1, 0}, {M - 1, N - 1}};
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> row(0, M - 1), col(0, N - 1);
    for (int e = 0; e < 16; ++e) {
        p.push_back({0, col(gen)});
        p.push_back({M - 1, col(gen)});
        p.push_back({row(gen), 0});
        p.push_back({row(gen), N - 1});
    }
    for (int s = 0; s < random_count; ++s) p.push_back({row(gen), col(gen)});
    return p;
}

// ---------------------------------------------------------------- the lesson

/// Up to this many multiply-adds the CPU computes the whole product (about a second); above it, samples.
constexpr double kFullCheckMacs = 1 << 28;

int lesson(int argc, char** argv) {
    long long M = 4096, N = 4096, K = 4096;
    std::string only;
    bool tf32 = false;
    course::TimingOptions timing;
    course::Cli cli("05_tiled_matmul", "C = A * B in fp32: naive, shared-memory tiles, register tiles and cuBLAS, "
                                       "each checked against a CPU double reference and timed.");
    cli.option("--m", &M, "rows of A and C", 1, 65536)
        .option("--n", &N, "columns of B and C", 1, 65536)
        .option("--k", &K, "columns of A, rows of B", 1, 65536)
        .option("--kernel", &only, "time only the lesson kernels whose name contains this text (cuBLAS always runs)")
        .flag("--tf32", &tf32, "also time cuBLAS with TF32 tensor cores (another precision: for reference only)");
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
    const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
    course::require_device_memory(4.0 * (M * K + K * N + M * N), "A, B and C");

    const std::vector<float> host_a = course::random_floats(M * K, 51), host_b = course::random_floats(K * N, 52);
    // The expected values: every element for small problems, a sample for large ones.
    const bool full = static_cast<double>(M) * N * K <= kFullCheckMacs;
    std::vector<std::pair<int, int>> where;
    std::vector<double> expected;
    double max_abs_sum = 0;
    if (full) {
        Reference ref = matmul_cpu(host_a, host_b, m, n, k);
        expected = std::move(ref.c);
        max_abs_sum = ref.max_abs_sum;
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) where.push_back({i, j});
    } else {
        where = sample_positions(m, n, 256, 53);
        for (const auto& [i, j] : where) {
            const RefEntry e = reference_entry(host_a, host_b, n, k, i, j);
            expected.push_back(e.value);
            max_abs_sum = std::max(max_abs_sum, e.abs_sum);
        }
    }
    std::printf("Checking %zu outputs (%s) against a CPU double reference;\n"
                "error bound %.3g = (K + 2) * 2^-24 * max_ij sum_k |a_ik * b_kj|.\n\n",
                where.size(), full ? "all of them" : "corners, edges and random points: the full CPU product is too slow",
                matmul_tolerance(k, max_abs_sum).abs_tol);

    course::DeviceBuffer<float> a(host_a), b(host_b), c(static_cast<std::size_t>(M) * N);
    bool all_ok = true;
    // Poison C, run once, compare the chosen positions; returns "ok" or "FAIL" (and says why).
    auto verify = [&](const std::string& name, auto&& launch, course::Tolerance tol) {
        c.poison();
        launch();
        const std::vector<float> out = c.to_host();
        std::vector<float> got;
        got.reserve(where.size());
        for (const auto& [i, j] : where) got.push_back(out[static_cast<std::size_t>(i) * n + j]);
        const course::VerifyResult r = course::compare_close(got, expected, 1, tol);
        if (!r.ok()) {
            const auto [i, j] = where[r.first ? r.first->index : 0];
            std::printf("%s: %s (first bad element is C[%d][%d])\n", name.c_str(), r.summary().c_str(), i, j);
        }
        all_ok &= r.ok();
        return std::string(r.ok() ? "ok" : "FAIL");
    };

    const double flops = 2.0 * M * N * K;
    course::ResultsTable table(std::to_string(M) + " x " + std::to_string(N) + " x " + std::to_string(K) +
                                   " (M x N x K) fp32 matmul, median of " + std::to_string(timing.repeats),
                               "TFLOP/s");
    auto record = [&](const std::string& name, auto&& launch, const std::string& check, bool ceiling) {
        const course::Timing t = course::time_gpu(launch, timing.warmup, timing.repeats);
        table.add(name, t.median_ms, course::tflop_per_s(flops, t.median_ms), check, ceiling);
        return t.median_ms;
    };

    const CublasHandle cublas;  // default math: true fp32, no tensor cores
    auto run_cublas = [&] { launch_cublas(cublas, a.data(), b.data(), c.data(), m, n, k); };
    const double cublas_ms =
        record("cuBLAS SGEMM (fp32)", run_cublas, verify("cuBLAS SGEMM", run_cublas, matmul_tolerance(k, max_abs_sum)), true);

    std::vector<double> ms(chosen.size());
    for (std::size_t v = 0; v < chosen.size(); ++v) {
        auto run = [&] { chosen[v]->launch(a.data(), b.data(), c.data(), m, n, k); };
        ms[v] = record(chosen[v]->name, run, verify(chosen[v]->name, run, matmul_tolerance(k, max_abs_sum)), false);
    }

    if (tf32) {
        const CublasHandle cublas_tf32(CUBLAS_TF32_TENSOR_OP_MATH);
        auto run = [&] { launch_cublas(cublas_tf32, a.data(), b.data(), c.data(), m, n, k); };
        const course::Tolerance tol = matmul_tolerance(k, max_abs_sum, std::ldexp(1.0, -9));
        record("cuBLAS TF32 (other precision, not comparable)", run, verify("cuBLAS TF32", run, tol), false);
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
        if (have_naive) std::printf(" %17.2fx\n", ms[0] / ms[v]);
        else std::printf(" %18s\n", "-");
    }
    std::printf("  The model counts every load as a DRAM read. In reality L1 and L2 serve most of the naive kernel's\n"
                "  re-reads; the tiled kernels wait less on global loads, more on shared memory (two reads per FMA).\n"
                "  Register tiles cut the loads per FMA and close most of the gap to cuBLAS.\n\n");

    const std::size_t fastest = std::min_element(ms.begin(), ms.end()) - ms.begin();
    std::printf("Fastest lesson kernel: %s, %.1f%% of cuBLAS SGEMM.\n", chosen[fastest]->name, 100.0 * cublas_ms / ms[fastest]);
    std::printf("%s\n", all_ok ? "All outputs match the CPU reference." : "SOME OUTPUTS ARE WRONG (see above).");
    return all_ok ? course::kExitOk : course::kExitFailed;
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
