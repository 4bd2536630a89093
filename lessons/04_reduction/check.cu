// Checks for lesson 04. This file #includes the lesson's own main.cu (CMake passes its path as
// COURSE_LESSON_SOURCE), so the kernels tested are the ones the lesson runs. (The two deliberately
// broken kernels are in going_further/, whose checks never run them either: these checks also run
// under compute-sanitizer's racecheck and synccheck, which must stay clean.)
#include COURSE_LESSON_SOURCE

#include "speed.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include "testing.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

// Sizes around a warp (31, 32, 33) and a block (1023, 1025: not multiples of 4 either, for the
// float4 tail), one where the tree needs three launches (2^20), and a large odd one (2^26 + 7).
const long long kSizes[] = {1, 31, 32, 33, 1023, 1025, 1 << 20, (1LL << 26) + 7};
constexpr long long kLargest = (1LL << 26) + 7;

/// kSizes, then the sizes an instructor added for grading (--hidden-shapes; see harness/transcript.hpp).
std::vector<long long> sizes() {
    std::vector<long long> all(std::begin(kSizes), std::end(kSizes));
    for (const auto& s : course::hidden_shapes("04_reduction", 1, kLargest)) all.push_back(s[0]);
    return all;
}

// One atomicAdd per element takes ~0.1 s at 2^26 on an H200 and far longer under
// compute-sanitizer, which instruments every atomic: it is checked up to 2^20 only.
constexpr long long kMaxNForAtomicPerElement = 1 << 20;

/// `host` copied to the GPU once (starting `offset` floats into the buffer, to test start addresses
/// that are not 16-byte aligned), with a result slot and a workspace: shared by all the variants.
class OnDevice {
public:
    explicit OnDevice(const std::vector<float>& host, int offset = 0)
        : n_(static_cast<long long>(host.size())), offset_(offset), in_(padded(host, offset)), out_(1),
          ws_(n_, course::query_device().sm_count) {}
    /// `in`, drawn on the GPU (the sizes above kMaxNDrawnOnCpu).
    explicit OnDevice(course::DeviceBuffer<float>&& in)
        : n_(static_cast<long long>(in.size())), offset_(0), in_(std::move(in)), out_(1), ws_(n_, course::query_device().sm_count) {}
    /// Poisons the result, runs the variant, returns what it wrote.
    float run(const Variant& v) {
        out_.poison();
        v.launch(in_.data() + offset_, n_, out_.data(), ws_);
        return course::submitted(out_.to_host())[0];
    }

private:
    static std::vector<float> padded(const std::vector<float>& host, int offset) {
        std::vector<float> p(static_cast<std::size_t>(offset), 0.0f);
        p.insert(p.end(), host.begin(), host.end());
        return p;
    }
    long long n_;
    int offset_;
    course::DeviceBuffer<float> in_, out_;
    Workspace ws_;
};

/// Small integers as floats: while every partial sum, in any order, stays below 2^24 in magnitude
/// (guaranteed when sum|x_i| < 2^24), float addition is exact and every variant must return
/// exactly the reference. This catches a single element dropped or counted twice.
std::vector<float> small_integers(long long n, std::uint32_t seed) {
    const std::vector<int> ints = course::random_ints(static_cast<std::size_t>(n), course::seeded(seed), -8, 8);
    return std::vector<float>(ints.begin(), ints.end());
}

// ---- 04.tree's idea, seen in the order of its additions. With sequential addressing (the lesson's
// tree) round by round, stride kBlock / 2 down to 1, element t takes in element t + stride. Every
// tree with that idea adds exactly these pairs (s[t] += s[t + stride], s[t] = s[t + stride] + s[t], a
// last warp finished with __shfl_down_sync, which pairs lane t with lane t + offset), and float
// addition is commutative, so every one gives the same bits. Interleaved addressing (t % (2 * stride)
// == 0, or the index 2 * stride * t) pairs t with t + 1, then t + 2, ...: a correct sum, but of other
// pairs, so on values of very different sizes its roundings, and its bits, are others.

/// The block's total as the tree with sequential addressing adds it, float by float (kBlock values).
float sequential_tree_sum(std::vector<float> s) {
    for (std::size_t stride = s.size() / 2; stride > 0; stride /= 2)
        for (std::size_t t = 0; t < stride; ++t) s[t] += s[t + stride];
    return s[0];
}

/// `blocks` x kBlock floats whose sum depends on the order of its additions, drawn from `seed` with
/// the grader's: in each block, element t < kBlock / 2 is large (from [-1, 1) times 2^0 to 2^12) and
/// element t + kBlock / 2 nearly its negative (minus it, plus one from [-1, 1) times 2^-12 to 2^0).
/// Sequential addressing adds each such pair first, exactly (Sterbenz), and then only small values;
/// a tree that adds other pairs first adds large values, rounding away bits the small ones hold.
std::vector<float> order_sensitive_floats(int blocks, std::uint32_t seed) {
    const std::size_t n = static_cast<std::size_t>(blocks) * kBlock;
    const std::vector<float> f = course::random_floats(n, course::seeded(seed));
    const std::vector<int> e = course::random_ints(n, course::seeded(seed + 1), 0, 12);
    std::vector<float> x(n);
    for (std::size_t b = 0; b < n; b += kBlock)
        for (std::size_t t = b; t < b + kBlock / 2; ++t) {
            x[t] = std::ldexp(f[t], e[t]);
            x[t + kBlock / 2] = -x[t] + std::ldexp(f[t + kBlock / 2], -e[t + kBlock / 2]);
        }
    return x;
}
constexpr int kIdeaBlocks = 64;

