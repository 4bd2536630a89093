// check.cpp — host-side checks of common/: verification, command-line parsing, results table,
// the reason given when no GPU can be used.
// These need no GPU and run in CI. This check is plain doctest with a main() of its own (at the
// end): common/ is what the lessons use, and it links nothing of the checks' harness (harness/),
// whose own tests are harness/check.cpp.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "cli.hpp"
#include "device_info.cuh"
#include "results.hpp"
#include "timer.cuh"
#include "verify.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

using namespace course;

TEST_CASE("compare_exact finds and locates a planted mismatch") {
    std::vector<int> expected = random_ints(6 * 7, 1, -1000, 1000);
    std::vector<int> got = expected;
    CHECK(compare_exact(got, expected, 7).ok());

    got[3 * 7 + 5] += 1;  // row 3, column 5
    got[4 * 7 + 0] += 1;
    const VerifyResult r = compare_exact(got, expected, 7);
    CHECK_FALSE(r.ok());
    CHECK(r.mismatches == 2);
    REQUIRE(r.first.has_value());
    CHECK(r.first->row == 3);
    CHECK(r.first->col == 5);
    CHECK(r.first->got == doctest::Approx(expected[26] + 1));
    CHECK(r.summary().find("first at (3, 5)") != std::string::npos);
}

TEST_CASE("compare_exact treats a poisoned float (NaN) as a mismatch, and wrong sizes as failure") {
    std::vector<float> expected = random_floats(10, 2);
    std::vector<float> got = expected;
    got[9] = std::numeric_limits<float>::quiet_NaN();
    const VerifyResult r = compare_exact(got, expected, 10);
    CHECK(r.mismatches == 1);
    CHECK(r.first->col == 9);
    CHECK_FALSE(compare_exact(std::vector<float>(9), expected, 10).ok());
    CHECK_FALSE(compare_exact(std::vector<float>{}, std::vector<float>{}, 1).ok());  // nothing checked is not a pass
}

TEST_CASE("compare_close applies absolute plus relative tolerance and rejects NaN") {
    const std::vector<double> expected = {1.0, 100.0, 0.0, -5.0};
    const Tolerance tol{1e-3, 1e-6};
    CHECK(compare_close({1.0005f, 100.05f, 0.0f, -5.004f}, expected, 4, tol).ok());
    const VerifyResult far = compare_close({1.0f, 100.2f, 0.0f, -5.0f}, expected, 2, tol);
    CHECK(far.mismatches == 1);
    CHECK(far.first->row == 0);
    CHECK(far.first->col == 1);
    const VerifyResult nan = compare_close({1.0f, 100.0f, std::nanf(""), -5.0f}, expected, 4, tol);
    CHECK(nan.mismatches == 1);
    CHECK(nan.first->index == 2);
    CHECK(compare_close({1.0f, 100.0f, INFINITY, -5.0f}, expected, 4, tol).mismatches == 1);
}

TEST_CASE("random data is reproducible, in range and not all zeros") {
    const auto a = random_floats(1000, 7, -2.0f, 3.0f);
    CHECK(a == random_floats(1000, 7, -2.0f, 3.0f));
    CHECK(a != random_floats(1000, 8, -2.0f, 3.0f));
    int zeros = 0;
    for (float x : a) {
        CHECK(x >= -2.0f);
        CHECK(x < 3.0f);
        zeros += x == 0.0f;
    }
    CHECK(zeros < 5);
}

TEST_CASE("median of odd and even sample counts") {
    CHECK(median({3, 1, 2}) == 2);
    CHECK(median({4, 1, 3, 2}) == 2.5);
    CHECK(median({5}) == 5);
    CHECK_THROWS(median({}));
}

TEST_CASE("parse_integer accepts good input and refuses bad input with a clear message") {
    CHECK(parse_integer("8192", "--rows", 1, 1 << 20) == 8192);
    CHECK(parse_integer("2^26", "--n", 0, 1LL << 40) == (1LL << 26));
    CHECK(parse_integer("-3", "--x", -5, 5) == -3);
    for (const char* bad : {"", "abc", "12abc", "1e3", "8k", "0x10", "3^4", "2^", " 5", "5 "})
        CHECK_THROWS_AS(parse_integer(bad, "--rows", 1, 1 << 20), UsageError);
    CHECK_THROWS_AS(parse_integer("0", "--rows", 1, 100), UsageError);
    CHECK_THROWS_AS(parse_integer("-1", "--rows", 1, 100), UsageError);
    CHECK_THROWS_AS(parse_integer("101", "--rows", 1, 100), UsageError);
    CHECK_THROWS_AS(parse_integer("99999999999999999999999", "--rows", 1, 100), UsageError);
    try {
        parse_integer("zero", "--rows", 1, 65536);
        FAIL("no exception");
    } catch (const UsageError& e) {
        CHECK(std::string(e.what()) == "--rows must be an integer from 1 to 65536 (got 'zero')");
    }
}

