// Lesson 05, going further — from the register-tiled kernel's ~80% of cuBLAS SGEMM to ~95%, one
// change per step, each explained by a profiler measurement (README.md, ncu.sh), every step timed
// from 256^3 to 8192^3 and on two skinny shapes (--sweep), and a last rung fast at every size.
// The rungs (kRungs): warp_tiled (each warp one rectangle of C, a fast path for full tiles), 16x8
// outputs per thread, cp.async three slabs deep, 16-deep slabs; then size-aware: per M x N x K a
// rule picks a block of 8, 4 or 2 warps and a split of K from a cost model it prints (waves of
// blocks from the occupancy calculator, each as long as its K slice, plus the workspace traffic).
// Leaves out: tensor cores, TMA, stream-K or persistent kernels, autotuning (the rule predicts).
// Builds on lessons/05_tiled_matmul (read it first); common/matmul.cuh holds what both share.
// Read next: CUTLASS's "Efficient GEMM in CUDA"; CUDA C++ Programming Guide, "Asynchronous Data
// Copies".
#include "lesson.cuh"
#include "matmul.cuh"

#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

constexpr const char* kLessonName = "05_tiled_matmul_going_further";

// ---------------------------------------------------------------- warp tiles

/// The sizes of a warp-tiled kernel. A thread block computes a BM x BN block of C, walking K in
/// slabs of BK; each warp owns a WM x WN part of that block and each thread TM x TN outputs of
/// it, kept in registers as (TM/4) x (TN/4) sub-tiles of 4 x 4. Inside its WM x WN area a warp's
/// 32 lanes form a kLaneRows x kLaneCols grid; a thread's sub-tiles sit one lane-grid apart
/// (4 * kLaneRows rows, 4 * kLaneCols columns), so that every shared load of a warp reads a few
/// neighbouring float4s. MinBlocksPerSm goes to __launch_bounds__: it caps the registers.
/// GroupRows: the order in which the blocks walk C, see block_tile() (1 here: row by row).
/// PairLanes: how the lanes fill their grid, see lane_row(): false, row by row (lane % kLaneCols
/// is the column); true, lanes n and n ^ 1 share a column, so that they read the same float4 of B.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int MinBlocksPerSm, int GroupRows,
          bool PairLanes = false>
struct TileShape {
    static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kTM = TM, kTN = TN;
    static constexpr int kMinBlocks = MinBlocksPerSm, kGroupRows = GroupRows;
    static constexpr bool kPairLanes = PairLanes;
    static constexpr int kWarps = (BM / WM) * (BN / WN), kThreads = 32 * kWarps;
    static constexpr int kLaneRows = WM / TM, kLaneCols = WN / TN;
    static constexpr int kALoads = BM * BK / 4 / kThreads;  // float4s of A each thread loads per slab
    static constexpr int kBLoads = BK * BN / 4 / kThreads;  // float4s of B
    static constexpr int kAPad = 4;  // as in lesson 05's matmul_register_tiled: conflict-free transposing stores
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0, "tiles must nest");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "operands move as float4s");
    static_assert(kLaneRows * kLaneCols == 32, "a warp's 32 lanes must cover its WM x WN area exactly");
    static_assert(!PairLanes || kLaneRows % 2 == 0, "paired lanes take two rows of the lane grid");
    static_assert(kALoads >= 1 && kALoads * 4 * kThreads == BM * BK, "the A slab splits evenly into float4s");
    static_assert(kBLoads >= 1 && kBLoads * 4 * kThreads == BK * BN, "the B slab splits evenly into float4s");
};

/// A lane's place in its warp's kLaneRows x kLaneCols grid. Row by row (every rung), lanes 0..7
/// take the 8 columns of a row (16x8 tiles: kLaneCols = 8): lanes l, l + 8, l + 16 and l + 24
/// load the same float4 of B, and no two lanes of one quarter-warp do. Paired, lane n ^ 1 takes
/// the next row of lane n's column: neighbours n and n ^ 1 load one float4 of B, and lanes n and
/// n ^ 2 one of A. On an H100 that cut the shared-load wavefronts by a quarter and the time not
/// at all (README, "What is left"), so no rung pairs its lanes; WarpTile16x8K16Pairs is there to try.
template <class S>
__host__ __device__ constexpr int lane_row(int lane) {
    return S::kPairLanes ? lane % 2 + 2 * (lane / (2 * S::kLaneCols)) : lane / S::kLaneCols;
}
template <class S>
__host__ __device__ constexpr int lane_col(int lane) {
    return S::kPairLanes ? lane / 2 % S::kLaneCols : lane % S::kLaneCols;
}

