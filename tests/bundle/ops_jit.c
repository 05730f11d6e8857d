/*
 * ops_jit.c - fixture loaded through the JIT (pd_jit_load) by prog_mix.c, beside a static
 * and a shared bundle: bundle_square (Out = X * X, float32).
 */
#include "extension.h"

static void square_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    const float *in = (const float *)pd_data(x);
    float *o = (float *)pd_data(out);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        o[i] = in[i] * in[i];
}

PD_BUILD_OP(bundle_square,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = square_kernel);
