// Exercise 02_shared_transpose: generated from lessons/02_shared_transpose/main.cu by scripts/make_exercises.cmake.
// Write the code each TODO(02.*) asks for; exercises/02_shared_transpose/README.md says what "solved" means
// and has hints. Check it: scripts/exercises.sh check 02    All of them: scripts/exercises.sh
// Lesson 02 — a transpose through a shared-memory tile: both global accesses coalesced.
//
// What it shows:
//   * __syncthreads() as the line between "every thread has written its part of the tile" and
//     "any thread may read any part of it", first on the smallest example: reversing an array
//     in place inside one block, through a static __shared__ array;
//   * the tiled transpose: a block copies a 32 x 32 tile of the input into shared memory with
//     threadIdx.x walking columns, then writes the tile out — swapped block indices, threadIdx.x
//     again walking columns — so the global reads AND the global writes are contiguous per warp;
//   * padding the tile to 32 x 33 so that reading a column of the tile hits 32 different banks;
//   * a last step, "wider accesses", in two moves: first the same 32 x 33 tile with each thread
//     moving one float4 (16 bytes) per global load and store instead of four floats — fewer,
//     wider global instructions, the same 16 bytes in flight per thread; then a 64 x 65 tile
//     moved by 8 x 16 threads, 128 bytes (eight float4s) in flight per thread, which is what
//     gets close to the copy ceiling;
//   * the last steps to the copy: the block order (blockIdx.x walking down a column of tiles, so
//     the blocks running together write whole output rows), and 16-byte shared accesses: each
//     thread transposes 4 x 4 blocks in registers into a tile laid out like the output, with its
//     16-byte columns XOR-swizzled so that neither phase has bank conflicts (a quarter of the
//     shared-memory instructions, which is what the 64 x 65 kernel's warps mostly wait for);
//   * a side measurement, printed before the transposes: the latency of one load from shared
//     memory, L1, L2 and device memory (a pointer chase), to test the seeds' latency claims.
// What the source got wrong: its "shared memory" kernel takes the row from threadIdx.x on the
// load and the output row from threadIdx.x on the store, so a warp still strides through memory
// on both sides and the tile buys nothing (it is slower than the naive kernel). Its store-side
// bounds test also compares the output row with the input's row count, which only holds for
// square matrices. Both are fixed here (transpose_tiled_source_mapping keeps the mapping, fixes
// the bounds) and the timing table shows the cost of the mapping.
// What it leaves out: dynamic shared memory and tile sizes chosen at run time (lesson 03), the
// bank arithmetic in depth (lesson 06).
// Read next: lessons/03_dynamic_shared; CUDA C++ Programming Guide, "Shared Memory" and
// "Memory Fence / Synchronization Functions"; Best Practices Guide, "Shared Memory".
#include "lesson.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

// ---------------------------------------------------------------- 1. reversal in one block

constexpr int kMaxStaticReverse = 1024;  // one thread per element, and a block has at most 1024

/// Reverses d[0..n) in place, n <= blockDim.x. In place is only safe because of the barrier:
/// thread t overwrites d[t], which thread n-1-t must have read (into s) before that happens.
/// Without it, a thread of one warp could read s[n-1-t] before another warp has written it.
__global__ void reverse_in_block_static(float* d, int n) {
    __shared__ float s[kMaxStaticReverse];  // size fixed at compile time
    const int t = threadIdx.x;
    if (t < n) s[t] = d[t];
    __syncthreads();  // reached by every thread: never put a barrier inside `if (t < n)`
    if (t < n) d[t] = s[n - 1 - t];
}