/// Where a thread's outputs live inside the BM x BN block: row of its output m (0 <= m < TM) and
/// column of its output n (0 <= n < TN). The kernels and the host checks use the same functions.
template <class S>
__host__ __device__ constexpr int warp_tile_row(int tid, int m) {
    const int warp = tid / 32, lane = tid % 32;
    return (warp / (S::kBN / S::kWN)) * S::kWM + (m / 4) * (4 * S::kLaneRows) + lane_row<S>(lane) * 4 + m % 4;
}
template <class S>
__host__ __device__ constexpr int warp_tile_col(int tid, int n) {
    const int warp = tid / 32, lane = tid % 32;
    return (warp % (S::kBN / S::kWN)) * S::kWN + (n / 4) * (4 * S::kLaneCols) + lane_col<S>(lane) * 4 + n % 4;
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

/// The warp-tiled kernel. Same plan as lesson 05's matmul_register_tiled (A transposed in shared memory,
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

// ---------------------------------------------------------------- asynchronous copies

/// One float from global to shared memory, asynchronously (cp.async, sm_80 and later, through
/// CUDA's pipeline primitives): the copy does not pass through a register, and the thread waits
/// for it only at __pipeline_wait_prior. Outside the matrix (inside = false) nothing is read and
/// the float is zero-filled (the last argument counts the zero bytes; the source is then the
/// matrix's first element, never read).
__device__ __forceinline__ void copy_float_async(float* shared, const float* matrix, long long offset, bool inside) {
    __pipeline_memcpy_async(shared, matrix + (inside ? offset : 0), sizeof(float), inside ? 0 : sizeof(float));
}

/// Which float of a slab of A thread tid copies (its copy l is kThreads / BK rows further down):
/// row `row` of the block, column `k` of the slab: consecutive threads take consecutive k.
struct SlabPlace {
    int row, k;
};
template <class S>
__host__ __device__ constexpr SlabPlace a_copy_place(int tid) {
    return {tid / S::kBK, tid % S::kBK};
}

/// The pipelined kernel: the warp-tiled kernel with its register staging replaced by
/// asynchronous copies into kStages shared buffers, and with its operand registers doubled:
///   * slab t + kStages - 1 is being copied while slab t is multiplied; no thread ever waits on
///     a global load in a register (the warp-tiled kernel's compiler moved those loads late in
///     the loop, where they did wait);
///   * A still lands transposed: each float is copied to its transposed place (a_copy_place): a
///     warp copies BK consecutive k of 32 / BK rows, whole 32-byte sectors of A. With BK = 8 its
///     32 writes hit 32 different banks; with BK = 16, k and k + 8 share a bank (the rows of As
///     are 132 floats, 4 banks, apart): 2-way by the 4-byte bank model. A layout without that
///     (8 k of 4 rows per warp) measured slower on an H100, see the README;
///   * while the FMAs of step k run, the operands of step k + 1 are loaded; the last step of a
///     slab passes the barrier first and then loads the first operands of the next slab, so the
///     warps reach the barrier with FMAs still to issue (cuBLAS's kernel does the same);
///   * the copy addresses are computed once and advanced one slab per step.
/// One barrier per slab: after it, every thread's copies of the next slab have landed, and no
/// thread reads the current slab any more, whose buffer the next copies overwrite.
/// The body of the kernel for one block: C[row0.., col0..] = A[row0.., 0..K) * B[0..K), col0..];
/// A's rows are lda floats apart (lda = K, except for a slice of K: see matmul_split_k).
template <class S, int kStages, bool kFullTiles>
__device__ __forceinline__ void pipelined_tile(const float* __restrict__ A, int lda, const float* __restrict__ B,
                                               float* __restrict__ C, int M, int N, int K, int row0, int col0) {
    constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK, T = S::kThreads;
    constexpr int kAStage = BK * (BM + S::kAPad), kBStage = BK * BN;  // floats per buffer
    constexpr int kACopies = BM * BK / T, kARowStep = T / BK;          // one float per copy
    constexpr int kBCopies = S::kBLoads, kBRowStep = T / (BN / 4);     // one float4 per copy
    static_assert(kStages >= 2 && T % BK == 0 && T % (BN / 4) == 0 && BK % 2 == 0, "copy layout");
    extern __shared__ float4 shared_memory[];  // kStages buffers of A, then kStages of B
    float* const As = reinterpret_cast<float*>(shared_memory);
    float* const Bs = As + kStages * kAStage;

    const int tid = threadIdx.x;
    const bool b_vec = N % 4 == 0 && aligned16(B);
    const int steps = (K + BK - 1) / BK;

    // Copy l of A: A[row0 + am + l * kARowStep][k0 + ak] -> As[ak][am + l * kARowStep] (a_copy_place);
    // copy l of B: B[k0 + bk + l * kBRowStep][col0 + bn..+3] -> Bs[bk + l * kBRowStep][bn..+3].
    const int am = a_copy_place<S>(tid).row, ak = a_copy_place<S>(tid).k;
    const int bk = tid / (BN / 4), bn = tid % (BN / 4) * 4;
    const float* a_src = A + static_cast<long long>(row0 + am) * lda + ak;  // moves BK columns per slab
    const float* b_src = B + static_cast<long long>(bk) * N + col0 + bn;  // moves BK rows per slab
    int k0 = 0, write_stage = 0;
    auto copy_next_slab = [&] {
        if (k0 < K) {
            float* const as = As + write_stage * kAStage + ak * (BM + S::kAPad) + am;
            float* const bs = Bs + write_stage * kBStage + bk * BN + bn;
#pragma unroll
            for (int l = 0; l < kACopies; ++l) {
                const bool inside = kFullTiles || (row0 + am + l * kARowStep < M && k0 + ak < K);
                copy_float_async(as + l * kARowStep, a_src, static_cast<long long>(l) * kARowStep * lda, inside);
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

template <class S, int kStages, bool kFullTiles>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    matmul_pipelined(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                     int K) {
    const TileIndex tile = block_tile(blockIdx.x, (M + S::kBM - 1) / S::kBM, (N + S::kBN - 1) / S::kBN, S::kGroupRows);
    pipelined_tile<S, kStages, kFullTiles>(A, K, B, C, M, N, K, tile.row * S::kBM, tile.col * S::kBN);
}

// ---------------------------------------------------------------- launchers
// The check (check.cu) calls these same functions, so it tests exactly what runs here. Each
// launcher picks the fast kernel when every tile is full and the rows are 16-byte aligned, and
// the same kernel with bounds checks otherwise: correct for every M, N, K either way (the checks
// run shapes of both kinds).

using Launcher = void (*)(const float* A, const float* B, float* C, int M, int N, int K);

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

// ---------------------------------------------------------------- the rungs
// The tile shapes (nvcc -Xptxas -v: no spills in the full-tile kernels; the edge kernel of
// WarpTile8x8 spills a few bytes, its bounds checks needing more than the 128 registers that 2
// blocks per SM leave).
using WarpTile8x8 = TileShape<128, 128, 8, 32, 64, 8, 8, 2, 1>;        // 256 threads, 2 blocks per SM
using WarpTile16x8 = TileShape<128, 256, 8, 64, 64, 16, 8, 1, 1>;      // 256 threads, 1 block per SM
using WarpTile16x8K16 = TileShape<128, 256, 16, 64, 64, 16, 8, 1, 1>;  // the same, 16-deep slabs
using WarpTile16x8K16Pairs = TileShape<128, 256, 16, 64, 64, 16, 8, 1, 1, true>;  // lanes paired on B: README

// ---------------------------------------------------------------- a block shape and a split of K per problem
// The 128 x 256 pipelined kernel reaches ~96% of cuBLAS at 4096^3 and a third of it at 1024^3,
// where C has 32 such blocks for 132 SMs. cuBLAS and CUTLASS choose a kernel for each problem;
// here is a small version of that choice. One warp tile (64 x 64 of C per warp, 16 x 8 per
// thread, the pipelined kernel's) comes in blocks of 8, 4 or 2 warps. When C has too few blocks
// to fill the GPU, or its last wave of blocks would leave most SMs idle, K is cut into slices:
// the blocks of each slice write a partial product to a workspace, and a second kernel adds the
// slices up (split-K). choose_plan() below picks the block shape and the number of slices with a
// cost model it prints; the README shows it against the measurements.

/// Split-K with the pipelined kernel's body. Grid x: the tiles of C; grid y: the slices of K.
/// Slice z multiplies columns [z * k_slice, z * k_slice + k_slice) of A by the same rows of B and
/// writes the product to out + z * M * N (out is C itself when there is one slice). kAllFull: every
/// tile is inside C and every slice a whole number of slabs (the launcher checks), so no block
/// checks bounds; otherwise each block asks whether it is inside, so only the blocks on the edge of
/// C pay for the checks (at 3000^3, 35 of the 288 tiles of 128 x 256: the last row and column).
template <class S, int kStages, bool kAllFull>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    matmul_split_k(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ out, int M, int N,
                   int K, int k_slice) {
    const int k_begin = blockIdx.y * k_slice;
    const int k_len = K - k_begin < k_slice ? K - k_begin : k_slice;
    const float* const a = A + k_begin;  // column k_begin of A; its rows stay K floats apart
    const float* const b = B + static_cast<long long>(k_begin) * N;
    float* const c = out + static_cast<long long>(blockIdx.y) * M * N;
    const TileIndex tile = block_tile(blockIdx.x, (M + S::kBM - 1) / S::kBM, (N + S::kBN - 1) / S::kBN, S::kGroupRows);
    const int row0 = tile.row * S::kBM, col0 = tile.col * S::kBN;
    if constexpr (kAllFull) {
        pipelined_tile<S, kStages, true>(a, K, b, c, M, N, k_len, row0, col0);
    } else {
        const bool inside = row0 + S::kBM <= M && col0 + S::kBN <= N && k_len % S::kBK == 0 && N % 4 == 0 &&
                            aligned16(B) && aligned16(out);
        if (inside) pipelined_tile<S, kStages, true>(a, K, b, c, M, N, k_len, row0, col0);
        else pipelined_tile<S, kStages, false>(a, K, b, c, M, N, k_len, row0, col0);
    }
}

/// C[i] = the sum over z of partial[z * count + i]: the second half of split-K. Four floats per
/// thread and step where C and the workspace are 16-byte aligned, one otherwise.
__global__ void sum_slices(const float* __restrict__ partial, float* __restrict__ C, long long count, int slices) {
    const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    if (count % 4 == 0 && aligned16(C) && aligned16(partial)) {
        const long long count4 = count / 4;
        const float4* p = reinterpret_cast<const float4*>(partial);
        for (long long i = first; i < count4; i += stride) {
            float4 s = p[i];
            for (int z = 1; z < slices; ++z) {
                const float4 v = p[z * count4 + i];
                s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
            }
            reinterpret_cast<float4*>(C)[i] = s;
        }
    } else {
        for (long long i = first; i < count; i += stride) {
            float s = partial[i];
            for (int z = 1; z < slices; ++z) s += partial[z * count + i];
            C[i] = s;
        }
    }
}

/// The length of each K slice when K is cut into `splits`: K / splits rounded up to whole slabs,
/// so that only the last slice is shorter (K = 1000, 16-deep slabs, 3 splits: 336, 336, 328).
constexpr int slice_length(int K, int splits, int BK) { return ((K + splits - 1) / splits + BK - 1) / BK * BK; }

/// The workspace of split-K's partial products: kept from one launch to the next (cuBLAS keeps
/// one in its handle too), grown when a launch needs more.
float* split_k_workspace(std::size_t floats) {
    static course::DeviceBuffer<float> workspace;
    if (workspace.size() < floats) {
        workspace = course::DeviceBuffer<float>();  // free the old one first
        workspace = course::DeviceBuffer<float>(floats);
    }
    return workspace.data();
}

constexpr int kSplitKStages = 3;

template <class S>
void configure_split_k() {
    constexpr int bytes = pipelined_shared_bytes<S, kSplitKStages>();
    if (static_cast<std::size_t>(bytes) > smem_per_block_optin())
        throw course::DoesNotFitError("this block shape needs " + std::to_string(bytes) + " bytes of shared memory "
                                      "per block; this GPU allows at most " + std::to_string(smem_per_block_optin()));
    static const bool configured = [] {
        for (auto kernel : {matmul_split_k<S, kSplitKStages, true>, matmul_split_k<S, kSplitKStages, false>})
            CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        return true;
    }();
    (void)configured;
}

/// C = A * B with K cut into `splits` slices (1: no workspace, no second kernel).
template <class S>
void launch_split_k(const float* A, const float* B, float* C, int M, int N, int K, int splits) {
    configure_split_k<S>();
    constexpr int bytes = pipelined_shared_bytes<S, kSplitKStages>();
    const int k_slice = slice_length(K, splits, S::kBK);
    splits = (K + k_slice - 1) / k_slice;
    const long long count = static_cast<long long>(M) * N;
    float* const out = splits == 1 ? C : split_k_workspace(static_cast<std::size_t>(count) * splits);
    const dim3 grid(course::ceil_div(M, S::kBM) * course::ceil_div(N, S::kBN), splits);
    const bool all_full = M % S::kBM == 0 && N % S::kBN == 0 && K % S::kBK == 0 && aligned16(B) && aligned16(out);
    if (all_full) matmul_split_k<S, kSplitKStages, true><<<grid, S::kThreads, bytes>>>(A, B, out, M, N, K, k_slice);
    else matmul_split_k<S, kSplitKStages, false><<<grid, S::kThreads, bytes>>>(A, B, out, M, N, K, k_slice);
    CUDA_CHECK_LAUNCH();
    if (splits > 1) {
        const long long per_thread = count % 4 == 0 ? 4 : 1;
        const int blocks = static_cast<int>(std::min<long long>(course::ceil_div(count / per_thread, 256), 4096));
        sum_slices<<<blocks, 256>>>(out, C, count, splits);
        CUDA_CHECK_LAUNCH();
    }
}

/// How many blocks of this kernel one SM of this GPU holds at once, from the CUDA occupancy
/// calculator (registers, shared memory, threads); 0 where the block does not fit at all.
template <class S>
int split_k_blocks_per_sm() {
    if (static_cast<std::size_t>(pipelined_shared_bytes<S, kSplitKStages>()) > smem_per_block_optin()) return 0;
    configure_split_k<S>();
    int fewest = 1 << 30;
    for (auto kernel : {matmul_split_k<S, kSplitKStages, true>, matmul_split_k<S, kSplitKStages, false>}) {
        int n = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, S::kThreads,
                                                                 pipelined_shared_bytes<S, kSplitKStages>()));
        fewest = std::min(fewest, n);
    }
    return fewest;
}

// The block shapes the rule chooses from: the same 64 x 64 warp tile, 16-deep slabs, 8, 4 and
// 2 warps. About 230 registers per thread (nvcc -Xptxas -v, sm_90) let an SM hold 8 such warps:
// 1, 2 or 4 blocks.
using Block8Warps = WarpTile16x8K16;                              // 128 x 256, the ladder's last rung
using Block4Warps = TileShape<128, 128, 16, 64, 64, 16, 8, 2, 1>;  // 128 x 128
using Block2Warps = TileShape<64, 128, 16, 64, 64, 16, 8, 4, 1>;   // 64 x 128: for a C of 64 rows

struct BlockShape {
    const char* name;
    int rows, cols, slab, warps;
    int (*blocks_per_sm)();
    void (*launch)(const float* A, const float* B, float* C, int M, int N, int K, int splits);
};
template <class S>
constexpr BlockShape block_shape(const char* name) {
    return {name, S::kBM, S::kBN, S::kBK, S::kWarps, split_k_blocks_per_sm<S>, launch_split_k<S>};
}
/// Largest first: where two plans cost the same, the rule keeps the larger block (each element
/// it loads is used by more FMAs) and the fewer slices (less workspace traffic).
const BlockShape kBlockShapes[] = {block_shape<Block8Warps>("128x256"), block_shape<Block4Warps>("128x128"),
                                   block_shape<Block2Warps>("64x128")};

/// What the rule needs to know of a GPU: its SMs, their FP32 lanes and clock, its DRAM
/// bandwidth, and how many blocks of each of kBlockShapes one SM holds (0: it does not fit).
struct Machine {
    int sm_count = 0, fp32_lanes = 0;
    double clock_ghz = 0, dram_gbs = 0;
    std::vector<int> blocks_per_sm;
};

constexpr const char* kSizeAwareName = "size-aware: block + split-K rule";

/// One way to run an M x N x K product, and the time the cost model predicts for it.
struct Plan {
    const BlockShape* block = nullptr;
    int splits = 1, k_slice = 0;
    int per_sm = 0;           // blocks one SM holds at once (the CUDA occupancy calculator's answer)
    int slots = 0;            // blocks the GPU runs at once: SMs x per_sm
    long long tiles = 0;      // blocks of C
    long long waves = 0;      // ceil(tiles x splits / slots): rounds of blocks
    double compute_us = 0;    // waves x (k_slice + 2 slabs) steps of k, each at the FP32 peak
    double workspace_us = 0;  // the partial products written and read back, at the DRAM bandwidth
    double predicted_us() const { return compute_us + workspace_us; }
};

/// The cost model. An SM holding its per_sm blocks does per_sm x BM x BN FMAs per step of k; at
/// the FP32 peak that takes per_sm x BM x BN / (lanes x clock). A wave of blocks takes K slice
/// steps, plus about two slabs before the first FMA and after the last (the pipeline filling,
/// the stores of C). A wave only partly full takes as long as a full one: the SMs that have
/// nothing left to do wait. Split-K adds its workspace: splits x M x N floats written, then read.
/// The model leaves out that smaller blocks load more bytes of A and B per FMA; on a tie the rule
/// keeps the larger block.
Plan plan_for(const BlockShape& block, const Machine& gpu, int per_sm, int M, int N, int K, int splits) {
    Plan p;
    p.block = &block;
    p.k_slice = slice_length(K, splits, block.slab);
    p.splits = (K + p.k_slice - 1) / p.k_slice;
    p.per_sm = per_sm;
    p.slots = gpu.sm_count * per_sm;
    p.tiles = static_cast<long long>(course::ceil_div(M, block.rows)) * course::ceil_div(N, block.cols);
    p.waves = (p.tiles * p.splits + p.slots - 1) / p.slots;
    const double step_us = static_cast<double>(per_sm) * block.rows * block.cols / (gpu.fp32_lanes * gpu.clock_ghz * 1e3);
    p.compute_us = p.waves * (p.k_slice + 2.0 * block.slab) * step_us;
    p.workspace_us = p.splits == 1 ? 0.0 : 2.0 * p.splits * M * N * sizeof(float) / (gpu.dram_gbs * 1e3);
    return p;
}

constexpr int kMaxSplits = 16;
constexpr double kMaxWorkspaceBytes = 1024.0 * 1024 * 1024;

/// The plans the rule chooses from: every block shape that fits (gpu.blocks_per_sm > 0) and every
/// split from 1 to kMaxSplits whose slices are at least 2 slabs deep and whose workspace stays
/// within 1 GiB (a split that rounds to the same slices as a smaller one is left out).
std::vector<Plan> candidate_plans(int M, int N, int K, const Machine& gpu) {
    std::vector<Plan> plans;
    for (std::size_t i = 0; i < std::size(kBlockShapes); ++i) {
        if (gpu.blocks_per_sm[i] <= 0) continue;
        for (int splits = 1; splits <= kMaxSplits; ++splits) {
            const Plan p = plan_for(kBlockShapes[i], gpu, gpu.blocks_per_sm[i], M, N, K, splits);
            if (splits > 1 && (p.k_slice < 2 * p.block->slab || 4.0 * M * N * p.splits > kMaxWorkspaceBytes)) break;
            if (p.splits == splits) plans.push_back(p);
        }
    }
    return plans;
}

/// The rule: the candidate of least predicted time; on a tie, the first (larger blocks, then
/// fewer slices).
Plan choose_plan(int M, int N, int K, const Machine& gpu) {
    const std::vector<Plan> plans = candidate_plans(M, N, K, gpu);
    if (plans.empty()) throw course::DoesNotFitError("no block shape of the size-aware kernel fits this GPU");
    Plan best = plans.front();
    for (const Plan& p : plans)
        if (p.predicted_us() < best.predicted_us()) best = p;
    return best;
}

/// This GPU, as the rule sees it (queried once): the clock is the highest the driver reports.
const Machine& this_machine() {
    static const Machine gpu = [] {
        const course::DeviceReport d = course::query_device();
        Machine m;
        m.sm_count = d.sm_count;
        m.fp32_lanes = fp32_lanes_per_sm(d.cc_major, d.cc_minor);
        if (m.fp32_lanes == 0) m.fp32_lanes = 128;  // an architecture the table does not know: a guess, for the model only
        int khz = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d.index));
        m.clock_ghz = khz / 1e6;
        m.dram_gbs = d.theoretical_bandwidth_gbs();
        for (const BlockShape& b : kBlockShapes) m.blocks_per_sm.push_back(b.blocks_per_sm());
        return m;
    }();
    return gpu;
}

Plan choose_plan_here(int M, int N, int K) { return choose_plan(M, N, K, this_machine()); }

/// "128x256 blocks (8 warps, 1 per SM: 132 at once), 288 tiles x 4 K slices of 752 = 1152
/// blocks = 8.73 waves -> 9; predicted 912 + 86 us (workspace)".
std::string describe(const Plan& p) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "%s blocks (%d warps, %d per SM: %d at once), %lld tiles x %d K slice%s of %d = %lld blocks = "
                  "%.2f waves -> %lld; predicted %.0f us%s",
                  p.block->name, p.block->warps, p.per_sm, p.slots, p.tiles, p.splits, p.splits == 1 ? "" : "s",
                  p.k_slice, p.tiles * p.splits, static_cast<double>(p.tiles * p.splits) / p.slots, p.waves,
                  p.compute_us, p.splits == 1 ? "" : (" + " + std::to_string(std::lround(p.workspace_us)) + " us (workspace)").c_str());
    return line;
}

