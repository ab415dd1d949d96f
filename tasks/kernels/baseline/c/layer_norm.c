/* layer_norm over the last axis: y = (x - mean) / sqrt(var + 1e-5) * gamma + beta,
 * float32 on every target. sqrt is the fsqrt.s instruction (__builtin_sqrtf, -fno-math-errno).
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
void kernel(const float *restrict x, const float *restrict gamma, const float *restrict beta,
            float *restrict y, int M, int N)
{
    for (int m = 0; m < M; m++) {
        const float *xr = x + m * N;
        float *yr = y + m * N;
        float sum = 0.0f;
        for (int n = 0; n < N; n++)
            sum += xr[n];
        float mean = sum / (float)N;
        float sq = 0.0f;
        for (int n = 0; n < N; n++) {
            float d = xr[n] - mean;
            sq += d * d;
        }
        float rstd = 1.0f / __builtin_sqrtf(sq / (float)N + 1e-5f);
        for (int n = 0; n < N; n++)
            yr[n] = (xr[n] - mean) * rstd * gamma[n] + beta[n];
    }
}
