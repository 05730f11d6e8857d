// twice.cc - JIT test fixture: a C++ op, jit_twice, Out = 2 * X (float32), compiled by c++.
#include "extension.h"

#include <algorithm>

static void twice_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    const float *in = static_cast<const float *>(pd_data(x));
    float *o = static_cast<float *>(pd_data(out));
    std::transform(in, in + pd_numel(x), o, [](float v) { return 2.0f * v; });
}

PD_BUILD_OP(jit_twice,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = twice_forward);