/// --plans: the candidates at M x N x K on this GPU, fastest predicted first (the first is the
/// rule's choice): the best ten, then each block shape's unsplit plan if it was not among them.
void print_candidate_plans(int M, int N, int K) {
    std::vector<Plan> plans = candidate_plans(M, N, K, this_machine());
    std::stable_sort(plans.begin(), plans.end(),
                     [](const Plan& a, const Plan& b) { return a.predicted_us() < b.predicted_us(); });
    std::printf("== %s: the plans at %d x %d x %d (M x N x K), fastest predicted first; the first is chosen ==\n",
                kSizeAwareName, M, N, K);
    const std::size_t shown = std::min<std::size_t>(plans.size(), 10);
    for (std::size_t i = 0; i < plans.size(); ++i)
        if (i < shown || plans[i].splits == 1) std::printf("  %3zu. %s\n", i + 1, describe(plans[i]).c_str());
    std::printf("  (%zu plans in all)\n", plans.size());
}

/// The rung that chooses: the plan of choose_plan_here, launched.
void launch_size_aware(const float* A, const float* B, float* C, int M, int N, int K) {
    const Plan plan = choose_plan_here(M, N, K);
    plan.block->launch(A, B, C, M, N, K, plan.splits);
}

struct Rung {
    const char* name;
    Launcher launch;
    int shared_bytes = 0;  // dynamic shared memory per block, where it may exceed 48 KiB (else 0)
};
/// Every kernel configuration of this program, in the order they are presented: the table, the
/// sweep and the checks (check.cu) all walk this list, so a new configuration is one line here
/// (and, for a new TileShape, one name in check.cu's COURSE_FOR_EACH_TILE_SHAPE).
const Rung kRungs[] = {
    {"warp_tiled 128x128x8 8x8", launch_warp_tiled<WarpTile8x8>},
    {"warp_tiled 128x256x8 16x8", launch_warp_tiled<WarpTile16x8>},
    {"pipelined 128x256x8 16x8", launch_pipelined<WarpTile16x8, 3>, pipelined_shared_bytes<WarpTile16x8, 3>()},
    {"pipelined 128x256x16 16x8", launch_pipelined<WarpTile16x8K16, 3>, pipelined_shared_bytes<WarpTile16x8K16, 3>()},
    {kSizeAwareName, launch_size_aware},  // its block shapes that fit: chosen per GPU
};
/// Whether this GPU gives a block the shared memory the rung needs (on a T4 the 16-deep
/// pipelined kernel, 74,496 bytes, does not fit: its launcher refuses with DoesNotFitError).
bool fits_this_gpu(const Rung& r) { return static_cast<std::size_t>(r.shared_bytes) <= smem_per_block_optin(); }
const Rung& kSizeAware = kRungs[std::size(kRungs) - 1];

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

