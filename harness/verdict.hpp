// verdict.hpp — the judge's result as JSON (VERDICT.json), which the grader reads instead of console
// text. The format is the one agreed between the judge and the Python grader (grading/README.md):
//
//   {"format": 1, "lesson": "...", "seed": N, "missing": N, "inconsistent": N,
//    "test_cases": [{"name": "...", "gpu": b, "skipped": b, "passed": b, "asked": N, "submitted": N,
//                    "missing": N, "inconsistent": N, "failure": null or "..."}, ...],
//    "evidence": [{"exercise": "02.tiled", "test_case": "speed: 02.tiled", "kernel": "...", "ceiling": "copy",
//                  "shape": "8192x4096", "submission": {"ms": X, "ceiling_ms": X, "runs": N, "spread": X} or null,
//                  "solution": {...}}, ...],
//    "complete": true}
// "evidence" holds one entry per `speed: <id>` test case the judge ran (course::speed, transcript.hpp):
// the submission's measurement as its runner recorded it (null where it recorded none, or one that
// cannot be a measurement), and the course's solution measured by the judge on the same GPU.
//
// The file is written whole, to FILE.tmp and then renamed, with "complete": true as its last key:
// a file that is missing, cut short or unparsable means that the judge did not finish.
// Every string is written as pure ASCII: other characters as \uXXXX escapes, bytes that are not
// UTF-8 as U+FFFD, so that whatever a submission's output held, the file is valid JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace course::verdict {

/// The most bytes (of UTF-8) a failure message keeps; a longer one ends in "...".
constexpr std::size_t kMaxFailureBytes = 400;

struct TestCase {
    std::string name;
    bool gpu = false;      // in the doctest suite "gpu"
    bool skipped = false;  // not run (filtered out, e.g. a GPU test case under --host)
    bool passed = false;
    std::size_t asked = 0;         // values this test case asked of the submission
    std::size_t submitted = 0;     // of those, found in the transcript and consistent
    std::size_t missing = 0;
    std::size_t inconsistent = 0;
    std::optional<std::string> failure;  // the first failed assertion or exception (one_line())
};

/// One timed kernel beside its ceiling, each the median of `runs` CUDA-event-timed runs; spread =
/// (slowest - fastest) / median of the kernel's runs.
struct SpeedSample {
    double ms = 0, ceiling_ms = 0;
    std::uint32_t runs = 0;
    double spread = 0;
};

/// A `speed: <id>` test case's evidence: the labels are the check's own (the same in both roles).
struct SpeedEvidence {
    std::string exercise, test_case, kernel, ceiling, shape;
    std::optional<SpeedSample> submission;  // the runner's record; none: null
    SpeedSample solution;                   // the judge's own run of the course's kernel
};

struct Verdict {
    std::string lesson;
    std::uint32_t seed = 0;
    std::size_t missing = 0, inconsistent = 0;  // the whole run
    std::vector<TestCase> test_cases;
    std::vector<SpeedEvidence> evidence;
};

/// `text` as a JSON string literal (with its quotes), pure ASCII; invalid UTF-8 becomes U+FFFD.
std::string json_string(std::string_view text);

/// `text` made one line of at most `max_bytes` bytes of valid UTF-8: invalid bytes become U+FFFD,
/// each run of line breaks and tabs one space, and a longer text is cut at a character boundary
/// and ends in "...". Other control characters are kept (json_string escapes them).
std::string one_line(std::string_view text, std::size_t max_bytes = kMaxFailureBytes);

/// A finite number as JSON (shortest form that reads back the same double); anything else: null.
std::string json_number(double x);
/// {"ms": ..., "ceiling_ms": ..., "runs": N, "spread": ...}
std::string json_sample(const SpeedSample& s);

/// The whole verdict as JSON text (ends in a newline).
std::string to_json(const Verdict& v);

/// Writes to_json(v) to `path` + ".tmp", then renames it to `path`. Throws std::runtime_error.
void write(const std::string& path, const Verdict& v);

}  // namespace course::verdict
