// transcript.cpp — the runner's record and the judge's lookup (see transcript.hpp).
//
// File format: the line "course-transcript 1\n", then records, each
//   u32 key length, key ("test case name#position"), u32 type length, type, u64 byte count, bytes
// in the machine's byte order (runner and judge run on the same machine). The judge treats the
// file as hostile: every length is checked against what is left of the file before it is used.
//
// The judge reads it in order and holds one record at a time, never the records' values: the
// runner and the judge run the same test cases in the same order, each asking its values in the
// same order, so the value the judge asks for next is at the record it has reached, or missing.
// A record of a test case already judged, or of this one at an earlier position, is what the judge
// did not ask for: skipped (seeked over, unread). A record of a test case the judge has not begun
// means that the value asked for is missing; the record waits for its own test case. A value is
// read only when its type and byte count are the ones the check asks for, into the check's own
// buffer: what the judge holds is bounded by what its check asks for, whatever the file says. At
// most kMaxRecords records are read in one run (far more than any check asks for): past that the
// file counts as malformed.
//
// A speed record (course::speed) is a record like the others, at its position in its test case, of
// the type "course::speed 1" and exactly 32 bytes (SpeedRecord below): the judge reads it only if
// both match, so a forged one costs what any other record costs.
#include "transcript.hpp"

#include "cli.hpp"
#include "course_lessons.hpp"  // generated from lessons/lessons.txt

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace course {
namespace transcript {
namespace {

constexpr char kMagic[] = "course-transcript 1\n";
constexpr std::size_t kMaxKey = 4096;   // a test case's name, '#', a position
constexpr std::size_t kMaxType = 1024;  // a C++ type's mangled name
constexpr std::uint64_t kMaxRecords = std::uint64_t{1} << 20;

/// The judge's view of the record it has reached (its value stays in the file).
struct Record {
    std::string test_case;
    std::uint64_t position = 0;
    std::string type;
    std::uint64_t data_at = 0, bytes = 0;  // where its value is in the file, and how long
    std::uint64_t next_at = 0;             // where the next record starts
};

struct State {
    Role role = Role::Plain;
    std::FILE* file = nullptr;  // runner: written; judge: read
    // The judge:
    std::uint64_t at = 0, end = 0;  // the next record to read, the file's size
    bool has_record = false;        // `record` is read and not yet consumed
    Record record;
    std::uint64_t records_read = 0;
    std::set<std::string> begun;  // the test cases begun so far (a few dozen names)
    std::string malformed;        // why no record can be read past `at`, if one cannot
    // Both:
    std::string test_case;
    std::size_t position = 0;
    Counts counts;
    bool small = false;                                // --small
    std::vector<verdict::SpeedEvidence> evidence;      // the judge's, for the verdict
};
State& state() {
    static State s;
    return s;
}
std::string& lesson_name() {  // set before main() (testing.hpp): a function's static is there in time
    static std::string name;
    return name;
}

template <class T>
bool read_plain(std::FILE* f, T& v) {
    return std::fread(&v, sizeof v, 1, f) == 1;
}

/// Judge: reads the header of the record at s.at into s.record. False at the end of the file, or
/// if it is malformed (s.malformed then says where and why, and nothing more is read).
bool read_record(State& s) {
    if (s.has_record) return true;
    if (!s.file || !s.malformed.empty() || s.at >= s.end) return false;
    auto bad = [&](const char* why) {
        std::ostringstream m;
        m << "the transcript is malformed at byte " << s.at << " (" << why << ")";
        s.malformed = m.str();
        return false;
    };
    if (++s.records_read > kMaxRecords) return bad("more records than any check asks for");
    if (std::fseek(s.file, static_cast<long>(s.at), SEEK_SET) != 0) return bad("seek");
    std::uint32_t key_len = 0, type_len = 0;
    std::uint64_t bytes = 0;
    if (!read_plain(s.file, key_len) || key_len == 0 || key_len > kMaxKey) return bad("key length");
    std::string key(key_len, '\0');
    if (std::fread(key.data(), 1, key_len, s.file) != key_len) return bad("key");
    if (!read_plain(s.file, type_len) || type_len == 0 || type_len > kMaxType) return bad("type length");
    std::string type(type_len, '\0');
    if (std::fread(type.data(), 1, type_len, s.file) != type_len) return bad("type");
    if (!read_plain(s.file, bytes)) return bad("byte count");
    const std::uint64_t data_at = s.at + 4 + key_len + 4 + type_len + 8;
    if (bytes > s.end - data_at) return bad("byte count past the end of the file");
    const std::size_t hash = key.rfind('#');
    if (hash == std::string::npos || hash + 1 == key.size() || key.size() - hash > 20 ||
        key.find_first_not_of("0123456789", hash + 1) != std::string::npos)
        return bad("key is not \"test case#position\"");
    s.record.test_case = key.substr(0, hash);
    s.record.position = std::strtoull(key.c_str() + hash + 1, nullptr, 10);
    s.record.type = std::move(type);
    s.record.data_at = data_at;
    s.record.bytes = bytes;
    s.record.next_at = data_at + bytes;
    s.has_record = true;
    return true;
}

/// Judge: moves past the record read last.
void consume(State& s) {
    s.at = s.record.next_at;
    s.has_record = false;
}

}  // namespace

Role role() { return state().role; }

std::FILE* open_output(const std::string& path, const char* mode) {
    return path.rfind("/dev/fd/", 0) == 0 ? fdopen(std::atoi(path.c_str() + 8), mode) : std::fopen(path.c_str(), mode);
}

void start_recording(const std::string& path) {
    State& s = state();
    s.file = open_output(path, "wb");  // grade.sh passes fd 3
    if (!s.file) throw std::runtime_error("--record " + path + ": " + std::strerror(errno));
    if (std::fwrite(kMagic, 1, sizeof kMagic - 1, s.file) != sizeof kMagic - 1 || std::fflush(s.file) != 0)
        throw std::runtime_error("--record " + path + ": cannot write");
    s.role = Role::Record;
}

void start_judging(const std::string& path) {
    State& s = state();
    s.role = Role::Judge;
    s.file = std::fopen(path.c_str(), "rb");
    if (!s.file) {
        s.malformed = std::string("there is no transcript (") + std::strerror(errno) + ")";
        return;
    }
    std::fseek(s.file, 0, SEEK_END);
    const long end = std::ftell(s.file);
    s.end = end < 0 ? 0 : static_cast<std::uint64_t>(end);
    std::fseek(s.file, 0, SEEK_SET);
    char magic[sizeof kMagic - 1];
    if (std::fread(magic, 1, sizeof magic, s.file) != sizeof magic || std::memcmp(magic, kMagic, sizeof magic) != 0) {
        s.malformed = "the transcript does not start as one (forged, or the run never opened it)";
        return;
    }
    s.at = sizeof magic;
}

void stop() {
    State& s = state();
    if (s.file) std::fclose(s.file);
    State kept = State{};  // what belongs to the whole run: the running totals (the verdict's counts
    kept.counts = s.counts;  // are differences of them), the evidence so far, --small
    kept.evidence = std::move(s.evidence);
    kept.small = s.small;
    s = std::move(kept);
}

void begin_test_case(const std::string& name) {
    State& s = state();
    s.test_case = name;
    s.position = 0;
    if (s.role == Role::Judge) s.begun.insert(name);
}

void set_lesson(const std::string& name) { lesson_name() = name; }
const std::string& lesson() { return lesson_name(); }

std::size_t missing_count() { return state().counts.missing; }
std::size_t inconsistent_count() { return state().counts.inconsistent; }
Counts counts() { return state().counts; }

namespace {

/// Runner: appends one record (key = this test case and the next position). Throws if it cannot.
void write_record(State& s, const char* type, const void* data, std::size_t bytes) {
    const std::string key = s.test_case + "#" + std::to_string(++s.position);
    const std::uint32_t key_len = static_cast<std::uint32_t>(key.size());
    const std::uint32_t type_len = static_cast<std::uint32_t>(std::strlen(type));
    const std::uint64_t n = bytes;
    bool ok = std::fwrite(&key_len, sizeof key_len, 1, s.file) == 1 && std::fwrite(key.data(), 1, key_len, s.file) == key_len &&
              std::fwrite(&type_len, sizeof type_len, 1, s.file) == 1 && std::fwrite(type, 1, type_len, s.file) == type_len &&
              std::fwrite(&n, sizeof n, 1, s.file) == 1 && (bytes == 0 || std::fwrite(data, 1, bytes, s.file) == bytes);
    ok = std::fflush(s.file) == 0 && ok;  // a crash later must not lose what is already known
    if (!ok) throw std::runtime_error("--record: could not write the transcript (file size limit or disk full?)");
}

enum class Lookup { Found, Missing, Inconsistent };

/// Judge: the value at the next position of this test case, read into `data` where it has this
/// type and size. Otherwise `why` says what is wrong, and nothing is read.
Lookup look_up(State& s, const char* type, void* data, std::size_t bytes, std::string& why) {
    const std::string where = "value #" + std::to_string(++s.position) + " of this test case";
    // The record at hand, past those the judge did not ask for (see the top of this file).
    bool found = false;
    while (read_record(s)) {
        const Record& r = s.record;
        const bool this_case = r.test_case == s.test_case;
        if ((this_case && r.position < s.position) || (!this_case && s.begun.count(r.test_case) > 0)) {
            consume(s);
            continue;
        }
        found = this_case && r.position == s.position;
        break;  // this value, or one that comes later: then this one is missing
    }
    if (!found) {
        why = "the submission's run recorded no " + where +
              (s.malformed.empty() ? std::string(" (it stopped, crashed or went another way before it)") : "; " + s.malformed);
        return Lookup::Missing;
    }
    const Record r = s.record;
    consume(s);
    if (r.type != type || r.bytes != bytes) {
        std::ostringstream m;
        m << "inconsistent transcript: the submission's " << where << " is " << r.bytes << " bytes";
        if (r.type != type) m << " of another type";
        m << ", the check expects " << bytes << " bytes";
        why = m.str();
        return Lookup::Inconsistent;
    }
    if (bytes > 0 && (std::fseek(s.file, static_cast<long>(r.data_at), SEEK_SET) != 0 || std::fread(data, 1, bytes, s.file) != bytes)) {
        why = "the transcript could not be read at " + where;
        return Lookup::Inconsistent;
    }
    return Lookup::Found;
}

}  // namespace

void exchange(const char* type, void* data, std::size_t bytes) {
    State& s = state();
    ++s.counts.asked;
    if (s.role == Role::Plain) {
        ++s.counts.submitted;
        return;
    }
    if (s.role == Role::Record) {
        write_record(s, type, data, bytes);
        ++s.counts.submitted;
        return;
    }
    std::string why;
    switch (look_up(s, type, data, bytes, why)) {
        case Lookup::Found: ++s.counts.submitted; return;
        case Lookup::Missing: ++s.counts.missing; break;
        case Lookup::Inconsistent: ++s.counts.inconsistent; break;
    }
    throw SubmissionOutputError(why);
}

const std::vector<verdict::SpeedEvidence>& evidence() { return state().evidence; }

namespace {

/// A speed record's value: fixed size, so a record of any other size is refused unread.
struct SpeedRecord {
    double ms, ceiling_ms, spread;
    std::uint32_t runs, unused;
};
static_assert(sizeof(SpeedRecord) == 32, "a speed record is 32 bytes");
constexpr char kSpeedType[] = "course::speed 1";  // no C++ type's mangled name looks like this

std::string& evidence_file() {
    static std::string path;
    return path;
}

/// One line of --evidence FILE (JSON Lines): the measurement of this process.
std::string evidence_line(const verdict::SpeedEvidence& e, const verdict::SpeedSample& m, const std::string& gpu) {
    using verdict::json_number;
    using verdict::json_string;
    return "{\"exercise\":" + json_string(e.exercise) + ",\"kernel\":" + json_string(e.kernel) + ",\"ms\":" + json_number(m.ms) +
           ",\"ceiling\":" + json_string(e.ceiling) + ",\"ceiling_ms\":" + json_number(m.ceiling_ms) +
           ",\"runs\":" + std::to_string(m.runs) + ",\"spread\":" + json_number(m.spread) + ",\"gpu\":" + json_string(gpu) +
           ",\"shape\":" + json_string(e.shape) + "}\n";
}

}  // namespace

}  // namespace transcript

void set_evidence_file(const std::string& path) {
    transcript::evidence_file().clear();
    if (path.empty()) return;
    std::FILE* f = std::fopen(path.c_str(), "ab");
    if (!f) throw UsageError("--evidence " + path + ": cannot append to it (" + std::strerror(errno) + ")");
    std::fclose(f);
    transcript::evidence_file() = path;
}

void set_small_run(bool small) { transcript::state().small = small; }
bool small_run() { return transcript::state().small; }

void speed(const std::string& exercise, const std::string& kernel, double ms, const std::string& ceiling, double ceiling_ms,
           const SpeedDetails& details) {
    using transcript::Lookup;
    transcript::State& s = transcript::state();
    verdict::SpeedEvidence e;
    e.exercise = exercise;
    e.test_case = s.test_case;
    e.kernel = kernel;
    e.ceiling = ceiling;
    e.shape = details.shape;
    e.solution = verdict::SpeedSample{ms, ceiling_ms, details.runs, details.spread};  // this process's (the judge's: the course's)

    std::printf("speed %s: %s %.3f ms, %s %.3f ms (%.1f%% of the ceiling) on %s\n", exercise.c_str(), kernel.c_str(), ms,
                ceiling.c_str(), ceiling_ms, ms > 0 ? 100.0 * ceiling_ms / ms : 0.0,
                details.gpu.empty() ? "this GPU" : details.gpu.c_str());
    std::fflush(stdout);
    if (!transcript::evidence_file().empty()) {
        const std::string line = transcript::evidence_line(e, e.solution, details.gpu);
        std::FILE* f = std::fopen(transcript::evidence_file().c_str(), "ab");
        const bool ok = f && std::fwrite(line.data(), 1, line.size(), f) == line.size();
        if (f && std::fclose(f) != 0) throw std::runtime_error("--evidence " + transcript::evidence_file() + ": could not write");
        if (!ok) throw std::runtime_error("--evidence " + transcript::evidence_file() + ": could not write");
    }

    transcript::SpeedRecord r{ms, ceiling_ms, details.spread, details.runs, 0};
    if (s.role == transcript::Role::Record) transcript::write_record(s, transcript::kSpeedType, &r, sizeof r);
    if (s.role != transcript::Role::Judge) return;
    std::string why;
    const Lookup found = transcript::look_up(s, transcript::kSpeedType, &r, sizeof r, why);
    const bool plausible_numbers = std::isfinite(r.ms) && std::isfinite(r.ceiling_ms) && std::isfinite(r.spread);
    if (found == Lookup::Found && plausible_numbers) e.submission = verdict::SpeedSample{r.ms, r.ceiling_ms, r.runs, r.spread};
    s.evidence.push_back(e);  // a missing record: "submission": null, and the test case goes on
    if (found == Lookup::Found && !plausible_numbers) why = "inconsistent transcript: the submission's speed record holds a number that is not finite";
    if (found == Lookup::Inconsistent || (found == Lookup::Found && !plausible_numbers)) {
        ++s.counts.inconsistent;
        throw SubmissionOutputError(why);
    }
    if (e.submission)
        std::printf("speed %s: the submission's run recorded %.3f ms, %s %.3f ms\n", exercise.c_str(), r.ms, ceiling.c_str(), r.ceiling_ms);
}


namespace {
std::uint32_t g_input_seed = 0;
std::string g_hidden_shapes_file;
}  // namespace

std::uint32_t input_seed() { return g_input_seed; }
void set_input_seed(std::uint32_t seed) { g_input_seed = seed; }
void set_hidden_shapes_file(const std::string& path) { g_hidden_shapes_file = path; }

namespace {
/// How many numbers a hidden shape of `lesson` has (lessons/lessons.txt); 0 if it is not listed.
std::size_t hidden_shape_arity(const std::string& lesson) {
    for (const GradableLesson& l : kGradableLessons)
        if (lesson == l.name) return l.hidden_shape_arity;
    return 0;
}
}  // namespace

std::vector<std::vector<long long>> hidden_shapes(const std::string& lesson, std::size_t n, long long max) {
    std::vector<std::vector<long long>> shapes;
    if (!lesson.empty() && hidden_shape_arity(lesson) != n)
        throw std::logic_error("hidden_shapes(\"" + lesson + "\", " + std::to_string(n) +
                               "): lessons/lessons.txt gives this lesson " + std::to_string(hidden_shape_arity(lesson)) +
                               " number(s) per hidden shape");
    if (g_hidden_shapes_file.empty()) return shapes;
    std::ifstream in(g_hidden_shapes_file);
    if (!in) throw UsageError("--hidden-shapes " + g_hidden_shapes_file + ": cannot read it");
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        const std::string where = g_hidden_shapes_file + ":" + std::to_string(number) + ": ";
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        std::string name;
        if (!(words >> name)) continue;  // a blank or comment line
        const std::size_t arity = hidden_shape_arity(name);
        if (arity == 0) throw UsageError(where + "\"" + name + "\" is not a gradable lesson (lessons/lessons.txt)");
        std::vector<long long> shape;
        for (std::string w; words >> w;)
            shape.push_back(parse_integer(w, where + name + " shape", 1, name == lesson ? max : 2147483647LL));
        if (shape.size() != arity)
            throw UsageError(where + name + " takes " + std::to_string(arity) + " number(s) per shape, this line has " +
                             std::to_string(shape.size()));
        if (name == lesson) shapes.push_back(std::move(shape));
    }
    return shapes;
}

}  // namespace course