TEST_CASE("Cli parses options, flags and --help, and refuses what it does not know") {
    long long rows = 8192;
    int repeats = 20;
    bool racy = false;
    std::string csv;
    auto make = [&](Cli& cli) {
        cli.option("--rows", &rows, "rows", 1, 65536)
            .option("--repeats", &repeats, "repeats", 1, 1000)
            .option("--csv", &csv, "csv file")
            .flag("--racy", &racy, "run the racy kernel");
    };
    {
        Cli cli("prog", "summary");
        make(cli);
        const char* argv[] = {"prog", "--rows", "100", "--repeats=7", "--racy", "--csv", "out.csv"};
        CHECK(cli.parse(7, argv));
        CHECK(rows == 100);
        CHECK(repeats == 7);
        CHECK(racy);
        CHECK(csv == "out.csv");
        CHECK(cli.help().find("--rows N") != std::string::npos);
    }
    const std::vector<std::vector<const char*>> bad = {
        {"prog", "--rows"},          {"prog", "--rows", "-5"},   {"prog", "--rows", "1.5"},
        {"prog", "--colz", "3"},     {"prog", "--racy=1"},       {"prog", "--repeats", "0"},
        {"prog", "extra"},           {"prog", "--csv="},
    };
    for (const auto& argv : bad) {
        Cli cli("prog", "summary");
        make(cli);
        CHECK_THROWS_AS(cli.parse(static_cast<int>(argv.size()), argv.data()), UsageError);
    }
    Cli cli("prog", "summary");
    make(cli);
    const char* help[] = {"prog", "--help"};
    CHECK_FALSE(cli.parse(2, help));
}

TEST_CASE("Cli: an option with a list of values refuses every other value with one message") {
    long long tile = 0;
    auto make = [&](Cli& cli) { cli.option("--tile", &tile, "tile edge", {0, 8, 16, 256}); };
    for (const char* good : {"0", "8", "256", "2^4"}) {
        Cli cli("prog", "summary");
        make(cli);
        const char* argv[] = {"prog", "--tile", good};
        CHECK(cli.parse(3, argv));
    }
    CHECK(tile == 16);
    for (const char* bad : {"7", "512", "-8", "abc", "", "99999999999999999999"}) {
        CAPTURE(std::string(bad));
        Cli cli("prog", "summary");
        make(cli);
        const char* argv[] = {"prog", "--tile", bad};
        std::string message;
        try {
            cli.parse(3, argv);
        } catch (const UsageError& e) {
            message = e.what();
        }
        CHECK(message == "--tile must be one of 0, 8, 16, 256 (got '" + std::string(bad) + "')");
    }
    Cli cli("prog", "summary");
    make(cli);
    CHECK(cli.help().find("tile edge (default 16, one of 0, 8, 16, 256)") != std::string::npos);
}

TEST_CASE("Cli: the help names the program as it was started (argv[0] without its folder)") {
    Cli cli("02_shared_transpose", "summary");
    const char* argv[] = {"/home/me/course/build/exercise_02_shared_transpose", "--help"};
    CHECK_FALSE(cli.parse(2, argv));
    CHECK(cli.help().rfind("usage: exercise_02_shared_transpose [options]\n", 0) == 0);
    Cli unnamed("03_dynamic_shared", "summary");
    const char* none[] = {""};
    CHECK(unnamed.parse(1, none));
    CHECK(unnamed.help().rfind("usage: 03_dynamic_shared [options]\n", 0) == 0);
}

TEST_CASE("ResultsTable computes percent of the ceiling and writes CSV") {
    ResultsTable t("8 x 8 fp32", "GB/s");
    t.add("cudaMemcpy", 1.0, 4000, "-", true);
    t.add("naive", 2.0, 1000, "ok (rel err 1e-7, bound 2e-6)");
    CHECK(t.ceiling() == 4000);
    CHECK(t.percent_of_ceiling(t.rows()[1]) == doctest::Approx(25.0));

    const std::string path = "common_check_results.csv";
    std::remove(path.c_str());
    t.append_csv(path, "01", "GPU, test");
    t.append_csv(path, "01", "GPU, test");
    std::ifstream f(path);
    std::string line;
    int lines = 0;
    std::getline(f, line);
    CHECK(line == "lesson,gpu,problem,kernel,ms,rate,unit,percent_of_ceiling,check");
    while (std::getline(f, line)) {
        ++lines;
        if (line.find("naive") != std::string::npos)  // a field with a comma is quoted, so 9 columns stay 9
            CHECK(line.find(",\"ok (rel err 1e-7, bound 2e-6)\"") != std::string::npos);
    }
    CHECK(lines == 4);  // header written once, two rows per append
    std::remove(path.c_str());

    ResultsTable none("x", "GB/s");
    none.add("a", 1, 1, "ok");
    CHECK(none.percent_of_ceiling(none.rows()[0]) < 0);
}

