// Lesson 06 — bank conflicts you can predict, see and measure.
//
// What it shows:
//   * a host-side bank model: give it the byte addresses one warp touches and the access width
//     (4, 8 or 16 bytes) and it says which bank each lane hits and how many shared-memory
//     wavefronts the access costs; it prints lane-by-bank maps a learner can read;
//   * a throughput-bound microbenchmark, one stride per run, timed beside the model's count;
//   * the 8192 x 8192 transpose again: 32x32 unpadded, 32x33 padded, XOR-swizzled, the seeds'
//     16x16 tile unpadded and padded, then a 64-wide tile with float4 global accesses, padded and
//     swizzled, beside cudaMemcpy in the same run;
//   * `bank_probe`: one warp doing one shared load, so Nsight Compute's counters map 1:1 onto the
//     model (see README.md and ncu_probes.sh). The 8- and 16-byte rules were fitted to those counts.
// What the sources got wrong: "padding gives 4x" (150 -> 600 GB/s). On an H200 it is about 2x for a
// 32x32 tile; a 16x16 tile read by 16x16 threads is only 8-way, and the lesson times what padding
// does for it (README.md). The model below says how many wavefronts each access takes. Their compute
// capability 1.x-3.x bank rules and cudaDeviceSetSharedMemConfig (8-byte banks) are history.
// What it leaves out: ldmatrix / TMA swizzle modes, stores with conflicts (same rules as loads).
// Read next: CUDA C++ Programming Guide, "Shared Memory" under compute capability 5.x and later;
// the Nsight Compute Kernel Profiling Guide, "Memory Tables" (wavefronts, bank conflicts).
#include "lesson.cuh"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

// ================================================================ 1. the bank model (host only)
//
// Shared memory is 32 banks, each 4 bytes wide; 4-byte word w lives in bank w % 32. One pass over
// the banks (a "wavefront", at most 128 bytes) serves one word per bank, and any number of lanes
// asking for the same word (broadcast). The lanes served together form a "unit":
//     wavefronts of a unit = max over banks of the number of DISTINCT words the unit asks of that bank.
// An 8-byte access asks for two adjacent words, a 16-byte one for four. Which lanes form a unit is
// an empirical fit to Nsight Compute's counts on an H200 (README.md), not NVIDIA documentation:
//   * 4-byte accesses: the whole warp is one unit;
//   * 8- and 16-byte accesses: the two half-warps (lanes 0-15, 16-31) are separate units, served
//     one after the other — except an 8-byte access in which each half-warp asks for one single
//     address (a broadcast per half-warp): then the warp is one unit.
// How we got here, one failed prediction at a time (README.md has the table): the common
// explanation (half-warps for 8 bytes, quarter-warps for 16) said 2 and 4 wavefronts for 8- and
// 16-byte broadcasts, ncu counted 1 and 2; "the warp is one unit for 8 bytes" said 1 for
// w8_lanes_mod16, ncu counted 2; "half-warps, except a whole-warp broadcast" said 2 for
// w8_halves_two_addresses, ncu counted 1. This fourth model fits every count so far; the probes
// w8_halves_same_bank and w8_uniform_half_then_row were added to test it before it was measured.
// Conflicts, as ncu counts them: the wavefronts beyond the fewest that could carry the distinct
// words asked for, which is ceil(distinct words / 32) per unit.

// SITE MODEL BEGIN: down to SITE MODEL END, also compiled to WebAssembly for the site's bank explorer (site/)
constexpr int kWarpSize = 32;
constexpr int kBanks = 32;
constexpr int kBankBytes = 4;
constexpr std::int64_t kInactive = -1;  // an address for a lane that does not take part

struct BankReport {
    int width = 4;                        // bytes per lane: 4, 8 or 16
    bool paired = false;                  // lanes pair up on one address (n with n ^ 1, or n with n ^ 2)
    int parts = 1;                        // groups of lanes served one after the other: 1, 2 or 4
    std::array<int, kWarpSize> bank{};    // first bank each lane touches, -1 if inactive
    std::array<int, kWarpSize> pass{};    // in which wavefront the lane is served (one schedule)
    int wavefronts = 0;                   // total, over all parts
    int ideal = 0;                        // parts with an active lane: the words of a part fit one wavefront
    int conflicts() const { return wavefronts - ideal; }           // what ncu reports as bank conflicts
    int degree() const { return ideal ? wavefronts / ideal : 0; }  // slowdown vs conflict-free
};

/// True if every active lane n asks for the same address as lane n ^ mask (or that lane is inactive).
bool lanes_pair_up(const std::vector<std::int64_t>& byte_addr, int mask) {
    for (int lane = 0; lane < static_cast<int>(byte_addr.size()); ++lane) {
        const int partner = lane ^ mask;
        if (byte_addr[lane] == kInactive || partner >= static_cast<int>(byte_addr.size())) continue;
        if (byte_addr[partner] != kInactive && byte_addr[partner] != byte_addr[lane]) return false;
    }
    return true;
}