/// sums[0] += the sum of x, sums[1] += the sum of |x|, in double: each thread over a grid-stride
/// slice, then one atomicAdd each (the course's own reference for the large inputs, on the GPU).
__global__ void sum_in_double(const float* x, long long n, double* sums) {
    double s = 0, a = 0;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride) {
        s += x[i];
        a += fabs(x[i]);
    }
    atomicAdd(&sums[0], s);
    atomicAdd(&sums[1], a);
}

/// A large input: the speed cases' 2^26 floats of both signs (256 MiB, over 4x the L2 of an H100 or
/// H200), or a GPU test case's above kMaxNDrawnOnCpu, drawn on the GPU (course::fill_speed_floats),
/// and its double reference and sum of |x|. Each float is a multiple of 2^-23 at most 1 in size, so
/// every partial sum of up to 2^29 of them is a multiple of 2^-23 at most 2^29: exact in double's 53
/// bits, whatever the order. The GPU's sum is therefore exactly sum_cpu<double> (a GPU test case
/// compares them).
struct SpeedInput {
    course::DeviceBuffer<float> x;
    double reference = 0, sum_abs = 0;
    /// x drawn from `seed`, and its sums (the speed witness draws it again from a new seed for each launch).
    void draw(std::uint32_t seed) {
        course::fill_speed_floats(x.data(), x.size(), seed);
        course::DeviceBuffer<double> sums(2);
        CUDA_CHECK(cudaMemset(sums.data(), 0, sums.bytes()));
        const long long n = static_cast<long long>(x.size());
        sum_in_double<<<std::min(course::ceil_div(n, 256), 1024u), 256>>>(x.data(), n, sums.data());
        CUDA_CHECK_LAUNCH();
        const std::vector<double> host = sums.to_host();
        reference = host[0];
        sum_abs = host[1];
    }
};
SpeedInput speed_input(long long n, std::uint32_t seed) {
    SpeedInput in{course::DeviceBuffer<float>(static_cast<std::size_t>(n))};
    in.draw(seed);
    return in;
}

/// Above this size the GPU test cases draw their input on the GPU and sum it there, exactly (below).
/// Drawing 2^26 floats with random_floats and summing them in double took over a second of CPU
/// time in each graded process (runner and judge alike), with the GPU held all along.
constexpr long long kMaxNDrawnOnCpu = 1 << 20;

/// x[i] = 1 where speed_float(seed, i) < -0.6 (one element in five), else 0; and x[0] = 1 and the
/// last 7 (the float4 tail) = 1.
__global__ void draw_zeros_and_ones(float* x, long long n, std::uint64_t seed) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride)
        x[i] = i == 0 || i >= n - 7 || course::speed_float(seed, static_cast<std::uint64_t>(i)) < -0.6f ? 1.0f : 0.0f;
}

}  // namespace

// ---------------------------------------------------------------- host

TEST_CASE("CPU references: exact on integers, and the double reference is the more accurate one") {
    std::vector<float> x;
    for (int i = 1; i <= 100; ++i) x.push_back(i % 2 ? static_cast<float>(i) : -static_cast<float>(i));
    CHECK(sum_cpu<double>(x) == -50.0);
    CHECK(sum_cpu<float>(x) == -50.0f);
    CHECK(sum_abs_cpu(x) == 5050.0);
    CHECK(sum_cpu<double>({0.5f, 0.25f, -0.125f}) == 0.625);

    // 0.1f is not 0.1: the double loop sums the float values almost exactly, the float loop drifts.
    const std::vector<float> tenths(1000000, 0.1f);
    const double exact = 1000000.0 * static_cast<double>(0.1f);
    CHECK(std::fabs(sum_cpu<double>(tenths) - exact) < 1e-6);
    CHECK(std::fabs(sum_cpu<float>(tenths) - exact) > 100.0);
}

// A demonstration for the reader, on the lesson's data (2^26 floats: about a second of CPU time); it
// judges nothing of a submission, and a graded run leaves it out (harness/testing.hpp).
DEMONSTRATION_TEST_CASE("a float accumulator stalls at 2^24, a double one does not") {
    CHECK(16777216.0f + 1.0f == 16777216.0f);  // the gap between floats at 2^24 is 2; 1 rounds away
    const std::vector<float> ones(1 << 25, 1.0f);
    CHECK(sum_cpu<float>(ones) == 16777216.0f);  // half of the true 2^25
    CHECK(sum_cpu<double>(ones) == 33554432.0);
    // The lesson's data, values in [0, 1): the float loop stops near 2^24 while the true sum goes on.
    const std::vector<float> x = course::random_floats(1 << 26, course::seeded(404), 0.0f, 1.0f);
    const double reference = sum_cpu<double>(x);
    CHECK(reference > 3.3e7);
    CHECK(std::fabs(sum_cpu<float>(x) - reference) / reference > 0.4);
}

