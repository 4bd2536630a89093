// transcript.hpp — how grading keeps the verdict out of a submission's reach.
//
// A lesson's check is compiled twice when an instructor grades (grading/README.md):
//   * the RUNNER: check.cu built against the student's main.cu, run in a sandbox with
//     `--record FILE`. Every value of the student's code that the check judges goes through
//     course::submitted (each output buffer copied back from the GPU, and the host values a check
//     judges): it is appended to FILE, keyed by test case and position. Whatever it prints is
//     never read.
//   * the JUDGE: the same check.cu built against the course's own main.cu, run outside the sandbox
//     with `--judge FILE`. It runs every test case itself (inputs, CPU references, expected values
//     all from the course's code) and, where the runner recorded a value, uses the runner's value
//     instead of its own. Its verdict (--verdict FILE, verdict.hpp) is the grade. No code of the
//     submission is in it.
// A value the runner never recorded (it crashed, exited early, or took another path) fails that
// test case; a value of the wrong type or size is reported as an inconsistent transcript.
// In a normal run (a student's own check, the lessons) none of this happens: submitted(x) is x.
//
// A `speed: <id>` test case times the exercise's kernel and the lesson's ceiling in the check's own
// process and reports them with course::speed (below): the runner records them as a record of their
// own kind, the judge (which timed the course's kernel) puts both into the verdict's "evidence".
//
// Both roles also take `--seed N` (mixed into every random input by course::seeded, drawn by the
// grader at grading time) and `--hidden-shapes FILE` (an instructor's extra shapes, see hidden_shapes()).
// This is the checks' side of grading: the lessons and the helpers they include (common/) never
// include it; a check reaches it through harness/testing.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "verdict.hpp"  // verdict::SpeedSample, verdict::SpeedEvidence

