/*
 * tape_ub_op.c - an op whose kernel has undefined behaviour on large inputs (a signed integer
 * overflow from 1000 elements on), for `pdext check --sanitize` (gradcheck_cli_test.c): the
 * plain check passes, the sanitized one stops at the report and names the case.
 */
#include "extension.h"

#include <stdint.h>

static void ub_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    volatile int32_t big = INT32_MAX - 999;
    int32_t n = (int32_t)pd_numel(x);
    int32_t sum = big + n; /* overflows from n = 1000 on */
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "tp_ub", {
        const data_t *in = (const data_t *)pd_data(x);
        data_t *o = (data_t *)pd_data(pd_output(ctx, 0));
        for (int32_t i = 0; i < n; ++i)
            o[i] = in[i] + (data_t)(sum == 0);
    });
}

PD_BUILD_OP(tp_ub, .inputs = {"X"}, .outputs = {"Out"}, .kernel = ub_forward);