TEST_CASE("the error bound: zero for no additions, grows with depth, infinite once depth*u >= 1") {
    CHECK(sum_error_bound(0, 0, 123.0) == 0.0);
    CHECK(sum_error_bound(10, 1000, 1.0) < sum_error_bound(20, 1000, 1.0));
    CHECK(sum_error_bound(26, 1 << 26, 1.0) == doctest::Approx(26 * 0x1p-24).epsilon(0.01));
    CHECK(std::isinf(sum_error_bound(1LL << 24, 1LL << 24, 1.0)));
    CHECK(std::isinf(sum_error_bound(1LL << 26, 1LL << 26, 1.0)));
    CHECK(std::isfinite(sum_error_bound((1LL << 24) - 1, 1LL << 24, 1.0)));

    // The float loop (depth n) really stays inside its bound, on data with both signs; and the
    // bound is not absurdly loose: a tree-depth bound would be too tight for the loop.
    const std::vector<float> x = course::random_floats(100000, course::seeded(7));
    const double err = std::fabs(sum_cpu<float>(x) - sum_cpu<double>(x));
    CHECK(err <= sum_error_bound(100000, 100000, sum_abs_cpu(x)));
    CHECK(err > 0);
}

TEST_CASE("check_sum: passes within the bound, fails outside it and on the NaN poison") {
    CHECK(check_sum(100.0, 100.0, 100.0, 10, 100).pass);
    CHECK(check_sum(100.0 + 1e-5, 100.0, 100.0, 10, 100).pass);  // bound ~ 10 * 6e-8 * 100 = 6e-5
    CHECK_FALSE(check_sum(100.0 + 1e-3, 100.0, 100.0, 10, 100).pass);
    CHECK_FALSE(check_sum(std::nan(""), 100.0, 100.0, 10, 100).pass);
    CHECK_FALSE(check_sum(INFINITY, 100.0, 100.0, 1LL << 30, 100).pass);
    const SumCheck unbounded = check_sum(50.0, 100.0, 100.0, 1LL << 26, 1LL << 26);
    CHECK(unbounded.pass);
    CHECK(unbounded.text.rfind("unbounded", 0) == 0);
    CHECK(check_sum(100.0, 100.0, 100.0, 10, 100).text.find(',') == std::string::npos);  // CSV-safe
}

TEST_CASE("grid sizing: fill the GPU, but never more blocks than the data needs, never zero") {
    CHECK(grid_stride_blocks(1, 256, 4, 1056) == 1);
    CHECK(grid_stride_blocks(1024, 256, 4, 1056) == 1);
    CHECK(grid_stride_blocks(1025, 256, 4, 1056) == 2);
    CHECK(grid_stride_blocks(1LL << 26, 256, 4, 1056) == 1056);
    CHECK(grid_stride_blocks(kMaxN, 512, 8, 528) == 528);
    CHECK(grid_stride_blocks(1000, 256, 1, 0) == 1);  // a kernel that fits nowhere still gets a grid
}

TEST_CASE("the tree's order of additions: every sequential-addressing tree gives the same bits, an interleaved one others") {
    const std::vector<float> x = order_sensitive_floats(kIdeaBlocks, 404);
    int interleaved_differs = 0;
    for (int b = 0; b < kIdeaBlocks; ++b) {
        const std::vector<float> block(x.begin() + b * kBlock, x.begin() + (b + 1) * kBlock);
        const float want = sequential_tree_sum(block);
        CAPTURE(b);
        // The lesson's tree, written with the operands the other way round: the same pairs, the same bits.
        std::vector<float> s = block;
        for (int stride = kBlock / 2; stride > 0; stride /= 2)
            for (int t = 0; t < stride; ++t) s[t] = s[t + stride] + s[t];
        CHECK(std::memcmp(&s[0], &want, sizeof want) == 0);
        // Down to 64 values in shared memory, then warp 0: v = s[lane] + s[lane + 32], and five
        // __shfl_down_sync steps (a lane past the warp's end gets its own value back, as on the GPU).
        s = block;
        for (int stride = kBlock / 2; stride > kWarp; stride /= 2)
            for (int t = 0; t < stride; ++t) s[t] += s[t + stride];
        std::vector<float> v(kWarp);
        for (int lane = 0; lane < kWarp; ++lane) v[lane] = s[lane] + s[lane + kWarp];
        for (int offset = kWarp / 2; offset > 0; offset /= 2) {
            std::vector<float> down(kWarp);
            for (int lane = 0; lane < kWarp; ++lane) down[lane] = v[lane] + (lane + offset < kWarp ? v[lane + offset] : v[lane]);
            v = down;
        }
        CHECK(std::memcmp(&v[0], &want, sizeof want) == 0);
        // Interleaved addressing, as `t % (2 * stride) == 0` and as the index 2 * stride * t: the same
        // pairs as each other, not those of the lesson's tree.
        std::vector<float> modulo = block, index = block;
        for (int stride = 1; stride < kBlock; stride *= 2) {
            for (int t = 0; t < kBlock; ++t)
                if (t % (2 * stride) == 0) modulo[t] += modulo[t + stride];
            for (int t = 0; 2 * stride * t < kBlock; ++t) index[2 * stride * t] += index[2 * stride * t + stride];
        }
        CHECK(std::memcmp(&modulo[0], &index[0], sizeof(float)) == 0);
        interleaved_differs += std::memcmp(&modulo[0], &want, sizeof want) != 0;
        // Both are sums of the same floats: within the error bound of the exact (double) sum.
        const double exact = sum_cpu<double>(block), bound = sum_error_bound(kBlockDepth, kBlock, sum_abs_cpu(block));
        CHECK(std::fabs(want - exact) <= bound);
        CHECK(std::fabs(modulo[0] - exact) <= bound);
    }
    // A tree that adds other pairs first gives other bits in (nearly) every block.
    CHECK(interleaved_differs >= kIdeaBlocks - 2);
}

