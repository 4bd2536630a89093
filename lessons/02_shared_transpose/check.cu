// Checks for lesson 02. This file #includes the lesson's own main.cu (CMake passes its path as
// COURSE_LESSON_SOURCE), so the kernels tested are the ones the lesson runs.
#include COURSE_LESSON_SOURCE

#include "speed.cuh"
#include "testing.hpp"
#include "transpose_inputs.hpp"

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
/// likewise), with the output poisoned first; compares with the CPU transpose. The input and the
/// transpose are drawn and made once for every kernel (transpose_inputs.hpp).
course::VerifyResult run_transpose(Launcher launch, int rows, int cols, int offset = 0) {
    const std::uint32_t seed = course::seeded(rows * 31u + cols);
    const auto host_in = course::drawn_floats(static_cast<std::size_t>(rows) * cols, seed);
    std::vector<float> padded_in(host_in->size() + offset, 0.0f);
    std::copy(host_in->begin(), host_in->end(), padded_in.begin() + offset);
    course::DeviceBuffer<float> in(padded_in), out(padded_in.size());
    out.poison();
    launch(in.data() + offset, out.data() + offset, rows, cols);
    std::vector<float> got = course::submitted(out.to_host());
    got.erase(got.begin(), got.begin() + offset);
    return course::compare_exact(got, *course::transposed_floats(rows, cols, seed), rows);
}

}  // namespace

TEST_CASE("transpose_cpu puts in[r][c] at out[c][r], and twice is the identity") {
    const int rows = 5, cols = 7;
    const std::vector<float> in = course::random_floats(rows * cols, course::seeded(1));
    const std::vector<float> out = transpose_cpu(in, rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) CHECK(out[c * rows + r] == in[r * cols + c]);
    CHECK(transpose_cpu(out, cols, rows) == in);
}

TEST_CASE("bank model: strides, broadcast and padding") {
    auto strided = [](int stride) {
        std::vector<int> w;
        for (int lane = 0; lane < 32; ++lane) w.push_back(lane * stride);
        return w;
    };
    CHECK(bank_passes(strided(1)) == 1);
    CHECK(bank_passes(strided(2)) == 2);
    CHECK(bank_passes(strided(4)) == 4);
    CHECK(bank_passes(strided(32)) == 32);
    CHECK(bank_passes(strided(33)) == 1);
    CHECK(bank_passes(strided(0)) == 1);  // every lane reads one word: a broadcast
}

TEST_CASE("bank model of the lesson's kernels: the padding makes every phase conflict-free") {
    CHECK(bank_passes(warp_tile_words(Phase::ScalarLoad, 32)) == 1);
    CHECK(bank_passes(warp_tile_words(Phase::ScalarStore, 32)) == 32);  // the unpadded column read
    CHECK(bank_passes(warp_tile_words(Phase::ScalarStore, kTile + 1)) == 1);
    for (int k = 0; k < 4; ++k) {
        CAPTURE(k);
        for (int pitch : {33, 65}) {  // the float4 kernels' two tile widths, padded
            CAPTURE(pitch);
            CHECK(bank_passes(warp_tile_words(Phase::Float4Load, pitch, k)) == 1);
            CHECK(bank_passes(warp_tile_words(Phase::Float4Store, pitch, k)) == 1);
        }
        CHECK(bank_passes(warp_tile_words(Phase::Float4Store, 32, k)) == 8);  // unpadded: 8-way
        CHECK(bank_passes(warp_tile_words(Phase::Float4Store, 64, k)) == 8);
    }
}

GPU_TEST_CASE("every transpose matches the CPU reference on awkward shapes, output poisoned first") {
    for (const Transpose& k : kTransposes) {
        for (const auto& shape : course::with_hidden_shapes(kShapes, "02_shared_transpose")) {
            const int rows = shape.first, cols = shape.second;
            if (course::skip_shape(1LL * rows * cols)) continue;  // --small: the memcheck subset
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

GPU_TEST_CASE("reverse_in_block_static reverses 1, a prime number and the maximum of elements") {
    for (int n : {1, 2, 257, kMaxStaticReverse}) {
        CAPTURE(n);
        const std::vector<float> host = course::random_floats(n, course::seeded(100u + n));
        const std::vector<float> expected(host.rbegin(), host.rend());
        if (n > 1) REQUIRE(host != expected);  // otherwise a kernel that did nothing would pass
        course::DeviceBuffer<float> d(host);
        launch_reverse_in_block_static(d.data(), n);
        const course::VerifyResult r = course::compare_exact(course::submitted(d.to_host()), expected, n);
        INFO(r.summary());
        CHECK(r.ok());
    }
}

GPU_TEST_CASE("reverse_in_block_static refuses sizes it cannot hold, before launching anything") {
    const std::vector<float> host = course::random_floats(kMaxStaticReverse + 1, course::seeded(5));
    course::DeviceBuffer<float> d(host);
    CHECK_THROWS_AS(launch_reverse_in_block_static(d.data(), kMaxStaticReverse + 1), course::DoesNotFitError);
    CHECK_THROWS_AS(launch_reverse_in_block_static(d.data(), 0), course::DoesNotFitError);
    CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(course::submitted(d.to_host()) == host);  // untouched
}

// The exercise's kernel with the padded tile, as the lesson runs it, beside a copy of the same bytes.
GPU_TEST_CASE("speed: 02.tiled") {
    course::check_transpose_speed("02.tiled", "transpose_tiled<33>", launch_transpose_tiled<kTile + 1>);
}
