/* conv_block: y[co, i, j] = max(conv[co, i, j] * bn[0, co] + bn[1, co], 0), y[CO, H-2, W-2], where
 * conv = 2-D convolution (3x3, stride 1, no padding) of x[CI, H, W] with w[CO, CI, 3, 3].
 * x and w are in_t (float32, or int8 with -DKC_INT8: coral), the convolution sums are acc_t
 * (float32, or int32: exact), bn and y are float32 on every target.
 * Per output channel: the sums of the whole plane in a stack array acc[OH * OW], loop order ci,
 * kh, kw, oh, ow (as conv2d.c: the inner loop runs along a row of x and of acc), then batch norm
 * and ReLU from acc into y.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, acc_t: the element types */

void kernel(const in_t *restrict x, const in_t *restrict w, const float *restrict bn,
            float *restrict y, int CI, int CO, int H, int W)
{
    int OH = H - 2, OW = W - 2;
    acc_t acc[OH * OW];
    for (int co = 0; co < CO; co++) {
        for (int i = 0; i < OH * OW; i++)
            acc[i] = 0;
        for (int ci = 0; ci < CI; ci++)
            for (int kh = 0; kh < 3; kh++)
                for (int kw = 0; kw < 3; kw++) {
                    acc_t wv = (acc_t)w[((co * CI + ci) * 3 + kh) * 3 + kw];
                    for (int oh = 0; oh < OH; oh++) {
                        const in_t *xr = x + (ci * H + oh + kh) * W + kw;
                        acc_t *ar = acc + oh * OW;
                        for (int ow = 0; ow < OW; ow++)
                            ar[ow] += wv * (acc_t)xr[ow];
                    }
                }
        float scale = bn[co], shift = bn[CO + co];
        float *yc = y + co * OH * OW;
        for (int i = 0; i < OH * OW; i++) {
            float v = (float)acc[i] * scale + shift;
            yc[i] = v > 0.0f ? v : 0.0f;
        }
    }
}
