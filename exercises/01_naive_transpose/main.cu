// Exercise 01_naive_transpose: generated from lessons/01_naive_transpose/main.cu by scripts/make_exercises.cmake.
// Write the code each TODO(01.*) asks for; exercises/01_naive_transpose/README.md says what "solved" means
// and has hints. Check it: scripts/exercises.sh check 01    All of them: scripts/exercises.sh
// Lesson 01 — the naive transpose, and what a strided access costs.
// What it shows: a copy kernel and cudaMemcpy device-to-device, the speed a transpose can hope
// for (it moves as many bytes as a copy), and two copies with more bytes in flight per thread;
// the naive transpose both ways, threadIdx.x walking the input's rows (as the tutorial does) or
// its columns, side by side; and a host-side model that counts the 32-byte sectors one warp's
// access touches, which says in advance which half of each kernel is strided.
// The tutorial says its naive kernel's *writes* are uncoalesced; with threadIdx.x picking the row
// it is the reads that jump a whole row per thread, as the model and the timings both show.
// Leaves out: shared memory (lesson 02 uses it to make both sides coalesced).
// Read next: lessons/02_shared_transpose; CUDA C++ Best Practices Guide, "Coalesced Access to
// Global Memory".
#include "lesson.cuh"
#include "transpose_bench.cuh"

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

// Every kernel here uses 32 x 8 threads per block and one element per thread: a warp is one
// row of 32 threads (threadIdx.x = 0..31 with the same threadIdx.y).
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

// ---------------------------------------------------------------- kernels
// `in` is rows x cols, row-major; `out` is cols x rows. Every kernel checks its bounds, so any
// shape works, not only multiples of the block.

/// Not a transpose: out = in, with the same thread layout as the naive kernels. Its speed is
/// what the naive kernels would reach if neither side of their access were strided.
__global__ void copy_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) out[row * cols + col] = in[row * cols + col];
}

/// The copy again, with more bytes in flight per thread: each thread copies kPerThread elements
/// of its column, rows kBlockY apart, and issues all its loads before its first store. A block
/// now covers 32 x 32 elements, so there are also 4 times fewer blocks.
constexpr int kPerThread = 4;
__global__ void copy_4_per_thread(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    const int col = blockIdx.x * kBlockX + threadIdx.x;
    const int row0 = blockIdx.y * (kBlockY * kPerThread) + threadIdx.y;
    float v[kPerThread];
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
        const int row = row0 + k * kBlockY;
        if (row < rows && col < cols) v[k] = in[row * cols + col];
    }
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
        const int row = row0 + k * kBlockY;
        if (row < rows && col < cols) out[row * cols + col] = v[k];
    }
}

/// Wider still: each thread moves kPerThread float4s (16 bytes each, 64 bytes in flight), so a
/// warp covers 128 consecutive floats of a row and a block 128 x 32 elements. A float4 needs a
/// 16-byte-aligned address: when cols % 4 != 0 (or a pointer is not aligned) the same thread
/// moves its 4 elements one by one.
__global__ void copy_float4_4_per_thread(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    const int col = 4 * (blockIdx.x * kBlockX + threadIdx.x);  // the first of this thread's 4 columns
    const int row0 = blockIdx.y * (kBlockY * kPerThread) + threadIdx.y;
    const bool vector = cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                        reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
    float4 v[kPerThread];
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
        const int row = row0 + k * kBlockY;
        v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (row >= rows || col >= cols) continue;
        const float* src = in + static_cast<std::size_t>(row) * cols + col;
        if (vector) {
            v[k] = *reinterpret_cast<const float4*>(src);
        } else {
            v[k].x = src[0];
            if (col + 1 < cols) v[k].y = src[1];
            if (col + 2 < cols) v[k].z = src[2];
            if (col + 3 < cols) v[k].w = src[3];
        }
    }
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
        const int row = row0 + k * kBlockY;
        if (row >= rows || col >= cols) continue;
        float* dst = out + static_cast<std::size_t>(row) * cols + col;
        if (vector) {
            *reinterpret_cast<float4*>(dst) = v[k];
        } else {
            dst[0] = v[k].x;
            if (col + 1 < cols) dst[1] = v[k].y;
            if (col + 2 < cols) dst[2] = v[k].z;
            if (col + 3 < cols) dst[3] = v[k].w;
        }
    }
}

/// The tutorial's naive kernel: threadIdx.x picks the *row* of the input. Neighbouring threads of
/// a warp read elements one whole row (cols * 4 bytes) apart: strided reads. They write
/// out[col * rows + row] at consecutive addresses: coalesced writes.
__global__ void transpose_naive_strided_reads(const float* __restrict__ in, float* __restrict__ out, int rows,
                                              int cols) {
    // TODO(01.strided_reads): one element per thread, out[col][row] = in[row][col], with threadIdx.x picking the ROW.
    //   The launcher's grid has x over the rows of `in`, y over its columns; test your bounds on both.
    //   Check: GPU test case "every transpose matches the CPU reference..." on every shape in check.cu's kShapes.
}

/// The other way round: threadIdx.x picks the *column*. Reads are coalesced; each thread of a
/// warp writes to a different row of `out`, rows * 4 bytes apart: strided writes.
__global__ void transpose_naive_strided_writes(const float* __restrict__ in, float* __restrict__ out, int rows,
                                               int cols) {
    // TODO(01.strided_writes): the same transpose with threadIdx.x picking the COLUMN of `in`.
    //   The launcher's grid has x over the columns of `in`, y over its rows.
    //   Check: the same GPU test case, same shapes (1 x 1, 1 x 1000, primes, 4099 x 31, 2048 x 2048, ...).
}

