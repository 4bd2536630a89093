// Checks for lesson 03. This file #includes the lesson's own main.cu (CMake passes its path as
// COURSE_LESSON_SOURCE), so the kernels tested are the ones the lesson runs.
#include COURSE_LESSON_SOURCE

#include "speed.cuh"
#include "testing.hpp"
#include "transpose_inputs.hpp"

#include <numeric>
#include <utility>

namespace {

// Single elements, single rows and columns, primes, non-multiples of every tile, tall, wide,
// and one large square.
const std::pair<int, int> kShapes[] = {{1, 1},     {1, 1000}, {1000, 1},  {257, 1031}, {33, 65},
                                       {4099, 31}, {31, 4099}, {200, 136}, {2048, 2048}};

/// One run of main.cu's run_reverse_records on n records, its three outputs handed to
/// course::submitted (in this order) before main.cu's compare_records judges them.
RecordsCheck run_reverse_records_submitted(int n, std::uint32_t seed) {
    RecordsRun r = run_reverse_records(n, course::seeded(seed));
    r.a_out = course::submitted(std::move(r.a_out));
    r.b_out = course::submitted(std::move(r.b_out));
    r.c_out = course::submitted(std::move(r.c_out));
    return compare_records(r);
}

// ---- the records' speed case, on the GPU (the course's own kernels: one thread per element)

/// The speed case's records: b the speed floats of `seed`, a[i] = b[i] / 2 + i, c[i] = i * 37 % 127.
__global__ void speed_records_input(double* a, float* b, char* c, int n, std::uint64_t seed) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    b[i] = course::speed_float(seed, static_cast<std::uint64_t>(i));
    a[i] = b[i] * 0.5 + i;
    c[i] = static_cast<char>(i * 37 % 127);
}
void make_speed_records(double* a, float* b, char* c, int n, std::uint32_t seed) {
    speed_records_input<<<course::ceil_div(n, 256), 256>>>(a, b, c, n, seed);
    CUDA_CHECK_LAUNCH();
}

/// out = reverse_chunks_cpu(in, chunk): element i of a chunk goes to the chunk's mirror position.
template <class T>
__global__ void reverse_chunks_reference(const T* in, T* out, long long n, long long chunk) {
    const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const long long first = i / chunk * chunk, last = (first + chunk < n ? first + chunk : n) - 1;
    out[first + (last - i)] = in[i];
}

/// The row hashes (`hashed` elements per row) of reverse_chunks_cpu(in, chunk), through a scratch
/// buffer freed on return.
template <class T>
std::vector<std::uint64_t> reversed_chunks_row_hashes(const course::DeviceBuffer<T>& in, int chunk, std::size_t hashed) {
    course::DeviceBuffer<T> reversed(in.size());
    const long long n = static_cast<long long>(in.size());
    reverse_chunks_reference<<<course::ceil_div(n, 256), 256>>>(in.data(), reversed.data(), n, static_cast<long long>(chunk));
    CUDA_CHECK_LAUNCH();
    return course::device_row_hashes(reversed, hashed);
}

}  // namespace

TEST_CASE("validate_tile accepts the powers of two from 8 to 256 and nothing else") {
    for (int t : {8, 16, 32, 64, 128, 256}) CHECK(validate_tile(t) == t);
    for (long long t : {-8LL, 0LL, 1LL, 4LL, 7LL, 12LL, 48LL, 255LL, 512LL, 1LL << 40})
        CHECK_THROWS_AS(validate_tile(t), course::UsageError);
}

TEST_CASE("command line: --tile outside its listed values is refused before anything runs") {
    for (const char* bad : {"512", "48", "-8", "4"}) {
        INFO("bad value: ", std::string(bad));
        const char* args[] = {"03_dynamic_shared", "--tile", bad};
        CHECK_THROWS_AS(lesson(3, const_cast<char**>(args)), course::UsageError);
    }
}

TEST_CASE("transpose_block: whole warps, a block that fits, rows per pass that divide the tile") {
    for (int t : {8, 16, 32, 64, 128, 256}) {
        CAPTURE(t);
        const dim3 b = transpose_block(t);
        CHECK(b.x == static_cast<unsigned>(t));
        CHECK(b.y >= 1);
        CHECK(t % b.y == 0);  // the y loop covers every tile row exactly once per pass
        CHECK(b.x * b.y <= 1024);
        CHECK(b.x * b.y % 32 == 0);
        CHECK(transpose_smem_bytes(t) >= static_cast<std::size_t>(t) * t * sizeof(float));
        CHECK(transpose_smem_bytes(t) / sizeof(float) / t == static_cast<std::size_t>(t + 1));  // padded pitch
    }
}