void launch_reverse_in_block_static(float* d, int n) {
    if (n < 1 || n > kMaxStaticReverse)
        throw course::DoesNotFitError("the static reversal handles 1.." + std::to_string(kMaxStaticReverse) +
                                      " elements, not " + std::to_string(n) + " (lesson 03 lifts the limit)");
    reverse_in_block_static<<<1, n>>>(d, n);
    CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- 2. transposes
// `in` is rows x cols, row-major; `out` is cols x rows. Every kernel checks its bounds.

/// The source's mapping, kept to be measured (16 x 16 threads, 16 x 17 tile as in the source).
/// Load: threadIdx.x picks the input ROW, so a warp (16 x 2 threads) reads from 16 rows, 2
/// floats each. Store: threadIdx.x picks the output ROW: the warp writes to 16 rows, 2 each.
/// The source tested out_row < rows and out_col < cols here, which is only right when
/// rows == cols.
constexpr int kSourceTile = 16;
__global__ void transpose_tiled_source_mapping(const float* __restrict__ in, float* __restrict__ out, int rows,
                                               int cols) {
    __shared__ float tile[kSourceTile][kSourceTile + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int r = blockIdx.x * kSourceTile + tx, c = blockIdx.y * kSourceTile + ty;
    if (r < rows && c < cols) tile[ty][tx] = in[r * cols + c];
    __syncthreads();
    const int out_row = blockIdx.y * kSourceTile + tx, out_col = blockIdx.x * kSourceTile + ty;
    if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[tx][ty];
}

/// The fix. 32 x 8 threads move a 32 x 32 tile, 4 rows per thread. threadIdx.x walks columns
/// in both phases: a warp reads 32 consecutive floats of an input row, then writes 32
/// consecutive floats of an output row. The price is paid in shared memory instead: the store
/// phase reads a COLUMN of the tile. kPitch = 32 puts that whole column in one bank (32-way
/// conflict); kPitch = 33 shifts each row by one bank, so the column spans all 32.
/// Tile element (y, x) holds in[row0 + y][col0 + x]; the store phase reads it as column y.
constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;
template <int kPitch>
__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(02.tiled): a kTile x kPitch shared tile: load it, __syncthreads(), store it with the block indices swapped.
    //   32 x 8 threads per block, kRowsPerPass rows per pass; threadIdx.x walks columns in BOTH phases.
    //   This one body is both transpose_tiled (kPitch 32) and transpose_tiled_padded (kPitch 33).
    //   Check: GPU test cases "every transpose matches..." (kShapes) and "...not 16-byte aligned" (64x64, 36x100, 100x36).
}

/// Block order. Blocks start roughly in the order of their index, x fastest (observed, not
/// promised: CUDA lets blocks run in any order), so the blocks that run at the same time are
/// neighbours in that order. Row order (blockIdx.x = tile column): they read
/// whole input rows, and each writes its 64 output rows in 256-byte pieces far apart. Column
/// order (blockIdx.x = tile ROW, the grid launched as (row tiles, column tiles)): they walk down a
/// column of tiles, read 256-byte pieces far apart, and together write whole output rows. The
/// bytes are the same; the measured table says which order device memory prefers.
/// Returns (first input row, first input column) of this block's kTileW x kTileW tile.
template <bool kColumnOrder>
__device__ int2 tile_origin(int tile_w) {
    if (kColumnOrder) return make_int2(blockIdx.x * tile_w, blockIdx.y * tile_w);
    return make_int2(blockIdx.y * tile_w, blockIdx.x * tile_w);
}

/// Wider accesses. The block is 8 x kRows threads; threadIdx.x picks 4 consecutive columns, so
/// a warp covers 4 rows x 32 floats and each thread moves float4s (16 bytes) per global load
/// and store: kTileW / kRows x kTileW / 32 of them (1 for <32, 32>, 8 for <64, 16>). The store gathers its float4 from 4
/// consecutive tile rows of one column. Shared memory stays scalar: with a pitch of kTileW + 1
/// (== 1 mod 32) the word of tile (y, x) is in bank (y + x) mod 32, and a warp's (y, x) pairs —
/// 4 consecutive y, x in {0, 4, ..., 28} (+ k) — hit 32 different banks in both phases.
/// Edges: float4 needs 16-byte-aligned addresses, i.e. cols % 4 == 0 for loads and
/// rows % 4 == 0 for stores; when that fails the same thread moves its 4 elements one by one.
/// kColumnOrder: which tile a block takes, see tile_origin below.
template <int kTileW, int kRows, bool kColumnOrder = false>
__global__ void transpose_tiled_padded_float4(const float* __restrict__ in, float* __restrict__ out, int rows,
                                              int cols) {
    constexpr int kPasses = kTileW / kRows, kStrips = kTileW / 32;
    __shared__ float tile[kTileW][kTileW + 1];
    const bool vector_loads = cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
    const bool vector_stores = rows % 4 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
    const int2 origin = tile_origin<kColumnOrder>(kTileW);
    const int row0 = origin.x, col0 = origin.y;
    const int y0 = threadIdx.y, x0 = 4 * threadIdx.x;

    // Every load lands in a register first, so all of a thread's loads can be in flight at once
    // before the first shared store. nvcc does this on its own where it unrolls a loop (the SASS
    // of transpose_tiled, which stores each value as soon as it is loaded in the source, has its
    // 4 loads before its 4 stores, see README.md); written out like this it does not depend on it.
    float4 v[kPasses][kStrips];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
#pragma unroll
        for (int s = 0; s < kStrips; ++s) {
            const int r = row0 + y0 + p * kRows, c = col0 + x0 + 32 * s;
            float4& e = v[p][s];
            e = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // outside the matrix: goes into the tile, never out
            if (r >= rows || c >= cols) continue;
            const float* src = in + r * cols + c;
            if (vector_loads) {  // c % 4 == 0 and cols % 4 == 0, so c + 3 < cols too
                e = *reinterpret_cast<const float4*>(src);
            } else {
                e.x = src[0];
                if (c + 1 < cols) e.y = src[1];
                if (c + 2 < cols) e.z = src[2];
                if (c + 3 < cols) e.w = src[3];
            }
        }
    }
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
#pragma unroll
        for (int s = 0; s < kStrips; ++s) {
            const int y = y0 + p * kRows, x = x0 + 32 * s;
            tile[y][x] = v[p][s].x, tile[y][x + 1] = v[p][s].y, tile[y][x + 2] = v[p][s].z, tile[y][x + 3] = v[p][s].w;
        }
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
#pragma unroll
        for (int s = 0; s < kStrips; ++s) {
            const int y = y0 + p * kRows, x = x0 + 32 * s;
            const int out_row = col0 + y, out_col = row0 + x;  // tile column y is output row col0 + y
            if (out_row >= cols || out_col >= rows) continue;
            const float4 w = make_float4(tile[x][y], tile[x + 1][y], tile[x + 2][y], tile[x + 3][y]);
            float* dst = out + out_row * rows + out_col;
            if (vector_stores) {
                *reinterpret_cast<float4*>(dst) = w;
            } else {
                dst[0] = w.x;
                if (out_col + 1 < rows) dst[1] = w.y;
                if (out_col + 2 < rows) dst[2] = w.z;
                if (out_col + 3 < rows) dst[3] = w.w;
            }
        }
    }
}