/// The model. byte_addr[lane] is the shared-memory byte address of lane `lane` (kInactive to skip).
BankReport bank_model(const std::vector<std::int64_t>& byte_addr, int width, bool store = false) {
    if (width != 4 && width != 8 && width != 16) throw std::invalid_argument("bank_model: width must be 4, 8 or 16");
    if (byte_addr.size() > kWarpSize) throw std::invalid_argument("bank_model: at most 32 lanes");
    BankReport r;
    r.width = width;
    // A wavefront moves 128 bytes, one 4-byte register for each of 32 lanes: all lanes of a 4-byte
    // access, 16 of an 8-byte one, 8 of a 16-byte one. Loads of paired lanes share registers
    // (2 x the lanes per part); stores never do (measured, README.md).
    r.paired = !store && width > 4 && (lanes_pair_up(byte_addr, 1) || lanes_pair_up(byte_addr, 2));
    const int lanes_per_part = std::min(kWarpSize, kWarpSize * kBankBytes / width * (r.paired ? 2 : 1));
    r.parts = kWarpSize / lanes_per_part;
    r.bank.fill(-1);
    r.pass.fill(-1);
    for (int part = 0; part < r.parts; ++part) {
        std::array<std::vector<std::int64_t>, kBanks> words;  // distinct words per bank, first-come order
        bool active = false;
        for (int lane = part * lanes_per_part; lane < (part + 1) * lanes_per_part; ++lane) {
            if (lane >= static_cast<int>(byte_addr.size()) || byte_addr[lane] == kInactive) continue;
            if (byte_addr[lane] < 0 || byte_addr[lane] % width != 0)
                throw std::invalid_argument("bank_model: lane " + std::to_string(lane) + " address not aligned to width");
            active = true;
            const std::int64_t first_word = byte_addr[lane] / kBankBytes;
            r.bank[lane] = static_cast<int>(first_word % kBanks);
            int pass = 0;
            for (std::int64_t w = first_word; w < first_word + width / kBankBytes; ++w) {
                auto& in_bank = words[w % kBanks];
                auto it = std::find(in_bank.begin(), in_bank.end(), w);
                if (it == in_bank.end()) it = in_bank.insert(in_bank.end(), w);
                pass = std::max(pass, static_cast<int>(it - in_bank.begin()));
            }
            r.pass[lane] = r.wavefronts + pass;  // offset by the wavefronts of earlier parts
        }
        std::size_t worst = 0;
        for (const auto& in_bank : words) worst = std::max(worst, in_bank.size());
        r.wavefronts += static_cast<int>(worst);
        r.ideal += active ? 1 : 0;
    }
    return r;
}

/// Lane l at byte l * stride * width: the pattern of s[lane * stride] for an array of that width.
std::vector<std::int64_t> strided_addresses(int stride, int width) {
    std::vector<std::int64_t> a;
    for (int lane = 0; lane < kWarpSize; ++lane) a.push_back(static_cast<std::int64_t>(lane) * stride * width);
    return a;
}

/// One line of the map: which wavefront serves each bank for this lane ('.' = bank not touched).
/// Wavefront numbers 0..31 are printed as 0-9 then a-v.
std::string map_row(const BankReport& r, const std::vector<std::int64_t>& addr, int lane) {
    std::string row(kBanks, '.');
    if (r.bank[lane] < 0) return row;
    const char* digits = "0123456789abcdefghijklmnopqrstuv";
    for (int k = 0; k < r.width / kBankBytes; ++k)
        row[(addr[lane] / kBankBytes + k) % kBanks] = r.pass[lane] < 32 ? digits[r.pass[lane]] : '+';
    return row;
}

/// Two maps side by side: lanes down, banks across, each mark = the wavefront that serves the lane.
void print_maps(const char* title_a, const std::vector<std::int64_t>& a, const char* title_b,
                const std::vector<std::int64_t>& b, int width) {
    const BankReport ra = bank_model(a, width), rb = bank_model(b, width);
    std::printf("  %-38s %s\n", title_a, title_b);
    const char* ruler = "0         10        20        30  ";
    std::printf("  lane  bank %s     %s\n", ruler, ruler);
    for (int lane = 0; lane < kWarpSize; ++lane)
        std::printf("  %4d       %s       %s\n", lane, map_row(ra, a, lane).c_str(), map_row(rb, b, lane).c_str());
    std::printf("  wavefronts: %-26d wavefronts: %d\n\n", ra.wavefronts, rb.wavefronts);
}

// ================================================================ 2. tile layouts, shared by kernels and model
// Where element (r, c) of a tile lives in shared memory, in 4-byte words. The kernels and the model
// both call at(), so the printed analysis is about exactly the code that runs.

template <int kTile>
struct UnpaddedTile {  // row r starts at word r * kTile: every row starts in bank 0 (kTile % 32 == 0)
    static constexpr int kWords = kTile * kTile;
    __host__ __device__ static constexpr int at(int r, int c) { return r * kTile + c; }
};
// EXERCISE BEGIN 06.padded: the padded layout: kWords (room for the padding) and at(r, c), so that a column read is conflict-free.
// EXERCISE TODO: Check: host test cases "tile column reads...", "every warp instruction..." and "tile layouts keep every element
// EXERCISE TODO: in its own word" (the bank model judges your layout), then the GPU transposes "tiled 32x33 padded" and "64x65 padded".
// EXERCISE STUB: template <int kTile>
// EXERCISE STUB: struct PaddedTile {
// EXERCISE STUB:     static constexpr int kWords = kTile * kTile;
// EXERCISE STUB:     __host__ __device__ static constexpr int at(int /*r*/, int /*c*/) { return 0; }
// EXERCISE STUB: };
template <int kTile>
struct PaddedTile {  // one spare word per row: row r starts in bank r % 32, a column spreads over banks
    static constexpr int kWords = kTile * (kTile + 1);
    __host__ __device__ static constexpr int at(int r, int c) { return r * (kTile + 1) + c; }
};
// EXERCISE END
// EXERCISE BEGIN 06.swizzled: the swizzled layout: no spare words, and still a conflict-free column read.
// EXERCISE TODO: Permute the columns of each row with an XOR; at() must stay one-to-one inside kWords = kTile * kTile.
// EXERCISE TODO: Check: the same host test cases, then the GPU transposes "tiled 32x32 xor-swizzled" and "64x64 xor-swizzled".
// EXERCISE STUB: template <int kTile>
// EXERCISE STUB: struct SwizzledTile {
// EXERCISE STUB:     static constexpr int kWords = kTile * kTile;
// EXERCISE STUB:     __host__ __device__ static constexpr int at(int /*r*/, int /*c*/) { return 0; }
// EXERCISE STUB: };
template <int kTile>
struct SwizzledTile {  // no spare words: column c of row r is stored at column c ^ (r % 32) of that row
    static constexpr int kWords = kTile * kTile;
    __host__ __device__ static constexpr int at(int r, int c) { return r * kTile + (c ^ (r & 31)); }
};
// EXERCISE END
// SITE MODEL END

