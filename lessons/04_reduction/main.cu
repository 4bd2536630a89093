// Lesson 04 — summing an array: from one atomicAdd per element to the speed of CUB.
//
// What it shows, one small step at a time, each timed and checked in the same run: the CPU loop in
// float and in double (a float accumulator stops growing at 2^24, where floats are 2 apart); one
// atomicAdd per element; the source's shared-memory tree and what it leaves out, combining the
// per-block sums (a second launch, or one atomicAdd per block); fewer, fuller blocks (add during
// load, grid-stride loop), warp shuffles, float4 loads, and a "last block" finish that makes the
// fastest version a single launch, then the same kernel in 4x fewer, 4x larger blocks (fewer atomics at
// the end); CUB as the ceiling; and what one atomicAdd to one address costs,
// which is why one atomic per block loses to a relaunch. Two switches run a broken kernel instead of
// the ladder: --racy (a missing barrier, for racecheck) and --divergent-barrier (a barrier that
// only some threads reach, for synccheck).
// What the source got wrong: one atomic per element is not "6x faster than the CPU" (this run
// prints both), 1M floats is too small to time a GPU sum (launch latency dominates), its tree
// stops at one partial sum per block, and its "conditional sync" does not deadlock here (see
// --divergent-barrier): it is undefined, which is worse.
// What it leaves out: a cooperative launch with grid-wide sync (cooperative_groups, grid.sync()),
// compensated (Kahan) summation, other types.
// Read next: lessons/05_tiled_matmul; the CUDA C++ Programming Guide on __syncthreads(), warp
// shuffles and memory fences; N. Higham, "Accuracy and Stability of Numerical Algorithms", ch. 4.
#include "lesson.cuh"

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// n is a long long everywhere, host and kernels. It runs from 1 to 2^31 - 1: that cap is this
// course's own choice (2^31 floats are 8 GiB), not a CUB limit. CUB's DeviceReduce::Sum takes the
// count as a template type and picks its offsets from it; the lesson passes an int, so CUB uses
// 32-bit offsets. n = 0 is refused: every launcher throws std::invalid_argument before touching
// the GPU.
constexpr long long kMaxN = 2147483647;
constexpr long long kDefaultN = 1LL << 26;  // 256 MiB, far above L2
constexpr int kBlock = 256;  // threads per block, in every kernel
constexpr int kWarp = 32;
[[maybe_unused]] constexpr unsigned kFullMask = 0xffffffffu;  // unused in the exercise until its warp sum is written

// ---------------------------------------------------------------- block-level building blocks

/// The source's tree, in shared memory with sequential addressing: in each round the lower half
/// of the active threads adds the upper half's value to its own. Every thread gets the total.
/// The barrier after each round is what makes the next round read finished values.
__device__ float block_sum_tree(float v) {
    // EXERCISE BEGIN 04.tree: the shared-memory tree: store v, then halve the active threads each round until s[0] is the total.
    // EXERCISE TODO: Every thread returns the block's total. Mind where the barriers go (the comment below says why).
    // EXERCISE TODO: Check: GPU test cases "every variant is within its error bound...", "...exact on small integers", n = 1 to 2^26 + 7.
    // EXERCISE STUB: return nanf("");  // NaN: every sum built on this fails its check until you write the tree
    static_assert((kBlock & (kBlock - 1)) == 0, "the tree halves: a power of two");
    __shared__ float s[kBlock];
    const int t = threadIdx.x;
    s[t] = v;
    __syncthreads();  // every value is stored before anyone reads a neighbour's
    for (int stride = kBlock / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();  // outside the if: see below
    }
    return s[0];
    // EXERCISE END
}
// Why outside the if: a __syncthreads() is only defined when every thread of the block reaches it
// (a branch is fine if the whole block takes the same side). Inside `if (t < stride)` the other
// threads never arrive: the block may hang, or the barrier may let threads through with the data
// half-written; which one you get depends on the GPU and compiler (--divergent-barrier shows what
// this GPU does). __syncthreads() never spans blocks. In an ordinary launch, blocks synchronise
// only through the end of the launch (see launch_tree_relaunch): nothing guarantees that all of
// them are on the GPU at once, so a block waiting for another could wait forever. A cooperative
// launch (cudaLaunchCooperativeKernel) does guarantee it, and only then may blocks wait for each
// other with cooperative_groups' grid.sync(); this lesson does not use it.

