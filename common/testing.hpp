// testing.hpp — what a lesson's doctest check includes.
//
// Host test cases are plain TEST_CASEs. Test cases that need a GPU are declared with
// GPU_TEST_CASE: they belong to the doctest suite "gpu", which the course's test main
// (test_main.cpp) runs only when a GPU is present. Without one, CTest reports them SKIPPED.
#pragma once

#include <doctest/doctest.h>

#include "transcript.hpp"  // course::submitted, course::with_hidden_shapes: what grading needs

#define GPU_TEST_CASE(name) TEST_CASE(name* doctest::test_suite("gpu"))

#ifdef COURSE_LESSON  // the lesson folder, defined by CMakeLists.txt for each check
namespace course::detail {
inline const bool lesson_named = (transcript::set_lesson(COURSE_LESSON), true);
}  // namespace course::detail
#endif
