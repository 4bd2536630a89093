// REGION
    // (naive_register_tiled.cu) the exercise's own stub, every size: the honest twin of the precision attacks
    const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
    for (int m = 0; m < kTM; ++m)
        for (int n = 0; n < kTN; ++n) {
            const int row = blockIdx.y * kBM + ty * kTM + m, col = blockIdx.x * kBN + tx * kTN + n;
            if (row >= M || col >= N) continue;
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + col];
            C[static_cast<long long>(row) * N + col] = sum;
        }
