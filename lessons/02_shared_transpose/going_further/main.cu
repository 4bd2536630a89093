// Lesson 02, going further — the last step to the copy, and how long one load takes.
// What it shows: 16-byte shared-memory accesses. Each thread transposes 4 x 4 blocks in registers
// into a 64 x 64 tile laid out like the output, its 16-byte columns XOR-swizzled so that neither
// phase has bank conflicts: a quarter of the shared-memory instructions of lesson 02's float4
// kernel, in both block orders. Then, apart, the latency of one load from shared memory, L1, L2
// and device memory (a pointer chase), beside the figures the documents give.
// Leaves out: what lesson 02 teaches (read it first), and bank arithmetic in depth (lesson 06).
// Read next: lessons/03_dynamic_shared; CUDA C++ Programming Guide, "Shared Memory".
#include "float4.cuh"
#include "lesson.cuh"
#include "transpose_bench.cuh"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

// ---------------------------------------------------------------- 1. 16-byte shared accesses
// `in` is rows x cols, row-major; `out` is cols x rows. Every kernel checks its bounds.

/// Block order. Blocks start roughly in the order of their index, x fastest, so the blocks that run
/// at the same time are neighbours in that order. Row order (blockIdx.x = tile column): they read
/// whole input rows, and each writes its 64 output rows in 256-byte pieces far apart. Column
/// order (blockIdx.x = tile ROW, the grid launched as (row tiles, column tiles)): they walk down a
/// column of tiles, read 256-byte pieces far apart, and together write whole output rows. The
/// bytes are the same; lesson 02's table says which order device memory prefers.
/// Returns (first input row, first input column) of this block's kTileW x kTileW tile.
template <bool kColumnOrder>
__device__ int2 tile_origin(int tile_w) {
    if (kColumnOrder) return make_int2(blockIdx.x * tile_w, blockIdx.y * tile_w);
    return make_int2(blockIdx.y * tile_w, blockIdx.x * tile_w);
}

/// Wider shared accesses. Lesson 02's float4 kernel moves float4s through global memory but single
/// floats through shared memory: 8 shared instructions per float4 (4 stores, 4 loads), and Nsight
/// Compute shows its warps waiting on the shared-memory queue, second only to global loads (README.md). Here each
/// thread loads a 4 x 4 block of the input as 4 float4 rows, transposes it in registers (output
/// row m of the block is element m of the 4 rows), and writes 4 float4s into a tile laid out like
/// the OUTPUT; the store phase then reads that tile row by row, one float4 per store: 2 shared
/// instructions per float4 instead of 8. The block is 16 x 8 threads; thread (j, i) owns the 4 x 4
/// blocks (i + 8p, j) of the 64 x 64 tile, 8 float4 loads in flight as before.
/// Banks: a 16-byte access is served a quarter-warp (8 lanes, 128 bytes) at a time (lesson 06): its
/// 8 float4s are conflict-free when they fall on the 8 different groups of 4 banks. The fill has the
/// 8 lanes of a quarter-warp (8 consecutive j) write the same 16-byte column of rows 4j + m: 8 rows
/// 4 apart, all in one bank group. Padding cannot fix that (a row must stay a multiple of 4 floats for
/// the float4 alignment, so rows 4 apart always land on at most 2 groups); swizzle_chunk does: it XORs
/// the 16-byte column with the row's group of 4, (r / 4) % 8, which sends rows 4j + m, j = 0..7,
/// to 8 different groups and leaves a row's 16 chunks a permutation of themselves (the drain reads
/// a row: still conflict-free). The bank table this program prints counts both.
constexpr int kRegTile = 64, kRegChunks = kRegTile / 4, kRegRows = 8;  // 16 x 8 threads
__host__ __device__ constexpr int swizzle_chunk(int r, int chunk) { return chunk ^ ((r / 4) % 8); }

template <bool kColumnOrder>
__global__ void __launch_bounds__(kRegChunks * kRegRows)
    transpose_registers_float4(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    constexpr int kBlocksPerThread = kRegChunks / kRegRows;  // 4 x 4 blocks: 2
    __shared__ float4 tile[kRegTile][kRegChunks];  // tile[r][c]: output row col0 + r, columns row0 + 4c..4c+3
    const bool vector_loads = cols % 4 == 0 && aligned16(in), vector_stores = rows % 4 == 0 && aligned16(out);
    const int2 origin = tile_origin<kColumnOrder>(kRegTile);
    const int row0 = origin.x, col0 = origin.y;
    const int j = threadIdx.x;  // this thread's 4 input columns: col0 + 4j .. col0 + 4j + 3

    float4 v[kBlocksPerThread][4];  // [block][k]: input row row0 + 4i + k, i = threadIdx.y + 8 * block
#pragma unroll
    for (int b = 0; b < kBlocksPerThread; ++b) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int r = row0 + 4 * (threadIdx.y + kRegRows * b) + k;
            v[b][k] = load4(in, rows, cols, r, col0 + 4 * j, vector_loads);  // zeros outside: never stored
        }
    }