TEST_CASE("tree launches and their partial sums") {
    CHECK(tree_levels(1) == 1);
    CHECK(tree_levels(256) == 1);
    CHECK(tree_levels(257) == 2);
    CHECK(tree_levels(65536) == 2);
    CHECK(tree_levels(65537) == 3);
    CHECK(tree_levels(kMaxN) == 4);
    CHECK(tree_partials(256) == 0);
    CHECK(tree_partials(257) == 2);
    CHECK(tree_partials(65537) == 257 + 2);
    CHECK(tree_partials(1LL << 26) == 262144 + 1024 + 4);
}

TEST_CASE("depth of each variant: trees are shallow, loops and atomic chains are not") {
    for (const Variant& v : kVariants) {
        if (v.grid_stride) continue;  // their depth depends on the GPU's size
        INFO("kernel: ", std::string(v.name));
        CHECK(v.depth(1) >= 1);
        CHECK(v.depth(1 << 20) >= v.depth(1000));
    }
    CHECK(kVariants[0].depth(1 << 20) == 1 << 20);  // one atomic per element: a chain of n
    CHECK(kVariants[1].depth(1LL << 26) == 40);     // four tree launches of depth <= 10
    CHECK(grid_stride_depth(1LL << 26, 1056, 256, true) < 300);
    CHECK(grid_stride_depth(1LL << 26, 1056, 256, false) > 1056);
}

TEST_CASE("n = 0, a negative n and n >= 2^31 are refused before anything runs") {
    Workspace empty;
    for (const Variant& v : kVariants) {
        INFO("kernel: ", std::string(v.name));
        CHECK_THROWS_AS(v.launch(nullptr, 0, nullptr, empty), std::invalid_argument);
        CHECK_THROWS_AS(v.launch(nullptr, -5, nullptr, empty), std::invalid_argument);
        CHECK_THROWS_AS(v.launch(nullptr, kMaxN + 1, nullptr, empty), std::invalid_argument);
    }
}

TEST_CASE("the command line refuses n = 0, negative, non-numeric and too large n with a UsageError") {
    for (const char* bad : {"0", "-3", "abc", "12abc", "2^31", "99999999999"}) {
        INFO("bad value: ", std::string(bad));
        const char* args[] = {"04_reduction", "--n", bad};
        CHECK_THROWS_AS(lesson(3, const_cast<char**>(args)), course::UsageError);
    }
}

// ---------------------------------------------------------------- GPU

GPU_TEST_CASE("every variant is within its error bound of the double reference, values of both signs") {
    for (const long long n : sizes()) {
        if (course::skip_shape(n)) continue;  // --small: the memcheck subset
        const std::uint32_t seed = course::seeded(static_cast<std::uint32_t>(n));
        // Up to 2^20 drawn on the CPU (random_floats) and summed by sum_cpu<double>; above, drawn on
        // the GPU (speed_floats) and summed there in double, exactly (speed_input: the same value
        // as sum_cpu<double> of the same floats).
        double reference = 0, sum_abs = 0;
        OnDevice gpu = [&] {
            if (n > kMaxNDrawnOnCpu) {
                SpeedInput s = speed_input(n, seed);
                reference = s.reference;
                sum_abs = s.sum_abs;
                return OnDevice(std::move(s.x));
            }
            const std::vector<float> x = course::random_floats(static_cast<std::size_t>(n), seed);
            reference = sum_cpu<double>(x);
            sum_abs = sum_abs_cpu(x);
            return OnDevice(x);
        }();
        for (const Variant& v : kVariants) {
            if (v.launch == launch_atomic_per_element && n > kMaxNForAtomicPerElement) continue;
            INFO("kernel: ", std::string(v.name));
            CAPTURE(n);
            const SumCheck check = check_sum(gpu.run(v), reference, sum_abs, v.depth(n), n);
            INFO(check.text);
            CHECK(check.pass);
            CHECK(check.text.rfind("ok", 0) == 0);  // and the bound is a real one, not infinite
        }
    }
}

GPU_TEST_CASE("on small integers every variant is exact: no element dropped or counted twice") {
    for (const long long n : sizes()) {
        if (n > (1 << 20)) continue;  // sum|x_i| <= 8n must stay below 2^24; the large size is below
        const std::vector<float> x = small_integers(n, static_cast<std::uint32_t>(n) + 1);
        REQUIRE(sum_abs_cpu(x) < 16777216.0);
        const double reference = sum_cpu<double>(x);
        OnDevice gpu(x);
        for (const Variant& v : kVariants) {
            INFO("kernel: ", std::string(v.name));
            CAPTURE(n);
            CHECK(gpu.run(v) == reference);
        }
    }
}

