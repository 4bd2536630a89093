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
// launches and no result kept from an earlier run survives), one untimed launch, the inputs put back
// and the outputs poisoned, the timed launch, and its output checked in this process against what the
// course's own kernels computed before any code of the submission ran. The course's kernel is timed
// the same way beside it. A kernel the submission does not have (renamed, another signature), a
// launch that fails, or a wrong output in any run gives no time at all. The launches are caught at link time: `<<<...>>>` calls
// __cudaLaunchKernel, which the checks link wrapped (CMakeLists.txt, course_harness).
#pragma once

#include <cstddef>
#include <string>

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