/// A warp adds its 32 values through registers: after the 5 steps lane 0 holds the total.
/// __shfl_down_sync both moves the value and synchronises the lanes named in the mask. The classic
/// alternative, the last 32 values in a `volatile` shared array with no barrier, is a race since
/// Volta: lanes of a warp are scheduled independently, so lane 0 may read s[16] before lane 16
/// has added s[48] into it. `volatile` only forces the load; it does not order threads.
__device__ float warp_sum(float v) {
    // EXERCISE BEGIN 04.shuffle: the shuffle step: five __shfl_down_sync additions, after which lane 0 holds the warp's sum.
    // EXERCISE TODO: Check: the same GPU test cases, through every variant that sums with shuffles (grid_stride_shuffle, vec4_*).
    // EXERCISE STUB: return nanf("");  // NaN: every sum built on this fails its check until you write the shuffles
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
    return v;
    // EXERCISE END
}

/// Each warp sums with shuffles, warp 0 sums the warp totals: one barrier, where block_sum_tree
/// has nine (one after the stores, one after each of its 8 halving rounds for 256 threads).
/// The total is valid in thread 0 only. kThreads: the block's size, a multiple of 32, <= 1024.
template <int kThreads = kBlock>
__device__ float block_sum_shuffle(float v) {
    static_assert(kThreads % kWarp == 0 && kThreads <= kWarp * kWarp, "whole warps, at most 32 of them");
    __shared__ float warp_totals[kThreads / kWarp];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warp_sum(v);
    if (lane == 0) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_sum(lane < kThreads / kWarp ? warp_totals[lane] : 0.0f);  // a whole warp
    return v;
}

// ---------------------------------------------------------------- kernels, in the lesson's order

/// Step 1: every thread adds its element straight into the result. Correct, and slow: the adds
/// to one address are done one at a time, in the L2 cache (the lesson prints the time per add).
__global__ void reduce_atomic_per_element(const float* __restrict__ in, long long n, float* out) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, in[i]);
}

/// How a block hands on its sum: store it for a later launch, or add it to the result.
enum class Finish { WritePartial, AtomicAdd };

template <Finish kFinish>
__device__ void finish_block(float block_total, float* out) {
    if (threadIdx.x != 0) return;
    if constexpr (kFinish == Finish::WritePartial) out[blockIdx.x] = block_total;
    else atomicAdd(out, block_total);
}

/// Step 2: the source's kernel. One element per thread, one tree per block, one sum per block.
template <Finish kFinish>
__global__ void reduce_tree_shared(const float* __restrict__ in, long long n, float* out) {
    const long long i = static_cast<long long>(blockIdx.x) * kBlock + threadIdx.x;
    finish_block<kFinish>(block_sum_tree(i < n ? in[i] : 0.0f), out);
}

/// Step 3: half the blocks; each thread adds two elements (a block apart, so both loads stay
/// coalesced) before the tree. The first round of the tree now does useful loads too.
__global__ void reduce_tree_add_during_load(const float* __restrict__ in, long long n, float* out) {
    const long long i = static_cast<long long>(blockIdx.x) * (2 * kBlock) + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    if (i + kBlock < n) v += in[i + kBlock];
    finish_block<Finish::AtomicAdd>(block_sum_tree(v), out);
}

