// Checks for lesson 05's going-further companion. This file #includes the companion's own main.cu
// (CMake passes its path as COURSE_LESSON_SOURCE), so the kernels tested are the ones it runs:
// every rung of kRungs, on awkward shapes, with C poisoned first.
#include COURSE_LESSON_SOURCE

#include "testing.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace {

// M x N x K. Single elements; sizes that are multiples of no tile and of no float4 (17, 33, 65,
// 257, 129, 511); exact multiples of 128 x 128 x 8 tiles but not of 128 x 256 (128 x 128 x 128);
// float4-friendly sizes with partial tiles (131 x 260 x 36); a K shorter than one 16-deep slab
// with full 128 x 256 tiles otherwise (256 x 512 x 8); one larger case that is a multiple of every
// tile shape here, so every rung takes its fast path (1024 x 768 x 512). Small enough to stay
// quick under compute-sanitizer.
const std::array<int, 3> kShapes[] = {{1, 1, 1},       {17, 33, 65},   {128, 128, 128}, {257, 129, 511},
                                      {131, 260, 36},  {256, 512, 8},  {1024, 768, 512}};

/// Every output of a TileShape's block belongs to exactly one (thread, m, n), and every element
/// of its A and B slabs is loaded by exactly one (thread, load).
template <class S>
void check_tile_layout() {
    std::vector<int> owner(S::kBM * S::kBN, 0);
    for (int tid = 0; tid < S::kThreads; ++tid)
        for (int m = 0; m < S::kTM; ++m)
            for (int n = 0; n < S::kTN; ++n) {
                const int r = warp_tile_row<S>(tid, m), c = warp_tile_col<S>(tid, n);
                REQUIRE(r >= 0);
                REQUIRE(r < S::kBM);
                REQUIRE(c >= 0);
                REQUIRE(c < S::kBN);
                ++owner[r * S::kBN + c];
            }
    CHECK(std::count(owner.begin(), owner.end(), 1) == S::kBM * S::kBN);
    // A warp's outputs form one WM x WN rectangle: the idea of warp tiling.
    for (int warp = 0; warp < S::kWarps; ++warp) {
        int rmin = S::kBM, rmax = -1, cmin = S::kBN, cmax = -1;
        for (int lane = 0; lane < 32; ++lane) {
            for (int m = 0; m < S::kTM; ++m) {
                rmin = std::min(rmin, warp_tile_row<S>(warp * 32 + lane, m));
                rmax = std::max(rmax, warp_tile_row<S>(warp * 32 + lane, m));
            }
            for (int n = 0; n < S::kTN; ++n) {
                cmin = std::min(cmin, warp_tile_col<S>(warp * 32 + lane, n));
                cmax = std::max(cmax, warp_tile_col<S>(warp * 32 + lane, n));
            }
        }
        CHECK(rmax - rmin + 1 == S::kWM);
        CHECK(cmax - cmin + 1 == S::kWN);
    }
}

}  // namespace

// The tile shapes of kRungs, each checked by check_tile_layout and the fast/edge test below.
// A rung with a new TileShape adds its name here.
#define COURSE_FOR_EACH_TILE_SHAPE(X) X(WarpTile8x8) X(WarpTile16x8) X(WarpTile16x8K16)

// ---------------------------------------------------------------- host

TEST_CASE("the rungs have distinct names") {
    std::set<std::string> names;
    for (const Rung& r : kRungs) names.insert(r.name);
    CHECK(names.size() == std::size(kRungs));
}

TEST_CASE("command line: bad input is a usage error") {
    const char* too_big[] = {kLessonName, "--m", "65536", "--k", "65536"};
    CHECK_THROWS_AS(lesson(5, const_cast<char**>(too_big)), course::UsageError);
    const char* not_a_number[] = {kLessonName, "--n", "12abc"};
    CHECK_THROWS_AS(lesson(3, const_cast<char**>(not_a_number)), course::UsageError);
    const char* unknown_kernel[] = {kLessonName, "--kernel", "no_such_kernel"};
    CHECK_THROWS_AS(lesson(3, const_cast<char**>(unknown_kernel)), course::UsageError);
}

