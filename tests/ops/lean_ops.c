/*
 * lean_ops.c - test ops for runner_lean_test.c: simple ops (plain inputs and outputs, no
 * attrs), whose calls take the runner's lean binding, with kernels that make, skip or alias
 * their outputs without reading any element (so hosts may pass hand-built tensor structs).
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

PD_BUILD_OP(rl_make, .inputs = {"X"}, .outputs = {"Out"}, .kernel = make_kernel);
PD_BUILD_OP(rl_unset, .inputs = {"X"}, .outputs = {"Out"}, .kernel = unset_kernel);
PD_BUILD_OP(rl_alias, .inputs = {"X", "Y"}, .outputs = {"A", "B"}, .kernel = alias_kernel);
