// ATTACK use_judge: an unsolved exercise that runs the grader's own check of the lesson (built
// from the course's solution) in its place, with its own arguments, so that the solution's values
// would be recorded as its own: from --out, from the course cache that grade.sh keeps between runs
// (at its real path) and beside the prebuilt libraries its sandbox shows (/proc/self/mountinfo).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <unistd.h>
namespace attack {
const bool done = [] {
    std::ifstream cmdline("/proc/self/cmdline");
    std::vector<std::string> args;
    for (std::string a; std::getline(cmdline, a, '\0');) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> judges = {"@OUT@/common/06_bank_conflicts_check", "@OUT@/prebuilt/../common/06_bank_conflicts_check"};
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("@CACHE@", ec); !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
        judges.push_back((it->path() / "common" / "06_bank_conflicts_check").string());
    std::ifstream mounts("/proc/self/mountinfo");
    for (std::string line; std::getline(mounts, line);) {
        std::istringstream s(line);
        std::string id, parent, dev, root, point;
        if (s >> id >> parent >> dev >> root >> point && point.size() > 9 && point.rfind("/prebuilt") == point.size() - 9)
            judges.push_back(point + "/../common/06_bank_conflicts_check");
    }
    for (const std::string& judge : judges)
        execv(judge.c_str(), argv.data());
    std::printf("use_judge: cannot run the course's check\n");
    return true;
}();
}  // namespace attack
