// Checks for lesson 06. This file #includes the lesson's own main.cu (CMake passes its path as
// COURSE_LESSON_SOURCE), so the model, kernels and launchers tested are the ones the lesson runs.
#include COURSE_LESSON_SOURCE

#include "testing.hpp"

#include <utility>

namespace {

// Single elements, single rows and columns, primes, non-multiples of every tile, tall, wide, one
// large square, and shapes where only rows or only cols is a multiple of 4 (the float4 paths).
const std::pair<int, int> kShapes[] = {{1, 1},    {1, 1000},  {1000, 1}, {257, 1031}, {33, 65},   {4099, 31},
                                       {31, 4099}, {2048, 2048}, {260, 132}, {130, 68},  {68, 130}};

int wavefronts(const std::vector<std::int64_t>& addr, int width) { return bank_model(addr, width).wavefronts; }

std::vector<unsigned> random_words(std::size_t n, std::uint32_t seed) {
    const std::vector<int> r = course::random_ints(n, course::seeded(seed), 0, INT32_MAX);
    return {r.begin(), r.end()};
}

/// Every warp instruction of transpose_tiled<Layout>: the worst fill and drain wavefronts.
template <class Layout>
std::pair<int, int> worst_scalar_tile() {
    int fill = 0, drain = 0;
    for (int ty = 0; ty < kBlockY; ++ty)
        for (int j = 0; j < kTile / kBlockY; ++j) {
            std::vector<std::int64_t> f, d;
            for (int lane = 0; lane < kWarpSize; ++lane) {
                f.push_back(Layout::at(ty + j * kBlockY, lane) * 4);
                d.push_back(Layout::at(lane, ty + j * kBlockY) * 4);
            }
            fill = std::max(fill, wavefronts(f, 4));
            drain = std::max(drain, wavefronts(d, 4));
        }
    return {fill, drain};
}

/// Every warp instruction of transpose_tiled16<Layout>: the 8 warps of the 16 x 16 block, each
/// two thread rows (threadIdx.y = 2w, 2w + 1).
template <class Layout>
std::pair<int, int> worst_small_tile() {
    int fill = 0, drain = 0;
    for (int w = 0; w < kSmallTile * kSmallTile / kWarpSize; ++w) {
        std::vector<std::int64_t> f, d;
        for (int lane = 0; lane < kWarpSize; ++lane) {
            const int ty = 2 * w + lane / 16, tx = lane % 16;
            f.push_back(Layout::at(ty, tx) * 4);
            d.push_back(Layout::at(tx, ty) * 4);
        }
        fill = std::max(fill, wavefronts(f, 4));
        drain = std::max(drain, wavefronts(d, 4));
    }
    return {fill, drain};
}

/// Every warp instruction of transpose_tiled_float4<Layout>: every warp of the 8 x 16 block, every
/// pass p, strip s and component k. Lane = threadIdx.x + 8 * (threadIdx.y % 4).
template <class Layout>
std::pair<int, int> worst_vec4_tile() {
    int fill = 0, drain = 0;
    for (int warp = 0; warp < 8 * kVecRows / kWarpSize; ++warp)
        for (int p = 0; p < kVecTile / kVecRows; ++p)
            for (int s = 0; s < kVecTile / 32; ++s)
                for (int k = 0; k < 4; ++k) {
                    std::vector<std::int64_t> f, d;
                    for (int lane = 0; lane < kWarpSize; ++lane) {
                        const int y = 4 * warp + lane / 8 + p * kVecRows, x = 4 * (lane % 8) + 32 * s;
                        f.push_back(Layout::at(y, x + k) * 4);
                        d.push_back(Layout::at(x + k, y) * 4);
                    }
                    fill = std::max(fill, wavefronts(f, 4));
                    drain = std::max(drain, wavefronts(d, 4));
                }
    return {fill, drain};
}

/// A layout must put every tile element in its own word, inside the array.
template <int kTile, class Layout>
bool is_one_to_one() {
    std::set<int> seen;
    for (int r = 0; r < kTile; ++r)
        for (int c = 0; c < kTile; ++c) {
            const int w = Layout::at(r, c);
            if (w < 0 || w >= Layout::kWords || !seen.insert(w).second) return false;
        }
    return true;
}

}  // namespace

