// A small marked file for the generator's own test: every line outside the regions must come out
// byte for byte, including the characters CMake treats specially in lists: ; [ ] \ and ${NOT_A_VAR}.
#include <cstdio>
#define TWO_LINES(x) \
    do { std::printf("%d;\n", (x)[0]); } while (0)

	int tabbed[2] = {1, 2};   

__global__ void empty_body(float* out, int n) {
    // TODO(01.body): write every out[i], i < n.
    //   Check: test case "writes everything".
}

__device__ float with_stub(float v) {
    // TODO(01.stub): return the sum of the warp.
    //   one more line of TODO
    float unused[1] = {v};  // keeps [ and ; too

        return nanf("");
}
// TODO(01.top_level): a region at file scope, replaced by its stub.
struct Layout { static int at(int, int) { return 0; } };
int last_line_without_newline = 1;