// matmul.cuh — what lesson 05 and its going-further companion both need around their kernels:
// cuBLAS SGEMM (the ceiling) called on row-major matrices, the CPU reference in double with the
// error bound a correct fp32 kernel always meets, one problem on the GPU checked against it (C
// poisoned first), and the FP32 peak (the companion's size-aware rule predicts times from it).
// The float4 loads and stores with edges they both use are in float4.cuh.
// Included by lessons/05_tiled_matmul/main.cu and lessons/05_tiled_matmul/going_further/main.cu.
// C (M x N) = A (M x K) * B (K x N), all row-major fp32.
#pragma once

#include "float4.cuh"
#include "lesson.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// ---------------------------------------------------------------- cuBLAS, the ceiling (in the same run)

inline void cublas_check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
                                 cublasGetStatusString(status) + ")");
}

/// Owns a cuBLAS handle with a chosen math mode. CUBLAS_DEFAULT_MATH keeps SGEMM in true fp32;
/// CUBLAS_TF32_TENSOR_OP_MATH lets it round inputs to TF32 (10-bit mantissa) for tensor cores.
struct CublasHandle {
    cublasHandle_t handle = nullptr;
    explicit CublasHandle(cublasMath_t math = CUBLAS_DEFAULT_MATH) {
        cublas_check(cublasCreate(&handle), "cublasCreate");
        const cublasStatus_t status = cublasSetMathMode(handle, math);
        if (status != CUBLAS_STATUS_SUCCESS) cublasDestroy(handle);
        cublas_check(status, "cublasSetMathMode");
    }
    ~CublasHandle() { cublasDestroy(handle); }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
};

/// cuBLAS is column-major. Read column-major, our row-major C is C^T (N x M), and C^T = B^T A^T,
/// where B^T and A^T are exactly our row-major B and A read column-major. So we ask for the
/// N x M product "B times A" with no transposes and no copies.
inline void launch_cublas(const CublasHandle& cublas, const float* A, const float* B, float* C, int M, int N, int K) {
    const float alpha = 1.0f, beta = 0.0f;
    cublas_check(cublasSgemm(cublas.handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N),
                 "cublasSgemm");
}

// ---------------------------------------------------------------- the FP32 peak

/// FP32 lanes per SM: the fp32 multiply-adds one SM completes per clock, from the throughput
/// table of the CUDA C++ Programming Guide ("Arithmetic Instructions"). 0: this program does
/// not know the architecture, and says so rather than guess.
constexpr int fp32_lanes_per_sm(int major, int minor) {
    switch (major) {
    case 5: return 128;                                   // Maxwell
    case 6: return minor == 0 ? 64 : 128;                 // Pascal: P100 64, the others 128
    case 7: return 64;                                    // Volta, Turing
    case 8: return minor == 0 ? 64 : 128;                 // Ampere: A100 64; 8.6, 8.7, Ada 8.9: 128
    case 9: return minor == 0 ? 128 : 0;                  // Hopper
    case 10: return minor == 0 ? 128 : 0;                 // Blackwell (B200)
    case 12: return minor == 0 ? 128 : 0;                 // Blackwell (RTX 50)
    default: return 0;
    }
}

/// Peak fp32 rate in TFLOP/s: every lane of every SM finishes one FMA (2 FLOP) per clock.
constexpr double fp32_peak_tflops(int sm_count, int lanes_per_sm, double clock_mhz) {
    return sm_count * static_cast<double>(lanes_per_sm) * 2.0 * clock_mhz * 1e6 / 1e12;
}

// ---------------------------------------------------------------- CPU side

/// One element of the reference, in double, and the sum of |a_ik * b_kj| that bounds its error.
struct RefEntry {
    double value, abs_sum;
};
inline RefEntry reference_entry(const std::vector<float>& A, const std::vector<float>& B, int N, int K, int i, int j) {
    RefEntry e{0.0, 0.0};
    for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(A[static_cast<std::size_t>(i) * K + k]) * B[static_cast<std::size_t>(k) * N + j];
        e.value += p;
        e.abs_sum += std::fabs(p);
    }
    return e;
}

