// Checks for lesson 01. This file #includes the lesson's own main.cu (CMake passes its path as
// COURSE_LESSON_SOURCE), so the kernels tested are the ones the lesson runs. An instructor can
// point the same check at a student's main.cu: see add_lesson() in CMakeLists.txt.
#include COURSE_LESSON_SOURCE

#include "speed.cuh"
#include "testing.hpp"
#include "transpose_inputs.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace {

// Shapes that catch missing bounds checks and swapped rows/cols: single elements, single rows
// and columns, primes, non-multiples of the 32 x 8 block, tall, wide, sides that are multiples of 4
// but not of a block (the float4 copy's vector path on edge blocks), and one large square.
const std::pair<int, int> kShapes[] = {{1, 1},      {1, 1000},  {1000, 1}, {257, 1031}, {33, 65},  {4099, 31},
                                       {31, 4099},  {36, 100},  {4, 2052}, {1028, 516}, {2048, 2048}};

}  // namespace

TEST_CASE("transpose_cpu puts in[r][c] at out[c][r], and twice is the identity") {
    const int rows = 5, cols = 7;
    const std::vector<float> in = course::random_floats(rows * cols, course::seeded(1));
    const std::vector<float> out = transpose_cpu(in, rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) CHECK(out[c * rows + r] == in[r * cols + c]);
    CHECK(transpose_cpu(out, cols, rows) == in);
}

TEST_CASE("the GPU test cases' inputs and references are random_floats and transpose_cpu, made once in a process") {
    const int rows = 37, cols = 19;
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const std::uint32_t seed = course::seeded(4242);
    const auto in = course::drawn_floats(n, seed);
    CHECK(*in == course::random_floats(n, seed));
    CHECK(course::drawn_floats(n, seed).get() == in.get());  // kept: the same vector again
    CHECK(*course::drawn_floats(n, seed + 1) != *in);
    const auto t = course::transposed_floats(rows, cols, seed);
    CHECK(*t == transpose_cpu(course::random_floats(n, seed), rows, cols));
    CHECK(course::transposed_floats(rows, cols, seed).get() == t.get());
    CHECK(*course::transposed_floats(cols, rows, seed) == transpose_cpu(*in, cols, rows));  // the shape is part of the key
    CHECK(*course::transposed_floats(cols, rows, seed) != *t);
}

TEST_CASE("sector model: coalesced, strided, misaligned and repeated warp accesses") {
    std::vector<std::uint64_t> addr;
    for (std::uint64_t lane = 0; lane < 32; ++lane) addr.push_back(lane * 4);
    CHECK(sectors_touched(addr, 4) == 4);  // 128 contiguous bytes

    for (auto& a : addr) a += 4;  // shifted by one float: straddles one extra sector
    CHECK(sectors_touched(addr, 4) == 5);

    addr.clear();
    for (std::uint64_t lane = 0; lane < 32; ++lane) addr.push_back(lane * 8192 * 4);
    CHECK(sectors_touched(addr, 4) == 32);  // one row apart: a sector per lane

    addr.assign(32, 64);
    CHECK(sectors_touched(addr, 4) == 1);  // everybody reads the same word

    addr.clear();
    for (std::uint64_t lane = 0; lane < 32; ++lane) addr.push_back(lane * 8);
    CHECK(sectors_touched(addr, 8) == 8);  // 32 doubles = 256 bytes
}

TEST_CASE("sector model of the lesson's kernels: the tutorial's naive kernel strides its reads") {
    for (const auto& [rows, cols] : {std::pair{8192, 8192}, std::pair{1000, 3000}}) {
        const WarpAccess copy = first_warp_access(Walk::Copy, rows, cols);
        CHECK(sectors_touched(copy.reads, 4) == 4);
        CHECK(sectors_touched(copy.writes, 4) == 4);
        const WarpAccess sr = first_warp_access(Walk::StridedReads, rows, cols);
        CHECK(sectors_touched(sr.reads, 4) == 32);
        CHECK(sectors_touched(sr.writes, 4) == 4);
        const WarpAccess sw = first_warp_access(Walk::StridedWrites, rows, cols);
        CHECK(sectors_touched(sw.reads, 4) == 4);
        CHECK(sectors_touched(sw.writes, 4) == 32);
    }
}

