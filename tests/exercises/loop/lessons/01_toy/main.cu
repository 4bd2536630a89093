// The toy lesson: double every element.
void twice(const float* in, float* out, int n) {
    for (int i = 0; i < n; ++i) {
        // EXERCISE BEGIN 01.double: write 2 * in[i] to out[i].
        // EXERCISE TODO: Check: the toy check's "doubles".
        out[i] = 2 * in[i];
        // EXERCISE HINT: each element of out is twice the element of in at the same index.
        // EXERCISE HINT: out[i] = 2 * in[i];
        // EXERCISE END
    }
}
