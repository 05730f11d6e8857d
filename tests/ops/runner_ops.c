/*
 * runner_ops.c - test ops for runner_test.c: several inputs and outputs, vector and optional
 * inputs, vector and optional outputs, inplace maps, every attr type, outputs that disagree
 * with their inference, and a forward / grad / double grad chain.
 */
#include "extension.h"

#include <string.h>

/* --- rt_multi: Sum = A + B, Diff = A - B (float64), with infer functions ------------------ */

static void multi_infer_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *a = pd_input(ctx, 0), *b = pd_input(ctx, 1);
    PD_CHECK(pd_same_shape(a, b), "A and B must have the same shape.");
    pd_set_output_shape(ctx, 0, a->ndim, a->shape);
    pd_set_output_shape(ctx, 1, a->ndim, a->shape);
}

static void multi_infer_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, pd_dtype(pd_input(ctx, 0)));
    pd_set_output_dtype(ctx, 1, pd_dtype(pd_input(ctx, 0)));
}

static void multi_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *a = pd_input(ctx, 0), *b = pd_input(ctx, 1);
    PD_CHECK(pd_dtype(a) == PD_FLOAT64 && pd_dtype(b) == PD_FLOAT64);
    pd_tensor *sum = pd_output(ctx, 0), *diff = pd_output(ctx, 1);
    const double *x = pd_data(a), *y = pd_data(b);
    double *s = pd_data(sum), *d = pd_data(diff);
    for (int64_t i = 0, n = pd_numel(a); i < n; ++i) {
        s[i] = x[i] + y[i];
        d[i] = x[i] - y[i];
    }
}

PD_BUILD_OP(rt_multi,
    .inputs = {"A", "B"},
    .outputs = {"Sum", "Diff"},
    .kernel = multi_kernel,
    .infer_shape = multi_infer_shape,
    .infer_dtype = multi_infer_dtype);

/* --- rt_vec: Out[k] = X[k] + Bias (optional scalar), Seen records what infer_shape saw ---- */

static void vec_infer_shape(pd_kernel_ctx *ctx)
{
    int32_t n = pd_input_count(ctx, 0);
    pd_set_output_count(ctx, 0, n);
    for (int32_t k = 0; k < n; ++k) {
        const pd_tensor *x = pd_input_at(ctx, 0, k);
        pd_set_output_shape_at(ctx, 0, k, x->ndim, x->shape);
    }
    /* Seen: shape [1] when infer_shape saw a Bias, [0] when pd_input gave NULL. */
    const pd_tensor *bias = pd_input(ctx, 1);
    int64_t seen = bias != NULL;
    PD_CHECK(pd_input_count(ctx, 1) == (bias != NULL));
    pd_set_output_shape(ctx, 1, 1, &seen);
}

static void vec_infer_dtype(pd_kernel_ctx *ctx)
{
    for (int32_t k = 0, n = pd_input_count(ctx, 0); k < n; ++k)
        pd_set_output_dtype_at(ctx, 0, k, PD_FLOAT64);
    pd_set_output_dtype(ctx, 1, PD_INT64);
}

static void vec_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *bias = pd_input(ctx, 1);
    double b = bias ? *(const double *)pd_data(bias) : 0.0;
    PD_CHECK(pd_output_count(ctx, 0) == pd_input_count(ctx, 0));
    for (int32_t k = 0, n = pd_input_count(ctx, 0); k < n; ++k) {
        const pd_tensor *x = pd_input_at(ctx, 0, k);
        pd_tensor *o = pd_output_at(ctx, 0, k);
        const double *xi = pd_data(x);
        double *oi = pd_data(o);
        for (int64_t i = 0, m = pd_numel(x); i < m; ++i)
            oi[i] = xi[i] + b;
    }
    pd_output(ctx, 1); /* Seen: the shape is the message, no data */
    PD_CHECK(pd_input_at(ctx, 0, pd_input_count(ctx, 0)) == NULL);
}