TEST_CASE("align_up rounds up to the next multiple, and never further") {
    CHECK(align_up(0, 8) == 0);
    CHECK(align_up(13, 4) == 16);
    for (std::size_t a : {1u, 2u, 4u, 8u, 16u})
        for (std::size_t o = 0; o < 100; ++o) {
            const std::size_t r = align_up(o, a);
            CHECK(r % a == 0);
            CHECK(r >= o);
            CHECK(r - o < a);
        }
}

TEST_CASE("record_layout: every array aligned for its type, no overlap, and (largest first) no gaps") {
    for (int n = 1; n <= 300; ++n) {
        CAPTURE(n);
        const RecordLayout l = record_layout(n);
        CHECK(l.doubles % alignof(double) == 0);
        CHECK(l.floats % alignof(float) == 0);
        CHECK(l.floats >= l.doubles + n * sizeof(double));
        CHECK(l.chars >= l.floats + n * sizeof(float));
        CHECK(l.bytes == l.chars + n * sizeof(char));
        CHECK(l.bytes == n * (sizeof(double) + sizeof(float) + sizeof(char)));
    }
}

TEST_CASE("require_smem_fits throws above the limit, naming the request and the limit") {
    CHECK_NOTHROW(require_smem_fits(1000, 1000, "x"));
    try {
        require_smem_fits(1001, 1000, "a test request");
        FAIL("no exception");
    } catch (const course::DoesNotFitError& e) {
        const std::string what = e.what();
        CHECK(what.find("a test request") != std::string::npos);
        CHECK(what.find("1001") != std::string::npos);
        CHECK(what.find("1000") != std::string::npos);
    }
}

TEST_CASE("reverse_chunks_cpu reverses each chunk, the last one shorter, and twice is the identity") {
    std::vector<int> v(8);
    std::iota(v.begin(), v.end(), 0);
    CHECK(reverse_chunks_cpu(v, 3) == std::vector<int>{2, 1, 0, 5, 4, 3, 7, 6});
    CHECK(reverse_chunks_cpu(v, 100) == std::vector<int>(v.rbegin(), v.rend()));
    CHECK(reverse_chunks_cpu(reverse_chunks_cpu(v, 3), 3) == v);
}

GPU_TEST_CASE("both dynamic-tile transposes match the CPU for every tile size on awkward shapes, output poisoned") {
    for (const TransposeKernel kernel : {transpose_dynamic_tile_plain, transpose_dynamic_tile}) {
        const bool plain = kernel == transpose_dynamic_tile_plain;
        INFO("kernel: ", std::string(plain ? "transpose_dynamic_tile_plain" : "transpose_dynamic_tile"));
        for (int t : kTileSizes) {
            if (transpose_smem_bytes(t) > this_gpu().smem_per_block_optin) {  // a T4's 64 KiB: tile 128 is refused
                CAPTURE(t);
                course::DeviceBuffer<float> in(64), out(64);
                CHECK_THROWS_AS(launch_transpose_dynamic_tile(in.data(), out.data(), 8, 8, t, kernel), course::DoesNotFitError);
                continue;
            }
            for (const auto& shape : course::with_hidden_shapes(kShapes, "03_dynamic_shared")) {
                const int rows = shape.first, cols = shape.second;
                if (course::skip_shape(1LL * rows * cols)) continue;  // --small: the memcheck subset
                CAPTURE(t);
                CAPTURE(rows);
                CAPTURE(cols);
                // Drawn and transposed once for every kernel and tile (transpose_inputs.hpp).
                const std::uint32_t seed = course::seeded(rows * 31u + cols);
                const auto host_in = course::drawn_floats(static_cast<std::size_t>(rows) * cols, seed);
                course::DeviceBuffer<float> in(*host_in), out(host_in->size());
                out.poison();
                launch_transpose_dynamic_tile(in.data(), out.data(), rows, cols, t, kernel);
                const course::VerifyResult r = course::compare_exact(course::submitted(out.to_host()), *course::transposed_floats(rows, cols, seed), rows);
                INFO(r.summary());
                CHECK(r.ok());
            }
        }
    }
}

