// check.cpp — host-side checks of harness/, the seam every lesson's check links: grading's
// transcript (course::submitted, the judge's reading of a hostile file), the seed and the hidden
// shapes, the judge's JSON verdict, the speed evidence (course::speed) and the speed cases' CPU
// helpers (speed.cuh). These need no GPU and run in CI. Linked like every lesson's check, with the
// checks' main() (test_main.cpp, check_main.hpp).
#include "testing.hpp"

#include "course_lessons.hpp"
#include "speed.cuh"
#include "verdict.hpp"
#include "verify.hpp"

#include <sys/resource.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace course;

// ---------------------------------------------------------------- the transcript (transcript.hpp)

namespace {
std::string scratch_file(const char* name) { return (std::filesystem::temp_directory_path() / name).string(); }
}  // namespace

TEST_CASE("transcript: the judge sees the runner's values, not its own, keyed by test case and position") {
    const std::string path = scratch_file("course_transcript_test.bin");
    transcript::start_recording(path);
    transcript::begin_test_case("A");
    CHECK(submitted(std::vector<float>{1.5f, 2.5f}) == std::vector<float>{1.5f, 2.5f});  // the runner keeps its value
    CHECK(submitted(std::pair{3, 4}) == std::pair{3, 4});
    CHECK(submitted(true));
    transcript::begin_test_case("B");
    CHECK(submitted(7LL) == 7LL);
    transcript::stop();

    const transcript::Counts before = transcript::counts();
    transcript::start_judging(path);
    transcript::begin_test_case("A");
    CHECK(submitted(std::vector<float>{9.0f, 9.0f}) == std::vector<float>{1.5f, 2.5f});  // the runner's, not 9, 9
    CHECK(submitted(std::pair{0, 0}) == std::pair{3, 4});
    CHECK(submitted(false));
    CHECK_THROWS_AS(submitted(1), SubmissionOutputError);  // A recorded three values, not four
    transcript::begin_test_case("B");
    CHECK_THROWS_WITH_AS(submitted(std::vector<long long>{7}), doctest::Contains("inconsistent transcript"),
                         SubmissionOutputError);  // another type
    transcript::begin_test_case("C");
    CHECK_THROWS_WITH_AS(submitted(1.0), doctest::Contains("recorded no value #1"), SubmissionOutputError);
    const transcript::Counts after = transcript::counts();
    CHECK(after.asked - before.asked == 7);  // a pair is two values
    CHECK(after.submitted - before.submitted == 4);
    CHECK(after.missing - before.missing == 2);
    CHECK(after.inconsistent - before.inconsistent == 1);
    CHECK(transcript::missing_count() == after.missing);
    transcript::stop();
    CHECK(submitted(5) == 5);  // a normal run again: counted as asked and the code's own
    CHECK(transcript::counts().asked == after.asked + 1);
    CHECK(transcript::counts().submitted == after.submitted + 1);
    std::remove(path.c_str());
}

TEST_CASE("transcript: a forged, truncated or missing file judges nothing as passed") {
    const std::string path = scratch_file("course_transcript_forged.bin");
    transcript::start_recording(path);
    transcript::begin_test_case("A");
    submitted(std::vector<int>(1000, 1));
    transcript::stop();
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);  // cut inside the data
    transcript::start_judging(path);
    transcript::begin_test_case("A");
    CHECK_THROWS_WITH_AS(submitted(std::vector<int>(1000, 0)), doctest::Contains("malformed at byte"), SubmissionOutputError);
    transcript::stop();

    std::ofstream(path) << "[doctest] test cases: 5 | 5 passed | 0 failed\n";  // a summary instead of a transcript
    transcript::start_judging(path);
    transcript::begin_test_case("A");
    CHECK_THROWS_WITH_AS(submitted(1), doctest::Contains("does not start as one"), SubmissionOutputError);
    transcript::stop();

    std::remove(path.c_str());
    transcript::start_judging(path);
    transcript::begin_test_case("A");
    CHECK_THROWS_WITH_AS(submitted(1), doctest::Contains("there is no transcript"), SubmissionOutputError);
    transcript::stop();
}