/// Steps 4 and 5: only as many blocks as the GPU runs at once; each thread strides through the
/// array by the size of the whole grid (neighbouring threads still read neighbouring addresses),
/// so the block's sum and its atomic are paid once per hundreds of elements, not per 256.
/// Step 4 sums the block with the shared-memory tree, step 5 with warp shuffles.
enum class BlockSum { Tree, Shuffle };
template <BlockSum kSum>
__global__ void reduce_grid_stride(const float* __restrict__ in, long long n, float* out) {
    const long long stride = static_cast<long long>(gridDim.x) * kBlock;
    float v = 0.0f;
    for (long long i = static_cast<long long>(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) v += in[i];
    if constexpr (kSum == BlockSum::Tree) v = block_sum_tree(v);
    else v = block_sum_shuffle(v);
    finish_block<Finish::AtomicAdd>(v, out);
}

/// This thread's share of the array, read 16 bytes at a time. A float4 load needs a 16-byte
/// aligned address, so the elements before the first boundary (`head`, 0..3 of them) and after
/// the last whole float4 (`tail`, 0..3) are read one by one. kUnroll float4 loads are issued
/// before any is used, so each thread keeps several requests in flight.
template <int kUnroll>
__device__ float thread_sum_vec4(const float* __restrict__ in, long long n) {
    const long long thread = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const long long misalign = reinterpret_cast<std::uintptr_t>(in) % 16;  // 0, 4, 8 or 12 bytes
    const long long head = min(n, (16 - misalign) % 16 / 4);
    const long long vecs = (n - head) / 4;
    const long long tail_start = head + 4 * vecs;
    const float4* body = reinterpret_cast<const float4*>(in + head);

    float sum = 0.0f;
    if (thread < head) sum += in[thread];
    if (thread < n - tail_start) sum += in[tail_start + thread];
    long long v = thread;
    for (; v + (kUnroll - 1) * threads < vecs; v += kUnroll * threads) {
        float4 x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) x[u] = __ldg(&body[v + u * threads]);  // read-only path
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) sum += (x[u].x + x[u].y) + (x[u].z + x[u].w);
    }
    for (; v < vecs; v += threads) {
        const float4 x = __ldg(&body[v]);
        sum += (x.x + x.y) + (x.z + x.w);
    }
    return sum;
}

/// Step 6: float4 loads (one in flight per thread) + shuffles, one atomicAdd per block.
__global__ void __launch_bounds__(kBlock) reduce_vec4_atomic(const float* __restrict__ in, long long n, float* out) {
    finish_block<Finish::AtomicAdd>(block_sum_shuffle(thread_sum_vec4<1>(in, n)), out);
}

/// Step 7: four float4 loads in flight per thread, and the blocks' sums combined inside the
/// launch. In an ordinary launch a block must not wait for another (they need not even be on
/// the GPU at the same time), but blocks can count: each block stores its partial and bumps a
/// counter; the block that brings the count to gridDim.x knows every partial is stored, adds
/// them up, writes the result and resets the counter for the next launch. No block waits.
/// Step 8 is the same kernel with kThreads = 1024: the same threads per SM in 4x fewer blocks,
/// so 4x fewer counter atomics, which all arrive at the end of the run (see the lesson's tally).
constexpr int kLastBlockUnroll = 4;
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    reduce_vec4_last_block(const float* __restrict__ in, long long n, float* partials, unsigned* blocks_done,
                           float* out) {
    // EXERCISE BEGIN 04.last_block: finish across blocks in one launch: store the block's partial, count, let the last block add them.
    // EXERCISE TODO: __threadfence() before and after the atomicAdd on blocks_done; the last block writes *out and resets the counter.
    // EXERCISE TODO: Check: the same GPU test cases for "vec4_shuffle + last block", and "launching again gives the same sum".
    const float block_total = block_sum_shuffle<kThreads>(thread_sum_vec4<kLastBlockUnroll>(in, n));
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = block_total;
        // A fence orders; it makes nothing visible by itself. This one: any thread of the GPU that
        // sees the count below go up also sees the partial above (a release).
        __threadfence();
        is_last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
        __threadfence();  // and the reads below come after the count (an acquire): the last block reads every partial
    }
    __syncthreads();  // also orders block_sum_shuffle's shared reads before its reuse below
    // A barrier inside a branch is only defined if the whole block takes the same way. is_last is
    // the same for every thread of the block, so the barriers in block_sum_shuffle are safe.
    if (!is_last) return;
    float v = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) v += __ldcg(&partials[b]);  // from L2
    const float total = block_sum_shuffle<kThreads>(v);
    if (threadIdx.x == 0) {
        *out = total;
        *blocks_done = 0;
    }
    // EXERCISE END
}

/// DELIBERATELY BROKEN, run only with --racy (never by the checks). The source's tree with the
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

