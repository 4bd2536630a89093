// Checks for lesson 02's going-further companion. This file #includes the companion's own main.cu
// (CMake passes its path as COURSE_LESSON_SOURCE), so the kernels tested are the ones it runs: the
// swizzle and its bank counts, both transposes on awkward shapes and unaligned pointers, and the
// pointer chase from every memory.
#include COURSE_LESSON_SOURCE

#include "testing.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace {

// Single elements, single rows and columns, primes, non-multiples of every tile, tall, wide,
// shapes whose sides are multiples of 4 but not of the tile (the float4 kernels' vector path
// on edge tiles), and one large square.
const std::pair<int, int> kShapes[] = {{1, 1},     {1, 1000},  {1000, 1},  {257, 1031}, {33, 65},  {4099, 31},
                                       {31, 4099}, {36, 100},  {4, 2052},  {2052, 4},   {68, 132}, {1028, 516},
                                       {2048, 2048}};

/// Runs `launch` on a rows x cols input placed `offset` floats into its buffer (and the output
/// likewise), with the output poisoned first; compares with the CPU transpose.
course::VerifyResult run_transpose(Launcher launch, int rows, int cols, int offset = 0) {
    const auto host_in = course::random_floats(static_cast<std::size_t>(rows) * cols, course::seeded(rows * 31u + cols));
    std::vector<float> padded_in(host_in.size() + offset, 0.0f);
    std::copy(host_in.begin(), host_in.end(), padded_in.begin() + offset);
    course::DeviceBuffer<float> in(padded_in), out(padded_in.size());
    out.poison();
    launch(in.data() + offset, out.data() + offset, rows, cols);
    std::vector<float> got = course::submitted(out.to_host());
    got.erase(got.begin(), got.begin() + offset);
    return course::compare_exact(got, transpose_cpu(host_in, rows, cols), rows);
}

/// main.cu's chase_row with the chase's results (cycles, the node it ended on) handed to
/// course::submitted between run_chase and latency_row.
template <Where kWhere>
LatencyRow chase(const std::string& where, const Chain& c, long long warmup, long long hops, std::size_t flush_bytes = 0) {
    return latency_row(where, c, warmup, hops, course::submitted(run_chase<kWhere>(c, warmup, hops, flush_bytes)));
}

/// The rows of measure_latency (main.cu), the same chases, run by chase() above.
std::vector<LatencyRow> latency_rows(const course::DeviceReport& gpu, const LatencyConfig& cfg) {
    constexpr std::size_t kLine = 32, kPiece = (2u << 20) / 4 / kLine;
    const std::size_t l1_nodes = (16u << 10) / 4 / kLine, l2_nodes = (8u << 20) / 4 / kLine;
    const std::size_t dram_nodes = cfg.dram_bytes / 4 / kLine, flush = 2 * gpu.l2_bytes;
    course::require_device_memory(static_cast<double>(cfg.dram_bytes + flush), "the latency chase");
    const long long dram_hops = std::min<long long>(cfg.hops, static_cast<long long>(dram_nodes));
    return {chase<Where::Shared>("shared memory", make_chain(kSharedChainWords, 1, kSharedChainWords, 1), 0, cfg.hops),
            chase<Where::L1>("L1", make_chain(l1_nodes, kLine, l1_nodes, 2), static_cast<long long>(l1_nodes), cfg.hops),
            chase<Where::L2>("L2", make_chain(l2_nodes, kLine, l2_nodes, 3), static_cast<long long>(l2_nodes), cfg.hops),
            chase<Where::Dram>("DRAM, in 2 MiB pieces", make_chain(dram_nodes, kLine, std::min(kPiece, dram_nodes), 4), 0,
                               dram_hops, flush),
            chase<Where::Dram>("DRAM, all of it", make_chain(dram_nodes, kLine, dram_nodes, 5), 0, dram_hops, flush)};
}

}  // namespace

TEST_CASE("registers kernel: the swizzle permutes each tile row and makes the 16-byte fill conflict-free") {
    for (int r = 0; r < kRegTile; ++r) {  // every (row, chunk) has its own place: nothing overwritten
        CAPTURE(r);
        std::vector<int> chunks;
        for (int c = 0; c < kRegChunks; ++c) chunks.push_back(swizzle_chunk(r, c));
        std::sort(chunks.begin(), chunks.end());
        for (int c = 0; c < kRegChunks; ++c) CHECK(chunks[c] == c);
    }
    CHECK(float4_tile_passes(true, false) == 32);  // 8 rows 4 apart, one bank group: 8 passes per quarter-warp
    CHECK(float4_tile_passes(true, true) == 4);    // 1 per quarter-warp: 128 bytes, the fewest possible
    CHECK(float4_tile_passes(false, false) == 4);  // a row read is conflict-free either way
    CHECK(float4_tile_passes(false, true) == 4);
}

