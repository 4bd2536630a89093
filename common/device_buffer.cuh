// device_buffer.cuh — RAII owners for device memory and CUDA events.
//
// A lesson allocates with DeviceBuffer<float> d(n) and never calls cudaFree: the destructor
// does, also when a check throws halfway through.
#pragma once

#include "cuda_check.cuh"

#include <cstddef>
#include <utility>
#include <vector>

namespace course {

/// Byte written over every output buffer before a kernel runs. 0xFF makes every float a NaN
/// (which never compares equal to a reference) and every int -1, so an element the kernel
/// forgot to write is caught by the comparison.
constexpr unsigned char kPoisonByte = 0xFF;

/// Owns `count` elements of T in device memory.
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) : count_(count) {
        if (count_ > 0) CUDA_CHECK(cudaMalloc(&ptr_, bytes()));
    }
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
        copy_from(host);
    }
    ~DeviceBuffer() {
        if (ptr_) cudaFree(ptr_);  // no throw from a destructor; a failure here is unreportable
    }
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        std::swap(ptr_, other.ptr_);
        std::swap(count_, other.count_);
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* data() { return ptr_; }
    const T* data() const { return ptr_; }
    std::size_t size() const { return count_; }
    std::size_t bytes() const { return count_ * sizeof(T); }

    void copy_from(const std::vector<T>& host) {
        if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::copy_from: size mismatch");
        if (count_ > 0) CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
    }
    std::vector<T> to_host() const {
        std::vector<T> host(count_);
        if (count_ > 0) CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
        return host;
    }
    /// Overwrite every byte with kPoisonByte (see above). Call before each kernel you verify.
    void poison() {
        if (count_ > 0) CUDA_CHECK(cudaMemset(ptr_, kPoisonByte, bytes()));
    }

private:
    T* ptr_ = nullptr;
    std::size_t count_ = 0;
};

/// Owns one cudaEvent_t.
class CudaEvent {
public:
    CudaEvent() { CUDA_CHECK(cudaEventCreate(&event_)); }
    ~CudaEvent() { cudaEventDestroy(event_); }
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;
    cudaEvent_t get() const { return event_; }

private:
    cudaEvent_t event_ = nullptr;
};

}  // namespace course
