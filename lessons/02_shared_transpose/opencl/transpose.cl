// transpose.cl — the transposes of lessons 01 and 02 in OpenCL C 1.2.
//
// `in` is rows x cols, row-major; `out` is cols x rows. Every kernel tests its bounds, so any
// shape works. The host program (main.cpp) rounds each global size up to a whole number of
// work-groups, as OpenCL 1.2 requires.
//
// Read it beside lessons/02_shared_transpose/main.cu: get_local_id(0) is threadIdx.x,
// get_group_id(0) is blockIdx.x, get_local_size(0) is blockDim.x, `local` is __shared__.
// __syncthreads() is barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE): it orders the block's
// global accesses too. The kernels here pass data between work-items only through local memory
// (each global element is read by one work-item and written by one), so the local fence alone
// is enough (OpenCL 1.2 specification, 6.12.8). On NVIDIA GPUs a warp is 32 work-items in the
// order get_local_id(0) fastest: 32 neighbours in dimension 0 when the local size there is at
// least 32 (32 x 8 here), two rows of 16 in the 16 x 16 groups.

#define TILE 32          // the coalescing kernels: a 32 x 32 tile ...
#define ROWS_PER_PASS 8  // ... moved by 32 x 8 work-items, 4 rows each
#define SOURCE_TILE 16   // the tutorial's tile edge and work-group edge (16 x 16 work-items)

// ---------------------------------------------------------------- naive (lesson 01)

/// The tutorial's naive kernel: dimension 0 picks the input ROW. Neighbouring work-items read
/// elements a whole input row apart (strided reads) and write neighbouring elements of one
/// output row (coalesced writes) — the opposite of what the tutorial says.
kernel void transpose_naive_strided_reads(global const float* restrict in, global float* restrict out, int rows,
                                          int cols) {
    const int row = get_global_id(0), col = get_global_id(1);
    if (row < rows && col < cols) out[col * rows + row] = in[row * cols + col];
}

/// Dimension 0 picks the input COLUMN: coalesced reads, strided writes.
kernel void transpose_naive_strided_writes(global const float* restrict in, global float* restrict out, int rows,
                                           int cols) {
    const int col = get_global_id(0), row = get_global_id(1);
    if (row < rows && col < cols) out[col * rows + row] = in[row * cols + col];
}

// ---------------------------------------------------------------- tiles in local memory (lesson 02)

/// The tutorial's tiled kernel, kept to be measured. It has the barrier and the group swap, but
/// dimension 0 picks the input ROW on the load and the output ROW on the store, so the
/// work-items of a warp stride through global memory on both sides: the tile buys nothing.
/// Its tile is 16 x 16 without padding, as in the tutorial.
kernel void transpose_tiled_source_mapping(global const float* restrict in, global float* restrict out, int rows,
                                           int cols) {
    local float tile[SOURCE_TILE][SOURCE_TILE];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int r = get_global_id(0), c = get_global_id(1);
    if (r < rows && c < cols) tile[ly][lx] = in[r * cols + c];
    barrier(CLK_LOCAL_MEM_FENCE);
    const int out_row = get_group_id(1) * SOURCE_TILE + lx, out_col = get_group_id(0) * SOURCE_TILE + ly;
    if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[lx][ly];
}

/// The fix: dimension 0 walks COLUMNS in both phases. A warp reads 32 consecutive floats of an
/// input row into a row of the tile; after the barrier it writes 32 consecutive floats of an
/// output row, read from a COLUMN of the tile of the swapped work-group position. Tile element
/// (y, x) holds in[row0 + y][col0 + x]. Unpadded, the column read puts all 32 work-items of a
/// warp in one of local memory's 32 banks.
kernel void transpose_tiled(global const float* restrict in, global float* restrict out, int rows, int cols) {
    local float tile[TILE][TILE];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int row0 = get_group_id(1) * TILE, col0 = get_group_id(0) * TILE;
    for (int y = ly; y < TILE; y += ROWS_PER_PASS) {
        const int r = row0 + y, c = col0 + lx;
        if (r < rows && c < cols) tile[y][lx] = in[r * cols + c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // every work-item reads elements that others loaded
    for (int y = ly; y < TILE; y += ROWS_PER_PASS) {
        const int out_row = col0 + y, out_col = row0 + lx;  // swapped: tile column y is output row col0 + y
        if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[lx][y];
    }
}

/// The same kernel with one column of padding: row y of the tile starts y words further along
/// the banks, so a column of the tile touches 32 different banks.
kernel void transpose_tiled_padded(global const float* restrict in, global float* restrict out, int rows, int cols) {
    local float tile[TILE][TILE + 1];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int row0 = get_group_id(1) * TILE, col0 = get_group_id(0) * TILE;
    for (int y = ly; y < TILE; y += ROWS_PER_PASS) {
        const int r = row0 + y, c = col0 + lx;
        if (r < rows && c < cols) tile[y][lx] = in[r * cols + c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int y = ly; y < TILE; y += ROWS_PER_PASS) {
        const int out_row = col0 + y, out_col = row0 + lx;
        if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[lx][y];
    }
}

// ---------------------------------------------------------------- local memory sized at run time (lesson 03)

/// The padded tile with its edge chosen by the host: a `local` pointer ARGUMENT, whose size the
/// host gives with clSetKernelArg(kernel, 4, bytes, NULL) (cl::Local(bytes) in the C++
/// bindings) — OpenCL's counterpart of `extern __shared__` and the third launch parameter.
/// The tile edge is the work-group's width and a work-group of edge x step work-items moves
/// it; the host makes the argument edge * (edge + 1) floats.
kernel void transpose_tiled_dynamic(global const float* restrict in, global float* restrict out, int rows, int cols,
                                    local float* tile) {
    const int edge = get_local_size(0), step = get_local_size(1), pitch = edge + 1;
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int row0 = get_group_id(1) * edge, col0 = get_group_id(0) * edge;
    for (int y = ly; y < edge; y += step) {
        const int r = row0 + y, c = col0 + lx;
        if (r < rows && c < cols) tile[y * pitch + lx] = in[r * cols + c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int y = ly; y < edge; y += step) {
        const int out_row = col0 + y, out_col = row0 + lx;
        if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[lx * pitch + y];
    }
}

// ---------------------------------------------------------------- deliberately broken

/// transpose_tiled_padded WITHOUT its barrier. Nothing makes a work-item wait until the
/// elements it reads from the tile have been loaded by the others. Run only when asked for by
/// name (--kernel transpose_tiled_racy); Oclgrind's --data-races reports it (see README.md).
kernel void transpose_tiled_racy(global const float* restrict in, global float* restrict out, int rows, int cols) {
    local float tile[TILE][TILE + 1];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int row0 = get_group_id(1) * TILE, col0 = get_group_id(0) * TILE;
    for (int y = ly; y < TILE; y += ROWS_PER_PASS) {
        const int r = row0 + y, c = col0 + lx;
        if (r < rows && c < cols) tile[y][lx] = in[r * cols + c];
    }
    // (the barrier was here)
    for (int y = ly; y < TILE; y += ROWS_PER_PASS) {
        const int out_row = col0 + y, out_col = row0 + lx;
        if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[lx][y];
    }
}
