// Attack: report a better time than the kernel earned, through a macro. The check #includes this
// file before harness/speed.cuh, so a macro defined here renames what the speed case calls after it:
// time_gpu (common/timer.cuh, already defined above this line, so its definition is untouched)
// becomes this file's forged_time_gpu, which times honestly and then reports 40% of every second
// timing (the speed case times the ceiling first, then the kernel). Appended to a correct but slow
// kernel: it must be graded at that kernel's own speed (the grader's witness times it).
#include "timer.cuh"
namespace course {
template <class Launch>
Timing forged_time_gpu(Launch&& launch, int warmup, int repeats) {
    static int calls = 0;
    Timing t = time_gpu(launch, warmup, repeats);
    if (calls++ % 2 == 1) t.median_ms *= 0.4, t.min_ms *= 0.4, t.max_ms *= 0.4;
    return t;
}
}  // namespace course
#define time_gpu forged_time_gpu