PD_BUILD_OP(rt_vec,
    .inputs = {PD_VEC("X"), PD_OPTIONAL("Bias")},
    .outputs = {PD_VEC("Out"), "Seen"},
    .kernel = vec_kernel,
    .infer_shape = vec_infer_shape,
    .infer_dtype = vec_infer_dtype);

/* --- rt_optvec: an optional vector input; Count = how many tensors it got ----------------- */

static void optvec_kernel(pd_kernel_ctx *ctx)
{
    int64_t one = 1;
    pd_tensor *count = pd_empty(ctx, PD_INT64, pd_place_cpu(), 1, &one);
    *(int64_t *)pd_data(count) = pd_input_count(ctx, 0);
    pd_set_output(ctx, 0, count);
}

static void optvec_infer_shape(pd_kernel_ctx *ctx)
{
    int64_t one = 1;
    pd_set_output_shape(ctx, 0, 1, &one);
}

static void optvec_infer_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_INT64); }

PD_BUILD_OP(rt_optvec,
    .inputs = {PD_OPTIONAL(PD_VEC("X"))},
    .outputs = {"Count"},
    .kernel = optvec_kernel,
    .infer_shape = optvec_infer_shape,
    .infer_dtype = optvec_infer_dtype);

/* --- rt_inplace: Out is X, doubled in place ----------------------------------------------- */

static void inplace_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor *out = pd_output(ctx, 0);
    PD_CHECK(pd_data(out) == pd_data(pd_input(ctx, 0)), "the inplace output is not the input");
    double *o = pd_data(out);
    for (int64_t i = 0, n = pd_numel(out); i < n; ++i)
        o[i] *= 2;
}

PD_BUILD_OP(rt_inplace,
    .inputs = {"X"},
    .outputs = {"Out"},
    .inplace = {{"X", "Out"}},
    .kernel = inplace_kernel);

/* rt_inplace_vec: Out[k] is X[k], plus one in place; Y passes through untouched. */
static void inplace_vec_kernel(pd_kernel_ctx *ctx)
{
    for (int32_t k = 0, n = pd_output_count(ctx, 0); k < n; ++k) {
        pd_tensor *out = pd_output_at(ctx, 0, k);
        double *o = pd_data(out);
        for (int64_t i = 0, m = pd_numel(out); i < m; ++i)
            o[i] += 1;
    }
    pd_set_output(ctx, 1, pd_input(ctx, 1));
}

PD_BUILD_OP(rt_inplace_vec,
    .inputs = {PD_VEC("X"), "Y"},
    .outputs = {PD_VEC("Out"), "YOut"},
    .inplace = {{PD_VEC("X"), PD_VEC("Out")}},
    .kernel = inplace_vec_kernel);

/* --- Outputs that disagree with inference ---------------------------------------------------- */

static void fixed_infer_shape(pd_kernel_ctx *ctx)
{
    int64_t shape[2] = {3, 2};
    pd_set_output_shape(ctx, 0, 2, shape);
}

static void fixed_infer_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_FLOAT32); }

/* Attr `mode`: 0 makes a [2, 3] float32 output, 1 a [3, 2] float64 one, 2 sets nothing,
 * 3 the [3, 2] float32 output inference asked for. */
static void fixed_kernel(pd_kernel_ctx *ctx)
{
    int32_t mode = pd_attr_int(ctx, 0);
    int64_t wrong[2] = {2, 3}, right[2] = {3, 2};
    if (mode == 0)
        pd_set_output(ctx, 0, pd_zeros(ctx, PD_FLOAT32, pd_place_cpu(), 2, wrong));
    else if (mode == 1)
        pd_set_output(ctx, 0, pd_zeros(ctx, PD_FLOAT64, pd_place_cpu(), 2, right));
    else if (mode == 3)
        pd_set_output(ctx, 0, pd_zeros(ctx, PD_FLOAT32, pd_place_cpu(), 2, right));
}

