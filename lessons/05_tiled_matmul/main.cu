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
//   * cuBLAS SGEMM (plain fp32 math) as the ceiling, timed and checked in the same run, and the
//     GPU's FP32 peak (SMs x FP32 lanes x 2 x the SM clock read through NVML during the run)
//     as the ceiling above it;
//   * going further (the last kernels, a clearly marked section): warp tiles with a fast path
//     for full tiles, 16 x 8 outputs per thread, asynchronous copies (cp.async) three slabs deep
//     with double-buffered operand registers, and 16-deep slabs: from the register-tiled
//     kernel's ~80% of cuBLAS to ~95%, each step explained by a profiler measurement;
//   * --sweep: every kernel from 256^3 to 8192^3 and on two skinny shapes, beside cuBLAS.
// Where the sources are wrong: the guide's kernels assume every dimension is a multiple of the
//   tile (here every kernel takes any M, N, K); the blog's "16x less global traffic" is true of
//   the cache-less model, not of what reaches L2 and DRAM, nor of time (the caches already absorb
//   most of the naive kernel's re-reads).
// What it leaves out: tensor cores (TF32, BF16: another precision, another lesson), the tensor
//   memory accelerator (TMA), split-K for skinny shapes, stream-K or persistent kernels for
//   small grids, autotuning, hand-scheduled SASS.
// Read next: lessons/06_bank_conflicts; the CUDA C++ Programming Guide, "Shared Memory";
//   CUTLASS's "Efficient GEMM in CUDA" (docs/efficient_gemm.md).
#include "lesson.cuh"
#include "sm_clock.cuh"

#include <cublas_v2.h>
#include <cuda_pipeline.h>

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
    // EXERCISE BEGIN 05.tiled: stage T x T tiles of A and B in shared memory, one element per thread, and sum over the tiles.
    // EXERCISE TODO: Use MatrixView::block and contains(): store 0 outside the matrices; two barriers per step along K.
    // EXERCISE TODO: Check: GPU test cases "every kernel matches the CPU double reference..." (1x1x1 to 1024x768x512) and "no kernel writes past the end of C".
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

__host__ __device__ __forceinline__ bool aligned16(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

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
    // EXERCISE BEGIN 05.register_tiled: OPTIONAL STRETCH. The stub below is correct and slow; make it fast without breaking it.
    // EXERCISE TODO: 256 threads, 128 x 128 of C per block, 8 x 8 per thread in registers, 8-deep slabs of A and B in shared memory.
    // EXERCISE TODO: Check: the same GPU test cases keep it correct; run the exercise binary to see its speed beside cuBLAS.
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

// ================================================================ going further: past the register tiles
// The kernels below take the register-tiled kernel the rest of the way to cuBLAS, one change per
// step; the README shows, for each step, the profiler measurement (ncu.sh) that explains it.
//   warp_tiled 128x128x8 8x8    the register-tiled kernel as a template over its sizes, each warp
//                               owning one rectangle of C, plus a fast path for full tiles;
//   warp_tiled 128x256x8 16x8   twice the outputs per thread: fewer shared loads per FMA;
//   pipelined 128x256x8 16x8    cp.async copies 3 slabs deep, no registers waiting on global memory;
//   pipelined 128x256x16 16x8   16-deep slabs: half the barriers and copy bookkeeping per FMA.

/// The sizes of a warp-tiled kernel. A thread block computes a BM x BN block of C, walking K in
/// slabs of BK; each warp owns a WM x WN part of that block and each thread TM x TN outputs of
/// it, kept in registers as (TM/4) x (TN/4) sub-tiles of 4 x 4. Inside its WM x WN area a warp's
/// 32 lanes form a kLaneRows x kLaneCols grid; a thread's sub-tiles sit one lane-grid apart
/// (4 * kLaneRows rows, 4 * kLaneCols columns), so that every shared load of a warp reads a few
/// neighbouring float4s. MinBlocksPerSm goes to __launch_bounds__: it caps the registers.
/// GroupRows: the order in which the blocks walk C, see block_tile() (1 here: row by row).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int MinBlocksPerSm, int GroupRows>
struct TileShape {
    static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kTM = TM, kTN = TN;
    static constexpr int kMinBlocks = MinBlocksPerSm, kGroupRows = GroupRows;
    static constexpr int kWarps = (BM / WM) * (BN / WN), kThreads = 32 * kWarps;
    static constexpr int kLaneRows = WM / TM, kLaneCols = WN / TN;
    static constexpr int kALoads = BM * BK / 4 / kThreads;  // float4s of A each thread loads per slab
    static constexpr int kBLoads = BK * BN / 4 / kThreads;  // float4s of B
    static constexpr int kAPad = 4;  // as in matmul_register_tiled: conflict-free transposing stores
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0, "tiles must nest");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "operands move as float4s");
    static_assert(kLaneRows * kLaneCols == 32, "a warp's 32 lanes must cover its WM x WN area exactly");
    static_assert(kALoads >= 1 && kALoads * 4 * kThreads == BM * BK, "the A slab splits evenly into float4s");
    static_assert(kBLoads >= 1 && kBLoads * 4 * kThreads == BK * BN, "the B slab splits evenly into float4s");
};

