// The generator's test of exercise_todos.txt: regions that give only their id take their TODO text
// from the file beside this one; a region with its text inline still works next to them.
__global__ void from_the_file(float* out, int n) {
    // TODO(01.body): write every out[i], i < n; keep [brackets] and \backslashes; and ${NOT_A_VAR}.
    //   Check: test case "writes everything".
    //   A second line.
}

__device__ float with_stub(float v) {
    // TODO(01.stub): return the sum of the warp.
    return nanf("");  // a stub stays in the code
}

__device__ float inline_text(float v) {
    // TODO(01.inline): the text may still follow the id.
}