GPU_TEST_CASE("at 2^26 + 7 the looping variants count every element exactly once") {
    if (course::skip_shape(kLargest)) return;  // --small: the memcheck subset
    // Mostly zeros, some ones (and the last 7, the float4 tail, all ones): sum|x_i| < 2^24, so the
    // sum is exact in any order. The one-element-per-thread kernels have no loop; their indexing is
    // the same at every size and is covered above. Drawn on the GPU, and counted there (exact).
    course::DeviceBuffer<float> x(static_cast<std::size_t>(kLargest));
    draw_zeros_and_ones<<<1024, 256>>>(x.data(), kLargest, course::seeded(99));
    CUDA_CHECK_LAUNCH();
    course::DeviceBuffer<double> sums(2);
    CUDA_CHECK(cudaMemset(sums.data(), 0, sums.bytes()));
    sum_in_double<<<1024, 256>>>(x.data(), kLargest, sums.data());
    CUDA_CHECK_LAUNCH();
    const double reference = sums.to_host()[0];
    REQUIRE(reference < 16777216.0);
    REQUIRE(reference > kLargest / 8.0);  // about one in five: the draw is a real mix of zeros and ones
    OnDevice gpu(std::move(x));
    for (const Variant& v : kVariants) {
        if (!v.grid_stride) continue;
        INFO("kernel: ", std::string(v.name));
        CHECK(gpu.run(v) == reference);
    }
}

GPU_TEST_CASE("every variant reads correctly from addresses that are not 16-byte aligned") {
    for (const long long n : {3LL, 1025LL, 4099LL}) {
        const std::vector<float> x = small_integers(n, static_cast<std::uint32_t>(n) * 3);
        const double reference = sum_cpu<double>(x);
        for (int offset = 1; offset < 4; ++offset) {
            OnDevice gpu(x, offset);
            for (const Variant& v : kVariants) {
                INFO("kernel: ", std::string(v.name));
                CAPTURE(n);
                CAPTURE(offset);
                CHECK(gpu.run(v) == reference);
            }
        }
    }
}

GPU_TEST_CASE("launching again gives the same sum: nothing carries over between launches") {
    // The atomic variants must zero the result themselves; the last-block counter must be reset.
    const long long n = 100003;
    const std::vector<float> x = small_integers(n, 5);
    const double reference = sum_cpu<double>(x);
    course::DeviceBuffer<float> in(x), out(1);
    Workspace ws(n, course::query_device().sm_count);
    for (const Variant& v : kVariants) {
        INFO("kernel: ", std::string(v.name));
        out.poison();
        for (int round = 0; round < 3; ++round) {
            CAPTURE(round);
            v.launch(in.data(), n, out.data(), ws);
            CHECK(course::submitted(out.to_host())[0] == reference);
        }
    }
}

// block_sum_tree's contract (04.tree's TODO) is that EVERY thread returns the block's total, not
// only thread 0, which is all the reductions read. This kernel keeps every thread's answer.
__global__ void every_thread_keeps_tree_total(const float* __restrict__ in, float* __restrict__ out) {
    const int i = blockIdx.x * kBlock + threadIdx.x;
    out[i] = block_sum_tree(in[i]);
}

GPU_TEST_CASE("block_sum_tree: every thread of the block returns the block's total, not only thread 0") {
    const int blocks = 3;
    const std::vector<float> x = small_integers(static_cast<long long>(blocks) * kBlock, 17);
    course::DeviceBuffer<float> in(x), out(x.size());
    out.poison();
    every_thread_keeps_tree_total<<<blocks, kBlock>>>(in.data(), out.data());
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> got = course::submitted(out.to_host());
    for (int b = 0; b < blocks; ++b) {
        const std::vector<float> block(x.begin() + b * kBlock, x.begin() + (b + 1) * kBlock);
        const double total = sum_cpu<double>(block);  // exact: small integers
        int wrong = 0, first_wrong = -1;
        for (int t = 0; t < kBlock; ++t)
            if (got[static_cast<std::size_t>(b) * kBlock + t] != total) {
                if (first_wrong < 0) first_wrong = t;
                ++wrong;
            }
        CAPTURE(b);
        CAPTURE(total);
        CAPTURE(first_wrong);
        CHECK(wrong == 0);
    }
}

// An idea case (grading/README.md, "The idea in the score"): not a check of correctness (an
// interleaved tree is a correct sum, which the test cases above pass), but of 04.tree's idea, which no
// timing on an H200 can see (the tree is bound by its barriers, not by its pairing). The grader
// counts it apart: failed, it takes 04.tree's speed credit away (the rubric's "idea_test_case").
GPU_TEST_CASE("idea: 04.tree") {
    const std::vector<float> x = order_sensitive_floats(kIdeaBlocks, 43);
    course::DeviceBuffer<float> in(x), out(x.size());
    out.poison();
    every_thread_keeps_tree_total<<<kIdeaBlocks, kBlock>>>(in.data(), out.data());
    CUDA_CHECK_LAUNCH();
    const std::vector<float> got = course::submitted(out.to_host());
    int other_bits = 0, first = -1;
    for (int b = 0; b < kIdeaBlocks; ++b) {
        const float want = sequential_tree_sum(std::vector<float>(x.begin() + b * kBlock, x.begin() + (b + 1) * kBlock));
        bool same = true;
        for (int t = 0; t < kBlock; ++t) same &= std::memcmp(&got[static_cast<std::size_t>(b) * kBlock + t], &want, sizeof want) == 0;
        if (!same && first < 0) first = b;
        other_bits += !same;
    }
    INFO("block_sum_tree's total differs, bit for bit, from the sum that sequential addressing makes (stride kBlock / 2 "
         "down to 1, element t adding element t + stride) in ", other_bits, " of ", kIdeaBlocks,
         " blocks of values of very different sizes (the first: block ", first, "): your tree adds other pairs");
    CHECK(other_bits == 0);
}