namespace course {

/// Thrown in the judge where the submission's run left no value, or a value that cannot be one.
class SubmissionOutputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace transcript {

enum class Role { Plain, Record, Judge };
Role role();

/// A file a grading option names, opened for writing with fopen's `mode`: "/dev/fd/N" is a descriptor
/// the grader opened for this process and is written as it is (reopening it by name would ask for
/// the file's own permissions, which a cell's user lacks on a file the grader made). nullptr: errno.
std::FILE* open_output(const std::string& path, const char* mode);

/// Runner: values are appended to `path` (created or truncated). Throws std::runtime_error.
void start_recording(const std::string& path);
/// Judge: opens `path`; its records are read in order as the check asks for values (transcript.cpp
/// says how, and what bounds the reading). A missing or malformed file is not an error here: every
/// value looked up past the fault fails its test case ("the transcript is malformed at byte N").
void start_judging(const std::string& path);
/// Closes the file and goes back to a normal run (the transcript's own tests use it).
void stop();
/// Called by the check's doctest listener as each test case begins: values are keyed by test case
/// and position within it. The judge reads the transcript in the order the test cases begin.
void begin_test_case(const std::string& name);
/// Judge: how many values were missing and how many inconsistent (running totals, as counts()).
std::size_t missing_count();
std::size_t inconsistent_count();

/// Running totals over the whole run, in every role, for the verdict (a test case's own counts are
/// the difference between its end and its start). asked: values handed to the seam; submitted: of
/// those, the submission's own (a normal run, the runner) or found consistent in the transcript
/// (the judge); missing and inconsistent: the judge's failures.
struct Counts {
    std::size_t asked = 0, submitted = 0, missing = 0, inconsistent = 0;
};
Counts counts();

/// The lesson this check belongs to ("02_shared_transpose"; "" if not said): testing.hpp sets it
/// from COURSE_LESSON before main(). The verdict names it.
void set_lesson(const std::string& lesson);
const std::string& lesson();

/// Judge: the speed evidence of the test cases run so far (speed() below), for the verdict.
const std::vector<verdict::SpeedEvidence>& evidence();

/// The seam: `bytes` bytes at `data` are a value of type `type` that the submission produced.
/// Record: appended. Judge: overwritten with the recorded value (or throws SubmissionOutputError).
/// A normal run: counted (Counts), nothing else.
void exchange(const char* type, void* data, std::size_t bytes);

}  // namespace transcript

template <class T>
T submitted(T value);
template <class A, class B>
std::pair<A, B> submitted_compound(std::pair<A, B> value) {
    A first = submitted(std::move(value.first));  // in this order: first, then second
    B second = submitted(std::move(value.second));
    return {std::move(first), std::move(second)};
}
template <class T>
std::vector<T> submitted_compound(std::vector<T> value) {
    static_assert(std::is_trivially_copyable_v<T> && !std::is_same_v<T, bool>, "a vector of plain values");
    transcript::exchange(typeid(std::vector<T>).name(), value.data(), value.size() * sizeof(T));
    return value;
}

/// A value the submission computed, as the check should judge it: in a normal run and in the
/// runner, `value` itself; in the judge, the value the runner recorded at the same point.
/// For trivially copyable values, pairs of them and vectors of them.
template <class T>
T submitted(T value) {
    if constexpr (std::is_same_v<T, bool>) {
        unsigned char b = value ? 1 : 0;
        transcript::exchange("bool", &b, 1);
        if (b > 1) throw SubmissionOutputError("the submission's recorded bool is neither 0 nor 1");
        return b == 1;
    } else if constexpr (std::is_trivially_copyable_v<T>) {
        transcript::exchange(typeid(T).name(), &value, sizeof(T));
        return value;
    } else {
        return submitted_compound(std::move(value));
    }
}

/// What course::speed reports beside the two times (harness/speed.cuh fills it).
struct SpeedDetails {
    std::uint32_t runs = 0;  // timed runs of each, after the warm-up
    double spread = 0;       // (slowest - fastest) / median of the kernel's runs
    std::string shape;       // "8192x4096"
    std::string gpu;         // the GPU's name
};

/// A `speed: <id>` test case's one report: `kernel` took `ms` (the median of its timed runs), the
/// lesson's ceiling (`ceiling`: "copy", "CUB sum", "cuBLAS SGEMM") `ceiling_ms`, both timed in this
/// process. Every role prints one line ("speed 02.tiled: ... (94.7% of the ceiling) on GPU") and,
/// with --evidence FILE, appends it to FILE as a JSON line. Runner: also recorded in the transcript,
/// at this point of the test case. Judge: the runner's record at the same point, with this run's
/// (the course's kernel), becomes the verdict's evidence; no record there gives "submission": null,
/// a record that cannot be a measurement (another size or kind, a non-finite number) also counts
/// as an inconsistent value and fails the test case (SubmissionOutputError, after the evidence is kept).
void speed(const std::string& exercise, const std::string& kernel, double ms, const std::string& ceiling,
           double ceiling_ms, const SpeedDetails& details = {});
/// --evidence FILE: where speed() appends its JSON lines ("": nowhere). Refuses (UsageError) a file it
/// cannot append to.
void set_evidence_file(const std::string& path);

/// --small: the memcheck subset. GPU test cases run only their shapes of at most kSmallElements
/// elements; the `speed: ...` test cases and the course's own (OWN_GPU_TEST_CASE) are left out
/// (check_main.hpp). Runner and judge must
/// both be given it, or neither: the judge looks values up by their position in a test case.
constexpr long long kSmallElements = 1LL << 20;
bool small_run();
void set_small_run(bool small);
/// True where a shape of `elements` elements (the largest buffer of a test) is left out of this run:
/// `if (course::skip_shape(rows * cols)) continue;`
inline bool skip_shape(long long elements) { return small_run() && elements > kSmallElements; }

/// The seed the grader drew (--seed; 0 outside grading).
std::uint32_t input_seed();
void set_input_seed(std::uint32_t seed);

/// The seed for one of a check's random inputs: `seed` with the grader's seed mixed in, so that the
/// inputs of a graded run cannot be known before it starts. Outside grading it is `seed` itself.
/// A check draws every input with it: course::random_floats(n, course::seeded(7)).
inline std::uint32_t seeded(std::uint32_t seed) { return seed ^ (input_seed() * 0x9E3779B9u); }

/// An instructor's hidden shapes for `lesson` from the file given with --hidden-shapes, each with
/// `n` numbers. The file holds lines "LESSON n1 n2 ..." ('#' starts a comment), for example
///     02_shared_transpose 513 77
///     04_reduction 1000003
///     05_tiled_matmul 129 65 33
/// Every line must name a lesson of lessons/lessons.txt and have as many numbers as that file says,
/// each a whole number from 1 up, and a shape of `lesson` no number above `max`: else UsageError,
/// naming the file and line. Without --hidden-shapes: empty. A check that asks with an `n` other
/// than lessons.txt's for its lesson is a bug of the course: std::logic_error.
std::vector<std::vector<long long>> hidden_shapes(const std::string& lesson, std::size_t n, long long max);
void set_hidden_shapes_file(const std::string& path);

/// `shapes` followed by the hidden shapes of `lesson` for 2-number shapes (rows, cols).
template <std::size_t K>
std::vector<std::pair<int, int>> with_hidden_shapes(const std::pair<int, int> (&shapes)[K], const std::string& lesson) {
    std::vector<std::pair<int, int>> all(shapes, shapes + K);
    for (const auto& s : hidden_shapes(lesson, 2, 1 << 15)) all.emplace_back(int(s[0]), int(s[1]));
    return all;
}

}  // namespace course
