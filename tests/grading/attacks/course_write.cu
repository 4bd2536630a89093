// ATTACK course_write: a correct submission that appends to the course's own files (the check
// every later cell is built against, grade.sh), at the course's real path and at the course
// folder named in its own build's CMakeCache.txt.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
namespace attack {
int written = 0;
void append(const std::string& p) {
    std::ofstream f(p, std::ios::app);
    if (f << "\n#error \"TAMPERED course file\"\n") ++written;
}
const bool done = [] {
    for (const char* f : {"/lessons/01_naive_transpose/check.cu", "/lessons/06_bank_conflicts/check.cu", "/scripts/grade.sh",
                          "/harness/check_main.hpp"}) {
        append(std::string("@COURSE@") + f);
        std::ifstream cache(std::filesystem::read_symlink("/proc/self/exe").parent_path() / "CMakeCache.txt");
        for (std::string line; std::getline(cache, line);)
            if (line.rfind("CMAKE_HOME_DIRECTORY:INTERNAL=", 0) == 0) append(line.substr(30) + f);
    }
    std::printf("course_write: wrote into %d files\n", written);
    return true;
}();
}  // namespace attack
