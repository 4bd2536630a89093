// Checks for lesson 05. This file #includes the lesson's own main.cu (CMake passes its path as
// COURSE_LESSON_SOURCE), so the kernels tested are the ones the lesson runs.
#include COURSE_LESSON_SOURCE

#include "speed.cuh"
#include "testing.hpp"

#include <algorithm>
#include <array>

namespace {

// M x N x K. Single elements; sizes that are multiples of no tile and of no float4 (17, 33, 65,
// 257, 129, 511); exact multiples of the 128 x 128 x 8 register tiles (128 x 128 x 128);
// float4-friendly sizes with partial tiles (131 x 260 x 36); one larger case that is a multiple of
// every tile here (1024 x 768 x 512). Small enough to stay quick under compute-sanitizer.
// (going_further/check.cu checks the going-further kernels on the same kind of shapes.)
const std::array<int, 3> kShapes[] = {{1, 1, 1},     {17, 33, 65},    {128, 128, 128},
                                      {257, 129, 511}, {131, 260, 36}, {1024, 768, 512}};

/// kShapes, then the shapes an instructor added for grading (--hidden-shapes; see harness/transcript.hpp).
std::vector<std::array<int, 3>> shapes() {
    std::vector<std::array<int, 3>> all(std::begin(kShapes), std::end(kShapes));
    for (const auto& s : course::hidden_shapes("05_tiled_matmul", 3, 2048)) all.push_back({int(s[0]), int(s[1]), int(s[2])});
    return all;
}

/// --small (the memcheck subset): a shape whose largest matrix has more than 2^20 elements is left
/// out, and so is one of more than 2^25 multiply-adds (1024 x 768 x 512: 4 x 10^8 of them, each
/// access checked by memcheck, for tiles that 128 x 128 x 128 fills as well). The awkward shapes,
/// where a wrong bound reads or writes past an edge, are all below both.
constexpr long long kSmallMacs = 1LL << 25;
bool skip_matmul(long long M, long long N, long long K) {
    return course::skip_shape(std::max({M * K, K * N, M * N})) || (course::small_run() && M * N * K > kSmallMacs);
}

/// C computed in float on the CPU, summing k in the given order (forward or backward).
std::vector<double> matmul_float_cpu(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K,
                                     bool backward) {
    std::vector<double> c(static_cast<std::size_t>(M) * N);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0.0f;
            for (int t = 0; t < K; ++t) {
                const int kk = backward ? K - 1 - t : t;
                s += A[static_cast<std::size_t>(i) * K + kk] * B[static_cast<std::size_t>(kk) * N + j];
            }
            c[static_cast<std::size_t>(i) * N + j] = s;
        }
    return c;
}

std::vector<float> as_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

/// matmul_cpu on the GPU, one thread per element of C: the sum over k of a_ik * b_kj in double, k in
/// order, and the sum of |a_ik * b_kj|. A float product is exact in double (an FMA of it rounds as
/// the addition does) and the additions come in matmul_cpu's order: the same bits.
__global__ void reference_on_gpu(const float* A, const float* B, int M, int N, int K, double* c, double* abs_sum) {
    const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M || j >= N) return;
    double v = 0, a = 0;
    for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(A[static_cast<std::size_t>(i) * K + k]) * B[static_cast<std::size_t>(k) * N + j];
        v += p;
        a += fabs(p);
    }
    c[static_cast<std::size_t>(i) * N + j] = v;
    abs_sum[static_cast<std::size_t>(i) * N + j] = a;
}

/// matmul_cpu's Reference of A times B, computed by reference_on_gpu; `abs_sum` gets each element's
/// sum of |a_ik * b_kj|.
Reference reference_from_gpu(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K,
                             std::vector<double>& abs_sum) {
    const course::DeviceBuffer<float> a(A), b(B);
    course::DeviceBuffer<double> c(static_cast<std::size_t>(M) * N), abs_on_gpu(c.size());
    reference_on_gpu<<<dim3(course::ceil_div(N, 128), M), 128>>>(a.data(), b.data(), M, N, K, c.data(), abs_on_gpu.data());
    CUDA_CHECK_LAUNCH();
    Reference r{c.to_host(), 0.0};
    abs_sum = abs_on_gpu.to_host();
    for (double x : abs_sum) r.max_abs_sum = std::max(r.max_abs_sum, x);
    return r;
}

