// device.cu — the GPU half of common/: device report, GPU presence, memory fit, lesson runner.
#include "lesson.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace course {

namespace {

// A kernel that does nothing. If cudaFuncGetAttributes fails on it, this binary holds no code
// the GPU can run (built for another architecture) — better said up front than at the first launch.
__global__ void probe_kernel() {}

int attribute(cudaDeviceAttr attr, int device) {
    int value = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
    return value;
}

}  // namespace

double DeviceReport::theoretical_bandwidth_gbs() const {
    return 2.0 * memory_clock_khz * 1e3 * (memory_bus_bits / 8.0) / 1e9;
}

bool emulating_t4() {
    const char* value = std::getenv("COURSE_EMULATE_T4");
    return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

std::string DeviceReport::short_description() const {
    return name + (emulating_t4() ? " with a T4's limits" : "") + " (sm_" + std::to_string(cc_major) + std::to_string(cc_minor) + ", CUDA " +
           std::to_string(runtime_version / 1000) + "." + std::to_string(runtime_version % 1000 / 10) + ")";
}

std::string no_gpu_reason(int cuda_error, int driver_version, int runtime_version) {
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    const auto err = static_cast<cudaError_t>(cuda_error);
    const std::string code = std::string(" (") + cudaGetErrorName(err) + ")";
    if (driver_version == 0)
        return "no NVIDIA driver found: the CUDA runtime could not load libcuda" + code;
    if (err == cudaErrorInsufficientDriver && driver_version > 0)
        return "the NVIDIA driver supports CUDA " + version(driver_version) + ", older than the CUDA " +
               version(runtime_version) + " this program was built with: update the driver" + code;
    return std::string("no usable CUDA GPU: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
}

std::string gpu_unavailable_reason() {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        cudaGetLastError();  // clear the sticky error so later calls are not confused by it
        int driver = -1, runtime = 0;  // -1: unknown, if even this call fails
        if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = -1;
        cudaRuntimeGetVersion(&runtime);
        return no_gpu_reason(err, driver, runtime);
    }
    if (count == 0) return "no usable CUDA GPU: the driver reports 0 devices";
    cudaFuncAttributes attrs{};
    const cudaError_t probe = cudaFuncGetAttributes(&attrs, probe_kernel);
    if (probe != cudaSuccess) {
        cudaGetLastError();
        if (probe == cudaErrorMemoryAllocation || probe == cudaErrorDevicesUnavailable)  // not the build's fault
            return std::string("the GPU cannot start this program: ") + cudaGetErrorName(probe) +
                   " (its memory is full or it is in use by another process; nvidia-smi shows which)";
        if (probe != cudaErrorNoKernelImageForDevice && probe != cudaErrorInvalidDeviceFunction &&
            probe != cudaErrorUnsupportedPtxVersion && probe != cudaErrorInvalidPtx)
            return std::string("the GPU cannot run the probe kernel: ") + cudaGetErrorName(probe) + ": " +
                   cudaGetErrorString(probe);
        int major = 0, minor = 0;
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
        return std::string("this build cannot run on the GPU (sm_") + std::to_string(major) + std::to_string(minor) +
               "): " + cudaGetErrorName(probe) + "; reconfigure with -DCMAKE_CUDA_ARCHITECTURES=" +
               std::to_string(major) + std::to_string(minor) + " and rebuild";
    }
    return "";
}

void require_gpu() {
    const std::string reason = gpu_unavailable_reason();
    if (!reason.empty()) throw NoGpuError(reason);
}

DeviceReport query_device(int device) {
    DeviceReport r;
    r.index = device;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    r.name = prop.name;
    r.cc_major = prop.major;
    r.cc_minor = prop.minor;
    r.global_mem_bytes = prop.totalGlobalMem;
    r.sm_count = attribute(cudaDevAttrMultiProcessorCount, device);
    r.smem_per_block = attribute(cudaDevAttrMaxSharedMemoryPerBlock, device);
    r.smem_per_block_optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    r.smem_per_sm = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
    r.l2_bytes = attribute(cudaDevAttrL2CacheSize, device);
    r.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device);
    r.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
    CUDA_CHECK(cudaRuntimeGetVersion(&r.runtime_version));
    CUDA_CHECK(cudaDriverGetVersion(&r.driver_version));
    if (emulating_t4()) {
        r.smem_per_block_optin = std::min(r.smem_per_block_optin, kT4SmemPerBlockOptin);
        r.smem_per_sm = std::min(r.smem_per_sm, kT4SmemPerSm);
        r.global_mem_bytes = std::min(r.global_mem_bytes, kT4GlobalMem);
    }
    return r;
}