/// The size-aware rung's plan at each shape: what the rule chose, and the numbers it chose by.
template <std::size_t kCount>
void print_plans(const SweepShape (&shapes)[kCount]) {
    std::printf("\n== %s: the plan at each shape (times predicted by plan_for) ==\n", kSizeAware.name);
    for (const SweepShape& shape : shapes) {
        const Plan plan = choose_plan_here(shape.m, shape.n, shape.k);
        std::printf("  %-10s %s\n", shape.label, describe(plan).c_str());
    }
}

/// Each kernel at each sweep shape, checked (at the sampled positions) and timed: at least 3
/// repeats, up to --repeats, fewer for slow launches so the whole sweep stays short.
int run_sweep(const course::DeviceReport& gpu, const std::vector<const Rung*>& chosen,
              const course::TimingOptions& timing) {
    const CublasHandle cublas;
    std::vector<std::string> names = {"cuBLAS SGEMM (fp32)"};
    for (const Rung* v : chosen) names.push_back(v->name);
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
        if (!timing.csv.empty()) table.append_csv(timing.csv, kLessonName, gpu.short_description());
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
    if (std::find(chosen.begin(), chosen.end(), &kSizeAware) != chosen.end()) print_plans(kSweepShapes);
    std::printf("%s\n", all_ok ? "All outputs match the CPU reference." : "SOME OUTPUTS ARE WRONG (see above).");
    return all_ok ? course::kExitOk : course::kExitFailed;
}

