// The probe tool of lesson 06, for its Nsight Compute scripts (ncu_check.py): every pattern of the
// lesson's probe table, or of a file, one launch each, as loads (bank_probe) or as stores
// (bank_probe_store), and the model's prediction for each. Like check.cu, it #includes the
// lesson's main.cu (CMake passes its path), so the model and the probe kernel are the lesson's.
//
//   06_bank_conflicts_probes [--probe NAME | --probe-stride S [--probe-width W] | --file F] [--store] [--list]
// --probe: only this probe of the table; --probe-stride: only s[lane * S], W bytes per lane;
// --file: patterns, one a line: NAME WIDTH and 32 byte addresses (-1: the lane stays out);
// --store: store the pattern instead of loading it; --list: print NAME WIDTH WAVEFRONTS CONFLICTS
// as the model predicts them, and run nothing.
#include COURSE_LESSON_SOURCE

#include <fstream>
#include <sstream>

/// The same for a store: one shared store of the pattern (no fill: the store counters see it
/// alone), then each lane reads its element back, so the load counters see the pattern as well.
template <class T>
__global__ void bank_probe_store(const int* __restrict__ element, T* __restrict__ out) {
    __shared__ uint4 s[kProbeWords / 4];
    const int e = element[threadIdx.x];
    T v;
    unsigned* w = reinterpret_cast<unsigned*>(&v);
    for (int k = 0; k < static_cast<int>(sizeof(T) / 4); ++k) w[k] = threadIdx.x * 4 + k;  // who wrote it
    if (e >= 0) reinterpret_cast<T*>(s)[e] = v;
    __syncthreads();
    if (e >= 0) out[threadIdx.x] = reinterpret_cast<const T*>(s)[e];
}

/// Runs one probe: exactly one launch of bank_probe<T> (or bank_probe_store<T>) with one warp.
/// Returns true if every lane got what it should: the words it loaded from `table`, or after a
/// store, the words some lane that stored to the same address wrote.
bool run_any_probe(const Probe& p, const std::vector<unsigned>& table, bool store) {
    std::vector<int> element(kWarpSize, -1);
    for (int lane = 0; lane < static_cast<int>(p.addr.size()); ++lane)
        if (p.addr[lane] != kInactive) {
            if (p.addr[lane] < 0 || p.addr[lane] % p.width || p.addr[lane] + p.width > kProbeWords * 4)
                throw course::UsageError("probe " + p.name + ": address misaligned or outside the probe array");
            element[lane] = static_cast<int>(p.addr[lane] / p.width);
        }
    course::DeviceBuffer<unsigned> d_table(table), d_out(kWarpSize * p.width / 4);
    course::DeviceBuffer<int> d_element(element);
    d_out.poison();
    const auto* t = reinterpret_cast<const uint4*>(d_table.data());
    unsigned* o = d_out.data();
    const int* e = d_element.data();
    if (p.width == 4) store ? bank_probe_store<unsigned><<<1, kWarpSize>>>(e, o) : bank_probe<unsigned><<<1, kWarpSize>>>(t, e, o);
    if (p.width == 8)
        store ? bank_probe_store<uint2><<<1, kWarpSize>>>(e, reinterpret_cast<uint2*>(o))
              : bank_probe<uint2><<<1, kWarpSize>>>(t, e, reinterpret_cast<uint2*>(o));
    if (p.width == 16)
        store ? bank_probe_store<uint4><<<1, kWarpSize>>>(e, reinterpret_cast<uint4*>(o))
              : bank_probe<uint4><<<1, kWarpSize>>>(t, e, reinterpret_cast<uint4*>(o));
    CUDA_CHECK_LAUNCH();
    const std::vector<unsigned> got = d_out.to_host();
    const int n = p.width / 4;
    bool ok = true;
    for (int lane = 0; lane < kWarpSize; ++lane)
        for (int k = 0; k < n && element[lane] >= 0; ++k) {
            const unsigned v = got[lane * n + k];
            if (!store) ok &= v == table[p.addr[lane] / 4 + k];
            else ok &= v / 4 < kWarpSize && v % 4 == static_cast<unsigned>(k) && element[v / 4] == element[lane];
        }
    return ok;
}

