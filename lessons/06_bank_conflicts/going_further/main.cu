// Lesson 06, going further — lesson 06's bank model at work beyond its 32x32 tile: a stride
// microbenchmark whose time follows the model's conflict degree, the sources' 16x16 tile read by
// 16x16 threads (8-way, and what padding does for it), and lesson 02's fastest transpose (64-wide
// tile, float4 global accesses) with a padded and a swizzled tile, each beside cudaMemcpy.
// Builds on lessons/06_bank_conflicts/main.cu (read that first: the model, the maps, padding and
// the XOR swizzle). All shared accesses here are 4 bytes wide, so the few lines of the model they
// need are repeated below, and this program stands alone.
// Read next: the CUDA C++ Programming Guide, "Shared Memory" (compute capability 5.x and later).
#include "float4.cuh"
#include "lesson.cuh"
#include "transpose_bench.cuh"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

constexpr int kWarpSize = 32;
constexpr int kBanks = 32;

// ---------------------------------------------------------------- the 4-byte bank model, again
/// Wavefronts of one warp's 4-byte access: the most distinct words asked of any one bank
/// (lesson 06's bank_model() for width 4). words[lane] = the 4-byte word index each lane touches.
int wavefronts4(const std::vector<int>& words) {
    std::array<std::set<int>, kBanks> in_bank;
    for (int w : words) in_bank[w % kBanks].insert(w);
    std::size_t worst = 0;
    for (const auto& b : in_bank) worst = std::max(worst, b.size());
    return static_cast<int>(worst);
}
/// s[lane * stride]: its conflict degree.
int stride_degree(int stride) {
    std::vector<int> words;
    for (int lane = 0; lane < kWarpSize; ++lane) words.push_back(lane * stride);
    return wavefronts4(words);
}

// ---------------------------------------------------------------- tile layouts (in 4-byte words)
template <int kTile, int kPitch>
struct PitchTile {  // row r starts at word r * kPitch: kPitch = kTile unpadded, kTile + 1 padded
    static constexpr int kWords = kTile * kPitch;
    __host__ __device__ static constexpr int at(int r, int c) { return r * kPitch + c; }
};
template <int kTile>
struct XorTile {  // lesson 06's SwizzledTile: column c of row r stored at column c ^ (r % 32)
    static constexpr int kWords = kTile * kTile;
    __host__ __device__ static constexpr int at(int r, int c) { return r * kTile + (c ^ (r & 31)); }
};

// ---------------------------------------------------------------- kernels
// The microbenchmark: every lane loads s[lane * stride + offset] many times.
constexpr int kBenchThreads = 256;
constexpr int kBenchWords = 4096;   // 16 KiB of shared memory per block
constexpr int kBenchUnroll = 32;    // independent loads in flight per thread per step
constexpr int kBenchShifts = 32;    // distinct offsets cycled through, so no load can be hoisted
constexpr int kBenchMaxStride = 64;
static_assert((kWarpSize - 1) * kBenchMaxStride + (kBenchShifts - 1) * 32 + (kBenchUnroll - 1) * 32 < kBenchWords,
              "the largest index must stay inside the array");