// ---------------------------------------------------------------- speed (harness/speed.cuh)

namespace {

/// The variant of kVariants that `launch` runs.
const Variant& variant(void (*launch)(const float*, long long, float*, Workspace&)) {
    for (const Variant& v : kVariants)
        if (v.launch == launch) return v;
    throw std::logic_error("no such variant");
}

/// `v` beside CUB's sum of the same `n` floats, then its result (the timed runs' last) against the bound.
void check_reduction_speed(const char* exercise, const Variant& v, long long n) {
    SpeedInput s = speed_input(n, course::seeded(0x5eed));
    const course::DeviceBuffer<float>& in = s.x;
    course::DeviceBuffer<float> out(1);
    const int sm_count = course::query_device().sm_count;
    Workspace ws(n, sm_count);
    std::size_t cub_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in.data(), out.data(), static_cast<int>(n)));
    course::DeviceBuffer<unsigned char> cub_scratch(cub_bytes);
    const course::Timing cub = course::time_speed([&] {
        CUDA_CHECK(cub::DeviceReduce::Sum(cub_scratch.data(), cub_bytes, in.data(), out.data(), static_cast<int>(n)));
    });
    out.poison();
    const course::Timing t = course::time_speed([&] { v.launch(in.data(), n, out.data(), ws); });
    course::report_speed(exercise, v.name, t, "CUB sum", cub, std::to_string(n));
    const SumCheck check = check_sum(course::submitted(out.to_host())[0], s.reference, s.sum_abs, v.depth(n), n);
    INFO(check.text);
    CHECK(check.pass);
    course::witness_speed(exercise, v.name, t, "CUB sum", cub, std::to_string(n),
                          [&](std::uint32_t seed) {  // each witness launch: a new input, a new workspace, the sum poisoned
                              course::fill_speed_floats(s.x.data(), s.x.size(), seed);
                              ws = Workspace(n, sm_count);
                              out.poison();
                          },
                          [&] { v.launch(in.data(), n, out.data(), ws); }, [&](std::uint32_t seed) {
                              const float got = out.to_host()[0];
                              s.draw(seed);  // the input and its sums again, after the launch: what it computed from
                              const SumCheck w = check_sum(got, s.reference, s.sum_abs, v.depth(n), n);
                              return w.pass ? std::string() : "your sum at the speed case's size: " + w.text;
                          });
}

}  // namespace

OWN_GPU_TEST_CASE("the speed cases' input and reference, made on the GPU, are speed_floats and its exact double sums") {
    const long long n = 1 << 16;  // (any n up to 2^26 is summed exactly; this one stays quick under memcheck)
    const SpeedInput s = speed_input(n, 4242);
    const std::vector<float> x = course::speed_floats(static_cast<std::size_t>(n), 4242);
    CHECK(s.x.to_host() == x);
    CHECK(s.reference == sum_cpu<double>(x));  // exact, both: see speed_input
    CHECK(s.sum_abs == sum_abs_cpu(x));
    CHECK(s.sum_abs > n / 4);  // about n / 2: the values are spread over [-1, 1)
}

// ---- the tree and the warp sum where they are the cost: values already on chip, summed many times
// per launch. In a reduction of 2^26 floats both are hidden behind the loads (an H200 ran the
// relaunched tree with interleaved addressing at 97% of the solution's speed), so a tree or a warp
// sum that misses the lesson's idea (divergent warps, shared memory and barriers instead of shuffles)
// would cost nothing there. Here each thread starts from a small integer, sums its block (or warp)
// kOnChipRounds times, each round's value made from the last total (so no round can be skipped or
// hoisted), and keeps the sum of the totals: every partial sum is an integer below 2^24, exact in
// float in any order, so the output is the same for every correct tree. The ceiling is CUB's block
// (warp) sum in the same loop; the expected output comes from the course's own plain sums (one
// thread adds the block's 256 values; a warp adds its 32 through 32 broadcasts).

/// Thread t's next value from the last total: an integer from -8 to 7 (exact in float; the same on
/// the CPU, where the test case below checks the reference).
__host__ __device__ inline float on_chip_next(float total, int t) {
    return static_cast<float>((static_cast<int>(total) + t) & 15) - 8.0f;
}

/// The start values: integers from -8 to 7, from speed_floats.
__global__ void speed_small_ints(float* out, int n, std::uint64_t seed) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = floorf(course::speed_float(seed, static_cast<std::uint64_t>(i)) * 8.0f);
}
void draw_small_ints(course::DeviceBuffer<float>& out, std::uint32_t seed) {
    const int n = static_cast<int>(out.size());
    speed_small_ints<<<course::ceil_div(n, kBlock), kBlock>>>(out.data(), n, seed);
    CUDA_CHECK_LAUNCH();
}

