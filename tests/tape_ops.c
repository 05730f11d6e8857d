/*
 * tape_ops.c - small differentiable ops for the tape and gradcheck tests (tape_test.c,
 * gradcheck_test.c), float32 and float64 on the CPU, built like an author builds a module:
 *   tp_square  Out = X * X                 grad 2 X g; double grad (see below)
 *   tp_mul     Out = X * Y (same shapes)   grad Y g, X g
 *   tp_scale   Out = scale * X             attr "scale: float = 2.0"; grad scale g; double grad
 *   tp_split   A = X, B = 3 X              two outputs; grad A@GRAD + 3 B@GRAD
 *   tp_addn    Out = sum of X[k] (vector)  grad g for each X[k]
 *   tp_shift   Out = X + N (N int32)       grad for X only: N is not differentiable
 *   tp_nograd  Out = X + 1                 no grad op
 *   tp_bad_square  Out = X * X             grad X g: wrong by a factor 2 (gradcheck must see it)
 *   tp_f32only Out = X * X                 float32 only (gradcheck cannot cast up)
 *   tp_bad_dd  Out = X * X                 right grad, wrong double grad
 *   tp_badin, tp_badout                    grad ops whose names the tape cannot bind
 * tp_square's double grad differentiates its grad op (inputs X, Out@GRAD; output X@GRAD =
 * 2 X g): with upstream gradient h = X@GRAD@GRAD it gives X@GRAD = 2 g h and
 * Out@GRAD@GRAD = 2 X h.
 */
#include "extension.h"

/* Element-wise y[i] = f(a[i], b[i]) with b optional, for the floating types. */
#define TP_LOOP(name, out, a, b, expr)                            \
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(a), name, {               \
        const data_t *pa = (const data_t *)pd_data(a);            \
        const data_t *pb = (b) ? (const data_t *)pd_data(b) : pa; \
        data_t *po = (data_t *)pd_data(out);                      \
        for (int64_t i = 0, n = pd_numel(a); i < n; ++i) {        \
            data_t x = pa[i], y = pb[i];                          \
            (void)y;                                              \
            po[i] = (data_t)(expr);                               \
        }                                                         \
    })

static void square_fwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    TP_LOOP("tp_square", pd_output(ctx, 0), x, (const pd_tensor *)NULL, x * x);
}
/* inputs X, Out@GRAD */
static void square_bwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *g = pd_input(ctx, 1);
    TP_LOOP("tp_square_grad", pd_output(ctx, 0), x, g, 2 * x * y);
}
/* inputs X, Out@GRAD, X@GRAD@GRAD; outputs X@GRAD, Out@GRAD@GRAD */
static void square_dd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *g = pd_input(ctx, 1), *h = pd_input(ctx, 2);
    TP_LOOP("tp_square_grad_grad", pd_output(ctx, 0), g, h, 2 * x * y);
    TP_LOOP("tp_square_grad_grad", pd_output(ctx, 1), x, h, 2 * x * y);
}
static void bad_dd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *g = pd_input(ctx, 1), *h = pd_input(ctx, 2);
    TP_LOOP("tp_bad_dd_grad_grad", pd_output(ctx, 0), g, h, 3 * x * y);
    TP_LOOP("tp_bad_dd_grad_grad", pd_output(ctx, 1), x, h, 2 * x * y);
}
static void bad_square_bwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *g = pd_input(ctx, 1);
    TP_LOOP("tp_bad_square_grad", pd_output(ctx, 0), x, g, x * y);
}
static void f32_square_fwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == PD_FLOAT32, "tp_f32only takes float32, got %s",
             pd_dtype_name(pd_dtype(x)));
    square_fwd(ctx);
}
static void f32_square_bwd(pd_kernel_ctx *ctx)
{
    PD_CHECK(pd_dtype(pd_input(ctx, 0)) == PD_FLOAT32, "tp_f32only_grad takes float32");
    square_bwd(ctx);
}

static void mul_fwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *y = pd_input(ctx, 1);
    PD_CHECK(pd_same_shape(x, y) && pd_dtype(x) == pd_dtype(y), "X and Y must match");
    TP_LOOP("tp_mul", pd_output(ctx, 0), x, y, x * y);
}
/* inputs X, Y, Out@GRAD */
static void mul_bwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *y = pd_input(ctx, 1), *g = pd_input(ctx, 2);
    TP_LOOP("tp_mul_grad", pd_output(ctx, 0), y, g, x * y);
    TP_LOOP("tp_mul_grad", pd_output(ctx, 1), x, g, x * y);
}

