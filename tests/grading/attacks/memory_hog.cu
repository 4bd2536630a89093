// ATTACK memory_hog: takes host memory 64 MiB at a time, touching every page, and keeps it, before
// any check runs: without a limit it would take the grading machine's memory.
#include <cstring>
#include <vector>
namespace attack {
const bool done = [] {
    static std::vector<char*> kept;
    for (;;) {
        char* block = new char[64 << 20];
        std::memset(block, 1, 64 << 20);
        kept.push_back(block);
    }
    return true;
}();
}  // namespace attack
