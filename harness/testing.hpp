// testing.hpp — what a lesson's doctest check includes: doctest, and the two things a check does
// for grading (harness/transcript.hpp says how grading works):
//   * every value the code under test computed goes through course::submitted before the check
//     compares it: `course::compare_exact(course::submitted(out.to_host()), expected, cols)`.
//     A graded check then judges the submission's value, recorded where it ran;
//   * every random input is drawn with course::seeded(seed), which mixes in the grader's seed.
// Outside grading neither changes anything.
// Each exercise also has a test case `speed: <id>` (harness/speed.cuh) that times the exercise's
// kernel beside the lesson's ceiling and reports both with course::speed (transcript.hpp); under
// --small those are left out, and every GPU test case skips its shapes where course::skip_shape(n).
//
// Host test cases are plain TEST_CASEs. Test cases that need a GPU are declared with
// GPU_TEST_CASE: they belong to the doctest suite "gpu", which the course's test main
// (test_main.cpp) runs only when a GPU is present. Without one, CTest reports them SKIPPED.
// A GPU test case that hands nothing to course::submitted fails (it would judge nothing of a
// submission), unless it is declared OWN_GPU_TEST_CASE: a test of the course's own code. A host
// test case declared DEMONSTRATION_TEST_CASE runs in a learner's own run only.
#pragma once

#include <doctest/doctest.h>

#include "transcript.hpp"  // course::submitted, course::seeded, course::with_hidden_shapes, course::speed, course::skip_shape

/// The description that marks a test case as the course's own (check_main.hpp reads it).
#define COURSE_OWN_TEST_CASE "the course's own code"

/// The description that marks a host test case as a demonstration for the reader: it shows what the
/// course's own functions do on data far larger than any check needs, and judges nothing of a
/// submission. A graded run (runner and judge) leaves it out, as skipped (check_main.hpp).
#define COURSE_DEMONSTRATION "a demonstration for the reader"

#define GPU_TEST_CASE(name) TEST_CASE(name* doctest::test_suite("gpu"))
#define OWN_GPU_TEST_CASE(name) TEST_CASE(name* doctest::test_suite("gpu") * doctest::description(COURSE_OWN_TEST_CASE))
#define DEMONSTRATION_TEST_CASE(name) TEST_CASE(name* doctest::description(COURSE_DEMONSTRATION))

#ifdef COURSE_LESSON  // the lesson folder, defined by CMakeLists.txt for each check
namespace course::detail {
inline const bool lesson_named = (transcript::set_lesson(COURSE_LESSON), true);
}  // namespace course::detail
#endif
