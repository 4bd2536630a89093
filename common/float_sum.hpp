// float_sum.hpp — what lesson 04 and its going-further companion both need to judge a float sum:
// the CPU loop (sum_cpu<double> is the reference), the bound that says how far a correct sum may be
// from it, the depth of each shape of sum that the bound needs, and the check that applies it.
// Host-only.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

/// The loop everyone writes first, with the accumulator type as the only choice. Sequential: without
/// -ffast-math the compiler may not reorder float additions. The reference is sum_cpu<double>.
template <class Accumulator>
Accumulator sum_cpu(const std::vector<float>& x) {
    Accumulator sum = 0;
    for (float v : x) sum += v;
    return sum;
}

/// sum |x_i|, which scales the bound below.
inline double sum_abs_cpu(const std::vector<float>& x) {
    double sum = 0;
    for (float v : x) sum += std::fabs(v);
    return sum;
}

// How accurate must a sum be? Rounding makes float sums inexact, so a check needs a tolerance, and
// it should be one that can be justified. If no input value passes through more than `depth` float
// additions on its way to the result, then |computed - exact| <= gamma(depth) * sum|x_i|,
// gamma(k) = k*u / (1 - k*u), with u = 2^-24 (Higham, "Accuracy and Stability of Numerical
// Algorithms", ch. 4). A loop has depth n; a tree has depth log2(n). The double reference adds its
// own gamma(n) with u = 2^-53. Once depth*u >= 1 the bound says nothing (infinity).
inline double sum_error_bound(long long depth, long long n, double sum_abs) {
    auto gamma = [](double k, double u) { return k * u < 1 ? k * u / (1 - k * u) : INFINITY; };
    return (gamma(static_cast<double>(depth), 0x1p-24) + gamma(static_cast<double>(n), 0x1p-53)) * sum_abs;
}

constexpr long long kBlockDepth = 10;  // a sum across one block of <= 1024 threads: 2^10
constexpr long long kVec4Depth = 4;    // (x + y) + (z + w), plus a head and a tail element

/// Depth of a grid-stride sum: the thread's loop, the block's sum, then the blocks combined
/// either by `grid` atomics in a row or by a last block (a short loop and one more block sum).
inline long long grid_stride_depth(long long n, long long grid, int threads, bool last_block) {
    auto div_up = [](long long a, long long b) { return (a + b - 1) / b; };
    const long long loop = div_up(n, grid * threads) + kVec4Depth;
    return loop + kBlockDepth + (last_block ? div_up(grid, threads) + kBlockDepth : grid);
}

struct SumCheck {
    bool pass;
    std::string text;  // for the table's check column (no commas: it also goes to the CSV)
};
/// "ok (rel err 3.1e-08)", "unbounded (rel err 5.0e-01)" (finite, but the bound is infinite),
/// or "FAIL (got ... expected ... bound ...)". A NaN, such as the poison, always fails.
inline SumCheck check_sum(double got, double expected, double sum_abs, long long depth, long long n) {
    const double err = std::fabs(got - expected), bound = sum_error_bound(depth, n, sum_abs);
    char text[160];
    if (!std::isfinite(got) || !(err <= bound)) {
        std::snprintf(text, sizeof text, "FAIL (got %.9g expected %.9g bound %.3g)", got, expected, bound);
        return {false, text};
    }
    std::snprintf(text, sizeof text, "%s (rel err %.1e)", std::isfinite(bound) ? "ok" : "unbounded",
                  expected != 0 ? err / std::fabs(expected) : err);
    return {true, text};
}
