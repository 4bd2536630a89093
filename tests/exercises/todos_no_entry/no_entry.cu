__global__ void k() {
    // EXERCISE BEGIN 01.a
    // EXERCISE END
    // EXERCISE BEGIN 01.b
    // EXERCISE END
}