/// The GPU test cases' problem of one shape: inputs drawn as TestProblem's make() draws them, and
/// the double reference of every element of C. Up to kSmallMacs multiply-adds (every shape the
/// memcheck subset runs) it is matmul_cpu's; above (1024 x 768 x 512, and hidden shapes up to
/// 2048^3) the same values from reference_on_gpu (matmul_cpu took about 0.2 s at 1024 x 768 x 512,
/// twice in each graded process, with the GPU held), checked on the CPU by reference_entry, to the
/// last bit, at the positions a sampled check looks at (corners, edges, 256 random points) and
/// where the largest sum of |a_ik * b_kj|, which scales the tolerance, lies.
TestProblem make_problem(int M, int N, int K, std::uint32_t seed) {
    std::vector<float> A = course::random_floats(static_cast<std::size_t>(M) * K, seed);
    std::vector<float> B = course::random_floats(static_cast<std::size_t>(K) * N, seed + 1);
    if (static_cast<long long>(M) * N * K <= kSmallMacs) return TestProblem(M, N, K, A, B);
    std::vector<double> abs_sum;
    Reference ref = reference_from_gpu(A, B, M, N, K, abs_sum);
    std::vector<std::pair<int, int>> where = sample_positions(M, N, 256, seed + 2);
    const auto largest = static_cast<int>(std::max_element(abs_sum.begin(), abs_sum.end()) - abs_sum.begin());
    where.push_back({largest / N, largest % N});
    int wrong = 0;
    for (const auto& [i, j] : where) {
        const RefEntry e = reference_entry(A, B, N, K, i, j);
        const std::size_t at = static_cast<std::size_t>(i) * N + j;
        wrong += ref.c[at] != e.value || abs_sum[at] != e.abs_sum ? 1 : 0;
    }
    INFO("the reference made on the GPU differs from the CPU's (reference_entry) at ", wrong, " of ", where.size(), " positions");
    REQUIRE(wrong == 0);
    return TestProblem(M, N, K, A, B, std::move(ref));
}

}  // namespace

// ---------------------------------------------------------------- host

TEST_CASE("matmul_cpu: a 2x3 times 3x2 product worked by hand, and the sum of |a*b|") {
    const std::vector<float> A = {1, 2, 3, 4, 5, 6};     // 2 x 3
    const std::vector<float> B = {7, -8, 9, 10, 11, 12};  // 3 x 2
    const Reference r = matmul_cpu(A, B, 2, 2, 3);
    REQUIRE(r.c.size() == 4);
    CHECK(r.c[0] == 1 * 7 + 2 * 9 + 3 * 11);
    CHECK(r.c[1] == 1 * -8 + 2 * 10 + 3 * 12);
    CHECK(r.c[2] == 4 * 7 + 5 * 9 + 6 * 11);
    CHECK(r.c[3] == 4 * -8 + 5 * 10 + 6 * 12);
    CHECK(r.max_abs_sum == 4 * 8 + 5 * 10 + 6 * 12);  // row 1, column 1 has the largest sum of |a*b|
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            const RefEntry e = reference_entry(A, B, 2, 3, i, j);
            CHECK(e.value == r.c[i * 2 + j]);
        }
}

TEST_CASE("the memcheck subset (--small) leaves out the shapes too big for memcheck, and keeps every awkward one") {
    const bool given = course::small_run();  // this run's own --small, put back below
    course::set_small_run(true);
    CHECK(skip_matmul(1024, 768, 512));   // 4 x 10^8 multiply-adds, though no matrix above 2^20 elements
    CHECK(skip_matmul(2048, 2048, 1));    // C of 2^22 elements, though only 2^22 multiply-adds
    CHECK_FALSE(skip_matmul(257, 129, 511));
    CHECK_FALSE(skip_matmul(131, 260, 511));
    CHECK_FALSE(skip_matmul(128, 128, 128));
    CHECK_FALSE(skip_matmul(1, 1, 1));
    course::set_small_run(false);
    for (const auto& s : kShapes) CHECK_FALSE(skip_matmul(s[0], s[1], s[2]));
    course::set_small_run(given);
}