PD_BUILD_OP(rt_fixed,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"mode: int"},
    .kernel = fixed_kernel,
    .infer_shape = fixed_infer_shape,
    .infer_dtype = fixed_infer_dtype);

/* rt_free_out: two inputs, one output, no inference: the output is whatever the kernel sets
 * (here the concatenation of two 1-d tensors). Attr `lazy` asks pd_output for it instead,
 * which cannot work without an inferred shape. */
static void free_out_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *a = pd_input(ctx, 0), *b = pd_input(ctx, 1);
    if (pd_attr_bool(ctx, 0)) {
        pd_output(ctx, 0);
        return;
    }
    int64_t n = pd_numel(a) + pd_numel(b);
    pd_tensor *out = pd_empty(ctx, PD_FLOAT64, pd_place_cpu(), 1, &n);
    memcpy(pd_data(out), pd_data(a), pd_nbytes(a));
    memcpy((char *)pd_data(out) + pd_nbytes(a), pd_data(b), pd_nbytes(b));
    pd_set_output(ctx, 0, out);
}

PD_BUILD_OP(rt_free_out,
    .inputs = {"A", "B"},
    .outputs = {"Out"},
    .attrs = {"lazy: bool"},
    .kernel = free_out_kernel);

/* rt_opt_out: an optional output the kernel sets only when attr `extra` is true. */
static void opt_out_kernel(pd_kernel_ctx *ctx)
{
    pd_set_output(ctx, 0, pd_input(ctx, 0));
    if (pd_attr_bool(ctx, 0))
        pd_set_output(ctx, 1, pd_input(ctx, 0));
}

PD_BUILD_OP(rt_opt_out,
    .inputs = {"X"},
    .outputs = {"Out", PD_OPTIONAL("Extra")},
    .attrs = {"extra: bool"},
    .kernel = opt_out_kernel);

/* rt_vec_out: a vector output with no inference; the kernel decides its count (attr n) and
 * sets items; attr `skip` leaves item 1 unset. */
static void vec_out_kernel(pd_kernel_ctx *ctx)
{
    int32_t n = pd_attr_int(ctx, 0);
    pd_set_output_count(ctx, 0, n);
    for (int32_t k = 0; k < n; ++k) {
        if (k == 1 && pd_attr_bool(ctx, 1))
            continue;
        int64_t len = k;
        pd_set_output_at(ctx, 0, k, pd_full(ctx, PD_INT32, pd_place_cpu(), 1, &len, k));
    }
}

PD_BUILD_OP(rt_vec_out,
    .outputs = {PD_VEC("Out")},
    .attrs = {"n: int", "skip: bool"},
    .kernel = vec_out_kernel);

/* --- rt_attrs: every attr type; Out[i] summarizes attr i as a double ------------------------ */

static void attrs_kernel(pd_kernel_ctx *ctx)
{
    int64_t n = 10;
    pd_tensor *out = pd_empty(ctx, PD_FLOAT64, pd_place_cpu(), 1, &n);
    double *o = pd_data(out);
    int32_t c;
    o[0] = pd_attr_bool(ctx, pd_attr_index(ctx, "b"));
    o[1] = pd_attr_int(ctx, 1);
    o[2] = pd_attr_float(ctx, 2);
    o[3] = pd_attr_double(ctx, 3);
    o[4] = (double)pd_attr_int64(ctx, 4);
    o[5] = (double)strlen(pd_attr_string(ctx, 5));
    const int32_t *ints = pd_attr_ints(ctx, 6, &c);
    o[6] = 0;
    for (int32_t k = 0; k < c; ++k)
        o[6] += ints[k];
    const float *floats = pd_attr_floats(ctx, 7, &c);
    o[7] = 0;
    for (int32_t k = 0; k < c; ++k)
        o[7] += floats[k];
    const int64_t *int64s = pd_attr_int64s(ctx, 8, &c);
    o[8] = 0;
    for (int32_t k = 0; k < c; ++k)
        o[8] += (double)int64s[k];
    const char *const *strings = pd_attr_strings(ctx, 9, &c);
    o[9] = 0;
    for (int32_t k = 0; k < c; ++k)
        o[9] += (double)strlen(strings[k]);
    PD_CHECK(strcmp(pd__api->attr(ctx, 4)->name, "i64") == 0, "attrs carry their declared names");
    pd_set_output(ctx, 0, out);
}

