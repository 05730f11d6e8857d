/*
 * exec_ops.c - test ops for executor_test.c (and the synchronous runner's workspace tests):
 * float32 ops whose results tell the order they ran in, a kernel that fails on demand, a
 * split whose output count comes from input data, an inplace op, ops with a workspace, an op
 * that gives its output with pd_set_output, one whose output inference cannot describe, and
 * a slow op to keep work in flight, and one slow only off the host's thread (a worker that
 * waits for a core).
 */
#include "extension.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Out = X * a + b: a chain of these with different (a, b) gives a result that depends on
 * the order the calls ran in. */
static void affine_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == PD_FLOAT32 && pd_is_cpu(x), "x must be a float32 CPU tensor");
    float a = pd_attr_float(ctx, 0), b = pd_attr_float(ctx, 1);
    const float *in = pd_data(x);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = in[i] * a + b;
}
PD_BUILD_OP(ex_affine, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"a: float", "b: float"},
            .kernel = affine_kernel);

/* Out = X + Y. */
static void add_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *y = pd_input(ctx, 1);
    PD_CHECK(pd_same_shape(x, y), "x and y must have one shape");
    const float *a = pd_data(x), *b = pd_data(y);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = a[i] + b[i];
}
/* Out is shaped and typed like X (the default inference mirrors only one-input ops). */
static void like_x_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
}
static void like_x_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, pd_input(ctx, 0)->dtype);
}
PD_BUILD_OP(ex_add, .inputs = {"X", "Y"}, .outputs = {"Out"}, .kernel = add_kernel,
            .infer_shape = like_x_shape, .infer_dtype = like_x_dtype);

/* Out = X, but the kernel fails when X[0] is negative, naming the value. */
static void fail_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    const float *in = pd_data(x);
    PD_CHECK(in[0] >= 0, "boom: x[0] is %g", (double)in[0]);
    memcpy(pd_data(pd_output(ctx, 0)), in, pd_nbytes(x));
}
PD_BUILD_OP(ex_fail_if_negative, .inputs = {"X"}, .outputs = {"Out"}, .kernel = fail_kernel);

/* Splits X into X[0] (a count read from the data, in infer_shape) pieces of one element
 * each, holding 0, 1, 2, ... */
static void split_infer(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int32_t n = (int32_t)((const float *)pd_data(x))[0];
    PD_CHECK(n >= 0 && n <= 64, "the count %d is out of range", (int)n);
    pd_set_output_count(ctx, 0, n);
    const int64_t one = 1;
    for (int32_t k = 0; k < n; ++k) {
        pd_set_output_shape_at(ctx, 0, k, 1, &one);
        pd_set_output_dtype_at(ctx, 0, k, PD_FLOAT32);
    }
}
static void split_kernel(pd_kernel_ctx *ctx)
{
    for (int32_t k = 0, n = pd_output_count(ctx, 0); k < n; ++k)
        ((float *)pd_data(pd_output_at(ctx, 0, k)))[0] = (float)k;
}
PD_BUILD_OP(ex_split_by_value, .inputs = {"X"}, .outputs = {PD_VEC("Out")},
            .infer_shape = split_infer, .kernel = split_kernel);

/* X += 1, in place. */
static void inplace_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor *x = pd_output(ctx, 0);
    float *p = pd_data(x);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        p[i] += 1;
}
PD_BUILD_OP(ex_add1_, .inputs = {"X"}, .outputs = {"Out"}, .inplace = {{"X", "Out"}},
            .kernel = inplace_kernel);

/* Out = 2 * X through a workspace of attr `bytes` bytes (-1: numel * 4, what it needs). */
static int64_t ws_size(pd_kernel_ctx *ctx)
{
    int64_t bytes = pd_attr_int64(ctx, 0);
    return bytes == -1 ? pd_numel(pd_input(ctx, 0)) * 4 : bytes;
}
static void ws_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    float *ws = pd_workspace(ctx);
    int64_t n = pd_numel(x);
    PD_CHECK(n == 0 || ws != NULL, "the workspace is there");
    PD_CHECK(((uintptr_t)ws & 63) == 0, "the workspace is 64-byte aligned");
    PD_CHECK(pd_workspace(ctx) == ws, "one workspace per call");
    const float *in = pd_data(x);
    for (int64_t i = 0; i < n; ++i)
        ws[i] = in[i] * 2;
    memcpy(pd_data(pd_output(ctx, 0)), ws, (size_t)n * 4);
}
PD_BUILD_OP(ex_workspace, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"bytes: int64 = -1"},
            .kernel = ws_kernel, .workspace = ws_size);