TEST_CASE("bank model, 4-byte strides: s[lane * stride] costs gcd-driven wavefronts, broadcast is free") {
    const std::pair<int, int> expected[] = {{1, 1}, {2, 2}, {3, 1}, {4, 4}, {8, 8}, {16, 16}, {32, 32}, {33, 1}, {64, 32}, {0, 1}};
    for (const auto& e : expected) {
        const int stride = e.first, w = e.second;
        CAPTURE(stride);
        const BankReport r = bank_model(strided_addresses(stride, 4), 4);
        CHECK(r.wavefronts == w);
        CHECK(r.ideal == 1);
        CHECK(r.conflicts() == w - 1);
        CHECK(r.degree() == w);
    }
    const BankReport unit = bank_model(strided_addresses(1, 4), 4);
    for (int lane = 0; lane < kWarpSize; ++lane) {
        CHECK(unit.bank[lane] == lane);
        CHECK(unit.pass[lane] == 0);
    }
    const BankReport column = bank_model(strided_addresses(32, 4), 4);
    for (int lane = 0; lane < kWarpSize; ++lane) {
        CHECK(column.bank[lane] == 0);
        CHECK(column.pass[lane] == lane);  // one lane per wavefront
    }
}

TEST_CASE("bank model: mixed pattern, inactive lanes, and bad input") {
    // Lanes 4b..4b+3 hit bank b; two of them share each word: 2 distinct words per bank.
    CHECK(wavefronts(probe_named(probe_table(), "w4_mixed_pairs").addr, 4) == 2);
    // Lanes 0..3 on four words of bank 0, lane 4 on one of those words again, the rest elsewhere.
    std::vector<std::int64_t> a = strided_addresses(1, 4);
    for (int lane = 0; lane < 4; ++lane) a[lane] = lane * 128;
    a[4] = 256;
    CHECK(wavefronts(a, 4) == 4);
    std::vector<std::int64_t> few(kWarpSize, kInactive);
    few[3] = 0, few[7] = 128;  // two lanes, same bank, different words
    CHECK(wavefronts(few, 4) == 2);
    CHECK(wavefronts(std::vector<std::int64_t>(kWarpSize, kInactive), 4) == 0);
    CHECK_THROWS_AS(bank_model(strided_addresses(1, 4), 3), std::invalid_argument);
    CHECK_THROWS_AS(bank_model({2}, 4), std::invalid_argument);   // not 4-byte aligned
    CHECK_THROWS_AS(bank_model({4}, 8), std::invalid_argument);   // not 8-byte aligned
    CHECK_THROWS_AS(bank_model(std::vector<std::int64_t>(33, 0), 4), std::invalid_argument);
}