/// Where a thread's outputs live inside the BM x BN block: row of its output m (0 <= m < TM) and
/// column of its output n (0 <= n < TN). The kernels and the host checks use the same functions.
template <class S>
__host__ __device__ constexpr int warp_tile_row(int tid, int m) {
    const int warp = tid / 32, lane = tid % 32;
    return (warp / (S::kBN / S::kWN)) * S::kWM + (m / 4) * (4 * S::kLaneRows) + (lane / S::kLaneCols) * 4 + m % 4;
}
template <class S>
__host__ __device__ constexpr int warp_tile_col(int tid, int n) {
    const int warp = tid / 32, lane = tid % 32;
    return (warp % (S::kBN / S::kWN)) * S::kWN + (n / 4) * (4 * S::kLaneCols) + (lane % S::kLaneCols) * 4 + n % 4;
}

/// Which block of C thread block b computes, for a 1-D grid over tiles_m x tiles_n blocks: the
/// grid walks group_rows block rows column by column, then the next group_rows rows. With
/// group_rows = 1 that is plain row-major order; with more, the blocks that run at the same time
/// share fewer rows of A and more columns of B, which L2 then holds for several of them (the
/// README's "Try this": at 4096^3 it made no difference we could measure).
struct TileIndex {
    int row, col;
};
__host__ __device__ inline TileIndex block_tile(int b, int tiles_m, int tiles_n, int group_rows) {
    const int per_group = group_rows * tiles_n;
    const int first_row = (b / per_group) * group_rows;
    const int rows = tiles_m - first_row < group_rows ? tiles_m - first_row : group_rows;
    const int in_group = b % per_group;
    return {first_row + in_group % rows, in_group / rows};
}

/// A thread's operands for step k of a slab: its TM values of A and TN values of B, as float4
/// loads from shared memory. As holds the slab of A transposed (BK rows of BM + kAPad floats),
/// Bs the slab of B (BK rows of BN floats); a_row, b_col = warp_tile_row/col(tid, 0).
template <class S>
__device__ __forceinline__ void load_fragments(const float* As, const float* Bs, int k, int a_row, int b_col,
                                               float (&a)[S::kTM], float (&b)[S::kTN]) {
#pragma unroll
    for (int i = 0; i < S::kTM / 4; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(As + k * (S::kBM + S::kAPad) + a_row + i * 4 * S::kLaneRows);
        a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < S::kTN / 4; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(Bs + k * S::kBN + b_col + j * 4 * S::kLaneCols);
        b[4 * j] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
    }
}

