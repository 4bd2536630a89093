// The two explorers' C ABI: lesson 01's sector model and lesson 06's bank model, as the lessons
// write them, behind a few plain functions a web page can call through WebAssembly.
//
// The model code is not here. site/extract_model.py copies the lines each lesson marks with
// `// SITE MODEL BEGIN` / `// SITE MODEL END` from its main.cu into l01_model.inc and
// l06_model.inc, which this file includes: the explorers run the very lines the lessons' host
// checks (check.cu) test. This file only chooses the addresses, calls the model, and keeps the
// answer where the page can read it (one pattern at a time, in static storage).
//
// Built twice from this one source: by em++ into explorer_models.js (for the page and for
// node), and by the host C++ compiler with dump_native.cpp, so a test can compare the two.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

// Lesson 06's tile layouts are shared with its kernels, hence __host__ __device__: plain C++ here.
#define __host__
#define __device__

namespace l01 {
#include "l01_model.inc"
}
namespace l06 {
#include "l06_model.inc"
}

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define EXPORT extern "C" EMSCRIPTEN_KEEPALIVE
#else
#define EXPORT extern "C"
#endif

namespace {

constexpr int kLanes = 32;
constexpr int kSectorBytes = 32;

// ---------------------------------------------------------------- lesson 01: sectors
struct SectorPattern {
    std::string name, kernel;  // kernel: the lesson's kernel (its row in results.csv)
    int elem_bytes;
    std::vector<std::uint64_t> addr;
};

/// The lesson's own patterns: warp 0 of each kernel, at its default size (8192 x 8192 floats).
std::vector<SectorPattern> sector_patterns() {
    const int n = 8192;
    const std::pair<const char*, l01::Walk> walks[] = {{"copy_kernel (not a transpose)", l01::Walk::Copy},
                                                       {"transpose_naive_strided_reads", l01::Walk::StridedReads},
                                                       {"transpose_naive_strided_writes", l01::Walk::StridedWrites}};
    std::vector<SectorPattern> p;
    for (const auto& [kernel, walk] : walks) {
        const l01::WarpAccess w = l01::first_warp_access(walk, n, n);
        const std::string short_name = walk == l01::Walk::Copy ? "copy_kernel" : kernel;
        p.push_back({short_name + ": the warp's load", kernel, 4, w.reads});
        p.push_back({short_name + ": the warp's store", kernel, 4, w.writes});
    }
    return p;
}

struct SectorState {
    int elem_bytes = 4;
    std::vector<std::uint64_t> addr;
    int sectors = 0;
    std::uint64_t distinct_bytes = 0;
    std::vector<std::uint64_t> sector_list;  // the distinct sectors, ascending
    std::string error;
} sector;

int sector_compute() {
    sector.sectors = l01::sectors_touched(sector.addr, sector.elem_bytes);  // the lesson's model
    std::set<std::uint64_t> bytes, sectors;
    for (std::uint64_t a : sector.addr) {
        for (std::uint64_t b = a; b < a + sector.elem_bytes; ++b) bytes.insert(b);
        sectors.insert(a / kSectorBytes);
        sectors.insert((a + sector.elem_bytes - 1) / kSectorBytes);
    }
    sector.distinct_bytes = bytes.size();
    sector.sector_list.assign(sectors.begin(), sectors.end());
    return sector.sectors;
}

// ---------------------------------------------------------------- lesson 06: banks
struct BankState {
    int width = 4;
    std::vector<std::int64_t> addr;
    l06::BankReport report;
    std::string error;
} bank;

int bank_compute() {
    try {
        bank.report = l06::bank_model(bank.addr, bank.width);  // the lesson's model
        bank.error.clear();
        return bank.report.wavefronts;
    } catch (const std::exception& e) {
        bank.error = e.what();
        bank.report = l06::BankReport{};
        return -1;
    }
}

std::string text_out;  // storage for the strings returned to the page
const char* give(std::string s) {
    text_out = std::move(s);
    return text_out.c_str();
}

}  // namespace