TEST_CASE("matmul_tolerance: float sums in any order pass; one missing product fails") {
    const int M = 6, N = 5, K = 3000;
    auto A = course::random_floats(static_cast<std::size_t>(M) * K, course::seeded(7));
    auto B = course::random_floats(static_cast<std::size_t>(K) * N, course::seeded(8));
    for (int i = 0; i < M; ++i) A[static_cast<std::size_t>(i) * K] = 1.0f;  // a_i0 * b_0j = 1 exactly
    for (int j = 0; j < N; ++j) B[j] = 1.0f;
    const Reference ref = matmul_cpu(A, B, M, N, K);
    const course::Tolerance tol = matmul_tolerance(K, ref.max_abs_sum);
    CHECK(tol.abs_tol < 1.0);  // so a missing term of size 1 must be caught
    CHECK(tol.abs_tol > 0.0);
    for (bool backward : {false, true}) {
        const auto r = course::compare_close(as_float(matmul_float_cpu(A, B, M, N, K, backward)), ref.c, N, tol);
        INFO(r.summary());
        CHECK(r.ok());
    }
    std::vector<double> missing_first = ref.c;
    for (double& x : missing_first) x -= 1.0;  // as if k = 0 had been skipped
    CHECK(course::compare_close(as_float(ref.c), missing_first, N, tol).mismatches == static_cast<std::size_t>(M * N));
    // The bound grows with K and with the magnitude of the products, and TF32 adds its input rounding.
    CHECK(matmul_tolerance(2 * K, 1.0).abs_tol > matmul_tolerance(K, 1.0).abs_tol);
    CHECK(matmul_tolerance(K, 2.0).abs_tol == doctest::Approx(2 * matmul_tolerance(K, 1.0).abs_tol));
    CHECK(matmul_tolerance(K, 1.0, std::ldexp(1.0, -9)).abs_tol > matmul_tolerance(K, 1.0).abs_tol);
}

TEST_CASE("matmul_tolerance is at least Higham's gamma_K at every K the course runs") {
    // (K + 2) * 2^-24, a simpler bound, falls below gamma_K = K u / (1 - K u) from K = 5792 on
    // (exactly: where K (K + 2) u > 2, i.e. K (K + 2) > 2^25; tests/readme/test_error_bound.py
    // holds the number); the sweep runs K = 6144 and 8192, and --k allows up to 65536.
    const double u = std::ldexp(1.0, -24);
    for (int K : {1, 2, 65, 511, 4096, 5791, 5792, 6144, 8192, 65536}) {
        CAPTURE(K);
        CHECK(matmul_tolerance(K, 1.0).abs_tol >= K * u / (1.0 - K * u));
    }
    CHECK((8192 + 2) * u < 8192 * u / (1.0 - 8192 * u));  // why (K + 2) u cannot be the bound
    // The boundary itself (exact in double: the margin is about 1e-7 relative, far above rounding).
    CHECK((5791 + 2) * u >= 5791 * u / (1.0 - 5791 * u));
    CHECK((5792 + 2) * u < 5792 * u / (1.0 - 5792 * u));
}

TEST_CASE("matmul_tolerance: a kernel missing one term fails for certain once the term exceeds twice the bound") {
    // C computed in float with the product k = 0 left out, as a wrong kernel would. Its own rounding
    // can hide up to one bound of the missing term, so only a term above two bounds is certain to fail.
    const int M = 5, N = 4, K = 4096;
    auto A = course::random_floats(static_cast<std::size_t>(M) * K, course::seeded(11));
    auto B = course::random_floats(static_cast<std::size_t>(K) * N, course::seeded(12));
    for (int j = 0; j < N; ++j) B[j] = 1.0f;  // the term a_i0 * b_0j is a_i0
    // sum_k |a_ik b_kj| without k = 0, and the bound per unit of it.
    double rest = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int k = 1; k < K; ++k) s += std::fabs(static_cast<double>(A[static_cast<std::size_t>(i) * K + k]) * B[static_cast<std::size_t>(k) * N + j]);
            rest = std::max(rest, s);
        }
    const double g = matmul_tolerance(K, 1.0).abs_tol;
    // The term t must exceed 2 g (rest + t): t > 2 g rest / (1 - 2 g); take it 1% above that.
    const float t = static_cast<float>(1.01 * 2.0 * g * rest / (1.0 - 2.0 * g));
    for (int i = 0; i < M; ++i) A[static_cast<std::size_t>(i) * K] = t;
    const Reference ref = matmul_cpu(A, B, M, N, K);
    const course::Tolerance tol = matmul_tolerance(K, ref.max_abs_sum);
    REQUIRE(t > 2.0 * tol.abs_tol);
    std::vector<double> wrong(static_cast<std::size_t>(M) * N);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0.0f;
            for (int k = 1; k < K; ++k) s = std::fma(A[static_cast<std::size_t>(i) * K + k], B[static_cast<std::size_t>(k) * N + j], s);
            wrong[static_cast<std::size_t>(i) * N + j] = s;
        }
    CHECK(course::compare_close(as_float(wrong), ref.c, N, tol).mismatches == static_cast<std::size_t>(M * N));
    // The right kernel (k = 0 included, the same order) passes on the same data.
    std::vector<double> right = wrong;
    for (std::size_t e = 0; e < right.size(); ++e) {
        const int i = static_cast<int>(e) / N, j = static_cast<int>(e) % N;
        float s = 0.0f;
        for (int k = 0; k < K; ++k) s = std::fma(A[static_cast<std::size_t>(i) * K + k], B[static_cast<std::size_t>(k) * N + j], s);
        right[e] = s;
    }
    CHECK(course::compare_close(as_float(right), ref.c, N, tol).ok());
}

