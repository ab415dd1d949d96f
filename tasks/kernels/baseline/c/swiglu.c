/* swiglu: y[M, H] = (silu(x @ wg) * (x @ wu)) @ wd with x[M, H], wg and wu[H, F], wd[F, H],
 * silu(z) = z / (1 + exp(-z)), float32.
 * Four rows of x at a time: g[4, F] = x[rows] @ wg and u[4, F] = x[rows] @ wu, then
 * h = silu(g) * u into g, then y[rows] = h @ wd; leftover rows one at a time. The products are
 * register-tiled in the C (matmul.h: mm_tile sums an R x C block of the result in locals over the
 * whole k range, R <= 4 rows by C <= 4 columns, constants at each call so the compiler keeps the
 * block in registers), as a C programmer writes a matrix product that must run within the
 * evaluator's step budget (17.3 M multiply-adds at C5). g and u are stack arrays (4 * F floats
 * each). exp is kc_expf (common.h): the targets have no libm.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* kc_expf */
#include "matmul.h"  /* mm_rows: register-tiled c = a @ b */

static inline __attribute__((always_inline)) void swiglu_rows(const float *restrict x,
        const float *restrict wg, const float *restrict wu, const float *restrict wd, float *restrict y,
        float *restrict g, float *restrict u, int H, int F, int R)
{
    mm_rows(x, H, wg, g, F, H, F, R);
    mm_rows(x, H, wu, u, F, H, F, R);
    for (int i = 0; i < R * F; i++)
        g[i] = g[i] / (1.0f + kc_expf(-g[i])) * u[i];
    mm_rows(g, F, wd, y, H, F, H, R);
}

void kernel(const float *restrict x, const float *restrict wg, const float *restrict wu,
            const float *restrict wd, float *restrict y, int M, int H, int F)
{
    float g[4 * F], u[4 * F];
    int m = 0;
    for (; m + 4 <= M; m += 4)
        swiglu_rows(x + m * H, wg, wu, wd, y + m * H, g, u, H, F, 4);
    for (; m < M; m++)
        swiglu_rows(x + m * H, wg, wu, wd, y + m * H, g, u, H, F, 1);
}