// ================================================================ 3. kernels

// ---- the microbenchmark: every lane loads s[lane * stride + offset] many times.
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

// ---- the probe: one warp, exactly one shared load of type T, for Nsight Compute.
constexpr int kProbeWords = 8192;  // 32 KiB; filled with 16-byte stores: 256 conflict-free store wavefronts

template <class T>  // unsigned (LDS), uint2 (LDS.64) or uint4 (LDS.128)
__global__ void bank_probe(const uint4* __restrict__ table, const int* __restrict__ element, T* __restrict__ out) {
    __shared__ uint4 s[kProbeWords / 4];
    for (int i = threadIdx.x; i < kProbeWords / 4; i += blockDim.x) s[i] = table[i];
    __syncthreads();
    const int e = element[threadIdx.x];  // index in units of T; -1 = this lane stays out
    if (e >= 0) out[threadIdx.x] = reinterpret_cast<const T*>(s)[e];
}
/// The same for a store: one shared store of the pattern (no fill: the store counters see it
/// alone), then each lane reads its element back, so the load counters see the pattern as well.
template <class T>
__global__ void bank_probe_store(const int* __restrict__ element, T* __restrict__ out) {
    __shared__ uint4 s[kProbeWords / 4];
    const int e = element[threadIdx.x];
    T v;
    unsigned* w = reinterpret_cast<unsigned*>(&v);
    for (int k = 0; k < static_cast<int>(sizeof(T) / 4); ++k) w[k] = threadIdx.x * 4 + k;  // who wrote it
    if (e >= 0) reinterpret_cast<T*>(s)[e] = v;
    __syncthreads();
    if (e >= 0) out[threadIdx.x] = reinterpret_cast<const T*>(s)[e];
}

// ---- the transposes. `in` is rows x cols, `out` is cols x rows; any shape works.
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

/// The teaching kernel: a 32 x 32 tile per block of 32 x 8 threads, 4 elements per thread. Fill: a
/// warp reads part of an input row (coalesced) and writes a tile ROW. Drain: a warp reads a tile
/// COLUMN and writes part of an output row (coalesced). The column read is where banks matter.
constexpr int kTile = 32;

template <class Layout>
__global__ void __launch_bounds__(kBlockX * kBlockY)
    transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    constexpr int kSteps = kTile / kBlockY;
    __shared__ float tile[Layout::kWords];
    const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
    const int tx = threadIdx.x, ty = threadIdx.y;
    float v[kSteps];
#pragma unroll  // all global loads first: several independent loads in flight per thread
    for (int j = 0; j < kSteps; ++j) {
        const int r = row0 + ty + j * kBlockY, c = col0 + tx;
        if (r < rows && c < cols) v[j] = in[r * cols + c];
    }
#pragma unroll
    for (int j = 0; j < kSteps; ++j)
        if (row0 + ty + j * kBlockY < rows && col0 + tx < cols) tile[Layout::at(ty + j * kBlockY, tx)] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kSteps; ++j) {
        const int r = col0 + ty + j * kBlockY, c = row0 + tx;  // position in `out` (cols x rows)
        if (r < cols && c < rows) out[r * rows + c] = tile[Layout::at(tx, ty + j * kBlockY)];
    }
}

/// The seeds' small tile: 16 x 16 threads move a 16 x 16 tile, one element each. A warp is two
/// thread rows (threadIdx.y = 2w and 2w + 1), so its drain reads two tile columns: with 16-word
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
/// stores); otherwise the same thread moves its 4 elements one by one.
constexpr int kVecTile = 64;
constexpr int kVecRows = 16;  // threadIdx.y: 0..15; each thread covers rows y, y + 16, y + 32, y + 48

template <class Layout>
__global__ void transpose_tiled_float4(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    constexpr int kPasses = kVecTile / kVecRows, kStrips = kVecTile / 32;
    __shared__ float tile[Layout::kWords];
    const bool vector_loads = cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
    const bool vector_stores = rows % 4 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
    const int row0 = blockIdx.y * kVecTile, col0 = blockIdx.x * kVecTile;
    const int y0 = threadIdx.y, x0 = 4 * threadIdx.x;
    float4 v[kPasses][kStrips];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
#pragma unroll
        for (int s = 0; s < kStrips; ++s) {
            const int r = row0 + y0 + p * kVecRows, c = col0 + x0 + 32 * s;
            float4& e = v[p][s];
            e = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // outside the matrix: goes into the tile, never out
            if (r >= rows || c >= cols) continue;
            const float* src = in + r * cols + c;
            if (vector_loads) {  // c % 4 == 0 and cols % 4 == 0, so c + 3 < cols too
                e = *reinterpret_cast<const float4*>(src);
            } else {
                e.x = src[0];
                if (c + 1 < cols) e.y = src[1];
                if (c + 2 < cols) e.z = src[2];
                if (c + 3 < cols) e.w = src[3];
            }
        }
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
            float* dst = out + out_row * rows + out_col;
            if (vector_stores) {
                *reinterpret_cast<float4*>(dst) = w;
            } else {
                dst[0] = w.x;
                if (out_col + 1 < rows) dst[1] = w.y;
                if (out_col + 2 < rows) dst[2] = w.z;
                if (out_col + 3 < rows) dst[3] = w.w;
            }
        }
    }
}