/// Why this shape: 32 independent loads per step (no load waits for another), full occupancy, and
/// one add per load, so the shared-memory pipe, not latency, sets the time. Every load of a step is
/// k * 32 words past the first (same banks), and each step moves the base by a multiple of 32 words,
/// so every load has exactly the conflict degree of s[lane * stride]. The sum is written out so the
/// loads are not dead code; unsigned addition wraps, so the CPU can reproduce it bit for bit.
__global__ void __launch_bounds__(kBenchThreads)
    shared_stride_bench(const unsigned* __restrict__ table, unsigned* __restrict__ out, int stride, int steps) {
    __shared__ unsigned s[kBenchWords];
    for (int i = threadIdx.x; i < kBenchWords; i += blockDim.x) s[i] = table[i];  // conflict-free fill
    __syncthreads();
    const unsigned* base = s + (threadIdx.x % kWarpSize) * stride;
    unsigned sum = 0;
    for (int step = 0; step < steps; ++step) {
        const unsigned* p = base + (step % kBenchShifts) * 32;
#pragma unroll
        for (int k = 0; k < kBenchUnroll; ++k) sum += p[k * 32];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

/// The small tile of the tutorial the course follows (its CUDA page "Shared Memory", T = 16): 16 x 16
/// threads move a 16 x 16 tile, one element each. A warp is two thread rows (threadIdx.y = 2w and
/// 2w + 1), so its drain reads two tile columns: with 16-word
/// rows, tile rows k and k + 2 start in the same bank (8-way); padded to 16 x 17, 2-way, and the
/// fill, which writes two tile rows 17 words apart, becomes 2-way too (see the printed table).
constexpr int kSmallTile = 16;

template <class Layout>
__global__ void __launch_bounds__(kSmallTile * kSmallTile)
    transpose_tiled16(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[Layout::kWords];
    const int row0 = blockIdx.y * kSmallTile, col0 = blockIdx.x * kSmallTile;
    const int tx = threadIdx.x, ty = threadIdx.y;
    if (row0 + ty < rows && col0 + tx < cols) tile[Layout::at(ty, tx)] = in[(row0 + ty) * cols + col0 + tx];
    __syncthreads();
    const int r = col0 + ty, c = row0 + tx;  // position in `out` (cols x rows)
    if (r < cols && c < rows) out[r * rows + c] = tile[Layout::at(tx, ty)];
}

/// The fast one: a 64-wide tile moved by 8 x 16 threads. threadIdx.x picks 4 consecutive columns,
/// so a warp covers 4 rows x 32 floats and every global load and store is a float4; each thread
/// moves 8 of them each way, and all 8 loads are issued into registers before the first shared
/// store (128 bytes in flight per thread: enough to cover DRAM latency). Shared accesses stay 4
/// bytes wide: the fill writes tile(y, x + k), the gather reads tile(x + k, y), k = 0..3. With
/// PaddedTile<64> (pitch 65) or SwizzledTile<64> both are conflict-free (the model checks it).
/// Edges: a float4 needs a 16-byte-aligned address (cols % 4 == 0 for loads, rows % 4 == 0 for
/// stores); otherwise the same thread moves its 4 elements one by one (load4 and store4,
/// common/float4.cuh, the same calls as lesson 02's kernel).
constexpr int kVecTile = 64;
constexpr int kVecRows = 16;  // threadIdx.y: 0..15; each thread covers rows y, y + 16, y + 32, y + 48

template <class Layout>
__global__ void transpose_tiled_float4(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    constexpr int kPasses = kVecTile / kVecRows, kStrips = kVecTile / 32;
    __shared__ float tile[Layout::kWords];
    const bool vector_loads = cols % 4 == 0 && aligned16(in), vector_stores = rows % 4 == 0 && aligned16(out);
    const int row0 = blockIdx.y * kVecTile, col0 = blockIdx.x * kVecTile;
    const int y0 = threadIdx.y, x0 = 4 * threadIdx.x;
    float4 v[kPasses][kStrips];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
#pragma unroll
        for (int s = 0; s < kStrips; ++s)  // zeros outside the matrix: they go into the tile, never out
            v[p][s] = load4(in, rows, cols, row0 + y0 + p * kVecRows, col0 + x0 + 32 * s, vector_loads);
    }
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
#pragma unroll
        for (int s = 0; s < kStrips; ++s) {
            const int y = y0 + p * kVecRows, x = x0 + 32 * s;
            tile[Layout::at(y, x)] = v[p][s].x, tile[Layout::at(y, x + 1)] = v[p][s].y;
            tile[Layout::at(y, x + 2)] = v[p][s].z, tile[Layout::at(y, x + 3)] = v[p][s].w;
        }
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
#pragma unroll
        for (int s = 0; s < kStrips; ++s) {
            const int y = y0 + p * kVecRows, x = x0 + 32 * s;
            const int out_row = col0 + y, out_col = row0 + x;  // tile column y is output row col0 + y
            if (out_row >= cols || out_col >= rows) continue;
            const float4 w = make_float4(tile[Layout::at(x, y)], tile[Layout::at(x + 1, y)], tile[Layout::at(x + 2, y)],
                                         tile[Layout::at(x + 3, y)]);
            store4(out, cols, rows, out_row, out_col, w, vector_stores);
        }
    }
}

// ---------------------------------------------------------------- launchers (the check calls these too)
using Launcher = void (*)(const float* in, float* out, int rows, int cols);

