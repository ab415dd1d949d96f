/* The register-tiled matrix product of the Level-2 baseline kernels (ffn.c, swiglu.c): a C
 * programmer's blocking, left to the compiler to schedule (see ../compile_c.py). Always inlined:
 * the kernel must stay the first (and only) function in .text. */
#ifndef KC_MATMUL_H
#define KC_MATMUL_H

/* c[r, j0 + c] = sum over k < K of a[r * lda + k] * b[k * ldb + j0 + c], r < R, c < C */
static inline __attribute__((always_inline)) void mm_tile(const float *restrict a, int lda,
        const float *restrict b, int ldb, float *restrict c, int ldc, int K, int R, int C)
{
    float acc[4][4] = {{0.0f}};
    for (int k = 0; k < K; k++) {
        const float *bk = b + k * ldb;
        for (int r = 0; r < R; r++) {
            float ark = a[r * lda + k];
            for (int j = 0; j < C; j++)
                acc[r][j] += ark * bk[j];
        }
    }
    for (int r = 0; r < R; r++)
        for (int j = 0; j < C; j++)
            c[r * ldc + j] = acc[r][j];
}

/* c[R, N] = a[R, K] @ b[K, N] (row strides lda, N, ldc), R = 4 or 1 */
static inline __attribute__((always_inline)) void mm_rows(const float *restrict a, int lda,
        const float *restrict b, float *restrict c, int ldc, int K, int N, int R)
{
    int j = 0;
    for (; j + 4 <= N; j += 4)
        mm_tile(a, lda, b + j, N, c + j, ldc, K, R, 4);
    for (; j < N; j++)
        mm_tile(a, lda, b + j, N, c + j, ldc, K, R, 1);
}

#endif
