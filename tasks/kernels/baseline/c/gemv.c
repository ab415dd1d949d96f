/* gemv: y[M] = a[M, K] @ x[K].
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

void kernel(const in_t *restrict a, const in_t *restrict x, out_t *restrict y, int M, int K)
{
    for (int i = 0; i < M; i++) {
        out_t acc = 0;
        for (int k = 0; k < K; k++)
            acc += (out_t)a[i * K + k] * (out_t)x[k];
        y[i] = acc;
    }
}
