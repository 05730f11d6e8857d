/*
 * grad_binding_ops.c - ops whose grad ops bind to their forward ops in every way the rule of
 * pdext.h's pd_grad_source allows, for grad_binding_test.c (pd_op_grad_input_source /
 * pd_op_grad_output_target) and tests/python (op.grad_inputs / op.grad_outputs, and the
 * framework fronts, which must bind through them):
 *   gb_mul    Out = X * X * Y; its grad op declares Out, Out@GRAD, Y, X in that order and
 *             returns Y@GRAD before X@GRAD: X@GRAD = 2 g Out / X, Y@GRAD = g Out / Y (a
 *             front that binds by position, or confuses X with Y or Out, gets other numbers
 *             for X and Y away from zero)
 *   gb_stray  Out = X, with a grad op whose input "Scale" and output "Scale@GRAD" are none of
 *             the forward op's: bound to nothing (the tape and gradcheck refuse it, naming it)
 *   gb_vec    a vector input, a vector output and their gradients: W, X@VECTOR -> Parts@VECTOR;
 *             grad inputs Parts@VECTOR@GRAD, X@VECTOR, W; outputs X@VECTOR@GRAD, W@GRAD
 * Only gb_mul's kernels and gb_stray's forward one are meant to run; the others exist for
 * their declarations.
 */
#include "extension.h"

static void mul_fwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *y = pd_input(ctx, 1);
    PD_CHECK(pd_same_shape(x, y) && pd_dtype(x) == pd_dtype(y), "X and Y must match");
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "gb_mul", {
        const data_t *px = (const data_t *)pd_data(x), *py = (const data_t *)pd_data(y);
        data_t *po = (data_t *)pd_data(pd_output(ctx, 0));
        for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
            po[i] = px[i] * px[i] * py[i];
    });
}

/* inputs Out, Out@GRAD, Y, X; outputs Y@GRAD, X@GRAD */
static void mul_bwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *out = pd_input(ctx, 0), *g = pd_input(ctx, 1), *y = pd_input(ctx, 2),
                    *x = pd_input(ctx, 3);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "gb_mul_grad", {
        const data_t *po = (const data_t *)pd_data(out), *pg = (const data_t *)pd_data(g);
        const data_t *py = (const data_t *)pd_data(y), *px = (const data_t *)pd_data(x);
        data_t *gy = (data_t *)pd_data(pd_output(ctx, 0));
        data_t *gx = (data_t *)pd_data(pd_output(ctx, 1));
        for (int64_t i = 0, n = pd_numel(x); i < n; ++i) {
            gy[i] = pg[i] * po[i] / py[i];
            gx[i] = 2 * pg[i] * po[i] / px[i];
        }
    });
}

static void copy_fwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "gb_stray", {
        const data_t *px = (const data_t *)pd_data(x);
        data_t *po = (data_t *)pd_data(pd_output(ctx, 0));
        for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
            po[i] = px[i];
    });
}

static void not_run(pd_kernel_ctx *ctx)
{
    (void)ctx;
    PD_THROW("this op exists for its declaration only");
}

PD_BUILD_OP(gb_mul, .inputs = {"X", "Y"}, .outputs = {"Out"}, .kernel = mul_fwd,
            .flags = PD_OP_OUTPUTS_LIKE_INPUT0);
PD_BUILD_GRAD_OP(gb_mul, .inputs = {"Out", PD_GRAD("Out"), "Y", "X"},
                 .outputs = {PD_GRAD("Y"), PD_GRAD("X")}, .kernel = mul_bwd);

PD_BUILD_OP(gb_stray, .inputs = {"X"}, .outputs = {"Out"}, .kernel = copy_fwd);
PD_BUILD_GRAD_OP(gb_stray, .inputs = {PD_GRAD("Out"), "Scale"},
                 .outputs = {PD_GRAD("X"), PD_GRAD("Scale")}, .kernel = not_run);

PD_BUILD_OP(gb_vec, .inputs = {"W", PD_VEC("X")}, .outputs = {PD_VEC("Parts")},
            .kernel = not_run);
PD_BUILD_GRAD_OP(gb_vec, .inputs = {PD_GRAD(PD_VEC("Parts")), PD_VEC("X"), "W"},
                 .outputs = {PD_GRAD(PD_VEC("X")), PD_GRAD("W")}, .kernel = not_run);