// ================================================================ the sector explorer
/// A strided warp: lane l reads elem_bytes bytes at offset + l * stride * elem_bytes.
/// Returns the sectors touched, or -1 (and sector_error() says why).
EXPORT int sector_set_strided(int elem_bytes, int stride_elems, int offset_bytes) {
    if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8 && elem_bytes != 16) {
        sector.error = "element size must be 1, 2, 4, 8 or 16 bytes";
        return -1;
    }
    if (stride_elems < 0 || stride_elems > (1 << 20) || offset_bytes < 0 || offset_bytes > (1 << 20)) {
        sector.error = "stride and offset must be between 0 and 1048576";
        return -1;
    }
    sector.error.clear();
    sector.elem_bytes = elem_bytes;
    sector.addr.clear();
    for (int lane = 0; lane < kLanes; ++lane)
        sector.addr.push_back(static_cast<std::uint64_t>(offset_bytes) +
                              static_cast<std::uint64_t>(lane) * stride_elems * elem_bytes);
    return sector_compute();
}
EXPORT const char* sector_error() { return give(sector.error); }
EXPORT int sector_pattern_count() { return static_cast<int>(sector_patterns().size()); }
EXPORT const char* sector_pattern_name(int i) { return give(sector_patterns().at(i).name); }
EXPORT const char* sector_pattern_kernel(int i) { return give(sector_patterns().at(i).kernel); }
EXPORT int sector_set_pattern(int i) {
    const SectorPattern p = sector_patterns().at(i);
    sector.error.clear();
    sector.elem_bytes = p.elem_bytes;
    sector.addr = p.addr;
    return sector_compute();
}
/// The named pattern whose addresses the current ones are, or -1.
EXPORT int sector_matching_pattern() {
    const auto patterns = sector_patterns();
    for (std::size_t i = 0; i < patterns.size(); ++i)
        if (patterns[i].elem_bytes == sector.elem_bytes && patterns[i].addr == sector.addr) return static_cast<int>(i);
    return -1;
}
EXPORT int sector_count() { return sector.sectors; }
EXPORT int sector_elem_bytes() { return sector.elem_bytes; }
EXPORT double sector_lane_address(int lane) { return static_cast<double>(sector.addr.at(lane)); }
EXPORT double sector_lane_first(int lane) { return static_cast<double>(sector.addr.at(lane) / kSectorBytes); }
EXPORT double sector_lane_last(int lane) {
    return static_cast<double>((sector.addr.at(lane) + sector.elem_bytes - 1) / kSectorBytes);
}
EXPORT int sector_list_size() { return static_cast<int>(sector.sector_list.size()); }
EXPORT double sector_list_at(int i) { return static_cast<double>(sector.sector_list.at(i)); }
EXPORT double sector_distinct_bytes() { return static_cast<double>(sector.distinct_bytes); }
/// Bytes the warp asks for (counted once) / bytes the sectors move: 1 = every moved byte is used.
EXPORT double sector_efficiency() {
    return sector.sectors ? static_cast<double>(sector.distinct_bytes) / (sector.sectors * kSectorBytes) : 0.0;
}