TEST_CASE("traffic model: the naive kernel reads 2*M*N*K floats, a T x T tile divides that by T") {
    const long long n = 4096;
    const double naive = traffic_model_bytes(n, n, n, 1, 1);
    CHECK(naive == 2.0 * n * n * n * 4);
    CHECK(traffic_model_bytes(n, n, n, 16, 16) == doctest::Approx(naive / 16));
    CHECK(traffic_model_bytes(n, n, n, 32, 32) == doctest::Approx(naive / 32));
    // A 128 x 64 tile: A is read N/64 times, B M/128 times.
    CHECK(traffic_model_bytes(n, n, n, 128, 64) == doctest::Approx(4.0 * (n * n * (n / 64) + n * n * (n / 128))));
    // Partial tiles still cost whole loads: 17 columns in 16-wide tiles read A twice.
    CHECK(traffic_model_bytes(1, 17, 1, 16, 16) == 4.0 * (1 * 1 * 2 + 1 * 17 * 1));
    // Every variant's tile reads less than the naive kernel (or the same, for the naive one).
    for (const Variant& v : kVariants) CHECK(traffic_model_bytes(n, n, n, v.tile_rows, v.tile_cols) <= naive);
}

TEST_CASE("MatrixView::block is a window onto the parent, clipped at its edge") {
    std::vector<float> storage(10 * 11);
    for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<float>(i);
    const MatrixView<float> parent{storage.data(), 10, 11, 11};
    CHECK(parent.at(3, 4) == 3 * 11 + 4);

    const MatrixView<float> inner = parent.block(1, 2, 4, 4);  // rows 4..7, cols 8..10 (clipped)
    CHECK(inner.stride == 11);
    CHECK(inner.rows == 4);
    CHECK(inner.cols == 3);
    CHECK(inner.at(0, 0) == parent.at(4, 8));
    CHECK(inner.at(3, 2) == parent.at(7, 10));
    CHECK(inner.contains(3, 2));
    CHECK_FALSE(inner.contains(0, 3));  // column 11 does not exist

    const MatrixView<float> corner = parent.block(2, 2, 4, 4);  // rows 8..9, cols 8..10
    CHECK(corner.rows == 2);
    CHECK(corner.cols == 3);
    CHECK_FALSE(corner.contains(2, 0));

    inner.at(1, 1) = -1.0f;  // a view, not a copy: the write lands in the parent
    CHECK(storage[5 * 11 + 9] == -1.0f);
}

TEST_CASE("sample_positions: corners first, everything in range, reproducible") {
    for (const auto& [M, N] : {std::pair{1, 1}, std::pair{4096, 4096}, std::pair{7, 3000}}) {
        const auto p = sample_positions(M, N, 256, 53);
        CHECK(p.size() == 4 + 64 + 256);
        CHECK(p[0] == std::pair{0, 0});
        CHECK(p[1] == std::pair{0, N - 1});
        CHECK(p[2] == std::pair{M - 1, 0});
        CHECK(p[3] == std::pair{M - 1, N - 1});
        for (const auto& [i, j] : p) {
            CHECK(i >= 0);
            CHECK(i < M);
            CHECK(j >= 0);
            CHECK(j < N);
        }
        CHECK(p == sample_positions(M, N, 256, 53));
    }
}

TEST_CASE("command line: bad input is a usage error") {
    const char* too_big[] = {"05_tiled_matmul", "--m", "65536", "--k", "65536"};
    CHECK_THROWS_AS(lesson(5, const_cast<char**>(too_big)), course::UsageError);
    const char* not_a_number[] = {"05_tiled_matmul", "--n", "12abc"};
    CHECK_THROWS_AS(lesson(3, const_cast<char**>(not_a_number)), course::UsageError);
    const char* unknown_kernel[] = {"05_tiled_matmul", "--kernel", "no_such_kernel"};
    CHECK_THROWS_AS(lesson(3, const_cast<char**>(unknown_kernel)), course::UsageError);
}

