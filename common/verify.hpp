// verify.hpp — compare a kernel's output with a CPU reference, element by element.
//
// Host-only (no CUDA needed), so its own tests run in CI on a machine without a GPU.
// Every comparison reports how many elements differ and where the first one is, as
// (row, col) of a matrix with `cols` columns; a vector is a matrix with one row.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace course {

struct Mismatch {
    std::size_t index = 0;  // flat index into the buffer
    std::size_t row = 0;
    std::size_t col = 0;
    double got = 0;
    double expected = 0;
};

struct VerifyResult {
    std::size_t checked = 0;
    std::size_t mismatches = 0;
    std::optional<Mismatch> first;  // the lowest-index mismatch, if any
    double max_abs_error = 0;       // over the elements that are finite in both (float compares)
    bool ok() const { return checked > 0 && mismatches == 0; }
    /// "ok (1048576 elements)" or "FAIL: 12 of 1048576 differ, first at (3, 17): got nan, expected 0.25"
    std::string summary() const;
};

/// Exact comparison, for integers and for anything a kernel only moves (a transpose of floats).
/// Floats are compared bit for bit, so a NaN left by the poison never matches.
template <class T>
VerifyResult compare_exact(const std::vector<T>& got, const std::vector<T>& expected, std::size_t cols) {
    static_assert(std::is_trivially_copyable_v<T>, "compare_exact compares bytes");
    VerifyResult r;
    if (got.size() != expected.size() || cols == 0) {
        r.mismatches = got.size() > expected.size() ? got.size() : expected.size();
        return r;  // ok() is false: the shapes themselves disagree
    }
    r.checked = got.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::memcmp(&got[i], &expected[i], sizeof(T)) == 0) continue;
        if (r.mismatches++ == 0)
            r.first = Mismatch{i, i / cols, i % cols, static_cast<double>(got[i]),
                               static_cast<double>(expected[i])};
    }
    return r;
}

/// Tolerance for arithmetic results: |got - expected| <= abs_tol + rel_tol * |expected|.
/// `expected` is computed in double on the CPU; a NaN or infinity in `got` always fails.
struct Tolerance {
    double rel_tol;
    double abs_tol;
};
VerifyResult compare_close(const std::vector<float>& got, const std::vector<double>& expected,
                           std::size_t cols, Tolerance tol);

/// Uniform random floats in [lo, hi) from a fixed seed: reproducible, and never all zeros.
std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f);
/// Uniform random ints in [lo, hi] from a fixed seed.
std::vector<int> random_ints(std::size_t n, std::uint32_t seed, int lo, int hi);

/// The CPU reference of every transposing lesson: out (cols x rows) with out[c][r] = in[r][c].
inline std::vector<float> transpose_cpu(const std::vector<float>& in, int rows, int cols) {
    std::vector<float> out(in.size());
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            out[static_cast<std::size_t>(c) * rows + r] = in[static_cast<std::size_t>(r) * cols + c];
    return out;
}

}  // namespace course
