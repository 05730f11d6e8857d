/*
 * py_ops.c - ops that the Python front's tests call: an inplace op, every attr type echoed
 * back, two named outputs, an optional input, and an output that is its input (an alias the
 * front must copy because inputs are borrowed), and a kernel that waits for another Python
 * thread (the GIL is released while kernels run).
 */
#define _POSIX_C_SOURCE 200809L
#include "extension.h"

#include <string.h>
#include <time.h>

/* py_inplace: X doubled in place (float64); Out is X. */
static void inplace_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor *out = pd_output(ctx, 0);
    double *o = pd_data(out);
    for (int64_t i = 0, n = pd_numel(out); i < n; ++i)
        o[i] *= 2;
}

PD_BUILD_OP(py_inplace,
    .inputs = {"X"},
    .outputs = {"Out"},
    .inplace = {{"X", "Out"}},
    .kernel = inplace_kernel);

/* py_attrs: Out (float64, 10 values) = b, i, f, d, i64, strlen(s), sum(ints), sum(floats),
 * sum(int64s), the number of strings plus the length of the first. X is unused. */
static void attrs_kernel(pd_kernel_ctx *ctx)
{
    int64_t ten = 10;
    pd_tensor *out = pd_empty(ctx, PD_FLOAT64, pd_place_cpu(), 1, &ten);
    double *o = pd_data(out);
    int32_t n = 0;
    o[0] = pd_attr_bool(ctx, 0);
    o[1] = pd_attr_int(ctx, 1);
    o[2] = pd_attr_float(ctx, 2);
    o[3] = pd_attr_double(ctx, 3);
    o[4] = (double)pd_attr_int64(ctx, 4);
    o[5] = (double)strlen(pd_attr_string(ctx, 5));
    const int32_t *ints = pd_attr_ints(ctx, 6, &n);
    o[6] = 0;
    for (int32_t k = 0; k < n; ++k)
        o[6] += ints[k];
    const float *floats = pd_attr_floats(ctx, 7, &n);
    o[7] = 0;
    for (int32_t k = 0; k < n; ++k)
        o[7] += floats[k];
    const int64_t *i64s = pd_attr_int64s(ctx, 8, &n);
    o[8] = 0;
    for (int32_t k = 0; k < n; ++k)
        o[8] += (double)i64s[k];
    const char *const *strings = pd_attr_strings(ctx, 9, &n);
    o[9] = n + (n > 0 ? (double)strlen(strings[0]) : 0);
    pd_set_output(ctx, 0, out);
}

static void attrs_infer_shape(pd_kernel_ctx *ctx)
{
    int64_t ten = 10;
    pd_set_output_shape(ctx, 0, 1, &ten);
}

static void attrs_infer_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_FLOAT64); }

PD_BUILD_OP(py_attrs,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"b: bool", "i: int = 7", "f: float = 0.5", "d: double = -2.25", "i64: int64_t",
              "s: std::string = \"abc\"", "ints: std::vector<int> = {1, 2}",
              "floats: std::vector<float> = {0.5}", "i64s: std::vector<int64_t> = {}",
              "strs: std::vector<std::string> = {}"},
    .kernel = attrs_kernel,
    .infer_shape = attrs_infer_shape,
    .infer_dtype = attrs_infer_dtype);

/* py_pair: Sum = A + B, Diff = A - B (float64). */
static void pair_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *a = pd_input(ctx, 0), *b = pd_input(ctx, 1);
    PD_CHECK(pd_same_shape(a, b), "A and B must have the same shape.");
    PD_CHECK(pd_dtype(a) == PD_FLOAT64 && pd_dtype(b) == PD_FLOAT64, "A and B must be float64.");
    pd_tensor *sum = pd_empty_like(ctx, a), *diff = pd_empty_like(ctx, a);
    const double *x = pd_data(a), *y = pd_data(b);
    double *s = pd_data(sum), *d = pd_data(diff);
    for (int64_t i = 0, n = pd_numel(a); i < n; ++i) {
        s[i] = x[i] + y[i];
        d[i] = x[i] - y[i];
    }
    pd_set_output(ctx, 0, sum);
    pd_set_output(ctx, 1, diff);
}

PD_BUILD_OP(py_pair,
    .inputs = {"A", "B"},
    .outputs = {"Sum", "Diff"},
    .kernel = pair_kernel);

/* py_opt: Out = X + Y, or X + 100 when Y is absent (float64). */
static void opt_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *y = pd_input(ctx, 1);
    pd_tensor *out = pd_empty_like(ctx, x);
    const double *a = pd_data(x);
    double *o = pd_data(out);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        o[i] = a[i] + (y ? ((const double *)pd_data(y))[i] : 100.0);
    pd_set_output(ctx, 0, out);
}

PD_BUILD_OP(py_opt,
    .inputs = {"X", PD_OPTIONAL("Y")},
    .outputs = {"Out"},
    .kernel = opt_kernel);

/* py_alias: Out is X itself (no copy by the op). */
static void alias_kernel(pd_kernel_ctx *ctx) { pd_set_output(ctx, 0, pd_input(ctx, 0)); }

PD_BUILD_OP(py_alias,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = alias_kernel);

/* py_split: X (float64, 1-D) cut into `parts` equal pieces: more outputs than inputs. */
static void split_infer_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int32_t parts = pd_attr_int(ctx, 0);
    PD_CHECK(parts > 0 && pd_numel(x) % parts == 0, "parts must divide %lld.",
             (long long)pd_numel(x));
    pd_set_output_count(ctx, 0, parts);
    int64_t n = pd_numel(x) / parts;
    for (int32_t k = 0; k < parts; ++k)
        pd_set_output_shape_at(ctx, 0, k, 1, &n);
}

static void split_infer_dtype(pd_kernel_ctx *ctx)
{
    for (int32_t k = 0, parts = pd_attr_int(ctx, 0); k < parts; ++k)
        pd_set_output_dtype_at(ctx, 0, k, PD_FLOAT64);
}

static void split_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int32_t parts = pd_attr_int(ctx, 0);
    int64_t n = pd_numel(x) / parts;
    for (int32_t k = 0; k < parts; ++k) {
        pd_tensor *o = pd_empty(ctx, PD_FLOAT64, pd_place_cpu(), 1, &n);
        memcpy(pd_data(o), (const double *)pd_data(x) + k * n, (size_t)n * sizeof(double));
        pd_set_output_at(ctx, 0, k, o);
    }
}

PD_BUILD_OP(py_split,
    .inputs = {"X"},
    .outputs = {PD_VEC("Out")},
    .attrs = {"parts: int"},
    .kernel = split_kernel,
    .infer_shape = split_infer_shape,
    .infer_dtype = split_infer_dtype);

/* py_wait: X (int64 [2], written in place) says "started" (X[1] = 1), then waits up to 10 s for
 * another thread to set X[0]; X[1] becomes 2 when it saw it, 3 when it gave up. */
static void wait_kernel(pd_kernel_ctx *ctx)
{
    volatile int64_t *x = pd_data(pd_output(ctx, 0));
    PD_CHECK(pd_numel(pd_output(ctx, 0)) == 2, "py_wait takes 2 elements");
    x[1] = 1;
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 10000 && x[0] == 0; ++i)
        nanosleep(&ms, NULL);
    x[1] = x[0] != 0 ? 2 : 3;
}

PD_BUILD_OP(py_wait,
    .inputs = {"X"},
    .outputs = {"Out"},
    .inplace = {{"X", "Out"}},
    .flags = PD_OP_MAY_BLOCK, /* it waits for another thread: never with the GIL held */
    .kernel = wait_kernel);