// ---------------------------------------------------------------- one size

/// cuBLAS and each chosen rung at one M x N x K: checked, timed, and each as % of cuBLAS.
int run_one_size(const course::DeviceReport& gpu, const std::vector<const Rung*>& chosen, int M, int N, int K,
                 const course::TimingOptions& timing) {
    Problem p(M, N, K, 51);
    std::printf("Checking %zu outputs (%s) against a CPU double reference;\n"
                "error bound %.3g = gamma_K * max_ij sum_k |a_ik * b_kj| (gamma_K = K u / (1 - K u), u = 2^-24; plus the\n"
                "reference's own error): a correct kernel stays inside it; a missing term fails for certain above twice it.\n\n",
                p.where.size(), p.full ? "all of them" : "corners, edges and random points: the full CPU product is too slow",
                p.tolerance().abs_tol);
    const CublasHandle cublas;  // default math: true fp32, no tensor cores
    course::ResultsTable table(std::to_string(M) + " x " + std::to_string(N) + " x " + std::to_string(K) +
                                   " (M x N x K) fp32 matmul, median of " + std::to_string(timing.repeats),
                               "TFLOP/s");
    bool all_ok = true;
    std::vector<double> ms;  // [0]: cuBLAS, then the rungs
    auto measure = [&](const std::string& name, auto&& launch, bool ceiling) {
        const std::string check = p.verify(name, launch, p.tolerance());
        all_ok &= check == "ok";
        const course::Timing t = course::time_gpu(launch, timing.warmup, timing.repeats);
        table.add(name, t.median_ms, course::tflop_per_s(p.flops(), t.median_ms), check, ceiling);
        ms.push_back(t.median_ms);
    };
    measure("cuBLAS SGEMM (fp32)", [&] { launch_cublas(cublas, p.a.data(), p.b.data(), p.c.data(), M, N, K); }, true);
    for (const Rung* r : chosen) measure(r->name, [&] { r->launch(p.a.data(), p.b.data(), p.c.data(), M, N, K); }, false);
    table.print();
    if (!timing.csv.empty()) table.append_csv(timing.csv, kLessonName, gpu.short_description());
    if (std::find(chosen.begin(), chosen.end(), &kSizeAware) != chosen.end())
        std::printf("\n%s: %s\n", kSizeAware.name, describe(choose_plan_here(M, N, K)).c_str());

    std::size_t fastest = 1;
    for (std::size_t v = 2; v < ms.size(); ++v)
        if (ms[v] < ms[fastest]) fastest = v;
    std::printf("\nFastest rung: %s, %.1f%% of cuBLAS SGEMM at %d x %d x %d.\n%s\n", chosen[fastest - 1]->name,
                100.0 * ms[0] / ms[fastest], M, N, K,
                all_ok ? "All outputs match the CPU reference." : "SOME OUTPUTS ARE WRONG (see above).");
    return all_ok ? course::kExitOk : course::kExitFailed;
}