GPU_TEST_CASE("a tile too large for the GPU is refused before anything is launched") {
    const int t = 256;
    REQUIRE(transpose_smem_bytes(t) > this_gpu().smem_per_block_optin);  // 257 KiB: no current GPU has it
    const auto host_in = course::random_floats(300 * 300, course::seeded(3));
    course::DeviceBuffer<float> in(host_in), out(host_in.size());
    out.poison();
    const std::vector<float> before = out.to_host();  // the poison: the check's own, not judged
    CHECK_THROWS_AS(launch_transpose_dynamic_tile(in.data(), out.data(), 300, 300, t), course::DoesNotFitError);
    CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(course::compare_exact(course::submitted(out.to_host()), before, 300).ok());  // still all poison: nothing ran
}

GPU_TEST_CASE("reverse_in_block_dynamic: 1, 2, a prime, just above 48 KiB, and the largest block allowed") {
    const int above_default = static_cast<int>(this_gpu().smem_per_block / sizeof(float)) + 1;
    const int largest = static_cast<int>(this_gpu().smem_per_block_optin / sizeof(float));
    for (int n : {1, 2, 257, 1025, above_default, largest}) {
        CAPTURE(n);
        const std::vector<float> host = course::random_floats(n, course::seeded(100u + n));
        const std::vector<float> expected(host.rbegin(), host.rend());
        if (n > 1) REQUIRE(host != expected);  // otherwise a kernel that did nothing would pass
        course::DeviceBuffer<float> d(host);
        launch_reverse_in_block_dynamic(d.data(), n);
        const course::VerifyResult r = course::compare_exact(course::submitted(d.to_host()), expected, n);
        INFO(r.summary());
        CHECK(r.ok());
        cudaFuncAttributes attrs{};
        CUDA_CHECK(cudaFuncGetAttributes(&attrs, reverse_in_block_dynamic));
        CHECK(static_cast<std::size_t>(course::submitted(attrs.maxDynamicSharedSizeBytes)) >= n * sizeof(float));  // opted in where needed
    }
}

GPU_TEST_CASE("reverse_in_block_dynamic refuses one float more than a block may hold, before launching") {
    const int n = static_cast<int>(this_gpu().smem_per_block_optin / sizeof(float)) + 1;
    const std::vector<float> host = course::random_floats(n, course::seeded(9));
    course::DeviceBuffer<float> d(host);
    CHECK_THROWS_AS(launch_reverse_in_block_dynamic(d.data(), n), course::DoesNotFitError);
    CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(course::submitted(d.to_host()) == host);  // untouched
}

GPU_TEST_CASE("reverse_records_in_blocks: three arrays carved from one buffer, full and partial blocks") {
    for (int n : {1, 255, 256, 257, 1000, 100003}) {
        CAPTURE(n);
        const RecordsCheck r = run_reverse_records_submitted(n, 21u + n);
        INFO(r.doubles.summary(), " / ", r.floats.summary(), " / ", r.chars.summary());
        CHECK(r.doubles.ok());
        CHECK(r.floats.ok());
        CHECK(r.chars.ok());
    }
}

OWN_GPU_TEST_CASE("the records' speed case: its inputs and expected hashes, made on the GPU, are the CPU definitions'") {
    const int n = 1000;  // three whole chunks of 256 and a shorter one; hashed 40 elements to a row
    course::DeviceBuffer<double> a(n);
    course::DeviceBuffer<float> b(n);
    course::DeviceBuffer<char> c(n);
    make_speed_records(a.data(), b.data(), c.data(), n, 77);
    const std::vector<float> hb = course::speed_floats(n, 77);
    std::vector<double> ha(n);
    std::vector<char> hc(n);
    for (int i = 0; i < n; ++i) ha[i] = hb[i] * 0.5 + i, hc[i] = static_cast<char>(i * 37 % 127);
    CHECK(b.to_host() == hb);
    CHECK(a.to_host() == ha);
    CHECK(c.to_host() == hc);
    CHECK(reversed_chunks_row_hashes(a, kRecordThreads, 40) == course::row_hashes(reverse_chunks_cpu(ha, kRecordThreads), 40));
    CHECK(reversed_chunks_row_hashes(b, kRecordThreads, 40) == course::row_hashes(reverse_chunks_cpu(hb, kRecordThreads), 40));
    CHECK(reversed_chunks_row_hashes(c, kRecordThreads, 40) == course::row_hashes(reverse_chunks_cpu(hc, kRecordThreads), 40));
    CHECK(course::device_row_hashes(c, 40) == course::row_hashes(hc, 40));
    CHECK(course::device_row_hashes(c, 40) != course::row_hashes(reverse_chunks_cpu(hc, kRecordThreads), 40));
}

