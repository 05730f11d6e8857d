/* shift.c - JIT test fixture: jit_shift, Out = X + SHIFT (float32); the source-edit test
 * changes SHIFT. */
#include "extension.h"

#define SHIFT 10.0f

static void shift_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == PD_FLOAT32, "jit_shift takes float32");
    pd_tensor *out = pd_output(ctx, 0);
    const float *in = (const float *)pd_data(x);
    float *o = (float *)pd_data(out);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        o[i] = in[i] + SHIFT;
}

PD_BUILD_OP(jit_shift,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = shift_forward);
