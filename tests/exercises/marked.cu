// A small marked file for the generator's own test: every line outside the regions must come out
// byte for byte, including the characters CMake treats specially in lists: ; [ ] \ and ${NOT_A_VAR}.
#include <cstdio>
#define TWO_LINES(x) \
    do { std::printf("%d;\n", (x)[0]); } while (0)

// SITE MODEL BEGIN: the course site's markers are left out of the exercise
	int tabbed[2] = {1, 2};   
// SITE MODEL END

__global__ void empty_body(float* out, int n) {
    // EXERCISE BEGIN 01.body: write every out[i], i < n.
    // EXERCISE TODO: Check: test case "writes everything".
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 1.0f;  // a [bracket; and a semicolon
    // EXERCISE HINT: one thread per element; the grid may have more threads than n.
    // EXERCISE HINT: keep [brackets]; semicolons and \backslashes as they are
    // EXERCISE END
}

__device__ float with_stub(float v) {
    // EXERCISE BEGIN 01.stub: return the sum of the warp.
    // EXERCISE STUB: float unused[1] = {v};  // keeps [ and ; too
    // EXERCISE TODO: one more line of TODO
    // EXERCISE STUB:
    // EXERCISE STUB:     return nanf("");
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(~0u, v, o);
    return v;
    // EXERCISE HINT: five steps: offsets 16, 8, 4, 2, 1.
    // EXERCISE END
}
// EXERCISE BEGIN 01.top_level: a region at file scope, replaced by its stub.
// EXERCISE STUB: struct Layout { static int at(int, int) { return 0; } };
struct Layout {
    static int at(int r, int c) { return r * 33 + c; }
};
// EXERCISE END
int last_line_without_newline = 1;