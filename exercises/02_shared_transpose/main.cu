// Exercise 02_shared_transpose: generated from lessons/02_shared_transpose/main.cu by scripts/make_exercises.cmake.
// Write the code each TODO(02.*) asks for; exercises/02_shared_transpose/README.md says what "solved" means
// and has hints. Check it: scripts/exercises.sh check 02    All of them: scripts/exercises.sh
// Lesson 02 — a transpose through a shared-memory tile: both global accesses coalesced.
// What it shows: __syncthreads() as the line between "every thread has written its part of the
// tile" and "any thread may read any part of it", first on reversing an array in one block; the
// tiled transpose (a 32 x 32 tile, block indices swapped, threadIdx.x walking columns on both
// sides); padding the tile to 32 x 33 so that a tile column spans all 32 banks; then float4 global
// accesses with more bytes in flight per thread (a 64 x 65 tile), in both block orders.
// The CUDA page of the tutorial "Shared Memory" keeps threadIdx.x on rows on both sides, so its tile
// buys nothing: transpose_tiled_source_mapping keeps that mapping (bounds fixed) to measure it.
// Leaves out: dynamic shared memory (lesson 03), bank arithmetic in depth (lesson 06), and in
// going_further/: 16-byte shared accesses with a swizzle, and the latency of one load.
// Read next: going_further/, lessons/03_dynamic_shared; CUDA C++ Programming Guide, "Shared Memory".
#include "float4.cuh"
#include "lesson.cuh"
#include "transpose_bench.cuh"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

// ---------------------------------------------------------------- 1. reversal in one block

constexpr int kMaxStaticReverse = 1024;  // one thread per element, and a block has at most 1024

/// Reverses d[0..n) in place, n <= blockDim.x: thread t copies d[t] into s[t], then writes d[t]
/// from s[n-1-t], which thread n-1-t stored. The barrier makes that read safe: without it, a
/// thread of one warp could read s[n-1-t] before another warp has written it.
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

/// The tutorial's mapping, kept to be measured (16 x 16 threads, a 16 x 17 tile, as there).
/// Load: threadIdx.x picks the input ROW, so a warp (16 x 2 threads) reads from 16 rows, 2
/// floats each. Store: threadIdx.x picks the output ROW: the warp writes to 16 rows, 2 each.
/// The tutorial tested out_row < rows and out_col < cols here, only right when rows == cols.
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
/// and store: kTileW / kRows x kTileW / 32 of them (1 for <32, 32>, 8 for <64, 16>). The store
/// gathers its float4 from 4 consecutive tile rows of one column. Shared memory stays scalar: with a pitch of kTileW + 1
/// (== 1 mod 32) the word of tile (y, x) is in bank (y + x) mod 32, and a warp's (y, x) pairs —
/// 4 consecutive y, x in {0, 4, ..., 28} (+ k) — hit 32 different banks in both phases.
/// Edges: float4 needs 16-byte-aligned addresses, i.e. cols % 4 == 0 for loads and
/// rows % 4 == 0 for stores; when that fails the same thread moves its 4 elements one by one
/// (load4 and store4, common/float4.cuh, as lesson 01 wrote out). kColumnOrder: see tile_origin.
template <int kTileW, int kRows, bool kColumnOrder = false>
__global__ void transpose_tiled_padded_float4(const float* __restrict__ in, float* __restrict__ out, int rows,
                                              int cols) {
    constexpr int kPasses = kTileW / kRows, kStrips = kTileW / 32;
    __shared__ float tile[kTileW][kTileW + 1];
    const bool vector_loads = cols % 4 == 0 && aligned16(in), vector_stores = rows % 4 == 0 && aligned16(out);
    const int2 origin = tile_origin<kColumnOrder>(kTileW);
    const int row0 = origin.x, col0 = origin.y;
    const int y0 = threadIdx.y, x0 = 4 * threadIdx.x;

    // Every load lands in a register first, so all of a thread's loads can be in flight at once
    // before the first shared store. nvcc does this on its own where it unrolls a loop (the SASS
    // of transpose_tiled, whose code stores each value as soon as it is loaded, has its
    // 4 loads before its 4 stores, see notes.md); written out like this it does not depend on it.
    float4 v[kPasses][kStrips];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
#pragma unroll
        for (int s = 0; s < kStrips; ++s)  // zeros outside the matrix: they go into the tile, never out
            v[p][s] = load4(in, rows, cols, row0 + y0 + p * kRows, col0 + x0 + 32 * s, vector_loads);
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
            store4(out, cols, rows, out_row, out_col, w, vector_stores);
        }
    }
}