template <class Layout>
void launch_transpose_tiled16(const float* in, float* out, int rows, int cols) {
    const dim3 grid(course::ceil_div(cols, kSmallTile), course::ceil_div(rows, kSmallTile));
    transpose_tiled16<Layout><<<grid, dim3(kSmallTile, kSmallTile)>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

/// 8 x 16 threads, no carveout hint, no __launch_bounds__: the shape and settings of lesson 02's
/// fastest kernel.
template <class Layout>
void launch_transpose_tiled_float4(const float* in, float* out, int rows, int cols) {
    const dim3 grid(course::ceil_div(cols, kVecTile), course::ceil_div(rows, kVecTile));
    transpose_tiled_float4<Layout><<<grid, dim3(8, kVecRows)>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_shared_stride_bench(const unsigned* table, unsigned* out, int stride, int steps, int blocks) {
    if (stride < 0 || stride > kBenchMaxStride) throw std::invalid_argument("stride out of range");
    shared_stride_bench<<<blocks, kBenchThreads>>>(table, out, stride, steps);
    CUDA_CHECK_LAUNCH();
}

/// Blocks that fill every SM exactly once (no tail wave to blur the timing).
int bench_blocks(const course::DeviceReport& gpu) {
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shared_stride_bench, kBenchThreads, 0));
    return std::max(1, per_sm) * gpu.sm_count;
}

// ---------------------------------------------------------------- what one warp touches, for the model
struct TileAccess {
    std::vector<int> fill, drain;  // 4-byte word of each lane: one shared store / load instruction
};
/// transpose_tiled16: warp 0 is threadIdx.y = 0 and 1, threadIdx.x = lane % 16.
template <class Layout>
TileAccess small_tile_access() {
    TileAccess a;
    for (int lane = 0; lane < kWarpSize; ++lane) {
        a.fill.push_back(Layout::at(lane / 16, lane % 16));
        a.drain.push_back(Layout::at(lane % 16, lane / 16));
    }
    return a;
}
/// transpose_tiled_float4, warp 0 (threadIdx.x = lane % 8, threadIdx.y = lane / 8), p = s = k = 0.
/// Its other instructions differ by whole rows or by k; check.cu models every one of them.
template <class Layout>
TileAccess vec4_tile_access() {
    TileAccess a;
    for (int lane = 0; lane < kWarpSize; ++lane) {
        a.fill.push_back(Layout::at(lane / 8, (lane % 8) * 4));
        a.drain.push_back(Layout::at((lane % 8) * 4, lane / 8));
    }
    return a;
}

struct Transpose {
    const char* name;
    Launcher launch;
    TileAccess (*access)();
};
const Transpose kTransposes[] = {
    {"tiled 16x16 unpadded, 16x16 thr", launch_transpose_tiled16<PitchTile<16, 16>>, small_tile_access<PitchTile<16, 16>>},
    {"tiled 16x17 padded, 16x16 thr", launch_transpose_tiled16<PitchTile<16, 17>>, small_tile_access<PitchTile<16, 17>>},
    {"64x65 padded, float4, 8x16 thr", launch_transpose_tiled_float4<PitchTile<64, 65>>, vec4_tile_access<PitchTile<64, 65>>},
    {"64x64 xor-swizzled, float4, 8x16 thr", launch_transpose_tiled_float4<XorTile<64>>, vec4_tile_access<XorTile<64>>},
};

// ---------------------------------------------------------------- CPU side
using course::transpose_cpu;  // the CPU reference, out[c][r] = in[r][c] (common/verify.hpp)

/// What shared_stride_bench leaves in out[t] for each lane t % 32 (every block, every warp alike).
std::array<unsigned, kWarpSize> stride_bench_cpu(const std::vector<unsigned>& table, int stride, int steps) {
    std::array<unsigned, kWarpSize> sums{};
    for (int lane = 0; lane < kWarpSize; ++lane)
        for (int step = 0; step < steps; ++step)
            for (int k = 0; k < kBenchUnroll; ++k) sums[lane] += table[lane * stride + (step % kBenchShifts) * 32 + k * 32];
    return sums;
}

/// Shared-memory cap of a tiled transpose, GB/s of bytes read + written (lesson 06's formula).
double shared_cap_gbs(int fill_wavefronts, int drain_wavefronts, int sms, double clock_hz) {
    return 2.0 * 128.0 * sms * clock_hz / (fill_wavefronts + drain_wavefronts) / 1e9;
}

