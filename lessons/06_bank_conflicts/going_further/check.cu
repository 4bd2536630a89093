// Checks for lesson 06's going-further companion. This file #includes the companion's own main.cu
// (CMake passes its path as COURSE_LESSON_SOURCE), so the kernels and launchers tested are the
// ones it runs.
#include COURSE_LESSON_SOURCE

#include "testing.hpp"

#include <utility>

namespace {

// Single elements, single rows and columns, primes, non-multiples of every tile, tall, wide, one
// large square, and shapes where only rows or only cols is a multiple of 4 (the float4 paths).
const std::pair<int, int> kShapes[] = {{1, 1},    {1, 1000},  {1000, 1}, {257, 1031}, {33, 65},   {4099, 31},
                                       {31, 4099}, {2048, 2048}, {260, 132}, {130, 68},  {68, 130}};

std::vector<unsigned> random_words(std::size_t n, std::uint32_t seed) {
    const std::vector<int> r = course::random_ints(n, course::seeded(seed), 0, INT32_MAX);
    return {r.begin(), r.end()};
}

/// Every warp instruction of transpose_tiled16<Layout>: the 8 warps of the 16 x 16 block, each
/// two thread rows (threadIdx.y = 2w, 2w + 1). Returns the worst fill and drain wavefronts.
template <class Layout>
std::pair<int, int> worst_small_tile() {
    int fill = 0, drain = 0;
    for (int w = 0; w < kSmallTile * kSmallTile / kWarpSize; ++w) {
        std::vector<int> f, d;
        for (int lane = 0; lane < kWarpSize; ++lane) {
            const int ty = 2 * w + lane / 16, tx = lane % 16;
            f.push_back(Layout::at(ty, tx));
            d.push_back(Layout::at(tx, ty));
        }
        fill = std::max(fill, wavefronts4(f));
        drain = std::max(drain, wavefronts4(d));
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
                    std::vector<int> f, d;
                    for (int lane = 0; lane < kWarpSize; ++lane) {
                        const int y = 4 * warp + lane / 8 + p * kVecRows, x = 4 * (lane % 8) + 32 * s;
                        f.push_back(Layout::at(y, x + k));
                        d.push_back(Layout::at(x + k, y));
                    }
                    fill = std::max(fill, wavefronts4(f));
                    drain = std::max(drain, wavefronts4(d));
                }
    return {fill, drain};
}

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

TEST_CASE("the 4-byte model: conflict degree of s[lane * stride], as Nsight Compute counted it") {
    // Load wavefronts of w4_stride0..64, measured with lesson 06's probes (its README's table).
    const std::pair<int, int> measured[] = {{0, 1}, {1, 1}, {2, 2}, {3, 1}, {4, 4}, {8, 8}, {16, 16}, {32, 32}, {33, 1}, {64, 32}};
    for (const auto& m : measured) {
        CAPTURE(m.first);
        CHECK(stride_degree(m.first) == m.second);
    }
}

TEST_CASE("every warp instruction of each transpose, against the counts ncu measured for warp 0") {
    // ncu (lesson 06's probe table): tile16x16_column 8, tile16x17_column 2, and 1 for the float4
    // kernel's fill and gather in both layouts. The fill of the 16x17 tile is 2-way too.
    CHECK(worst_small_tile<PitchTile<16, 16>>() == std::pair{1, 8});
    CHECK(worst_small_tile<PitchTile<16, 17>>() == std::pair{2, 2});
    CHECK(worst_vec4_tile<PitchTile<64, 65>>() == std::pair{1, 1});
    CHECK(worst_vec4_tile<XorTile<64>>() == std::pair{1, 1});
    CHECK(worst_vec4_tile<PitchTile<64, 64>>().second == 8);  // unpadded: 4 columns, 8 rows each, still 8-way
    for (const Transpose& k : kTransposes) {  // the printed table is warp 0 of the same accesses
        INFO("kernel: ", std::string(k.name));
        CHECK(wavefronts4(k.access().drain) <= 8);
    }
    CHECK(wavefronts4(small_tile_access<PitchTile<16, 16>>().drain) == 8);
    CHECK(is_one_to_one<16, PitchTile<16, 17>>());
    CHECK(is_one_to_one<64, PitchTile<64, 65>>());
    CHECK(is_one_to_one<64, XorTile<64>>());
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
        for (const auto& shape : kShapes) {  // not graded: no hidden shapes
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
