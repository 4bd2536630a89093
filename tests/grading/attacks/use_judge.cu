// ATTACK use_judge: an unsolved exercise that runs the grader's own check of the lesson (built
// from the course's solution) in its place, with its own arguments, so that the solution's values
// would be recorded as its own.
#include <cstdio>
#include <fstream>
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
    for (const char* judge : {"@OUT@/common/06_bank_conflicts_check", "@OUT@/prebuilt/../common/06_bank_conflicts_check"})
        execv(judge, argv.data());
    std::printf("use_judge: cannot run the course's check\n");
    return true;
}();
}  // namespace attack