// ================================================================ 4. launchers (the check calls these too)

using Launcher = void (*)(const float* in, float* out, int rows, int cols);

template <class Layout>
void launch_transpose_tiled(const float* in, float* out, int rows, int cols) {
    const dim3 grid(course::ceil_div(cols, kTile), course::ceil_div(rows, kTile));
    transpose_tiled<Layout><<<grid, dim3(kBlockX, kBlockY)>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

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

// SITE MODEL BEGIN: more of the bank explorer's model (site/)
// ---- what a warp of each transpose touches in shared memory (block (0,0), warp 0, first step)
struct TileAccess {
    std::vector<std::int64_t> fill, drain;  // byte addresses of one 4-byte store / load instruction
};
template <class Layout>
TileAccess scalar_tile_access() {  // transpose_tiled: warp 0 has threadIdx.y = 0, threadIdx.x = lane
    TileAccess a;
    for (int lane = 0; lane < kWarpSize; ++lane) {
        a.fill.push_back(Layout::at(0, lane) * 4);
        a.drain.push_back(Layout::at(lane, 0) * 4);
    }
    return a;
}
/// transpose_tiled16: warp 0 is threadIdx.y = 0 and 1, threadIdx.x = lane % 16.
template <class Layout>
TileAccess small_tile_access() {
    TileAccess a;
    for (int lane = 0; lane < kWarpSize; ++lane) {
        a.fill.push_back(Layout::at(lane / 16, lane % 16) * 4);
        a.drain.push_back(Layout::at(lane % 16, lane / 16) * 4);
    }
    return a;
}
/// transpose_tiled_float4, warp 0 (threadIdx.x = lane % 8, threadIdx.y = lane / 8), p = s = k = 0.
/// Its other instructions differ by whole rows or by k; check.cu models every one of them.
template <class Layout>
TileAccess vec4_tile_access() {
    TileAccess a;
    for (int lane = 0; lane < kWarpSize; ++lane) {
        a.fill.push_back(Layout::at(lane / 8, (lane % 8) * 4) * 4);
        a.drain.push_back(Layout::at((lane % 8) * 4, lane / 8) * 4);
    }
    return a;
}
// SITE MODEL END

struct Transpose {
    const char* name;
    Launcher launch;
    TileAccess (*access)();
};
/// The teaching trio first, then the seeds' 16 x 16 tile both ways, then the fast design with both
/// conflict-free layouts.
const Transpose kTransposes[] = {
    {"tiled 32x32 unpadded", launch_transpose_tiled<UnpaddedTile<32>>, scalar_tile_access<UnpaddedTile<32>>},
    {"tiled 32x33 padded", launch_transpose_tiled<PaddedTile<32>>, scalar_tile_access<PaddedTile<32>>},
    {"tiled 32x32 xor-swizzled", launch_transpose_tiled<SwizzledTile<32>>, scalar_tile_access<SwizzledTile<32>>},
    {"tiled 16x16 unpadded, 16x16 thr", launch_transpose_tiled16<UnpaddedTile<16>>, small_tile_access<UnpaddedTile<16>>},
    {"tiled 16x17 padded, 16x16 thr", launch_transpose_tiled16<PaddedTile<16>>, small_tile_access<PaddedTile<16>>},
    {"64x65 padded, float4, 8x16 thr", launch_transpose_tiled_float4<PaddedTile<64>>, vec4_tile_access<PaddedTile<64>>},
    {"64x64 xor-swizzled, float4, 8x16 thr", launch_transpose_tiled_float4<SwizzledTile<64>>,
     vec4_tile_access<SwizzledTile<64>>},
};

// ================================================================ 5. CPU side and the probe table

std::vector<float> transpose_cpu(const std::vector<float>& in, int rows, int cols) {
    std::vector<float> out(in.size());
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) out[static_cast<std::size_t>(c) * rows + r] = in[static_cast<std::size_t>(r) * cols + c];
    return out;
}

/// What shared_stride_bench leaves in out[t] for each lane t % 32 (every block, every warp alike).
std::array<unsigned, kWarpSize> stride_bench_cpu(const std::vector<unsigned>& table, int stride, int steps) {
    std::array<unsigned, kWarpSize> sums{};
    for (int lane = 0; lane < kWarpSize; ++lane)
        for (int step = 0; step < steps; ++step)
            for (int k = 0; k < kBenchUnroll; ++k) sums[lane] += table[lane * stride + (step % kBenchShifts) * 32 + k * 32];
    return sums;
}