/// acc += a * b^T: the TM x TN FMAs of one step, all independent of each other.
template <class S>
__device__ __forceinline__ void outer_product(const float (&a)[S::kTM], const float (&b)[S::kTN],
                                              float (&acc)[S::kTM][S::kTN]) {
#pragma unroll
    for (int m = 0; m < S::kTM; ++m)
#pragma unroll
        for (int n = 0; n < S::kTN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
}

/// This thread's TM x TN results to C, as float4 stores (clipped at the edges unless kFullTiles).
template <class S, bool kFullTiles>
__device__ __forceinline__ void store_tile(float* __restrict__ C, int M, int N, int row0, int col0, int tid,
                                           const float (&acc)[S::kTM][S::kTN]) {
    const bool c_vec = N % 4 == 0 && aligned16(C);
#pragma unroll
    for (int m = 0; m < S::kTM; ++m) {
        const int row = row0 + warp_tile_row<S>(tid, m);
#pragma unroll
        for (int j = 0; j < S::kTN / 4; ++j) {
            const int col = col0 + warp_tile_col<S>(tid, 4 * j);
            const float4 v = make_float4(acc[m][4 * j], acc[m][4 * j + 1], acc[m][4 * j + 2], acc[m][4 * j + 3]);
            if constexpr (kFullTiles)
                *reinterpret_cast<float4*>(C + static_cast<long long>(row) * N + col) = v;
            else
                store4(C, M, N, row, col, v, c_vec);
        }
    }
}

/// The warp-tiled kernel. Same plan as matmul_register_tiled (A transposed in shared memory,
/// float4 operands, two shared buffers filled from registers while the other is read, one
/// barrier per slab), with the sizes of S and the thread layout of warp_tile_row/col.
/// kFullTiles: every block is full and K is a multiple of BK (the launcher checks), so loads and
/// stores need no bounds checks; otherwise load4/store4 fill and clip the edges.
template <class S, bool kFullTiles>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    matmul_warp_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                      int K) {
    constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK;
    static_assert(2 * BK * (BM + S::kAPad + BN) * sizeof(float) <= 48 * 1024, "static shared memory: 48 KiB at most");
    __shared__ __align__(16) float As[2][BK][BM + S::kAPad];
    __shared__ __align__(16) float Bs[2][BK][BN];

    const int tid = threadIdx.x;
    const TileIndex tile = block_tile(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, S::kGroupRows);
    const int row0 = tile.row * BM, col0 = tile.col * BN;
    const bool a_vec = K % 4 == 0 && aligned16(A), b_vec = N % 4 == 0 && aligned16(B);

    // Load l of this thread: A[row0 + am][k0 + ak..+3] and B[k0 + bk][col0 + bn..+3], with
    // am, ak, bk, bn from the index i = tid + l * kThreads.
    float4 a_next[S::kALoads], b_next[S::kBLoads];
    auto fetch = [&](int k0) {  // global memory -> registers
#pragma unroll
        for (int l = 0; l < S::kALoads; ++l) {
            const int i = tid + l * S::kThreads, am = i / (BK / 4), ak = i % (BK / 4) * 4;
            if constexpr (kFullTiles)
                a_next[l] = *reinterpret_cast<const float4*>(A + static_cast<long long>(row0 + am) * K + k0 + ak);
            else
                a_next[l] = load4(A, M, K, row0 + am, k0 + ak, a_vec);
        }
#pragma unroll
        for (int l = 0; l < S::kBLoads; ++l) {
            const int i = tid + l * S::kThreads, bk = i / (BN / 4), bn = i % (BN / 4) * 4;
            if constexpr (kFullTiles)
                b_next[l] = *reinterpret_cast<const float4*>(B + static_cast<long long>(k0 + bk) * N + col0 + bn);
            else
                b_next[l] = load4(B, K, N, k0 + bk, col0 + bn, b_vec);
        }
    };
    auto stash = [&](int buf) {  // registers -> shared memory, A transposed
#pragma unroll
        for (int l = 0; l < S::kALoads; ++l) {
            const int i = tid + l * S::kThreads, am = i / (BK / 4), ak = i % (BK / 4) * 4;
            As[buf][ak + 0][am] = a_next[l].x;
            As[buf][ak + 1][am] = a_next[l].y;
            As[buf][ak + 2][am] = a_next[l].z;
            As[buf][ak + 3][am] = a_next[l].w;
        }
#pragma unroll
        for (int l = 0; l < S::kBLoads; ++l) {
            const int i = tid + l * S::kThreads, bk = i / (BN / 4), bn = i % (BN / 4) * 4;
            *reinterpret_cast<float4*>(&Bs[buf][bk][bn]) = b_next[l];
        }
    };

    const int a_row = warp_tile_row<S>(tid, 0), b_col = warp_tile_col<S>(tid, 0);
    float acc[S::kTM][S::kTN] = {};
    const int steps = (K + BK - 1) / BK;
    fetch(0);
    stash(0);
    __syncthreads();
    for (int t = 0; t < steps; ++t) {
        const int buf = t & 1;
        const bool more = t + 1 < steps;
        if (more) fetch((t + 1) * BK);  // in flight while we compute below
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[S::kTM], b[S::kTN];  // new registers each step, so that the loads of step k + 1 can start early
            load_fragments<S>(&As[buf][0][0], &Bs[buf][0][0], k, a_row, b_col, a, b);
            outer_product<S>(a, b, acc);
        }
        if (more) stash(buf ^ 1);
        __syncthreads();
    }
    store_tile<S, kFullTiles>(C, M, N, row0, col0, tid, acc);
}