TEST_CASE("bank model, 8- and 16-byte accesses: two half-warp units, one unit when each half broadcasts") {
    // Contiguous float2 / float4 rows: 256 and 512 bytes, 2 and 4 wavefronts, no conflicts.
    const BankReport f2 = bank_model(strided_addresses(1, 8), 8), f4 = bank_model(strided_addresses(1, 16), 16);
    CHECK(f2.units == 2);
    CHECK(f2.wavefronts == 2);
    CHECK(f2.ideal == 2);
    CHECK(f2.conflicts() == 0);
    CHECK(f4.units == 2);
    CHECK(f4.wavefronts == 4);
    CHECK(f4.ideal == 4);
    CHECK(f4.conflicts() == 0);
    // Every other element: 4 distinct words per bank (8-byte), per half-warp (16-byte). ncu: 2, 4.
    CHECK(wavefronts(strided_addresses(2, 8), 8) == 4);
    CHECK(bank_model(strided_addresses(2, 8), 8).conflicts() == 2);
    CHECK(wavefronts(strided_addresses(2, 16), 16) == 8);
    CHECK(bank_model(strided_addresses(2, 16), 16).conflicts() == 4);
    // Broadcasts: Nsight Compute counted 1 and 2 on an H200 (half-/quarter-warp phases would say 2 and 4).
    CHECK(wavefronts(strided_addresses(0, 8), 8) == 1);
    CHECK(wavefronts(strided_addresses(0, 16), 16) == 2);
    CHECK(bank_model(strided_addresses(0, 8), 8).conflicts() == 0);
    CHECK(bank_model(strided_addresses(0, 16), 16).conflicts() == 0);
    CHECK(bank_model(strided_addresses(0, 8), 8).units == 1);
    // Lanes l and l + 16 on one address: ncu counted 2 and 4 (0 conflicts) on an H200.
    CHECK(wavefronts(probe_named(probe_table(), "w8_lanes_mod16").addr, 8) == 2);
    CHECK(bank_model(probe_named(probe_table(), "w8_lanes_mod16").addr, 8).conflicts() == 0);
    CHECK(wavefronts(probe_named(probe_table(), "w16_lanes_mod16").addr, 16) == 4);
    // The probes that tell "two half-warps" from "one warp" for 8-byte loads.
    CHECK(wavefronts(probe_named(probe_table(), "w8_halves_two_addresses").addr, 8) == 1);
    CHECK(wavefronts(probe_named(probe_table(), "w8_halves_same_bank").addr, 8) == 2);
    CHECK(bank_model(probe_named(probe_table(), "w8_halves_same_bank").addr, 8).conflicts() == 1);
    CHECK(wavefronts(probe_named(probe_table(), "w8_uniform_half_then_row").addr, 8) == 2);
    CHECK(bank_model(probe_named(probe_table(), "w8_uniform_half_then_row").addr, 8).conflicts() == 0);
    CHECK(wavefronts(probe_named(probe_table(), "w8_one_lane_differs").addr, 8) == 2);
    CHECK(wavefronts(probe_named(probe_table(), "w8_halves_conflict").addr, 8) == 4);
    CHECK(bank_model(probe_named(probe_table(), "w8_halves_conflict").addr, 8).conflicts() == 2);
    // Doubles: a column of a 32x32 tile is 32 words in each of banks 0 and 1; padding fixes it.
    CHECK(wavefronts(probe_named(probe_table(), "double32x32_column").addr, 8) == 32);
    CHECK(bank_model(probe_named(probe_table(), "double32x32_column").addr, 8).conflicts() == 30);
    CHECK(wavefronts(probe_named(probe_table(), "double32x33_column").addr, 8) == 2);
    // The map's schedule: a 16-byte lane of the second half-warp is served after the first's.
    const BankReport bc16 = bank_model(strided_addresses(0, 16), 16);
    CHECK(bc16.pass[0] == 0);
    CHECK(bc16.pass[16] == 1);
}

// The layouts (PaddedTile, SwizzledTile) are the student's work in the exercise: when grading, the
// values computed from them come from the student's run (course::submitted; grading/transcript.hpp), and
// the bank model that judges them from the course's own code.
TEST_CASE("tile column reads: 32x32 is 32-way; 32x33 and the XOR swizzle are conflict-free; 16x16 is 8-way") {
    CHECK(wavefronts(course::submitted(scalar_tile_access<UnpaddedTile<32>>().drain), 4) == 32);
    CHECK(wavefronts(course::submitted(scalar_tile_access<PaddedTile<32>>().drain), 4) == 1);
    CHECK(wavefronts(course::submitted(scalar_tile_access<SwizzledTile<32>>().drain), 4) == 1);
    CHECK(wavefronts(probe_named(probe_table(), "tile16x16_column").addr, 4) == 8);
    CHECK(wavefronts(probe_named(probe_table(), "tile16x17_column").addr, 4) == 2);
}

