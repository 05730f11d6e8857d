/*
 * ops_triple.c - fixture of bundle "beta": bundle_triple (Out = 3 * X, float32). Its kernel
 * (scale_kernel) and helper (helper_factor, not static) share their names with ops_scale.c
 * of bundle "alpha" but compute something else: both bundles in one program must link and
 * each op must use its own bundle's helper.
 */
#include "extension.h"

float helper_factor(void);
float helper_factor(void) { return 3.0f; }

static void scale_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    const float *in = (const float *)pd_data(x);
    float *o = (float *)pd_data(out);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        o[i] = helper_factor() * in[i];
}

PD_BUILD_OP(bundle_triple,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = scale_kernel);
