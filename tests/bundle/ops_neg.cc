// ops_neg.cc - fixture of bundle "alpha": a C++ source, bundle_neg (Out = -X, float32 and
// float64) through a template, so that C++ objects (COMDAT groups, inline functions) go
// through the bundle's ld -r and localization too.
#include "extension.h"

namespace {
template <typename T> void negate(const T *in, T *out, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        out[i] = -in[i];
}
} // namespace

static void neg_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "bundle_neg", {
        negate<data_t>(static_cast<const data_t *>(pd_data(x)), static_cast<data_t *>(pd_data(out)),
                       pd_numel(x));
    });
}

PD_BUILD_OP(bundle_neg,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = neg_kernel);