/// One float from global to shared memory, asynchronously (cp.async, sm_80 and later, through
/// CUDA's pipeline primitives): the copy does not pass through a register, and the thread waits
/// for it only at __pipeline_wait_prior. Outside the matrix (inside = false) nothing is read and
/// the float is zero-filled (the last argument counts the zero bytes; the source is then the
/// matrix's first element, never read).
__device__ __forceinline__ void copy_float_async(float* shared, const float* matrix, long long offset, bool inside) {
    __pipeline_memcpy_async(shared, matrix + (inside ? offset : 0), sizeof(float), inside ? 0 : sizeof(float));
}

/// The pipelined kernel: the warp-tiled kernel with its register staging replaced by
/// asynchronous copies into kStages shared buffers, and with its operand registers doubled:
///   * slab t + kStages - 1 is being copied while slab t is multiplied; no thread ever waits on
///     a global load in a register (the warp-tiled kernel's compiler moved those loads late in
///     the loop, where they did wait);
///   * A still lands transposed: each float is copied to its transposed place. Lanes take
///     consecutive k of 4 rows, so a warp reads whole 32-byte sectors and writes 32 banks;
///   * while the FMAs of step k run, the operands of step k + 1 are loaded; the last step of a
///     slab passes the barrier first and then loads the first operands of the next slab, so the
///     warps reach the barrier with FMAs still to issue (cuBLAS's kernel does the same);
///   * the copy addresses are computed once and advanced one slab per step.
/// One barrier per slab: after it, every thread's copies of the next slab have landed, and no
/// thread reads the current slab any more, whose buffer the next copies overwrite.
template <class S, int kStages, bool kFullTiles>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    matmul_pipelined(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                     int K) {
    constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK, T = S::kThreads;
    constexpr int kAStage = BK * (BM + S::kAPad), kBStage = BK * BN;  // floats per buffer
    constexpr int kACopies = BM * BK / T, kARowStep = T / BK;          // one float per copy
    constexpr int kBCopies = S::kBLoads, kBRowStep = T / (BN / 4);     // one float4 per copy
    static_assert(kStages >= 2 && T % BK == 0 && T % (BN / 4) == 0 && BK % 2 == 0, "copy layout");
    extern __shared__ float4 shared_memory[];  // kStages buffers of A, then kStages of B
    float* const As = reinterpret_cast<float*>(shared_memory);
    float* const Bs = As + kStages * kAStage;

    const int tid = threadIdx.x;
    const TileIndex tile = block_tile(blockIdx.x, (M + BM - 1) / BM, (N + BN - 1) / BN, S::kGroupRows);
    const int row0 = tile.row * BM, col0 = tile.col * BN;
    const bool b_vec = N % 4 == 0 && aligned16(B);
    const int steps = (K + BK - 1) / BK;

    // Copy l of A: A[row0 + am + l * kARowStep][k0 + ak] -> As[ak][am + l * kARowStep];
    // copy l of B: B[k0 + bk + l * kBRowStep][col0 + bn..+3] -> Bs[bk + l * kBRowStep][bn..+3].
    const int am = tid / BK, ak = tid % BK, bk = tid / (BN / 4), bn = tid % (BN / 4) * 4;
    const float* a_src = A + static_cast<long long>(row0 + am) * K + ak;  // moves BK columns per slab
    const float* b_src = B + static_cast<long long>(bk) * N + col0 + bn;  // moves BK rows per slab
    int k0 = 0, write_stage = 0;
    auto copy_next_slab = [&] {
        if (k0 < K) {
            float* const as = As + write_stage * kAStage + ak * (BM + S::kAPad) + am;
            float* const bs = Bs + write_stage * kBStage + bk * BN + bn;
#pragma unroll
            for (int l = 0; l < kACopies; ++l) {
                const bool inside = kFullTiles || (row0 + am + l * kARowStep < M && k0 + ak < K);
                copy_float_async(as + l * kARowStep, a_src, static_cast<long long>(l) * kARowStep * K, inside);
            }
#pragma unroll
            for (int l = 0; l < kBCopies; ++l) {
                const float* src = b_src + static_cast<long long>(l) * kBRowStep * N;
                float* dst = bs + l * kBRowStep * BN;
                const int k = k0 + bk + l * kBRowStep;
                if (kFullTiles || (b_vec && k < K && col0 + bn + 3 < N)) {
                    __pipeline_memcpy_async(dst, src, 4 * sizeof(float));
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e) copy_float_async(dst + e, src, e, k < K && col0 + bn + e < N);
                }
            }
        }
        __pipeline_commit();  // an empty group past the last slab keeps the counting uniform
        k0 += BK, a_src += BK, b_src += static_cast<long long>(BK) * N;
        write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
    };

    const int a_row = warp_tile_row<S>(tid, 0), b_col = warp_tile_col<S>(tid, 0);
    float acc[S::kTM][S::kTN] = {};
    float a[2][S::kTM], b[2][S::kTN];  // the operands of steps k (k % 2) and k + 1
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) copy_next_slab();
    __pipeline_wait_prior(kStages - 2);  // slab 0 has landed, for this thread...
    __syncthreads();                     // ...and for all
    int read_stage = 0;
    load_fragments<S>(As, Bs, 0, a_row, b_col, a[0], b[0]);
    for (int t = 0; t < steps; ++t) {
        copy_next_slab();  // slab t + kStages - 1, into the buffer of slab t - 1
        const float* as = As + read_stage * kAStage;
        const float* bs = Bs + read_stage * kBStage;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) {
                load_fragments<S>(as, bs, k + 1, a_row, b_col, a[(k + 1) % 2], b[(k + 1) % 2]);
            } else {  // the next slab: wait until it has landed, then load its first operands
                __pipeline_wait_prior(kStages - 2);
                __syncthreads();
                read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
                if (t + 1 < steps)
                    load_fragments<S>(As + read_stage * kAStage, Bs + read_stage * kBStage, 0, a_row, b_col, a[0], b[0]);
            }
            outer_product<S>(a[k % 2], b[k % 2], acc);
        }
    }
    store_tile<S, kFullTiles>(C, M, N, row0, col0, tid, acc);
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