namespace {
/// Appends one record to a transcript file by hand (transcript.cpp's format), as a forger would.
void put_record(std::ofstream& out, const std::string& key, const std::string& type, const std::string& value) {
    const std::uint32_t key_len = static_cast<std::uint32_t>(key.size()), type_len = static_cast<std::uint32_t>(type.size());
    const std::uint64_t bytes = value.size();
    out.write(reinterpret_cast<const char*>(&key_len), sizeof key_len).write(key.data(), key_len);
    out.write(reinterpret_cast<const char*>(&type_len), sizeof type_len).write(type.data(), type_len);
    out.write(reinterpret_cast<const char*>(&bytes), sizeof bytes).write(value.data(), static_cast<std::streamsize>(bytes));
}
long peak_rss_kib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}
}  // namespace

TEST_CASE("transcript: the judge reads in order: values it did not ask for are skipped, a later test case's wait") {
    const std::string path = scratch_file("course_transcript_order.bin");
    transcript::start_recording(path);
    transcript::begin_test_case("A");
    submitted(1);
    submitted(2);
    submitted(3);  // the judge asks A for one value only
    transcript::begin_test_case("C");  // the runner never reached B
    submitted(std::vector<int>(1000, 4));
    submitted(5);
    transcript::stop();

    transcript::start_judging(path);
    transcript::begin_test_case("A");
    CHECK(submitted(0) == 1);
    transcript::begin_test_case("B");
    CHECK_THROWS_WITH_AS(submitted(0), doctest::Contains("recorded no value #1"), SubmissionOutputError);
    transcript::begin_test_case("C");
    // 4000 bytes where the check expects 16: refused without being read, and the next value is there.
    CHECK_THROWS_WITH_AS(submitted(std::vector<int>(4)), doctest::Contains("is 4000 bytes, the check expects 16"),
                         SubmissionOutputError);
    CHECK(submitted(0) == 5);
    transcript::stop();
    std::remove(path.c_str());
}

TEST_CASE("transcript: a hostile file of countless tiny records costs the judge no memory, and at most 2^20 records") {
    const std::string path = scratch_file("course_transcript_hostile.bin");
    constexpr std::size_t kRecords = (std::size_t{1} << 20) + 16;  // about 20 MiB each way
    {  // A million distinct keys: an index of every record (what the judge once built) takes 100+ MiB.
        std::ofstream out(path, std::ios::binary);
        out << "course-transcript 1\n";
        for (std::size_t i = 0; i < kRecords; ++i) put_record(out, "x#" + std::to_string(i + 1), "i", "");
    }
    const long before = peak_rss_kib();
    transcript::start_judging(path);
    transcript::begin_test_case("A");
    CHECK_THROWS_WITH_AS(submitted(1), doctest::Contains("recorded no value #1"), SubmissionOutputError);
    transcript::stop();
    CHECK(peak_rss_kib() - before < 8 * 1024);

    {  // A million records of a value the judge has passed: skipped one at a time, up to the bound.
        std::ofstream out(path, std::ios::binary);
        out << "course-transcript 1\n";
        for (std::size_t i = 0; i < kRecords; ++i) put_record(out, "A#1", "i", "");
    }
    transcript::start_judging(path);
    transcript::begin_test_case("A");
    CHECK_THROWS_WITH_AS(submitted(1), doctest::Contains("inconsistent"), SubmissionOutputError);  // 0 bytes, not 4
    CHECK_THROWS_WITH_AS(submitted(2), doctest::Contains("more records than any check asks for"), SubmissionOutputError);
    transcript::stop();
    CHECK(peak_rss_kib() - before < 8 * 1024);
    std::remove(path.c_str());
}

TEST_CASE("the grader's seed changes every input a check draws with seeded(); seed 0 leaves them as they always were") {
    const std::vector<float> plain = random_floats(100, 42);
    CHECK(random_floats(100, seeded(42)) == plain);  // outside grading
    set_input_seed(12345);
    const std::vector<float> graded = random_floats(100, seeded(42));
    const std::vector<int> graded_ints = random_ints(100, seeded(42), -1000, 1000);
    CHECK(random_floats(100, 42) == plain);  // the lessons' own inputs never change
    set_input_seed(0);
    CHECK(graded != plain);
    CHECK(graded_ints != random_ints(100, 42, -1000, 1000));
    CHECK(random_floats(100, seeded(42)) == plain);
}

