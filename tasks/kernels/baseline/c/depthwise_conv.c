/* depthwise_conv: y[C, OH, OW] = sum over kh, kw of x[c, oh + kh, ow + kw] * w[c, kh, kw],
 * stride 1, no padding, OH = H - K + 1, OW = W - K + 1. Loop order c, kh, kw, oh, ow: the inner
 * loop runs along a row of x and of y (unit stride), accumulating into y.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, out_t: the element types */

void kernel(const in_t *restrict x, const in_t *restrict w, out_t *restrict y, int C, int H, int W, int K)
{
    int OH = H - K + 1, OW = W - K + 1;
    for (int c = 0; c < C; c++) {
        out_t *yc = y + c * OH * OW;
        for (int i = 0; i < OH * OW; i++)
            yc[i] = 0;
        for (int kh = 0; kh < K; kh++)
            for (int kw = 0; kw < K; kw++) {
                out_t wv = (out_t)w[(c * K + kh) * K + kw];
                for (int oh = 0; oh < OH; oh++) {
                    const in_t *xr = x + (c * H + oh + kh) * W + kw;
                    out_t *yr = yc + oh * OW;
                    for (int ow = 0; ow < OW; ow++)
                        yr[ow] += wv * (out_t)xr[ow];
                }
            }
    }
}
