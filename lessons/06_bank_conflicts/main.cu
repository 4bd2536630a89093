// Lesson 06 — bank conflicts you can predict, see and measure.
// What it shows: a host-side bank model (give it the byte addresses one warp touches, 4, 8 or 16
// bytes each, and it says which bank each lane hits and how many wavefronts the access costs),
// lane-by-bank maps, the 8192 x 8192 transpose with a 32x32 tile unpadded, padded to 32x33 and
// XOR-swizzled beside cudaMemcpy, and `bank_probe`: one warp, one shared load (or store), so that
// Nsight Compute's counters map 1:1 onto the model (notes.md, ncu_probes.sh, ncu_patterns.sh).
// What the sources got wrong: "padding gives 4x"; on an H200 it is about 2x for this tile. Their
// compute capability 1.x-3.x bank rules and cudaDeviceSetSharedMemConfig are history (notes.md).
// Leaves out: ldmatrix and TMA swizzles. going_further/: a stride microbenchmark, 16x16 and float4 tiles.
// Read next: CUDA C++ Programming Guide, "Shared Memory" (compute capability 5.x and later); Nsight
// Compute Kernel Profiling Guide, "Memory Tables"; NVIDIA forum, "Unexpected shared memory bank conflict".
#include "lesson.cuh"
#include "transpose_bench.cuh"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

// ================================================================ 1. the bank model (host only)
// Shared memory is 32 banks, each 4 bytes wide; 4-byte word w lives in bank w % 32. One pass over
// the banks, a "wavefront", moves at most 128 bytes: one word per bank, to any number of lanes
// asking for that word (broadcast). A warp's access is served in parts, one after the other:
//     wavefronts of a part = max over banks of the number of DISTINCT words the part asks of that bank.
// The parts: 4-byte accesses, the whole warp; 8-byte, the two half-warps; 16-byte, the four
// quarter-warps (each part's data fills one wavefront). A LOAD in which every active lane n reads
// the address of lane n ^ 1, or of lane n ^ 2, has parts twice as large: a pair shares its data.
// Stores never pair. Load pairing: NVIDIA's forum answer "Unexpected shared memory bank conflict"
// (CC 7.0-7.5); the per-part cost and unpaired stores: this course's fit, confirmed by ncu on an H100.
// Conflicts, as ncu counts them: the wavefronts beyond one per part that has an active lane.

// SITE MODEL BEGIN: down to SITE MODEL END, also compiled to WebAssembly for the site's bank explorer (site/)
constexpr int kWarpSize = 32;
constexpr int kBanks = 32;
constexpr int kBankBytes = 4;
constexpr std::int64_t kInactive = -1;  // an address for a lane that does not take part

struct BankReport {
    int width = 4;                        // bytes per lane: 4, 8 or 16
    bool paired = false;                  // lanes pair up on one address (n with n ^ 1, or n with n ^ 2)
    int parts = 1;                        // groups of lanes served one after the other: 1, 2 or 4
    std::array<int, kWarpSize> bank{};    // first bank each lane touches, -1 if inactive
    std::array<int, kWarpSize> pass{};    // in which wavefront the lane is served (one schedule)
    int wavefronts = 0;                   // total, over all parts
    int ideal = 0;                        // parts with an active lane: the words of a part fit one wavefront
    int conflicts() const { return wavefronts - ideal; }           // what ncu reports as bank conflicts
    int degree() const { return ideal ? wavefronts / ideal : 0; }  // slowdown vs conflict-free
};

/// True if every active lane n asks for the same address as lane n ^ mask (or that lane is inactive).
bool lanes_pair_up(const std::vector<std::int64_t>& byte_addr, int mask) {
    for (int lane = 0; lane < static_cast<int>(byte_addr.size()); ++lane) {
        const int partner = lane ^ mask;
        if (byte_addr[lane] == kInactive || partner >= static_cast<int>(byte_addr.size())) continue;
        if (byte_addr[partner] != kInactive && byte_addr[partner] != byte_addr[lane]) return false;
    }
    return true;
}

