// verdict.cpp — the JSON verdict (see verdict.hpp). A small hand-written writer: the format is
// fixed and flat, and its strings are the only part that needs care.
#include "verdict.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace course::verdict {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

/// Decodes the UTF-8 character at text[i]: its code point and length in bytes. A byte that does
/// not start a valid character (a stray continuation byte, an overlong form, a surrogate, past
/// U+10FFFF, cut short) decodes as U+FFFD of length 1, so decoding always moves on.
std::pair<char32_t, std::size_t> decode(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    if (b0 < 0x80) return {b0, 1};
    std::size_t len = 0;
    char32_t cp = 0, min = 0;
    if ((b0 & 0xE0) == 0xC0) len = 2, cp = b0 & 0x1F, min = 0x80;
    else if ((b0 & 0xF0) == 0xE0) len = 3, cp = b0 & 0x0F, min = 0x800;
    else if ((b0 & 0xF8) == 0xF0) len = 4, cp = b0 & 0x07, min = 0x10000;
    else return {kReplacement, 1};
    if (i + len > text.size()) return {kReplacement, 1};
    for (std::size_t k = 1; k < len; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) return {kReplacement, 1};
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {kReplacement, 1};
    return {cp, len};
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

void append_u_escape(std::string& out, unsigned unit) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", unit & 0xFFFF);
    out += buf;
}

std::string count(std::size_t n) { return std::to_string(n); }
const char* boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size();) {
        const auto [cp, len] = decode(text, i);
        i += len;
        switch (cp) {
            case '"': out += "\\\""; continue;
            case '\\': out += "\\\\"; continue;
            case '\n': out += "\\n"; continue;
            case '\r': out += "\\r"; continue;
            case '\t': out += "\\t"; continue;
            default: break;
        }
        if (cp >= 0x20 && cp < 0x7F) {
            out += static_cast<char>(cp);
        } else if (cp < 0x10000) {  // C0 and C1 controls, DEL and every other non-ASCII character
            append_u_escape(out, static_cast<unsigned>(cp));
        } else {  // a UTF-16 surrogate pair, as JSON spells characters past U+FFFF
            const char32_t v = cp - 0x10000;
            append_u_escape(out, static_cast<unsigned>(0xD800 + (v >> 10)));
            append_u_escape(out, static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
        }
    }
    return out + "\"";
}

std::string one_line(std::string_view text, std::size_t max_bytes) {
    constexpr std::string_view kEllipsis = "...";
    std::string out;
    bool in_break = false;
    for (std::size_t i = 0; i < text.size();) {
        const auto [cp, len] = decode(text, i);
        i += len;
        const bool is_break = cp == '\n' || cp == '\r' || cp == '\t' || cp == '\v' || cp == '\f';
        if (!(is_break && in_break)) append_utf8(out, is_break ? U' ' : cp);
        in_break = is_break;
        if (out.size() > max_bytes + 4) break;  // enough to know it is cut
    }
    if (out.size() <= max_bytes) return out;
    const std::size_t keep = max_bytes >= kEllipsis.size() ? max_bytes - kEllipsis.size() : 0;
    std::size_t cut = keep;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // a character boundary
    out.resize(cut);
    if (max_bytes >= kEllipsis.size()) out += kEllipsis;
    return out;
}

std::string json_number(double x) {
    if (!std::isfinite(x)) return "null";  // JSON has no NaN or infinity
    char buf[32];
    for (int digits = 6; digits <= 17; ++digits) {  // as short as reads back exactly
        std::snprintf(buf, sizeof buf, "%.*g", digits, x);
        if (std::strtod(buf, nullptr) == x) break;
    }
    return buf;
}

std::string json_sample(const SpeedSample& s) {
    return "{\"ms\": " + json_number(s.ms) + ", \"ceiling_ms\": " + json_number(s.ceiling_ms) +
           ", \"runs\": " + std::to_string(s.runs) + ", \"spread\": " + json_number(s.spread) + "}";
}

std::string to_json(const Verdict& v) {
    std::string j = "{\n  \"format\": 1,\n";
    j += "  \"lesson\": " + json_string(v.lesson) + ",\n";
    j += "  \"seed\": " + std::to_string(v.seed) + ",\n";
    j += "  \"missing\": " + count(v.missing) + ",\n";
    j += "  \"inconsistent\": " + count(v.inconsistent) + ",\n";
    j += "  \"test_cases\": [";
    for (std::size_t i = 0; i < v.test_cases.size(); ++i) {
        const TestCase& t = v.test_cases[i];
        j += i == 0 ? "\n" : ",\n";
        j += "    {\"name\": " + json_string(t.name);
        j += std::string(", \"gpu\": ") + boolean(t.gpu) + ", \"skipped\": " + boolean(t.skipped) +
             ", \"passed\": " + boolean(t.passed);
        j += ", \"asked\": " + count(t.asked) + ", \"submitted\": " + count(t.submitted) + ", \"missing\": " +
             count(t.missing) + ", \"inconsistent\": " + count(t.inconsistent);
        j += ", \"failure\": " + (t.failure ? json_string(*t.failure) : std::string("null")) + "}";
    }
    j += v.test_cases.empty() ? "],\n" : "\n  ],\n";
    j += "  \"evidence\": [";
    for (std::size_t i = 0; i < v.evidence.size(); ++i) {
        const SpeedEvidence& e = v.evidence[i];
        j += i == 0 ? "\n" : ",\n";
        j += "    {\"exercise\": " + json_string(e.exercise) + ", \"test_case\": " + json_string(e.test_case) +
             ", \"kernel\": " + json_string(e.kernel) + ", \"ceiling\": " + json_string(e.ceiling) +
             ", \"shape\": " + json_string(e.shape);
        j += ",\n     \"submission\": " + (e.submission ? json_sample(*e.submission) : std::string("null"));
        j += ",\n     \"solution\": " + json_sample(e.solution) + "}";
    }
    j += v.evidence.empty() ? "],\n" : "\n  ],\n";
    j += "  \"complete\": true\n}\n";  // last: only a file written to its end says so
    return j;
}

void write(const std::string& path, const Verdict& v) {
    const std::string text = to_json(v);
    const std::string tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw std::runtime_error("--verdict " + tmp + ": " + std::strerror(errno));
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const bool closed = std::fclose(f) == 0;
    if (!written || !closed) {
        std::remove(tmp.c_str());
        throw std::runtime_error("--verdict " + tmp + ": could not write it (disk full?)");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(tmp.c_str());
        throw std::runtime_error("--verdict " + path + ": could not rename " + tmp + " to it: " + why);
    }
}

}  // namespace course::verdict