// The going-further steps. Each launcher picks the fast kernel when every tile is full and the
// rows are 16-byte aligned, and the same kernel with bounds checks otherwise: correct for every
// M, N, K either way (the checks run shapes of both kinds).
template <class S>
bool fits_full_tiles(const float* A, const float* B, const float* C, int M, int N, int K) {
    return M % S::kBM == 0 && N % S::kBN == 0 && K % S::kBK == 0 && aligned16(A) && aligned16(B) && aligned16(C);
}

template <class S>
void launch_warp_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    const unsigned grid = course::ceil_div(M, S::kBM) * course::ceil_div(N, S::kBN);  // 1-D: see block_tile()
    if (fits_full_tiles<S>(A, B, C, M, N, K)) matmul_warp_tiled<S, true><<<grid, S::kThreads>>>(A, B, C, M, N, K);
    else matmul_warp_tiled<S, false><<<grid, S::kThreads>>>(A, B, C, M, N, K);
    CUDA_CHECK_LAUNCH();
}

/// matmul_pipelined's shared memory: kStages buffers of each slab.
template <class S, int kStages>
constexpr int pipelined_shared_bytes() {
    return kStages * S::kBK * (S::kBM + S::kAPad + S::kBN) * static_cast<int>(sizeof(float));
}
/// The most dynamic shared memory one block may have on this GPU (cudaDevAttrMaxSharedMemoryPerBlockOptin):
/// 227 KiB on an H100 or H200, 64 KiB on a T4 (sm_75). Read once.
std::size_t smem_per_block_optin() {
    static const std::size_t limit = course::query_device().smem_per_block_optin;
    return limit;
}
template <class S, int kStages>
void launch_pipelined(const float* A, const float* B, float* C, int M, int N, int K) {
    constexpr int bytes = pipelined_shared_bytes<S, kStages>();
    if (static_cast<std::size_t>(bytes) > smem_per_block_optin())  // a T4 has no room for the 16-deep slabs
        throw course::DoesNotFitError("this kernel needs " + std::to_string(bytes) + " bytes of shared memory per block; "
                                      "this GPU allows at most " + std::to_string(smem_per_block_optin()));
    // Above 48 KiB a kernel must ask for its shared memory before its first launch.
    static const bool configured = [] {
        for (auto kernel : {matmul_pipelined<S, kStages, true>, matmul_pipelined<S, kStages, false>})
            CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        return true;
    }();
    (void)configured;
    const unsigned grid = course::ceil_div(M, S::kBM) * course::ceil_div(N, S::kBN);  // 1-D: see block_tile()
    if (fits_full_tiles<S>(A, B, C, M, N, K))
        matmul_pipelined<S, kStages, true><<<grid, S::kThreads, bytes>>>(A, B, C, M, N, K);
    else
        matmul_pipelined<S, kStages, false><<<grid, S::kThreads, bytes>>>(A, B, C, M, N, K);
    CUDA_CHECK_LAUNCH();
}

