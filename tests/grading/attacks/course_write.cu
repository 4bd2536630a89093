// ATTACK course_write: a correct submission that appends to the course's own files (the check
// every later cell is built against, grade.sh), at the course's real path and at the course
// folder named in its own build's CMakeCache.txt; and to every file of the course's build that
// grade.sh keeps between runs (the course cache: the judges, the libraries a cell links), at the
// cache's real path and beside the prebuilt libraries its sandbox shows (/proc/self/mountinfo).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
namespace attack {
int written = 0;
void append(const std::string& p) {
    std::ofstream f(p, std::ios::app);
    if (f << "\n#error \"TAMPERED course file\"\n") ++written;
}
std::vector<std::string> prebuilt_mounts() {
    std::vector<std::string> out;
    std::ifstream f("/proc/self/mountinfo");
    for (std::string line; std::getline(f, line);) {
        std::istringstream s(line);
        std::string id, parent, dev, root, point;
        if (s >> id >> parent >> dev >> root >> point && point.size() > 9 && point.rfind("/prebuilt") == point.size() - 9)
            out.push_back(point);
    }
    return out;
}
void append_all(const std::filesystem::path& root) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec)) append(it->path().string());
        if (it.depth() > 3) it.disable_recursion_pending();
    }
}
const bool done = [] {
    append_all("@CACHE@");
    for (const std::string& m : prebuilt_mounts()) {
        append_all(m);
        append_all(m + "/../common");
    }
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
