/*
 * relu.c - the reference elementwise op: custom_relu (Out = max(X, 0)) and its gradient
 * (X@GRAD = Out@GRAD where Out > 0, else 0), for float32 and float64 on the CPU.
 *
 * Build it by hand (see README.md):  cc -O3 -shared -fPIC -I<prefix>/include/pdext relu.c -o librelu.so
 *
 * The loops are written branch-free (a conditional select per element) so that -O3
 * vectorizes them. Neither op needs an infer_shape / infer_dtype: the forward op has one input
 * and one output, so Out takes X's shape and dtype; the grad op's output X@GRAD takes the
 * shape and dtype of its input X.
 */
#include "extension.h"

static void relu_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_is_cpu(x), "x must be a CPU Tensor.");
    pd_tensor *out = pd_output(ctx, 0); /* allocated with X's shape and dtype */
    int64_t n = pd_numel(x);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "relu_forward", {
        const data_t *restrict in = (const data_t *)pd_data(x);
        data_t *restrict o = (data_t *)pd_data(out);
        for (int64_t i = 0; i < n; ++i)
            o[i] = in[i] > 0 ? in[i] : (data_t)0;
    });
}

static void relu_backward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    const pd_tensor *out = pd_input(ctx, 1);
    const pd_tensor *grad_out = pd_input(ctx, 2);
    PD_CHECK(pd_is_cpu(out) && pd_is_cpu(grad_out), "Out and Out@GRAD must be CPU Tensors.");
    PD_CHECK(pd_same_shape(x, out) && pd_same_shape(out, grad_out),
             "X, Out and Out@GRAD must have the same shape.");
    PD_CHECK(pd_dtype(x) == pd_dtype(out) && pd_dtype(out) == pd_dtype(grad_out),
             "X, Out and Out@GRAD must have the same dtype, got %s, %s and %s.",
             pd_dtype_name(pd_dtype(x)), pd_dtype_name(pd_dtype(out)),
             pd_dtype_name(pd_dtype(grad_out)));
    pd_tensor *grad_x = pd_output(ctx, 0); /* allocated with X's shape and dtype */
    int64_t n = pd_numel(out);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(out), "relu_backward", {
        const data_t *restrict o = (const data_t *)pd_data(out);
        const data_t *restrict g = (const data_t *)pd_data(grad_out);
        data_t *restrict gx = (data_t *)pd_data(grad_x);
        for (int64_t i = 0; i < n; ++i) {
            data_t gi = g[i]; /* loaded unconditionally: the select below vectorizes */
            gx[i] = o[i] > 0 ? gi : (data_t)0;
        }
    });
}

PD_BUILD_OP(custom_relu,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = relu_forward);

PD_BUILD_GRAD_OP(custom_relu,
    .inputs = {"X", "Out", PD_GRAD("Out")},
    .outputs = {PD_GRAD("X")},
    .kernel = relu_backward);
