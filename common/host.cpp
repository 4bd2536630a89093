// host.cpp — the host-only half of common/: verification, parsing, the results table.
#include "cli.hpp"
#include "measure.hpp"
#include "results.hpp"
#include "verify.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace course {

// ---------------------------------------------------------------- timing

double median(std::vector<double> samples) {
    if (samples.empty()) throw std::invalid_argument("median of no samples");
    const std::size_t mid = samples.size() / 2;
    std::nth_element(samples.begin(), samples.begin() + mid, samples.end());
    const double upper = samples[mid];
    if (samples.size() % 2 == 1) return upper;
    const double lower = *std::max_element(samples.begin(), samples.begin() + mid);
    return (lower + upper) / 2;
}

// ---------------------------------------------------------------- verification

std::string VerifyResult::summary() const {
    std::ostringstream s;
    if (ok()) {
        s << "ok (" << checked << " elements)";
        return s.str();
    }
    if (checked == 0) {
        s << "FAIL: output and reference differ in size or shape";
        return s.str();
    }
    s << "FAIL: " << mismatches << " of " << checked << " differ";
    if (first)
        s << ", first at (" << first->row << ", " << first->col << "): got " << first->got
          << ", expected " << first->expected;
    return s.str();
}

VerifyResult compare_close(const std::vector<float>& got, const std::vector<double>& expected,
                           std::size_t cols, Tolerance tol) {
    VerifyResult r;
    if (got.size() != expected.size() || cols == 0) {
        r.mismatches = std::max(got.size(), expected.size());
        return r;
    }
    r.checked = got.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double g = got[i], e = expected[i];
        const double err = std::fabs(g - e);
        const bool good = std::isfinite(g) && err <= tol.abs_tol + tol.rel_tol * std::fabs(e);
        if (std::isfinite(g)) r.max_abs_error = std::max(r.max_abs_error, err);
        if (good) continue;
        if (r.mismatches++ == 0) r.first = Mismatch{i, i / cols, i % cols, g, e};
    }
    return r;
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo, float hi) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(gen);
    return v;
}

std::vector<int> random_ints(std::size_t n, std::uint32_t seed, int lo, int hi) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> dist(lo, hi);
    std::vector<int> v(n);
    for (auto& x : v) x = dist(gen);
    return v;
}

// ---------------------------------------------------------------- command line

long long parse_integer(const std::string& text, const std::string& what, long long min, long long max) {
    auto fail = [&](const std::string& why) -> long long {
        throw UsageError(what + " " + why + " (got '" + text + "')");
    };
    auto digits_only = [](const std::string& s) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    const std::string range = "must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
    long long value = 0;
    const auto caret = text.find('^');
    if (caret != std::string::npos) {  // "2^26"
        const std::string base = text.substr(0, caret), exp = text.substr(caret + 1);
        if (base != "2" || !digits_only(exp) || exp.size() > 2 || std::stoi(exp) > 62) return fail(range);
        value = 1LL << std::stoi(exp);
    } else {
        std::string body = text;
        bool negative = false;
        if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
            negative = body[0] == '-';
            body = body.substr(1);
        }
        if (!digits_only(body)) return fail(range);
        errno = 0;
        const unsigned long long magnitude = std::strtoull(body.c_str(), nullptr, 10);
        if (errno == ERANGE || magnitude > static_cast<unsigned long long>(INT64_MAX)) return fail(range);
        value = negative ? -static_cast<long long>(magnitude) : static_cast<long long>(magnitude);
    }
    if (value < min || value > max) return fail(range);
    return value;
}

