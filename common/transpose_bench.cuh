// transpose_bench.cuh — the bench every transposing lesson times its kernels on: a rows x cols
// matrix of random floats on the GPU, the output, the CPU reference, and the results table, which
// starts with the ceiling (cudaMemcpy device-to-device, timed in the same run).
#pragma once

#include "lesson.cuh"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace course {

/// The command line every transposing lesson shares: the matrix, and how to time.
struct TransposeOptions {
    long long rows = 8192, cols = 8192;  // 256 MiB each way: far larger than L2
    TimingOptions timing;
};
/// Adds --rows, --cols (1..65536 each) and the timing options (--warmup, --repeats, --csv).
inline Cli& add_transpose_options(Cli& cli, TransposeOptions& o) {
    cli.option("--rows", &o.rows, "rows of the input matrix", 1, 65536)
        .option("--cols", &o.cols, "columns of the input matrix", 1, 65536);
    add_timing_options(cli, o.timing);
    return cli;
}
/// After parsing: the kernels index with int, so a matrix of 2^31 elements or more is refused.
inline void check_transpose_options(const TransposeOptions& o) {
    if (o.rows * o.cols > INT32_MAX) throw UsageError("--rows x --cols must stay below 2^31 elements");
}

class TransposeBench {
public:
    /// Refuses (exit code 4) a size whose two matrices do not fit in GPU memory.
    TransposeBench(long long rows, long long cols, const TimingOptions& timing)
        : rows_(static_cast<int>(rows)), cols_(static_cast<int>(cols)), timing_(timing),
          bytes_(2.0 * static_cast<double>(rows) * static_cast<double>(cols) * sizeof(float)),  // read once, written once
          host_in_(random_input(rows, cols)),
          expected_(transpose_cpu(host_in_, rows_, cols_)), in_(host_in_), out_(host_in_.size()),
          table_(std::to_string(rows) + " x " + std::to_string(cols) + " fp32 transpose, " +
                     std::to_string(timing.repeats) + " repeats (median), GB/s counts bytes read + written",
                 "GB/s") {
        const Timing t = time_gpu(
            [&] { CUDA_CHECK(cudaMemcpy(out_.data(), in_.data(), in_.bytes(), cudaMemcpyDeviceToDevice)); },
            timing_.warmup, timing_.repeats);
        table_.add("cudaMemcpy device-to-device", t.median_ms, gb_per_s(bytes_, t.median_ms), "-", true);
    }

    /// One row: poisons the output (so an element the kernel forgets cannot look right), calls
    /// launch(in, out, rows, cols) once and compares with the transpose (with the input itself
    /// when `is_copy`), then times it. Returns whether the output matched.
    template <class Launch>
    bool add(const std::string& name, Launch&& launch, bool is_copy = false) {
        out_.poison();
        launch(in_.data(), out_.data(), rows_, cols_);
        const VerifyResult check = compare_exact(out_.to_host(), is_copy ? host_in_ : expected_, is_copy ? cols_ : rows_);
        if (!check.ok()) std::printf("%s: %s\n", name.c_str(), check.summary().c_str());
        all_ok_ &= check.ok();
        const Timing t = time_gpu([&] { launch(in_.data(), out_.data(), rows_, cols_); }, timing_.warmup, timing_.repeats);
        table_.add(name, t.median_ms, gb_per_s(bytes_, t.median_ms), check.ok() ? "ok" : "FAIL");
        return check.ok();
    }

    /// Prints the table, appends it to --csv if one was given, and says whether every output (and
    /// `others_ok`, the lesson's other checks) matched. Returns the lesson's exit code.
    int finish(const std::string& lesson, const DeviceReport& gpu, bool others_ok = true) const {
        table_.print();
        if (!timing_.csv.empty()) table_.append_csv(timing_.csv, lesson, gpu.short_description());
        const bool ok = all_ok_ && others_ok;
        std::printf("\n%s\n", ok ? "All outputs match the CPU reference." : "SOME OUTPUTS ARE WRONG (see above).");
        return ok ? kExitOk : kExitFailed;
    }

private:
    static std::vector<float> random_input(long long rows, long long cols) {
        require_device_memory(2.0 * static_cast<double>(rows) * static_cast<double>(cols) * sizeof(float),
                              "two " + std::to_string(rows) + " x " + std::to_string(cols) + " float matrices");
        return random_floats(static_cast<std::size_t>(rows) * cols, 2024);
    }

    int rows_, cols_;
    TimingOptions timing_;
    double bytes_;
    std::vector<float> host_in_, expected_;
    DeviceBuffer<float> in_, out_;
    ResultsTable table_;
    bool all_ok_ = true;
};

}  // namespace course