TEST_CASE("block_tile visits every block of C exactly once, in groups of rows") {
    for (const auto& case_ : {std::array<int, 3>{1, 1, 1}, {5, 7, 1}, {5, 7, 2}, {32, 32, 8}, {33, 9, 8}, {3, 40, 8}}) {
        const int tiles_m = case_[0], tiles_n = case_[1], group = case_[2];
        CAPTURE(tiles_m);
        CAPTURE(tiles_n);
        CAPTURE(group);
        std::vector<int> seen(tiles_m * tiles_n, 0);
        for (int b = 0; b < tiles_m * tiles_n; ++b) {
            const TileIndex t = block_tile(b, tiles_m, tiles_n, group);
            REQUIRE(t.row >= 0);
            REQUIRE(t.row < tiles_m);
            REQUIRE(t.col >= 0);
            REQUIRE(t.col < tiles_n);
            ++seen[t.row * tiles_n + t.col];
        }
        CHECK(std::count(seen.begin(), seen.end(), 1) == tiles_m * tiles_n);
    }
    // group_rows = 1 is plain row-major order; with 8, the first blocks go down a column of 8 rows.
    CHECK(block_tile(9, 4, 5, 1).row == 1);
    CHECK(block_tile(9, 4, 5, 1).col == 4);
    CHECK(block_tile(1, 32, 32, 8).row == 1);
    CHECK(block_tile(1, 32, 32, 8).col == 0);
    CHECK(block_tile(8, 32, 32, 8).row == 0);
    CHECK(block_tile(8, 32, 32, 8).col == 1);
}

TEST_CASE("warp-tiled shapes: each output has one owner, each warp one rectangle; the checks take both paths") {
#define COURSE_CHECK_SHAPE(S)                                                                                \
    {                                                                                                       \
        INFO(#S);                                                                                           \
        check_tile_layout<S>();                                                                             \
        int fast = 0, edge = 0;                                                                             \
        for (const auto& shape : kShapes)                                                                   \
            ++(fits_full_tiles<S>(nullptr, nullptr, nullptr, shape[0], shape[1], shape[2]) ? fast : edge);  \
        CHECK(fast >= 1);                                                                                   \
        CHECK(edge >= 1);                                                                                   \
    }
    COURSE_FOR_EACH_TILE_SHAPE(COURSE_CHECK_SHAPE)
#undef COURSE_CHECK_SHAPE
}

TEST_CASE("shared memory per block: on a T4 (64 KiB with the opt-in) the 8-deep pipelined kernel fits, the 16-deep one not") {
    CHECK(pipelined_shared_bytes<WarpTile16x8, 3>() == 3 * 8 * (128 + 4 + 256) * 4);
    CHECK(static_cast<std::size_t>(pipelined_shared_bytes<WarpTile16x8, 3>()) <= course::kT4SmemPerBlockOptin);
    CHECK(static_cast<std::size_t>(pipelined_shared_bytes<WarpTile16x8K16, 3>()) > course::kT4SmemPerBlockOptin);
    int above_48k = 0;
    for (const Rung& r : kRungs) above_48k += r.shared_bytes > 48 * 1024 ? 1 : 0;
    CHECK(above_48k == 1);  // only that one asks for the opt-in; the program leaves it out where it does not fit
}

// ---------------------------------------------------------------- GPU

GPU_TEST_CASE("every rung matches the CPU double reference on awkward shapes, C poisoned first") {
    for (const auto& shape : kShapes) {
        const int M = shape[0], N = shape[1], K = shape[2];
        TestProblem p = TestProblem::make(M, N, K, static_cast<std::uint32_t>(M * 7 + N * 13 + K));
        for (const Rung& r : kRungs) {
            INFO("kernel: ", std::string(r.name));
            CAPTURE(M);
            CAPTURE(N);
            CAPTURE(K);
            if (!fits_this_gpu(r)) {  // a T4: refused on the host, nothing launched
                CHECK_THROWS_AS(r.launch(nullptr, nullptr, nullptr, M, N, K), course::DoesNotFitError);
                continue;
            }
            const auto res = p.run_and_compare([&](const float* a, const float* b, float* c) { r.launch(a, b, c, M, N, K); });
            INFO(res.summary());
            CHECK(res.ok());
        }
    }
}

GPU_TEST_CASE("no rung writes past the end of C") {
    const int M = 17, N = 33, K = 65, guard = 1024;
    const auto host_a = course::random_floats(static_cast<std::size_t>(M) * K, 3);
    const auto host_b = course::random_floats(static_cast<std::size_t>(K) * N, 4);
    course::DeviceBuffer<float> a(host_a), b(host_b), c(static_cast<std::size_t>(M) * N + guard);
    for (const Rung& r : kRungs) {
        INFO("kernel: ", std::string(r.name));
        if (!fits_this_gpu(r)) {  // a T4: refused on the host, nothing launched
            CHECK_THROWS_AS(r.launch(a.data(), b.data(), c.data(), M, N, K), course::DoesNotFitError);
            continue;
        }
        c.poison();
        r.launch(a.data(), b.data(), c.data(), M, N, K);
        const std::vector<float> out = c.to_host();
        int untouched = 0;
        for (std::size_t i = static_cast<std::size_t>(M) * N; i < out.size(); ++i) untouched += std::isnan(out[i]) ? 1 : 0;
        CHECK(untouched == guard);
    }
}