// SITE MODEL BEGIN: more of the bank explorer's model (site/)
struct Probe {
    std::string name;
    int width;                         // bytes per lane
    std::vector<std::int64_t> addr;    // byte address per lane
};
Probe stride_probe(int stride, int width) {
    return {"w" + std::to_string(width) + "_stride" + std::to_string(stride), width, strided_addresses(stride, width)};
}
template <class F>
std::vector<std::int64_t> lanes(F byte_address_of_lane) {
    std::vector<std::int64_t> a;
    for (int lane = 0; lane < kWarpSize; ++lane) a.push_back(byte_address_of_lane(lane));
    return a;
}
/// Every pattern the lesson discusses, as a one-instruction probe for Nsight Compute.
std::vector<Probe> probe_table() {
    std::vector<Probe> p;
    for (int s : {0, 1, 2, 3, 4, 8, 16, 32, 33, 64}) p.push_back(stride_probe(s, 4));
    for (int s : {0, 1, 2}) p.push_back(stride_probe(s, 8));
    for (int s : {0, 1, 2}) p.push_back(stride_probe(s, 16));
    // Lanes l and l + 16 on one address: 2 and 4 wavefronts (this 8-byte count broke the second model).
    p.push_back({"w8_lanes_mod16", 8, lanes([](int l) { return (l % 16) * 8; })});
    p.push_back({"w16_lanes_mod16", 16, lanes([](int l) { return (l % 16) * 16; })});
    // Where "the warp is one unit" and "two half-warps" disagree for 8-byte loads. Each half-warp
    // on its own address, in banks 0-1 and 16-17 (ncu: 1, which led to the per-half broadcast rule):
    p.push_back({"w8_halves_two_addresses", 8, lanes([](int l) { return l < 16 ? 0 : 64; })});
    // Tests of that rule, predicted before they were measured: the two addresses in the same banks
    // (one unit: 2 wavefronts, 1 conflict), and a broadcasting half beside a contiguous one (2, 0).
    p.push_back({"w8_halves_same_bank", 8, lanes([](int l) { return l < 16 ? 0 : 128; })});
    p.push_back({"w8_uniform_half_then_row", 8, lanes([](int l) { return l < 16 ? 0 : 256 + (l - 16) * 8; })});
    // A broadcast spoiled by one lane:
    p.push_back({"w8_one_lane_differs", 8, lanes([](int l) { return l == 31 ? 64 : 0; })});
    // Each half-warp 2-way conflicted, in banks 0-15 and 16-31 respectively:
    p.push_back({"w8_halves_conflict", 8, lanes([](int l) {
                     const int h = l % 16;
                     return ((l / 16) * 16 + 2 * (h % 8) + 64 * (h / 8)) * 4;
                 })});
    // Lanes that share a float4 (lesson 05 going further's B fragment: lanes l, l + 8, l + 16, l + 24)
    // do not pair up: each quarter-warp is served alone, 4 wavefronts. Its A fragment (l / 8) does pair.
    p.push_back({"w16_lanes_mod8", 16, lanes([](int l) { return (l % 8) * 16; })});
    p.push_back({"w16_lanes_mod4", 16, lanes([](int l) { return (l % 4) * 16; })});
    p.push_back({"w16_lanes_div8", 16, lanes([](int l) { return (l / 8) * 16; })});
    // Groups of 8 or 4 neighbouring lanes on one 8-byte address: they pair up, one wavefront.
    p.push_back({"w8_lanes_div8", 8, lanes([](int l) { return (l / 8) * 8; })});
    p.push_back({"w8_lanes_div4", 8, lanes([](int l) { return (l / 4) * 8; })});
    // Lanes n and n ^ 1 (or n ^ 2) on one address: pair p = 0..15 reads element p, or, with
    // conflicts, elements that put 2 distinct words in each bank they use.
    auto pair_xor1 = [](int l) { return l / 2; };
    auto pair_xor2 = [](int l) { return (l / 4) * 2 + l % 2; };
    auto two_way = [](int p, int width) {  // p = 0..15: 2-way in banks 0-7 (p < 8) and 16-23 (p >= 8), 8 bytes
        const int q = p % 8;               // for 16 bytes: 2-way in banks 0-15 and 16-31
        return (p / 8) * 64 + (q % 4) * width + (q / 4) * 32 * width;
    };
    p.push_back({"w8_pairs_xor1", 8, lanes([&](int l) { return pair_xor1(l) * 8; })});
    p.push_back({"w8_pairs_xor2", 8, lanes([&](int l) { return pair_xor2(l) * 8; })});
    p.push_back({"w16_pairs_xor1", 16, lanes([&](int l) { return pair_xor1(l) * 16; })});
    p.push_back({"w16_pairs_xor2", 16, lanes([&](int l) { return pair_xor2(l) * 16; })});
    p.push_back({"w8_pairs_xor1_conflict", 8, lanes([&](int l) { return two_way(pair_xor1(l), 8); })});
    p.push_back({"w8_pairs_xor2_conflict", 8, lanes([&](int l) { return two_way(pair_xor2(l), 8); })});
    p.push_back({"w16_pairs_xor1_conflict", 16, lanes([&](int l) { return two_way(pair_xor1(l), 16); })});
    p.push_back({"w16_pairs_xor2_conflict", 16, lanes([&](int l) { return two_way(pair_xor2(l), 16); })});
    // No pairs, 2-way inside each quarter-warp (lanes 0-3 and 4-7 of a quarter in the same banks).
    p.push_back({"w16_quarters_conflict", 16, lanes([](int l) { return (l % 4) * 16 + ((l / 4) % 2) * 128 + (l / 8) * 64; })});
    // Odd lanes inactive: does a lane whose partner is inactive count as paired?
    p.push_back({"w8_even_lanes_only", 8, lanes([](int l) { return l % 2 ? kInactive : (l / 2) * 8; })});
    // Mixed: lanes 4b..4b+3 all in bank b; lanes 4b and 4b+2 share a word, as do 4b+1 and 4b+3.
    p.push_back({"w4_mixed_pairs", 4, lanes([](int l) { return ((l % 2) * 32 + l / 4) * 4; })});
    p.push_back({"tile32x32_column", 4, scalar_tile_access<UnpaddedTile<32>>().drain});
    p.push_back({"tile32x33_column", 4, scalar_tile_access<PaddedTile<32>>().drain});
    p.push_back({"tile32x32_xor_column", 4, scalar_tile_access<SwizzledTile<32>>().drain});
    // 16x16 threads on a 16x16 tile: a warp is threadIdx.y = 0 and 1, reading tile[tx][ty].
    p.push_back({"tile16x16_column", 4, lanes([](int l) { return ((l % 16) * 16 + l / 16) * 4; })});
    p.push_back({"tile16x17_column", 4, lanes([](int l) { return ((l % 16) * 17 + l / 16) * 4; })});
    p.push_back({"double32x32_column", 8, lanes([](int l) { return l * 32 * 8; })});
    p.push_back({"double32x33_column", 8, lanes([](int l) { return l * 33 * 8; })});
    p.push_back({"tile64x65_vec4_fill", 4, vec4_tile_access<PaddedTile<64>>().fill});
    p.push_back({"tile64x65_vec4_gather", 4, vec4_tile_access<PaddedTile<64>>().drain});
    p.push_back({"tile64_xor_vec4_fill", 4, vec4_tile_access<SwizzledTile<64>>().fill});
    p.push_back({"tile64_xor_vec4_gather", 4, vec4_tile_access<SwizzledTile<64>>().drain});
    return p;
}
// SITE MODEL END

