/* ffn: y[M, H] = silu(x[M, H] @ w1[H, F]) @ w2[F, H], silu(z) = z / (1 + exp(-z)), float32.
 * Four rows of x at a time: h[4, F] = x[rows] @ w1, silu in place, y[rows] = h @ w2; leftover
 * rows one at a time. Both products are register-tiled in the C (matmul.h: mm_tile sums an R x C
 * block of the result in locals over the whole k range, R <= 4 rows by C <= 4 columns, constants
 * at each call so the compiler keeps the block in registers), as a C programmer writes a matrix
 * product that must run within the evaluator's step budget (16.8 M multiply-adds at C5: the
 * plain loop-order version takes 7 instructions a multiply-add, past the 50 M-step budget).
 * h is a stack array (4 * F floats). exp is kc_expf (common.h): the targets have no libm.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* kc_expf */
#include "matmul.h"  /* mm_rows: register-tiled c = a @ b */

static inline __attribute__((always_inline)) void ffn_rows(const float *restrict x, const float *restrict w1,
        const float *restrict w2, float *restrict y, float *restrict h, int H, int F, int R)
{
    mm_rows(x, H, w1, h, F, H, F, R);
    for (int i = 0; i < R * F; i++)
        h[i] = h[i] / (1.0f + kc_expf(-h[i]));
    mm_rows(h, F, w2, y, H, F, H, R);
}

void kernel(const float *restrict x, const float *restrict w1, const float *restrict w2,
            float *restrict y, int M, int H, int F)
{
    float h[4 * F];
    int m = 0;
    for (; m + 4 <= M; m += 4)
        ffn_rows(x + m * H, w1, w2, y + m * H, h, H, F, 4);
    for (; m < M; m++)
        ffn_rows(x + m * H, w1, w2, y + m * H, h, H, F, 1);
}
