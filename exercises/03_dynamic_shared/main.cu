// Exercise 03_dynamic_shared: generated from lessons/03_dynamic_shared/main.cu by scripts/make_exercises.cmake.
// Write the code each TODO(03.*) asks for; exercises/03_dynamic_shared/README.md says what "solved" means
// and has hints. Check it: scripts/exercises.sh check 03    All of them: scripts/exercises.sh
// Lesson 03 — dynamic shared memory: sized at launch, opted into above 48 KiB, carved into arrays.
// What it shows: `extern __shared__` arrays sized by the third launch parameter (a reversal of n
// floats in one block, n chosen at run time, above 48 KiB only after cudaFuncSetAttribute); sizes
// beyond the GPU's limit refused before launching; lesson 02's transpose with its tile edge chosen
// at run time (--tile), the padded tile flattened by hand, and what a run-time loop step costs;
// three arrays of different types carved from one buffer; the carveout and occupancy.
// The tutorial's dynamic transpose flattens the tile with threadIdx.y * blockDim.y (right only for
// square blocks) and drops its padding; the blog post's shared-memory configuration calls are
// deprecated or superseded (lessons/03_dynamic_shared/notes.md, "Where the source documents go wrong").
// Leaves out: bank conflicts of the smaller tiles (lesson 06), cp.async / TMA, distributed shared
// memory. Read next: lessons/04_reduction; CUDA C++ Programming Guide, "Shared Memory".
#include "lesson.cuh"
#include "transpose_bench.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

// ---------------------------------------------------------------- the limits

/// The GPU's numbers, read once (the launchers need them on every call).
const course::DeviceReport& this_gpu() {
    static const course::DeviceReport report = course::query_device();
    return report;
}

/// Throws DoesNotFitError unless `bytes` of shared memory fit in one block under `limit`.
void require_smem_fits(std::size_t bytes, std::size_t limit, const std::string& what) {
    if (bytes > limit)
        throw course::DoesNotFitError(what + " needs " + std::to_string(bytes) + " bytes of shared memory per block; "
                                      "this GPU allows at most " + std::to_string(limit) +
                                      " (cudaDevAttrMaxSharedMemoryPerBlockOptin)");
}