TEST_CASE("every warp instruction of every transpose: fills are conflict-free, only the unpadded drain conflicts") {
    CHECK(course::submitted(worst_scalar_tile<UnpaddedTile<32>>()) == std::pair{1, 32});
    CHECK(course::submitted(worst_scalar_tile<PaddedTile<32>>()) == std::pair{1, 1});
    CHECK(course::submitted(worst_scalar_tile<SwizzledTile<32>>()) == std::pair{1, 1});
    CHECK(course::submitted(worst_vec4_tile<PaddedTile<64>>()) == std::pair{1, 1});
    CHECK(course::submitted(worst_vec4_tile<SwizzledTile<64>>()) == std::pair{1, 1});
    CHECK(course::submitted(worst_vec4_tile<UnpaddedTile<64>>()).second == 8);  // 4 columns, 8 rows each: still 8-way
    // The lesson's printed table agrees with the exhaustive check for its first warp. The 16-wide
    // tiles are the exception to "fills are conflict-free": padding to 16x17 makes the fill 2-way.
    for (const Transpose& k : kTransposes) {
        INFO("kernel: ", std::string(k.name));
        const bool padded16 = k.launch == launch_transpose_tiled16<PaddedTile<16>>;
        CHECK(wavefronts(course::submitted(k.access().fill), 4) == (padded16 ? 2 : 1));
    }
    CHECK(course::submitted(worst_small_tile<UnpaddedTile<16>>()) == std::pair{1, 8});
    CHECK(course::submitted(worst_small_tile<PaddedTile<16>>()) == std::pair{2, 2});
    CHECK(wavefronts(course::submitted(small_tile_access<UnpaddedTile<16>>().drain), 4) == 8);  // = the tile16x16_column probe
    CHECK(course::submitted(small_tile_access<UnpaddedTile<16>>().drain) == probe_named(probe_table(), "tile16x16_column").addr);
    CHECK(course::submitted(small_tile_access<PaddedTile<16>>().drain) == probe_named(probe_table(), "tile16x17_column").addr);
}

TEST_CASE("tile layouts keep every element in its own word") {
    CHECK(course::submitted(is_one_to_one<32, UnpaddedTile<32>>()));
    CHECK(course::submitted(is_one_to_one<32, PaddedTile<32>>()));
    CHECK(course::submitted(is_one_to_one<32, SwizzledTile<32>>()));
    CHECK(course::submitted(is_one_to_one<64, PaddedTile<64>>()));
    CHECK(course::submitted(is_one_to_one<64, SwizzledTile<64>>()));
    CHECK(course::submitted(is_one_to_one<16, UnpaddedTile<16>>()));
    CHECK(course::submitted(is_one_to_one<16, PaddedTile<16>>()));
}

TEST_CASE("probe table: unique names, aligned, inside the probe array") {
    std::set<std::string> names;
    for (const Probe& p : probe_table()) {
        CAPTURE(p.name);
        CHECK(names.insert(p.name).second);
        CHECK(p.addr.size() == static_cast<std::size_t>(kWarpSize));
        for (std::int64_t a : p.addr) {
            CHECK(a % p.width == 0);
            CHECK(a + p.width <= kProbeWords * 4);
        }
    }
    CHECK_THROWS_AS(probe_named(probe_table(), "no_such_probe"), course::UsageError);
}

TEST_CASE("command line: conflicting probe options and idle ones are refused before anything runs") {
    const std::vector<std::vector<const char*>> bad = {
        {"06_bank_conflicts", "--probe", "w4_stride2", "--probe-stride", "2"},  // which one?
        {"06_bank_conflicts", "--probe", "w4_stride2", "--list-probes"},
        {"06_bank_conflicts", "--probe-width", "8"},  // a width, but for no --probe-stride
        {"06_bank_conflicts", "--probe-stride", "2", "--probe-width", "12"},
    };
    for (const auto& argv : bad) {
        CAPTURE(argv.size());
        CHECK_THROWS_AS(lesson(static_cast<int>(argv.size()), const_cast<char**>(argv.data())), course::UsageError);
    }
}