int lesson(int argc, char** argv) {
    course::TransposeOptions opt;
    const course::TimingOptions& timing = opt.timing;
    int steps = 1024;
    course::Cli cli("06_bank_conflicts_going_further", "A stride microbenchmark beside the bank model, the 16x16 tile "
                                                       "and the float4 transposes, beside cudaMemcpy.");
    cli.option("--steps", &steps, "microbenchmark steps (32 shared loads each) per thread", 1, 1 << 20);
    if (!course::add_transpose_options(cli, opt).parse(argc, argv)) return course::kExitOk;
    course::check_transpose_options(opt);
    course::require_gpu();
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);
    int clock_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, gpu.index));
    std::printf("== each transpose's shared accesses (wavefronts per warp instruction) and the cap they imply ==\n");
    std::printf("  %-38s %12s %12s %15s\n", "kernel", "fill (st)", "drain (ld)", "cap GB/s r+w");
    for (const Transpose& k : kTransposes) {
        const int f = wavefronts4(k.access().fill), d = wavefronts4(k.access().drain);
        std::printf("  %-38s %12d %12d %15.0f\n", k.name, f, d, shared_cap_gbs(f, d, gpu.sm_count, clock_khz * 1e3));
    }
    bool all_ok = true;
    const std::vector<int> random = course::random_ints(kBenchWords, 6, 0, INT32_MAX);
    const std::vector<unsigned> table(random.begin(), random.end());

    // ---- the microbenchmark (its rows also go to --csv, as a table of their own, for the plot)
    course::ResultsTable strides("stride microbenchmark: every lane loads s[lane * stride]; rate = time / time at stride 1",
                                 "x stride 1");
    {
        const int blocks = bench_blocks(gpu);
        const std::vector<unsigned>& bench_table = table;
        course::DeviceBuffer<unsigned> d_table(bench_table), d_out(static_cast<std::size_t>(blocks) * kBenchThreads);
        std::printf("\n== microbenchmark: every lane loads s[lane * stride], %d blocks x %d threads x %d loads ==\n",
                    blocks, kBenchThreads, steps * kBenchUnroll);
        std::printf("  %7s %14s %10s %18s %12s %8s\n", "stride", "model degree", "ms", "slowdown vs s=1", "within 15%?", "check");
        double base_ms = 0;
        for (int stride : {1, 2, 3, 4, 8, 16, 32, 33, 64, 0}) {
            const int degree = stride_degree(stride);
            d_out.poison();
            launch_shared_stride_bench(d_table.data(), d_out.data(), stride, steps, blocks);
            const auto want = stride_bench_cpu(bench_table, stride, steps);
            const std::vector<unsigned> got = d_out.to_host();
            bool ok = true;
            for (std::size_t t = 0; t < got.size(); ++t) ok &= got[t] == want[t % kWarpSize];
            all_ok &= ok;
            const double ms = course::time_gpu([&] { launch_shared_stride_bench(d_table.data(), d_out.data(), stride, steps, blocks); },
                                               timing.warmup, timing.repeats).median_ms;
            if (stride == 1) base_ms = ms;
            const double slowdown = ms / base_ms;
            const bool within = slowdown >= 0.85 * degree && slowdown <= 1.15 * degree;
            const std::string label = stride ? std::to_string(stride) : "0 (bc)";
            strides.add("s[lane * " + std::to_string(stride) + "], model degree " + std::to_string(degree), ms, slowdown,
                        ok ? "ok" : "FAIL");
            std::printf("  %7s %14d %10.4f %18.2f %12s %8s\n", label.c_str(), degree, ms, slowdown,
                        within ? "yes" : "NO", ok ? "ok" : "FAIL");
            if (stride == 1) {  // a throughput-bound stride 1 should come close to 128 B/clock/SM
                const double bytes = 4.0 * blocks * kBenchThreads * steps * kBenchUnroll;
                std::printf("  %7s stride 1: %.1f bytes per SM per clock at the rated clock (the pipe's limit: 128)\n", "",
                            bytes / (ms * 1e-3) / gpu.sm_count / (clock_khz * 1e3));
            }
        }
        std::printf("  (timing is not a correctness check: 'within 15%%?' does not change the exit code)\n");
    }

    // ---- the transpose, beside the ceiling
    course::TransposeBench bench(opt.rows, opt.cols, timing);  // common/transpose_bench.cuh: the copy first
    for (const Transpose& k : kTransposes) bench.add(k.name, k.launch);
    const int exit_code = bench.finish("06_bank_conflicts_going_further", gpu, all_ok);
    if (!timing.csv.empty()) strides.append_csv(timing.csv, "06_bank_conflicts_going_further", gpu.short_description());
    return exit_code;
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