TEST_CASE("hidden shapes: an instructor's file adds shapes per lesson; a bad line is refused with file and line") {
    const std::string path = scratch_file("course_hidden_shapes.txt");
    std::ofstream(path) << "# hidden\n02_shared_transpose 513 77  # a comment\n04_reduction 1000003\n\n02_shared_transpose 1 9\n";
    set_hidden_shapes_file(path);
    const auto t = hidden_shapes("02_shared_transpose", 2, 1 << 15);
    REQUIRE(t.size() == 2);
    CHECK(t[0] == std::vector<long long>{513, 77});
    CHECK(t[1] == std::vector<long long>{1, 9});
    CHECK(hidden_shapes("04_reduction", 1, 1LL << 30) == std::vector<std::vector<long long>>{{1000003}});
    CHECK(hidden_shapes("05_tiled_matmul", 3, 2048).empty());
    CHECK(hidden_shapes("", 0, 1).empty());  // what --hidden-shapes does at start: every line is checked
    const std::pair<int, int> listed[] = {{1, 1}};
    CHECK(with_hidden_shapes(listed, "02_shared_transpose").size() == 3);
    CHECK_THROWS_WITH_AS(hidden_shapes("02_shared_transpose", 2, 100), doctest::Contains(":2:"), UsageError);  // 513 > 100
    // The count of numbers comes from lessons/lessons.txt: a check that asks for another is a bug.
    CHECK_THROWS_WITH_AS(hidden_shapes("04_reduction", 2, 1LL << 30), doctest::Contains("lessons.txt gives this lesson 1"),
                         std::logic_error);
    CHECK_THROWS_AS(hidden_shapes("no_such_lesson", 2, 100), std::logic_error);
    for (const GradableLesson& l : kGradableLessons)  // each listed lesson can be asked with its own count
        CHECK_NOTHROW(hidden_shapes(l.name, l.hidden_shape_arity, 1 << 30));
    std::ofstream(path) << "04_reduction 1000003\n04_reduction 5 6\n";  // a line of another lesson is checked too
    CHECK_THROWS_WITH_AS(hidden_shapes("02_shared_transpose", 2, 100), doctest::Contains(":2: 04_reduction takes 1"), UsageError);
    CHECK_THROWS_WITH_AS(hidden_shapes("", 0, 1), doctest::Contains(":2: 04_reduction takes 1"), UsageError);
    std::ofstream(path) << "07_not_a_lesson 12 12\n";
    CHECK_THROWS_WITH_AS(hidden_shapes("", 0, 1), doctest::Contains("not a gradable lesson"), UsageError);
    std::ofstream(path) << "01_naive_transpose 12 x\n";
    CHECK_THROWS_AS(hidden_shapes("01_naive_transpose", 2, 100), UsageError);
    std::ofstream(path) << "01_naive_transpose 12 0\n";
    CHECK_THROWS_AS(hidden_shapes("", 0, 1), UsageError);
    set_hidden_shapes_file(scratch_file("no_such_hidden_shapes.txt"));
    CHECK_THROWS_AS(hidden_shapes("01_naive_transpose", 2, 100), UsageError);
    set_hidden_shapes_file("");
    std::remove(path.c_str());
}