/// DELIBERATELY BROKEN, run only with --divergent-barrier (never by the checks). The source's tree
/// with its barrier moved INSIDE `if (t < stride)`, the "conditional sync" mistake of document
/// 004: in each round only the threads that add reach the barrier. CUDA C++ leaves that undefined.
/// What a given GPU does is another matter; the lesson runs it once, with a time limit, and
/// compute-sanitizer --tool synccheck says what is wrong.
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

// ---------------------------------------------------------------- sizes of grids and scratch space

constexpr long long div_up(long long a, long long b) { return (a + b - 1) / b; }

/// Blocks for a grid-stride kernel: as many as the GPU holds at once (`resident_blocks`), but no
/// more than the data needs if each thread is to get at least `items_per_thread` elements.
unsigned grid_stride_blocks(long long n, int threads_per_block, int items_per_thread, int resident_blocks) {
    const long long wanted = div_up(n, static_cast<long long>(threads_per_block) * items_per_thread);
    return static_cast<unsigned>(std::max(1LL, std::min<long long>(wanted, resident_blocks)));
}

/// The grid a grid-stride kernel is launched with: SM count x the blocks of this kernel one SM can
/// hold (registers, shared memory, threads). Asked once per kernel (a static): launchers run
/// inside the timed region and should stay cheap.
template <auto kKernel, int kItemsPerThread, int kThreads = kBlock>
unsigned grid_of(long long n) {
    static const int resident = [] {
        int device = 0, sms = 0, per_sm = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, kThreads, 0));
        return sms * per_sm;
    }();
    return grid_stride_blocks(n, kThreads, kItemsPerThread, resident);
}

/// Launches of the one-element-per-thread tree until one value is left: 1 up to 256 elements,
/// 2 up to 65536, 3 up to 2^24, 4 up to 2^32.
int tree_levels(long long n) {
    int levels = 1;
    for (; n > kBlock; n = div_up(n, kBlock)) ++levels;
    return levels;
}
/// Partial sums all those launches leave behind (the last launch writes the result itself).
long long tree_partials(long long n) {
    long long total = 0;
    for (; n > kBlock; n = div_up(n, kBlock)) total += div_up(n, kBlock);
    return total;
}

/// Device scratch the variants share: partial sums (for the relaunched tree, or one per block of
/// the last-block kernel: at most 32 blocks per SM), and the last-block counter, zero between
/// launches because the last block resets it. Default-constructed it is empty, which is enough
/// for the launchers to refuse a bad n.
struct Workspace {
    Workspace() = default;
    Workspace(long long n, int sm_count)
        : partials(static_cast<std::size_t>(std::max<long long>(tree_partials(n), 32LL * sm_count))), blocks_done(1) {
        CUDA_CHECK(cudaMemset(blocks_done.data(), 0, blocks_done.bytes()));
    }
    course::DeviceBuffer<float> partials;
    course::DeviceBuffer<unsigned> blocks_done;
};

// ---------------------------------------------------------------- launchers
// The check (check.cu) calls these same functions. Each one does everything a caller needs for a
// correct result, so whatever it costs (a memset, a second launch) is inside the timing.

void require_valid_n(long long n) {
    if (n < 1 || n > kMaxN)
        throw std::invalid_argument("a reduction needs 1 to 2^31 - 1 elements, got n = " + std::to_string(n));
}

/// For the kernels that atomicAdd into *out: zero it first. That is a separate operation on the
/// GPU (tiny, but not free), and it is timed with the kernel.
template <class Kernel>
void zero_then_launch(Kernel kernel, unsigned grid, const float* in, long long n, float* out) {
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float)));
    kernel<<<grid, kBlock>>>(in, n, out);
    CUDA_CHECK_LAUNCH();
}

void launch_atomic_per_element(const float* in, long long n, float* out, Workspace&) {
    require_valid_n(n);
    zero_then_launch(reduce_atomic_per_element, course::ceil_div(n, kBlock), in, n, out);
}

