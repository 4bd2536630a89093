// What two processes on two GPUs contend for: context start, cudaMalloc/cudaFree, pageable copies, pool allocations.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "init";
    auto t0 = std::chrono::steady_clock::now();
    if (cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
        std::fprintf(stderr, "probe: no CUDA device: %s\n", cudaGetErrorString(e));
        return 1;
    }
    auto t1 = std::chrono::steady_clock::now();
    const size_t bytes = 16u << 20;
    if (!strcmp(mode, "alloc")) {
        for (int i = 0; i < 200; ++i) { void* p; cudaMalloc(&p, bytes); cudaMemset(p, 1, bytes); cudaFree(p); }
    } else if (!strcmp(mode, "pool")) {
        cudaMemPool_t pool; cudaDeviceGetDefaultMemPool(&pool, 0);
        unsigned long long keep = ~0ull; cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
        for (int i = 0; i < 200; ++i) { void* p; cudaMallocAsync(&p, bytes, 0); cudaMemsetAsync(p, 1, bytes, 0); cudaFreeAsync(p, 0); cudaStreamSynchronize(0); }
    } else if (!strcmp(mode, "copy")) {
        void* p; cudaMalloc(&p, bytes); std::vector<char> h(bytes);
        for (int i = 0; i < 200; ++i) cudaMemcpy(h.data(), p, bytes, cudaMemcpyDeviceToHost);
        cudaFree(p);
    } else if (!strcmp(mode, "host")) {
        std::vector<float> a(1 << 24), b(1 << 24);  // CPU only: fresh pages, a strided pass
        for (int r = 0; r < 4; ++r) for (size_t i = 0; i < a.size(); ++i) b[(i * 4099) % b.size()] += a[i] + r;
        std::printf("%g ", b[7]);
    }
    cudaDeviceSynchronize();
    auto t2 = std::chrono::steady_clock::now();
    std::printf("%s init %.3f work %.3f\n", mode, std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
}