TEST_CASE("FP32 lanes per SM by compute capability, and the peak arithmetic") {
    CHECK(fp32_lanes_per_sm(9, 0) == 128);  // H100, H200
    CHECK(fp32_lanes_per_sm(8, 0) == 64);   // A100
    CHECK(fp32_lanes_per_sm(8, 6) == 128);
    CHECK(fp32_lanes_per_sm(8, 9) == 128);
    CHECK(fp32_lanes_per_sm(7, 5) == 64);
    CHECK(fp32_lanes_per_sm(7, 0) == 64);
    CHECK(fp32_lanes_per_sm(10, 0) == 128);
    CHECK(fp32_lanes_per_sm(12, 0) == 128);
    CHECK(fp32_lanes_per_sm(9, 9) == 0);  // unknown: no guess
    CHECK(fp32_lanes_per_sm(11, 0) == 0);
    CHECK(fp32_lanes_per_sm(3, 5) == 0);
    // 132 SMs x 128 lanes x 2 FLOP x 1980 MHz = 66.9 TFLOP/s (the H200 at its maximum clock).
    CHECK(fp32_peak_tflops(132, 128, 1980) == doctest::Approx(132.0 * 128 * 2 * 1.98e9 / 1e12));
    CHECK(fp32_peak_tflops(132, 128, 1980) == doctest::Approx(66.908).epsilon(1e-4));
    CHECK(fp32_peak_tflops(108, 64, 1410) == doctest::Approx(19.49).epsilon(1e-3));  // A100: 19.5 TFLOP/s
    CHECK(fp32_peak_tflops(132, 128, 990) == doctest::Approx(fp32_peak_tflops(132, 128, 1980) / 2));
    CHECK(fp32_peak_tflops(132, 0, 1980) == 0.0);
}

// ---------------------------------------------------------------- GPU

/// Every kernel of kVariants on one M x N x K problem, inputs drawn from `seed`, C poisoned first,
/// each compared with the CPU double reference: one CHECK per kernel.
static void check_every_kernel(int M, int N, int K, std::uint32_t seed) {
    TestProblem p = make_problem(M, N, K, course::seeded(seed));
    for (const Variant& v : kVariants) {
        INFO("kernel: ", std::string(v.name));
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        const auto r = p.compare(course::submitted(p.run([&](const float* a, const float* b, float* c) { v.launch(a, b, c, M, N, K); })));
        INFO(r.summary());
        CHECK(r.ok());
    }
}

GPU_TEST_CASE("every kernel matches the CPU double reference on awkward shapes, C poisoned first") {
    for (const auto& shape : shapes()) {
        const int M = shape[0], N = shape[1], K = shape[2];
        if (skip_matmul(M, N, K)) continue;  // --small: the memcheck subset
        check_every_kernel(M, N, K, static_cast<std::uint32_t>(M * 7 + N * 13 + K));
    }
}

GPU_TEST_CASE("a kernel that misses one term fails the check: B's row 0 left out on the GPU, that term above twice the bound") {
    const int M = 131, N = 260, K = 511;
    auto A = course::random_floats(static_cast<std::size_t>(M) * K, course::seeded(21));
    auto B = course::random_floats(static_cast<std::size_t>(K) * N, course::seeded(22));
    for (int i = 0; i < M; ++i) A[static_cast<std::size_t>(i) * K] = 1.0f;  // the term k = 0 is b_0j...
    for (int j = 0; j < N; ++j) B[j] = 0.5f;                                // ...= 0.5, far above 2 x the bound
    const Reference ref = matmul_cpu(A, B, M, N, K);
    const course::Tolerance tol = matmul_tolerance(K, ref.max_abs_sum);
    REQUIRE(0.5 > 2.0 * tol.abs_tol);
    std::vector<float> b_without_row0 = B;
    std::fill(b_without_row0.begin(), b_without_row0.begin() + N, 0.0f);
    course::DeviceBuffer<float> a(A), b(b_without_row0), c(static_cast<std::size_t>(M) * N);
    for (const Variant& v : kVariants) {
        INFO("kernel: ", std::string(v.name));
        c.poison();
        v.launch(a.data(), b.data(), c.data(), M, N, K);
        CUDA_CHECK(cudaDeviceSynchronize());
        CHECK(course::compare_close(course::submitted(c.to_host()), ref.c, N, tol).mismatches == static_cast<std::size_t>(M) * N);
    }
}

GPU_TEST_CASE("cuBLAS SGEMM (the ceiling) matches the same reference through the row-major swap") {
    const CublasHandle cublas;
    for (const auto& shape : shapes()) {
        const int M = shape[0], N = shape[1], K = shape[2];
        if (skip_matmul(M, N, K)) continue;  // --small: the memcheck subset
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        TestProblem p = make_problem(M, N, K, course::seeded(99));
        const auto r = p.compare(course::submitted(
            p.run([&](const float* a, const float* b, float* c) { launch_cublas(cublas, a, b, c, M, N, K); })));
        INFO(r.summary());
        CHECK(r.ok());
    }
}