namespace {
std::string join_values(const std::vector<long long>& values) {  // "0, 8, 16"
    std::string text;
    for (long long v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
    return text;
}
}  // namespace

Cli::Cli(std::string program, std::string summary) : program_(std::move(program)), summary_(std::move(summary)) {}

Cli& Cli::option(const std::string& name, long long* value, const std::string& help, long long min, long long max) {
    opts_.push_back({name, help, Kind::Int, value, min, max, false, {}});
    return *this;
}
Cli& Cli::option(const std::string& name, int* value, const std::string& help, int min, int max) {
    opts_.push_back({name, help, Kind::Int, value, min, max, true, {}});
    return *this;
}
Cli& Cli::option(const std::string& name, long long* value, const std::string& help, std::vector<long long> allowed) {
    if (allowed.empty()) throw std::logic_error("Cli::option " + name + ": empty list of allowed values");
    const auto [lo, hi] = std::minmax_element(allowed.begin(), allowed.end());
    opts_.push_back({name, help, Kind::Int, value, *lo, *hi, false, std::move(allowed)});
    return *this;
}
Cli& Cli::option(const std::string& name, std::string* value, const std::string& help) {
    opts_.push_back({name, help, Kind::Text, value, 0, 0, false, {}});
    return *this;
}
Cli& Cli::flag(const std::string& name, bool* value, const std::string& help) {
    opts_.push_back({name, help, Kind::Flag, value, 0, 0, false, {}});
    return *this;
}
Cli& Cli::after_parse(std::function<void()> check) {
    checks_.push_back(std::move(check));
    return *this;
}

bool Cli::given(const std::string& name) const {
    return std::find(given_.begin(), given_.end(), name) != given_.end();
}
void Cli::refuse_together(const std::string& a, const std::string& b) const {
    if (given(a) && given(b)) throw UsageError(a + " and " + b + " cannot be combined (see --help)");
}
void Cli::refuse_without(const std::string& option, const std::string& needed) const {
    if (given(option) && !given(needed)) throw UsageError(option + " has no effect without " + needed + " (see --help)");
}
void Cli::note_ignored(const std::string& mode, const std::vector<std::string>& options) const {
    for (const auto& o : options)
        if (given(o)) std::fprintf(stderr, "note: %s has no effect with %s\n", o.c_str(), mode.c_str());
}

std::string Cli::help() const {
    std::ostringstream s;
    s << "usage: " << program_ << " [options]\n\n" << summary_ << "\n\noptions:\n";
    for (const auto& o : opts_) {
        std::string left = "  " + o.name;
        std::string dflt;
        if (o.kind == Kind::Int) {
            left += " N";
            const long long cur = o.is_int32 ? *static_cast<int*>(o.target) : *static_cast<long long*>(o.target);
            dflt = " (default " + std::to_string(cur) + ", " +
                   (o.allowed.empty() ? "range " + std::to_string(o.min) + ".." + std::to_string(o.max)
                                      : "one of " + join_values(o.allowed)) + ")";
        } else if (o.kind == Kind::Text) {
            left += " TEXT";
            const auto& cur = *static_cast<std::string*>(o.target);
            if (!cur.empty()) dflt = " (default " + cur + ")";
        }
        if (left.size() < 24) left.resize(24, ' ');
        else left += "  ";
        s << left << o.help << dflt << "\n";
    }
    s << "  --help                print this help and exit\n";
    return s.str();
}

bool Cli::parse(int argc, const char* const* argv) {
    if (argc > 0 && argv[0] && *argv[0]) program_ = std::filesystem::path(argv[0]).filename().string();
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::cout << help();
            return false;
        }
        std::string value;
        bool has_value = false;
        if (const auto eq = arg.find('='); eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_value = true;
        }
        auto it = std::find_if(opts_.begin(), opts_.end(), [&](const Opt& o) { return o.name == arg; });
        if (it == opts_.end()) throw UsageError("unknown option '" + arg + "' (see --help)");
        given_.push_back(arg);
        if (it->kind == Kind::Flag) {
            if (has_value) throw UsageError(arg + " takes no value");
            *static_cast<bool*>(it->target) = true;
            continue;
        }
        if (!has_value) {
            if (i + 1 >= argc) throw UsageError(arg + " needs a value (see --help)");
            value = argv[++i];
        }
        if (it->kind == Kind::Text) {
            if (value.empty()) throw UsageError(arg + " needs a non-empty value");
            *static_cast<std::string*>(it->target) = value;
        } else if (!it->allowed.empty()) {
            long long v = 0;
            bool is_number = true;  // not a number, or out of range: refused with the list too
            try {
                v = parse_integer(value, arg, it->min, it->max);
            } catch (const UsageError&) {
                is_number = false;
            }
            if (!is_number || std::find(it->allowed.begin(), it->allowed.end(), v) == it->allowed.end())
                throw UsageError(arg + " must be one of " + join_values(it->allowed) + " (got '" + value + "')");
            *static_cast<long long*>(it->target) = v;
        } else if (it->is_int32) {
            *static_cast<int*>(it->target) = static_cast<int>(parse_integer(value, arg, it->min, it->max));
        } else {
            *static_cast<long long*>(it->target) = parse_integer(value, arg, it->min, it->max);
        }
    }
    for (const auto& check : checks_) check();
    return true;
}

