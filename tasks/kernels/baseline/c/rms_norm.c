/* rms_norm over the last axis: y = x / sqrt(mean(x^2) + 1e-6) * gamma, float32 on every target.
 * sqrt is the fsqrt.s instruction (__builtin_sqrtf, -fno-math-errno).
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
void kernel(const float *restrict x, const float *restrict gamma, float *restrict y, int M, int N)
{
    for (int m = 0; m < M; m++) {
        const float *xr = x + m * N;
        float *yr = y + m * N;
        float sq = 0.0f;
        for (int n = 0; n < N; n++)
            sq += xr[n] * xr[n];
        float inv = 1.0f / __builtin_sqrtf(sq / (float)N + 1e-6f);
        for (int n = 0; n < N; n++)
            yr[n] = xr[n] * inv * gamma[n];
    }
}
