// Lesson 04 — summing an array: from one atomicAdd per element to the speed of CUB.
// What it shows, each step timed and checked in the same run: the CPU loop in float and double (a
// float accumulator stops growing at 2^24); one atomicAdd per element; the shared-memory tree of
// the documents and how to combine the per-block sums (a second launch, or one atomic per block);
// fewer, fuller blocks (add during load, grid-stride loop), warp shuffles, float4 loads, and a
// "last block" finish that makes the fastest version a single launch; CUB as the ceiling; and what
// one atomicAdd to one address costs, which is why one atomic per block loses to a relaunch.
// going_further/ tests the Parallel Patterns blog's "6x faster than the CPU" for one atomic per
// element (at 2^26 floats and at the blog's 1M), and runs two broken barriers under
// compute-sanitizer.
// Leaves out: grid-wide sync (cooperative launches), Kahan summation. Read next: going_further/,
// lessons/05_tiled_matmul; CUDA C++ Programming Guide, "Synchronization Functions"; Higham, ch. 4.
#include "float_sum.hpp"
#include "lesson.cuh"

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

// n is a long long everywhere, from 1 to 2^31 - 1 (the course's cap: 8 GiB of floats; CUB gets an
// int count, so 32-bit offsets). n = 0 is refused: every launcher throws before touching the GPU.
constexpr long long kMaxN = 2147483647;
constexpr long long kDefaultN = 1LL << 26;  // 256 MiB, far above L2
constexpr int kBlock = 256;  // threads per block, in every kernel
constexpr int kWarp = 32;
[[maybe_unused]] constexpr unsigned kFullMask = 0xffffffffu;  // unused in the exercise until its warp sum is written

// ---------------------------------------------------------------- block-level building blocks