/// Wider shared accesses. The kernel above moves float4s through global memory but single floats
/// through shared memory: 8 shared instructions per float4 (4 stores, 4 loads), and Nsight Compute
/// shows its warps waiting mostly for the shared-memory instruction queue (README.md). Here each
/// thread loads a 4 x 4 block of the input as 4 float4 rows, transposes it in registers (output
/// row m of the block is element m of the 4 rows), and writes 4 float4s into a tile laid out like
/// the OUTPUT; the store phase then reads that tile row by row, one float4 per store: 2 shared
/// instructions per float4 instead of 8. The block is 16 x 8 threads; thread (j, i) owns the 4 x 4
/// blocks (i + 8p, j) of the 64 x 64 tile, 8 float4 loads in flight as before.
/// Banks: a 16-byte access is served a half-warp at a time (lesson 06), and a half-warp's 16
/// float4s are conflict-free when they fall evenly on the 8 groups of 4 banks. The fill has the 16
/// lanes of a half-warp (j = 0..15) write the same 16-byte column of rows 4j + m: 16 rows 4 apart,
/// all in one bank group. Padding cannot fix that (a row must stay a multiple of 4 floats for the
/// float4 alignment, so rows 4 apart always land on at most 2 groups); swizzle_chunk does: it XORs
/// the 16-byte column with the row's group of 4, (r / 4) % 8, which sends rows 4j + m, j = 0..7,
/// to 8 different groups and leaves a row's 16 chunks a permutation of themselves (the drain reads
/// a row: still conflict-free). The bank table printed by the lesson counts both.
constexpr int kRegTile = 64, kRegChunks = kRegTile / 4, kRegRows = 8;  // 16 x 8 threads
__host__ __device__ constexpr int swizzle_chunk(int r, int chunk) { return chunk ^ ((r / 4) % 8); }

template <bool kColumnOrder>
__global__ void __launch_bounds__(kRegChunks * kRegRows)
    transpose_registers_float4(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    constexpr int kBlocksPerThread = kRegChunks / kRegRows;  // 4 x 4 blocks: 2
    __shared__ float4 tile[kRegTile][kRegChunks];  // tile[r][c]: output row col0 + r, columns row0 + 4c..4c+3
    const bool vector_loads = cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
    const bool vector_stores = rows % 4 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
    const int2 origin = tile_origin<kColumnOrder>(kRegTile);
    const int row0 = origin.x, col0 = origin.y;
    const int j = threadIdx.x;  // this thread's 4 input columns: col0 + 4j .. col0 + 4j + 3

    float4 v[kBlocksPerThread][4];  // [block][k]: input row row0 + 4i + k, i = threadIdx.y + 8 * block
#pragma unroll
    for (int b = 0; b < kBlocksPerThread; ++b) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int r = row0 + 4 * (threadIdx.y + kRegRows * b) + k, c = col0 + 4 * j;
            float4& e = v[b][k];
            e = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // outside the matrix: goes into the tile, never out
            if (r >= rows || c >= cols) continue;
            const float* src = in + r * cols + c;
            if (vector_loads) {
                e = *reinterpret_cast<const float4*>(src);
            } else {
                e.x = src[0];
                if (c + 1 < cols) e.y = src[1];
                if (c + 2 < cols) e.z = src[2];
                if (c + 3 < cols) e.w = src[3];
            }
        }
    }