// ---------------------------------------------------------------- launchers
// The check (check.cu) calls these same functions, so it tests exactly what runs here.

using Launcher = void (*)(const float* in, float* out, int rows, int cols);

void launch_copy(const float* in, float* out, int rows, int cols) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(course::ceil_div(cols, kBlockX), course::ceil_div(rows, kBlockY));
    copy_kernel<<<grid, block>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_copy_4_per_thread(const float* in, float* out, int rows, int cols) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(course::ceil_div(cols, kBlockX), course::ceil_div(rows, kBlockY * kPerThread));
    copy_4_per_thread<<<grid, block>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_copy_float4_4_per_thread(const float* in, float* out, int rows, int cols) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(course::ceil_div(cols, 4 * kBlockX), course::ceil_div(rows, kBlockY * kPerThread));
    copy_float4_4_per_thread<<<grid, block>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_transpose_naive_strided_reads(const float* in, float* out, int rows, int cols) {
    const dim3 block(kBlockX, kBlockY);  // x walks rows of the input here
    const dim3 grid(course::ceil_div(rows, kBlockX), course::ceil_div(cols, kBlockY));
    transpose_naive_strided_reads<<<grid, block>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_transpose_naive_strided_writes(const float* in, float* out, int rows, int cols) {
    const dim3 block(kBlockX, kBlockY);  // x walks columns of the input here
    const dim3 grid(course::ceil_div(cols, kBlockX), course::ceil_div(rows, kBlockY));
    transpose_naive_strided_writes<<<grid, block>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

struct Transpose {
    const char* name;
    Launcher launch;
};
/// The copies, fewest bytes in flight per thread first: 4, 16, 64.
const Transpose kCopies[] = {
    {"copy_kernel (not a transpose)", launch_copy},
    {"copy, 4 floats per thread", launch_copy_4_per_thread},
    {"copy, 4 float4 per thread", launch_copy_float4_4_per_thread},
};
/// The transposes of this lesson, in the order they are presented.
const Transpose kTransposes[] = {
    {"transpose_naive_strided_reads", launch_transpose_naive_strided_reads},
    {"transpose_naive_strided_writes", launch_transpose_naive_strided_writes},
};

// ---------------------------------------------------------------- CPU side

using course::transpose_cpu;  // the CPU reference, out[c][r] = in[r][c] (common/verify.hpp)

/// The sector model. Global memory moves in 32-byte sectors: a warp's load or store costs one
/// sector for every distinct 32-byte-aligned piece of memory its 32 addresses fall in.
/// 32 consecutive floats = 128 bytes = 4 sectors (ideal); 32 floats a row apart = 32 sectors,
/// of which the warp uses 4 bytes each (12.5% of what is moved).
int sectors_touched(const std::vector<std::uint64_t>& byte_addresses, int bytes_per_access) {
    std::set<std::uint64_t> sectors;
    for (std::uint64_t a : byte_addresses)
        for (std::uint64_t s = a / 32; s <= (a + bytes_per_access - 1) / 32; ++s) sectors.insert(s);
    return static_cast<int>(sectors.size());
}

/// Byte offsets (within `in` and `out`) that warp 0 of block (0, 0) reads and writes.
struct WarpAccess {
    std::vector<std::uint64_t> reads, writes;
};
enum class Walk { Copy, StridedReads, StridedWrites };
WarpAccess first_warp_access(Walk walk, int rows, int cols) {
    WarpAccess w;
    for (int lane = 0; lane < 32; ++lane) {
        const std::uint64_t a = lane, b = 0;  // threadIdx.x = lane, threadIdx.y = 0
        const std::uint64_t row = (walk == Walk::StridedReads) ? a : b;
        const std::uint64_t col = (walk == Walk::StridedReads) ? b : a;
        w.reads.push_back((row * cols + col) * sizeof(float));
        w.writes.push_back(walk == Walk::Copy ? (row * cols + col) * sizeof(float)
                                              : (col * rows + row) * sizeof(float));
    }
    return w;
}

// ---------------------------------------------------------------- the lesson

int lesson(int argc, char** argv) {
    course::TransposeOptions opt;
    course::Cli cli("01_naive_transpose", "Times a copy, cudaMemcpy and the naive transpose both ways, "
                                          "checks every output against the CPU, and prints the sector model.");
    if (!course::add_transpose_options(cli, opt).parse(argc, argv)) return course::kExitOk;
    course::check_transpose_options(opt);
    const int rows = static_cast<int>(opt.rows), cols = static_cast<int>(opt.cols);

    std::printf("== sector model: one warp (32 threads x 4-byte float) of each kernel ==\n");
    std::printf("  %-32s %13s %13s\n", "kernel", "read sectors", "write sectors");
    const std::pair<const char*, Walk> walks[] = {{"copy_kernel", Walk::Copy},
                                                  {"transpose_naive_strided_reads", Walk::StridedReads},
                                                  {"transpose_naive_strided_writes", Walk::StridedWrites}};
    for (const auto& [name, walk] : walks) {
        const WarpAccess w = first_warp_access(walk, rows, cols);
        std::printf("  %-32s %13d %13d\n", name, sectors_touched(w.reads, 4), sectors_touched(w.writes, 4));
    }
    std::printf("  (4 sectors = 128 bytes = the 32 floats the warp needs; 32 sectors = 1024 bytes moved for 128 used)\n\n");

    course::require_gpu();
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);

    course::TransposeBench bench(rows, cols, opt.timing);  // common/transpose_bench.cuh: the copy first
    for (const Transpose& k : kCopies) bench.add(k.name, k.launch, /*is_copy=*/true);  // a copy writes its input
    for (const Transpose& k : kTransposes) bench.add(k.name, k.launch);
    return bench.finish("01_naive_transpose", gpu);
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