OWN_GPU_TEST_CASE("the reference made on the GPU is matmul_cpu's, bit for bit, on awkward shapes") {
    for (const auto& shape : {std::array<int, 3>{1, 1, 1}, std::array<int, 3>{17, 33, 65}, std::array<int, 3>{257, 129, 511},
                              std::array<int, 3>{131, 260, 36}}) {
        const int M = shape[0], N = shape[1], K = shape[2];
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        const auto A = course::random_floats(static_cast<std::size_t>(M) * K, 5);
        const auto B = course::random_floats(static_cast<std::size_t>(K) * N, 6);
        std::vector<double> abs_sum;
        const Reference cpu = matmul_cpu(A, B, M, N, K), gpu = reference_from_gpu(A, B, M, N, K, abs_sum);
        CHECK(gpu.c == cpu.c);
        CHECK(gpu.max_abs_sum == cpu.max_abs_sum);
        const RefEntry corner = reference_entry(A, B, N, K, M - 1, N - 1);
        CHECK(abs_sum.back() == corner.abs_sum);
    }
}

OWN_GPU_TEST_CASE("NVML reads a plausible SM clock, or says why not") {
    const course::SmClock clock;
    if (clock.ok()) {
        const unsigned mhz = clock.read_mhz();
        CHECK(mhz >= 100);
        CHECK(mhz <= 5000);
        CHECK(clock.why_not().empty());
    } else {
        MESSAGE("no SM clock reading: " << clock.why_not());
        CHECK_FALSE(clock.why_not().empty());
    }
}

GPU_TEST_CASE("no kernel writes past the end of C") {
    const int M = 17, N = 33, K = 65, guard = 1024;
    const auto host_a = course::random_floats(static_cast<std::size_t>(M) * K, course::seeded(3));
    const auto host_b = course::random_floats(static_cast<std::size_t>(K) * N, course::seeded(4));
    course::DeviceBuffer<float> a(host_a), b(host_b), c(static_cast<std::size_t>(M) * N + guard);
    for (const Variant& v : kVariants) {
        INFO("kernel: ", std::string(v.name));
        c.poison();
        v.launch(a.data(), b.data(), c.data(), M, N, K);
        const std::vector<float> out = course::submitted(c.to_host());
        int untouched = 0;
        for (std::size_t i = static_cast<std::size_t>(M) * N; i < out.size(); ++i) untouched += std::isnan(out[i]) ? 1 : 0;
        CHECK(untouched == guard);
    }
}

// The register-tiled kernel picks its 16-byte path per matrix: along K for A (M x K), along N for
// B (K x N) and C (M x N), and only from a 16-byte aligned base. A condition tested on the wrong
// dimension or without the alignment is invisible on kShapes (where M % 4 == 0, so are N and K,
// or M % 4 != 0): these shapes and pointers make it issue a misaligned float4 access, which
// the GPU reports as an error.
GPU_TEST_CASE("the 16-byte paths follow the right dimension: M % 4 == 0 with N % 4 != 0, K % 4 != 0, and the converse") {
    // {M, N, K}: M and K multiples of 4, N not (B's and C's rows); M and N multiples of 4, K not
    // (A's rows); N a multiple of 4 with M and K not.
    for (const auto& shape : {std::array<int, 3>{132, 130, 36}, std::array<int, 3>{132, 260, 37},
                              std::array<int, 3>{130, 132, 37}}) {
        const int M = shape[0], N = shape[1], K = shape[2];
        check_every_kernel(M, N, K, static_cast<std::uint32_t>(M + 3 * N + 5 * K));
    }
}

