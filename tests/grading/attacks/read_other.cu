// ATTACK read_other: a correct submission that reads a classmate's main.cu and the course's
// solution at run time, and prints what it found (the grader must never show a LEAKED line).
#include <cstdio>
#include <fstream>
#include <string>
namespace attack {
void leak(const std::string& p) {
    std::ifstream f(p);
    std::string line;
    if (std::getline(f, line)) std::printf("LEAKED %s: %s\n", p.c_str(), line.c_str());
}
const bool done = [] {
    leak("@SUBMISSIONS@/atk00 victim/01_naive_transpose/main.cu");
    leak("@COURSE@/lessons/01_naive_transpose/main.cu");
    leak("@OUT@/common/CMakeCache.txt");
    leak("/etc/shadow");
    return true;
}();
}  // namespace attack
