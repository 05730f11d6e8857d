/*
 * ops_dup.c - fixture of bundle "gamma": defines bundle_scale again, which bundle "alpha"
 * defines too. Registering both in one registry must fail naming the op and both bundles.
 */
#include "extension.h"

static void copy_kernel(pd_kernel_ctx *ctx) { pd_set_output(ctx, 0, pd_input(ctx, 0)); }

PD_BUILD_OP(bundle_scale,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = copy_kernel);
