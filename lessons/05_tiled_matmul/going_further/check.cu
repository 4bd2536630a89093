// Checks for lesson 05's going-further companion. This file #includes the companion's own main.cu
// (CMake passes its path as COURSE_LESSON_SOURCE), so the kernels tested are the ones it runs:
// every rung of kRungs, and every block shape of the size-aware rung with K split several ways, on
// awkward shapes, with C poisoned first; and, on the host, the size-aware rule itself.
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
#define COURSE_FOR_EACH_TILE_SHAPE(X) X(WarpTile8x8) X(WarpTile16x8) X(WarpTile16x8K16) X(WarpTile16x8K16Pairs) X(Block4Warps) X(Block2Warps)

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

TEST_CASE("pipelined kernels: each float of an A slab is copied once; a warp's copies hit 32 banks at BK = 8, 16 at BK = 16") {
#define COURSE_CHECK_COPIES(S)                                                                                    \
    {                                                                                                            \
        INFO(#S);                                                                                                \
        const int pitch = S::kBM + S::kAPad, row_step = S::kThreads / S::kBK;                                    \
        std::vector<int> copied(S::kBM * S::kBK, 0);                                                             \
        for (int tid = 0; tid < S::kThreads; ++tid)                                                              \
            for (int l = 0; l < S::kBM * S::kBK / S::kThreads; ++l) {                                            \
                const SlabPlace p = a_copy_place<S>(tid);                                                        \
                REQUIRE(p.row + l * row_step < S::kBM);                                                          \
                REQUIRE(p.k < S::kBK);                                                                           \
                ++copied[(p.row + l * row_step) * S::kBK + p.k];                                                 \
            }                                                                                                    \
        CHECK(std::count(copied.begin(), copied.end(), 1) == S::kBM * S::kBK);                                   \
        for (int warp = 0; warp < S::kWarps; ++warp) {                                                           \
            std::set<int> banks;                                                                                 \
            for (int lane = 0; lane < 32; ++lane) {                                                              \
                const SlabPlace p = a_copy_place<S>(warp * 32 + lane);                                           \
                banks.insert((p.k * pitch + p.row) % 32);                                                        \
            }                                                                                                    \
            CHECK(banks.size() == (S::kBK == 8 ? 32u : 16u)); /* k and k + 8 share a bank: main.cu, README */     \
        }                                                                                                        \
    }
    COURSE_CHECK_COPIES(WarpTile16x8)
    COURSE_CHECK_COPIES(WarpTile16x8K16)
    COURSE_CHECK_COPIES(Block4Warps)
    COURSE_CHECK_COPIES(Block2Warps)
#undef COURSE_CHECK_COPIES
}

TEST_CASE("paired lanes: lanes n and n ^ 1 load the same float4 of B, lanes n and n ^ 2 the same of A") {
    for (int lane = 0; lane < 32; ++lane) {
        CAPTURE(lane);
        CHECK(warp_tile_col<WarpTile16x8K16Pairs>(lane, 0) == warp_tile_col<WarpTile16x8K16Pairs>(lane ^ 1, 0));
        CHECK(warp_tile_row<WarpTile16x8K16Pairs>(lane, 0) == warp_tile_row<WarpTile16x8K16Pairs>(lane ^ 2, 0));
        // Row by row, lanes l and l + 8 share B's float4, and no two lanes of one quarter-warp do.
        CHECK(warp_tile_col<WarpTile16x8K16>(lane, 0) == warp_tile_col<WarpTile16x8K16>((lane + 8) % 32, 0));
        CHECK(warp_tile_col<WarpTile16x8K16>(lane, 0) != warp_tile_col<WarpTile16x8K16>(lane ^ 1, 0));
    }
}

TEST_CASE("shared memory per block: on a T4 (64 KiB with the opt-in) the 8-deep pipelined kernel fits, the 16-deep one not") {
    CHECK(pipelined_shared_bytes<WarpTile16x8, 3>() == 3 * 8 * (128 + 4 + 256) * 4);
    CHECK(static_cast<std::size_t>(pipelined_shared_bytes<WarpTile16x8, 3>()) <= course::kT4SmemPerBlockOptin);
    CHECK(static_cast<std::size_t>(pipelined_shared_bytes<WarpTile16x8K16, 3>()) > course::kT4SmemPerBlockOptin);
    int above_48k = 0;
    for (const Rung& r : kRungs) above_48k += r.shared_bytes > 48 * 1024 ? 1 : 0;
    CHECK(above_48k == 1);  // only that one asks for the opt-in; the program leaves it out where it does not fit
}

TEST_CASE("split-K slices: whole slabs, only the last one shorter") {
    CHECK(slice_length(1000, 3, 16) == 336);  // 336 + 336 + 328
    CHECK(slice_length(65, 2, 16) == 48);     // 48 + 17
    CHECK(slice_length(8, 5, 16) == 16);      // K shorter than one slab: one slice
    CHECK(slice_length(4096, 1, 16) == 4096);
    for (int K : {1, 15, 16, 17, 100, 1000, 3000, 8192})
        for (int splits = 1; splits <= kMaxSplits; ++splits) {
            const int len = slice_length(K, splits, 16), used = (K + len - 1) / len;
            CAPTURE(K);
            CAPTURE(splits);
            CHECK(len % 16 == 0);
            CHECK(used <= splits);
            CHECK(used * len >= K);        // the slices cover K...
            CHECK((used - 1) * len < K);  // ...and none is empty
        }
}

/// An H100 (SXM, 132 SMs at up to 1.98 GHz, 3.35 TB/s) as the rule sees it; it holds 1, 2 and
/// 4 blocks of 8, 4 and 2 warps (the occupancy calculator's answer for ~230 registers per thread).
Machine h100() { return Machine{132, 128, 1.98, 3352, {1, 2, 4}}; }

TEST_CASE("the size-aware rule on an H100: the block and the split the README explains") {
    auto plan = [](int M, int N, int K) { return choose_plan(M, N, K, h100()); };
    // 4096^3: 32 x 16 = 512 tiles of 128 x 256 = 3.9 waves -> 4; splitting K only adds waves.
    CHECK(std::string(plan(4096, 4096, 4096).block->name) == "128x256");
    CHECK(plan(4096, 4096, 4096).splits == 1);
    CHECK(plan(8192, 8192, 8192).splits == 1);
    CHECK(plan(8192, 8192, 64).splits == 1);
    // 1024^3: 32 tiles; 4 slices of 256 make 128 blocks, one wave.
    CHECK(std::string(plan(1024, 1024, 1024).block->name) == "128x256");
    CHECK(plan(1024, 1024, 1024).splits == 4);
    CHECK(plan(1024, 1024, 1024).waves == 1);
    // 3000^3: 24 x 12 = 288 tiles = 2.2 waves -> 3, the last one 18% full; 4 slices of 752:
    // 1152 blocks = 8.7 waves -> 9.
    CHECK(std::string(plan(3000, 3000, 3000).block->name) == "128x256");
    CHECK(plan(3000, 3000, 3000).splits == 4);
    // 64 x 8192 x 8192: a 128-row block would be half empty; 64 x 128 blocks, 64 of them, 8 slices.
    CHECK(std::string(plan(64, 8192, 8192).block->name) == "64x128");
    CHECK(plan(64, 8192, 8192).splits == 8);
    for (const auto& s : {std::array<int, 3>{1, 1, 1}, {512, 512, 512}, {3000, 3000, 3000}, {64, 8192, 8192}, {17, 33, 65}}) {
        const Plan p = plan(s[0], s[1], s[2]);
        CAPTURE(s[0]);
        CAPTURE(s[1]);
        CAPTURE(s[2]);
        CHECK(p.waves * p.slots >= p.tiles * p.splits);       // enough waves for every block...
        CHECK((p.waves - 1) * p.slots < p.tiles * p.splits);  // ...and not one more
        CHECK(p.splits * p.k_slice >= s[2]);
        // Never slower, by the model, than any unsplit plan.
        for (std::size_t i = 0; i < std::size(kBlockShapes); ++i)
            CHECK(p.predicted_us() <= plan_for(kBlockShapes[i], h100(), h100().blocks_per_sm[i], s[0], s[1], s[2], 1).predicted_us());
    }
    // A GPU where the 128 x 256 block does not fit (a T4: 64 KiB of shared memory per block).
    const Machine t4{40, 64, 1.59, 320, {0, 1, 2}};
    CHECK(std::string(choose_plan(4096, 4096, 4096, t4).block->name) != "128x256");
    CHECK_THROWS_AS(choose_plan(64, 64, 64, Machine{40, 64, 1.59, 320, {0, 0, 0}}), course::DoesNotFitError);
}

// ---------------------------------------------------------------- GPU

GPU_TEST_CASE("every rung matches the CPU double reference on awkward shapes, C poisoned first") {
    for (const auto& shape : kShapes) {
        const int M = shape[0], N = shape[1], K = shape[2];
        TestProblem p = TestProblem::make(M, N, K, course::seeded(static_cast<std::uint32_t>(M * 7 + N * 13 + K)));
        for (const Rung& r : kRungs) {
            INFO("kernel: ", std::string(r.name));
            CAPTURE(M);
            CAPTURE(N);
            CAPTURE(K);
            if (!fits_this_gpu(r)) {  // a T4: refused on the host, nothing launched
                CHECK_THROWS_AS(r.launch(nullptr, nullptr, nullptr, M, N, K), course::DoesNotFitError);
                continue;
            }
            const auto res = p.compare(course::submitted(p.run([&](const float* a, const float* b, float* c) { r.launch(a, b, c, M, N, K); })));
            INFO(res.summary());
            CHECK(res.ok());
        }
    }
}

GPU_TEST_CASE("no rung writes past the end of C") {
    const int M = 17, N = 33, K = 65, guard = 1024;
    const auto host_a = course::random_floats(static_cast<std::size_t>(M) * K, course::seeded(3));
    const auto host_b = course::random_floats(static_cast<std::size_t>(K) * N, course::seeded(4));
    course::DeviceBuffer<float> a(host_a), b(host_b), c(static_cast<std::size_t>(M) * N + guard);
    for (const Rung& r : kRungs) {
        INFO("kernel: ", std::string(r.name));
        if (!fits_this_gpu(r)) {  // a T4: refused on the host, nothing launched
            CHECK_THROWS_AS(r.launch(a.data(), b.data(), c.data(), M, N, K), course::DoesNotFitError);
            continue;
        }
        c.poison();
        r.launch(a.data(), b.data(), c.data(), M, N, K);
        const std::vector<float> out = course::submitted(c.to_host());
        int untouched = 0;
        for (std::size_t i = static_cast<std::size_t>(M) * N; i < out.size(); ++i) untouched += std::isnan(out[i]) ? 1 : 0;
        CHECK(untouched == guard);
    }
}

GPU_TEST_CASE("every block shape of the size-aware rung, with K split 1, 2, 3 and 7 ways, on awkward shapes") {
    // Besides kShapes: a C of 64 rows from a long K cut unevenly (1000 = 336 + 336 + 328), and a
    // shape whose every dimension misses every tile and slab.
    std::vector<std::array<int, 3>> shapes(std::begin(kShapes), std::end(kShapes));
    shapes.push_back({64, 520, 1000});
    shapes.push_back({190, 255, 333});
    for (const auto& shape : shapes) {
        const int M = shape[0], N = shape[1], K = shape[2];
        TestProblem p = TestProblem::make(M, N, K, course::seeded(static_cast<std::uint32_t>(M * 5 + N * 11 + K)));
        for (const BlockShape& b : kBlockShapes) {
            if (b.blocks_per_sm() == 0) continue;  // does not fit this GPU (the 128 x 256 block on a T4)
            for (int splits : {1, 2, 3, 7}) {
                INFO("block ", std::string(b.name), ", ", splits, " slices");
                CAPTURE(M);
                CAPTURE(N);
                CAPTURE(K);
                const auto res = p.compare(course::submitted(p.run([&](const float* a, const float* bb, float* c) { b.launch(a, bb, c, M, N, K, splits); })));
                INFO(res.summary());
                CHECK(res.ok());
            }
        }
    }
}