/// The model. byte_addr[lane] is the shared-memory byte address of lane `lane` (kInactive to skip).
BankReport bank_model(const std::vector<std::int64_t>& byte_addr, int width, bool store = false) {
    if (width != 4 && width != 8 && width != 16) throw std::invalid_argument("bank_model: width must be 4, 8 or 16");
    if (byte_addr.size() > kWarpSize) throw std::invalid_argument("bank_model: at most 32 lanes");
    BankReport r;
    r.width = width;
    // A wavefront moves 128 bytes, one 4-byte register for each of 32 lanes: all lanes of a 4-byte
    // access, 16 of an 8-byte one, 8 of a 16-byte one. Loads of paired lanes share registers
    // (2 x the lanes per part); stores never do (measured, notes.md).
    r.paired = !store && width > 4 && (lanes_pair_up(byte_addr, 1) || lanes_pair_up(byte_addr, 2));
    const int lanes_per_part = std::min(kWarpSize, kWarpSize * kBankBytes / width * (r.paired ? 2 : 1));
    r.parts = kWarpSize / lanes_per_part;
    r.bank.fill(-1);
    r.pass.fill(-1);
    for (int part = 0; part < r.parts; ++part) {
        std::array<std::vector<std::int64_t>, kBanks> words;  // distinct words per bank, first-come order
        bool active = false;
        for (int lane = part * lanes_per_part; lane < (part + 1) * lanes_per_part; ++lane) {
            if (lane >= static_cast<int>(byte_addr.size()) || byte_addr[lane] == kInactive) continue;
            if (byte_addr[lane] < 0 || byte_addr[lane] % width != 0)
                throw std::invalid_argument("bank_model: lane " + std::to_string(lane) + " address not aligned to width");
            active = true;
            const std::int64_t first_word = byte_addr[lane] / kBankBytes;
            r.bank[lane] = static_cast<int>(first_word % kBanks);
            int pass = 0;
            for (std::int64_t w = first_word; w < first_word + width / kBankBytes; ++w) {
                auto& in_bank = words[w % kBanks];
                auto it = std::find(in_bank.begin(), in_bank.end(), w);
                if (it == in_bank.end()) it = in_bank.insert(in_bank.end(), w);
                pass = std::max(pass, static_cast<int>(it - in_bank.begin()));
            }
            r.pass[lane] = r.wavefronts + pass;  // offset by the wavefronts of earlier parts
        }
        std::size_t worst = 0;
        for (const auto& in_bank : words) worst = std::max(worst, in_bank.size());
        r.wavefronts += static_cast<int>(worst);
        r.ideal += active ? 1 : 0;
    }
    return r;
}

/// Lane l at byte l * stride * width: the pattern of s[lane * stride] for an array of that width.
std::vector<std::int64_t> strided_addresses(int stride, int width) {
    std::vector<std::int64_t> a;
    for (int lane = 0; lane < kWarpSize; ++lane) a.push_back(static_cast<std::int64_t>(lane) * stride * width);
    return a;
}

/// One line of the map: which wavefront serves each bank for this lane ('.' = bank not touched).
/// Wavefront numbers 0..31 are printed as 0-9 then a-v.
std::string map_row(const BankReport& r, const std::vector<std::int64_t>& addr, int lane) {
    std::string row(kBanks, '.');
    if (r.bank[lane] < 0) return row;
    const char* digits = "0123456789abcdefghijklmnopqrstuv";
    for (int k = 0; k < r.width / kBankBytes; ++k)
        row[(addr[lane] / kBankBytes + k) % kBanks] = r.pass[lane] < 32 ? digits[r.pass[lane]] : '+';
    return row;
}

/// Two maps side by side: lanes down, banks across, each mark = the wavefront that serves the lane.
void print_maps(const char* title_a, const std::vector<std::int64_t>& a, const char* title_b,
                const std::vector<std::int64_t>& b, int width) {
    const BankReport ra = bank_model(a, width), rb = bank_model(b, width);
    std::printf("  %-38s %s\n", title_a, title_b);
    const char* ruler = "0         10        20        30  ";
    std::printf("  lane  bank %s     %s\n", ruler, ruler);
    for (int lane = 0; lane < kWarpSize; ++lane)
        std::printf("  %4d       %s       %s\n", lane, map_row(ra, a, lane).c_str(), map_row(rb, b, lane).c_str());
    std::printf("  wavefronts: %-26d wavefronts: %d\n\n", ra.wavefronts, rb.wavefronts);
}

// ================================================================ 2. tile layouts, shared by kernels and model
// Where element (r, c) of a tile lives in shared memory, in 4-byte words. The kernels and the model
// both call at(), so the printed analysis is about exactly the code that runs.

