// transcript.cpp — the runner's record and the judge's lookup (see transcript.hpp).
//
// File format: the line "course-transcript 1\n", then records, each
//   u32 key length, key ("test case name#position"), u32 type length, type, u64 byte count, bytes
// in the machine's byte order (runner and judge run on the same machine). The judge treats the
// file as hostile: every length is checked against what is left of the file before it is used.
#include "transcript.hpp"

#include "cli.hpp"
#include "course_lessons.hpp"  // generated from lessons/lessons.txt

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace course {
namespace transcript {
namespace {

constexpr char kMagic[] = "course-transcript 1\n";
constexpr std::size_t kMaxKey = 4096;

struct Entry {
    std::string type;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

struct State {
    Role role = Role::Plain;
    std::FILE* file = nullptr;        // runner: written; judge: read
    std::map<std::string, Entry> index;  // judge
    std::string malformed;           // judge: why the index stops early, if it does
    std::string test_case;
    std::size_t position = 0;
    Counts counts;
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

}  // namespace

Role role() { return state().role; }

void start_recording(const std::string& path) {
    State& s = state();
    // "/dev/fd/N": a file the grader opened for this process (grade.sh passes fd 3), written as it is.
    s.file = path.rfind("/dev/fd/", 0) == 0 ? fdopen(std::atoi(path.c_str() + 8), "wb") : std::fopen(path.c_str(), "wb");
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
    const long end_l = std::ftell(s.file);
    const std::uint64_t end = end_l < 0 ? 0 : static_cast<std::uint64_t>(end_l);
    std::fseek(s.file, 0, SEEK_SET);
    char magic[sizeof kMagic - 1];
    if (std::fread(magic, 1, sizeof magic, s.file) != sizeof magic || std::memcmp(magic, kMagic, sizeof magic) != 0) {
        s.malformed = "the transcript does not start as one (forged, or the run never opened it)";
        return;
    }
    std::uint64_t at = sizeof magic;
    auto bad = [&](const char* why) {
        std::ostringstream m;
        m << "the transcript is malformed at byte " << at << " (" << why << ")";
        s.malformed = m.str();
    };
    while (at < end) {
        std::uint32_t key_len = 0, type_len = 0;
        std::uint64_t bytes = 0;
        if (!read_plain(s.file, key_len) || key_len == 0 || key_len > kMaxKey) return bad("key length");
        std::string key(key_len, '\0');
        if (std::fread(key.data(), 1, key_len, s.file) != key_len) return bad("key");
        if (!read_plain(s.file, type_len) || type_len == 0 || type_len > kMaxKey) return bad("type length");
        std::string type(type_len, '\0');
        if (std::fread(type.data(), 1, type_len, s.file) != type_len) return bad("type");
        if (!read_plain(s.file, bytes)) return bad("byte count");
        const std::uint64_t data_at = at + 4 + key_len + 4 + type_len + 8;
        if (bytes > end - data_at) return bad("byte count past the end of the file");
        s.index.emplace(std::move(key), Entry{std::move(type), data_at, bytes});  // the first of duplicates
        at = data_at + bytes;
        if (std::fseek(s.file, static_cast<long>(at), SEEK_SET) != 0) return bad("seek");
    }
}

void stop() {
    State& s = state();
    if (s.file) std::fclose(s.file);
    const Counts running = s.counts;  // running totals: the verdict's counts are differences of them
    s = State{};
    s.counts = running;
}

void begin_test_case(const std::string& name) {
    state().test_case = name;
    state().position = 0;
}

void set_lesson(const std::string& name) { lesson_name() = name; }
const std::string& lesson() { return lesson_name(); }

std::size_t missing_count() { return state().counts.missing; }
std::size_t inconsistent_count() { return state().counts.inconsistent; }
Counts counts() { return state().counts; }

void exchange(const char* type, void* data, std::size_t bytes) {
    State& s = state();
    ++s.counts.asked;
    if (s.role == Role::Plain) {
        ++s.counts.submitted;
        return;
    }
    const std::string key = s.test_case + "#" + std::to_string(++s.position);
    if (s.role == Role::Record) {
        const std::uint32_t key_len = static_cast<std::uint32_t>(key.size());
        const std::uint32_t type_len = static_cast<std::uint32_t>(std::strlen(type));
        const std::uint64_t n = bytes;
        bool ok = std::fwrite(&key_len, sizeof key_len, 1, s.file) == 1 && std::fwrite(key.data(), 1, key_len, s.file) == key_len &&
                  std::fwrite(&type_len, sizeof type_len, 1, s.file) == 1 && std::fwrite(type, 1, type_len, s.file) == type_len &&
                  std::fwrite(&n, sizeof n, 1, s.file) == 1 && (bytes == 0 || std::fwrite(data, 1, bytes, s.file) == bytes);
        ok = std::fflush(s.file) == 0 && ok;  // a crash later must not lose what is already known
        if (!ok) throw std::runtime_error("--record: could not write the transcript (file size limit or disk full?)");
        ++s.counts.submitted;
        return;
    }
    const std::string where = "value #" + std::to_string(s.position) + " of this test case";
    const auto it = s.index.find(key);
    if (it == s.index.end()) {
        ++s.counts.missing;
        throw SubmissionOutputError("the submission's run recorded no " + where +
                                    (s.malformed.empty() ? std::string(" (it stopped, crashed or went another way before it)")
                                                         : "; " + s.malformed));
    }
    const Entry& e = it->second;
    if (e.type != type || e.bytes != bytes) {
        ++s.counts.inconsistent;
        std::ostringstream m;
        m << "inconsistent transcript: the submission's " << where << " is " << e.bytes << " bytes";
        if (e.type != type) m << " of another type";
        m << ", the check expects " << bytes << " bytes";
        throw SubmissionOutputError(m.str());
    }
    if (bytes > 0 && (std::fseek(s.file, static_cast<long>(e.offset), SEEK_SET) != 0 || std::fread(data, 1, bytes, s.file) != bytes)) {
        ++s.counts.inconsistent;
        throw SubmissionOutputError("the transcript could not be read at " + where);
    }
    ++s.counts.submitted;
}

}  // namespace transcript

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