/// The full product in double (loop order i, k, j so B and C are walked along rows).
struct Reference {
    std::vector<double> c;
    double max_abs_sum = 0;  // max over (i, j) of sum_k |a_ik * b_kj|
};
inline Reference matmul_cpu(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K) {
    Reference r{std::vector<double>(static_cast<std::size_t>(M) * N, 0.0), 0.0};
    std::vector<double> abs_sum(static_cast<std::size_t>(N));
    for (int i = 0; i < M; ++i) {
        double* c = &r.c[static_cast<std::size_t>(i) * N];
        std::fill(abs_sum.begin(), abs_sum.end(), 0.0);
        for (int k = 0; k < K; ++k) {
            const double a = A[static_cast<std::size_t>(i) * K + k];
            const float* b = &B[static_cast<std::size_t>(k) * N];
            for (int j = 0; j < N; ++j) {
                c[j] += a * b[j];
                abs_sum[j] += std::fabs(a * b[j]);
            }
        }
        for (double s : abs_sum) r.max_abs_sum = std::max(r.max_abs_sum, s);
    }
    return r;
}

/// Higham's gamma_n = n u / (1 - n u): how much n roundings of relative size u at most add up to
/// (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., Lemma 3.1); valid for n u < 1.
constexpr double higham_gamma(double n, double u) { return n * u / (1.0 - n * u); }

/// How far an fp32 result may lie from the double reference, per element. A dot product of length K
/// summed in fp32 in any order (FMA or not, blocked, or split into slices added up afterwards) is
/// within gamma_K * sum_k |a_k b_k| of the exact one, u = 2^-24 (Higham, section 3.1, eq. 3.5: each
/// product goes through at most K roundings on its way into the sum). The double reference errs by
/// at most gamma_K(2^-53) times the same sum; the second term, twice that, covers it and the check's
/// own double arithmetic. `input_rel_error` adds what rounding the inputs costs (0 for fp32; 2^-9
/// per product is safe when cuBLAS rounds them to TF32): the products then sum to at most
/// (1 + input_rel_error) times as much. Rigorous for K u < 1/2, K < 2^23; the course's largest K
/// is 65536 (--k's limit; the sweep runs 8192).
/// What it guarantees, with `max_abs_sum` the largest sum_k |a_ik b_kj| over the checked elements:
///   * a correct kernel never fails it;
///   * a kernel that drops a term p (or gets one wrong by p) errs by at least |p| - bound, since its
///     own rounding may hide up to one bound of the mistake: it fails for certain only when
///     |p| > 2 x bound. Between one and two bounds it may pass. Rounding errors partly cancel, so
///     in practice much smaller mistakes fail too, but nothing guarantees that.
inline course::Tolerance matmul_tolerance(int K, double max_abs_sum, double input_rel_error = 0.0) {
    const double u = std::ldexp(1.0, -24), u_double = std::ldexp(1.0, -53);
    const double rel = input_rel_error + higham_gamma(K, u) * (1.0 + input_rel_error) + 2.0 * higham_gamma(K, u_double);
    return {0.0, rel * max_abs_sum};
}

/// Output positions to check when the full CPU product is too slow: the four corners, points
/// along every edge (where partial tiles live), and `random_count` random points.
std::vector<std::pair<int, int>> sample_positions(int M, int N, int random_count, std::uint32_t seed) {
    std::vector<std::pair<int, int>> p = {{0, 0}, {0, N - 1}, {M - 1, 0}, {M - 1, N - 1}};
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> row(0, M - 1), col(0, N - 1);
    for (int e = 0; e < 16; ++e) {
        p.push_back({0, col(gen)});
        p.push_back({M - 1, col(gen)});
        p.push_back({row(gen), 0});
        p.push_back({row(gen), N - 1});
    }
    for (int s = 0; s < random_count; ++s) p.push_back({row(gen), col(gen)});
    return p;
}

// ---------------------------------------------------------------- one problem, checked

/// Up to this many multiply-adds the CPU computes the whole product (about a second); above it, samples.
constexpr double kFullCheckMacs = 1 << 28;