template <int kTile>
struct UnpaddedTile {  // row r starts at word r * kTile: every row starts in bank 0 (kTile % 32 == 0)
    static constexpr int kWords = kTile * kTile;
    __host__ __device__ static constexpr int at(int r, int c) { return r * kTile + c; }
};
// EXERCISE BEGIN 06.padded: the padded layout: kWords (room for the padding) and at(r, c), so that a column read is conflict-free.
// EXERCISE TODO: Check: host test cases "tile column reads...", "every warp instruction..." and "tile layouts keep every element
// EXERCISE TODO: in its own word" (the bank model judges your layout), then the GPU transpose "tiled 32x33 padded".
// EXERCISE STUB: template <int kTile>
// EXERCISE STUB: struct PaddedTile {
// EXERCISE STUB:     static constexpr int kWords = kTile * kTile;
// EXERCISE STUB:     __host__ __device__ static constexpr int at(int /*r*/, int /*c*/) { return 0; }
// EXERCISE STUB: };
template <int kTile>
struct PaddedTile {  // one spare word per row: row r starts in bank r % 32, a column spreads over banks
    static constexpr int kWords = kTile * (kTile + 1);
    __host__ __device__ static constexpr int at(int r, int c) { return r * (kTile + 1) + c; }
};
// EXERCISE END
// EXERCISE BEGIN 06.swizzled: the swizzled layout: no spare words, and still a conflict-free column read.
// EXERCISE TODO: Permute the columns of each row with an XOR; at() must stay one-to-one inside kWords = kTile * kTile.
// EXERCISE TODO: Check: the same host test cases, then the GPU transpose "tiled 32x32 xor-swizzled".
// EXERCISE STUB: template <int kTile>
// EXERCISE STUB: struct SwizzledTile {
// EXERCISE STUB:     static constexpr int kWords = kTile * kTile;
// EXERCISE STUB:     __host__ __device__ static constexpr int at(int /*r*/, int /*c*/) { return 0; }
// EXERCISE STUB: };
template <int kTile>
struct SwizzledTile {  // no spare words: column c of row r is stored at column c ^ (r % 32) of that row
    static constexpr int kWords = kTile * kTile;
    __host__ __device__ static constexpr int at(int r, int c) { return r * kTile + (c ^ (r & 31)); }
};
// EXERCISE END
// SITE MODEL END

// ================================================================ 3. kernels

// ---- the probe: one warp, exactly one shared load of type T, for Nsight Compute.
constexpr int kProbeWords = 8192;  // 32 KiB; filled with 16-byte stores: 256 conflict-free store wavefronts

template <class T>  // unsigned (LDS), uint2 (LDS.64) or uint4 (LDS.128)
__global__ void bank_probe(const uint4* __restrict__ table, const int* __restrict__ element, T* __restrict__ out) {
    __shared__ uint4 s[kProbeWords / 4];
    for (int i = threadIdx.x; i < kProbeWords / 4; i += blockDim.x) s[i] = table[i];
    __syncthreads();
    const int e = element[threadIdx.x];  // index in units of T; -1 = this lane stays out
    if (e >= 0) out[threadIdx.x] = reinterpret_cast<const T*>(s)[e];
}

// ---- the transposes. `in` is rows x cols, `out` is cols x rows; any shape works.
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

/// The teaching kernel: a 32 x 32 tile per block of 32 x 8 threads, 4 elements per thread. Fill: a
/// warp reads part of an input row (coalesced) and writes a tile ROW. Drain: a warp reads a tile
/// COLUMN and writes part of an output row (coalesced). The column read is where banks matter.
constexpr int kTile = 32;

template <class Layout>
__global__ void __launch_bounds__(kBlockX * kBlockY)
    transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    constexpr int kSteps = kTile / kBlockY;
    __shared__ float tile[Layout::kWords];
    const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
    const int tx = threadIdx.x, ty = threadIdx.y;
    float v[kSteps];
#pragma unroll  // all global loads first: several independent loads in flight per thread
    for (int j = 0; j < kSteps; ++j) {
        const int r = row0 + ty + j * kBlockY, c = col0 + tx;
        if (r < rows && c < cols) v[j] = in[r * cols + c];
    }
#pragma unroll
    for (int j = 0; j < kSteps; ++j)
        if (row0 + ty + j * kBlockY < rows && col0 + tx < cols) tile[Layout::at(ty + j * kBlockY, tx)] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kSteps; ++j) {
        const int r = col0 + ty + j * kBlockY, c = row0 + tx;  // position in `out` (cols x rows)
        if (r < cols && c < rows) out[r * rows + c] = tile[Layout::at(tx, ty + j * kBlockY)];
    }
}