GPU_TEST_CASE("every kernel is right when A, B or C does not start on a 16-byte boundary") {
    // Every dimension a multiple of 4, so only the pointers can turn the 16-byte paths off.
    const int M = 132, N = 136, K = 68;
    const auto host_a = course::random_floats(static_cast<std::size_t>(M) * K, course::seeded(31));
    const auto host_b = course::random_floats(static_cast<std::size_t>(K) * N, course::seeded(32));
    const Reference ref = matmul_cpu(host_a, host_b, M, N, K);
    const course::Tolerance tol = matmul_tolerance(K, ref.max_abs_sum);
    auto shifted = [](const std::vector<float>& host, int offset) {  // `offset` floats before the data
        std::vector<float> p(static_cast<std::size_t>(offset), 0.0f);
        p.insert(p.end(), host.begin(), host.end());
        return p;
    };
    // {offset of A, of B, of C} in floats: one misaligned at a time, then all three.
    for (const auto& offsets : {std::array<int, 3>{1, 0, 0}, std::array<int, 3>{0, 2, 0}, std::array<int, 3>{0, 0, 3},
                                std::array<int, 3>{1, 1, 1}}) {
        course::DeviceBuffer<float> a(shifted(host_a, offsets[0])), b(shifted(host_b, offsets[1]));
        course::DeviceBuffer<float> c(static_cast<std::size_t>(M) * N + offsets[2]);
        for (const Variant& v : kVariants) {
            INFO("kernel: ", std::string(v.name));
            INFO("offsets of A, B, C in floats: ", offsets[0], ", ", offsets[1], ", ", offsets[2]);
            c.poison();
            v.launch(a.data() + offsets[0], b.data() + offsets[1], c.data() + offsets[2], M, N, K);
            CUDA_CHECK(cudaDeviceSynchronize());
            const std::vector<float> all = course::submitted(c.to_host());
            const std::vector<float> out(all.begin() + offsets[2], all.end());
            const auto r = course::compare_close(out, ref.c, N, tol);
            INFO(r.summary());
            CHECK(r.ok());
        }
    }
}

// ---------------------------------------------------------------- speed (harness/speed.cuh)

namespace {

/// The course's own reference at the sampled positions, on the GPU: for each (i, j) of `where`,
/// the sum over k of a_ik * b_kj in double, k in order, and the sum of |a_ik * b_kj| that bounds the
/// error: reference_entry's loop, one thread per position. A float product is exact in double and
/// the additions come in the same order, so the two agree to the last bit.
__global__ void sampled_reference(const float* A, const float* B, int N, int K, const int2* where, int count, double* value,
                                  double* abs_sum) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    const int i = where[t].x, j = where[t].y;
    double v = 0, a = 0;
    for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(A[static_cast<std::size_t>(i) * K + k]) * B[static_cast<std::size_t>(k) * N + j];
        v += p;
        a += fabs(p);
    }
    value[t] = v;
    abs_sum[t] = a;
}

/// got[t] = C[i][j] for the t-th position (i, j) of `where`: C's values there, without copying C back.
__global__ void gather_positions(const float* C, int N, const int2* where, int count, float* got) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) got[t] = C[static_cast<std::size_t>(where[t].x) * N + where[t].y];
}

/// One problem of the speed cases: A and B drawn on the GPU (course::fill_speed_floats), C, and the
/// positions where C is checked (corners, edges, 256 random points: sample_positions) with their
/// reference values and the largest sum of |a_ik * b_kj| among them, computed on the GPU.
struct SpeedProblem {
    int m, n, k;
    course::DeviceBuffer<float> a, b, c;
    std::vector<std::pair<int, int>> where;
    course::DeviceBuffer<int2> where_on_gpu;
    std::vector<double> expected;
    double max_abs_sum = 0;

    SpeedProblem(int m_, int n_, int k_, std::uint32_t seed)
        : m(m_), n(n_), k(k_), a(static_cast<std::size_t>(m_) * k_), b(static_cast<std::size_t>(k_) * n_),
          c(static_cast<std::size_t>(m_) * n_) {
        draw_inputs(seed);
        expect(seed + 2);
    }
    /// A and B drawn from `seed` (the speed witness draws them from a new seed for each launch).
    void draw_inputs(std::uint32_t seed) {
        course::fill_speed_floats(a.data(), a.size(), seed);
        course::fill_speed_floats(b.data(), b.size(), seed + 1);
    }
    /// The positions where C is checked, drawn from `where_seed`, and the reference there, from A and B
    /// as they are now (the witness calls it after each timed launch, with A and B drawn again).
    void expect(std::uint32_t where_seed) {
        where = sample_positions(m, n, 256, where_seed);
        std::vector<int2> w;
        for (const auto& [i, j] : where) w.push_back(make_int2(i, j));
        where_on_gpu = course::DeviceBuffer<int2>(w);
        course::DeviceBuffer<double> value(w.size()), abs_sum(w.size());
        sampled_reference<<<course::ceil_div(count(), 64), 64>>>(a.data(), b.data(), n, k, where_on_gpu.data(), count(),
                                                                 value.data(), abs_sum.data());
        CUDA_CHECK_LAUNCH();
        expected = value.to_host();
        max_abs_sum = 0;
        for (double x : abs_sum.to_host()) max_abs_sum = std::max(max_abs_sum, x);
    }
    int count() const { return static_cast<int>(where.size()); }
    /// C at each position of `where`, in that order.
    std::vector<float> sampled_c() const {
        course::DeviceBuffer<float> got(where.size());
        gather_positions<<<course::ceil_div(count(), 64), 64>>>(c.data(), n, where_on_gpu.data(), count(), got.data());
        CUDA_CHECK_LAUNCH();
        return got.to_host();
    }
    course::Tolerance tolerance() const { return matmul_tolerance(k, max_abs_sum); }
};

}  // namespace

OWN_GPU_TEST_CASE("the speed cases' problem, made on the GPU: speed_floats inputs, reference_entry at each sampled position") {
    const int M = 70, N = 45, K = 300;
    SpeedProblem p(M, N, K, 1234);
    const std::vector<float> host_a = course::speed_floats(static_cast<std::size_t>(M) * K, 1234);
    const std::vector<float> host_b = course::speed_floats(static_cast<std::size_t>(K) * N, 1235);
    CHECK(p.a.to_host() == host_a);
    CHECK(p.b.to_host() == host_b);
    REQUIRE(p.expected.size() == p.where.size());
    double max_abs_sum = 0;
    for (std::size_t t = 0; t < p.where.size(); ++t) {
        const RefEntry e = reference_entry(host_a, host_b, N, K, p.where[t].first, p.where[t].second);
        CHECK(p.expected[t] == e.value);  // the same products, added in the same order
        max_abs_sum = std::max(max_abs_sum, e.abs_sum);
    }
    CHECK(p.max_abs_sum == max_abs_sum);
    // C's values are gathered from where they are: poisoned C gives NaN everywhere, cuBLAS's C passes.
    p.c.poison();
    std::vector<float> got = p.sampled_c();
    REQUIRE(got.size() == p.where.size());
    for (float x : got) CHECK(std::isnan(x));
    const CublasHandle cublas;
    launch_cublas(cublas, p.a.data(), p.b.data(), p.c.data(), M, N, K);
    got = p.sampled_c();
    const std::vector<float> c = p.c.to_host();
    for (std::size_t t = 0; t < p.where.size(); ++t)
        CHECK(got[t] == c[static_cast<std::size_t>(p.where[t].first) * N + p.where[t].second]);
    CHECK(course::compare_close(got, p.expected, 1, p.tolerance()).ok());
}

/// The kernel of `launch` on 3072 x 3072 x 3072 (58 GFLOP: over 1 ms for the register-tiled kernel)
/// beside cuBLAS SGEMM, then C (poisoned before the timed runs) at the lesson's sampled positions
/// (corners, edges, 256 random points) against the double reference there. Every element is
/// checked on the smaller shapes above.
static void check_matmul_speed(const char* exercise, Launcher launch) {
    const Variant& v = *std::find_if(std::begin(kVariants), std::end(kVariants), [&](const Variant& k) { return k.launch == launch; });
    SpeedProblem p(3072, 3072, 3072, course::seeded(0x5eed));
    const CublasHandle cublas;
    const course::Timing ceiling = course::time_speed([&] { launch_cublas(cublas, p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k); });
    p.c.poison();
    const course::Timing t = course::time_speed([&] { v.launch(p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k); });
    course::report_speed(exercise, v.name, t, "cuBLAS SGEMM", ceiling,
                         std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k));
    const course::VerifyResult r = course::compare_close(course::submitted(p.sampled_c()), p.expected, 1, p.tolerance());
    INFO("sampled positions, (index, 0): ", r.summary());
    CHECK(r.ok());
    course::witness_speed(exercise, v.name, t, "cuBLAS SGEMM", ceiling,
                          std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k),
                          [&](std::uint32_t seed) {  // each witness launch: A and B drawn anew, C poisoned
                              p.draw_inputs(seed);
                              p.c.poison();
                          },
                          [&] { v.launch(p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k); }, [&](std::uint32_t seed) {
                              // after the launch: A and B again, positions no launch could know, their reference
                              p.draw_inputs(seed);
                              p.expect(course::witness::fresh_seed());
                              return course::compare_close(p.sampled_c(), p.expected, 1, p.tolerance()).ok()
                                         ? "" : "your product is wrong at the speed case's size";
                          });
}

// The exercises' kernels as the lesson times them (the tiled one with its 32 x 32 tile).
GPU_TEST_CASE("speed: 05.tiled") { check_matmul_speed("05.tiled", launch_tiled<32>); }

GPU_TEST_CASE("speed: 05.register_tiled") { check_matmul_speed("05.register_tiled", launch_register_tiled); }
