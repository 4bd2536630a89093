// cuInit and the primary context's start, timed apart, for hold.sh. "parts": prints both and whether
// the GPU reads pageable host memory (HMM); "hold": starts CUDA, then keeps its context until stdin closes.
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <unistd.h>
int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "parts";
    auto t0 = std::chrono::steady_clock::now();
    if (cuInit(0) != CUDA_SUCCESS) { std::fprintf(stderr, "hold_probe: cuInit failed\n"); return 1; }
    auto t1 = std::chrono::steady_clock::now();
    if (cudaFree(nullptr) != cudaSuccess) { std::fprintf(stderr, "hold_probe: no CUDA context\n"); return 1; }
    auto t2 = std::chrono::steady_clock::now();
    if (!std::strcmp(mode, "hold")) {
        char b[16];
        while (read(0, b, sizeof b) > 0) {}
        return 0;
    }
    int hmm = -1;
    cudaDeviceGetAttribute(&hmm, cudaDevAttrPageableMemoryAccess, 0);
    std::printf("cuInit %.3f ctx %.3f hmm %d", std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double>(t2 - t1).count(), hmm);
    return 0;
}