/// Patterns from a file, one per line: NAME WIDTH and 32 byte addresses (-1: the lane stays out).
std::vector<Probe> read_probe_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw course::UsageError("cannot read --probe-file " + path);
    std::vector<Probe> probes;
    std::string line;
    for (int number = 1; std::getline(f, line); ++number) {
        std::istringstream in(line);
        Probe p;
        if (!(in >> p.name)) continue;  // blank line
        std::int64_t a = 0;
        in >> p.width;
        while (in >> a) p.addr.push_back(a);
        const std::string where = path + ":" + std::to_string(number) + ": ";
        if (p.width != 4 && p.width != 8 && p.width != 16) throw course::UsageError(where + "width must be 4, 8 or 16");
        if (p.addr.size() != kWarpSize || !in.eof()) throw course::UsageError(where + "need 32 integer addresses");
        for (std::int64_t x : p.addr)
            if (x != kInactive && (x < 0 || x % p.width || x + p.width > kProbeWords * 4))
                throw course::UsageError(where + "address " + std::to_string(x) + " misaligned or outside the probe array");
        probes.push_back(p);
    }
    if (probes.empty()) throw course::UsageError("--probe-file " + path + " holds no pattern");
    return probes;
}

int probes_main(int argc, char** argv) {
    std::string file, probe;
    int stride = -1, width = 4;
    bool store = false, list = false;
    course::Cli cli("06_bank_conflicts_probes", "Lesson 06's probes, one launch each, for Nsight Compute.");
    cli.option("--probe", &probe, "only this probe of the table (see --list)")
        .option("--probe-stride", &stride, "only s[lane * stride] (-1: off)", -1, 64)
        .option("--probe-width", &width, "bytes per lane for --probe-stride: 4, 8 or 16", 4, 16)
        .option("--file", &file, "patterns from this file instead of the lesson's probe table")
        .flag("--store", &store, "store each pattern (then load it back) instead of loading it")
        .flag("--list", &list, "print each pattern's name, width, and the model's wavefronts and conflicts; run nothing");
    if (!cli.parse(argc, argv)) return course::kExitOk;
    if (width != 4 && width != 8 && width != 16) throw course::UsageError("--probe-width must be 4, 8 or 16");
    cli.refuse_together("--probe", "--probe-stride");
    cli.refuse_together("--probe", "--file");
    cli.refuse_together("--file", "--probe-stride");
    cli.refuse_without("--probe-width", "--probe-stride");
    std::vector<Probe> probes = file.empty() ? probe_table() : read_probe_file(file);
    if (!probe.empty()) probes = {probe_named(probes, probe)};
    if (stride >= 0) probes = {stride_probe(stride, width)};
    if (list) {
        for (const Probe& p : probes) {
            const BankReport r = bank_model(p.addr, p.width, store);
            std::printf("%s %d %d %d\n", p.name.c_str(), p.width, r.wavefronts, r.conflicts());
        }
        return course::kExitOk;
    }
    course::require_gpu();
    const std::vector<int> random = course::random_ints(kProbeWords, 6, 0, INT32_MAX);
    const std::vector<unsigned> table(random.begin(), random.end());
    int wrong = 0;
    for (const Probe& p : probes)
        if (!run_any_probe(p, table, store)) ++wrong, std::printf("probe %s: WRONG values\n", p.name.c_str());
    for (const Probe& p : probes) {
        if (probes.size() > 1) break;
        const BankReport r = bank_model(p.addr, p.width, store);
        std::printf("probe %s: width %d, model: %d wavefronts, %d beyond the ideal %d\n", p.name.c_str(), p.width,
                    r.wavefronts, r.conflicts(), r.ideal);
    }
    std::printf("%zu probes (%s) run, %d with wrong values\n", probes.size(), store ? "stores" : "loads", wrong);
    return wrong ? course::kExitFailed : course::kExitOk;
}

int main(int argc, char** argv) { return course::run_lesson(argc, argv, probes_main); }
