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
// Host-only: the includer defines DOCTEST_CONFIG_IMPLEMENT before including doctest.
#pragma once

#include <doctest/doctest.h>

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

    doctest::Context context;
    context.applyCommandLine(static_cast<int>(rest.size()), rest.data());
    if (mode == Mode::Host) {
        context.addFilter("test-suite-exclude", s.suite);
        return context.run();
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
    return context.run();
}

}  // namespace course