// ---------------------------------------------------------------- the program

int lesson(int argc, char** argv) {
    long long M = 4096, N = 4096, K = 4096;
    std::string only;
    bool sweep = false, plans = false;
    course::TimingOptions timing;
    course::Cli cli(kLessonName, "Lesson 05, going further: warp tiles and cp.async pipelines on the way to cuBLAS "
                                 "SGEMM, each checked against a CPU double reference and timed.");
    cli.option("--m", &M, "rows of A and C", 1, 65536)
        .option("--n", &N, "columns of B and C", 1, 65536)
        .option("--k", &K, "columns of A, rows of B", 1, 65536)
        .option("--kernel", &only, "time only the rungs whose name contains this text (cuBLAS always runs)")
        .flag("--sweep", &sweep, "instead of one size, time every rung at sizes from 256^3 to 8192^3 and two "
                                 "skinny shapes (ignores --m, --n, --k)")
        .flag("--plans", &plans, "print the plans the size-aware rule chooses from at --m, --n, --k (block shape, "
                                 "split of K, waves, predicted time), fastest predicted first, and time nothing");
    course::add_timing_options(cli, timing);
    if (!cli.parse(argc, argv)) return course::kExitOk;
    if (M * K > INT32_MAX || K * N > INT32_MAX || M * N > INT32_MAX)
        throw course::UsageError("each of m*k, k*n and m*n must stay below 2^31 elements");
    std::vector<const Rung*> chosen;
    for (const Rung& r : kRungs)
        if (std::string(r.name).find(only) != std::string::npos) chosen.push_back(&r);
    if (chosen.empty()) throw course::UsageError("--kernel '" + only + "' matches no rung of this program");

    course::require_gpu();
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);
    if (plans) {
        print_candidate_plans(static_cast<int>(M), static_cast<int>(N), static_cast<int>(K));
        return course::kExitOk;
    }
    std::vector<const Rung*> fitting;
    for (const Rung* r : chosen) {
        if (fits_this_gpu(*r)) fitting.push_back(r);
        else std::printf("%s left out: it needs %d bytes of shared memory per block, this GPU allows at most %zu\n",
                         r->name, r->shared_bytes, gpu.smem_per_block_optin);
    }
    if (fitting.empty()) throw course::DoesNotFitError("no rung chosen by --kernel '" + only + "' fits in this GPU's shared memory");
    if (sweep) {
        course::require_device_memory(4.0 * 3 * 8192 * 8192, "the sweep's largest A, B and C");
        return run_sweep(gpu, fitting, timing);
    }
    course::require_device_memory(4.0 * (M * K + K * N + M * N), "A, B and C");
    return run_one_size(gpu, fitting, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), timing);
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