#pragma unroll
    for (int b = 0; b < kBlocksPerThread; ++b) {
        const int i = threadIdx.y + kRegRows * b;  // output columns row0 + 4i .. 4i + 3
        const float4* q = v[b];
        tile[4 * j + 0][swizzle_chunk(4 * j + 0, i)] = make_float4(q[0].x, q[1].x, q[2].x, q[3].x);
        tile[4 * j + 1][swizzle_chunk(4 * j + 1, i)] = make_float4(q[0].y, q[1].y, q[2].y, q[3].y);
        tile[4 * j + 2][swizzle_chunk(4 * j + 2, i)] = make_float4(q[0].z, q[1].z, q[2].z, q[3].z);
        tile[4 * j + 3][swizzle_chunk(4 * j + 3, i)] = make_float4(q[0].w, q[1].w, q[2].w, q[3].w);
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kRegTile / kRegRows; ++p) {
        const int r = threadIdx.y + kRegRows * p;  // tile row r = output row col0 + r
        const int out_row = col0 + r, out_col = row0 + 4 * j;
        if (out_row >= cols || out_col >= rows) continue;
        store4(out, cols, rows, out_row, out_col, tile[r][swizzle_chunk(r, j)], vector_stores);
    }
}

using Launcher = void (*)(const float* in, float* out, int rows, int cols);

/// The grid: (column tiles, row tiles) in row order, (row tiles, column tiles) in column order.
template <bool kColumnOrder>
dim3 tile_grid(int rows, int cols, int tile_w) {
    const unsigned row_tiles = course::ceil_div(rows, tile_w), col_tiles = course::ceil_div(cols, tile_w);
    return kColumnOrder ? dim3(row_tiles, col_tiles) : dim3(col_tiles, row_tiles);
}

