/*
 * errors_ops.c - test ops for errors_test.c: every way op code ends a call. PD_CHECK with and
 * without a message, PD_THROW with none, throws from deep helpers and from infer functions
 * after allocating, and each misuse of a table function.
 *
 * A comment "@line:<tag>" marks the line each throw comes from; the test reads this file to
 * find it, so lines may move freely.
 */
#include "extension.h"

#include <stdint.h>
#include <string.h>

static void check_nomsg(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_numel(x) < 0); /* @line:check_nomsg */
}

static void check_msg(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int nd = (int)pd_ndim(x);
    PD_CHECK(nd == 3, "x has %d dims, wanted %s (%.1f%%)", nd, "three", 12.5); /* @line:check_msg */
}

static void throw_empty(pd_kernel_ctx *ctx)
{
    (void)ctx;
    PD_THROW(); /* @line:throw_empty */
}

static void throw_spaces(pd_kernel_ctx *ctx)
{
    (void)ctx;
    PD_THROW("   \t%s", "leading white space is dropped"); /* @line:throw_spaces */
}

/* Allocates a little at every level, then throws from the bottom. */
static void helper(pd_kernel_ctx *ctx, int depth)
{
    int64_t shape[2] = {depth + 1, 3};
    pd_tensor *t = pd_full(ctx, PD_FLOAT32, pd_place_cpu(), 2, shape, depth);
    memset(pd_scratch(ctx, 100 + (size_t)depth), 0, 100);
    pd_tensor *view = pd_slice(ctx, t, 0, 1);
    PD_CHECK(view->shape[0] == 1);
    if (depth > 0)
        helper(ctx, depth - 1);
    else if (depth == 0)
        PD_THROW("deep failure at depth %d", depth); /* @line:deep */
}

static void deep(pd_kernel_ctx *ctx)
{
    pd_output(ctx, 0);          /* an output made before the failure is freed too */
    for (int i = 0; i < 6; ++i) /* more tensors than the context keeps inline */
        pd_empty_like(ctx, pd_input(ctx, 0));
    helper(ctx, 5);
}

static void noop_kernel(pd_kernel_ctx *ctx) { pd_output(ctx, 0); }

static void infer_shape_throws(pd_kernel_ctx *ctx)
{
    int64_t n = 4;
    pd_empty(ctx, PD_FLOAT64, pd_place_cpu(), 1, &n);
    int rank = (int)pd_ndim(pd_input(ctx, 0));
    PD_CHECK(rank > 5, "infer_shape refuses rank %d", rank); /* @line:infer_shape */
}

static void infer_dtype_throws(pd_kernel_ctx *ctx)
{
    pd_scratch(ctx, 64);
    const char *dtype = pd_dtype_name(pd_dtype(pd_input(ctx, 0)));
    PD_THROW("infer_dtype refuses %s", dtype); /* @line:infer_dtype */
}

static void output_in_infer(pd_kernel_ctx *ctx) { pd_output(ctx, 0); }

static void set_output_in_infer(pd_kernel_ctx *ctx) { pd_set_output(ctx, 0, pd_input(ctx, 0)); }

PD_BUILD_OP(err_check_nomsg, .inputs = {"X"}, .outputs = {"Out"}, .kernel = check_nomsg);
PD_BUILD_OP(err_check_msg, .inputs = {"X"}, .outputs = {"Out"}, .kernel = check_msg);
PD_BUILD_OP(err_throw_empty, .inputs = {"X"}, .outputs = {"Out"}, .kernel = throw_empty);
PD_BUILD_OP(err_throw_spaces, .inputs = {"X"}, .outputs = {"Out"}, .kernel = throw_spaces);
PD_BUILD_OP(err_deep, .inputs = {"X"}, .outputs = {"Out"}, .kernel = deep);
PD_BUILD_OP(err_infer_shape, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop_kernel,
            .infer_shape = infer_shape_throws);
PD_BUILD_OP(err_infer_dtype, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop_kernel,
            .infer_dtype = infer_dtype_throws);
PD_BUILD_OP(err_output_in_infer, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop_kernel,
            .infer_shape = output_in_infer);
PD_BUILD_OP(err_set_output_in_infer, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop_kernel,
            .infer_dtype = set_output_in_infer);

/* --- err_misuse: attr `what` picks one misuse of a table function -------------------------- */

static void misuse(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t bad_shape[2] = {2, -3};
    int64_t shape[1] = {4};
    pd_output(ctx, 0); /* made first, so each failure below also has an output to free */
    switch (pd_attr_int(ctx, 0)) {
    case 0: pd_input(ctx, 5); break;
    case 1: pd_output(ctx, 3); break;
    case 2: pd__api->attr(ctx, 9); break;
    case 3: pd_empty(ctx, PD_FLOAT32, pd_place_cpu(), 2, bad_shape); break;
    case 4: pd_scratch(ctx, SIZE_MAX - 8); break;
    case 5: pd_attr_int(ctx, 1); break; /* declared int64_t */
    case 6: {
        pd_tensor undefined = PD_TENSOR_UNDEFINED;
        pd_set_output(ctx, 0, &undefined);
        break;
    }
    case 7: pd_output_at(ctx, 0, 4); break;
    case 8: pd_input_named(ctx, "Nope"); break;
    case 9: pd_set_output_count(ctx, 0, 2); break;
    case 10: pd_empty(ctx, PD_FLOAT32, pd_place_gpu(0), 1, shape); break;
    case 11: pd_full(ctx, (pd_data_type)99, pd_place_cpu(), 1, shape, 1.0); break;
    case 12: pd_slice(ctx, x, 0, 1000); break;
    case 13: pd_reshape(ctx, x, 1, (int64_t[]){7}); break;
    case 14: pd_attr_index(ctx, "missing"); break;
    case 15: pd_set_output_shape(ctx, 0, 1, (int64_t[]){-1}); break;
    case 16: pd_set_output_dtype(ctx, 0, PD_UNDEFINED); break;
    case 17: pd_input_count(ctx, -1); break;
    case 18: pd_empty(ctx, PD_FLOAT32, pd_place_cpu(), PD_MAX_DIMS + 1, shape); break;
    default: break;
    }
}

PD_BUILD_OP(err_misuse,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"what: int", "n: int64_t"},
    .kernel = misuse);