/// kRounds sums of the block (kWarps == false) or of each warp: `sum(v)` must give every thread of
/// its block (or the warp's lane 0, the contract of warp_sum) the total. Each thread writes the sum
/// of the totals it was given.
template <bool kWarps, class Sum>
__device__ void on_chip_rounds(const float* __restrict__ in, int rounds, float* __restrict__ out, Sum sum) {
    const int i = blockIdx.x * kBlock + threadIdx.x, t = kWarps ? threadIdx.x % kWarp : threadIdx.x;
    float v = in[i], acc = 0.0f;
    for (int r = 0; r < rounds; ++r) {
        float total = sum(v);
        if constexpr (kWarps) total = __shfl_sync(kFullMask, total, 0);  // lane 0's total to the warp
        else __syncthreads();  // every thread has read this round's total before the next round's stores
        acc += total;
        v = on_chip_next(total, t);
    }
    out[i] = acc;
}

struct TreeSum {
    __device__ float operator()(float v) const { return block_sum_tree(v); }
};
struct CubBlockSum {
    __device__ float operator()(float v) const {
        using Reduce = cub::BlockReduce<float, kBlock>;
        __shared__ typename Reduce::TempStorage temp;
        __shared__ float total;
        const float sum = Reduce(temp).Sum(v);
        if (threadIdx.x == 0) total = sum;
        __syncthreads();
        return total;
    }
};
struct WarpSum {
    __device__ float operator()(float v) const { return warp_sum(v); }
};
struct CubWarpSum {
    __device__ float operator()(float v) const {
        using Reduce = cub::WarpReduce<float>;
        __shared__ typename Reduce::TempStorage temp[kBlock / kWarp];
        return Reduce(temp[threadIdx.x / kWarp]).Sum(v);
    }
};
struct PlainWarpSum {  // the course's reference: each lane adds the warp's 32 values, broadcast in order
    __device__ float operator()(float v) const {
        float sum = 0.0f;
        for (int j = 0; j < kWarp; ++j) sum += __shfl_sync(kFullMask, v, j);
        return sum;
    }
};
struct PlainBlockSum {  // the course's reference: each warp's total as above, then every thread adds the 8 in order
    __device__ float operator()(float v) const {
        __shared__ float warp_totals[kBlock / kWarp];
        const float mine = PlainWarpSum{}(v);
        if (threadIdx.x % kWarp == 0) warp_totals[threadIdx.x / kWarp] = mine;
        __syncthreads();
        float sum = 0.0f;
        for (int w = 0; w < kBlock / kWarp; ++w) sum += warp_totals[w];
        return sum;  // (on_chip_rounds' barrier comes before the next round writes warp_totals)
    }
};

// The kernels the speed cases launch (the witness replaces speed_tree_on_chip and speed_warp_sum_on_chip
// with the submission's, which hold its block_sum_tree and warp_sum).
__global__ void __launch_bounds__(kBlock) speed_tree_on_chip(const float* in, int rounds, float* out) {
    on_chip_rounds<false>(in, rounds, out, TreeSum{});
}
__global__ void __launch_bounds__(kBlock) speed_tree_on_chip_cub(const float* in, int rounds, float* out) {
    on_chip_rounds<false>(in, rounds, out, CubBlockSum{});
}
__global__ void __launch_bounds__(kBlock) speed_tree_on_chip_reference(const float* in, int rounds, float* out) {
    on_chip_rounds<false>(in, rounds, out, PlainBlockSum{});
}
__global__ void __launch_bounds__(kBlock) speed_warp_sum_on_chip(const float* in, int rounds, float* out) {
    on_chip_rounds<true>(in, rounds, out, WarpSum{});
}
__global__ void __launch_bounds__(kBlock) speed_warp_sum_on_chip_cub(const float* in, int rounds, float* out) {
    on_chip_rounds<true>(in, rounds, out, CubWarpSum{});
}
__global__ void __launch_bounds__(kBlock) speed_warp_sum_on_chip_reference(const float* in, int rounds, float* out) {
    on_chip_rounds<true>(in, rounds, out, PlainWarpSum{});
}