PD_BUILD_OP(rt_attrs,
    .outputs = {"Out"},
    .attrs = {"b: bool", "i: int", "f: float", "d: double", "i64: int64_t", "s: std::string",
              "ints: std::vector<int>", "floats: std::vector<float>",
              "int64s: std::vector<int64_t>", "strings: std::vector<std::string>"},
    .kernel = attrs_kernel);

/* --- rt_square: Out = X^2; grad X@GRAD = 2 X Out@GRAD; double grad ------------------------- */

static void square_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    const double *xi = pd_data(x);
    double *o = pd_data(out);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        o[i] = xi[i] * xi[i];
}

static void square_backward(pd_kernel_ctx *ctx)
{
    const double *x = pd_data(pd_input_named(ctx, "X"));
    const double *g = pd_data(pd_input_named(ctx, PD_GRAD("Out")));
    pd_tensor *gx = pd_output(ctx, 0);
    double *o = pd_data(gx);
    for (int64_t i = 0, n = pd_numel(gx); i < n; ++i)
        o[i] = 2 * x[i] * g[i];
}

/* Inputs X, dOut, ddX; outputs dX = 2 ddX dOut and ddOut = 2 X ddX (default inference: dX
 * mirrors X, ddOut mirrors dOut). */
static void square_double_backward(pd_kernel_ctx *ctx)
{
    const double *x = pd_data(pd_input(ctx, 0));
    const double *dout = pd_data(pd_input(ctx, 1));
    const double *ddx = pd_data(pd_input(ctx, 2));
    pd_tensor *dx = pd_output(ctx, 0), *ddout = pd_output(ctx, 1);
    double *a = pd_data(dx), *b = pd_data(ddout);
    for (int64_t i = 0, n = pd_numel(dx); i < n; ++i) {
        a[i] = 2 * ddx[i] * dout[i];
        b[i] = 2 * x[i] * ddx[i];
    }
}

PD_BUILD_OP(rt_square,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = square_forward);

PD_BUILD_GRAD_OP(rt_square,
    .inputs = {"X", PD_GRAD("Out")},
    .outputs = {PD_GRAD("X")},
    .kernel = square_backward);

PD_BUILD_DOUBLE_GRAD_OP(rt_square,
    .inputs = {"X", PD_GRAD("Out"), PD_GRAD(PD_GRAD("X"))},
    .outputs = {PD_GRAD("X"), PD_GRAD(PD_GRAD("Out"))},
    .kernel = square_double_backward);

/* --- rt_mirror: no infer functions, so Out must mirror X; attr `mode` 0 keeps to that, 1 makes
 * a 1-element output, 2 a float32 one. ------------------------------------------------------ */

static void mirror_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t one = 1;
    switch (pd_attr_int(ctx, 0)) {
    case 1: pd_set_output(ctx, 0, pd_zeros(ctx, x->dtype, x->place, 1, &one)); break;
    case 2: pd_set_output(ctx, 0, pd_zeros(ctx, PD_FLOAT32, x->place, x->ndim, x->shape)); break;
    default: pd_set_output(ctx, 0, pd_zeros(ctx, x->dtype, x->place, x->ndim, x->shape)); break;
    }
}

PD_BUILD_OP(rt_mirror,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"mode: int"},
    .kernel = mirror_kernel);
