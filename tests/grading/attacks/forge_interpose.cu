// Attack: report a better time than the kernel earned by interposing a CUDA runtime call. This file
// defines cudaEventElapsedTime itself, so every call of the check's process goes here: it asks the
// real one (the next definition, in libcudart) and divides the kernel's times by 2.5. The speed case
// times 21 runs of the ceiling, then 21 of the kernel. Appended to a correct but slow kernel: it
// must be graded at that kernel's own speed (the grader's witness times it, in another process).
#include <cuda_runtime_api.h>
#include <dlfcn.h>
extern "C" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    using Real = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
    static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "cudaEventElapsedTime"));
    static int calls = 0;
    if (real == nullptr) return cudaErrorUnknown;
    const cudaError_t e = real(ms, start, end);
    if (e == cudaSuccess && (calls++ / 21) % 2 == 1) *ms /= 2.5f;
    return e;
}