namespace {

using OnChipKernel = void (*)(const float*, int, float*);
// Rounds per launch: a few tenths of a millisecond for the solution on an H200 (the tree's 1024 rounds
// keep every total's sum below 1024 x 2048 = 2^21, the warp's 4096 below 4096 x 256 = 2^20: exact).
constexpr int kTreeRounds = 1024, kWarpRounds = 4096;

/// The on-chip speed case of `exercise`: `kernel` beside `ceiling` (CUB's sum in the same loop), on
/// 8 blocks per SM (the most of 256 threads an SM holds), its output checked through one hash per
/// block against the course's `reference` on the same input (in the witness: on each run's seed,
/// drawn again after the launch into buffers of the reference's own).
void check_on_chip_speed(const char* exercise, const char* name, OnChipKernel kernel, OnChipKernel ceiling,
                         OnChipKernel reference, int rounds) {
    const int blocks = 8 * course::query_device().sm_count, n = blocks * kBlock;
    course::DeviceBuffer<float> in(static_cast<std::size_t>(n)), out(in.size());
    const auto expected_of = [&](std::uint32_t seed) {
        course::DeviceBuffer<float> x(in.size()), sums(in.size());
        draw_small_ints(x, seed);
        reference<<<blocks, kBlock>>>(x.data(), rounds, sums.data());
        CUDA_CHECK_LAUNCH();
        return course::device_row_hashes(sums, kBlock);
    };
    const std::uint32_t seed = course::seeded(0x5eed);
    draw_small_ints(in, seed);
    const std::vector<std::uint64_t> expected = expected_of(seed);
    const auto launch_with = [&](OnChipKernel k) {
        k<<<blocks, kBlock>>>(in.data(), rounds, out.data());
        CUDA_CHECK_LAUNCH();
    };
    const course::Timing cub = course::time_speed([&] { launch_with(ceiling); });
    out.poison();
    const course::Timing t = course::time_speed([&] { launch_with(kernel); });
    const std::string shape = std::to_string(blocks) + " blocks x " + std::to_string(rounds) + " rounds";
    course::report_speed(exercise, name, t, "CUB on chip", cub, shape);
    const course::VerifyResult r = course::compare_exact(course::submitted(course::device_row_hashes(out, kBlock)), expected, 1);
    INFO("one hash per block of the sums of the totals each thread got, (block, 0): ", r.summary());
    CHECK(r.ok());
    course::witness_speed(exercise, name, t, "CUB on chip", cub, shape,
                          [&](std::uint32_t s) { draw_small_ints(in, s); out.poison(); },
                          [&] { launch_with(kernel); }, [&](std::uint32_t s) {
                              const std::vector<std::uint64_t> got = course::device_row_hashes(out, kBlock);
                              return course::compare_exact(got, expected_of(s), 1).ok()
                                         ? "" : "your sums on chip at the speed case's size are wrong";
                          });
}

}  // namespace

OWN_GPU_TEST_CASE("the on-chip speed cases' references and CUB give the CPU's sums of the totals") {
    const int blocks = 3, n = blocks * kBlock, rounds = 5;
    course::DeviceBuffer<float> in(static_cast<std::size_t>(n)), out(in.size());
    draw_small_ints(in, 99);
    const std::vector<float> x = in.to_host();
    for (int group : {kBlock, kWarp}) {
        std::vector<float> want(x.size());
        for (int g = 0; g < n / group; ++g) {
            std::vector<float> v(x.begin() + g * group, x.begin() + (g + 1) * group);
            float acc = 0;
            for (int r = 0; r < rounds; ++r) {
                float total = 0;
                for (float e : v) total += e;
                acc += total;
                for (int t = 0; t < group; ++t) v[t] = on_chip_next(total, t);
            }
            std::fill(want.begin() + g * group, want.begin() + (g + 1) * group, acc);
        }
        CAPTURE(group);
        CHECK(*std::min_element(x.begin(), x.end()) >= -8.0f);
        CHECK(*std::max_element(x.begin(), x.end()) <= 7.0f);
        for (OnChipKernel k : group == kBlock ? std::vector<OnChipKernel>{speed_tree_on_chip_reference, speed_tree_on_chip_cub}
                                              : std::vector<OnChipKernel>{speed_warp_sum_on_chip_reference, speed_warp_sum_on_chip_cub}) {
            out.poison();
            k<<<blocks, kBlock>>>(in.data(), rounds, out.data());
            CUDA_CHECK_LAUNCH();
            CHECK(out.to_host() == want);
        }
    }
}

// Each exercise where it is the cost: the tree and the warp sum on chip (above), the last-block
// finish in its own kernel (256 threads) on the smallest input that fills its grid (below).
GPU_TEST_CASE("speed: 04.tree") {
    check_on_chip_speed("04.tree", "block_sum_tree on chip", speed_tree_on_chip, speed_tree_on_chip_cub,
                        speed_tree_on_chip_reference, kTreeRounds);
}

GPU_TEST_CASE("speed: 04.shuffle") {
    check_on_chip_speed("04.shuffle", "warp_sum on chip", speed_warp_sum_on_chip, speed_warp_sum_on_chip_cub,
                        speed_warp_sum_on_chip_reference, kWarpRounds);
}

// 04.last_block where its finish is the cost: the smallest n that gives the kernel its whole grid (as
// many blocks as the GPU holds, each thread one round of its four float4 loads: 1056 blocks and
// 4,325,376 floats, 16.5 MiB, on an H100 or H200), so there are as many partials to add as at any
// size, while the input, just drawn, sits in L2. At 2^26 floats the loads took 97% of the time, and
// one thread adding the 1056 partials one after another (about 15 us on an H200) cost 17% of the
// speed; here it is most of the time.
long long last_block_speed_n() {
    const long long per_block = static_cast<long long>(kBlock) * 4 * kLastBlockUnroll;
    return grid_of<reduce_vec4_last_block<kBlock>, 4 * kLastBlockUnroll>(kMaxN) * per_block;
}

GPU_TEST_CASE("speed: 04.last_block") {
    check_reduction_speed("04.last_block", variant(launch_vec4_last_block<kBlock>), last_block_speed_n());
}