GPU_TEST_CASE("every transpose matches the CPU reference on awkward shapes, output poisoned first") {
    for (const Transpose& k : kTransposes) {
        for (const auto& shape : course::with_hidden_shapes(kShapes, "01_naive_transpose")) {
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

GPU_TEST_CASE("every copy kernel copies every element of awkward shapes, also from unaligned pointers") {
    for (const Transpose& k : kCopies) {
        for (const auto& shape : course::with_hidden_shapes(kShapes, "01_naive_transpose")) {
            for (int offset : {0, 1}) {  // 1: one float past the base, so float4 accesses must fall back
                const int rows = shape.first, cols = shape.second;
                if (course::skip_shape(1LL * rows * cols)) continue;  // --small: the memcheck subset
                INFO("kernel: ", std::string(k.name));
                CAPTURE(rows);
                CAPTURE(cols);
                CAPTURE(offset);
                // Drawn once for every copy kernel and offset (transpose_inputs.hpp).
                const auto host_in = course::drawn_floats(static_cast<std::size_t>(rows) * cols, course::seeded(rows + 7u * cols));
                std::vector<float> padded(offset, 0.0f);
                padded.insert(padded.end(), host_in->begin(), host_in->end());
                course::DeviceBuffer<float> in(padded), out(padded.size());
                out.poison();
                k.launch(in.data() + offset, out.data() + offset, rows, cols);
                std::vector<float> got = course::submitted(out.to_host());
                got.erase(got.begin(), got.begin() + offset);
                const course::VerifyResult r = course::compare_exact(got, *host_in, cols);
                INFO(r.summary());
                CHECK(r.ok());
            }
        }
    }
}

// The speed cases of lessons 01, 02, 03 and 06 make their input and every hash on the GPU
// (harness/speed.cuh): here, on small matrices, against the CPU definitions they stand for (the
// witness's expected hashes, made from the seed alone, too).
OWN_GPU_TEST_CASE("speed cases: the GPU's inputs, row hashes and transpose hashes are the CPU's") {
    for (const auto& shape : {std::pair{1, 1}, std::pair{37, 19}, std::pair{5, 64}, std::pair{64, 33}, std::pair{300, 257}}) {
        const int rows = shape.first, cols = shape.second;
        CAPTURE(rows);
        CAPTURE(cols);
        const std::size_t n = static_cast<std::size_t>(rows) * cols;
        course::DeviceBuffer<float> in(n);
        course::fill_speed_floats(in.data(), n, 9);
        const std::vector<float> host = course::speed_floats(n, 9);
        CHECK(in.to_host() == host);
        CHECK(course::device_row_hashes(in, cols) == course::row_hashes(host, cols));
        const std::vector<float> transposed = course::transpose_cpu(host, rows, cols);
        CHECK(course::device_transpose_row_hashes(in, rows, cols) == course::row_hashes(transposed, rows));
        CHECK(course::transposed_speed_row_hashes(9, rows, cols) == course::row_hashes(transposed, rows));
    }
    // Other element sizes, as lesson 03's records are hashed; one changed bit changes its row's hash.
    std::vector<double> d(12 * 10);
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = 1.0 / (i + 1);
    course::DeviceBuffer<double> dd(d);
    CHECK(course::device_row_hashes(dd, 10) == course::row_hashes(d, 10));
    std::vector<char> c(12 * 8);
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<char>(i * 37 % 127);
    course::DeviceBuffer<char> dc(c);
    CHECK(course::device_row_hashes(dc, 8) == course::row_hashes(c, 8));
    const std::vector<std::uint64_t> before = course::device_row_hashes(dd, 10);
    d[5 * 10 + 3] = std::nextafter(d[5 * 10 + 3], 2.0);
    dd.copy_from(d);
    const course::VerifyResult changed = course::compare_exact(course::device_row_hashes(dd, 10), before, 1);
    CHECK(changed.mismatches == 1);
    REQUIRE(changed.first.has_value());
    CHECK(changed.first->row == 5);
    // A row that is not whole 4-byte words is refused, not hashed in part.
    CHECK_THROWS_AS(course::device_row_hashes(dc, 7), std::invalid_argument);
    // A NaN's payload counts: the poison and a quiet NaN hash differently.
    course::DeviceBuffer<float> nan(4);
    nan.poison();
    const std::vector<float> quiet(4, std::numeric_limits<float>::quiet_NaN());
    CHECK(course::device_row_hashes(nan, 4) != course::row_hashes(quiet, 4));
}

// Each exercise's naive transpose beside a copy of the same bytes (harness/speed.cuh).
GPU_TEST_CASE("speed: 01.strided_reads") {
    course::check_transpose_speed("01.strided_reads", "transpose_naive_strided_reads", launch_transpose_naive_strided_reads);
}

GPU_TEST_CASE("speed: 01.strided_writes") {
    course::check_transpose_speed("01.strided_writes", "transpose_naive_strided_writes", launch_transpose_naive_strided_writes);
}
