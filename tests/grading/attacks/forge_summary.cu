// ATTACK forge_summary: an unsolved exercise that prints doctest's summary of a full pass and
// exits 0 before a single check runs (the forgery that fooled grade.sh before the sandbox).
#include <cstdio>
#include <cstdlib>
namespace attack {
const bool forged = [] {
    std::printf("[doctest] test cases: 14 | 14 passed | 0 failed | 0 skipped\n"
                "[doctest] assertions: 4096 | 4096 passed | 0 failed |\n[doctest] Status: SUCCESS!\n");
    std::fflush(stdout);
    std::_Exit(0);
    return true;
}();
}  // namespace attack
