// sm_clock.cuh — the SM clock a GPU actually runs at, read through NVML while work is running.
//
// A peak rate (lanes x clock) is only as good as the clock in it: GPUs lower their clock under
// heavy load, so the maximum clock the driver advertises overstates what a long kernel gets.
// NVML (the driver's management library, the one nvidia-smi uses) reports the current clock.
// It is loaded at run time (dlopen), so a program still starts on a machine without it and
// says why it has no reading instead.
#pragma once

#include "device_buffer.cuh"
#include "timer.cuh"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace course {

class SmClock {
public:
    /// Opens NVML for CUDA device `device`; check ok() / why_not() before reading.
    explicit SmClock(int device = 0) {
        lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib_) {
            why_not_ = "NVML (libnvidia-ml.so.1) could not be loaded";
            return;
        }
        // Signatures and the NVML_CLOCK_SM value as declared in the driver's nvml.h.
        init_ = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
        shutdown_ = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlShutdown"));
        auto by_bus = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
        clock_info_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetClockInfo"));
        if (!init_ || !shutdown_ || !by_bus || !clock_info_) {
            why_not_ = "NVML lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetClockInfo";
            return;
        }
        if (init_() != 0) {
            why_not_ = "nvmlInit_v2 failed";
            return;
        }
        initialized_ = true;
        // Match the CUDA device to the NVML device by PCI bus id: CUDA_VISIBLE_DEVICES may renumber them.
        char bus_id[32] = {};
        CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
        if (by_bus(bus_id, &device_) != 0 || read_mhz() == 0) {
            why_not_ = std::string("NVML could not read the SM clock of the GPU at ") + bus_id;
            device_ = nullptr;
        }
    }
    ~SmClock() {
        if (initialized_) shutdown_();
        if (lib_) dlclose(lib_);
    }
    SmClock(const SmClock&) = delete;
    SmClock& operator=(const SmClock&) = delete;

    bool ok() const { return device_ != nullptr; }
    /// Empty if ok(), otherwise why there is no reading.
    const std::string& why_not() const { return why_not_; }
    /// The SM clock now, in MHz (0 if it cannot be read).
    unsigned read_mhz() const {
        unsigned mhz = 0;
        const int kNvmlClockSm = 1;  // NVML_CLOCK_SM
        if (!device_ || clock_info_(device_, kNvmlClockSm, &mhz) != 0) return 0;
        return mhz;
    }

private:
    void* lib_ = nullptr;
    void* device_ = nullptr;
    bool initialized_ = false;
    int (*init_)() = nullptr;
    int (*shutdown_)() = nullptr;
    int (*clock_info_)(void*, int, unsigned*) = nullptr;
    std::string why_not_;
};

/// The median SM clock (MHz) while `launch()` runs back to back for about `window_ms`: the
/// launches are queued at once and the host reads the clock every 0.2 ms until the last one
/// ends. `launch_ms` (one launch's time, e.g. the median just measured) sets how many to queue.
/// Returns 0 if the clock cannot be read.
template <class Launch>
double median_sm_clock_during(const SmClock& clock, Launch&& launch, double launch_ms, double window_ms = 60.0) {
    if (!clock.ok()) return 0;
    const int launches = static_cast<int>(std::clamp(window_ms / std::max(launch_ms, 1e-3), 1.0, 2000.0));
    CudaEvent done;
    for (int i = 0; i < launches; ++i) launch();
    CUDA_CHECK(cudaEventRecord(done.get()));
    std::vector<double> samples;
    cudaError_t state;
    while ((state = cudaEventQuery(done.get())) == cudaErrorNotReady) {
        if (const unsigned mhz = clock.read_mhz()) samples.push_back(mhz);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    CUDA_CHECK(state);
    if (samples.empty()) samples.push_back(clock.read_mhz());  // finished before the first reading
    return median(std::move(samples));
}

}  // namespace course
