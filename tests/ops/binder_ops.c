/*
 * binder_ops.c - test ops for binder_test.c: plain ops (one tensor per input and output),
 * whose usual calls take the binder's fast cases, with kernels that make, skip or alias their
 * outputs without reading any element (so hosts may pass hand-built tensor structs); a vector
 * op, whose input never takes them; and ops that tell where their output was made, or fail
 * after making it.
 */
#include "extension.h"

/* Out mirrors X (default inference); the kernel only asks for it. */
static void make_kernel(pd_kernel_ctx *ctx) { pd_output(ctx, 0); }

/* Never sets Out. */
static void unset_kernel(pd_kernel_ctx *ctx) { (void)ctx; }

/* A = X and B = Y, as new references to the inputs' storage. */
static void alias_kernel(pd_kernel_ctx *ctx)
{
    pd_set_output(ctx, 0, pd_input(ctx, 0));
    pd_set_output(ctx, 1, pd_input(ctx, 1));
}

PD_BUILD_OP(bd_make, .inputs = {"X"}, .outputs = {"Out"}, .kernel = make_kernel);
PD_BUILD_OP(bd_unset, .inputs = {"X"}, .outputs = {"Out"}, .kernel = unset_kernel);
PD_BUILD_OP(bd_alias, .inputs = {"X", "Y"}, .outputs = {"A", "B"}, .kernel = alias_kernel);

/* Out mirrors the first item of Xs. */
PD_BUILD_OP(bd_first, .inputs = {PD_VEC("Xs")}, .outputs = {"Out"}, .kernel = make_kernel);

/* Out (int64, like X) holds the address of the tensor struct pd_output gave the kernel. */
static void where_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor *out = pd_output(ctx, 0);
    PD_CHECK(pd_dtype(out) == PD_INT64 && pd_numel(out) == 1, "X must be one int64");
    *(int64_t *)pd_data(out) = (int64_t)(uintptr_t)out;
}

/* Makes Out, then fails. */
static void make_fail_kernel(pd_kernel_ctx *ctx)
{
    pd_output(ctx, 0);
    PD_THROW("failed after making Out");
}

PD_BUILD_OP(bd_where, .inputs = {"X"}, .outputs = {"Out"}, .kernel = where_kernel);
PD_BUILD_OP(bd_make_fail, .inputs = {"X"}, .outputs = {"Out"}, .kernel = make_fail_kernel);

/* A and B take X's shape and dtype (PD_OP_OUTPUTS_LIKE_INPUT0); the kernel only asks for them. */
static void like0_kernel(pd_kernel_ctx *ctx)
{
    pd_output(ctx, 0);
    pd_output(ctx, 1);
}

PD_BUILD_OP(bd_like0, .inputs = {"X", "Y"}, .outputs = {"A", "B"}, .kernel = like0_kernel,
            .flags = PD_OP_OUTPUTS_LIKE_INPUT0);

/* Out: three elements of X's dtype (float64), set in the kernel before making it, so that
 * what the binder worked out for X's shape does not size it. */
static void resize_kernel(pd_kernel_ctx *ctx)
{
    pd_set_output_shape(ctx, 0, 1, (int64_t[]){3});
    double *o = (double *)pd_data(pd_output(ctx, 0));
    for (int i = 0; i < 3; ++i)
        o[i] = i + 0.5;
}

PD_BUILD_OP(bd_resize, .inputs = {"X"}, .outputs = {"Out"}, .kernel = resize_kernel);
