// Checks for lesson 06. This file #includes the lesson's own main.cu (CMake passes its path as
// COURSE_LESSON_SOURCE), so the model, kernels and launchers tested are the ones the lesson runs.
#include COURSE_LESSON_SOURCE

#include "speed.cuh"
#include "testing.hpp"
#include "transpose_inputs.hpp"

#include <utility>

namespace {

// Single elements, single rows and columns, primes, non-multiples of every tile, tall, wide, one
// large square, and shapes where only rows or only cols is a multiple of 4.
const std::pair<int, int> kShapes[] = {{1, 1},    {1, 1000},  {1000, 1}, {257, 1031}, {33, 65},   {4099, 31},
                                       {31, 4099}, {2048, 2048}, {260, 132}, {130, 68},  {68, 130}};

int wavefronts(const std::vector<std::int64_t>& addr, int width) { return bank_model(addr, width).wavefronts; }

/// What Nsight Compute counted for every probe of probe_table(), on an H100: load wavefronts and
/// conflicts (bank_probe, one shared load), store wavefronts and conflicts (bank_probe_store, one
/// shared store of the same pattern). Raw output: results/h100/bank_model/ (ncu_check.py table).
/// These are measurements, not the model's output: the test below holds the model to them.
struct Measured {
    const char* name;
    int ld_wavefronts, ld_conflicts, st_wavefronts, st_conflicts;
};
const Measured kMeasured[] = {
    {"w4_stride0", 1, 0, 1, 0},
    {"w4_stride1", 1, 0, 1, 0},
    {"w4_stride2", 2, 1, 2, 1},
    {"w4_stride3", 1, 0, 1, 0},
    {"w4_stride4", 4, 3, 4, 3},
    {"w4_stride8", 8, 7, 8, 7},
    {"w4_stride16", 16, 15, 16, 15},
    {"w4_stride32", 32, 31, 32, 31},
    {"w4_stride33", 1, 0, 1, 0},
    {"w4_stride64", 32, 31, 32, 31},
    {"w8_stride0", 1, 0, 2, 0},
    {"w8_stride1", 2, 0, 2, 0},
    {"w8_stride2", 4, 2, 4, 2},
    {"w16_stride0", 2, 0, 4, 0},
    {"w16_stride1", 4, 0, 4, 0},
    {"w16_stride2", 8, 4, 8, 4},
    {"w8_lanes_mod16", 2, 0, 2, 0},
    {"w16_lanes_mod16", 4, 0, 4, 0},
    {"w8_halves_two_addresses", 1, 0, 2, 0},
    {"w8_halves_same_bank", 2, 1, 2, 0},
    {"w8_uniform_half_then_row", 2, 0, 2, 0},
    {"w8_one_lane_differs", 2, 0, 2, 0},
    {"w8_halves_conflict", 4, 2, 4, 2},
    {"w16_lanes_mod8", 4, 0, 4, 0},
    {"w16_lanes_mod4", 4, 0, 4, 0},
    {"w16_lanes_div8", 2, 0, 4, 0},
    {"w8_lanes_div8", 1, 0, 2, 0},
    {"w8_lanes_div4", 1, 0, 2, 0},
    {"w8_pairs_xor1", 1, 0, 2, 0},
    {"w8_pairs_xor2", 1, 0, 2, 0},
    {"w16_pairs_xor1", 2, 0, 4, 0},
    {"w16_pairs_xor2", 2, 0, 4, 0},
    {"w8_pairs_xor1_conflict", 2, 1, 4, 2},
    {"w8_pairs_xor2_conflict", 2, 1, 4, 2},
    {"w16_pairs_xor1_conflict", 4, 2, 4, 0},
    {"w16_pairs_xor2_conflict", 4, 2, 4, 0},
    {"w16_quarters_conflict", 8, 4, 8, 4},
    {"w8_even_lanes_only", 1, 0, 2, 0},
    {"w4_mixed_pairs", 2, 1, 2, 1},
    {"tile32x32_column", 32, 31, 32, 31},
    {"tile32x33_column", 1, 0, 1, 0},
    {"tile32x32_xor_column", 1, 0, 1, 0},
    {"tile16x16_column", 8, 7, 8, 7},
    {"tile16x17_column", 2, 1, 2, 1},
    {"double32x32_column", 32, 30, 32, 30},
    {"double32x33_column", 2, 0, 2, 0},
    {"tile64x65_vec4_fill", 1, 0, 1, 0},
    {"tile64x65_vec4_gather", 1, 0, 1, 0},
    {"tile64_xor_vec4_fill", 1, 0, 1, 0},
    {"tile64_xor_vec4_gather", 1, 0, 1, 0},
};

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

TEST_CASE("bank model vs Nsight Compute: every probe of the table, loads and stores, as measured") {
    const std::vector<Probe> probes = probe_table();
    CHECK(probes.size() == std::size(kMeasured));  // a probe added to the table must be measured too
    for (const Measured& m : kMeasured) {
        CAPTURE(std::string(m.name));
        const Probe p = probe_named(probes, m.name);
        const BankReport ld = bank_model(p.addr, p.width), st = bank_model(p.addr, p.width, true);
        CHECK(ld.wavefronts == m.ld_wavefronts);
        CHECK(ld.conflicts() == m.ld_conflicts);
        CHECK(st.wavefronts == m.st_wavefronts);
        CHECK(st.conflicts() == m.st_conflicts);
    }
}

TEST_CASE("bank model, 8- and 16-byte accesses: half- and quarter-warp parts, twice as large when lanes pair up") {
    // Contiguous float2 / float4 rows: 256 and 512 bytes, 2 and 4 parts of one wavefront each.
    const BankReport f2 = bank_model(strided_addresses(1, 8), 8), f4 = bank_model(strided_addresses(1, 16), 16);
    CHECK(f2.parts == 2);
    CHECK(!f2.paired);
    CHECK(f4.parts == 4);
    CHECK(f4.ideal == 4);
    // A broadcast pairs every lane with n ^ 1: one part for 8 bytes, two for 16; a store never pairs.
    const BankReport bc8 = bank_model(strided_addresses(0, 8), 8), bc16 = bank_model(strided_addresses(0, 16), 16);
    CHECK(bc8.paired);
    CHECK(bc8.parts == 1);
    CHECK(bc16.parts == 2);
    CHECK(bank_model(strided_addresses(0, 16), 16, true).parts == 4);
    // The map's schedule: a 16-byte lane of the second half-warp is served after the first's.
    CHECK(bc16.pass[0] == 0);
    CHECK(bc16.pass[16] == 1);
    // Pairs are n with n ^ 1 or n with n ^ 2 across the whole warp; one lane off breaks them.
    std::vector<std::int64_t> pairs(kWarpSize);
    for (int lane = 0; lane < kWarpSize; ++lane) pairs[lane] = (lane / 2) * 16;
    CHECK(lanes_pair_up(pairs, 1));
    CHECK(!lanes_pair_up(pairs, 2));
    CHECK(bank_model(pairs, 16).parts == 2);
    pairs[31] = 0;
    CHECK(!lanes_pair_up(pairs, 1));
    CHECK(bank_model(pairs, 16).parts == 4);
    pairs[31] = kInactive;  // an inactive partner does not break a pair (w8_even_lanes_only)
    CHECK(lanes_pair_up(pairs, 1));
}

// The layouts (PaddedTile, SwizzledTile) are the student's work in the exercise: when grading, the
// values computed from them come from the student's run (course::submitted; harness/transcript.hpp), and
// the bank model that judges them from the course's own code.
TEST_CASE("tile column reads: 32x32 is 32-way; 32x33 and the XOR swizzle are conflict-free") {
    CHECK(wavefronts(course::submitted(scalar_tile_access<UnpaddedTile<32>>().drain), 4) == 32);
    CHECK(wavefronts(course::submitted(scalar_tile_access<PaddedTile<32>>().drain), 4) == 1);
    CHECK(wavefronts(course::submitted(scalar_tile_access<SwizzledTile<32>>().drain), 4) == 1);
}

TEST_CASE("every warp instruction of every transpose: fills are conflict-free, only the unpadded drain conflicts") {
    CHECK(course::submitted(worst_scalar_tile<UnpaddedTile<32>>()) == std::pair{1, 32});
    CHECK(course::submitted(worst_scalar_tile<PaddedTile<32>>()) == std::pair{1, 1});
    CHECK(course::submitted(worst_scalar_tile<SwizzledTile<32>>()) == std::pair{1, 1});
    for (const Transpose& k : kTransposes) {  // the lesson's printed table agrees for its first warp
        INFO("kernel: ", std::string(k.name));
        CHECK(wavefronts(course::submitted(k.access().fill), 4) == 1);
    }
}

TEST_CASE("tile layouts keep every element in its own word") {
    CHECK(course::submitted(is_one_to_one<32, UnpaddedTile<32>>()));
    CHECK(course::submitted(is_one_to_one<32, PaddedTile<32>>()));
    CHECK(course::submitted(is_one_to_one<32, SwizzledTile<32>>()));
    CHECK(course::submitted(is_one_to_one<64, PaddedTile<64>>()));
    CHECK(course::submitted(is_one_to_one<64, SwizzledTile<64>>()));
}

TEST_CASE("probe table: unique names, aligned, inside the probe array") {
    std::set<std::string> names;
    for (const Probe& p : probe_table()) {
        CAPTURE(p.name);
        CHECK(names.insert(p.name).second);
        CHECK(p.addr.size() == static_cast<std::size_t>(kWarpSize));
        for (std::int64_t a : p.addr) {
            if (a == kInactive) continue;
            CHECK(a % p.width == 0);
            CHECK(a + p.width <= kProbeWords * 4);
        }
    }
    CHECK_THROWS_AS(probe_named(probe_table(), "no_such_probe"), course::UsageError);
}

TEST_CASE("command line: a matrix past 2^31 elements is refused before anything runs") {
    const std::vector<const char*> argv = {"06_bank_conflicts", "--rows", "65536", "--cols", "65536"};
    CHECK_THROWS_AS(lesson(static_cast<int>(argv.size()), const_cast<char**>(argv.data())), course::UsageError);
}

TEST_CASE("transpose_cpu") {
    const std::vector<float> in = course::random_floats(5 * 7, course::seeded(1));
    const std::vector<float> out = transpose_cpu(in, 5, 7);
    for (int r = 0; r < 5; ++r)
        for (int c = 0; c < 7; ++c) CHECK(out[c * 5 + r] == in[r * 7 + c]);
}

GPU_TEST_CASE("every transpose matches the CPU reference on awkward shapes, output poisoned first") {
    for (const Transpose& k : kTransposes) {
        for (const auto& shape : course::with_hidden_shapes(kShapes, "06_bank_conflicts")) {
            const int rows = shape.first, cols = shape.second;
            if (course::skip_shape(1LL * rows * cols)) continue;  // --small: the memcheck subset
            INFO("kernel: ", std::string(k.name));
            CAPTURE(rows);
            CAPTURE(cols);
            // Drawn and transposed once for every kernel (transpose_inputs.hpp).
            const std::uint32_t seed = course::seeded(rows * 31u + cols);
            const auto host_in = course::drawn_floats(static_cast<std::size_t>(rows) * cols, seed);
            course::DeviceBuffer<float> in(*host_in), out(host_in->size());
            out.poison();
            k.launch(in.data(), out.data(), rows, cols);
            const course::VerifyResult r = course::compare_exact(course::submitted(out.to_host()), *course::transposed_floats(rows, cols, seed), rows);
            INFO(r.summary());
            CHECK(r.ok());
        }
    }
}

GPU_TEST_CASE("bank_probe loads exactly the words each probe pattern names") {
    const std::vector<unsigned> table = random_words(kProbeWords, 5);
    for (const Probe& p : probe_table()) {
        CAPTURE(p.name);
        const std::vector<unsigned> got = course::submitted(probe_words(p, table));  // main.cu's one launch
        int wrong = 0;
        for (int lane = 0; lane < kWarpSize; ++lane)
            if (p.addr[lane] != kInactive)
                for (int w = 0; w < p.width / 4; ++w) wrong += got[lane * p.width / 4 + w] != table[p.addr[lane] / 4 + w];
        CHECK(wrong == 0);
    }
}

// The lesson's tiled transpose built on each exercise's layout, beside a copy of the same bytes.
GPU_TEST_CASE("speed: 06.padded") {
    course::check_transpose_speed("06.padded", "transpose_tiled<PaddedTile<32>>", launch_transpose_tiled<PaddedTile<32>>);
}

GPU_TEST_CASE("speed: 06.swizzled") {
    course::check_transpose_speed("06.swizzled", "transpose_tiled<SwizzledTile<32>>", launch_transpose_tiled<SwizzledTile<32>>);
}
