// witness.hpp — the speed witness: the course's own check times the submission's kernels.
//
// A submission's runner is the only process that runs its host code, so it is no witness of its own
// speed: a macro at the end of main.cu can rename what the speed case calls after it, and a function
// named like a CUDA runtime call replaces that call. So the grader takes the time a grade uses from
// another process: the lesson's check built from the course's OWN main.cu (the judge's binary), run
// in the cell's sandbox with
//     --time-submission DIR   the submission's compiled device code: DIR's *.cubin files, taken by
//                             cuobjdump -xelf from the compiled runner (device code only: none of the
//                             submission's host code is in this process)
//     --witness FILE          one JSON line per `speed: <id>` test case (harness/speed.cuh)
// and the speed test cases only. Each speed case times the course's kernel and the ceiling as always,
// then runs the same launch again under a Redirect: every kernel the course's code launches there is
// replaced by the submission's kernel of the same mangled name, with the course's grid, block, shared
// memory, stream and arguments. Every timed run starts afresh (harness/speed.cuh, witness_speed): the
// submission's code loaded again (its __device__ variables as the file gives them, so no count of
// launches survives), one untimed launch and the timed one, each after every buffer of this process
// was cleared whole, slack included (scrub(), below), on inputs drawn from a seed no launch saw
// before, with the outputs poisoned; then the timed launch's output is checked in this process
// against that seed's reference, made by the course's own kernels after the launch. A result kept
// anywhere from an earlier launch is the answer to another input. The course's kernel is timed the
// same way beside it. A kernel the submission does not have (renamed, another signature), a
// launch that fails, or a wrong output in any run gives no time at all. The launches are caught at link time: `<<<...>>>` calls
// __cudaLaunchKernel, which the checks link wrapped (CMakeLists.txt, course_harness).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace course::witness {

/// --time-submission DIR: loads every *.cubin file in DIR (sorted by name). Throws UsageError when DIR
/// cannot be read or holds none; a file that does not load is kept as the reason every redirected
/// launch fails (failure()), so that the witness still writes its lines.
void load(const std::string& dir);
/// The submission's code unloaded and loaded again from what load() read: its __device__ variables
/// start over (a kernel cannot carry a count or a result from one timed run to the next).
void reload();
/// Whether --time-submission was given.
bool active();

// ---------------------------------------------------------------- memory the kernel can reach
// A kernel can write anywhere it can reach without faulting: past the end of the buffers it is
// handed (cudaMalloc rounds an allocation up and packs small ones together in a page) and, by
// pointer arithmetic, into any other buffer of this process. So in the witness (active()) every
// cudaMalloc of this process goes through it (linked with --wrap=cudaMalloc,--wrap=cudaFree, like
// the launches): the size is rounded up to kGranule, the whole span zeroed and tracked; scrub()
// zeroes every tracked span before each launch of a timed run, and cudaFree zeroes a span before it
// goes back to the driver. A buffer's slack is inside its span, and no two spans share a page.
// Whatever a kernel leaves anywhere else (memory the driver or a library owns, shared memory) is
// of no use to it either: each launch gets inputs drawn from a seed no launch saw (fresh_seed()).

/// The granularity the witness allocates with: the GPU's large page (2 MiB), so that a span is
/// whole pages, the most a cudaMalloc of it maps.
constexpr std::size_t kGranule = std::size_t{2} << 20;
/// `bytes` rounded up to a whole number of kGranule (0 stays 0); throws std::length_error when
/// that does not fit in a size_t.
std::size_t rounded(std::size_t bytes);
/// One tracked allocation: where it starts and its rounded size.
struct Span {
    void* at;
    std::size_t bytes;
};
/// The allocation at `at` tracked with `bytes` (rounded), or forgotten (its size; 0 when it was not
/// tracked); the spans tracked now, in the order they were tracked. (The wrapped cudaMalloc and
/// cudaFree call the first two; they are here for the host tests too.)
void track(void* at, std::size_t bytes);
std::size_t untrack(void* at);
std::vector<Span> spans();
/// Every tracked span overwritten, whole, by `zero(at, bytes)` (by default cudaMemset to 0; a
/// failure throws). The witness calls it before each launch of a timed run.
void scrub(const std::function<void(void*, std::size_t)>& zero);
void scrub();
/// How many calls of cudaMalloc went through the witness's wrapper, in this process (active or not):
/// the host tests' proof that a check is linked with the wrap.
std::size_t mallocs_seen();
/// A seed for a launch's inputs that no code can predict (std::random_device): drawn for each
/// launch of the witness's runs, so that nothing kept from an earlier launch is the answer.
std::uint32_t fresh_seed();

/// While one lives (made with `on`), kernel launches go to the submission's kernels (above). Not
/// nested, one thread.
class Redirect {
public:
    explicit Redirect(bool on = true);
    ~Redirect();
    Redirect(const Redirect&) = delete;
    Redirect& operator=(const Redirect&) = delete;
};

/// The first launch under a Redirect that went wrong since clear() ("" when none), and how many
/// launches were redirected.
std::string failure();
std::size_t launches();
void clear();

/// --witness FILE: where report() appends (refuses a file it cannot append to: UsageError).
void set_output(const std::string& path);
/// One JSON line: the course's kernel and the ceiling timed in this process, and the submission's
/// kernel timed here (`problem` "" ) or why it has no time (`problem`: the reason, submission_ms unused).
struct Report {
    std::string exercise, kernel, ceiling, shape, gpu, problem;
    double solution_ms = 0, ceiling_ms = 0, submission_ms = 0, spread = 0;
    int runs = 0;
    bool wrong_output = false;  // the problem is the output, checked here: a fault the runner's check did not report
};
void report(const Report& r);

}  // namespace course::witness