#pragma unroll
    for (int b = 0; b < kBlocksPerThread; ++b) {
        const int i = threadIdx.y + kRegRows * b;  // output columns row0 + 4i .. 4i + 3
        const float4* q = v[b];
        tile[4 * j + 0][swizzle_chunk(4 * j + 0, i)] = make_float4(q[0].x, q[1].x, q[2].x, q[3].x);
        tile[4 * j + 1][swizzle_chunk(4 * j + 1, i)] = make_float4(q[0].y, q[1].y, q[2].y, q[3].y);
        tile[4 * j + 2][swizzle_chunk(4 * j + 2, i)] = make_float4(q[0].z, q[1].z, q[2].z, q[3].z);
        tile[4 * j + 3][swizzle_chunk(4 * j + 3, i)] = make_float4(q[0].w, q[1].w, q[2].w, q[3].w);
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kRegTile / kRegRows; ++p) {
        const int r = threadIdx.y + kRegRows * p;  // tile row r = output row col0 + r
        const int out_row = col0 + r, out_col = row0 + 4 * j;
        if (out_row >= cols || out_col >= rows) continue;
        const float4 w = tile[r][swizzle_chunk(r, j)];
        float* dst = out + out_row * rows + out_col;
        if (vector_stores) {
            *reinterpret_cast<float4*>(dst) = w;
        } else {
            dst[0] = w.x;
            if (out_col + 1 < rows) dst[1] = w.y;
            if (out_col + 2 < rows) dst[2] = w.z;
            if (out_col + 3 < rows) dst[3] = w.w;
        }
    }
}

// ---------------------------------------------------------------- launchers

using Launcher = void (*)(const float* in, float* out, int rows, int cols);