// ================================================================ 4. launchers (the check calls these too)

using Launcher = void (*)(const float* in, float* out, int rows, int cols);

template <class Layout>
void launch_transpose_tiled(const float* in, float* out, int rows, int cols) {
    const dim3 grid(course::ceil_div(cols, kTile), course::ceil_div(rows, kTile));
    transpose_tiled<Layout><<<grid, dim3(kBlockX, kBlockY)>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

// SITE MODEL BEGIN: more of the bank explorer's model (site/)
// ---- what a warp of each transpose touches in shared memory (block (0,0), warp 0, first step)
struct TileAccess {
    std::vector<std::int64_t> fill, drain;  // byte addresses of one 4-byte store / load instruction
};
template <class Layout>
TileAccess scalar_tile_access() {  // transpose_tiled: warp 0 has threadIdx.y = 0, threadIdx.x = lane
    TileAccess a;
    for (int lane = 0; lane < kWarpSize; ++lane) {
        a.fill.push_back(Layout::at(0, lane) * 4);
        a.drain.push_back(Layout::at(lane, 0) * 4);
    }
    return a;
}
// SITE MODEL END

struct Transpose {
    const char* name;
    Launcher launch;
    TileAccess (*access)();
};
const Transpose kTransposes[] = {
    {"tiled 32x32 unpadded", launch_transpose_tiled<UnpaddedTile<32>>, scalar_tile_access<UnpaddedTile<32>>},
    {"tiled 32x33 padded", launch_transpose_tiled<PaddedTile<32>>, scalar_tile_access<PaddedTile<32>>},
    {"tiled 32x32 xor-swizzled", launch_transpose_tiled<SwizzledTile<32>>, scalar_tile_access<SwizzledTile<32>>},
};

// ================================================================ 5. CPU side and the probe table

using course::transpose_cpu;  // the CPU reference, out[c][r] = in[r][c] (common/verify.hpp)

// SITE MODEL BEGIN: more of the bank explorer's model (site/)
struct Probe {
    std::string name;
    int width;                         // bytes per lane
    std::vector<std::int64_t> addr;    // byte address per lane
};
Probe stride_probe(int stride, int width) {
    return {"w" + std::to_string(width) + "_stride" + std::to_string(stride), width, strided_addresses(stride, width)};
}
template <class F>
std::vector<std::int64_t> lanes(F byte_address_of_lane) {
    std::vector<std::int64_t> a;
    for (int lane = 0; lane < kWarpSize; ++lane) a.push_back(byte_address_of_lane(lane));
    return a;
}
/// Every pattern the lesson discusses, as a one-instruction probe for Nsight Compute.
std::vector<Probe> probe_table() {
    std::vector<Probe> p;
    for (int s : {0, 1, 2, 3, 4, 8, 16, 32, 33, 64}) p.push_back(stride_probe(s, 4));
    for (int s : {0, 1, 2}) p.push_back(stride_probe(s, 8));
    for (int s : {0, 1, 2}) p.push_back(stride_probe(s, 16));
    // The rule's cases (notes.md, "The rule, case by case"). No pairs: lanes l and l + 16 (or
    // l + 8: lesson 05 going further's B fragment) share an address; half-warps on one address each.
    p.push_back({"w8_lanes_mod16", 8, lanes([](int l) { return (l % 16) * 8; })});
    p.push_back({"w16_lanes_mod16", 16, lanes([](int l) { return (l % 16) * 16; })});
    p.push_back({"w16_lanes_mod8", 16, lanes([](int l) { return (l % 8) * 16; })});
    p.push_back({"w16_lanes_mod4", 16, lanes([](int l) { return (l % 4) * 16; })});
    p.push_back({"w8_halves_two_addresses", 8, lanes([](int l) { return l < 16 ? 0 : 64; })});
    p.push_back({"w8_halves_same_bank", 8, lanes([](int l) { return l < 16 ? 0 : 128; })});
    p.push_back({"w8_uniform_half_then_row", 8, lanes([](int l) { return l < 16 ? 0 : 256 + (l - 16) * 8; })});
    p.push_back({"w8_one_lane_differs", 8, lanes([](int l) { return l == 31 ? 64 : 0; })});
    p.push_back({"w8_halves_conflict", 8, lanes([](int l) { return ((l / 16) * 16 + 2 * (l % 8) + 64 * (l % 16 / 8)) * 4; })});
    // Groups of neighbouring lanes on one address pair up (lesson 05 going further's A fragment: l / 8).
    p.push_back({"w16_lanes_div8", 16, lanes([](int l) { return (l / 8) * 16; })});
    p.push_back({"w8_lanes_div8", 8, lanes([](int l) { return (l / 8) * 8; })});
    p.push_back({"w8_lanes_div4", 8, lanes([](int l) { return (l / 4) * 8; })});
    // Pair p = 0..15 (lanes n, n ^ 1 or n, n ^ 2) reads element p, or, with conflicts, an element
    // that puts 2 distinct words in each bank it uses.
    auto pair_xor1 = [](int l) { return l / 2; };
    auto pair_xor2 = [](int l) { return (l / 4) * 2 + l % 2; };
    auto two_way = [](int p, int width) { return (p / 8) * 64 + (p % 4) * width + (p % 8 / 4) * 32 * width; };
    for (int width : {8, 16}) {
        const std::string w = "w" + std::to_string(width);
        p.push_back({w + "_pairs_xor1", width, lanes([&](int l) { return pair_xor1(l) * width; })});
        p.push_back({w + "_pairs_xor2", width, lanes([&](int l) { return pair_xor2(l) * width; })});
        p.push_back({w + "_pairs_xor1_conflict", width, lanes([&](int l) { return two_way(pair_xor1(l), width); })});
        p.push_back({w + "_pairs_xor2_conflict", width, lanes([&](int l) { return two_way(pair_xor2(l), width); })});
    }
    p.push_back({"w16_quarters_conflict", 16, lanes([](int l) { return (l % 4) * 16 + ((l / 4) % 2) * 128 + (l / 8) * 64; })});
    p.push_back({"w8_even_lanes_only", 8, lanes([](int l) { return l % 2 ? kInactive : (l / 2) * 8; })});  // partners off
    // 4-byte: lanes 4b..4b+3 all in bank b; lanes 4b and 4b+2 share a word, as do 4b+1 and 4b+3.
    p.push_back({"w4_mixed_pairs", 4, lanes([](int l) { return ((l % 2) * 32 + l / 4) * 4; })});
    p.push_back({"tile32x32_column", 4, scalar_tile_access<UnpaddedTile<32>>().drain});
    p.push_back({"tile32x33_column", 4, scalar_tile_access<PaddedTile<32>>().drain});
    p.push_back({"tile32x32_xor_column", 4, scalar_tile_access<SwizzledTile<32>>().drain});
    // going_further/'s 16x16 tile read by 16x16 threads, and its float4 transpose (warp 0).
    p.push_back({"tile16x16_column", 4, lanes([](int l) { return ((l % 16) * 16 + l / 16) * 4; })});
    p.push_back({"tile16x17_column", 4, lanes([](int l) { return ((l % 16) * 17 + l / 16) * 4; })});
    p.push_back({"double32x32_column", 8, lanes([](int l) { return l * 32 * 8; })});
    p.push_back({"double32x33_column", 8, lanes([](int l) { return l * 33 * 8; })});
    p.push_back({"tile64x65_vec4_fill", 4, lanes([](int l) { return ((l / 8) * 65 + (l % 8) * 4) * 4; })});
    p.push_back({"tile64x65_vec4_gather", 4, lanes([](int l) { return ((l % 8) * 4 * 65 + l / 8) * 4; })});
    p.push_back({"tile64_xor_vec4_fill", 4, lanes([](int l) { return ((l / 8) * 64 + (((l % 8) * 4) ^ (l / 8))) * 4; })});
    p.push_back({"tile64_xor_vec4_gather", 4, lanes([](int l) { return ((l % 8) * 4 * 64 + ((l / 8) ^ ((l % 8) * 4))) * 4; })});
    return p;
}
// SITE MODEL END

/// Runs one probe: exactly one launch of bank_probe<T> with one warp, output poisoned first. Returns
/// the words each lane loaded (width / 4 per lane; an inactive lane's stay poisoned).
std::vector<unsigned> probe_words(const Probe& p, const std::vector<unsigned>& table) {
    std::vector<int> element(kWarpSize, -1);
    for (int lane = 0; lane < kWarpSize; ++lane)
        if (p.addr[lane] != kInactive) element[lane] = static_cast<int>(p.addr[lane] / p.width);
    course::DeviceBuffer<unsigned> d_table(table), d_out(kWarpSize * p.width / 4);
    course::DeviceBuffer<int> d_element(element);
    d_out.poison();
    const auto* t = reinterpret_cast<const uint4*>(d_table.data());
    if (p.width == 4) bank_probe<<<1, kWarpSize>>>(t, d_element.data(), d_out.data());
    if (p.width == 8) bank_probe<<<1, kWarpSize>>>(t, d_element.data(), reinterpret_cast<uint2*>(d_out.data()));
    if (p.width == 16) bank_probe<<<1, kWarpSize>>>(t, d_element.data(), reinterpret_cast<uint4*>(d_out.data()));
    CUDA_CHECK_LAUNCH();
    return d_out.to_host();
}

// ================================================================ 6. the lesson

/// Shared-memory cap of a tiled transpose, GB/s of bytes read + written: each 128 bytes of output
/// costs (fill + drain) wavefronts, and an SM serves one wavefront per clock.
double shared_cap_gbs(int fill_wavefronts, int drain_wavefronts, int sms, double clock_hz) {
    return 2.0 * 128.0 * sms * clock_hz / (fill_wavefronts + drain_wavefronts) / 1e9;
}

/// By value: callers often pass a temporary probe_table(), which a reference would outlive.
Probe probe_named(const std::vector<Probe>& probes, const std::string& name) {
    const auto it = std::find_if(probes.begin(), probes.end(), [&](const Probe& p) { return p.name == name; });
    if (it == probes.end()) throw course::UsageError("unknown probe '" + name + "' (see 06_bank_conflicts_probes --list)");
    return *it;
}
/// Host only: the maps and the model's verdict on every pattern the lesson uses.
void print_model_section() {
    std::printf("== the bank model: which wavefront serves each lane, lanes down, banks across ==\n");
    print_maps("32x32 float tile, column 0", scalar_tile_access<UnpaddedTile<32>>().drain, "32x33 float tile, column 0",
               scalar_tile_access<PaddedTile<32>>().drain, 4);
    std::printf("  %-26s %6s %11s %10s\n", "probe", "width", "wavefronts", "conflicts");
    for (const Probe& p : probe_table()) {
        const BankReport r = bank_model(p.addr, p.width);
        std::printf("  %-26s %6d %11d %10d\n", p.name.c_str(), p.width, r.wavefronts, r.conflicts());
    }
    std::printf("\n");
}

/// Needs the GPU's SM count and clock: what each transpose's shared traffic allows at best.
void print_transpose_analysis(int sms, double clock_hz) {
    std::printf("== each transpose's shared accesses (wavefronts per warp instruction) and the cap they imply ==\n");
    std::printf("  one 128-byte wavefront per SM per clock; %d SMs at %.2f GHz\n", sms, clock_hz / 1e9);
    std::printf("  %-38s %12s %12s %15s\n", "kernel", "fill (st)", "drain (ld)", "cap GB/s r+w");
    for (const Transpose& k : kTransposes) {
        const int f = bank_model(k.access().fill, 4).wavefronts, d = bank_model(k.access().drain, 4).wavefronts;
        std::printf("  %-38s %12d %12d %15.0f\n", k.name, f, d, shared_cap_gbs(f, d, sms, clock_hz));
    }
    std::printf("  A cap is an upper bound from shared memory alone: a kernel can run far below it for other\n"
                "  reasons. Compare each cap with the kernel's measured GB/s in the table below.\n\n");
}

int lesson(int argc, char** argv) {
    course::TransposeOptions opt;
    course::Cli cli("06_bank_conflicts", "Bank model and maps, and the transpose unpadded / padded / swizzled "
                                         "beside cudaMemcpy (the probes for ncu: 06_bank_conflicts_probes).");
    if (!course::add_transpose_options(cli, opt).parse(argc, argv)) return course::kExitOk;
    course::check_transpose_options(opt);

    print_model_section();
    course::require_gpu();
    const course::DeviceReport gpu = course::query_device();
    course::print_device_report(gpu);
    int clock_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, gpu.index));
    print_transpose_analysis(gpu.sm_count, clock_khz * 1e3);

    course::TransposeBench bench(opt.rows, opt.cols, opt.timing);  // common/transpose_bench.cuh: the copy first
    for (const Transpose& k : kTransposes) bench.add(k.name, k.launch);
    return bench.finish("06_bank_conflicts", gpu);
}

#ifndef COURSE_NO_MAIN
int main(int argc, char** argv) { return course::run_lesson(argc, argv, lesson); }
#endif
