/*
 * check_inplace.c - an in-place op whose kernel reads its input as a dense array (it declares
 * no strided inputs), as most in-place ops are written: `pdext check` must pass it, the
 * strided row skipped with the reason rather than failed (gradcheck_cli_test.c).
 */
#include "extension.h"

/* X doubled in place; Out is X. */
static void double_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor *out = pd_output(ctx, 0);
    int64_t n = pd_numel(out);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(out), "ck_double_inplace", {
        data_t *o = (data_t *)pd_data(out);
        for (int64_t i = 0; i < n; ++i)
            o[i] *= 2;
    });
}

PD_BUILD_OP(ck_double_inplace,
    .inputs = {"X"},
    .outputs = {"Out"},
    .inplace = {{"X", "Out"}},
    .kernel = double_kernel);
