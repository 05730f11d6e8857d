/*
 * binder_ops.c - test ops for binder_test.c: plain ops (one tensor per input and output),
 * whose usual calls take the binder's fast cases, with kernels that make, skip or alias their
 * outputs without reading any element (so hosts may pass hand-built tensor structs); and a
 * vector op, whose input never takes them.
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
