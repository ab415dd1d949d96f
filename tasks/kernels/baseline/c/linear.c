/* linear: y[M, N] = x[M, K] @ w[N, K]^T + bias[N]: one dot product of two unit-stride rows per
 * output element.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
/* Element types, chosen by compile_c.py from the task's dtypes on the target:
 * -DKC_INT8 (coral): int8 inputs, int32 products, sums and outputs; otherwise float32 throughout. */
#ifdef KC_INT8
typedef signed char in_t;
typedef int out_t;
#else
typedef float in_t;
typedef float out_t;
#endif

void kernel(const in_t *restrict x, const in_t *restrict w, const in_t *restrict bias, out_t *restrict y,
            int M, int K, int N)
{
    for (int m = 0; m < M; m++) {
        const in_t *xm = x + m * K;
        for (int n = 0; n < N; n++) {
            const in_t *wn = w + n * K;
            out_t acc = 0;
            for (int k = 0; k < K; k++)
                acc += (out_t)xm[k] * (out_t)wn[k];
            y[m * N + n] = acc + (out_t)bias[n];
        }
    }
}