static void scale_fwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    double s = pd_attr_float(ctx, 0);
    TP_LOOP("tp_scale", pd_output(ctx, 0), x, (const pd_tensor *)NULL, s * x);
}
static void scale_bwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *g = pd_input(ctx, 0);
    double s = pd_attr_float(ctx, 0);
    TP_LOOP("tp_scale_grad", pd_output(ctx, 0), g, (const pd_tensor *)NULL, s * x);
}

static void split_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
    pd_set_output_shape(ctx, 1, x->ndim, x->shape);
}
static void split_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, pd_dtype(pd_input(ctx, 0)));
    pd_set_output_dtype(ctx, 1, pd_dtype(pd_input(ctx, 0)));
}
static void split_fwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    TP_LOOP("tp_split", pd_output(ctx, 0), x, (const pd_tensor *)NULL, x);
    TP_LOOP("tp_split", pd_output(ctx, 1), x, (const pd_tensor *)NULL, 3 * x);
}
/* inputs A@GRAD, B@GRAD */
static void split_bwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *ga = pd_input(ctx, 0), *gb = pd_input(ctx, 1);
    TP_LOOP("tp_split_grad", pd_output(ctx, 0), ga, gb, x + 3 * y);
}

static void addn_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input_at(ctx, 0, 0);
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
}
static void addn_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, pd_dtype(pd_input_at(ctx, 0, 0)));
}
static void addn_fwd(pd_kernel_ctx *ctx)
{
    pd_tensor *out = pd_output(ctx, 0);
    const pd_tensor *x0 = pd_input_at(ctx, 0, 0);
    TP_LOOP("tp_addn", out, x0, (const pd_tensor *)NULL, 0 * x);
    for (int32_t k = 0; k < pd_input_count(ctx, 0); ++k) {
        const pd_tensor *xk = pd_input_at(ctx, 0, k);
        PD_CHECK(pd_same_shape(xk, x0), "X[%d] has another shape", k);
        TP_LOOP("tp_addn", out, xk, out, x + y);
    }
}
/* inputs X (vector), Out@GRAD; output X@GRAD (vector) */
static void addn_bwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *g = pd_input(ctx, 1);
    for (int32_t k = 0; k < pd_input_count(ctx, 0); ++k)
        TP_LOOP("tp_addn_grad", pd_output_at(ctx, 0, k), g, (const pd_tensor *)NULL, x);
}

static void shift_fwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *n = pd_input(ctx, 1);
    PD_CHECK(pd_dtype(n) == PD_INT32 && pd_same_shape(x, n), "N must be int32 of X's shape");
    const int32_t *pn = (const int32_t *)pd_data(n);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "tp_shift", {
        const data_t *px = (const data_t *)pd_data(x);
        data_t *po = (data_t *)pd_data(pd_output(ctx, 0));
        for (int64_t i = 0, c = pd_numel(x); i < c; ++i)
            po[i] = px[i] + (data_t)pn[i];
    });
}
static void shift_bwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *g = pd_input(ctx, 0);
    TP_LOOP("tp_shift_grad", pd_output(ctx, 0), g, (const pd_tensor *)NULL, x);
}
static void shape_of_x(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
}
static void dtype_of_x(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, pd_dtype(pd_input(ctx, 0)));
}

static void nograd_fwd(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    TP_LOOP("tp_nograd", pd_output(ctx, 0), x, (const pd_tensor *)NULL, x + 1);
}

PD_BUILD_OP(tp_square, .inputs = {"X"}, .outputs = {"Out"}, .kernel = square_fwd);
PD_BUILD_GRAD_OP(tp_square, .inputs = {"X", PD_GRAD("Out")}, .outputs = {PD_GRAD("X")},
                 .kernel = square_bwd);
PD_BUILD_DOUBLE_GRAD_OP(tp_square, .inputs = {"X", PD_GRAD("Out"), PD_GRAD(PD_GRAD("X"))},
                        .outputs = {PD_GRAD("X"), PD_GRAD(PD_GRAD("Out"))},
                        .kernel = square_dd, .infer_shape = split_shape,
                        .infer_dtype = split_dtype);

PD_BUILD_OP(tp_bad_dd, .inputs = {"X"}, .outputs = {"Out"}, .kernel = square_fwd);
PD_BUILD_GRAD_OP(tp_bad_dd, .inputs = {"X", PD_GRAD("Out")}, .outputs = {PD_GRAD("X")},
                 .kernel = square_bwd);
