// float4.cuh — 16-byte loads and stores that handle a matrix's edges: the plumbing of every kernel
// that moves float4s after lesson 01, which writes the same logic out by hand to teach it.
#pragma once

#include <cstdint>

/// Four consecutive floats m[row][col..col+3] of a rows x cols row-major matrix, zeros outside it.
/// One 16-byte load when all four exist and are 16-byte aligned (col is a multiple of 4 here, so
/// that is `cols % 4 == 0` plus an aligned base pointer), four guarded loads otherwise.
__device__ __forceinline__ float4 load4(const float* __restrict__ m, int rows, int cols, int row, int col,
                                        bool vector_ok) {
    if (row >= rows) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const float* p = m + static_cast<long long>(row) * cols + col;
    if (vector_ok && col + 3 < cols) return *reinterpret_cast<const float4*>(p);
    return make_float4(col + 0 < cols ? p[0] : 0.0f, col + 1 < cols ? p[1] : 0.0f,  //
                       col + 2 < cols ? p[2] : 0.0f, col + 3 < cols ? p[3] : 0.0f);
}

/// The mirror image of load4: one 16-byte store when possible, else only the elements inside.
__device__ __forceinline__ void store4(float* __restrict__ m, int rows, int cols, int row, int col, float4 v,
                                       bool vector_ok) {
    if (row >= rows) return;
    float* p = m + static_cast<long long>(row) * cols + col;
    if (vector_ok && col + 3 < cols) {
        *reinterpret_cast<float4*>(p) = v;
        return;
    }
    if (col + 0 < cols) p[0] = v.x;
    if (col + 1 < cols) p[1] = v.y;
    if (col + 2 < cols) p[2] = v.z;
    if (col + 3 < cols) p[3] = v.w;
}

/// Whether a pointer may be read or written as float4s.
__host__ __device__ __forceinline__ bool aligned16(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}
