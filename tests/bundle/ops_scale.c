/*
 * ops_scale.c - fixture of bundle "alpha": bundle_scale (Out = 2 * X, float32) with a
 * gradient. Its kernel and its non-static helper deliberately have the same names as those
 * of ops_triple.c (bundle "beta"): linked into one program, each bundle must keep its own.
 */
#include "extension.h"

/* Not static on purpose: -fvisibility=hidden + the bundle's localization keep it private. */
float helper_factor(void);
float helper_factor(void) { return 2.0f; }

static void scale_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == PD_FLOAT32, "bundle_scale takes float32, got %s",
             pd_dtype_name(pd_dtype(x)));
    pd_tensor *out = pd_output(ctx, 0);
    const float *in = (const float *)pd_data(x);
    float *o = (float *)pd_data(out);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        o[i] = helper_factor() * in[i];
}

static void scale_grad_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *g = pd_input(ctx, 1);
    pd_tensor *gx = pd_output(ctx, 0);
    const float *in = (const float *)pd_data(g);
    float *o = (float *)pd_data(gx);
    for (int64_t i = 0, n = pd_numel(g); i < n; ++i)
        o[i] = helper_factor() * in[i];
}

PD_BUILD_OP(bundle_scale,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = scale_kernel);

PD_BUILD_GRAD_OP(bundle_scale,
    .inputs = {"X", PD_GRAD("Out")},
    .outputs = {PD_GRAD("X")},
    .kernel = scale_grad_kernel);