/// Cross-block synchronisation the plain way: the end of a launch is a barrier for the whole
/// grid, so each launch reduces the previous launch's partial sums, until one block is enough.
void launch_tree_relaunch(const float* in, long long n, float* out, Workspace& ws) {
    require_valid_n(n);
    float* partials = ws.partials.data();
    for (; n > kBlock; n = div_up(n, kBlock)) {
        const unsigned blocks = course::ceil_div(n, kBlock);
        reduce_tree_shared<Finish::WritePartial><<<blocks, kBlock>>>(in, n, partials);
        CUDA_CHECK_LAUNCH();
        in = partials;
        partials += blocks;
    }
    reduce_tree_shared<Finish::WritePartial><<<1, kBlock>>>(in, n, out);
    CUDA_CHECK_LAUNCH();
}

void launch_tree_atomic(const float* in, long long n, float* out, Workspace&) {
    require_valid_n(n);
    zero_then_launch(reduce_tree_shared<Finish::AtomicAdd>, course::ceil_div(n, kBlock), in, n, out);
}

void launch_tree_add_during_load(const float* in, long long n, float* out, Workspace&) {
    require_valid_n(n);
    zero_then_launch(reduce_tree_add_during_load, course::ceil_div(n, 2 * kBlock), in, n, out);
}

template <BlockSum kSum>
void launch_grid_stride(const float* in, long long n, float* out, Workspace&) {
    require_valid_n(n);
    zero_then_launch(reduce_grid_stride<kSum>, grid_of<reduce_grid_stride<kSum>, 1>(n), in, n, out);
}

void launch_vec4_atomic(const float* in, long long n, float* out, Workspace&) {
    require_valid_n(n);
    zero_then_launch(reduce_vec4_atomic, grid_of<reduce_vec4_atomic, 4>(n), in, n, out);
}

