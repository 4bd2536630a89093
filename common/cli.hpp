// cli.hpp — a tiny command-line parser: --name VALUE or --name=VALUE, range-checked, with --help.
//
// Bad input (not a number, out of range, unknown option) throws UsageError with one clear line;
// run_lesson() prints it and exits with code 2.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace course {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Parse a whole string as an integer in [min, max]; throws UsageError naming `what` otherwise.
/// Accepts plain decimal ("8192") and powers of two written "2^26"; nothing else ("8k", "1e3",
/// "12abc", "" and values that overflow are refused).
long long parse_integer(const std::string& text, const std::string& what, long long min, long long max);

class Cli {
public:
    Cli(std::string program, std::string summary);

    /// An integer option with a default (the current value) and an allowed range.
    Cli& option(const std::string& name, long long* value, const std::string& help, long long min, long long max);
    Cli& option(const std::string& name, int* value, const std::string& help, int min, int max);
    /// An integer option that takes only the listed values; any other value, in range or not, is
    /// refused with the same message: "--tile must be one of 0, 8, 16 (got '7')".
    Cli& option(const std::string& name, long long* value, const std::string& help, std::vector<long long> allowed);
    /// A string option (a file path, a kernel name).
    Cli& option(const std::string& name, std::string* value, const std::string& help);
    /// A switch without a value.
    Cli& flag(const std::string& name, bool* value, const std::string& help);

    /// A check run at the end of parse(), once every option has its value (e.g. that the --csv
    /// folder exists, so a typo is caught before minutes of timing, not after).
    Cli& after_parse(std::function<void()> check);

    /// Returns false if --help was given (the help text has been printed to stdout);
    /// throws UsageError on anything it does not understand. The program's name in the help text
    /// becomes the name it was started as (argv[0] without its folder), so an exercise built from
    /// a lesson's code calls itself exercise_NN_name.
    bool parse(int argc, const char* const* argv);
    std::string help() const;

    /// Whether `name` was on the command line (not merely left at its default).
    bool given(const std::string& name) const;
    /// Throws UsageError if both options were given: "--a and --b cannot be combined".
    void refuse_together(const std::string& a, const std::string& b) const;
    /// Throws UsageError if `option` was given without `needed`: "--a has no effect without --b".
    void refuse_without(const std::string& option, const std::string& needed) const;
    /// For each of `options` that was given, says on stderr "note: --a has no effect with --mode".
    void note_ignored(const std::string& mode, const std::vector<std::string>& options) const;

private:
    enum class Kind { Int, Text, Flag };
    struct Opt {
        std::string name, help;
        Kind kind;
        void* target;
        long long min, max;
        bool is_int32;
        std::vector<long long> allowed;  // if not empty, the only values accepted
    };
    std::string program_, summary_;
    std::vector<Opt> opts_;
    std::vector<std::string> given_;
    std::vector<std::function<void()>> checks_;
};

/// Throws UsageError (naming `option`) unless `path` can be written: its folder exists and the
/// file, new or old, can be opened for appending. Leaves no file behind if there was none.
void require_writable_file(const std::string& path, const std::string& option);

/// The options every timed lesson shares.
struct TimingOptions {
    int warmup = 3;
    int repeats = 20;
    std::string csv;  // if set, results are appended to this CSV file
};
/// Adds --warmup, --repeats and --csv; a --csv path that cannot be written is refused by parse().
void add_timing_options(Cli& cli, TimingOptions& options);

}  // namespace course
