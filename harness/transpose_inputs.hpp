// transpose_inputs.hpp — the inputs and CPU references of the transposing lessons' GPU test cases
// (01, 02, 03 and 06), drawn once in a process. Those lessons test every kernel (lesson 03 every
// kernel at every tile size) on the same shapes drawn from the same seeds: drawing 2048 x 2048 floats
// with random_floats and transposing them with transpose_cpu took about 70 ms of CPU time each time,
// up to ten times per process, in the runner and in the judge alike, with the GPU held.
// What is kept is the course's own: random_floats and transpose_cpu (common/verify.hpp), never a
// value of the code under test.
#pragma once

#include "verify.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace course {

/// Floats kept in a process at most (128 MiB): an instructor's large hidden shape is drawn afresh
/// each time instead, as before.
constexpr std::size_t kKeptFloats = std::size_t{1} << 25;

namespace detail {
inline std::size_t& kept_floats() {
    static std::size_t n = 0;
    return n;
}
/// `make()` kept under `key` in `kept`, or made now (and kept while the floats kept stay within kKeptFloats).
template <class Key, class Make>
std::shared_ptr<const std::vector<float>> kept(std::map<Key, std::shared_ptr<const std::vector<float>>>& kept, const Key& key,
                                               Make make) {
    if (const auto it = kept.find(key); it != kept.end()) return it->second;
    auto made = std::make_shared<const std::vector<float>>(make());
    if (kept_floats() + made->size() <= kKeptFloats) {
        kept.emplace(key, made);
        kept_floats() += made->size();
    }
    return made;
}
}  // namespace detail

/// random_floats(n, seed), drawn once in a process.
inline std::shared_ptr<const std::vector<float>> drawn_floats(std::size_t n, std::uint32_t seed) {
    static std::map<std::tuple<std::size_t, std::uint32_t>, std::shared_ptr<const std::vector<float>>> kept;
    return detail::kept(kept, std::make_tuple(n, seed), [&] { return random_floats(n, seed); });
}

/// transpose_cpu(random_floats(rows * cols, seed), rows, cols), made once in a process.
inline std::shared_ptr<const std::vector<float>> transposed_floats(int rows, int cols, std::uint32_t seed) {
    static std::map<std::tuple<int, int, std::uint32_t>, std::shared_ptr<const std::vector<float>>> kept;
    return detail::kept(kept, std::make_tuple(rows, cols, seed), [&] {
        return transpose_cpu(*drawn_floats(static_cast<std::size_t>(rows) * cols, seed), rows, cols);
    });
}

}  // namespace course
