// results.hpp — the table every lesson prints: kernel, time, rate, % of the ceiling, check.
//
// The ceiling is a row too (a device copy, CUB, cuBLAS) measured in the same run, so the
// percentage compares like with like. append_csv() writes the same rows for later plots.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace course {

struct ResultRow {
    std::string kernel;
    double ms;          // median time of one launch
    double rate;        // in the table's unit (GB/s or TFLOP/s)
    std::string check;  // "ok", "FAIL", or "-" (not checked, e.g. a library call used as ceiling)
    bool is_ceiling;
};

class ResultsTable {
public:
    /// `problem` describes the size ("8192 x 8192 fp32"); `rate_unit` is "GB/s" or "TFLOP/s".
    ResultsTable(std::string problem, std::string rate_unit);

    void add(const std::string& kernel, double ms, double rate, const std::string& check,
             bool is_ceiling = false);
    /// The rate of the row marked as ceiling (0 if none).
    double ceiling() const;
    /// Percentage of the ceiling, or a negative number if there is no ceiling row.
    double percent_of_ceiling(const ResultRow& row) const;
    const std::vector<ResultRow>& rows() const { return rows_; }

    void print(std::FILE* out = stdout) const;
    /// Appends one line per row: lesson,gpu,problem,kernel,ms,rate,unit,percent_of_ceiling,check
    /// (with a header line if the file is new). Throws std::runtime_error if it cannot write.
    void append_csv(const std::string& path, const std::string& lesson, const std::string& gpu) const;

private:
    std::string problem_, unit_;
    std::vector<ResultRow> rows_;
};

}  // namespace course
