// verdict_fixture.cpp — a made-up check for the judge's JSON verdict (tests/harness/verdict_test.cmake):
// each test case asks values of "the submission" the way a lesson's check does, and the runner
// (--record) hands back what a faulty submission would: a wrong value, too few values, a value of
// the wrong size. The judge (--judge --verdict) must report each of them in its test case.
// Two speed reports (course::speed) go into the verdict's evidence, one of them never recorded; and
// a test case of many shapes shows what --small keeps.
#include "testing.hpp"

#include <stdexcept>
#include <vector>

using course::submitted;
namespace transcript = course::transcript;

namespace {
bool runner() { return transcript::role() == transcript::Role::Record; }
}  // namespace

TEST_CASE("judged: two values, both right") {
    CHECK(submitted(std::vector<int>{1, 2, 3}) == std::vector<int>{1, 2, 3});
    CHECK(submitted(2.5) == 2.5);
}

// A name and a message with quotes, a backslash, control bytes, a C1 control and bytes that are
// not UTF-8: the verdict must stay valid JSON.
TEST_CASE("judged: a \"wrong\" value \\ \x01\x1f\xc2\x85\xff") {
    const int got = submitted(runner() ? 41 : 42);  // the runner records 41; the judge expects 42
    INFO("the \"answer\"\nsays \x7f\xfe");
    CHECK(got == 42);
}

TEST_CASE("judged: the run stops before its second value") {
    CHECK(submitted(1) == 1);
    if (runner()) throw std::runtime_error("the submission crashed here");
    CHECK(submitted(2) == 2);  // never recorded: missing in the judge
}

TEST_CASE("judged: a value of the wrong size") {
    const std::vector<float> got = submitted(std::vector<float>(runner() ? 3 : 4, 1.0f));
    CHECK(got.size() == 4);
}

TEST_CASE("the course's own test, which asks nothing of the submission") { CHECK(1 + 1 == 2); }

TEST_CASE("a course exception with a long message") {
    throw std::runtime_error(std::string(1000, 'x'));
}

GPU_TEST_CASE("a GPU test case, which --host leaves out") { CHECK(submitted(7) == 7); }

// A speed report: the runner's numbers (not the judge's) are the verdict's "submission".
TEST_CASE("speed: 00.fixture") {
    course::SpeedDetails d;
    d.runs = 21;
    d.spread = runner() ? 0.25 : 0.125;
    d.shape = "64x32";
    d.gpu = "fixture GPU";
    course::speed("00.fixture", "fixture_kernel<33>", runner() ? 2.5 : 2.0, "copy", runner() ? 1.5 : 1.25, d);
    CHECK(submitted(3) == 3);
}

// The runner stops before its report: "submission": null, and the test case asked nothing.
TEST_CASE("speed: 00.stopped") {
    if (runner()) throw std::runtime_error("the submission crashed before its speed report");
    course::speed("00.stopped", "fixture_kernel<33>", 2.0, "copy", 1.0);
}

// --small keeps the shapes of at most 2^20 elements: three of these five.
TEST_CASE("judged: one value per shape") {
    for (const long long n : {1LL, 1000LL, 1LL << 20, (1LL << 20) + 1, 1LL << 22}) {
        if (course::skip_shape(n)) continue;
        CHECK(submitted(n) == n);
    }
}