/* Asks for pd_workspace without declaring a workspace function. */
static void no_ws_kernel(pd_kernel_ctx *ctx)
{
    pd_workspace(ctx);
    pd_set_output(ctx, 0, pd_input(ctx, 0));
}
PD_BUILD_OP(ex_no_workspace, .inputs = {"X"}, .outputs = {"Out"}, .kernel = no_ws_kernel);

/* Out = X + 2, made by the kernel itself and given with pd_set_output. */
static void setout_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *t = pd_empty_like(ctx, x);
    const float *in = pd_data(x);
    float *out = pd_data(t);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = in[i] + 2;
    pd_set_output(ctx, 0, t);
}
PD_BUILD_OP(ex_set_output, .inputs = {"X"}, .outputs = {"Out"}, .kernel = setout_kernel);

/* Out = X repeated twice: its infer_shape says nothing, so only the kernel knows the shape. */
static void twice_infer(pd_kernel_ctx *ctx) { (void)ctx; }
static void twice_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t n = pd_numel(x), shape = 2 * n;
    pd_tensor *t = pd_empty(ctx, PD_FLOAT32, x->place, 1, &shape);
    memcpy(pd_data(t), pd_data(x), (size_t)n * 4);
    memcpy((float *)pd_data(t) + n, pd_data(x), (size_t)n * 4);
    pd_set_output(ctx, 0, t);
}
PD_BUILD_OP(ex_twice, .inputs = {"X"}, .outputs = {"Out"}, .infer_shape = twice_infer,
            .kernel = twice_kernel);

/* Out = X + 1 after sleeping `us` microseconds: keeps work in flight. */
static void slow_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t us = pd_attr_int64(ctx, 0);
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
    const float *in = pd_data(x);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = in[i] + 1;
}
PD_BUILD_OP(ex_slow_add1, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"us: int64"},
            .kernel = slow_kernel);

/* Out = X; attr `tag` (a string) must read "tag-<n>" where n = X[0]: proves the attr was
 * copied at submission. */
static void tag_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    const char *tag = pd_attr_string(ctx, 0);
    char want[32];
    snprintf(want, sizeof want, "tag-%d", (int)((const float *)pd_data(x))[0]);
    PD_CHECK(strcmp(tag, want) == 0, "tag is '%s', expected '%s'", tag, want);
    memcpy(pd_data(pd_output(ctx, 0)), pd_data(x), pd_nbytes(x));
}
PD_BUILD_OP(ex_tagged, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"tag: std::string"},
            .kernel = tag_kernel);

/* Out = X + 1 once the host opens the gate: G (an int32 CPU tensor) holds 1. Lets a test
 * hold a call in flight for as long as it needs, without timing. */
static void gate_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *g = pd_input(ctx, 1);
    int32_t *flag = pd_data(g);
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    const float *in = pd_data(x);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = in[i] + 1;
}
PD_BUILD_OP(ex_gated_add1, .inputs = {"X", "G"}, .outputs = {"Out"}, .kernel = gate_kernel,
            .infer_shape = like_x_shape, .infer_dtype = like_x_dtype,
            .flags = PD_OP_MAY_BLOCK); /* it waits for the test's thread: never run inline */

/* Out = X + 1, after sleeping attr `us` microseconds when whether the call runs on the thread
 * attr `home` (a pthread_t, 0 for none) is `sleep_on_home`. */
static void add1_sleeping(pd_kernel_ctx *ctx, bool sleep_on_home)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t us = pd_attr_int64(ctx, 0), home = pd_attr_int64(ctx, 1);
    bool on_home = home != 0 && pthread_equal((pthread_t)home, pthread_self());
    if (on_home == sleep_on_home) {
        struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    const float *in = pd_data(x);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = in[i] + 1;
}

/* Sleeps unless it runs on `home`: the cost of a worker that waits for a core while the host's
 * own thread runs (executor_test.c's trials of where calls run). */
static void lagged_kernel(pd_kernel_ctx *ctx) { add1_sleeping(ctx, false); }
PD_BUILD_OP(ex_lagged_add1, .inputs = {"X"}, .outputs = {"Out"},
            .attrs = {"us: int64", "home: int64"}, .kernel = lagged_kernel);

/* Sleeps only on `home`: a call that a worker runs at once and that the host's own thread pays
 * for (a hand-over that pays by a factor no load on the cores can hide). */
static void home_slow_kernel(pd_kernel_ctx *ctx) { add1_sleeping(ctx, true); }
PD_BUILD_OP(ex_home_slow_add1, .inputs = {"X"}, .outputs = {"Out"},
            .attrs = {"us: int64", "home: int64"}, .kernel = home_slow_kernel);