/// Runs one probe: exactly one launch of bank_probe<T> (or bank_probe_store<T>) with one warp.
/// Returns true if every lane got what it should: the words it loaded from `table`, or after a
/// store, the words some lane that stored to the same address wrote.
bool run_probe(const Probe& p, const std::vector<unsigned>& table, bool store = false) {
    std::vector<int> element(kWarpSize, -1);
    for (int lane = 0; lane < static_cast<int>(p.addr.size()); ++lane)
        if (p.addr[lane] != kInactive) {
            if (p.addr[lane] < 0 || p.addr[lane] % p.width || p.addr[lane] + p.width > kProbeWords * 4)
                throw course::UsageError("probe " + p.name + ": address misaligned or outside the probe array");
            element[lane] = static_cast<int>(p.addr[lane] / p.width);
        }
    course::DeviceBuffer<unsigned> d_table(table), d_out(kWarpSize * p.width / 4);
    course::DeviceBuffer<int> d_element(element);
    d_out.poison();
    const auto* t = reinterpret_cast<const uint4*>(d_table.data());
    unsigned* o = d_out.data();
    const int* e = d_element.data();
    if (p.width == 4) store ? bank_probe_store<unsigned><<<1, kWarpSize>>>(e, o) : bank_probe<unsigned><<<1, kWarpSize>>>(t, e, o);
    if (p.width == 8)
        store ? bank_probe_store<uint2><<<1, kWarpSize>>>(e, reinterpret_cast<uint2*>(o))
              : bank_probe<uint2><<<1, kWarpSize>>>(t, e, reinterpret_cast<uint2*>(o));
    if (p.width == 16)
        store ? bank_probe_store<uint4><<<1, kWarpSize>>>(e, reinterpret_cast<uint4*>(o))
              : bank_probe<uint4><<<1, kWarpSize>>>(t, e, reinterpret_cast<uint4*>(o));
    CUDA_CHECK_LAUNCH();
    const std::vector<unsigned> got = d_out.to_host();
    const int n = p.width / 4;
    bool ok = true;
    for (int lane = 0; lane < kWarpSize; ++lane)
        for (int k = 0; k < n && element[lane] >= 0; ++k) {
            const unsigned v = got[lane * n + k];
            if (!store) ok &= v == table[p.addr[lane] / 4 + k];
            else ok &= v / 4 < kWarpSize && v % 4 == static_cast<unsigned>(k) && element[v / 4] == element[lane];
        }
    return ok;
}

/// Patterns from a file, one per line: NAME WIDTH and 32 byte addresses (-1: the lane stays out).
std::vector<Probe> read_probe_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw course::UsageError("cannot read --probe-file " + path);
    std::vector<Probe> probes;
    std::string line;
    for (int number = 1; std::getline(f, line); ++number) {
        std::istringstream in(line);
        Probe p;
        if (!(in >> p.name)) continue;  // blank line
        std::int64_t a = 0;
        in >> p.width;
        while (in >> a) p.addr.push_back(a);
        const std::string where = path + ":" + std::to_string(number) + ": ";
        if (p.width != 4 && p.width != 8 && p.width != 16) throw course::UsageError(where + "width must be 4, 8 or 16");
        if (p.addr.size() != kWarpSize || !in.eof()) throw course::UsageError(where + "need 32 integer addresses");
        for (std::int64_t x : p.addr)
            if (x != kInactive && (x < 0 || x % p.width || x + p.width > kProbeWords * 4))
                throw course::UsageError(where + "address " + std::to_string(x) + " misaligned or outside the probe array");
        probes.push_back(p);
    }
    if (probes.empty()) throw course::UsageError("--probe-file " + path + " holds no pattern");
    return probes;
}

// ================================================================ 6. the lesson

/// Shared-memory cap of a tiled transpose, GB/s of bytes read + written: each 128 bytes of output
/// costs (fill + drain) wavefronts, and an SM serves one wavefront per clock.
double shared_cap_gbs(int fill_wavefronts, int drain_wavefronts, int sms, double clock_hz) {
    return 2.0 * 128.0 * sms * clock_hz / (fill_wavefronts + drain_wavefronts) / 1e9;
}