TEST_CASE("transpose_cpu and the microbenchmark's CPU sums") {
    const std::vector<float> in = course::random_floats(5 * 7, course::seeded(1));
    const std::vector<float> out = transpose_cpu(in, 5, 7);
    for (int r = 0; r < 5; ++r)
        for (int c = 0; c < 7; ++c) CHECK(out[c * 5 + r] == in[r * 7 + c]);
    const std::vector<unsigned> table = random_words(kBenchWords, 3);
    const auto broadcast = stride_bench_cpu(table, 0, 40);
    for (unsigned s : broadcast) CHECK(s == broadcast[0]);  // every lane reads the same words
    const auto unit = stride_bench_cpu(table, 1, 1);
    unsigned lane0 = 0;
    for (int k = 0; k < kBenchUnroll; ++k) lane0 += table[k * 32];
    CHECK(unit[0] == lane0);
}

GPU_TEST_CASE("every transpose matches the CPU reference on awkward shapes, output poisoned first") {
    for (const Transpose& k : kTransposes) {
        for (const auto& shape : course::with_hidden_shapes(kShapes, "06_bank_conflicts")) {
            const int rows = shape.first, cols = shape.second;
            INFO("kernel: ", std::string(k.name));
            CAPTURE(rows);
            CAPTURE(cols);
            const auto host_in = course::random_floats(static_cast<std::size_t>(rows) * cols, course::seeded(rows * 31u + cols));
            course::DeviceBuffer<float> in(host_in), out(host_in.size());
            out.poison();
            k.launch(in.data(), out.data(), rows, cols);
            const course::VerifyResult r = course::compare_exact(course::submitted(out.to_host()), transpose_cpu(host_in, rows, cols), rows);
            INFO(r.summary());
            CHECK(r.ok());
        }
    }
}

GPU_TEST_CASE("the stride microbenchmark computes the sums the CPU computes, for every stride") {
    constexpr int kBlocks = 3, kSteps = 40;  // more steps than kBenchShifts, so the offsets wrap
    const std::vector<unsigned> table = random_words(kBenchWords, 11);
    course::DeviceBuffer<unsigned> d_table(table), d_out(kBlocks * kBenchThreads);
    for (int stride : {0, 1, 2, 3, 4, 8, 16, 32, 33, 64}) {
        CAPTURE(stride);
        d_out.poison();
        launch_shared_stride_bench(d_table.data(), d_out.data(), stride, kSteps, kBlocks);
        const std::vector<unsigned> got = course::submitted(d_out.to_host());
        const auto want = stride_bench_cpu(table, stride, kSteps);
        int wrong = 0;
        for (std::size_t t = 0; t < got.size(); ++t) wrong += got[t] != want[t % kWarpSize];
        CHECK(wrong == 0);
    }
    CHECK_THROWS_AS(launch_shared_stride_bench(d_table.data(), d_out.data(), kBenchMaxStride + 1, 1, 1),
                    std::invalid_argument);
}

GPU_TEST_CASE("bank_probe loads exactly the words each probe pattern names") {
    const std::vector<unsigned> table = random_words(kProbeWords, 5);
    for (const Probe& p : probe_table()) {
        CAPTURE(p.name);
        const std::vector<unsigned> got = course::submitted(run_probe(p, table));  // the words the probe loaded
        int wrong = 0;
        for (int lane = 0; lane < kWarpSize; ++lane)
            for (int w = 0; w < p.width / 4; ++w) wrong += got[lane * p.width / 4 + w] != table[p.addr[lane] / 4 + w];
        CHECK(wrong == 0);
    }
}