// The going-further tile shapes (nvcc -Xptxas -v: no spills in the full-tile kernels; the edge
// kernel of WarpTile8x8 spills a few bytes, its bounds checks needing more than the 128
// registers that 2 blocks per SM leave).
using WarpTile8x8 = TileShape<128, 128, 8, 32, 64, 8, 8, 2, 1>;        // 256 threads, 2 blocks per SM
using WarpTile16x8 = TileShape<128, 256, 8, 64, 64, 16, 8, 1, 1>;      // 256 threads, 1 block per SM
using WarpTile16x8K16 = TileShape<128, 256, 16, 64, 64, 16, 8, 1, 1>;  // the same, 16-deep slabs

struct Variant {
    const char* name;
    Launcher launch;
    int tile_rows, tile_cols;  // the block of C one thread block computes: sets its global traffic
    int shared_bytes = 0;      // dynamic shared memory per block, where it may exceed 48 KiB (else 0)
};
/// The kernels of this lesson, in the order they are presented.
const Variant kVariants[] = {
    {"matmul_naive", launch_naive, 1, 1},
    {"matmul_tiled<16>", launch_tiled<16>, 16, 16},
    {"matmul_tiled<32>", launch_tiled<32>, 32, 32},
    {"register_tiled 128x128x8 8x8", launch_register_tiled, kBM, kBN},
    // going further
    {"warp_tiled 128x128x8 8x8", launch_warp_tiled<WarpTile8x8>, 128, 128},
    {"warp_tiled 128x256x8 16x8", launch_warp_tiled<WarpTile16x8>, 128, 256},
    {"pipelined 128x256x8 16x8", launch_pipelined<WarpTile16x8, 3>, 128, 256, pipelined_shared_bytes<WarpTile16x8, 3>()},
    {"pipelined 128x256x16 16x8", launch_pipelined<WarpTile16x8K16, 3>, 128, 256,
     pipelined_shared_bytes<WarpTile16x8K16, 3>()},
};
/// Whether this GPU gives a block the shared memory the variant needs (on a T4 the 16-deep
/// pipelined kernel, 74,496 bytes, does not fit: its launcher refuses with DoesNotFitError).
bool fits_this_gpu(const Variant& v) { return static_cast<std::size_t>(v.shared_bytes) <= smem_per_block_optin(); }

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

// ---------------------------------------------------------------- the FP32 peak

/// FP32 lanes per SM: the fp32 multiply-adds one SM completes per clock, from the throughput
/// table of the CUDA C++ Programming Guide ("Arithmetic Instructions"). 0: this program does
/// not know the architecture, and says so rather than guess.
constexpr int fp32_lanes_per_sm(int major, int minor) {
    switch (major) {
    case 5: return 128;                                   // Maxwell
    case 6: return minor == 0 ? 64 : 128;                 // Pascal: P100 64, the others 128
    case 7: return 64;                                    // Volta, Turing
    case 8: return minor == 0 ? 64 : 128;                 // Ampere: A100 64; 8.6, 8.7, Ada 8.9: 128
    case 9: return minor == 0 ? 128 : 0;                  // Hopper
    case 10: return minor == 0 ? 128 : 0;                 // Blackwell (B200)
    case 12: return minor == 0 ? 128 : 0;                 // Blackwell (RTX 50)
    default: return 0;
    }
}

/// Peak fp32 rate in TFLOP/s: every lane of every SM finishes one FMA (2 FLOP) per clock.
constexpr double fp32_peak_tflops(int sm_count, int lanes_per_sm, double clock_mhz) {
    return sm_count * static_cast<double>(lanes_per_sm) * 2.0 * clock_mhz * 1e6 / 1e12;
}

// ---------------------------------------------------------------- one problem, checked and timed

/// Up to this many multiply-adds the CPU computes the whole product (about a second); above it, samples.
constexpr double kFullCheckMacs = 1 << 28;

