// device_info.cuh — which GPU are we on, what can it do, and is there one at all?
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace course {

/// What the lessons need to know about a GPU. Read through cudaDeviceGetAttribute, because
/// CUDA 13 removed several cudaDeviceProp fields (memoryClockRate among them).
struct DeviceReport {
    int index = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    std::size_t global_mem_bytes = 0;
    std::size_t smem_per_block = 0;        // what a block gets without opting in (48 KB)
    std::size_t smem_per_block_optin = 0;  // the most a block may ask for via cudaFuncSetAttribute
    std::size_t smem_per_sm = 0;
    std::size_t l2_bytes = 0;
    int memory_clock_khz = 0;
    int memory_bus_bits = 0;
    int runtime_version = 0, driver_version = 0;
    /// 2 transfers per clock (DDR) x clock x bus width: the datasheet-style peak, in GB/s.
    /// Real copies reach less; the lessons measure that real ceiling instead of trusting this.
    double theoretical_bandwidth_gbs() const;
    /// "NVIDIA H200 (sm_90, CUDA 13.0)"
    std::string short_description() const;
};

/// Thrown when no usable GPU is present (no device, no driver, driver too old, binary not
/// built for this GPU). run_lesson() turns it into exit code 3.
class NoGpuError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Thrown when a requested problem does not fit in the GPU's free memory (exit code 4).
class DoesNotFitError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// True when the environment variable COURSE_EMULATE_T4 is set to anything but "" or "0": then
/// query_device() and require_device_memory() report no more than an NVIDIA T4 (Colab's free GPU,
/// sm_75) has — 64 KiB of shared memory per block with the opt-in and per SM, 15 GiB of device
/// memory — so that the refusals and fallbacks a T4 takes run on a larger GPU too
/// (scripts/gpu_check.sh --t4). Only these limits change: the kernels run at this GPU's speed.
bool emulating_t4();
/// The limits emulating_t4() applies.
constexpr std::size_t kT4SmemPerBlockOptin = 64 * 1024;  // cudaDevAttrMaxSharedMemoryPerBlockOptin on sm_75
constexpr std::size_t kT4SmemPerSm = 64 * 1024;          // cudaDevAttrMaxSharedMemoryPerMultiprocessor on sm_75
constexpr std::size_t kT4GlobalMem = 15ull << 30;        // nvidia-smi: 15360 MiB

/// Empty if a GPU can run this program's kernels, otherwise a one-line reason.
std::string gpu_unavailable_reason();
/// The reason when cudaGetDeviceCount failed with `cuda_error`, given what cudaDriverGetVersion
/// (0: no driver installed at all) and cudaRuntimeGetVersion said. Without a driver, CUDA reports
/// cudaErrorInsufficientDriver, which reads as "update your driver"; this says what is wrong.
std::string no_gpu_reason(int cuda_error, int driver_version, int runtime_version);
/// Throws NoGpuError with that reason.
void require_gpu();
DeviceReport query_device(int device = 0);
/// Multi-line report printed at the top of every lesson.
void print_device_report(const DeviceReport& report);
/// Throws DoesNotFitError unless `bytes` (plus a little slack) fit in the free device memory.
void require_device_memory(double bytes, const std::string& what);

}  // namespace course