GPU_TEST_CASE("every transpose matches the CPU reference on awkward shapes, output poisoned first") {
    for (const Transpose& k : kTransposes) {
        for (const auto& shape : kShapes) {
            const int rows = shape.first, cols = shape.second;
            INFO("kernel: ", std::string(k.name));
            CAPTURE(rows);
            CAPTURE(cols);
            const course::VerifyResult r = run_transpose(k.launch, rows, cols);
            INFO(r.summary());
            CHECK(r.ok());
        }
    }
}

GPU_TEST_CASE("every transpose is right on pointers that are not 16-byte aligned (float4 kernels fall back)") {
    for (const Transpose& k : kTransposes) {
        for (const auto& shape : {std::pair{64, 64}, std::pair{36, 100}, std::pair{100, 36}}) {
            const int rows = shape.first, cols = shape.second;
            INFO("kernel: ", std::string(k.name));
            CAPTURE(rows);
            CAPTURE(cols);
            const course::VerifyResult r = run_transpose(k.launch, rows, cols, 1);  // one float past the base
            INFO(r.summary());
            CHECK(r.ok());
        }
    }
}

// ---------------------------------------------------------------- the latency chase (section 2)

TEST_CASE("make_chain is one cycle through every node, also when shuffled in groups") {
    struct Shape {
        std::size_t nodes, stride, group;
    };
    for (const Shape& shape : {Shape{1, 1, 1}, Shape{4096, 1, 4096}, Shape{1000, 32, 1000}, Shape{1024, 32, 64}}) {
        const std::size_t nodes = shape.nodes, stride = shape.stride, group = shape.group;
        CAPTURE(nodes);
        CAPTURE(group);
        const Chain c = make_chain(nodes, stride, group, 9);
        REQUIRE(c.words.size() == nodes * stride);
        std::vector<bool> seen(nodes, false);
        unsigned j = c.start;
        for (std::size_t k = 0; k < nodes; ++k) {
            REQUIRE(j % stride == 0);
            REQUIRE(j / stride < nodes);
            CHECK_FALSE(seen[j / stride]);  // no node twice before the lap is over
            seen[j / stride] = true;
            j = c.words[j];
        }
        CHECK(j == c.start);  // back at the start after exactly `nodes` steps
        CHECK(std::count(seen.begin(), seen.end(), true) == static_cast<long>(nodes));
        if (group < nodes) {  // the first `group` steps stay inside one group
            unsigned g = c.start;
            for (std::size_t k = 0; k < group; ++k, g = c.words[g]) CHECK(g / stride / group == c.start / stride / group);
        }
    }
    CHECK_THROWS_AS(make_chain(1000, 1, 64, 1), std::invalid_argument);  // groups must divide the nodes
    CHECK_THROWS_AS(make_chain(0, 1, 1, 1), std::invalid_argument);
}

GPU_TEST_CASE("pointer_chase follows every chain to the node the CPU walk reaches, from every memory") {
    const Chain small = make_chain(1024, 1, 1024, 21), lines = make_chain(512, 32, 512, 22),
                pieces = make_chain(2048, 32, 256, 23);
    for (long long hops : {1LL, 1024LL, 1024LL + 7}) {  // 1024: a full lap back to the start
        CAPTURE(hops);
        CHECK(chase<Where::Shared>("shared", small, 0, hops).ok);
        CHECK(chase<Where::L1>("L1", lines, 512, hops).ok);
        CHECK(chase<Where::L2>("L2", lines, 512, hops).ok);
        CHECK(chase<Where::Dram>("DRAM", pieces, 0, hops, 1 << 20).ok);
    }
    CHECK(walk_chain_cpu(small, 1024) == small.start);
}

GPU_TEST_CASE("latency: shared memory answers sooner than L2, and L2 sooner than device memory") {
    const course::DeviceReport gpu = course::query_device();
    LatencyConfig cfg;
    cfg.dram_bytes = std::max<std::size_t>(4 * gpu.l2_bytes, std::size_t{64} << 20);  // far more than L2 holds
    cfg.hops = 4096;
    const std::vector<LatencyRow> rows = latency_rows(gpu, cfg);
    REQUIRE(rows.size() == 5);
    for (const LatencyRow& r : rows) {
        CAPTURE(r.where);
        CHECK(r.ok);
        CHECK(r.cycles_per_load > 0);
    }
    const double shared = rows[0].cycles_per_load, l1 = rows[1].cycles_per_load, l2 = rows[2].cycles_per_load,
                 dram = rows[3].cycles_per_load;
    INFO("cycles per load: shared " << shared << ", L1 " << l1 << ", L2 " << l2 << ", DRAM " << dram);
    // Under compute-sanitizer every load runs the tool's own code first (racecheck made a shared
    // load take 37,538 cycles on the H200), so the times measure the tool, not the memory. The
    // tool sets NV_SANITIZER_INJECTION_PORT_BASE in the program's environment.
    if (std::getenv("NV_SANITIZER_INJECTION_PORT_BASE")) {
        MESSAGE("under compute-sanitizer: the latency ordering is not checked (the chases above were)");
        return;
    }
    CHECK(shared < l2);
    CHECK(l1 < l2);
    CHECK(l2 < dram);
}