/// By value: callers often pass a temporary probe_table(), which a reference would outlive.
Probe probe_named(const std::vector<Probe>& probes, const std::string& name) {
    const auto it = std::find_if(probes.begin(), probes.end(), [&](const Probe& p) { return p.name == name; });
    if (it == probes.end()) throw course::UsageError("unknown probe '" + name + "' (see --list-probes)");
    return *it;
}
int wavefronts_of(const std::string& probe) {
    const Probe p = probe_named(probe_table(), probe);
    return bank_model(p.addr, p.width).wavefronts;
}

/// Host only: the maps and the model's verdict on every pattern the lesson uses.
void print_model_section() {
    std::printf("== the bank model: which wavefront serves each lane, lanes down, banks across ==\n");
    print_maps("32x32 float tile, column 0", scalar_tile_access<UnpaddedTile<32>>().drain, "32x33 float tile, column 0",
               scalar_tile_access<PaddedTile<32>>().drain, 4);
    std::printf("  %-24s %6s %11s %10s\n", "pattern (= --probe name)", "width", "wavefronts", "conflicts");
    for (const Probe& p : probe_table()) {
        const BankReport r = bank_model(p.addr, p.width);
        std::printf("  %-24s %6d %11d %10d\n", p.name.c_str(), p.width, r.wavefronts, r.conflicts());
    }
    std::printf("\n  16x16 tile read by 16x16 threads: a warp is two thread rows, so its column read touches two\n"
                "  columns, and with 16-word rows, tile rows k and k+2 start in the same bank: %d-way unpadded,\n"
                "  still %d-way padded to 16x17, whose fill (two tile rows, 17 words apart) turns %d-way as well.\n"
                "  Doubles: a column of a 32x32 double tile takes %d wavefronts, of a 32x33 one %d (the warp asks\n"
                "  for 64 distinct words: 2 wavefronts at least).\n\n",
                wavefronts_of("tile16x16_column"), wavefronts_of("tile16x17_column"),
                bank_model(small_tile_access<PaddedTile<16>>().fill, 4).wavefronts, wavefronts_of("double32x32_column"),
                wavefronts_of("double32x33_column"));
}

/// Needs the GPU's SM count and clock: what each transpose's shared traffic allows at best.
void print_transpose_analysis(int sms, double clock_hz) {
    std::printf("== each transpose's shared accesses (wavefronts per warp instruction) and the cap they imply ==\n");
    std::printf("  one 128-byte wavefront per SM per clock; %d SMs at %.2f GHz\n", sms, clock_hz / 1e9);
    std::printf("  %-38s %12s %12s %15s\n", "kernel", "fill (st)", "drain (ld)", "cap GB/s r+w");
    auto row = [&](const std::string& name, int f, int d) {
        std::printf("  %-38s %12d %12d %15.0f\n", name.c_str(), f, d, shared_cap_gbs(f, d, sms, clock_hz));
    };
    for (const Transpose& k : kTransposes)
        row(k.name, bank_model(k.access().fill, 4).wavefronts, bank_model(k.access().drain, 4).wavefronts);
    std::printf("  A cap is an upper bound from shared memory alone: a kernel can run far below it for other\n"
                "  reasons. Compare each cap with the kernel's measured GB/s in the table below.\n\n");
}