/// Random A and B of one M x N x K problem on the GPU, C, and the expected values of C at the
/// positions we check: every element for small problems, corners, edges and random points otherwise.
struct Problem {
    int m, n, k;
    std::vector<float> host_a, host_b;
    bool full = false;
    std::vector<std::pair<int, int>> where;
    std::vector<double> expected;
    double max_abs_sum = 0;
    course::DeviceBuffer<float> a, b, c;

    Problem(int m_, int n_, int k_, std::uint32_t seed)
        : m(m_), n(n_), k(k_),
          host_a(course::random_floats(static_cast<std::size_t>(m_) * k_, seed)),
          host_b(course::random_floats(static_cast<std::size_t>(k_) * n_, seed + 1)),
          a(host_a), b(host_b), c(static_cast<std::size_t>(m_) * n_) {
        full = static_cast<double>(m) * n * k <= kFullCheckMacs;
        if (full) {
            Reference ref = matmul_cpu(host_a, host_b, m, n, k);
            expected = std::move(ref.c);
            max_abs_sum = ref.max_abs_sum;
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) where.push_back({i, j});
        } else {
            where = sample_positions(m, n, 256, seed + 2);
            for (const auto& [i, j] : where) {
                const RefEntry e = reference_entry(host_a, host_b, n, k, i, j);
                expected.push_back(e.value);
                max_abs_sum = std::max(max_abs_sum, e.abs_sum);
            }
        }
    }
    double flops() const { return 2.0 * m * n * k; }
    course::Tolerance tolerance(double input_rel_error = 0.0) const {
        return matmul_tolerance(k, max_abs_sum, input_rel_error);
    }
    /// Poison C, run once, compare the chosen positions: "ok", or "FAIL" with the reason printed.
    template <class Launch>
    std::string verify(const std::string& name, Launch&& launch, course::Tolerance tol) {
        c.poison();
        launch();
        const std::vector<float> out = c.to_host();
        std::vector<float> got;
        got.reserve(where.size());
        for (const auto& [i, j] : where) got.push_back(out[static_cast<std::size_t>(i) * n + j]);
        const course::VerifyResult r = course::compare_close(got, expected, 1, tol);
        if (!r.ok()) {
            const auto [i, j] = where[r.first ? r.first->index : 0];
            std::printf("%s at %d x %d x %d: %s (first bad element is C[%d][%d])\n", name.c_str(), m, n, k,
                        r.summary().c_str(), i, j);
        }
        return r.ok() ? "ok" : "FAIL";
    }
};

// ---------------------------------------------------------------- --sweep

/// The sweep's problems, M x N x K: squares from 256 to 8192 (3000 is a multiple of no tile, so
/// the warp-tiled kernels take their edge path there), then two skinny ones: a huge C from a
/// short K (8192 x 8192 x 64), and a 64-row C from a long K (64 x 8192 x 8192).
struct SweepShape {
    int m, n, k;
    const char* label;
};
const SweepShape kSweepShapes[] = {
    {256, 256, 256, "256^3"},       {512, 512, 512, "512^3"},       {1024, 1024, 1024, "1024^3"},
    {2048, 2048, 2048, "2048^3"},   {3000, 3000, 3000, "3000^3"},   {4096, 4096, 4096, "4096^3"},
    {6144, 6144, 6144, "6144^3"},   {8192, 8192, 8192, "8192^3"},   {8192, 8192, 64, "8192^2x64"},
    {64, 8192, 8192, "64x8192^2"},
};