// Each exercise's transpose at tile 32 (the tile of lesson 02's kernel), beside a copy of the same bytes.
GPU_TEST_CASE("speed: 03.tile") {
    course::check_transpose_speed("03.tile", "transpose_dynamic_tile_plain 32x33",
                                  [](const float* in, float* out, int rows, int cols) {
                                      launch_transpose_dynamic_tile(in, out, rows, cols, 32, transpose_dynamic_tile_plain);
                                  });
}

GPU_TEST_CASE("speed: 03.tile_in_flight") {
    course::check_transpose_speed("03.tile_in_flight", "transpose_dynamic_tile 32x33",
                                  [](const float* in, float* out, int rows, int cols) {
                                      launch_transpose_dynamic_tile(in, out, rows, cols, 32, transpose_dynamic_tile);
                                  });
}

// The records' reversal on 2^24 records (13 bytes each: 208 MiB read, 208 MiB written), beside a copy
// of the same three arrays; each output array poisoned first, then checked by its row hashes against
// those of the chunks reversed by the course's plain kernels (above), all on the GPU.
GPU_TEST_CASE("speed: 03.records") {
    const int n = 1 << 24;
    course::DeviceBuffer<double> da(n), da_out(n);
    course::DeviceBuffer<float> db(n), db_out(n);
    course::DeviceBuffer<char> dc(n), dc_out(n);
    const auto poison_outputs = [&] { da_out.poison(), db_out.poison(), dc_out.poison(); };
    const auto launch = [&] {
        launch_reverse_records_in_blocks(da.data(), db.data(), dc.data(), da_out.data(), db_out.data(), dc_out.data(), n);
    };
    make_speed_records(da.data(), db.data(), dc.data(), n, course::seeded(0x5eed));
    constexpr std::size_t kHashed = 4096;  // elements per hashed row
    const auto expected_a = reversed_chunks_row_hashes(da, kRecordThreads, kHashed);
    const auto expected_b = reversed_chunks_row_hashes(db, kRecordThreads, kHashed);
    const auto expected_c = reversed_chunks_row_hashes(dc, kRecordThreads, kHashed);
    const course::Timing copy = course::time_speed([&] {
        CUDA_CHECK(cudaMemcpy(da_out.data(), da.data(), da.bytes(), cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaMemcpy(db_out.data(), db.data(), db.bytes(), cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaMemcpy(dc_out.data(), dc.data(), dc.bytes(), cudaMemcpyDeviceToDevice));
    });
    poison_outputs();
    const course::Timing t = course::time_speed(launch);
    course::report_speed("03.records", "reverse_records_in_blocks", t, "copy", copy, std::to_string(n));
    const auto doubles = course::compare_exact(course::submitted(course::device_row_hashes(da_out, kHashed)), expected_a, 1);
    const auto floats = course::compare_exact(course::submitted(course::device_row_hashes(db_out, kHashed)), expected_b, 1);
    const auto chars = course::compare_exact(course::submitted(course::device_row_hashes(dc_out, kHashed)), expected_c, 1);
    INFO("one hash per 4096 elements, (row, 0): ", doubles.summary(), " / ", floats.summary(), " / ", chars.summary());
    CHECK(doubles.ok());
    CHECK(floats.ok());
    CHECK(chars.ok());
    // The grader's witness (harness/speed.cuh): each launch on records drawn from a new seed, outputs
    // poisoned; after a timed launch, the records drawn again from that seed give the expected hashes.
    course::witness_speed("03.records", "reverse_records_in_blocks", t, "copy", copy, std::to_string(n),
                          [&](std::uint32_t seed) {
                              make_speed_records(da.data(), db.data(), dc.data(), n, seed);
                              poison_outputs();
                          },
                          launch, [&](std::uint32_t seed) {
                              const auto got_a = course::device_row_hashes(da_out, kHashed);
                              const auto got_b = course::device_row_hashes(db_out, kHashed);
                              const auto got_c = course::device_row_hashes(dc_out, kHashed);
                              make_speed_records(da.data(), db.data(), dc.data(), n, seed);
                              const bool right = got_a == reversed_chunks_row_hashes(da, kRecordThreads, kHashed) &&
                                                 got_b == reversed_chunks_row_hashes(db, kRecordThreads, kHashed) &&
                                                 got_c == reversed_chunks_row_hashes(dc, kRecordThreads, kHashed);
                              return right ? "" : "your records at the speed case's size are wrong";
                          });
}