/// The documents' tree, in shared memory with sequential addressing: in each round the lower half
/// of the active threads adds the upper half's value to its own. Every thread gets the total.
/// The barrier after each round is what makes the next round read finished values.
__device__ float block_sum_tree(float v) {
    // EXERCISE BEGIN 04.tree
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
// Why outside the if: a __syncthreads() is only defined when every thread of the block reaches it.
// Inside `if (t < stride)` the others never arrive (going_further/ runs that). It never spans
// blocks: they synchronise only through the end of a launch (see launch_tree_relaunch).

/// A warp adds its 32 values through registers: after the 5 steps lane 0 holds the total.
/// __shfl_down_sync both moves the value and synchronises the lanes named in the mask (the classic
/// `volatile` shared-array version has been a race since Volta: notes.md says why).
__device__ float warp_sum(float v) {
    // EXERCISE BEGIN 04.shuffle
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

/// Step 1: every thread adds its element straight into the result. Slow: the adds to one address
/// are done one at a time, in L2. And wrong at 2^26: a float total stops growing at 2^24.
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

/// Step 2: the documents' kernel. One element per thread, one tree per block, one sum per block.
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
/// launch. A block must not wait for another (they need not even be on the GPU at the same
/// time), but blocks can count: each stores its partial and bumps a counter; the block that brings
/// the count to gridDim.x adds the partials, writes the result and resets the counter. Step 8: the
/// same kernel with kThreads = 1024, 4x fewer blocks, so 4x fewer counter atomics (see the tally).
constexpr int kLastBlockUnroll = 4;
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    reduce_vec4_last_block(const float* __restrict__ in, long long n, float* partials, unsigned* blocks_done,
                           float* out) {
    // EXERCISE BEGIN 04.last_block
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
    // is_last is the same in the whole block, so block_sum_shuffle's barriers below are reached by all.
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

// ---------------------------------------------------------------- sizes of grids and scratch space

constexpr long long div_up(long long a, long long b) { return (a + b - 1) / b; }

/// Blocks for a grid-stride kernel: as many as the GPU holds at once (`resident_blocks`), but no
/// more than the data needs if each thread is to get at least `items_per_thread` elements.
unsigned grid_stride_blocks(long long n, int threads_per_block, int items_per_thread, int resident_blocks) {
    const long long wanted = div_up(n, static_cast<long long>(threads_per_block) * items_per_thread);
    return static_cast<unsigned>(std::max(1LL, std::min<long long>(wanted, resident_blocks)));
}

/// The grid a grid-stride kernel is launched with: SM count x the blocks of this kernel one SM can
/// hold. Asked once per kernel (a static): launchers run inside the timed region.
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

/// Launches of the one-element-per-thread tree until one value is left: 1 up to 256 elements, 4 up to 2^32.
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

/// Device scratch the variants share: partial sums (the relaunched tree's, or one per block of the
/// last-block kernel: at most 32 blocks per SM), and the last-block counter, which the last block
/// resets. Empty when default-constructed, which is enough for the launchers to refuse a bad n.
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
// Each does everything a caller needs for a correct result, so its cost (a memset, a second
// launch) is inside the timing. check.cu calls these same functions.

void require_valid_n(long long n) {
    if (n < 1 || n > kMaxN)
        throw std::invalid_argument("a reduction needs 1 to 2^31 - 1 elements, got n = " + std::to_string(n));
}

/// For the kernels that atomicAdd into *out: zero it first, a separate GPU operation, timed too.
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
// Each variant is checked against the double reference within sum_error_bound(depth, ...), `depth`
// being the most float additions any input goes through (common/float_sum.hpp explains both).

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
    long long (*atomics)(long long n) = nullptr;  // for the lesson's tally: the atomicAdds to one address
};
/// Steps 1 to 8; the table and the tally rely on step 1 coming first and the relaunch second.
const Variant kVariants[] = {
    {"atomic_per_element (+memset)", launch_atomic_per_element, [](long long n) { return n; }, false},
    {"tree_shared + relaunch over partials", launch_tree_relaunch,
     [](long long n) { return kBlockDepth * tree_levels(n); }, false},
    {"tree_shared + atomic per block (+memset)", launch_tree_atomic,
     [](long long n) { return kBlockDepth + div_up(n, kBlock); }, false, [](long long n) { return div_up(n, kBlock); }},
    {"tree_add_during_load + atomic (+memset)", launch_tree_add_during_load,
     [](long long n) { return 1 + kBlockDepth + div_up(n, 2 * kBlock); }, false,
     [](long long n) { return div_up(n, 2 * kBlock); }},
    {"grid_stride_tree + atomic (+memset)", launch_grid_stride<BlockSum::Tree>,
     depth_of<reduce_grid_stride<BlockSum::Tree>, 1, false>, true},
    {"grid_stride_shuffle + atomic (+memset)", launch_grid_stride<BlockSum::Shuffle>,
     depth_of<reduce_grid_stride<BlockSum::Shuffle>, 1, false>, true,
     [](long long n) -> long long { return grid_of<reduce_grid_stride<BlockSum::Shuffle>, 1>(n); }},
    {"vec4_shuffle + atomic (+memset)", launch_vec4_atomic, depth_of<reduce_vec4_atomic, 4, false>, true},
    {"vec4_shuffle + last block, 256 thr, 4 loads", launch_vec4_last_block<kBlock>,  // one counter atomic per block
     depth_of<reduce_vec4_last_block<kBlock>, 4 * kLastBlockUnroll, true>, true,
     [](long long n) -> long long { return grid_of<reduce_vec4_last_block<kBlock>, 4 * kLastBlockUnroll>(n); }},
    {"vec4_shuffle + last block, 1024 thr, 4 loads", launch_vec4_last_block<1024>,
     depth_of<reduce_vec4_last_block<1024>, 4 * kLastBlockUnroll, true, 1024>, true,
     [](long long n) -> long long { return grid_of<reduce_vec4_last_block<1024>, 4 * kLastBlockUnroll, 1024>(n); }},
};

// ---------------------------------------------------------------- the lesson

int lesson(int argc, char** argv) {
    long long n = kDefaultN;
    course::TimingOptions timing;
    course::Cli cli("04_reduction", "Sums n floats with atomics, with the shared-memory tree and its faster "
                                    "successors, and with CUB; checks every sum against the CPU and times it.");
    cli.option("--n", &n, "number of floats to sum (2^26 = 256 MiB, far above L2)", 1, kMaxN);
    course::add_timing_options(cli, timing);
    if (!cli.parse(argc, argv)) return course::kExitOk;

    // Both before the input is filled on the host: a GPU, and room on it for n floats.
    course::require_gpu();
    course::require_device_memory(4.0 * n + 4.0 * tree_partials(n) + (1 << 20), std::to_string(n) + " floats");
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);

    // Values in [0, 1) (check.cu also tests both signs); the reference is the double CPU loop.
    const std::vector<float> host_in = course::random_floats(static_cast<std::size_t>(n), 404, 0.0f, 1.0f);
    const double sum_abs = sum_abs_cpu(host_in), reference = sum_cpu<double>(host_in);

    const double bytes_read = 4.0 * n;
    course::ResultsTable table("sum of " + std::to_string(n) + " floats in [0, 1); median of " +
                                   std::to_string(timing.repeats) + " runs; GB/s of bytes read",
                               "GB/s");
    auto add = [&](const std::string& name, double ms, const std::string& check, bool ceiling = false) {
        table.add(name, ms, course::gb_per_s(bytes_read, ms), check, ceiling);
    };
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

    bool all_ok = true;
    std::vector<double> variant_ms;  // in the order of kVariants
    for (const Variant& v : kVariants) {
        out.poison();  // a variant that never writes the result leaves a NaN, which fails
        v.launch(in.data(), n, out.data(), ws);
        const SumCheck check = check_sum(result(), reference, sum_abs, v.depth(n), n);
        all_ok &= check.pass;
        auto launch = [&] { v.launch(in.data(), n, out.data(), ws); };
        variant_ms.push_back(course::time_gpu(launch, timing.warmup, timing.repeats).median_ms);
        add(v.name, variant_ms.back(), check.text);
    }
    table.print();
    if (!timing.csv.empty()) table.append_csv(timing.csv, "04_reduction", gpu.short_description());

    // What one atomicAdd to one address costs (step 1 made n of them), and what that means for the
    // variants that finish with one atomic per block: their atomics alone take blocks x (time per add).
    const double atomic_ms = variant_ms[0], ns_per_add = atomic_ms * 1e6 / static_cast<double>(n);
    std::printf("\nAtomics to one address are done one after another: %lld of them took %.3f ms, %.2f ns each.\n",
                n, atomic_ms, ns_per_add);
    std::printf("  %-46s %10s %16s %12s\n", "variant (one atomicAdd per block or counter)", "atomics", "x ns each = ms", "measured ms");
    for (std::size_t k = 0; k < std::size(kVariants); ++k)
        if (kVariants[k].atomics)
            std::printf("  %-46s %10lld %16.4f %12.4f\n", kVariants[k].name, kVariants[k].atomics(n),
                        kVariants[k].atomics(n) * ns_per_add * 1e-6, variant_ms[k]);
    std::printf("  the relaunched tree makes no atomics; it took %.4f ms in all (%d launches)\n", variant_ms[1], tree_levels(n));
    std::printf("\n%s\n", all_ok ? "Every result is within its error bound of the double reference."
                                 : "SOME RESULTS ARE WRONG (see the check column).");
    return all_ok ? course::kExitOk : course::kExitFailed;
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
