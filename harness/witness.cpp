// witness.cpp — the speed witness's launches and its report (witness.hpp says what and why).
#include "witness.hpp"

#include <cuda_runtime_api.h>
#include <cxxabi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cli.hpp"      // UsageError
#include "transcript.hpp"  // open_output
#include "verdict.hpp"  // json_string, json_number

// What `<<<...>>>` calls (crt/device_functions.h), under the names the linker's --wrap gives them.
extern "C" cudaError_t __real___cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
extern "C" cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
extern "C" cudaError_t __real_cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t);
extern "C" cudaError_t __real_cudaMalloc(void**, size_t);
extern "C" cudaError_t __real_cudaFree(void*);

namespace course::witness {
namespace {

struct State {
    bool active = false, redirecting = false;
    std::vector<cudaLibrary_t> libraries;
    std::vector<std::pair<std::string, std::vector<char>>> code;  // each *.cubin's name and bytes, for reload()
    std::string load_problem;                               // why the submission's code is not there
    std::unordered_map<cudaKernel_t, cudaKernel_t> theirs;  // the course's kernel -> the submission's
    std::unordered_map<cudaKernel_t, std::size_t> smem_set;  // the submission's kernel -> dynamic bytes allowed
    std::string failure;
    std::size_t launches = 0;
    std::FILE* output = nullptr;  // --witness: "/dev/fd/N" (the grader's descriptor, written as it is) or a file appended to
    std::vector<Span> spans;      // every allocation made while active, rounded (scrub())
    std::size_t mallocs_seen = 0;
};

State& state() {
    static State s;
    return s;
}

void fail(const std::string& why) {
    if (state().failure.empty()) state().failure = why;
}

/// The submission's kernel named like the course's `mine`, or nullptr (and a failure said).
cudaKernel_t theirs_for(cudaKernel_t mine) {
    State& s = state();
    const auto found = s.theirs.find(mine);
    if (found != s.theirs.end()) return found->second;
    const char* name = nullptr;
    if (cudaFuncGetName(&name, reinterpret_cast<const void*>(mine)) != cudaSuccess || name == nullptr) {
        cudaGetLastError();
        fail("the grader could not name a kernel the course's code launches");
        return nullptr;
    }
    if (!s.load_problem.empty()) {
        fail(s.load_problem);
        return nullptr;
    }
    for (cudaLibrary_t lib : s.libraries) {
        cudaKernel_t k = nullptr;
        if (cudaLibraryGetKernel(&k, lib, name) == cudaSuccess && k != nullptr) return s.theirs[mine] = k;
        cudaGetLastError();
    }
    int status = 0;
    char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    fail(std::string("your compiled code has no kernel ") + (status == 0 && readable ? readable : name) +
         " with the course's name and parameters, which the speed case launches");
    std::free(readable);
    return nullptr;
}

/// A launch under a Redirect: the submission's kernel in place of `mine`, launched the same way.
cudaError_t redirect(cudaKernel_t mine, dim3 grid, dim3 block, void** args, size_t smem, cudaStream_t stream) {
    cudaKernel_t k = theirs_for(mine);
    if (k == nullptr) return cudaErrorInvalidDeviceFunction;
    State& s = state();
    if (smem > 48 * 1024 && s.smem_set[k] < smem) {  // what cudaFuncSetAttribute did for the course's kernel
        int device = 0;
        cudaGetDevice(&device);
        const cudaError_t e = cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                              static_cast<int>(smem), device);
        if (e != cudaSuccess) {
            fail(std::string("your kernel cannot be given the launch's dynamic shared memory: ") + cudaGetErrorString(e));
            return e;
        }
        s.smem_set[k] = smem;
    }
    ++s.launches;
    const cudaError_t e = __real___cudaLaunchKernel(k, grid, block, args, smem, stream);
    if (e != cudaSuccess) fail(std::string("the launch of your kernel failed: ") + cudaGetErrorString(e));
    return e;
}

}  // namespace

void load(const std::string& dir) {
    State& s = state();
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) throw UsageError("--time-submission " + dir + ": cannot read it (" + std::strerror(errno) + ")");
    std::vector<std::string> names;
    while (const dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n.size() > 6 && n.compare(n.size() - 6, 6, ".cubin") == 0) names.push_back(n);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    if (names.empty()) throw UsageError("--time-submission " + dir + ": no .cubin file in it");
    s.active = true;
    for (const std::string& n : names) {
        std::ifstream f(dir + "/" + n, std::ios::binary);
        s.code.emplace_back(n, std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
    }
    reload();
}

