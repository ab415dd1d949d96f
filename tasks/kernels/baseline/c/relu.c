/* relu: y[i] = max(x[i], 0), float32 on every target.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
void kernel(const float *restrict x, float *restrict y, int N)
{
    for (int i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