/// Each kernel at each sweep shape, checked (at the sampled positions) and timed: at least 3
/// repeats, up to --repeats, fewer for slow launches so the whole sweep stays short.
int run_sweep(const course::DeviceReport& gpu, const std::vector<const Variant*>& chosen,
              const course::TimingOptions& timing) {
    const CublasHandle cublas;
    std::vector<std::string> names = {"cuBLAS SGEMM (fp32)"};
    for (const Variant* v : chosen) names.push_back(v->name);
    std::vector<std::vector<double>> rate(names.size());  // [kernel][shape], TFLOP/s
    bool all_ok = true;
    for (const SweepShape& shape : kSweepShapes) {
        Problem p(shape.m, shape.n, shape.k, static_cast<std::uint32_t>(shape.m + 3 * shape.n + 7 * shape.k));
        course::ResultsTable table("sweep: " + std::to_string(shape.m) + " x " + std::to_string(shape.n) + " x " +
                                       std::to_string(shape.k) + " (M x N x K) fp32 matmul, median of up to " +
                                       std::to_string(timing.repeats),
                                   "TFLOP/s");
        for (std::size_t v = 0; v < names.size(); ++v) {
            auto run = [&] {
                if (v == 0) launch_cublas(cublas, p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k);
                else chosen[v - 1]->launch(p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k);
            };
            const std::string check = p.verify(names[v], run, p.tolerance());
            all_ok &= check == "ok";
            const double probe_ms = course::time_gpu(run, 0, 1).median_ms;
            const int repeats = std::clamp(static_cast<int>(150.0 / probe_ms), std::min(3, timing.repeats), timing.repeats);
            const course::Timing t = course::time_gpu(run, 1, repeats);
            rate[v].push_back(course::tflop_per_s(p.flops(), t.median_ms));
            table.add(names[v], t.median_ms, rate[v].back(), check, v == 0);
        }
        if (!timing.csv.empty()) table.append_csv(timing.csv, "05_tiled_matmul", gpu.short_description());
    }

    std::size_t width = 8;
    for (const std::string& name : names) width = std::max(width, name.size());
    auto header = [&](const char* what) {
        std::printf("\n== sweep: %s (M x N x K) ==\n  %-*s", what, static_cast<int>(width), "kernel");
        for (const SweepShape& shape : kSweepShapes) std::printf(" %10s", shape.label);
        std::printf("\n");
    };
    header("TFLOP/s");
    for (std::size_t v = 0; v < names.size(); ++v) {
        std::printf("  %-*s", static_cast<int>(width), names[v].c_str());
        for (double r : rate[v]) std::printf(" %10.1f", r);
        std::printf("\n");
    }
    header("% of cuBLAS SGEMM at the same shape");
    for (std::size_t v = 1; v < names.size(); ++v) {
        std::printf("  %-*s", static_cast<int>(width), names[v].c_str());
        for (std::size_t s = 0; s < rate[v].size(); ++s) std::printf(" %9.1f%%", 100.0 * rate[v][s] / rate[0][s]);
        std::printf("\n");
    }
    std::printf("%s\n", all_ok ? "All outputs match the CPU reference." : "SOME OUTPUTS ARE WRONG (see above).");
    return all_ok ? course::kExitOk : course::kExitFailed;
}

// ---------------------------------------------------------------- the lesson

int lesson(int argc, char** argv) {
    long long M = 4096, N = 4096, K = 4096;
    std::string only;
    bool tf32 = false, sweep = false, no_clock = false;
    course::TimingOptions timing;
    course::Cli cli("05_tiled_matmul", "C = A * B in fp32: naive, shared-memory tiles, register tiles and cuBLAS, "
                                       "each checked against a CPU double reference and timed.");
    cli.option("--m", &M, "rows of A and C", 1, 65536)
        .option("--n", &N, "columns of B and C", 1, 65536)
        .option("--k", &K, "columns of A, rows of B", 1, 65536)
        .option("--kernel", &only, "time only the lesson kernels whose name contains this text (cuBLAS always runs)")
        .flag("--tf32", &tf32, "also time cuBLAS with TF32 tensor cores (another precision: for reference only)")
        .flag("--sweep", &sweep, "instead of one size, time every kernel at sizes from 256^3 to 8192^3 and two "
                                 "skinny shapes (ignores --m, --n, --k)")
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
    std::vector<const Variant*> fitting;
    for (const Variant* v : chosen) {
        if (fits_this_gpu(*v)) fitting.push_back(v);
        else std::printf("%s left out: it needs %d bytes of shared memory per block, this GPU allows at most %zu\n",
                         v->name, v->shared_bytes, gpu.smem_per_block_optin);
    }
    if (fitting.empty()) throw course::DoesNotFitError("no kernel chosen by --kernel '" + only + "' fits in this GPU's shared memory");
    chosen = fitting;
    if (sweep) {
        course::require_device_memory(4.0 * 3 * 8192 * 8192, "the sweep's largest A, B and C");
        return run_sweep(gpu, chosen, timing);
    }
    course::require_device_memory(4.0 * (M * K + K * N + M * N), "A, B and C");

    Problem p(static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), 51);
    std::printf("Checking %zu outputs (%s) against a CPU double reference;\n"
                "error bound %.3g = (K + 2) * 2^-24 * max_ij sum_k |a_ik * b_kj|.\n\n",
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
