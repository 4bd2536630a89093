// ATTACK escape: a correct submission that leaves a grandchild behind in a session of its own
// (fork, setsid, fork), named atk_escape, which holds most of the GPU's free memory (where there
// is a GPU) and sleeps for ten minutes. Nothing of it may outlive the cell, and the next cell
// must find the GPU free.
#include <cstdio>
#include <cstdlib>
#include <sys/prctl.h>
#include <unistd.h>
namespace attack {
const bool done = [] {
    if (fork() != 0) return true;  // the submission goes on with its checks
    setsid();
    if (fork() != 0) std::_Exit(0);
    prctl(PR_SET_NAME, "atk_escape");
    std::size_t free_bytes = 0, total = 0;
    void* hog = nullptr;
    if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes > (std::size_t{1} << 30))
        cudaMalloc(&hog, free_bytes - (std::size_t{1} << 29));
    sleep(600);
    std::_Exit(0);
}();
}  // namespace attack