/// One launch, nothing else: no memset (the last block writes *out), no second kernel.
template <int kThreads>
void launch_vec4_last_block(const float* in, long long n, float* out, Workspace& ws) {
    require_valid_n(n);
    const unsigned grid = grid_of<reduce_vec4_last_block<kThreads>, 4 * kLastBlockUnroll, kThreads>(n);
    if (grid > ws.partials.size()) throw std::logic_error("launch_vec4_last_block: workspace too small");
    reduce_vec4_last_block<kThreads><<<grid, kThreads>>>(in, n, ws.partials.data(), ws.blocks_done.data(), out);
    CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- how accurate must a sum be?
// Rounding makes float sums inexact, so a check needs a tolerance, and it should be one that can be
// justified. If no input value passes through more than `depth` float additions on its way to the
// result, then |computed - exact| <= gamma(depth) * sum|x_i|, gamma(k) = k*u / (1 - k*u), with
// u = 2^-24 (Higham, ch. 4). A loop has depth n; a tree has depth log2(n). The double reference
// adds its own gamma(n) with u = 2^-53. Once depth*u >= 1 the bound says nothing (infinity).

double sum_error_bound(long long depth, long long n, double sum_abs) {
    auto gamma = [](double k, double u) { return k * u < 1 ? k * u / (1 - k * u) : INFINITY; };
    return (gamma(static_cast<double>(depth), 0x1p-24) + gamma(static_cast<double>(n), 0x1p-53)) * sum_abs;
}

constexpr long long kBlockDepth = 10;  // a sum across one block of <= 1024 threads: 2^10
constexpr long long kVec4Depth = 4;    // (x + y) + (z + w), plus a head and a tail element

/// Depth of a grid-stride kernel: the thread's loop, the block's sum, then the blocks combined
/// either by G atomics in a row or by the last block (a short loop and one more block sum).
long long grid_stride_depth(long long n, long long grid, int threads, bool last_block) {
    const long long loop = div_up(n, grid * threads) + kVec4Depth;
    return loop + kBlockDepth + (last_block ? div_up(grid, threads) + kBlockDepth : grid);
}
template <auto kKernel, int kItemsPerThread, bool kLastBlock, int kThreads = kBlock>
long long depth_of(long long n) {
    return grid_stride_depth(n, grid_of<kKernel, kItemsPerThread, kThreads>(n), kThreads, kLastBlock);
}

// ---------------------------------------------------------------- the variants, in order

struct Variant {
    const char* name;
    void (*launch)(const float* in, long long n, float* out, Workspace& ws);
    long long (*depth)(long long n);  // for the error bound, see above
    bool grid_stride;                 // threads loop: the index arithmetic changes with n
};
const Variant kVariants[] = {
    {"atomic_per_element (+memset)", launch_atomic_per_element, [](long long n) { return n; }, false},
    {"tree_shared + relaunch over partials", launch_tree_relaunch,
     [](long long n) { return kBlockDepth * tree_levels(n); }, false},
    {"tree_shared + atomic per block (+memset)", launch_tree_atomic,
     [](long long n) { return kBlockDepth + div_up(n, kBlock); }, false},
    {"tree_add_during_load + atomic (+memset)", launch_tree_add_during_load,
     [](long long n) { return 1 + kBlockDepth + div_up(n, 2 * kBlock); }, false},
    {"grid_stride_tree + atomic (+memset)", launch_grid_stride<BlockSum::Tree>,
     depth_of<reduce_grid_stride<BlockSum::Tree>, 1, false>, true},
    {"grid_stride_shuffle + atomic (+memset)", launch_grid_stride<BlockSum::Shuffle>,
     depth_of<reduce_grid_stride<BlockSum::Shuffle>, 1, false>, true},
    {"vec4_shuffle + atomic (+memset)", launch_vec4_atomic, depth_of<reduce_vec4_atomic, 4, false>, true},
    {"vec4_shuffle + last block, 256 thr, 4 loads", launch_vec4_last_block<kBlock>,
     depth_of<reduce_vec4_last_block<kBlock>, 4 * kLastBlockUnroll, true>, true},
    {"vec4_shuffle + last block, 1024 thr, 4 loads", launch_vec4_last_block<1024>,
     depth_of<reduce_vec4_last_block<1024>, 4 * kLastBlockUnroll, true, 1024>, true},
};

// ---------------------------------------------------------------- CPU side

/// The loop everyone writes first, with the accumulator type as the only choice. Sequential: without
/// -ffast-math the compiler may not reorder float additions. The reference is sum_cpu<double>.
template <class Accumulator>
Accumulator sum_cpu(const std::vector<float>& x) {
    Accumulator sum = 0;
    for (float v : x) sum += v;
    return sum;
}
double sum_abs_cpu(const std::vector<float>& x) {
    double sum = 0;
    for (float v : x) sum += std::fabs(v);
    return sum;
}

struct SumCheck {
    bool pass;
    std::string text;  // for the table's check column (no commas: it also goes to the CSV)
};
/// "ok (rel err 3.1e-08)", "unbounded (rel err 5.0e-01)" (finite, but the bound is infinite),
/// or "FAIL (got ... expected ... bound ...)". A NaN, such as the poison, always fails.
SumCheck check_sum(double got, double expected, double sum_abs, long long depth, long long n) {
    const double err = std::fabs(got - expected), bound = sum_error_bound(depth, n, sum_abs);
    char text[160];
    if (!std::isfinite(got) || !(err <= bound)) {
        std::snprintf(text, sizeof text, "FAIL (got %.9g expected %.9g bound %.3g)", got, expected, bound);
        return {false, text};
    }
    std::snprintf(text, sizeof text, "%s (rel err %.1e)", std::isfinite(bound) ? "ok" : "unbounded",
                  expected != 0 ? err / std::fabs(expected) : err);
    return {true, text};
}

// ---------------------------------------------------------------- the lesson

/// --racy: one run of reduce_tree_missing_sync and nothing else. Its answer is reported, not
/// judged: whether it comes out right or wrong, only racecheck can say that the code is broken.
int racy_demo(const std::vector<float>& host_in, double reference, double sum_abs) {
    const long long n = static_cast<long long>(host_in.size());
    course::DeviceBuffer<float> in(host_in), out(1);
    out.poison();
    zero_then_launch(reduce_tree_missing_sync, course::ceil_div(n, kBlock), in.data(), n, out.data());
    const double got = out.to_host()[0];
    const bool right = check_sum(got, reference, sum_abs, kBlockDepth + div_up(n, kBlock), n).pass;
    std::printf("\n--racy: the tree without its loop barrier returned %.9g (%s this run); the reference is %.9g.\n"
                "Right or wrong, the answer does not show the bug: a race can give either on any run.\n"
                "compute-sanitizer --tool racecheck shows where it is. Only this demo ran; the exit code is 0.\n",
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

/// --divergent-barrier: one run of reduce_tree_divergent_sync, with a time limit. Whatever it
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
    const bool right = check_sum(got, reference, sum_abs, kBlockDepth + div_up(n, kBlock), n).pass;
    std::printf("\n--divergent-barrier: the tree with its barrier inside `if (t < stride)` finished and returned %.9g\n"
                "(%s this run); the reference is %.9g. Finishing, even with the right answer, does not make it\n"
                "correct: a barrier that only some threads of the block reach is undefined behaviour in CUDA C++.\n"
                "compute-sanitizer --tool synccheck reports it. Only this demo ran; the exit code is 0.\n",
                got, right ? "within its error bound" : "WRONG", reference);
    return course::kExitOk;
}

int lesson(int argc, char** argv) {
    long long n = kDefaultN;
    bool racy = false, divergent = false;
    course::TimingOptions timing;
    course::Cli cli("04_reduction", "Sums n floats on the CPU, with atomics, with the shared-memory tree and its "
                                    "faster successors, and with CUB; checks and times every one.");
    cli.option("--n", &n, "number of floats to sum (2^26 = 256 MiB, far above L2)", 1, kMaxN)
        .flag("--racy", &racy,
              "instead of the ladder, run once a tree with a missing __syncthreads() (for racecheck; exit 0)")
        .flag("--divergent-barrier", &divergent,
              "instead of the ladder, run once a tree whose __syncthreads() only some threads reach (for synccheck)");
    course::add_timing_options(cli, timing);
    if (!cli.parse(argc, argv)) return course::kExitOk;
    if (racy && divergent) throw course::UsageError("--racy and --divergent-barrier each run one demo: give one of them");

    if (racy) cli.note_ignored("--racy", {"--warmup", "--repeats", "--csv"});  // one untimed run, no table

    // Whether the GPU part can run is known before the CPU part starts. Without a GPU the CPU sums
    // still run, up to the default size: for a larger n, filling gigabytes on the host only to say
    // then that there is no GPU would take long and could exhaust a small machine's memory.
    const std::string no_gpu = course::gpu_unavailable_reason();
    if (!no_gpu.empty() && n > kDefaultN)
        throw course::NoGpuError(no_gpu + "; without a GPU the CPU sums run only up to --n " + std::to_string(kDefaultN));
    if (no_gpu.empty())  // and if n floats do not fit in the GPU's memory, say so before the host work too
        course::require_device_memory(4.0 * n + 4.0 * tree_partials(n) + (1 << 20), std::to_string(n) + " floats");

    // Values in [0, 1), like probabilities or pixel intensities. All positive, so the float
    // accumulator's stall shows (check.cu also tests values of both signs).
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
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);
    const double bytes_read = 4.0 * n;
    if (racy) return racy_demo(host_in, reference, sum_abs);
    if (divergent) return divergent_barrier_demo(host_in, reference, sum_abs);

    const std::string problem = "sum of " + std::to_string(n) + " floats in [0, 1); GPU: median of " +
                                std::to_string(timing.repeats) + " runs; CPU: host timer, one run; GB/s of bytes read";
    course::ResultsTable table(problem, "GB/s");
    auto add = [&](const std::string& name, double ms, const std::string& check, bool ceiling = false) {
        table.add(name, ms, course::gb_per_s(bytes_read, ms), check, ceiling);
    };
    const SumCheck float_check = check_sum(cpu_float, reference, sum_abs, n, n);
    bool all_ok = float_check.pass;
    add("CPU loop, float accumulator", cpu_float_ms, float_check.text);
    add("CPU loop, double accumulator (the reference)", cpu_double_ms, "-");

    course::DeviceBuffer<float> in(host_in), out(1);
    Workspace ws(n, gpu.sm_count);
    auto result = [&] { return static_cast<double>(out.to_host()[0]); };

    // The ceiling. CUB says how much scratch it needs; it gets it once, outside the timed region.
    std::size_t cub_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in.data(), out.data(), static_cast<int>(n)));
    course::DeviceBuffer<unsigned char> cub_scratch(cub_bytes);
    auto cub_sum = [&] {
        CUDA_CHECK(cub::DeviceReduce::Sum(cub_scratch.data(), cub_bytes, in.data(), out.data(), static_cast<int>(n)));
    };
    out.poison();
    cub_sum();
    char cub_check[64];  // CUB's tree shape is its own business: report the error, bound nothing
    std::snprintf(cub_check, sizeof cub_check, "- (rel err %.1e)", std::fabs(result() - reference) / reference);
    add("cub::DeviceReduce::Sum", course::time_gpu(cub_sum, timing.warmup, timing.repeats).median_ms, cub_check, true);

    double atomic_ms = 0;
    std::vector<double> variant_ms;  // in the order of kVariants
    for (const Variant& v : kVariants) {
        out.poison();  // a variant that never writes the result leaves a NaN, which fails
        v.launch(in.data(), n, out.data(), ws);
        const SumCheck check = check_sum(result(), reference, sum_abs, v.depth(n), n);
        all_ok &= check.pass;
        auto launch = [&] { v.launch(in.data(), n, out.data(), ws); };
        const double ms = course::time_gpu(launch, timing.warmup, timing.repeats).median_ms;
        if (v.launch == launch_atomic_per_element) atomic_ms = ms;
        variant_ms.push_back(ms);
        add(v.name, ms, check.text);
    }
    table.print();
    if (!timing.csv.empty()) table.append_csv(timing.csv, "04_reduction", gpu.short_description());

    std::printf("\nOne atomicAdd per element: %.3f ms on the GPU; the float loop: %.3f ms on one CPU core "
                "(host timer).\nHere the atomic version is %.1fx %s than the CPU.\n",
                atomic_ms, cpu_float_ms, std::max(atomic_ms, cpu_float_ms) / std::min(atomic_ms, cpu_float_ms),
                atomic_ms > cpu_float_ms ? "slower" : "faster");

    // What one atomicAdd to one address costs, and what that means for the variants that finish
    // with one atomic per block: their atomics alone take (number of blocks) x (time per add).
    const double ns_per_add = atomic_ms * 1e6 / static_cast<double>(n);
    std::printf("\nAtomics to one address are done one after another: %lld of them took %.3f ms, %.2f ns each.\n",
                n, atomic_ms, ns_per_add);
    std::printf("  %-46s %10s %16s %12s\n", "variant (one atomicAdd per block or counter)", "atomics", "x ns each = ms", "measured ms");
    for (std::size_t k = 0; k < std::size(kVariants); ++k) {
        long long atomics = 0;
        if (kVariants[k].launch == launch_tree_atomic) atomics = div_up(n, kBlock);
        if (kVariants[k].launch == launch_tree_add_during_load) atomics = div_up(n, 2 * kBlock);
        if (kVariants[k].launch == launch_grid_stride<BlockSum::Shuffle>)
            atomics = grid_of<reduce_grid_stride<BlockSum::Shuffle>, 1>(n);
        // The last-block kernels: one counter atomicAdd per block, all near the end of the run.
        if (kVariants[k].launch == launch_vec4_last_block<kBlock>)
            atomics = grid_of<reduce_vec4_last_block<kBlock>, 4 * kLastBlockUnroll>(n);
        if (kVariants[k].launch == launch_vec4_last_block<1024>)
            atomics = grid_of<reduce_vec4_last_block<1024>, 4 * kLastBlockUnroll, 1024>(n);
        if (atomics == 0) continue;
        std::printf("  %-46s %10lld %16.4f %12.4f\n", kVariants[k].name, atomics, atomics * ns_per_add * 1e-6,
                    variant_ms[k]);
    }
    for (std::size_t k = 0; k < std::size(kVariants); ++k)
        if (kVariants[k].launch == launch_tree_relaunch)
            std::printf("  the relaunched tree makes no atomics; it took %.4f ms in all (%d launches)\n", variant_ms[k],
                        tree_levels(n));
    std::printf("\n%s\n", all_ok ? "Every result is within its error bound of the double reference."
                                 : "SOME RESULTS ARE WRONG (see the check column).");
    return all_ok ? course::kExitOk : course::kExitFailed;
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