/// Makes `kernel` launchable with `bytes` of dynamic shared memory, or throws. Up to
/// smem_per_block (48 KiB) every kernel may have it; above that the kernel must opt in.
template <class Kernel>
void allow_dynamic_smem(Kernel* kernel, std::size_t bytes, const std::string& what) {
    require_smem_fits(bytes, this_gpu().smem_per_block_optin, what);
    if (bytes > this_gpu().smem_per_block)
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

// ---------------------------------------------------------------- 1. reversal, any n

constexpr int kReverseThreads = 1024;

/// Reverses d[0..n) in place in one block; each thread handles every blockDim.x-th element.
__global__ void reverse_in_block_dynamic(float* d, int n) {
    extern __shared__ float s[];  // n floats: the launch's third parameter gave n * 4 bytes
    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = d[i];
    __syncthreads();  // every element is in s before any is overwritten in d
    for (int i = threadIdx.x; i < n; i += blockDim.x) d[i] = s[n - 1 - i];
}

void launch_reverse_in_block_dynamic(float* d, int n) {
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    allow_dynamic_smem(reverse_in_block_dynamic, bytes, "reversing " + std::to_string(n) + " floats in one block");
    reverse_in_block_dynamic<<<1, std::min(n, kReverseThreads), bytes>>>(d, n);
    CUDA_CHECK_LAUNCH();
}

/// The same launch with the kernel's limit set back to the default: what happens to a request
/// above 48 KiB that did not opt in. Returns the launch's error instead of throwing it.
cudaError_t launch_reverse_without_opt_in(float* d, int n) {
    CUDA_CHECK(cudaFuncSetAttribute(reverse_in_block_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(this_gpu().smem_per_block)));
    reverse_in_block_dynamic<<<1, std::min(n, kReverseThreads), static_cast<std::size_t>(n) * sizeof(float)>>>(d, n);
    return cudaGetLastError();  // also clears it: a refused launch is not a sticky error
}

// ---------------------------------------------------------------- 2. transpose, tile at run time

constexpr int kTileSizes[] = {8, 16, 32, 64, 128};  // timed by default; 256 is accepted and refused on current GPUs

/// Throws UsageError unless `tile` is a power of two from 8 to 256.
int validate_tile(long long tile) {
    if (tile < 8 || tile > 256 || (tile & (tile - 1)) != 0)
        throw course::UsageError("--tile must be one of 8, 16, 32, 64, 128, 256 (got '" + std::to_string(tile) + "')");
    return static_cast<int>(tile);
}

/// tile x (256 / tile) threads: a warp spans whole tile rows and a block has 256 threads
/// (64 for tile 8, whose blocks would otherwise be taller than the tile).
dim3 transpose_block(int tile) { return dim3(tile, std::max(1, std::min(tile, 256 / tile))); }
std::size_t transpose_smem_bytes(int tile) { return static_cast<std::size_t>(tile) * (tile + 1) * sizeof(float); }

/// Lesson 02's padded transpose with the tile edge = blockDim.x, rows per pass = blockDim.y,
/// written the obvious way. It is correct, and slow: in lesson 02 the loop step was the constant
/// 8 and the compiler unrolled the loop, so a thread's 4 loads could be in flight together.
/// Here the step is blockDim.y, and nvcc 13.0 leaves this loop rolled (see its PTX: one
/// ld.global, the st.shared that must wait for it, the branch back): one 4-byte load in flight
/// per thread at a time. Kept to be measured beside the version below.
__global__ void transpose_dynamic_tile_plain(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(03.tile): lesson 02's padded transpose on an `extern __shared__` tile whose edge is blockDim.x.
    //   The launcher gives transpose_smem_bytes(edge) = edge * (edge + 1) floats: index the flat tile by hand.
    //   Check: GPU test case "both dynamic-tile transposes match..." for every tile in kTileSizes (8 to 128) on kShapes.
}

/// The same transpose, with a thread's rows (threadIdx.y, + blockDim.y, + 2 * blockDim.y, ...)
/// taken kRowsInFlight at a time: all global loads of a group go into registers before any of
/// them is written to shared memory, so they are in flight together whatever the compiler does
/// with the outer loop. The inner loops have a compile-time trip count, so they unroll. The
/// store phase is grouped the same way (shared loads first, then global stores).
// [[maybe_unused]]: the exercise's stub does not use it yet, and nvcc would warn about that.
[[maybe_unused]] constexpr int kRowsInFlight = 4;  // as many as lesson 02's unrolled loop had
__global__ void transpose_dynamic_tile(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(03.tile_in_flight): the same transpose, each thread's rows taken kRowsInFlight at a time.
    //   Load kRowsInFlight values into a register array (an inner loop of constant trip count) before storing any.
    //   Check: the same GPU test case as 03.tile; the lesson's table then shows what the grouping gains.
}

using TransposeKernel = void (*)(const float*, float*, int, int);

void launch_transpose_dynamic_tile(const float* in, float* out, int rows, int cols, int tile,
                                   TransposeKernel kernel = transpose_dynamic_tile) {
    const std::size_t bytes = transpose_smem_bytes(tile);
    allow_dynamic_smem(kernel, bytes, "a " + std::to_string(tile) + " x " + std::to_string(tile + 1) + " tile");
    const dim3 grid(course::ceil_div(cols, tile), course::ceil_div(rows, tile));
    kernel<<<grid, transpose_block(tile), bytes>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- 3. several arrays, one buffer

__host__ __device__ constexpr std::size_t align_up(std::size_t offset, std::size_t alignment) {
    return (offset + alignment - 1) / alignment * alignment;
}

/// Byte offsets of n doubles, n floats and n chars in one buffer, and its total size. Largest
/// alignment first: each array then ends on a boundary good enough for the next one, so
/// align_up never has to insert a gap (a float array first would leave the doubles misaligned
/// for odd n, and a misaligned double load is an error, not just slow).
struct RecordLayout {
    std::size_t doubles, floats, chars, bytes;
};
__host__ __device__ constexpr RecordLayout record_layout(int n) {
    RecordLayout l{};
    l.doubles = 0;  // the buffer itself is declared 16-byte aligned
    l.floats = align_up(l.doubles + n * sizeof(double), alignof(float));
    l.chars = align_up(l.floats + n * sizeof(float), alignof(char));
    l.bytes = l.chars + n * sizeof(char);
    return l;
}

/// Records (a double, a float and a char, stored as three arrays) reversed in order within each
/// block's chunk of blockDim.x records; the last chunk may be shorter.
__global__ void reverse_records_in_blocks(const double* a, const float* b, const char* c, double* a_out, float* b_out,
                                          char* c_out, int n) {
    // TODO(03.records): carve a double, a float and a char array out of one `extern __shared__` buffer, then reverse.
    //   record_layout(blockDim.x) gives each array's byte offset; each block reverses its own chunk (the last is shorter).
    //   Check: GPU test case "reverse_records_in_blocks: three arrays..." for n = 1, 255, 256, 257, 1000, 100003.
}

constexpr int kRecordThreads = 256;
void launch_reverse_records_in_blocks(const double* a, const float* b, const char* c, double* a_out, float* b_out,
                                      char* c_out, int n) {
    const std::size_t bytes = record_layout(kRecordThreads).bytes;
    allow_dynamic_smem(reverse_records_in_blocks, bytes, "a block of records");
    reverse_records_in_blocks<<<course::ceil_div(n, kRecordThreads), kRecordThreads, bytes>>>(a, b, c, a_out, b_out, c_out, n);
    CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- CPU side

using course::transpose_cpu;  // the CPU reference, out[c][r] = in[r][c] (common/verify.hpp)

/// Reverses each consecutive chunk of `chunk` elements (the last one may be shorter).
template <class T>
std::vector<T> reverse_chunks_cpu(std::vector<T> v, std::size_t chunk) {
    for (std::size_t first = 0; first < v.size(); first += chunk)
        std::reverse(v.begin() + first, v.begin() + std::min(v.size(), first + chunk));
    return v;
}

/// One run of reverse_records_in_blocks on n records (random floats from `seed`), outputs poisoned
/// first: the three input arrays and the three outputs, copied back.
struct RecordsRun {
    std::vector<double> a, a_out;
    std::vector<float> b, b_out;
    std::vector<char> c, c_out;
};
RecordsRun run_reverse_records(int n, std::uint32_t seed) {
    RecordsRun r{std::vector<double>(n), {}, course::random_floats(n, seed), {}, std::vector<char>(n), {}};
    for (int i = 0; i < n; ++i) r.a[i] = 1.0 / (i + 1), r.c[i] = static_cast<char>(i * 37 % 127);
    course::DeviceBuffer<double> da(r.a), da_out(n);
    course::DeviceBuffer<float> db(r.b), db_out(n);
    course::DeviceBuffer<char> dc(r.c), dc_out(n);
    da_out.poison();
    db_out.poison();
    dc_out.poison();
    launch_reverse_records_in_blocks(da.data(), db.data(), dc.data(), da_out.data(), db_out.data(), dc_out.data(), n);
    r.a_out = da_out.to_host();
    r.b_out = db_out.to_host();
    r.c_out = dc_out.to_host();
    return r;
}

/// Each of the three outputs compared with the CPU separately.
struct RecordsCheck {
    course::VerifyResult doubles, floats, chars;
    bool ok() const { return doubles.ok() && floats.ok() && chars.ok(); }
};
RecordsCheck compare_records(const RecordsRun& r) {
    return {course::compare_exact(r.a_out, reverse_chunks_cpu(r.a, kRecordThreads), 1),
            course::compare_exact(r.b_out, reverse_chunks_cpu(r.b, kRecordThreads), 1),
            course::compare_exact(r.c_out, reverse_chunks_cpu(r.c, kRecordThreads), 1)};
}

// ---------------------------------------------------------------- the lesson

/// Host only: the shared memory each tile edge asks for. Every CUDA GPU gives a block 48 KiB
/// without asking (cudaDevAttrMaxSharedMemoryPerBlock); more needs the opt-in, up to a per-GPU limit.
void print_smem_budget() {
    constexpr std::size_t kDefaultPerBlock = 48 * 1024;
    std::printf("== shared memory per block of transpose_dynamic_tile: tile x (tile + 1) floats ==\n");
    for (int t : {8, 16, 32, 64, 128, 256}) {
        const std::size_t bytes = transpose_smem_bytes(t);
        std::printf("  tile %3d: %3d x %3d x 4 B = %6zu B = %6.1f KiB%s\n", t, t, t + 1, bytes, bytes / 1024.0,
                    bytes > kDefaultPerBlock ? "  (above 48 KiB: only with the opt-in, if the GPU has that much)" : "");
    }
    std::printf("\n");
}

int lesson(int argc, char** argv) {
    long long rows = 8192, cols = 8192, tile_option = 0, reverse_n = 0;
    course::TimingOptions timing;
    course::Cli cli("03_dynamic_shared", "Dynamic shared memory: a run-time-sized reversal (above 48 KiB), three arrays "
                                         "in one buffer, the carveout, and the transpose with a run-time tile.");
    cli.option("--rows", &rows, "rows of the input matrix", 1, 65536)
        .option("--cols", &cols, "columns of the input matrix", 1, 65536)
        .option("--tile", &tile_option, "tile edge; 0 = time 8 to 128", {0, 8, 16, 32, 64, 128, 256})
        .option("--reverse-n", &reverse_n, "floats reversed in one block; 0 = as many as the GPU allows", 0, 1LL << 28);
    course::add_timing_options(cli, timing);
    if (!cli.parse(argc, argv)) return course::kExitOk;
    if (rows * cols > INT32_MAX) throw course::UsageError("--rows x --cols must stay below 2^31 elements");
    std::vector<int> tiles(std::begin(kTileSizes), std::end(kTileSizes));
    if (tile_option != 0) tiles = {validate_tile(tile_option)};

    print_smem_budget();
    course::require_gpu();
    const course::DeviceReport& gpu = this_gpu();
    course::print_device_report(gpu);
    bool all_ok = true;
    // By default, time only the tiles this GPU can hold (a T4's 64 KiB opt-in limit has no room
    // for the 128 x 129 tile); a --tile it cannot hold is refused below with exit code 4.
    if (tile_option == 0) {
        std::vector<int> fitting;
        for (int t : tiles) {
            if (transpose_smem_bytes(t) <= gpu.smem_per_block_optin) fitting.push_back(t);
            else std::printf("tile %d left out: its %zu bytes of shared memory exceed this GPU's per-block limit of %zu\n",
                             t, transpose_smem_bytes(t), gpu.smem_per_block_optin);
        }
        tiles = fitting;
    }

    // 1. The reversal, by default as large as one block may hold.
    const int n = reverse_n ? static_cast<int>(reverse_n) : static_cast<int>(gpu.smem_per_block_optin / sizeof(float));
    require_smem_fits(n * sizeof(float), gpu.smem_per_block_optin, "reversing " + std::to_string(n) + " floats in one block");
    const std::vector<float> host = course::random_floats(n, 11);
    std::printf("reverse_in_block_dynamic: %d floats = %zu bytes of dynamic shared memory (default limit %zu, opt-in limit %zu)\n",
                n, n * sizeof(float), gpu.smem_per_block, gpu.smem_per_block_optin);
    if (n * sizeof(float) > gpu.smem_per_block) {
        course::DeviceBuffer<float> scratch(host);
        const cudaError_t refused = launch_reverse_without_opt_in(scratch.data(), n);
        std::printf("  without cudaFuncSetAttribute: %s (%s)\n", cudaGetErrorName(refused), cudaGetErrorString(refused));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    course::DeviceBuffer<float> d(host);
    launch_reverse_in_block_dynamic(d.data(), n);
    const course::VerifyResult rev = course::compare_exact(d.to_host(), std::vector<float>(host.rbegin(), host.rend()), n);
    std::printf("  with it: %s\n\n", rev.summary().c_str());
    all_ok &= rev.ok();

    // 2. Three arrays carved from one buffer.
    constexpr int kRecords = 1 << 20;
    const RecordLayout l = record_layout(kRecordThreads);
    const bool records_ok = compare_records(run_reverse_records(kRecords, 12)).ok();
    std::printf("reverse_records_in_blocks: %d records, %d per block; doubles at byte %zu, floats at %zu, chars at %zu, "
                "%zu bytes: %s\n\n", kRecords, kRecordThreads, l.doubles, l.floats, l.chars, l.bytes, records_ok ? "ok" : "FAIL");
    all_ok &= records_ok;

    // 3. The carveout: a hint, in percent of the most shared memory an SM can have, of how much
    //    of the SM's L1/shared storage this kernel would like as shared memory. The driver rounds
    //    it up to a size the SM supports, and every block also costs a small reserved amount.
    int reserved = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, gpu.index));
    std::printf("== blocks per SM of transpose_dynamic_tile, as cudaOccupancyMaxActiveBlocksPerMultiprocessor reports ==\n");
    std::printf("  (each block also takes %d bytes the driver reserves: cudaDevAttrReservedSharedMemoryPerBlock)\n", reserved);
    std::printf("  %-22s", "carveout hint");
    for (int t : {32, 64, 128}) std::printf("  tile %3d (%6zu B)", t, transpose_smem_bytes(t));
    std::printf("\n");
    const TransposeKernel kernel = transpose_dynamic_tile;
    for (int carveout : {static_cast<int>(cudaSharedmemCarveoutDefault), 0, 25, 50, 100}) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
        std::printf("  %-22s", carveout < 0 ? "default (none set)" : (std::to_string(carveout) + " %").c_str());
        for (int t : {32, 64, 128}) {
            if (transpose_smem_bytes(t) > gpu.smem_per_block_optin) {  // a T4: tile 128 does not fit
                std::printf("  %19s", "does not fit");
                continue;
            }
            allow_dynamic_smem(kernel, transpose_smem_bytes(t), "a tile");
            const dim3 block = transpose_block(t);
            int blocks = 0;
            CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block.x * block.y,
                                                                     transpose_smem_bytes(t)));
            std::printf("  %19d", blocks);
        }
        std::printf("\n");
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    static_cast<int>(cudaSharedmemCarveoutDefault)));  // the timings below use the default
    std::printf("\n");

    // 4. The transposes, one per tile edge, beside the device copy; at tile 32 also the plain
    //    loop, to compare with lesson 02's 32 x 33 kernel of the same shape.
    course::TransposeBench bench(rows, cols, timing);  // common/transpose_bench.cuh: the copy first
    for (int t : tiles) allow_dynamic_smem(kernel, transpose_smem_bytes(t), "a " + std::to_string(t) + " x " + std::to_string(t + 1) + " tile");
    struct Run {
        int tile;
        TransposeKernel kernel;
        const char* name;
    };
    std::vector<Run> runs;
    for (int t : tiles) {
        if (t == 32) runs.push_back({t, transpose_dynamic_tile_plain, "transpose_dynamic_tile_plain"});
        runs.push_back({t, transpose_dynamic_tile, "transpose_dynamic_tile"});
    }
    for (const Run& run : runs) {
        const int t = run.tile;
        const dim3 block = transpose_block(t);
        const std::string name = std::string(run.name) + " " + std::to_string(t) + "x" + std::to_string(t + 1) + ", " +
                                 std::to_string(block.x) + "x" + std::to_string(block.y) + " thr";
        bench.add(name, [&](const float* in, float* out, int r, int c) {
            launch_transpose_dynamic_tile(in, out, r, c, t, run.kernel);
        });
    }
    return bench.finish("03_dynamic_shared", gpu, all_ok);
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