void require_writable_file(const std::string& path, const std::string& option) {
    namespace fs = std::filesystem;
    const fs::path p(path);
    const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        throw UsageError(option + " '" + path + "': the folder '" + folder.string() + "' does not exist");
    if (fs::is_directory(p, ec)) throw UsageError(option + " '" + path + "' is a folder, not a file");
    const bool existed = fs::exists(p, ec);
    errno = 0;
    const bool writable = std::ofstream(path, std::ios::app).good();  // appending changes nothing yet
    const int why = errno;
    if (!existed) fs::remove(p, ec);
    if (!writable)
        throw UsageError(option + " '" + path + "' cannot be written" + (why ? std::string(": ") + std::strerror(why) : ""));
}

void add_timing_options(Cli& cli, TimingOptions& options) {
    cli.option("--warmup", &options.warmup, "untimed launches before timing", 0, 1000)
        .option("--repeats", &options.repeats, "timed launches; the median is reported", 1, 10000)
        .option("--csv", &options.csv, "append the results table to this CSV file (its folder must exist)")
        .after_parse([&options] {
            if (!options.csv.empty()) require_writable_file(options.csv, "--csv");
        });
}

// ---------------------------------------------------------------- results table

ResultsTable::ResultsTable(std::string problem, std::string rate_unit)
    : problem_(std::move(problem)), unit_(std::move(rate_unit)) {}

void ResultsTable::add(const std::string& kernel, double ms, double rate, const std::string& check, bool is_ceiling) {
    rows_.push_back({kernel, ms, rate, check, is_ceiling});
}

double ResultsTable::ceiling() const {
    for (const auto& r : rows_)
        if (r.is_ceiling) return r.rate;
    return 0;
}

double ResultsTable::percent_of_ceiling(const ResultRow& row) const {
    const double c = ceiling();
    return c > 0 ? 100.0 * row.rate / c : -1;
}

void ResultsTable::print(std::FILE* out) const {
    std::size_t width = 6;
    for (const auto& r : rows_) width = std::max(width, r.kernel.size());
    std::fprintf(out, "\n%s\n", problem_.c_str());
    std::fprintf(out, "  %-*s  %10s  %10s  %11s  %s\n", static_cast<int>(width), "kernel", "ms", unit_.c_str(),
                 "% ceiling", "check");
    for (const auto& r : rows_) {
        const double pct = percent_of_ceiling(r);
        char pct_text[32] = "-";
        if (pct >= 0) std::snprintf(pct_text, sizeof pct_text, "%.1f%%%s", pct, r.is_ceiling ? "*" : "");
        std::fprintf(out, "  %-*s  %10.4f  %10.1f  %11s  %s\n", static_cast<int>(width), r.kernel.c_str(), r.ms,
                     r.rate, pct_text, r.check.c_str());
    }
    if (ceiling() > 0) std::fprintf(out, "  (* the ceiling, measured in this run)\n");
}

static std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

void ResultsTable::append_csv(const std::string& path, const std::string& lesson, const std::string& gpu) const {
    std::error_code ec;  // a missing or empty file gets the header line
    const bool fresh = !std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0;
    std::ofstream f(path, std::ios::app);
    if (!f) throw std::runtime_error("cannot write CSV file '" + path + "'");
    if (fresh) f << "lesson,gpu,problem,kernel,ms,rate,unit,percent_of_ceiling,check\n";
    for (const auto& r : rows_) {
        f << csv_field(lesson) << ',' << csv_field(gpu) << ',' << csv_field(problem_) << ',' << csv_field(r.kernel)
          << ',' << r.ms << ',' << r.rate << ',' << unit_ << ',' << percent_of_ceiling(r) << ',' << csv_field(r.check) << '\n';
    }
    if (!f) throw std::runtime_error("error while writing CSV file '" + path + "'");
}

}  // namespace course