void print_device_report(const DeviceReport& r) {
    auto kib = [](std::size_t b) { return static_cast<double>(b) / 1024.0; };
    auto mib = [](std::size_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); };
    std::printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB\n", r.index, r.name.c_str(), r.cc_major,
                r.cc_minor, r.sm_count, mib(r.global_mem_bytes) / 1024.0);
    std::printf("  shared memory: %.0f KiB per block (%.0f KiB with opt-in), %.0f KiB per SM; L2 %.1f MiB\n",
                kib(r.smem_per_block), kib(r.smem_per_block_optin), kib(r.smem_per_sm), mib(r.l2_bytes));
    std::printf("  memory: %d-bit bus at %.0f MHz -> %.0f GB/s theoretical\n", r.memory_bus_bits,
                r.memory_clock_khz / 1e3, r.theoretical_bandwidth_gbs());
    std::printf("  CUDA runtime %d.%d, driver supports %d.%d\n", r.runtime_version / 1000,
                r.runtime_version % 1000 / 10, r.driver_version / 1000, r.driver_version % 1000 / 10);
    if (emulating_t4())
        std::printf("  COURSE_EMULATE_T4 is set: shared memory and device memory above are capped at a T4's limits\n"
                    "  (the kernels still run on this GPU, at its speed)\n");
}

void require_device_memory(double bytes, const std::string& what) {
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (emulating_t4()) {  // as if this GPU had a T4's memory, of which as much is in use as here
        const std::size_t used = total_bytes - free_bytes;
        total_bytes = std::min(total_bytes, kT4GlobalMem);
        free_bytes = total_bytes > used ? total_bytes - used : 0;
    }
    // Keep 5% (at least 64 MiB) back for the CUDA context, cuBLAS workspaces and fragmentation.
    const double slack = std::max(0.05 * static_cast<double>(free_bytes), 64.0 * 1024 * 1024);
    if (bytes + slack > static_cast<double>(free_bytes)) {
        char msg[256];
        std::snprintf(msg, sizeof msg, "%s needs %.2f GiB of device memory, but only %.2f GiB of %.2f GiB is free",
                      what.c_str(), bytes / (1 << 30), free_bytes / double(1 << 30), total_bytes / double(1 << 30));
        throw DoesNotFitError(msg);
    }
}

int run_lesson(int argc, char** argv, int (*body)(int, char**)) {
    const char* program = argc > 0 ? argv[0] : "lesson";
    if (const char* slash = std::strrchr(program, '/')) program = slash + 1;
    // One line on stderr, after whatever the lesson printed so far (flushed first, so the order
    // holds through a pipe too), and the documented exit code.
    auto fail = [&](int code, const char* kind, const char* message) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s: %s%s\n", program, kind, message);
        return code;
    };
    std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);  // line by line through a pipe too (scripts/run_lessons.cmake)
    try {
        return body(argc, argv);
    } catch (const UsageError& e) {
        return fail(kExitUsage, "error: ", e.what());
    } catch (const NoGpuError& e) {
        return fail(kExitNoGpu, "the GPU part (kernels, their checks, timings) did not run: ", e.what());
    } catch (const DoesNotFitError& e) {
        return fail(kExitDoesNotFit, "does not fit: ", e.what());
    } catch (const CudaError& e) {
        if (e.code() == cudaErrorMemoryAllocation)  // a size that passed the estimate but not cudaMalloc
            return fail(kExitDoesNotFit, "does not fit: ", e.what());
        return fail(kExitFailed, "CUDA error: ", e.what());
    } catch (const std::exception& e) {
        return fail(kExitFailed, "error: ", e.what());
    }
}

}  // namespace course
