// check_main.hpp — the main() policy of every doctest check: test cases that need hardware the
// machine may lack (a CUDA GPU, an OpenCL device) are skipped honestly, never passed.
//
//   check --host     only the test cases outside the suite
//   check --<flag>   only the suite's test cases; with nothing to run them on, print why and
//                    exit 77, which CTest is told (SKIP_RETURN_CODE) to count as "skipped".
//                    With <require_env>=1 in the environment a missing device fails instead,
//                    so a run that must use the hardware can never silently skip.
//   check            everything; the suite is left out, with a notice, if there is no device.
// Any other argument goes to doctest (--test-case=..., --success, --help, ...).
//
// Grading (scripts/grade.sh; transcript.hpp says how the two roles work):
//   --record FILE          the runner: record every value the submission hands back in FILE
//   --judge FILE           the judge: judge the values recorded in FILE instead of its own
//   --seed N               mix N (0 to 2^32-1) into every random input
//   --hidden-shapes FILE   an instructor's extra shapes (transcript.hpp: hidden_shapes)
// Host-only: the includer defines DOCTEST_CONFIG_IMPLEMENT before including doctest.
#pragma once

#include <doctest/doctest.h>

#include "cli.hpp"
#include "transcript.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace course {

/// A doctest suite that needs a device, and how its check selects and requires it.
struct DeviceSuite {
    const char* flag;         // "--gpu": run only this suite
    const char* suite;        // "gpu": the doctest test-suite name of its test cases
    const char* what;         // "GPU": for the messages
    const char* require_env;  // "COURSE_REQUIRE_GPU": set (and not "0"), a missing device fails
};

/// Keys the transcript's values by test case (a doctest listener: it sees every test case start).
struct TranscriptListener : doctest::IReporter {
    explicit TranscriptListener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData& tc) override { transcript::begin_test_case(tc.m_name); }
    void test_case_reenter(const doctest::TestCaseData& tc) override { transcript::begin_test_case(tc.m_name); }
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("course_transcript", 1, TranscriptListener);

/// Takes the grading options (above) out of argv; throws UsageError on a bad one.
inline std::vector<char*> take_grading_options(const std::vector<char*>& args) {
    std::vector<char*> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string a = args[i];
        if (a != "--record" && a != "--judge" && a != "--seed" && a != "--hidden-shapes") {
            rest.push_back(args[i]);
            continue;
        }
        if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
        const std::string value = args[++i];
        if (a == "--record") transcript::start_recording(value);
        else if (a == "--judge") transcript::start_judging(value);
        else if (a == "--seed") set_input_seed(static_cast<std::uint32_t>(parse_integer(value, "--seed", 0, 4294967295LL)));
        else {
            set_hidden_shapes_file(value);
            hidden_shapes("", 0, 1);  // reads the file once, so that an unreadable one is refused now
        }
    }
    return rest;
}

/// Runs doctest with the policy above. `unavailable_reason` is called only when the suite may
/// run; it returns "" if the device is there, else why not.
template <class Reason>
int run_checks(int argc, char** argv, const DeviceSuite& s, Reason unavailable_reason) {
    enum class Mode { All, Host, Device } mode = Mode::All;
    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        if (i > 0 && std::strcmp(argv[i], "--host") == 0) mode = Mode::Host;
        else if (i > 0 && std::strcmp(argv[i], s.flag) == 0) mode = Mode::Device;
        else rest.push_back(argv[i]);
    }

    try {
        rest = take_grading_options(rest);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    doctest::Context context;
    context.applyCommandLine(static_cast<int>(rest.size()), rest.data());
    const auto run = [&context] {
        const int rc = context.run();
        if (transcript::role() == transcript::Role::Judge)  // the closing line grade.sh reads
            std::printf("judge: %zu value(s) missing from the submission's run, %zu inconsistent\n",
                        transcript::missing_count(), transcript::inconsistent_count());
        return rc;
    };
    if (mode == Mode::Host) {
        context.addFilter("test-suite-exclude", s.suite);
        return run();
    }
    const std::string missing = unavailable_reason();
    const char* require = std::getenv(s.require_env);
    if (!missing.empty()) {
        if (require && std::strcmp(require, "0") != 0) {
            std::printf("FAILED: %s is set but %s\n", s.require_env, missing.c_str());
            return 1;
        }
        if (mode == Mode::Device) {
            std::printf("SKIPPED: %s test cases not run: %s\n", s.what, missing.c_str());
            return 77;
        }
        std::printf("note: %s test cases skipped (%s); this run checks the host side only\n", s.what, missing.c_str());
        context.addFilter("test-suite-exclude", s.suite);
    } else if (mode == Mode::Device) {
        context.addFilter("test-suite", s.suite);
    }
    return run();
}

}  // namespace course