void launch_transpose_tiled_source_mapping(const float* in, float* out, int rows, int cols) {
    const dim3 block(kSourceTile, kSourceTile);  // x walks rows of the input, as in the source
    const dim3 grid(course::ceil_div(rows, kSourceTile), course::ceil_div(cols, kSourceTile));
    transpose_tiled_source_mapping<<<grid, block>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

template <int kPitch>
void launch_transpose_tiled(const float* in, float* out, int rows, int cols) {
    const dim3 block(kTile, kRowsPerPass);
    const dim3 grid(course::ceil_div(cols, kTile), course::ceil_div(rows, kTile));
    transpose_tiled<kPitch><<<grid, block>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

/// The grid: (column tiles, row tiles) in row order, (row tiles, column tiles) in column order.
template <bool kColumnOrder>
dim3 tile_grid(int rows, int cols, int tile_w) {
    const unsigned row_tiles = course::ceil_div(rows, tile_w), col_tiles = course::ceil_div(cols, tile_w);
    return kColumnOrder ? dim3(row_tiles, col_tiles) : dim3(col_tiles, row_tiles);
}

template <int kTileW, int kRows, bool kColumnOrder = false>
void launch_transpose_tiled_padded_float4(const float* in, float* out, int rows, int cols) {
    const dim3 block(8, kRows);
    transpose_tiled_padded_float4<kTileW, kRows, kColumnOrder>
        <<<tile_grid<kColumnOrder>(rows, cols, kTileW), block>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

template <bool kColumnOrder>
void launch_transpose_registers_float4(const float* in, float* out, int rows, int cols) {
    transpose_registers_float4<kColumnOrder>
        <<<tile_grid<kColumnOrder>(rows, cols, kRegTile), dim3(kRegChunks, kRegRows)>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

struct Transpose {
    const char* name;
    Launcher launch;
};
/// The transposes of this lesson, in the order they are presented. Bytes each thread has in
/// flight: 16 for the scalar 32 x 32 kernels (4 floats) and the first float4 kernel (1 float4),
/// 128 for the others (8 float4s). Other float4 shapes (64 x 65 with 8 x 32 or 8 x 8 threads)
/// were measured while writing the lesson and were no faster in row order; try them with the
/// template. The last three change one thing each: the block order, then the shared accesses.
const Transpose kTransposes[] = {
    {"transpose_tiled_source_mapping (16x17)", launch_transpose_tiled_source_mapping},
    {"transpose_tiled (32x32, 32x8 thr)", launch_transpose_tiled<kTile>},
    {"transpose_tiled_padded (32x33, 32x8 thr)", launch_transpose_tiled<kTile + 1>},
    {"padded_float4 (32x33, 8x32 thr)", launch_transpose_tiled_padded_float4<32, 32>},
    {"padded_float4 (64x65, 8x16 thr)", launch_transpose_tiled_padded_float4<64, 16>},
    {"padded_float4 (64x65, 8x16 thr), column order", launch_transpose_tiled_padded_float4<64, 16, true>},
    {"registers_float4 (64x64 swizzled, 16x8 thr)", launch_transpose_registers_float4<false>},
    {"registers_float4 (64x64 swizzled), column order", launch_transpose_registers_float4<true>},
};

// ---------------------------------------------------------------- CPU side

std::vector<float> transpose_cpu(const std::vector<float>& in, int rows, int cols) {
    std::vector<float> out(in.size());
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) out[static_cast<std::size_t>(c) * rows + r] = in[static_cast<std::size_t>(r) * cols + c];
    return out;
}

/// The bank model: shared memory has 32 banks, 4-byte word w lives in bank w % 32, and a warp
/// access takes one pass per distinct word in its busiest bank (same word = broadcast, free).
int bank_passes(const std::vector<int>& words) {
    int worst = 0;
    for (int bank = 0; bank < 32; ++bank) {
        std::vector<int> distinct;
        for (int w : words)
            if (w % 32 == bank && std::find(distinct.begin(), distinct.end(), w) == distinct.end()) distinct.push_back(w);
        worst = std::max(worst, static_cast<int>(distinct.size()));
    }
    return worst;
}

/// Tile words warp 0 touches with a pitch of `pitch` floats per tile row. Scalar kernels: lane =
/// threadIdx.x; the store phase reads tile[lane][0]. float4 kernels: threadIdx = (lane % 8,
/// lane / 8), x = 4 * (lane % 8); the load writes tile[y][x + k], the store reads tile[x + k][y].
enum class Phase { ScalarLoad, ScalarStore, Float4Load, Float4Store };
std::vector<int> warp_tile_words(Phase phase, int pitch, int k = 0) {
    std::vector<int> words;
    for (int lane = 0; lane < 32; ++lane) {
        const int y = lane / 8, x = 4 * (lane % 8) + k;
        switch (phase) {
            case Phase::ScalarLoad: words.push_back(lane); break;
            case Phase::ScalarStore: words.push_back(lane * pitch); break;
            case Phase::Float4Load: words.push_back(y * pitch + x); break;
            case Phase::Float4Store: words.push_back(x * pitch + y); break;
        }
    }
    return words;
}

/// The same model for transpose_registers_float4's 16-byte shared accesses, which are served a
/// half-warp at a time: passes of warp 0's first instruction = passes of half-warp 0 + passes of
/// half-warp 1, each counted over the 4 words of each of its 16 lanes. 4 is conflict-free (512
/// bytes, 128 per pass). Warp 0 is threadIdx.y = 0 and 1 (one per half), threadIdx.x = j = 0..15.
/// Fill: lane j writes row 4j (m = 0), column i = threadIdx.y; drain: row threadIdx.y, column j.
int float4_tile_passes(bool fill, bool swizzled) {
    int passes = 0;
    for (int half = 0; half < 2; ++half) {
        std::vector<int> words;
        for (int j = 0; j < kRegChunks; ++j) {
            const int r = fill ? 4 * j : half, c = fill ? half : j;
            const int chunk = swizzled ? swizzle_chunk(r, c) : c;
            for (int w = 0; w < 4; ++w) words.push_back(r * kRegTile + 4 * chunk + w);
        }
        passes += bank_passes(words);
    }
    return passes;
}

// ---------------------------------------------------------------- 3. a side measurement: latency
// How long does ONE load take, from each kind of memory? The seeds say shared memory answers
// "about 100 times" sooner than global memory (000, 001, 002) and give a table of cycles (004);
// this section measures it. A pointer chase: one thread loads chain[j] and uses the value as the
// next j, so every load waits for the one before it, and cycles / loads is the latency of one
// load (plus the few cycles of index arithmetic between two loads). The chain is one cycle
// through all of its nodes, in random order, so the hardware cannot guess the next address.
// Which memory answers is decided by where the chain lives and how it is loaded:
//   shared   16 KiB copied into a __shared__ array;
//   L1       16 KiB in global memory, plain loads (which this GPU caches in L1 and L2), after
//            one untimed pass around the chain has brought it into L1;
//   L2       8 MiB (more than L1 holds, far less than L2), loaded with __ldcg (cache in L2
//            only: L1 is skipped), after one untimed pass;
//   DRAM     1 GiB, __ldcg, after a write over twice the L2 size has pushed the chain out of L2;
//            only a prefix of the chain is timed, so no line is loaded twice. Twice: once with
//            the nodes visited in random order inside each 2 MiB piece (the pieces in random
//            order), so almost every load finds its address translation cached; once in random
//            order over the whole 1 GiB, where many loads also miss the translation caches (TLB).
// Every node sits on its own 128-byte line (shared: its own 4-byte word), so no two loads share
// a cache line.

enum class Where { Shared, L1, L2, Dram };
constexpr int kSharedChainWords = 4096;  // 16 KiB: the whole shared-memory chain

/// A chain of `nodes` nodes, `stride` 4-byte words apart: the word of each node holds the word
/// index of the next. The order is random inside each run of `group` consecutive nodes, and
/// the runs are visited in random order; it is one cycle through every node, from `start`.
struct Chain {
    std::vector<unsigned> words;
    unsigned start = 0;
};
Chain make_chain(std::size_t nodes, std::size_t stride, std::size_t group, std::uint32_t seed) {
    if (nodes == 0 || group == 0 || nodes % group != 0 || nodes * stride > (1ull << 32))
        throw std::invalid_argument("make_chain: bad sizes");
    std::mt19937 rng(seed);
    std::vector<std::size_t> groups(nodes / group), order;
    std::iota(groups.begin(), groups.end(), std::size_t{0});
    std::shuffle(groups.begin(), groups.end(), rng);
    order.reserve(nodes);
    for (std::size_t g : groups) {
        const std::size_t first = order.size();
        for (std::size_t k = 0; k < group; ++k) order.push_back(g * group + k);
        std::shuffle(order.begin() + first, order.end(), rng);
    }
    Chain c;
    c.words.assign(nodes * stride, 0);
    for (std::size_t k = 0; k < nodes; ++k)
        c.words[order[k] * stride] = static_cast<unsigned>(order[(k + 1) % nodes] * stride);
    c.start = static_cast<unsigned>(order[0] * stride);
    return c;
}

/// Where the chain is walked CPU-side: the node reached after `hops` steps (for the checks).
unsigned walk_chain_cpu(const Chain& c, long long hops) {
    unsigned j = c.start;
    for (long long i = 0; i < hops; ++i) j = c.words[j];
    return j;
}

template <Where kWhere>
__device__ unsigned next_node(const unsigned* chain, const unsigned* s, unsigned j) {
    if constexpr (kWhere == Where::Shared) return s[j];
    else if constexpr (kWhere == Where::L1) return chain[j];  // a plain load: cached in L1 (and L2)
    else return __ldcg(chain + j);                            // "cache global": in L2, not in L1
}

/// One thread: `warmup` untimed steps, then `hops` timed ones. result = {cycles, last node}.
template <Where kWhere>
__global__ void pointer_chase(const unsigned* chain, int shared_words, unsigned start, long long warmup,
                              long long hops, long long* result) {
    __shared__ unsigned s[kSharedChainWords];
    if constexpr (kWhere == Where::Shared)
        for (int i = 0; i < shared_words; ++i) s[i] = chain[i];
    unsigned j = start;
    for (long long i = 0; i < warmup; ++i) j = next_node<kWhere>(chain, s, j);
    const long long t0 = clock64();
    for (long long i = 0; i < hops; ++i) j = next_node<kWhere>(chain, s, j);
    const long long t1 = clock64();
    result[0] = t1 - t0;
    result[1] = j;  // stored, so the loads are not dead code, and checked
}

/// Spins for `cycles` SM clock cycles; timed with CUDA events it tells the clock this run had.
__global__ void spin_cycles(long long cycles, long long* result) {
    const long long t0 = clock64();
    long long t = t0;
    while (t - t0 < cycles) t = clock64();
    *result = t - t0;
}

struct LatencyRow {
    std::string where;
    double footprint_bytes = 0;
    long long hops = 0;
    double cycles_per_load = 0;
    bool ok = false;  // the chase ended on the node the CPU walk says
};
struct LatencyConfig {
    std::size_t dram_bytes = std::size_t{1} << 30;
    long long hops = 1 << 16;  // timed loads per row
};

/// Runs one chase and checks where it ended. `flush_bytes` > 0: write over that many bytes
/// first, which pushes the chain out of L2.
template <Where kWhere>
LatencyRow run_chase(const std::string& where, const Chain& c, long long warmup, long long hops, std::size_t flush_bytes = 0) {
    course::DeviceBuffer<unsigned> chain(c.words);
    course::DeviceBuffer<long long> result(2);
    if (flush_bytes > 0) {
        course::DeviceBuffer<unsigned char> scratch(flush_bytes);
        CUDA_CHECK(cudaMemset(scratch.data(), 0, scratch.bytes()));
    }
    pointer_chase<kWhere><<<1, 1>>>(chain.data(), static_cast<int>(std::min<std::size_t>(c.words.size(), kSharedChainWords)),
                                    c.start, warmup, hops, result.data());
    CUDA_CHECK_LAUNCH();
    const std::vector<long long> r = result.to_host();
    LatencyRow row;
    row.where = where;
    row.footprint_bytes = static_cast<double>(c.words.size()) * sizeof(unsigned);
    row.hops = hops;
    row.cycles_per_load = static_cast<double>(r[0]) / static_cast<double>(hops);
    row.ok = static_cast<unsigned>(r[1]) == walk_chain_cpu(c, warmup + hops);
    return row;
}

/// The five rows of the latency table (cycles per load), in the order of the comment above.
std::vector<LatencyRow> measure_latency(const course::DeviceReport& gpu, const LatencyConfig& cfg) {
    constexpr std::size_t kLine = 32;                      // words: one node per 128-byte line
    constexpr std::size_t kPiece = (2u << 20) / 4 / kLine;  // nodes in 2 MiB
    const std::size_t l1_nodes = (16u << 10) / 4 / kLine, l2_nodes = (8u << 20) / 4 / kLine;
    const std::size_t dram_nodes = cfg.dram_bytes / 4 / kLine, flush = 2 * gpu.l2_bytes;
    course::require_device_memory(static_cast<double>(cfg.dram_bytes + flush), "the latency chase");
    const long long dram_hops = std::min<long long>(cfg.hops, static_cast<long long>(dram_nodes));
    std::vector<LatencyRow> rows;
    rows.push_back(run_chase<Where::Shared>("shared memory", make_chain(kSharedChainWords, 1, kSharedChainWords, 1), 0,
                                            cfg.hops));
    rows.push_back(run_chase<Where::L1>("L1 (plain load, warmed)", make_chain(l1_nodes, kLine, l1_nodes, 2),
                                        static_cast<long long>(l1_nodes), cfg.hops));
    rows.push_back(run_chase<Where::L2>("L2 (__ldcg, warmed)", make_chain(l2_nodes, kLine, l2_nodes, 3),
                                        static_cast<long long>(l2_nodes), cfg.hops));
    rows.push_back(run_chase<Where::Dram>("DRAM, random inside 2 MiB pieces",
                                          make_chain(dram_nodes, kLine, std::min(kPiece, dram_nodes), 4), 0, dram_hops, flush));
    rows.push_back(run_chase<Where::Dram>("DRAM, random over all of it", make_chain(dram_nodes, kLine, dram_nodes, 5), 0,
                                          dram_hops, flush));
    return rows;
}

/// The SM clock during this run, in Hz: clock64 cycles over CUDA-event time.
double measured_sm_clock_hz() {
    course::DeviceBuffer<long long> result(1);
    const long long cycles = 100'000'000;  // about 50 ms at 2 GHz: the launch cost is lost in it
    spin_cycles<<<1, 1>>>(cycles / 100, result.data());  // warm-up
    CUDA_CHECK_LAUNCH();
    const course::Timing t = course::time_gpu([&] { spin_cycles<<<1, 1>>>(cycles, result.data()); CUDA_CHECK_LAUNCH(); }, 0, 1);
    return static_cast<double>(result.to_host()[0]) / (t.median_ms * 1e-3);
}

/// "16 KiB", "8 MiB", "1 GiB"
std::string binary_size(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (bytes >= 1024 && u < 3) bytes /= 1024, ++u;
    char text[32];
    std::snprintf(text, sizeof text, "%.0f %s", bytes, units[u]);
    return text;
}

void print_latency(const std::vector<LatencyRow>& rows, double clock_hz) {
    std::printf("== latency: one thread, each load's address is the value the load before it returned ==\n");
    std::printf("  SM clock in this run: %.3f GHz (clock64 cycles over CUDA-event time)\n", clock_hz / 1e9);
    std::printf("  %-34s %9s %7s %12s %9s %9s  %s\n", "where the chain lives", "footprint", "loads", "cycles/load",
                "ns/load", "x shared", "check");
    for (const LatencyRow& r : rows)
        std::printf("  %-34s %9s %7lld %12.1f %9.1f %9.1f  %s\n", r.where.c_str(), binary_size(r.footprint_bytes).c_str(),
                    r.hops, r.cycles_per_load, r.cycles_per_load / clock_hz * 1e9,
                    r.cycles_per_load / rows.front().cycles_per_load, r.ok ? "ok" : "FAIL");
    std::printf("\n");
}

// ---------------------------------------------------------------- the lesson

int lesson(int argc, char** argv) {
    long long rows = 8192, cols = 8192;
    course::TimingOptions timing;
    course::Cli cli("02_shared_transpose", "Reverses an array through a static __shared__ array, then times the "
                                           "tiled transposes beside cudaMemcpy and checks each against the CPU.");
    cli.option("--rows", &rows, "rows of the input matrix", 1, 65536)
        .option("--cols", &cols, "columns of the input matrix", 1, 65536);
    course::add_timing_options(cli, timing);
    if (!cli.parse(argc, argv)) return course::kExitOk;
    if (rows * cols > INT32_MAX) throw course::UsageError("--rows x --cols must stay below 2^31 elements");

    std::printf("== bank model: passes one warp needs for one shared-memory access (1 = conflict-free) ==\n");
    std::printf("  %-48s %9s %9s\n", "access", "pitch 32", "pitch 33");
    const std::pair<const char*, Phase> phases[] = {{"scalar kernel, load phase: writes a tile row", Phase::ScalarLoad},
                                                    {"scalar kernel, store phase: reads a tile column", Phase::ScalarStore},
                                                    {"float4 kernel, load phase (k = 0)", Phase::Float4Load},
                                                    {"float4 kernel, store phase (k = 0)", Phase::Float4Store}};
    for (const auto& [what, phase] : phases)
        std::printf("  %-48s %9d %9d\n", what, bank_passes(warp_tile_words(phase, 32)),
                    bank_passes(warp_tile_words(phase, 33)));
    std::printf("  %-48s %9s %9s\n", "16-byte accesses, by half-warps (4 = no conflict)", "plain", "swizzled");
    std::printf("  %-48s %9d %9d\n", "registers kernel, load phase: writes a column", float4_tile_passes(true, false),
                float4_tile_passes(true, true));
    std::printf("  %-48s %9d %9d\n", "registers kernel, store phase: reads a row", float4_tile_passes(false, false),
                float4_tile_passes(false, true));
    std::printf("\n");

    course::require_gpu();
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);
    bool all_ok = true;

    {  // The reversal: in place, so the input itself is the "poison" an unwritten element would leave.
        const std::vector<float> host = course::random_floats(kMaxStaticReverse, 7);
        course::DeviceBuffer<float> d(host);
        launch_reverse_in_block_static(d.data(), kMaxStaticReverse);
        const course::VerifyResult r = course::compare_exact(d.to_host(), std::vector<float>(host.rbegin(), host.rend()),
                                                             kMaxStaticReverse);
        std::printf("reverse_in_block_static, %d floats in one block: %s\n\n", kMaxStaticReverse, r.summary().c_str());
        all_ok &= r.ok();
    }

    {  // Side measurement: how long one load takes from each memory (section 3).
        const double clock_hz = measured_sm_clock_hz();
        const std::vector<LatencyRow> rows = measure_latency(gpu, LatencyConfig{});
        print_latency(rows, clock_hz);
        for (const LatencyRow& r : rows) all_ok &= r.ok;
    }

    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const double bytes_moved = 2.0 * n * sizeof(float);  // every element read once and written once
    course::require_device_memory(bytes_moved, "two " + std::to_string(rows) + " x " + std::to_string(cols) + " float matrices");
    const std::vector<float> host_in = course::random_floats(n, 2024);
    const std::vector<float> expected = transpose_cpu(host_in, static_cast<int>(rows), static_cast<int>(cols));
    course::DeviceBuffer<float> in(host_in), out(n);

    course::ResultsTable table(std::to_string(rows) + " x " + std::to_string(cols) + " fp32 transpose, " +
                                   std::to_string(timing.repeats) + " repeats (median), GB/s counts bytes read + written",
                               "GB/s");
    const course::Timing ceiling = course::time_gpu(
        [&] { CUDA_CHECK(cudaMemcpy(out.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice)); }, timing.warmup,
        timing.repeats);
    table.add("cudaMemcpy device-to-device", ceiling.median_ms, course::gb_per_s(bytes_moved, ceiling.median_ms), "-", true);

    for (const Transpose& k : kTransposes) {
        out.poison();  // so an element the kernel forgets to write cannot look right
        k.launch(in.data(), out.data(), static_cast<int>(rows), static_cast<int>(cols));
        const course::VerifyResult check = course::compare_exact(out.to_host(), expected, rows);
        if (!check.ok()) std::printf("%s: %s\n", k.name, check.summary().c_str());
        all_ok &= check.ok();
        const course::Timing t = course::time_gpu(
            [&] { k.launch(in.data(), out.data(), static_cast<int>(rows), static_cast<int>(cols)); }, timing.warmup,
            timing.repeats);
        table.add(k.name, t.median_ms, course::gb_per_s(bytes_moved, t.median_ms), check.ok() ? "ok" : "FAIL");
    }

    table.print();
    if (!timing.csv.empty()) table.append_csv(timing.csv, "02_shared_transpose", gpu.short_description());
    std::printf("\n%s\n", all_ok ? "All outputs match the CPU reference." : "SOME OUTPUTS ARE WRONG (see above).");
    return all_ok ? course::kExitOk : course::kExitFailed;
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
