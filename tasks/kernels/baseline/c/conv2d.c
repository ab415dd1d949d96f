/* conv2d: y[CO, OH, OW] = sum over ci, kh, kw of x[ci, oh + kh, ow + kw] * w[co, ci, kh, kw],
 * stride 1, no padding, OH = H - K + 1, OW = W - K + 1. Loop order co, ci, kh, kw, oh, ow: the
 * inner loop runs along a row of x and of the accumulators (unit stride). In float32 the
 * accumulators are the plane of y itself; on coral (-DKC_INT8) they are one plane of exact int32
 * sums on the stack, requantised into the int8 plane of y with the task's shift
 * 7 + (log2(CI * K * K) + 1) / 2 (tasks/level1/conv2d.yaml).
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, acc_t, out_t: the element types */

void kernel(const in_t *restrict x, const in_t *restrict w, out_t *restrict y,
            int CI, int CO, int H, int W, int K)
{
    int OH = H - K + 1, OW = W - K + 1;
#ifdef KC_INT8
    int s = 7 + (kc_log2(CI * K * K) + 1) / 2;
    acc_t plane[OH * OW];
#endif
    for (int co = 0; co < CO; co++) {
#ifdef KC_INT8
        acc_t *yc = plane;
#else
        acc_t *yc = y + co * OH * OW;
#endif
        for (int i = 0; i < OH * OW; i++)
            yc[i] = 0;
        for (int ci = 0; ci < CI; ci++)
            for (int kh = 0; kh < K; kh++)
                for (int kw = 0; kw < K; kw++) {
                    acc_t wv = (acc_t)w[((co * CI + ci) * K + kh) * K + kw];
                    for (int oh = 0; oh < OH; oh++) {
                        const in_t *xr = x + (ci * H + oh + kh) * W + kw;
                        acc_t *yr = yc + oh * OW;
                        for (int ow = 0; ow < OW; ow++)
                            yr[ow] += wv * (acc_t)xr[ow];
                    }
                }
#ifdef KC_INT8
        for (int i = 0; i < OH * OW; i++)
            y[co * OH * OW + i] = kc_requant(plane[i], s);
#endif
    }
}
