/* C[M][N] (int32) = A[M][K] (int8) x B[K][N] (int8), then requantised to int8 with a shift. */
void gemm_i8(int M, int N, int K, const signed char *A, const signed char *B, int *C) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int acc = 0;
            for (int k = 0; k < K; k++)
                acc += A[i * K + k] * B[k * N + j];
            C[i * N + j] = acc;
        }
}

void requant(int n, const int *acc, signed char *out, int shift) {
    for (int i = 0; i < n; i++) {
        int v = acc[i] >> shift;
        out[i] = v > 127 ? 127 : v < -128 ? -128 : (signed char)v;
    }
}

static const float table[4] = {0.5f, 1.5f, -2.0f, 3.25f};

float lookup(int i) { return table[i & 3] * 2.0f; }