int lesson(int argc, char** argv) {
    long long rows = 8192, cols = 8192;
    int steps = 1024, probe_stride = -1, probe_width = 4;
    std::string probe, probe_file;
    bool list_probes = false, probe_store = false;
    course::TimingOptions timing;
    course::Cli cli("06_bank_conflicts", "Bank model and maps, a stride microbenchmark, and the transpose "
                                         "unpadded / padded / swizzled beside cudaMemcpy.");
    cli.option("--rows", &rows, "rows of the transposed matrix", 1, 65536)
        .option("--cols", &cols, "columns of the transposed matrix", 1, 65536)
        .option("--steps", &steps, "microbenchmark steps (32 shared loads each) per thread", 1, 1 << 20)
        .option("--probe", &probe, "run only bank_probe with this pattern (see --list-probes), for ncu")
        .option("--probe-stride", &probe_stride, "run only bank_probe with s[lane * stride] (-1: off), for ncu", -1,
                kBenchMaxStride)
        .option("--probe-width", &probe_width, "bytes per lane for --probe-stride: 4, 8 or 16", 4, 16)
        .option("--probe-file", &probe_file, "patterns from this file instead of the table (NAME WIDTH and 32 byte addresses a line)")
        .flag("--probe-store", &probe_store, "probes store the pattern (then load it back) instead of loading it")
        .flag("--list-probes", &list_probes, "print every probe pattern with the model's prediction, and exit");
    course::add_timing_options(cli, timing);
    if (!cli.parse(argc, argv)) return course::kExitOk;
    if (rows * cols > INT32_MAX) throw course::UsageError("--rows x --cols must stay below 2^31 elements");
    if (probe_width != 4 && probe_width != 8 && probe_width != 16) throw course::UsageError("--probe-width must be 4, 8 or 16");
    cli.refuse_together("--probe", "--probe-stride");
    cli.refuse_together("--probe", "--list-probes");
    cli.refuse_without("--probe-width", "--probe-stride");
    cli.refuse_together("--probe-file", "--probe-stride");
    if (probe_store && probe.empty() && probe_file.empty() && probe_stride < 0 && !list_probes)
        throw course::UsageError("--probe-store needs --probe, --probe-stride, --probe-file or --list-probes");
    if (!probe.empty() || probe_stride >= 0 || list_probes || !probe_file.empty())  // one probe launch, or none: nothing is timed
        cli.note_ignored(list_probes ? "--list-probes" : !probe.empty() ? "--probe" : probe_stride >= 0 ? "--probe-stride" : "--probe-file",
                         {"--rows", "--cols", "--steps", "--warmup", "--repeats", "--csv"});

    // ---- probes: one launch, one warp, one load; the prediction is printed for ncu_probes.sh
    std::vector<Probe> probes = probe_file.empty() ? probe_table() : read_probe_file(probe_file);
    if (probe_stride >= 0) {
        probes.push_back(stride_probe(probe_stride, probe_width));
        probe = probes.back().name;
    }
    if (list_probes) {
        for (const Probe& p : probes) {
            const BankReport r = bank_model(p.addr, p.width, probe_store);
            std::printf("%s %d %d %d\n", p.name.c_str(), p.width, r.wavefronts, r.conflicts());
        }
        return course::kExitOk;
    }
    const std::vector<int> random = course::random_ints(kProbeWords, 6, 0, INT32_MAX);
    const std::vector<unsigned> table(random.begin(), random.end());  // shared-memory contents
    if (!probe.empty() || !probe_file.empty()) {  // --probe all (or a file): every pattern, in order
        course::require_gpu();
        int wrong = 0, run = 0;
        for (const Probe& p : probes) {
            if (probe != "all" && !probe.empty() && p.name != probe) continue;
            const BankReport r = bank_model(p.addr, p.width, probe_store);
            const bool ok = run_probe(p, table, probe_store);
            wrong += !ok, ++run;
            if (probe != "all" && probe_file.empty())
                std::printf("probe %s: width %d, model: %d wavefronts, %d beyond the ideal %d; values %s\n", p.name.c_str(),
                            p.width, r.wavefronts, r.conflicts(), r.ideal, ok ? "ok" : "WRONG");
        }
        if (run == 0) throw course::UsageError("unknown probe '" + probe + "' (see --list-probes)");
        if (run > 1) std::printf("%d probes (%s) run, %d with wrong values\n", run, probe_store ? "stores" : "loads", wrong);
        return wrong ? course::kExitFailed : course::kExitOk;
    }

    print_model_section();
    course::require_gpu();
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);
    int clock_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, gpu.index));
    print_transpose_analysis(gpu.sm_count, clock_khz * 1e3);
    bool all_ok = true;

    // ---- the microbenchmark (its rows also go to --csv, as a table of their own, for the plot)
    course::ResultsTable strides("stride microbenchmark: every lane loads s[lane * stride]; rate = time / time at stride 1",
                                 "x stride 1");
    {
        const int blocks = bench_blocks(gpu);
        const std::vector<unsigned> bench_table(table.begin(), table.begin() + kBenchWords);
        course::DeviceBuffer<unsigned> d_table(bench_table), d_out(static_cast<std::size_t>(blocks) * kBenchThreads);
        std::printf("\n== microbenchmark: every lane loads s[lane * stride], %d blocks x %d threads x %d loads ==\n",
                    blocks, kBenchThreads, steps * kBenchUnroll);
        std::printf("  %7s %14s %10s %18s %12s %8s\n", "stride", "model degree", "ms", "slowdown vs s=1", "within 15%?", "check");
        double base_ms = 0;
        for (int stride : {1, 2, 3, 4, 8, 16, 32, 33, 64, 0}) {
            const int degree = bank_model(strided_addresses(stride, 4), 4).degree();
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
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const double bytes_moved = 2.0 * n * sizeof(float);
    course::require_device_memory(bytes_moved, "two " + std::to_string(rows) + " x " + std::to_string(cols) + " float matrices");
    const std::vector<float> host_in = course::random_floats(n, 2024);
    const std::vector<float> expected = transpose_cpu(host_in, static_cast<int>(rows), static_cast<int>(cols));
    course::DeviceBuffer<float> in(host_in), out(n);
    course::ResultsTable results(std::to_string(rows) + " x " + std::to_string(cols) + " fp32 transpose, " +
                                     std::to_string(timing.repeats) + " repeats (median), GB/s counts bytes read + written",
                                 "GB/s");
    const auto copy = course::time_gpu([&] { CUDA_CHECK(cudaMemcpy(out.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice)); },
                                       timing.warmup, timing.repeats);
    results.add("cudaMemcpy device-to-device", copy.median_ms, course::gb_per_s(bytes_moved, copy.median_ms), "-", true);
    for (const Transpose& k : kTransposes) {
        out.poison();
        k.launch(in.data(), out.data(), static_cast<int>(rows), static_cast<int>(cols));
        const course::VerifyResult check = course::compare_exact(out.to_host(), expected, rows);
        if (!check.ok()) std::printf("%s: %s\n", k.name, check.summary().c_str());
        all_ok &= check.ok();
        const auto t = course::time_gpu([&] { k.launch(in.data(), out.data(), static_cast<int>(rows), static_cast<int>(cols)); },
                                        timing.warmup, timing.repeats);
        results.add(k.name, t.median_ms, course::gb_per_s(bytes_moved, t.median_ms), check.ok() ? "ok" : "FAIL");
    }
    results.print();
    if (!timing.csv.empty()) {
        results.append_csv(timing.csv, "06_bank_conflicts", gpu.short_description());
        strides.append_csv(timing.csv, "06_bank_conflicts", gpu.short_description());
    }
    std::printf("\n%s\n", all_ok ? "All outputs match the CPU reference." : "SOME OUTPUTS ARE WRONG (see above).");
    return all_ok ? course::kExitOk : course::kExitFailed;
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