void reload() {
    State& s = state();
    for (cudaLibrary_t lib : s.libraries) cudaLibraryUnload(lib);
    cudaGetLastError();
    s.libraries.clear(), s.theirs.clear(), s.smem_set.clear(), s.load_problem.clear();
    for (const auto& [name, code] : s.code) {
        cudaLibrary_t lib = nullptr;
        const cudaError_t e = code.empty() ? cudaErrorInvalidSource
                                           : cudaLibraryLoadData(&lib, code.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
        if (e != cudaSuccess) {
            cudaGetLastError();
            if (s.load_problem.empty())
                s.load_problem = "your compiled device code (" + name + ") could not be loaded: " + cudaGetErrorString(e);
            continue;
        }
        s.libraries.push_back(lib);
    }
}

bool active() { return state().active; }

std::size_t rounded(std::size_t bytes) {
    if (bytes > std::numeric_limits<std::size_t>::max() - (kGranule - 1))
        throw std::length_error("witness::rounded: " + std::to_string(bytes) + " bytes cannot be rounded up");
    return (bytes + kGranule - 1) / kGranule * kGranule;
}

void track(void* at, std::size_t bytes) { state().spans.push_back({at, rounded(bytes)}); }

std::size_t untrack(void* at) {
    std::vector<Span>& spans = state().spans;
    const auto found = std::find_if(spans.begin(), spans.end(), [&](const Span& s) { return s.at == at; });
    if (found == spans.end()) return 0;
    const std::size_t bytes = found->bytes;
    spans.erase(found);
    return bytes;
}

std::vector<Span> spans() { return state().spans; }

void scrub(const std::function<void(void*, std::size_t)>& zero) {
    for (const Span& s : state().spans) zero(s.at, s.bytes);
}

void scrub() {
    scrub([](void* at, std::size_t bytes) {
        const cudaError_t e = cudaMemset(at, 0, bytes);
        if (e != cudaSuccess) throw std::runtime_error(std::string("the witness could not clear its buffers: ") + cudaGetErrorString(e));
    });
}

std::size_t mallocs_seen() { return state().mallocs_seen; }

std::uint32_t fresh_seed() {
    static std::random_device device;
    return static_cast<std::uint32_t>(device());
}

Redirect::Redirect(bool on) { state().redirecting = on; }
Redirect::~Redirect() { state().redirecting = false; }

std::string failure() { return state().failure; }
std::size_t launches() { return state().launches; }
void clear() {
    state().failure.clear();
    state().launches = 0;
}

void set_output(const std::string& path) {
    std::FILE* f = transcript::open_output(path, "ab");  // (a descriptor: written as it is)
    if (f == nullptr) throw UsageError("--witness " + path + ": cannot write to it (" + std::strerror(errno) + ")");
    state().output = f;
}

void report(const Report& r) {
    using verdict::json_number;
    using verdict::json_string;
    const bool timed = r.problem.empty();
    std::printf("witness %s: the course's %s %.3f ms, %s %.3f ms, yours %s\n", r.exercise.c_str(), r.kernel.c_str(),
                r.solution_ms, r.ceiling.c_str(), r.ceiling_ms,
                timed ? (std::to_string(r.submission_ms) + " ms").c_str() : ("not timed: " + r.problem).c_str());
    std::fflush(stdout);
    if (state().output == nullptr) return;
    const std::string line =
        "{\"exercise\":" + json_string(r.exercise) + ",\"kernel\":" + json_string(r.kernel) +
        ",\"ceiling\":" + json_string(r.ceiling) + ",\"shape\":" + json_string(r.shape) + ",\"gpu\":" + json_string(r.gpu) +
        ",\"solution_ms\":" + json_number(r.solution_ms) + ",\"ceiling_ms\":" + json_number(r.ceiling_ms) +
        ",\"submission_ms\":" + (timed ? json_number(r.submission_ms) : std::string("null")) + ",\"runs\":" +
        std::to_string(r.runs) + ",\"spread\":" + json_number(r.spread) + ",\"problem\":" + json_string(r.problem) +
        ",\"wrong_output\":" + (r.wrong_output ? "true" : "false") + "}\n";
    std::FILE* f = state().output;
    if (std::fwrite(line.data(), 1, line.size(), f) != line.size() || std::fflush(f) != 0)
        throw std::runtime_error("--witness: could not write");
}

}  // namespace course::witness

// ---------------------------------------------------------------- the wrapped launches
// Outside a Redirect each passes the launch on unchanged. Under one, a `<<<...>>>` launch runs the
// submission's kernel instead; any other kind of launch would run the course's own kernel inside the
// submission's timing, so it is refused (and said).

extern "C" cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st) {
    if (!course::witness::state().redirecting) return __real___cudaLaunchKernel(k, g, b, a, s, st);
    return course::witness::redirect(k, g, b, a, s, st);
}

extern "C" cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st) {
    if (!course::witness::state().redirecting) return __real___cudaLaunchKernel_ptsz(k, g, b, a, s, st);
    return course::witness::redirect(k, g, b, a, s, st);
}

extern "C" cudaError_t __wrap_cudaLaunchKernel(const void* f, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st) {
    if (!course::witness::state().redirecting) return __real_cudaLaunchKernel(f, g, b, a, s, st);
    course::witness::fail("the course's code launched a kernel the witness cannot redirect (grader error)");
    return cudaErrorNotSupported;
}

// ---------------------------------------------------------------- the wrapped allocations
// Outside the witness each passes the call on. In it, cudaMalloc allocates whole kGranule pages,
// zeroed and tracked (scrub() clears them all before each launch of a timed run), and cudaFree
// zeroes a tracked span before the driver gets it back (what a kernel wrote there is not handed to
// the next allocation). cudaFree(nullptr), which starts the context, passes on as it is.

extern "C" cudaError_t __wrap_cudaMalloc(void** at, size_t size) {
    course::witness::State& s = course::witness::state();
    ++s.mallocs_seen;
    if (!s.active || size == 0 || at == nullptr) return __real_cudaMalloc(at, size);
    if (size > std::numeric_limits<std::size_t>::max() - (course::witness::kGranule - 1)) return cudaErrorMemoryAllocation;
    const std::size_t bytes = course::witness::rounded(size);
    cudaError_t e = __real_cudaMalloc(at, bytes);
    if (e != cudaSuccess) return e;
    e = cudaMemset(*at, 0, bytes);
    if (e != cudaSuccess) {
        __real_cudaFree(*at);
        *at = nullptr;
        return e;
    }
    course::witness::track(*at, bytes);
    return cudaSuccess;
}

extern "C" cudaError_t __wrap_cudaFree(void* at) {
    const std::size_t bytes = at == nullptr ? 0 : course::witness::untrack(at);
    if (bytes > 0) cudaMemset(at, 0, bytes);  // (an error here is the free's to report)
    return __real_cudaFree(at);
}