PD_BUILD_DOUBLE_GRAD_OP(tp_bad_dd, .inputs = {"X", PD_GRAD("Out"), PD_GRAD(PD_GRAD("X"))},
                        .outputs = {PD_GRAD("X"), PD_GRAD(PD_GRAD("Out"))}, .kernel = bad_dd,
                        .infer_shape = split_shape, .infer_dtype = split_dtype);

PD_BUILD_OP(tp_bad_square, .inputs = {"X"}, .outputs = {"Out"}, .kernel = square_fwd);
PD_BUILD_GRAD_OP(tp_bad_square, .inputs = {"X", PD_GRAD("Out")}, .outputs = {PD_GRAD("X")},
                 .kernel = bad_square_bwd);

PD_BUILD_OP(tp_f32only, .inputs = {"X"}, .outputs = {"Out"}, .kernel = f32_square_fwd);
PD_BUILD_GRAD_OP(tp_f32only, .inputs = {"X", PD_GRAD("Out")}, .outputs = {PD_GRAD("X")},
                 .kernel = f32_square_bwd);

PD_BUILD_OP(tp_mul, .inputs = {"X", "Y"}, .outputs = {"Out"}, .kernel = mul_fwd,
            .infer_shape = shape_of_x, .infer_dtype = dtype_of_x);
PD_BUILD_GRAD_OP(tp_mul, .inputs = {"X", "Y", PD_GRAD("Out")},
                 .outputs = {PD_GRAD("X"), PD_GRAD("Y")}, .kernel = mul_bwd);

PD_BUILD_OP(tp_scale, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"scale: float = 2.0"},
            .kernel = scale_fwd);
PD_BUILD_GRAD_OP(tp_scale, .inputs = {PD_GRAD("Out")}, .outputs = {PD_GRAD("X")},
                 .attrs = {"scale: float"}, .kernel = scale_bwd);
/* tp_scale_grad is linear in Out@GRAD too: Out@GRAD@GRAD = scale * X@GRAD@GRAD. */
PD_BUILD_DOUBLE_GRAD_OP(tp_scale, .inputs = {PD_GRAD(PD_GRAD("X"))},
                        .outputs = {PD_GRAD(PD_GRAD("Out"))}, .attrs = {"scale: float"},
                        .kernel = scale_bwd);

PD_BUILD_OP(tp_split, .inputs = {"X"}, .outputs = {"A", "B"}, .kernel = split_fwd,
            .infer_shape = split_shape, .infer_dtype = split_dtype);
PD_BUILD_GRAD_OP(tp_split, .inputs = {PD_GRAD("A"), PD_GRAD("B")}, .outputs = {PD_GRAD("X")},
                 .kernel = split_bwd, .infer_shape = shape_of_x, .infer_dtype = dtype_of_x);

PD_BUILD_OP(tp_addn, .inputs = {PD_VEC("X")}, .outputs = {"Out"}, .kernel = addn_fwd,
            .infer_shape = addn_shape, .infer_dtype = addn_dtype);
PD_BUILD_GRAD_OP(tp_addn, .inputs = {PD_VEC("X"), PD_GRAD("Out")},
                 .outputs = {PD_GRAD(PD_VEC("X"))}, .kernel = addn_bwd);

PD_BUILD_OP(tp_shift, .inputs = {"X", "N"}, .outputs = {"Out"}, .kernel = shift_fwd,
            .infer_shape = shape_of_x, .infer_dtype = dtype_of_x);
PD_BUILD_GRAD_OP(tp_shift, .inputs = {PD_GRAD("Out")}, .outputs = {PD_GRAD("X")},
                 .kernel = shift_bwd);

PD_BUILD_OP(tp_nograd, .inputs = {"X"}, .outputs = {"Out"}, .kernel = nograd_fwd);

/* Grad ops the tape cannot bind: an input named after nothing of the forward op, and an
 * output that is not the gradient of a forward input. Their kernels never run. */
PD_BUILD_OP(tp_badin, .inputs = {"X"}, .outputs = {"Out"}, .kernel = nograd_fwd);
PD_BUILD_GRAD_OP(tp_badin, .inputs = {"Nope"}, .outputs = {PD_GRAD("X")}, .kernel = shift_bwd);
PD_BUILD_OP(tp_badout, .inputs = {"X"}, .outputs = {"Out"}, .kernel = nograd_fwd);
PD_BUILD_GRAD_OP(tp_badout, .inputs = {PD_GRAD("Out")}, .outputs = {PD_GRAD("Q")},
                 .kernel = shift_bwd);