TEST_CASE("gb_per_s and tflop_per_s use powers of ten") {
    CHECK(gb_per_s(2e9, 1000.0) == doctest::Approx(2.0));
    CHECK(tflop_per_s(1e12, 1000.0) == doctest::Approx(1.0));
}

TEST_CASE("Cli knows which options were given, and refuses conflicting or idle ones") {
    long long a = 1, b = 2;
    bool flag = false;
    auto parse = [&](std::vector<const char*> argv) {
        Cli cli("prog", "summary");
        cli.option("--a", &a, "a", 0, 10).option("--b", &b, "b", 0, 10).flag("--flag", &flag, "f");
        cli.parse(static_cast<int>(argv.size()), argv.data());
        return cli;
    };
    const Cli both = parse({"prog", "--a", "1", "--b=2"});
    CHECK(both.given("--a"));
    CHECK(both.given("--b"));
    CHECK_FALSE(both.given("--flag"));
    CHECK_THROWS_AS(both.refuse_together("--a", "--b"), UsageError);
    CHECK_NOTHROW(both.refuse_without("--a", "--b"));
    const Cli only_a = parse({"prog", "--a", "1"});  // the default value of --b does not count as given
    CHECK_NOTHROW(only_a.refuse_together("--a", "--b"));
    CHECK_THROWS_AS(only_a.refuse_without("--a", "--b"), UsageError);
    try {
        only_a.refuse_without("--a", "--b");
    } catch (const UsageError& e) {
        CHECK(std::string(e.what()) == "--a has no effect without --b (see --help)");
    }
    try {
        both.refuse_together("--a", "--b");
    } catch (const UsageError& e) {
        CHECK(std::string(e.what()) == "--a and --b cannot be combined (see --help)");
    }
}

TEST_CASE("--csv into a folder that does not exist is refused while parsing, before any work") {
    TimingOptions timing;
    auto parse = [&](const char* path) {
        Cli cli("prog", "summary");
        add_timing_options(cli, timing);
        const char* argv[] = {"prog", "--csv", path};
        return cli.parse(3, argv);
    };
    CHECK_THROWS_AS(parse("no_such_folder_for_common_check/results.csv"), UsageError);
    try {
        parse("no_such_folder_for_common_check/results.csv");
    } catch (const UsageError& e) {
        CHECK(std::string(e.what()).find("the folder 'no_such_folder_for_common_check' does not exist") != std::string::npos);
    }
    CHECK_THROWS_AS(parse("."), UsageError);  // a folder, not a file

    // A writable new file passes and is not left behind; an existing one passes and is unchanged.
    const std::string path = "common_check_writable.csv";
    std::remove(path.c_str());
    CHECK(parse(path.c_str()));
    CHECK_FALSE(std::ifstream(path).good());
    std::ofstream(path) << "kept\n";
    CHECK(parse(path.c_str()));
    std::string line;
    std::getline(std::ifstream(path) >> std::ws, line);
    CHECK(line == "kept");
    std::remove(path.c_str());

    // An empty file (say, made by `touch`) still gets the header line.
    std::ofstream(path).close();
    ResultsTable t("x", "GB/s");
    t.add("a", 1, 1, "ok", true);
    t.append_csv(path, "01", "gpu");
    std::ifstream f(path);
    std::getline(f, line);
    CHECK(line == "lesson,gpu,problem,kernel,ms,rate,unit,percent_of_ceiling,check");
    f.close();
    std::remove(path.c_str());
}

TEST_CASE("without a driver the GPU-unavailable reason says so, not 'driver version is insufficient'") {
    const std::string none = no_gpu_reason(cudaErrorInsufficientDriver, 0, 13000);
    CHECK(none.find("no NVIDIA driver found") == 0);
    CHECK(none.find("insufficient") == std::string::npos);
    const std::string old = no_gpu_reason(cudaErrorInsufficientDriver, 12020, 13000);
    CHECK(old.find("supports CUDA 12.2") != std::string::npos);
    CHECK(old.find("CUDA 13.0 this program was built with") != std::string::npos);
    CHECK(old.find("no NVIDIA driver") == std::string::npos);
    const std::string other = no_gpu_reason(cudaErrorNoDevice, 13000, 13000);
    CHECK(other.find("cudaErrorNoDevice") != std::string::npos);
    CHECK(other.find("no NVIDIA driver") == std::string::npos);

    // And on this machine: the reason used by the lessons and the checks agrees with the driver.
    int driver = -1;
    REQUIRE(cudaDriverGetVersion(&driver) == cudaSuccess);
    const std::string here = gpu_unavailable_reason();
    if (driver == 0) CHECK(here.find("no NVIDIA driver found") == 0);
    else CHECK(here.find("no NVIDIA driver found") == std::string::npos);
}

TEST_CASE("COURSE_EMULATE_T4: set to anything but empty or 0 turns the T4's limits on") {
    const char* before = std::getenv("COURSE_EMULATE_T4");
    const std::string saved = before ? before : "";
    unsetenv("COURSE_EMULATE_T4");
    CHECK_FALSE(emulating_t4());
    setenv("COURSE_EMULATE_T4", "0", 1);
    CHECK_FALSE(emulating_t4());
    setenv("COURSE_EMULATE_T4", "", 1);
    CHECK_FALSE(emulating_t4());
    setenv("COURSE_EMULATE_T4", "1", 1);
    CHECK(emulating_t4());
    if (before) setenv("COURSE_EMULATE_T4", saved.c_str(), 1);
    else unsetenv("COURSE_EMULATE_T4");
}

TEST_CASE("COURSE_EMULATE_T4 caps what query_device and require_device_memory report at a T4's limits" *
          doctest::test_suite("gpu")) {
    const char* before = std::getenv("COURSE_EMULATE_T4");
    const std::string saved = before ? before : "";
    setenv("COURSE_EMULATE_T4", "1", 1);
    const DeviceReport t4 = query_device();
    CHECK(t4.smem_per_block_optin <= kT4SmemPerBlockOptin);
    CHECK(t4.smem_per_sm <= kT4SmemPerSm);
    CHECK(t4.global_mem_bytes <= kT4GlobalMem);
    CHECK(t4.short_description().find("with a T4's limits") != std::string::npos);
    CHECK_THROWS_AS(require_device_memory(16.0 * (1ull << 30), "16 GiB"), DoesNotFitError);  // a T4 has 15
    unsetenv("COURSE_EMULATE_T4");
    const DeviceReport real = query_device();
    CHECK(real.smem_per_block_optin >= t4.smem_per_block_optin);
    CHECK(real.short_description().find("with a T4's limits") == std::string::npos);
    if (before) setenv("COURSE_EMULATE_T4", saved.c_str(), 1);
}

// ---------------------------------------------------------------- main()
// The selection every check makes (harness/check_main.hpp), without anything of grading:
//   common_check --host   the host test cases
//   common_check --gpu    the test cases of the suite "gpu"; with no usable GPU print why and exit 77
//                         (CTest: skipped), or fail (exit 1) when COURSE_REQUIRE_GPU is set and not 0:
//                         the grader runs it so before it grades anything (grading/cli.py)
//   common_check          everything; the GPU test cases are left out, with a notice, if there is no GPU
// Any other argument goes to doctest.
int main(int argc, char** argv) {
    enum class Mode { All, Host, Gpu } mode = Mode::All;
    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        if (i > 0 && std::strcmp(argv[i], "--host") == 0) mode = Mode::Host;
        else if (i > 0 && std::strcmp(argv[i], "--gpu") == 0) mode = Mode::Gpu;
        else rest.push_back(argv[i]);
    }
    doctest::Context context;
    context.applyCommandLine(static_cast<int>(rest.size()), rest.data());
    if (mode == Mode::Host) {
        context.addFilter("test-suite-exclude", "gpu");
        return context.run();
    }
    const std::string missing = gpu_unavailable_reason();
    if (!missing.empty()) {
        const char* require = std::getenv("COURSE_REQUIRE_GPU");
        if (require && std::strcmp(require, "0") != 0) {
            std::printf("FAILED: COURSE_REQUIRE_GPU is set but %s\n", missing.c_str());
            return 1;
        }
        if (mode == Mode::Gpu) {
            std::printf("SKIPPED: GPU test cases not run: %s\n", missing.c_str());
            return 77;
        }
        std::printf("note: GPU test cases skipped (%s); this run checks the host side only\n", missing.c_str());
        context.addFilter("test-suite-exclude", "gpu");
    } else if (mode == Mode::Gpu) {
        context.addFilter("test-suite", "gpu");
    }
    return context.run();
}