/// Random A and B of one M x N x K problem on the GPU, C, and the expected values of C at the
/// positions we check: every element for small problems, corners, edges and random points otherwise.
struct Problem {
    int m, n, k;
    std::vector<float> host_a, host_b;
    bool full = false;
    std::vector<std::pair<int, int>> where;
    std::vector<double> expected;
    double max_abs_sum = 0;
    course::DeviceBuffer<float> a, b, c;

    Problem(int m_, int n_, int k_, std::uint32_t seed)
        : m(m_), n(n_), k(k_),
          host_a(course::random_floats(static_cast<std::size_t>(m_) * k_, seed)),
          host_b(course::random_floats(static_cast<std::size_t>(k_) * n_, seed + 1)),
          a(host_a), b(host_b), c(static_cast<std::size_t>(m_) * n_) {
        full = static_cast<double>(m) * n * k <= kFullCheckMacs;
        if (full) {
            Reference ref = matmul_cpu(host_a, host_b, m, n, k);
            expected = std::move(ref.c);
            max_abs_sum = ref.max_abs_sum;
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) where.push_back({i, j});
        } else {
            where = sample_positions(m, n, 256, seed + 2);
            for (const auto& [i, j] : where) {
                const RefEntry e = reference_entry(host_a, host_b, n, k, i, j);
                expected.push_back(e.value);
                max_abs_sum = std::max(max_abs_sum, e.abs_sum);
            }
        }
    }
    double flops() const { return 2.0 * m * n * k; }
    course::Tolerance tolerance(double input_rel_error = 0.0) const {
        return matmul_tolerance(k, max_abs_sum, input_rel_error);
    }
    /// Poison C, run once, compare the chosen positions: "ok", or "FAIL" with the reason printed.
    template <class Launch>
    std::string verify(const std::string& name, Launch&& launch, course::Tolerance tol) {
        c.poison();
        launch();
        const std::vector<float> out = c.to_host();
        std::vector<float> got;
        got.reserve(where.size());
        for (const auto& [i, j] : where) got.push_back(out[static_cast<std::size_t>(i) * n + j]);
        const course::VerifyResult r = course::compare_close(got, expected, 1, tol);
        if (!r.ok()) {
            const auto [i, j] = where[r.first ? r.first->index : 0];
            std::printf("%s at %d x %d x %d: %s (first bad element is C[%d][%d])\n", name.c_str(), m, n, k,
                        r.summary().c_str(), i, j);
        }
        return r.ok() ? "ok" : "FAIL";
    }
};

/// For the checks: random A and B of one small shape on the GPU, and the full CPU double
/// reference of their product, to compare with every element of C.
struct TestProblem {
    int M, N, K;
    Reference ref;
    course::DeviceBuffer<float> a, b, c;
    TestProblem(int M_, int N_, int K_, const std::vector<float>& host_a, const std::vector<float>& host_b)
        : TestProblem(M_, N_, K_, host_a, host_b, matmul_cpu(host_a, host_b, M_, N_, K_)) {}
    /// With its reference made elsewhere (lesson 05's check makes the large ones' on the GPU, bit for
    /// bit matmul_cpu's).
    TestProblem(int M_, int N_, int K_, const std::vector<float>& host_a, const std::vector<float>& host_b, Reference ref_)
        : M(M_), N(N_), K(K_), ref(std::move(ref_)), a(host_a), b(host_b), c(static_cast<std::size_t>(M_) * N_) {}
    static TestProblem make(int M, int N, int K, std::uint32_t seed) {
        return TestProblem(M, N, K, course::random_floats(static_cast<std::size_t>(M) * K, seed),
                           course::random_floats(static_cast<std::size_t>(K) * N, seed + 1));
    }
    /// Poison C, run `launch`, and copy C back.
    template <class Launch>
    std::vector<float> run(Launch&& launch) {
        c.poison();
        launch(a.data(), b.data(), c.data());
        CUDA_CHECK(cudaDeviceSynchronize());
        return c.to_host();
    }
    /// Every element of `got` (C from run()) against the reference.
    course::VerifyResult compare(const std::vector<float>& got) const {
        return course::compare_close(got, ref.c, N, matmul_tolerance(K, ref.max_abs_sum));
    }
};