// ---------------------------------------------------------------- launchers

using Launcher = void (*)(const float* in, float* out, int rows, int cols);

void launch_transpose_tiled_source_mapping(const float* in, float* out, int rows, int cols) {
    const dim3 block(kSourceTile, kSourceTile);  // x walks rows of the input, as in the tutorial
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

struct Transpose {
    const char* name;
    Launcher launch;
};
/// The transposes of this lesson, in the order they are presented. Bytes each thread has in
/// flight: 16 for the scalar 32 x 32 kernels (4 floats) and the first float4 kernel (1 float4),
/// 128 for the others (8 float4s). Other float4 shapes (64 x 65 with 8 x 32 or 8 x 8 threads)
/// were measured while writing the lesson and were no faster in row order; try them with the
/// template. The last one changes only the block order; going_further/ goes on from there.
const Transpose kTransposes[] = {
    {"transpose_tiled_source_mapping (16x17)", launch_transpose_tiled_source_mapping},
    {"transpose_tiled (32x32, 32x8 thr)", launch_transpose_tiled<kTile>},
    {"transpose_tiled_padded (32x33, 32x8 thr)", launch_transpose_tiled<kTile + 1>},
    {"padded_float4 (32x33, 8x32 thr)", launch_transpose_tiled_padded_float4<32, 32>},
    {"padded_float4 (64x65, 8x16 thr)", launch_transpose_tiled_padded_float4<64, 16>},
    {"padded_float4 (64x65, 8x16 thr), column order", launch_transpose_tiled_padded_float4<64, 16, true>},
};

// ---------------------------------------------------------------- CPU side

using course::transpose_cpu;  // the CPU reference, out[c][r] = in[r][c] (common/verify.hpp)

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

// ---------------------------------------------------------------- the lesson

int lesson(int argc, char** argv) {
    course::TransposeOptions opt;
    course::Cli cli("02_shared_transpose", "Reverses an array through a static __shared__ array, then times the "
                                           "tiled transposes beside cudaMemcpy and checks each against the CPU.");
    if (!course::add_transpose_options(cli, opt).parse(argc, argv)) return course::kExitOk;
    course::check_transpose_options(opt);
    const int rows = static_cast<int>(opt.rows), cols = static_cast<int>(opt.cols);

    std::printf("== bank model: passes one warp needs for one shared-memory access (1 = conflict-free) ==\n");
    std::printf("  %-48s %9s %9s\n", "access", "pitch 32", "pitch 33");
    const std::pair<const char*, Phase> phases[] = {{"scalar kernel, load phase: writes a tile row", Phase::ScalarLoad},
                                                    {"scalar kernel, store phase: reads a tile column", Phase::ScalarStore},
                                                    {"float4 kernel, load phase (k = 0)", Phase::Float4Load},
                                                    {"float4 kernel, store phase (k = 0)", Phase::Float4Store}};
    for (const auto& [what, phase] : phases)
        std::printf("  %-48s %9d %9d\n", what, bank_passes(warp_tile_words(phase, 32)),
                    bank_passes(warp_tile_words(phase, 33)));
    std::printf("\n");

    course::require_gpu();
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);

    // The reversal: in place, so the input itself is the "poison" an unwritten element would leave.
    const std::vector<float> host = course::random_floats(kMaxStaticReverse, 7);
    course::DeviceBuffer<float> d(host);
    launch_reverse_in_block_static(d.data(), kMaxStaticReverse);
    const course::VerifyResult reversed =
        course::compare_exact(d.to_host(), std::vector<float>(host.rbegin(), host.rend()), kMaxStaticReverse);
    std::printf("reverse_in_block_static, %d floats in one block: %s\n\n", kMaxStaticReverse, reversed.summary().c_str());

    course::TransposeBench bench(rows, cols, opt.timing);  // common/transpose_bench.cuh: the copy first
    for (const Transpose& k : kTransposes) bench.add(k.name, k.launch);
    return bench.finish("02_shared_transpose", gpu, reversed.ok());
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif