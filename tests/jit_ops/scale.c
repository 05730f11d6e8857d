/* scale.c - JIT test fixture: jit_scale, Out = X * SCALE_FACTOR + SCALE_BIAS (float32).
 * SCALE_FACTOR comes from scale_factor.h (the header-edit test changes it); SCALE_BIAS from
 * the flags (the flag-change test passes -DSCALE_BIAS=...). */
#include "extension.h"
#include "scale_factor.h"

#ifndef SCALE_BIAS
#define SCALE_BIAS 0
#endif

static void scale_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == PD_FLOAT32, "jit_scale takes float32");
    pd_tensor *out = pd_output(ctx, 0);
    const float *in = (const float *)pd_data(x);
    float *o = (float *)pd_data(out);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        o[i] = in[i] * SCALE_FACTOR + SCALE_BIAS;
}

PD_BUILD_OP(jit_scale,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = scale_forward);