template <bool kColumnOrder>
void launch_transpose_registers_float4(const float* in, float* out, int rows, int cols) {
    transpose_registers_float4<kColumnOrder>
        <<<tile_grid<kColumnOrder>(rows, cols, kRegTile), dim3(kRegChunks, kRegRows)>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

struct Transpose {
    const char* name;
    Launcher launch;
};
/// Both block orders: lesson 02 measured that change on its float4 kernel; here it is again.
const Transpose kTransposes[] = {
    {"registers_float4 (64x64 swizzled, 16x8 thr)", launch_transpose_registers_float4<false>},
    {"registers_float4 (64x64 swizzled), column order", launch_transpose_registers_float4<true>},
};

using course::transpose_cpu;  // the CPU reference, out[c][r] = in[r][c] (common/verify.hpp)

/// The bank model: shared memory has 32 banks, 4-byte word w lives in bank w % 32, and a warp
/// access takes one pass per distinct word in its busiest bank (same word = broadcast, free).
int bank_passes(const std::vector<int>& words) {
    int worst = 0;
    for (int bank = 0; bank < 32; ++bank) {
        std::vector<int> distinct;
        for (int w : words)
            if (w % 32 == bank && std::find(distinct.begin(), distinct.end(), w) == distinct.end()) distinct.push_back(w);
        worst = std::max(worst, static_cast<int>(distinct.size()));
    }
    return worst;
}

/// The same model for transpose_registers_float4's 16-byte shared accesses, which are served a
/// quarter-warp at a time: passes of warp 0's first instruction = the sum over its 4 quarter-warps,
/// each counted over the 4 words of each of its 8 lanes. 4 is conflict-free (512 bytes, 128 per
/// pass). Warp 0 is threadIdx.y = 0 and 1, threadIdx.x = j = 0..15 (lane = j + 16 * threadIdx.y).
/// Fill: lane j writes row 4j (m = 0), column i = threadIdx.y; drain: row threadIdx.y, column j.
/// (Lesson 06: two quarters of a LOAD are served together when lanes pair up on one address; no
/// two lanes here share one, and the fill is a store, which never pairs.)
int float4_tile_passes(bool fill, bool swizzled) {
    int passes = 0;
    for (int quarter = 0; quarter < 4; ++quarter) {
        const int half = quarter / 2, first_j = 8 * (quarter % 2);
        std::vector<int> words;
        for (int j = first_j; j < first_j + 8; ++j) {
            const int r = fill ? 4 * j : half, c = fill ? half : j;
            const int chunk = swizzled ? swizzle_chunk(r, c) : c;
            for (int w = 0; w < 4; ++w) words.push_back(r * kRegTile + 4 * chunk + w);
        }
        passes += bank_passes(words);
    }
    return passes;
}

// ---------------------------------------------------------------- 2. how long one load takes
// From each kind of memory. The tutorial's "Shared Memory" pages and the notes on "Using Shared
// Memory in CUDA C/C++" say shared memory answers "about 100 times" sooner than global memory;
// the blog "Shared Memory and Parallel Patterns" gives a table of cycles. This section measures it. A pointer chase: one thread loads chain[j] and uses the value as the
// next j, so every load waits for the one before it, and cycles / loads is the latency of one
// load (plus the few cycles of index arithmetic between two loads). The chain is one cycle
// through all of its nodes, in random order, so the hardware cannot guess the next address.
// Which memory answers is decided by where the chain lives and how it is loaded:
//   shared   16 KiB copied into a __shared__ array;
//   L1       16 KiB in global memory, plain loads (which this GPU caches in L1 and L2), after
//            one untimed pass around the chain has brought it into L1;
//   L2       8 MiB (more than L1 holds, far less than L2), loaded with __ldcg (cache in L2
//            only: L1 is skipped), after one untimed pass;
//   DRAM     1 GiB, __ldcg, after a write over twice the L2 size has pushed the chain out of L2;
//            only a prefix of the chain is timed, so no line is loaded twice. Twice: once with
//            the nodes visited in random order inside each 2 MiB piece (the pieces in random
//            order), so almost every load finds its address translation cached; once in random
//            order over the whole 1 GiB, where many loads also miss the translation caches (TLB).
// Every node sits on its own 128-byte line (shared: its own 4-byte word), so no two loads share
// a cache line.

enum class Where { Shared, L1, L2, Dram };
constexpr int kSharedChainWords = 4096;  // 16 KiB: the whole shared-memory chain

/// A chain of `nodes` nodes, `stride` 4-byte words apart: the word of each node holds the word
/// index of the next. The order is random inside each run of `group` consecutive nodes, and
/// the runs are visited in random order; it is one cycle through every node, from `start`.
struct Chain {
    std::vector<unsigned> words;
    unsigned start = 0;
};
Chain make_chain(std::size_t nodes, std::size_t stride, std::size_t group, std::uint32_t seed) {
    if (nodes == 0 || group == 0 || nodes % group != 0 || nodes * stride > (1ull << 32))
        throw std::invalid_argument("make_chain: bad sizes");
    std::mt19937 rng(seed);
    std::vector<std::size_t> groups(nodes / group), order;
    std::iota(groups.begin(), groups.end(), std::size_t{0});
    std::shuffle(groups.begin(), groups.end(), rng);
    order.reserve(nodes);
    for (std::size_t g : groups) {
        const std::size_t first = order.size();
        for (std::size_t k = 0; k < group; ++k) order.push_back(g * group + k);
        std::shuffle(order.begin() + first, order.end(), rng);
    }
    Chain c;
    c.words.assign(nodes * stride, 0);
    for (std::size_t k = 0; k < nodes; ++k)
        c.words[order[k] * stride] = static_cast<unsigned>(order[(k + 1) % nodes] * stride);
    c.start = static_cast<unsigned>(order[0] * stride);
    return c;
}

/// Where the chain is walked CPU-side: the node reached after `hops` steps (for the checks).
unsigned walk_chain_cpu(const Chain& c, long long hops) {
    unsigned j = c.start;
    for (long long i = 0; i < hops; ++i) j = c.words[j];
    return j;
}

template <Where kWhere>
__device__ unsigned next_node(const unsigned* chain, const unsigned* s, unsigned j) {
    if constexpr (kWhere == Where::Shared) return s[j];
    else if constexpr (kWhere == Where::L1) return chain[j];  // a plain load: cached in L1 (and L2)
    else return __ldcg(chain + j);                            // "cache global": in L2, not in L1
}

/// One thread: `warmup` untimed steps, then `hops` timed ones. result = {cycles, last node}.
template <Where kWhere>
__global__ void pointer_chase(const unsigned* chain, int shared_words, unsigned start, long long warmup,
                              long long hops, long long* result) {
    __shared__ unsigned s[kSharedChainWords];
    if constexpr (kWhere == Where::Shared)
        for (int i = 0; i < shared_words; ++i) s[i] = chain[i];
    unsigned j = start;
    for (long long i = 0; i < warmup; ++i) j = next_node<kWhere>(chain, s, j);
    const long long t0 = clock64();
    for (long long i = 0; i < hops; ++i) j = next_node<kWhere>(chain, s, j);
    const long long t1 = clock64();
    result[0] = t1 - t0;
    result[1] = j;  // stored, so the loads are not dead code, and checked
}

/// Spins for `cycles` SM clock cycles; timed with CUDA events it tells the clock this run had.
__global__ void spin_cycles(long long cycles, long long* result) {
    const long long t0 = clock64();
    long long t = t0;
    while (t - t0 < cycles) t = clock64();
    *result = t - t0;
}

struct LatencyRow {
    std::string where;
    double footprint_bytes = 0;
    long long hops = 0;
    double cycles_per_load = 0;
    bool ok = false;  // the chase ended on the node the CPU walk says
};
struct LatencyConfig {
    std::size_t dram_bytes = std::size_t{1} << 30;
    long long hops = 1 << 16;  // timed loads per row
};

/// Runs one chase: one launch of pointer_chase<kWhere> with one thread. Returns its two results,
/// the cycles of the timed hops and the node it ended on. `flush_bytes` > 0: write over that many
/// bytes first, which pushes the chain out of L2.
template <Where kWhere>
std::vector<long long> run_chase(const Chain& c, long long warmup, long long hops, std::size_t flush_bytes = 0) {
    course::DeviceBuffer<unsigned> chain(c.words);
    course::DeviceBuffer<long long> result(2);
    if (flush_bytes > 0) {
        course::DeviceBuffer<unsigned char> scratch(flush_bytes);
        CUDA_CHECK(cudaMemset(scratch.data(), 0, scratch.bytes()));
    }
    pointer_chase<kWhere><<<1, 1>>>(chain.data(), static_cast<int>(std::min<std::size_t>(c.words.size(), kSharedChainWords)),
                                    c.start, warmup, hops, result.data());
    CUDA_CHECK_LAUNCH();
    return result.to_host();
}

/// A row of the table from a chase's results, checked against where the CPU walk ends.
LatencyRow latency_row(const std::string& where, const Chain& c, long long warmup, long long hops,
                       const std::vector<long long>& r) {
    LatencyRow row;
    row.where = where;
    row.footprint_bytes = static_cast<double>(c.words.size()) * sizeof(unsigned);
    row.hops = hops;
    row.cycles_per_load = static_cast<double>(r[0]) / static_cast<double>(hops);
    row.ok = static_cast<unsigned>(r[1]) == walk_chain_cpu(c, warmup + hops);
    return row;
}

/// One chase and its row.
template <Where kWhere>
LatencyRow chase_row(const std::string& where, const Chain& c, long long warmup, long long hops, std::size_t flush_bytes = 0) {
    return latency_row(where, c, warmup, hops, run_chase<kWhere>(c, warmup, hops, flush_bytes));
}

/// The five rows of the latency table (cycles per load), in the order of the comment above.
std::vector<LatencyRow> measure_latency(const course::DeviceReport& gpu, const LatencyConfig& cfg) {
    constexpr std::size_t kLine = 32;                      // words: one node per 128-byte line
    constexpr std::size_t kPiece = (2u << 20) / 4 / kLine;  // nodes in 2 MiB
    const std::size_t l1_nodes = (16u << 10) / 4 / kLine, l2_nodes = (8u << 20) / 4 / kLine;
    const std::size_t dram_nodes = cfg.dram_bytes / 4 / kLine, flush = 2 * gpu.l2_bytes;
    course::require_device_memory(static_cast<double>(cfg.dram_bytes + flush), "the latency chase");
    const long long dram_hops = std::min<long long>(cfg.hops, static_cast<long long>(dram_nodes));
    std::vector<LatencyRow> rows;
    rows.push_back(chase_row<Where::Shared>("shared memory", make_chain(kSharedChainWords, 1, kSharedChainWords, 1), 0,
                                            cfg.hops));
    rows.push_back(chase_row<Where::L1>("L1 (plain load, warmed)", make_chain(l1_nodes, kLine, l1_nodes, 2),
                                        static_cast<long long>(l1_nodes), cfg.hops));
    rows.push_back(chase_row<Where::L2>("L2 (__ldcg, warmed)", make_chain(l2_nodes, kLine, l2_nodes, 3),
                                        static_cast<long long>(l2_nodes), cfg.hops));
    rows.push_back(chase_row<Where::Dram>("DRAM, random inside 2 MiB pieces",
                                          make_chain(dram_nodes, kLine, std::min(kPiece, dram_nodes), 4), 0, dram_hops, flush));
    rows.push_back(chase_row<Where::Dram>("DRAM, random over all of it", make_chain(dram_nodes, kLine, dram_nodes, 5), 0,
                                          dram_hops, flush));
    return rows;
}

/// The SM clock during this run, in Hz: clock64 cycles over CUDA-event time.
double measured_sm_clock_hz() {
    course::DeviceBuffer<long long> result(1);
    const long long cycles = 100'000'000;  // about 50 ms at 2 GHz: the launch cost is lost in it
    spin_cycles<<<1, 1>>>(cycles / 100, result.data());  // warm-up
    CUDA_CHECK_LAUNCH();
    const course::Timing t = course::time_gpu([&] { spin_cycles<<<1, 1>>>(cycles, result.data()); CUDA_CHECK_LAUNCH(); }, 0, 1);
    return static_cast<double>(result.to_host()[0]) / (t.median_ms * 1e-3);
}

/// "16 KiB", "8 MiB", "1 GiB"
std::string binary_size(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (bytes >= 1024 && u < 3) bytes /= 1024, ++u;
    char text[32];
    std::snprintf(text, sizeof text, "%.0f %s", bytes, units[u]);
    return text;
}

void print_latency(const std::vector<LatencyRow>& rows, double clock_hz) {
    std::printf("== latency: one thread, each load's address is the value the load before it returned ==\n");
    std::printf("  SM clock in this run: %.3f GHz (clock64 cycles over CUDA-event time)\n", clock_hz / 1e9);
    std::printf("  %-34s %9s %7s %12s %9s %9s  %s\n", "where the chain lives", "footprint", "loads", "cycles/load",
                "ns/load", "x shared", "check");
    for (const LatencyRow& r : rows)
        std::printf("  %-34s %9s %7lld %12.1f %9.1f %9.1f  %s\n", r.where.c_str(), binary_size(r.footprint_bytes).c_str(),
                    r.hops, r.cycles_per_load, r.cycles_per_load / clock_hz * 1e9,
                    r.cycles_per_load / rows.front().cycles_per_load, r.ok ? "ok" : "FAIL");
    std::printf("\n");
}

// ---------------------------------------------------------------- the program

int lesson(int argc, char** argv) {
    course::TransposeOptions opt;
    course::Cli cli("02_shared_transpose_going_further",
                    "Measures the latency of one load from each memory, then times the 16-byte-shared-access "
                    "transposes beside cudaMemcpy and checks each against the CPU.");
    if (!course::add_transpose_options(cli, opt).parse(argc, argv)) return course::kExitOk;
    course::check_transpose_options(opt);
    const int rows = static_cast<int>(opt.rows), cols = static_cast<int>(opt.cols);

    std::printf("== bank model: passes of one warp's 16-byte access, served by quarter-warps (4 = conflict-free) ==\n");
    std::printf("  %-48s %9s %9s\n", "access", "plain", "swizzled");
    std::printf("  %-48s %9d %9d\n", "load phase: writes a tile column", float4_tile_passes(true, false),
                float4_tile_passes(true, true));
    std::printf("  %-48s %9d %9d\n", "store phase: reads a tile row", float4_tile_passes(false, false),
                float4_tile_passes(false, true));
    std::printf("\n");

    course::require_gpu();
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);

    // How long one load takes from each memory (section 2).
    const double clock_hz = measured_sm_clock_hz();
    const std::vector<LatencyRow> latency = measure_latency(gpu, LatencyConfig{});
    print_latency(latency, clock_hz);
    bool chases_ok = true;
    for (const LatencyRow& r : latency) chases_ok &= r.ok;

    course::TransposeBench bench(rows, cols, opt.timing);  // common/transpose_bench.cuh: the copy first
    for (const Transpose& k : kTransposes) bench.add(k.name, k.launch);
    return bench.finish("02_shared_transpose_going_further", gpu, chases_ok);
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif