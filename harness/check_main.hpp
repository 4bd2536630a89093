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
// Grading (grading/README.md; harness/transcript.hpp says how the two roles work):
//   --record FILE          the runner: record every value the submission hands back in FILE
//   --judge FILE           the judge: judge the values recorded in FILE instead of its own
//                          (in either role the demonstrations, testing.hpp, are left out)
//   --seed N               mix N (0 to 2^32-1) into every random input
//   --hidden-shapes FILE   an instructor's extra shapes (transcript.hpp: hidden_shapes)
//   --verdict FILE         write the result of every test case as JSON (harness/verdict.hpp)
//   --small                the memcheck subset: shapes of at most 2^20 elements, no `speed: ...` test case,
//                          none of the course's own (OWN_GPU_TEST_CASE: they judge nothing of a submission)
//                          (give it to runner and judge alike; transcript.hpp: small_run)
//   --evidence FILE        append each `speed: ...` test case's measurement to FILE, one JSON line each
//                          (transcript.hpp: course::speed)
//   --time-submission DIR  the speed witness: also time the submission's kernels, loaded from DIR's
//                          *.cubin files, in place of the course's (harness/witness.hpp)
//   --witness FILE         where the speed witness appends its JSON lines
// Host-only: the includer defines DOCTEST_CONFIG_IMPLEMENT before including doctest.
#pragma once

#include <doctest/doctest.h>

#include "cli.hpp"
#include "testing.hpp"  // COURSE_OWN_TEST_CASE
#include "transcript.hpp"
#include "verdict.hpp"
#include "witness.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace course {

/// The names of the speed test cases (testing.hpp), as a doctest filter.
constexpr const char* kSpeedTestCases = "speed: *";

/// A doctest suite that needs a device, and how its check selects and requires it.
struct DeviceSuite {
    const char* flag;         // "--gpu": run only this suite
    const char* suite;        // "gpu": the doctest test-suite name of its test cases
    const char* what;         // "GPU": for the messages
    const char* require_env;  // "COURSE_REQUIRE_GPU": set (and not "0"), a missing device fails
    // Each test case of the suite that runs must hand a value to course::submitted, unless it is
    // declared the course's own (testing.hpp): else the check fails, naming it.
    bool must_submit = false;
};

/// The test cases' results as the judge's verdict reports them (harness/verdict.hpp), collected in
/// every run (it is cheap) and written when --verdict FILE is given.
struct VerdictState {
    std::string path;          // --verdict FILE; empty: no file
    std::string device_suite;  // "gpu": test cases of this doctest suite are reported with "gpu": true
    verdict::Verdict v;
    transcript::Counts at_start;  // the transcript's running totals when the current test case started
    bool own = false;             // the current test case is declared the course's own (testing.hpp)
    std::vector<std::string> submitted_nothing;  // device-suite test cases, not the course's own, that asked nothing
};
inline VerdictState& verdict_state() {
    static VerdictState s;
    return s;
}

/// "check.cu:74": the file's name without its folder (a build machine's paths say nothing), and line.
inline std::string where(const char* file, int line) {
    const char* slash = std::strrchr(file, '/');
    return std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
}

/// One line for a failed assertion: where, what, the values doctest decomposed, and the INFO()
/// context in effect.
inline std::string describe_failure(const doctest::AssertData& a) {
    std::string text = where(a.m_file, a.m_line) + ": " +
                       doctest::assertString(a.m_at) + "( " + a.m_expr + " ) failed";
    if (a.m_threw) text += std::string(", it threw: ") + a.m_exception.c_str();
    else if (a.m_decomp.size() > 0) text += std::string(", values: ") + a.m_decomp.c_str();
    const int contexts = doctest::IReporter::get_num_active_contexts();
    for (int i = 0; i < contexts; ++i) {
        std::ostringstream context;
        doctest::IReporter::get_active_contexts()[i]->stringify(&context);
        text += (i == 0 ? " (" : "; ") + context.str() + (i + 1 == contexts ? ")" : "");
    }
    return text;
}

/// Keys the transcript's values by test case, and collects the verdict (a doctest listener: it
/// sees every test case start, fail, end or be skipped).
struct CheckListener : doctest::IReporter {
    explicit CheckListener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData& tc) override {
        transcript::begin_test_case(tc.m_name);
        verdict_state().v.test_cases.push_back(entry(tc, false));
        verdict_state().at_start = transcript::counts();
        verdict_state().own = tc.m_description && std::strcmp(tc.m_description, COURSE_OWN_TEST_CASE) == 0;
    }
    // A test case with subcases runs again for each: the same entry, its counts and the positions
    // of its values going on (so that each value of a test case has a key of its own).
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
        VerdictState& s = verdict_state();
        verdict::TestCase& t = s.v.test_cases.back();
        const transcript::Counts now = transcript::counts();
        t.asked = now.asked - s.at_start.asked;
        t.submitted = now.submitted - s.at_start.submitted;
        t.missing = now.missing - s.at_start.missing;
        t.inconsistent = now.inconsistent - s.at_start.inconsistent;
        t.passed = stats.testCaseSuccess;
        if (!t.passed && !t.failure)
            t.failure = "failed (doctest failure flags " + std::to_string(stats.failure_flags) + ")";
        // Under --small a test case may have no shape small enough, and then asks nothing.
        if (t.gpu && !s.own && t.asked == 0 && !small_run()) s.submitted_nothing.push_back(t.name);
    }
    void test_case_exception(const doctest::TestCaseException& e) override {
        fail(std::string(e.is_crash ? "crashed: " : "exception: ") + e.error_string.c_str());
    }
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData& a) override {
        if (a.m_failed) fail(describe_failure(a));
    }
    void log_message(const doctest::MessageData& m) override {  // FAIL() and FAIL_CHECK() fail; MESSAGE() and WARN() do not
        if (m.m_severity & (doctest::assertType::is_check | doctest::assertType::is_require))
            fail(where(m.m_file, m.m_line) + ": " + m.m_string.c_str());
    }
    void test_case_skipped(const doctest::TestCaseData& tc) override { verdict_state().v.test_cases.push_back(entry(tc, true)); }

private:
    static verdict::TestCase entry(const doctest::TestCaseData& tc, bool skipped) {
        verdict::TestCase t;
        t.name = tc.m_name;
        t.gpu = !verdict_state().device_suite.empty() && verdict_state().device_suite == tc.m_test_suite;
        t.skipped = skipped;
        return t;
    }
    static void fail(const std::string& text) {  // the first failure of the current test case is kept
        auto& cases = verdict_state().v.test_cases;
        if (!cases.empty() && !cases.back().failure) cases.back().failure = verdict::one_line(text);
    }
};
REGISTER_LISTENER("course_check", 1, CheckListener);

/// Writes the verdict if --verdict was given. Returns `rc`, or 2 if the file could not be written.
inline int finish_verdict(int rc) {
    VerdictState& s = verdict_state();
    if (s.path.empty()) return rc;
    s.v.lesson = transcript::lesson();
    s.v.seed = input_seed();
    s.v.missing = transcript::missing_count();
    s.v.inconsistent = transcript::inconsistent_count();
    s.v.evidence = transcript::evidence();
    try {
        verdict::write(s.path, s.v);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    return rc;
}

/// `name` as one doctest filter that matches it alone, as long as it has no wildcard (* ?): doctest
/// splits filters at commas, unless escaped with a backslash (as a backslash itself is).
inline std::string exact_filter(const std::string& name) {
    std::string out;
    for (char c : name) {
        if (c == ',' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

/// --small: the filters that leave out the speed test cases and the course's own test cases (their
/// names escaped for doctest). The course's own judge nothing of a submission: memcheck on them would
/// only check the course's code, at the subset's expense (NVML, cuBLAS, the speed cases' helpers).
inline std::vector<std::string> small_run_exclusions() {
    std::vector<std::string> out = {kSpeedTestCases};
    for (const doctest::detail::TestCase& tc : doctest::detail::getRegisteredTests())
        if (tc.m_description && std::strcmp(tc.m_description, COURSE_OWN_TEST_CASE) == 0) out.push_back(exact_filter(tc.m_name));
    return out;
}

/// In a graded run (--record, --judge): the filters that leave out the demonstrations (testing.hpp:
/// DEMONSTRATION_TEST_CASE). They judge nothing of a submission, and the runner and the judge hold
/// the GPU while they run.
inline std::vector<std::string> graded_run_exclusions() {
    std::vector<std::string> out;
    if (transcript::role() == transcript::Role::Plain) return out;
    for (const doctest::detail::TestCase& tc : doctest::detail::getRegisteredTests())
        if (tc.m_description && std::strcmp(tc.m_description, COURSE_DEMONSTRATION) == 0) out.push_back(exact_filter(tc.m_name));
    return out;
}

/// Takes the grading options (above) out of argv; throws UsageError on a bad one.
inline std::vector<char*> take_grading_options(const std::vector<char*>& args) {
    std::vector<char*> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string a = args[i];
        if (a == "--small") {
            set_small_run(true);
            continue;
        }
        if (a != "--record" && a != "--judge" && a != "--seed" && a != "--hidden-shapes" && a != "--verdict" && a != "--evidence" &&
            a != "--time-submission" && a != "--witness") {
            rest.push_back(args[i]);
            continue;
        }
        if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
        const std::string value = args[++i];
        if (a == "--record") transcript::start_recording(value);
        else if (a == "--judge") transcript::start_judging(value);
        else if (a == "--verdict") verdict_state().path = value;
        else if (a == "--evidence") set_evidence_file(value);
        else if (a == "--time-submission") witness::load(value);
        else if (a == "--witness") witness::set_output(value);
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
    verdict_state().device_suite = s.suite;
    doctest::Context context;
    context.applyCommandLine(static_cast<int>(rest.size()), rest.data());
    if (small_run())  // (reported as skipped)
        for (const std::string& filter : small_run_exclusions()) context.addFilter("test-case-exclude", filter.c_str());
    for (const std::string& filter : graded_run_exclusions())  // (reported as skipped)
        context.addFilter("test-case-exclude", filter.c_str());
    const auto run = [&context, &s] {
        int rc = context.run();
        if (s.must_submit && transcript::role() == transcript::Role::Plain) {
            for (const std::string& name : verdict_state().submitted_nothing) {
                std::printf("FAILED: %s test case \"%s\" handed nothing to course::submitted: graded, it would judge "
                            "none of the submission's values (harness/testing.hpp)\n", s.what, name.c_str());
                rc = rc == 0 ? 1 : rc;
            }
        }
        if (transcript::role() == transcript::Role::Judge)  // the closing line of the judge's console
            std::printf("judge: %zu value(s) missing from the submission's run, %zu inconsistent\n",
                        transcript::missing_count(), transcript::inconsistent_count());
        return finish_verdict(rc);
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
            if (!verdict_state().path.empty()) {  // a verdict that lists every test case as skipped
                context.addFilter("test-case-exclude", "*");
                context.setOption("out", "/dev/null");  // doctest's summary of nothing would only confuse
                context.run();
                if (finish_verdict(77) != 77) return 2;
            }
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
