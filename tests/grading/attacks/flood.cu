// ATTACK flood: a correct submission that first writes 768 MiB to stdout and 768 MiB to stderr.
#include <cstdio>
#include <vector>
namespace attack {
const bool done = [] {
    const std::vector<char> block(1 << 20, 'x');
    for (int i = 0; i < 768; ++i) {
        std::fwrite(block.data(), 1, block.size(), stdout);
        std::fwrite(block.data(), 1, block.size(), stderr);
    }
    std::fflush(stdout);
    return true;
}();
}  // namespace attack
