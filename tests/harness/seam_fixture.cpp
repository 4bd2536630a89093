// seam_fixture.cpp — the rule that keeps every check on the seam (harness/testing.hpp): a device
// test case that runs and hands nothing to course::submitted fails the run, naming itself, unless
// it is declared the course's own. The device here is a stand-in that is always there ("--fake"),
// so the rule is tested on a machine without a GPU; test_main.cpp applies it to the suite "gpu".
#define DOCTEST_CONFIG_IMPLEMENT
#include "check_main.hpp"

#define FAKE_TEST_CASE(name) TEST_CASE(name* doctest::test_suite("fake"))

FAKE_TEST_CASE("hands its value to the seam") { CHECK(course::submitted(6 * 7) == 42); }

FAKE_TEST_CASE("forgets the seam") { CHECK(6 * 7 == 42); }

TEST_CASE("the course's own, which may ask nothing" * doctest::test_suite("fake") *
          doctest::description(COURSE_OWN_TEST_CASE)) {
    CHECK(6 * 7 == 42);
}

TEST_CASE("a host test case asks nothing, and that is fine") { CHECK(1 + 1 == 2); }

int main(int argc, char** argv) {
    return course::run_checks(argc, argv, {"--fake", "fake", "fake device", "COURSE_REQUIRE_FAKE", true},
                              [] { return std::string(); });
}