// ================================================================ the bank explorer
/// Lane l at byte offset + l * stride * width (the pattern of s[lane * stride] plus an offset).
/// Returns the wavefronts, or -1 (bank_error() gives the model's own message).
EXPORT int bank_set_strided(int width, int stride, int offset_bytes) {
    if (stride < 0 || stride > 4096 || offset_bytes < 0 || offset_bytes > (1 << 20)) {
        bank.error = "stride must be between 0 and 4096, offset between 0 and 1048576";
        return -1;
    }
    bank.width = width;
    bank.addr.clear();
    for (int lane = 0; lane < kLanes; ++lane)
        bank.addr.push_back(static_cast<std::int64_t>(offset_bytes) + static_cast<std::int64_t>(lane) * stride * width);
    return bank_compute();
}
EXPORT const char* bank_error() { return give(bank.error); }
EXPORT int bank_pattern_count() { return static_cast<int>(l06::probe_table().size()); }
EXPORT const char* bank_pattern_name(int i) { return give(l06::probe_table().at(i).name); }
EXPORT int bank_pattern_width(int i) { return l06::probe_table().at(i).width; }
EXPORT int bank_set_pattern(int i) {
    const l06::Probe p = l06::probe_table().at(i);
    bank.width = p.width;
    bank.addr = p.addr;
    return bank_compute();
}
EXPORT int bank_matching_pattern() {
    const auto probes = l06::probe_table();
    for (std::size_t i = 0; i < probes.size(); ++i)
        if (probes[i].width == bank.width && probes[i].addr == bank.addr) return static_cast<int>(i);
    return -1;
}
EXPORT int bank_width() { return bank.width; }
EXPORT int bank_units() { return bank.report.parts; }  // lanes served together: 1, 2 or 4 parts
EXPORT int bank_wavefronts() { return bank.report.wavefronts; }
EXPORT int bank_ideal() { return bank.report.ideal; }
EXPORT int bank_conflicts() { return bank.report.conflicts(); }
EXPORT int bank_degree() { return bank.report.degree(); }
EXPORT double bank_lane_address(int lane) { return static_cast<double>(bank.addr.at(lane)); }
EXPORT int bank_lane_bank(int lane) { return bank.report.bank.at(lane); }
EXPORT int bank_lane_pass(int lane) { return bank.report.pass.at(lane); }
/// The lesson's map row for one lane: 32 characters, one per bank, '.' or the serving wavefront.
EXPORT const char* bank_map_row(int lane) {
    if (!bank.error.empty()) return give(std::string(l06::kBanks, '.'));
    return give(l06::map_row(bank.report, bank.addr, lane));
}

// ================================================================ everything at once, for the tests
/// Every named pattern and a grid of strided ones, one line each: the native build and the
/// WebAssembly build must print exactly the same text.
EXPORT const char* explorer_dump() {
    std::string out;
    auto sector_line = [&](const std::string& what, int rc) {
        out += "sector " + what + ": ";
        if (rc < 0) {
            out += "error " + sector.error + "\n";
            return;
        }
        out += "sectors=" + std::to_string(sector.sectors) + " bytes=" + std::to_string(sector.distinct_bytes) +
               " match=" + std::to_string(sector_matching_pattern()) + " first=";
        for (int lane = 0; lane < kLanes; ++lane)
            out += std::to_string(sector.addr[lane] / kSectorBytes) + (lane + 1 < kLanes ? "," : "\n");
    };
    for (int i = 0; i < sector_pattern_count(); ++i) sector_line(sector_patterns()[i].name, sector_set_pattern(i));
    for (int elem : {1, 2, 4, 8, 16, 3})
        for (int stride : {0, 1, 2, 3, 4, 8, 32, 33, 1024, 8192})
            for (int offset : {0, 4, 16, 28, 100})
                sector_line("elem=" + std::to_string(elem) + " stride=" + std::to_string(stride) +
                                " offset=" + std::to_string(offset),
                            sector_set_strided(elem, stride, offset));

    auto bank_line = [&](const std::string& what, int rc) {
        out += "bank " + what + ": ";
        if (rc < 0) {
            out += "error " + bank.error + "\n";
            return;
        }
        out += "wavefronts=" + std::to_string(bank.report.wavefronts) + " ideal=" + std::to_string(bank.report.ideal) +
               " conflicts=" + std::to_string(bank.report.conflicts()) + " parts=" + std::to_string(bank.report.parts) +
               " match=" + std::to_string(bank_matching_pattern()) + " map=";
        for (int lane = 0; lane < kLanes; ++lane) out += l06::map_row(bank.report, bank.addr, lane) + (lane + 1 < kLanes ? "|" : "\n");
    };
    for (int i = 0; i < bank_pattern_count(); ++i) bank_line(l06::probe_table()[i].name, bank_set_pattern(i));
    for (int width : {4, 8, 16, 12})
        for (int stride : {0, 1, 2, 3, 4, 5, 8, 16, 17, 31, 32, 33, 64})
            for (int offset : {0, 4, 8, 16, 64})
                bank_line("width=" + std::to_string(width) + " stride=" + std::to_string(stride) +
                              " offset=" + std::to_string(offset),
                          bank_set_strided(width, stride, offset));
    return give(out);
}
