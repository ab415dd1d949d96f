/* conv2d: y[CO, OH, OW] = sum over ci, kh, kw of x[ci, oh + kh, ow + kw] * w[co, ci, kh, kw],
 * stride 1, no padding, OH = H - K + 1, OW = W - K + 1. Loop order co, ci, kh, kw, oh, ow: the
 * inner loop runs along a row of x and of y (unit stride), accumulating into y.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, out_t: the element types */

void kernel(const in_t *restrict x, const in_t *restrict w, out_t *restrict y,
            int CI, int CO, int H, int W, int K)
{
    int OH = H - K + 1, OW = W - K + 1;
    for (int co = 0; co < CO; co++) {
        out_t *yc = y + co * OH * OW;
        for (int i = 0; i < OH * OW; i++)
            yc[i] = 0;
        for (int ci = 0; ci < CI; ci++)
            for (int kh = 0; kh < K; kh++)
                for (int kw = 0; kw < K; kw++) {
                    out_t wv = (out_t)w[((co * CI + ci) * K + kh) * K + kw];
                    for (int oh = 0; oh < OH; oh++) {
                        const in_t *xr = x + (ci * H + oh + kh) * W + kw;
                        out_t *yr = yc + oh * OW;
                        for (int ow = 0; ow < OW; ow++)
                            yr[ow] += wv * (out_t)xr[ow];
                    }
                }
    }
}
