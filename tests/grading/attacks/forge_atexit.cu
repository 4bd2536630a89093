// ATTACK forge_atexit: an unsolved exercise whose checks run (and fail), then an atexit handler
// prints a full pass and turns the exit code into 0.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
namespace attack {
const bool registered = [] {
    std::atexit([] {
        std::printf("[doctest] test cases: 14 | 14 passed | 0 failed | 0 skipped\n[doctest] Status: SUCCESS!\n");
        std::fflush(stdout);
        _exit(0);
    });
    return true;
}();
}  // namespace attack