// ---------------------------------------------------------------- the judge's JSON verdict
TEST_CASE("verdict: strings are pure-ASCII JSON: quotes, backslashes, control bytes escaped; bad UTF-8 replaced") {
    using verdict::json_string;
    CHECK(json_string("plain text") == "\"plain text\"");
    CHECK(json_string("say \"hi\" \\ there") == "\"say \\\"hi\\\" \\\\ there\"");
    CHECK(json_string("a\nb\rc\td") == "\"a\\nb\\rc\\td\"");
    CHECK(json_string(std::string("nul\0one\x01us\x1f" "del\x7f", 15)) == "\"nul\\u0000one\\u0001us\\u001fdel\\u007f\"");
    CHECK(json_string("\xc2\x85") == "\"\\u0085\"");           // a C1 control (NEL)
    CHECK(json_string("caf\xc3\xa9") == "\"caf\\u00e9\"");     // valid UTF-8 kept, as an escape
    CHECK(json_string("\xe2\x80\xae") == "\"\\u202e\"");       // right-to-left override: visible, not obeyed
    CHECK(json_string("\xf0\x9f\x98\x80") == "\"\\ud83d\\ude00\"");  // past U+FFFF: a surrogate pair
    CHECK(json_string("\xff") == "\"\\ufffd\"");               // never valid in UTF-8
    CHECK(json_string("\x80z") == "\"\\ufffdz\"");             // a stray continuation byte
    CHECK(json_string("\xe2\x82") == "\"\\ufffd\\ufffd\"");    // cut short
    CHECK(json_string("\xc0\xaf") == "\"\\ufffd\\ufffd\"");    // overlong '/'
    CHECK(json_string("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // a UTF-16 surrogate
    CHECK(json_string("\xf4\x90\x80\x80") == "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // past U+10FFFF
    std::string every_byte;
    for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
    for (const char c : json_string(every_byte)) {  // whatever comes in, printable ASCII goes out
        CHECK(c >= 0x20);
        CHECK(c < 0x7f);
    }
}

TEST_CASE("verdict: a failure is one line of at most 400 bytes of valid UTF-8, cut at a character") {
    using verdict::one_line;
    CHECK(one_line("first\n\n  second\r\nthird\tfourth") == "first   second third fourth");
    CHECK(one_line("short") == "short");
    CHECK(one_line(std::string(400, 'x')) == std::string(400, 'x'));
    const std::string cut = one_line(std::string(401, 'x'));
    CHECK(cut.size() == 400);
    CHECK(cut.substr(397) == "...");
    std::string wide;
    for (int i = 0; i < 300; ++i) wide += "\xc3\xa9";  // 600 bytes of two-byte characters
    const std::string w = one_line(wide);
    CHECK(w.size() <= 400);
    CHECK(w.size() == 2 * 198 + 3);  // 198 whole characters, then "..."
    CHECK(w.substr(w.size() - 3) == "...");
    CHECK(verdict::json_string(w).find("\\ufffd") == std::string::npos);  // no character was split
    CHECK(one_line("bad \xff byte") == "bad \xef\xbf\xbd byte");  // U+FFFD, in UTF-8
    CHECK(one_line(std::string(10000, '\n')) == " ");
}

TEST_CASE("verdict: the file holds every test case and its counts, ends with \"complete\": true, and no .tmp is left") {
    verdict::Verdict v;
    v.lesson = "02_shared_transpose";
    v.seed = 4294967295u;
    v.missing = 1;
    v.inconsistent = 2;
    verdict::TestCase judged;
    judged.name = "a \"quoted\" name\x01\xff";
    judged.gpu = true;
    judged.passed = false;
    judged.asked = 3;
    judged.submitted = 1;
    judged.missing = 1;
    judged.inconsistent = 1;
    judged.failure = "check.cu:7: CHECK( r.ok() ) failed";
    verdict::TestCase own;
    own.name = "the course's own";
    own.passed = true;
    verdict::TestCase skipped;
    skipped.name = "not run";
    skipped.gpu = skipped.skipped = true;
    v.test_cases = {judged, own, skipped};
    const std::string json = verdict::to_json(v);
    CHECK(json.find("\"format\": 1,") != std::string::npos);
    CHECK(json.find("\"lesson\": \"02_shared_transpose\"") != std::string::npos);
    CHECK(json.find("\"seed\": 4294967295,") != std::string::npos);
    CHECK(json.find("{\"name\": \"a \\\"quoted\\\" name\\u0001\\ufffd\", \"gpu\": true, \"skipped\": false, \"passed\": false, "
                    "\"asked\": 3, \"submitted\": 1, \"missing\": 1, \"inconsistent\": 1, "
                    "\"failure\": \"check.cu:7: CHECK( r.ok() ) failed\"}") != std::string::npos);
    CHECK(json.find("\"name\": \"the course's own\", \"gpu\": false, \"skipped\": false, \"passed\": true, \"asked\": 0") !=
          std::string::npos);
    CHECK(json.find("\"name\": \"not run\", \"gpu\": true, \"skipped\": true, \"passed\": false") != std::string::npos);
    CHECK(json.find("\"failure\": null}") != std::string::npos);
    const std::string tail = "\"complete\": true\n}\n";
    REQUIRE(json.size() > tail.size());
    CHECK(json.substr(json.size() - tail.size()) == tail);

    const std::string path = scratch_file("course_verdict_test.json");
    verdict::write(path, v);
    std::ifstream in(path);
    std::stringstream written;
    written << in.rdbuf();
    CHECK(written.str() == json);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
    std::remove(path.c_str());
    CHECK_THROWS_AS(verdict::write(scratch_file("no_such_folder/verdict.json"), v), std::runtime_error);
    CHECK(verdict::to_json(verdict::Verdict{}).find("\"test_cases\": [],") != std::string::npos);
}

// ---------------------------------------------------------------- speed evidence (course::speed)
namespace {
std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}
SpeedDetails details(std::uint32_t runs, double spread) {
    SpeedDetails d;
    d.runs = runs;
    d.spread = spread;
    d.shape = "8192x4096";
    d.gpu = "Test GPU \"quoted\"";
    return d;
}
}  // namespace

TEST_CASE("course::speed: the runner's measurement reaches the judge's evidence beside the judge's own; a missing one is null") {
    const std::string path = scratch_file("course_transcript_speed.bin");
    transcript::start_recording(path);
    transcript::begin_test_case("speed: 02.tiled");
    speed("02.tiled", "transpose_tiled<33>", 0.318, "copy", 0.301, details(21, 0.012));
    CHECK(submitted(7) == 7);  // a value after the speed record keeps its own position
    transcript::begin_test_case("speed: 01.strided_reads");  // the runner stops before its speed record
    transcript::stop();

    const std::size_t before = transcript::evidence().size();
    const transcript::Counts counts_before = transcript::counts();
    transcript::start_judging(path);
    transcript::begin_test_case("speed: 02.tiled");
    speed("02.tiled", "transpose_tiled<33>", 0.309, "copy", 0.300, details(21, 0.010));
    CHECK(submitted(0) == 7);
    transcript::begin_test_case("speed: 01.strided_reads");
    CHECK_NOTHROW(speed("01.strided_reads", "transpose_naive_reads", 1.5, "copy", 0.3, details(21, 0.02)));
    const transcript::Counts counts_after = transcript::counts();
    transcript::stop();
    CHECK(counts_after.missing == counts_before.missing);  // no speed record is not a missing value
    CHECK(counts_after.inconsistent == counts_before.inconsistent);
    CHECK(counts_after.asked - counts_before.asked == 1);  // only submitted() asks

    const std::vector<verdict::SpeedEvidence>& all = transcript::evidence();
    REQUIRE(all.size() == before + 2);
    const verdict::SpeedEvidence& e = all[before];
    CHECK(e.exercise == "02.tiled");
    CHECK(e.test_case == "speed: 02.tiled");
    CHECK(e.kernel == "transpose_tiled<33>");
    CHECK(e.ceiling == "copy");
    CHECK(e.shape == "8192x4096");
    REQUIRE(e.submission.has_value());
    CHECK(e.submission->ms == 0.318);  // the runner's, bit for bit
    CHECK(e.submission->ceiling_ms == 0.301);
    CHECK(e.submission->runs == 21);
    CHECK(e.submission->spread == 0.012);
    CHECK(e.solution.ms == 0.309);  // the judge's own
    CHECK(e.solution.ceiling_ms == 0.300);
    CHECK_FALSE(all[before + 1].submission.has_value());
    CHECK(all[before + 1].solution.ms == 1.5);

    verdict::Verdict v;
    v.evidence.assign(all.begin() + static_cast<long>(before), all.end());
    const std::string json = verdict::to_json(v);
    CHECK(json.find("\"evidence\": [\n    {\"exercise\": \"02.tiled\", \"test_case\": \"speed: 02.tiled\", "
                    "\"kernel\": \"transpose_tiled<33>\", \"ceiling\": \"copy\", \"shape\": \"8192x4096\",\n"
                    "     \"submission\": {\"ms\": 0.318, \"ceiling_ms\": 0.301, \"runs\": 21, \"spread\": 0.012},\n"
                    "     \"solution\": {\"ms\": 0.309, \"ceiling_ms\": 0.3, \"runs\": 21, \"spread\": 0.01}}") != std::string::npos);
    CHECK(json.find("\"submission\": null,\n     \"solution\": {\"ms\": 1.5,") != std::string::npos);
    CHECK(json.find("],\n  \"complete\": true\n}\n") != std::string::npos);  // evidence comes before "complete"
    CHECK(verdict::to_json(verdict::Verdict{}).find("\"evidence\": [],\n  \"complete\"") != std::string::npos);
    std::remove(path.c_str());
}

TEST_CASE("course::speed: a forged speed record (another size or type, a non-finite number) is inconsistent, never read as a time") {
    const std::string path = scratch_file("course_transcript_speed_forged.bin");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::string nan_record(32, '\0');
    std::memcpy(&nan_record[0], &nan, sizeof nan);  // ms = NaN, the rest 0
    std::string huge_runs(32, '\0');
    const double ok_ms = 0.25;
    std::memcpy(&huge_runs[0], &ok_ms, sizeof ok_ms);
    std::memcpy(&huge_runs[8], &ok_ms, sizeof ok_ms);
    huge_runs[24] = huge_runs[25] = huge_runs[26] = huge_runs[27] = '\xff';  // runs = 2^32 - 1: kept as a number
    {
        std::ofstream out(path, std::ios::binary);
        out << "course-transcript 1\n";
        put_record(out, "A#1", "course::speed 1", std::string(1000, 'x'));  // another size
        put_record(out, "B#1", "d", std::string(32, '\0'));                 // another type, the right size
        put_record(out, "C#1", "course::speed 1", nan_record);
        put_record(out, "D#1", "course::speed 1", huge_runs);
    }
    const std::size_t before = transcript::evidence().size();
    const transcript::Counts counts_before = transcript::counts();
    transcript::start_judging(path);
    for (const char* name : {"A", "B", "C"}) {
        CAPTURE(std::string(name));
        transcript::begin_test_case(name);
        CHECK_THROWS_WITH_AS(speed(name, "k", 1.0, "copy", 1.0), doctest::Contains("inconsistent transcript"),
                             SubmissionOutputError);
    }
    transcript::begin_test_case("D");
    CHECK_NOTHROW(speed("D", "k", 1.0, "copy", 1.0));
    transcript::stop();
    CHECK(transcript::counts().inconsistent - counts_before.inconsistent == 3);
    CHECK(transcript::counts().missing == counts_before.missing);
    const auto& all = transcript::evidence();
    REQUIRE(all.size() == before + 4);
    for (std::size_t i = before; i < before + 3; ++i) CHECK_FALSE(all[i].submission.has_value());  // kept, as null
    REQUIRE(all[before + 3].submission.has_value());
    CHECK(all[before + 3].submission->runs == 4294967295u);
    CHECK(verdict::json_sample(*all[before + 3].submission) == "{\"ms\": 0.25, \"ceiling_ms\": 0.25, \"runs\": 4294967295, \"spread\": 0}");
    std::remove(path.c_str());
}

TEST_CASE("course::speed: --evidence FILE gets one JSON line per speed report; an unwritable one is refused at once") {
    const std::string path = scratch_file("course_evidence_test.jsonl");
    std::remove(path.c_str());
    set_evidence_file(path);
    transcript::begin_test_case("speed: 02.tiled");
    speed("02.tiled", "transpose_tiled<33>", 0.318, "copy", 0.301, details(21, 0.012));
    speed("02.tiled", "transpose_tiled<33>", 0.5, "copy", 0.25, details(15, 0.5));
    set_evidence_file("");  // off again
    CHECK(read_all(path) ==
          "{\"exercise\":\"02.tiled\",\"kernel\":\"transpose_tiled<33>\",\"ms\":0.318,\"ceiling\":\"copy\",\"ceiling_ms\":0.301,"
          "\"runs\":21,\"spread\":0.012,\"gpu\":\"Test GPU \\\"quoted\\\"\",\"shape\":\"8192x4096\"}\n"
          "{\"exercise\":\"02.tiled\",\"kernel\":\"transpose_tiled<33>\",\"ms\":0.5,\"ceiling\":\"copy\",\"ceiling_ms\":0.25,"
          "\"runs\":15,\"spread\":0.5,\"gpu\":\"Test GPU \\\"quoted\\\"\",\"shape\":\"8192x4096\"}\n");
    CHECK_THROWS_AS(set_evidence_file(scratch_file("no_such_folder/evidence.jsonl")), UsageError);
    std::remove(path.c_str());
}

TEST_CASE("verdict: numbers are the shortest text that reads back the same double; non-finite ones are null") {
    CHECK(verdict::json_number(0.318) == "0.318");
    CHECK(verdict::json_number(0.1 + 0.2) == "0.30000000000000004");
    CHECK(verdict::json_number(1e-9) == "1e-09");
    CHECK(verdict::json_number(-2) == "-2");
    CHECK(verdict::json_number(std::numeric_limits<double>::infinity()) == "null");
    CHECK(verdict::json_number(std::nan("")) == "null");
}

TEST_CASE("--small: skip_shape leaves out shapes above 2^20 elements, and only under --small") {
    const bool given = small_run();  // this run's own --small, put back below
    set_small_run(false);
    CHECK_FALSE(skip_shape(1LL << 30));
    set_small_run(true);
    CHECK_FALSE(skip_shape(1));
    CHECK_FALSE(skip_shape(kSmallElements));
    CHECK(skip_shape(kSmallElements + 1));
    set_small_run(given);
}

TEST_CASE("speed cases: row_hashes changes only the hash of a row with a changed word, or bytes in another order") {
    const std::vector<float> m = random_floats(6 * 5, 3);
    const auto h = row_hashes(m, 5);
    REQUIRE(h.size() == 6);
    for (std::size_t i = 1; i < h.size(); ++i) CHECK(h[i] != h[i - 1]);
    std::vector<float> changed = m;
    changed[3 * 5 + 4] = std::nextafter(changed[3 * 5 + 4], 2.0f);  // one bit of row 3
    const auto g = row_hashes(changed, 5);
    for (std::size_t r = 0; r < h.size(); ++r) CHECK((g[r] != h[r]) == (r == 3));
    const VerifyResult r = compare_exact(g, h, 1);  // as the speed cases compare them: row 3 named
    CHECK(r.mismatches == 1);
    REQUIRE(r.first.has_value());
    CHECK(r.first->row == 3);
    std::vector<float> swapped = m;  // the same words in another order: another hash
    std::swap(swapped[0], swapped[1]);
    CHECK(row_hashes(swapped, 5)[0] != h[0]);
    std::vector<double> d(12, 1.0);  // 8-byte and 1-byte elements: every byte counts
    std::vector<double> d2 = d;
    d2[11] = std::nextafter(1.0, 2.0);
    CHECK(compare_exact(row_hashes(d2, 4), row_hashes(d, 4), 1).mismatches == 1);
    std::vector<char> c(7, 'a'), c2 = c;
    c2[6] = 'b';  // the last byte of a row of 7 (past the whole 4-byte words)
    CHECK(row_hashes(c2, 7) != row_hashes(c, 7));
    // FNV-1a's published test value: the 64-bit hash of the one byte 'a'.
    CHECK(row_hashes(std::vector<char>{'a'}, 1)[0] == 0xaf63dc4c8601ec8cull);
}

TEST_CASE("speed cases: speed_float(seed, i) is splitmix64 stepped i + 1 times; speed_floats is seeded, in [-1, 1)") {
    for (std::uint64_t seed : {0ull, 1ull, 0x5eedull, 0xffffffffull}) {
        std::uint64_t state = seed;  // splitmix64 as usually written: a state stepped by the golden ratio
        for (std::uint64_t i = 0; i < 1000; ++i) {
            std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            z ^= z >> 31;
            CHECK(speed_float(seed, i) == static_cast<float>(z >> 40) / 8388608.0f - 1.0f);
        }
    }
    const std::vector<float> a = speed_floats(100000, 1);
    CHECK(a == speed_floats(100000, 1));
    CHECK(a != speed_floats(100000, 2));
    int zeros = 0;
    double sum = 0;
    for (float x : a) {
        CHECK(x >= -1.0f);
        CHECK(x < 1.0f);
        zeros += x == 0.0f;
        sum += x;
    }
    CHECK(zeros < 3);
    CHECK(std::fabs(sum / a.size()) < 0.01);  // centred: both signs
}

// ---------------------------------------------------------------- the witness's memory (witness.hpp)

TEST_CASE("witness: an allocation is rounded up to whole 2 MiB pages, so a buffer's slack lies inside what is cleared") {
    CHECK(witness::kGranule == std::size_t{2} << 20);
    CHECK(witness::rounded(0) == 0);
    CHECK(witness::rounded(1) == witness::kGranule);
    CHECK(witness::rounded(4) == witness::kGranule);  // lesson 04's one float: its 3 floats of slack are in the span
    CHECK(witness::rounded(witness::kGranule) == witness::kGranule);
    CHECK(witness::rounded(witness::kGranule + 1) == 2 * witness::kGranule);
    CHECK(witness::rounded(std::size_t{256} << 20) == std::size_t{256} << 20);
    const std::size_t top = std::numeric_limits<std::size_t>::max();
    CHECK(witness::rounded(top - witness::kGranule + 1) == top - witness::kGranule + 1);
    CHECK_THROWS_AS(witness::rounded(top - witness::kGranule + 2), std::length_error);
    CHECK_THROWS_AS(witness::rounded(top), std::length_error);
}

TEST_CASE("witness: scrub() clears every span tracked, whole, and none that was freed") {
    REQUIRE(witness::spans().empty());  // (nothing is tracked outside the witness)
    alignas(64) static char a, b, c;    // addresses only: the stand-in below writes nothing
    witness::track(&a, 4);
    witness::track(&b, (std::size_t{3} << 20) + 5);
    witness::track(&c, 1);
    CHECK(witness::untrack(&b) == std::size_t{4} << 20);
    CHECK(witness::untrack(&b) == 0);  // freed twice, or never tracked: nothing
    std::vector<std::pair<void*, std::size_t>> cleared;
    witness::scrub([&](void* at, std::size_t bytes) { cleared.emplace_back(at, bytes); });
    const std::vector<std::pair<void*, std::size_t>> want{{&a, witness::kGranule}, {&c, witness::kGranule}};
    CHECK(cleared == want);
    CHECK(witness::spans().size() == 2);
    witness::untrack(&a);
    witness::untrack(&c);
    cleared.clear();
    witness::scrub([&](void* at, std::size_t bytes) { cleared.emplace_back(at, bytes); });
    CHECK(cleared.empty());
}

TEST_CASE("witness: a check's cudaMalloc goes through the witness (linked with --wrap), which tracks nothing outside it") {
    REQUIRE_FALSE(witness::active());
    const std::size_t before = witness::mallocs_seen();
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, 4);  // (no GPU: an error, which is fine; the call still went through)
    CHECK(witness::mallocs_seen() == before + 1);
    CHECK(witness::spans().empty());
    if (e == cudaSuccess) CHECK(cudaFree(p) == cudaSuccess);
    cudaGetLastError();
}

TEST_CASE("witness: each launch's seed is drawn afresh, not from the grader's seed") {
    const std::uint32_t first = witness::fresh_seed();
    bool differs = false;
    for (int i = 0; i < 8 && !differs; ++i) differs = witness::fresh_seed() != first;
    CHECK(differs);  // (eight equal draws of 32 random bits: 2^-224)
}
