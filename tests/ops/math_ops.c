/*
 * math_ops.c - test ops for math_test.c: thin ops over each tensor function of pd_math.h
 * (binary, binary with a scalar, matmul, sum, fill; the operator and options are attrs), and
 * ops that compose them as op code would: a linear layer and its gradient, and x + x^T over
 * a transposed view. Every op accepts strided inputs as they are.
 */
#include "extension.h"

/* Infer functions that leave the outputs to the kernel (the runner's default inference would
 * otherwise make a one-input op's output mirror its input). */
static void kernel_decides(pd_kernel_ctx *ctx) { (void)ctx; }

/* Out = op(A, B); attr op is a pd_binary_op. */
static void binary_kernel(pd_kernel_ctx *ctx)
{
    pd_set_output(ctx, 0,
                  pd_binary(ctx, (pd_binary_op)pd_attr_int(ctx, 0), pd_input(ctx, 0),
                            pd_input(ctx, 1)));
}

PD_BUILD_OP(mt_binary,
    .inputs = {"A", "B"},
    .outputs = {"Out"},
    .attrs = {"op: int"},
    .kernel = binary_kernel,
    .flags = PD_OP_STRIDED_INPUTS);

/* Out = op(A, value), or op(value, A) with `first`. */
static void binary_scalar_kernel(pd_kernel_ctx *ctx)
{
    pd_set_output(ctx, 0,
                  pd_binary_scalar(ctx, (pd_binary_op)pd_attr_int(ctx, 0), pd_input(ctx, 0),
                                   pd_attr_double(ctx, 1), pd_attr_bool(ctx, 2)));
}

PD_BUILD_OP(mt_binary_scalar,
    .inputs = {"A"},
    .outputs = {"Out"},
    .attrs = {"op: int", "value: double", "first: bool"},
    .kernel = binary_scalar_kernel,
    .flags = PD_OP_STRIDED_INPUTS,
    .infer_shape = kernel_decides,
    .infer_dtype = kernel_decides);

/* Out = A @ B with the transpose flags ta, tb. */
static void matmul_kernel(pd_kernel_ctx *ctx)
{
    pd_set_output(ctx, 0,
                  pd_matmul_t(ctx, pd_input(ctx, 0), pd_input(ctx, 1), pd_attr_bool(ctx, 0),
                              pd_attr_bool(ctx, 1)));
}

PD_BUILD_OP(mt_matmul,
    .inputs = {"A", "B"},
    .outputs = {"Out"},
    .attrs = {"ta: bool", "tb: bool"},
    .kernel = matmul_kernel,
    .flags = PD_OP_STRIDED_INPUTS);

/* Out = the sum of X over `axes` (none: all), keepdim, into dtype (0: the default). */
static void sum_kernel(pd_kernel_ctx *ctx)
{
    int32_t naxes = 0;
    const int64_t *axes = pd_attr_int64s(ctx, 0, &naxes);
    pd_set_output(ctx, 0,
                  pd_sum_axes(ctx, pd_input(ctx, 0), naxes, axes, pd_attr_bool(ctx, 1),
                              (pd_data_type)pd_attr_int(ctx, 2)));
}

PD_BUILD_OP(mt_sum,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"axes: std::vector<int64_t>", "keepdim: bool", "dtype: int"},
    .kernel = sum_kernel,
    .flags = PD_OP_STRIDED_INPUTS,
    .infer_shape = kernel_decides,
    .infer_dtype = kernel_decides);

/* Out = pd_sum(X, axis, false) through the one-axis form (attr axis; PD_ALL_AXES: all). */
static void sum_axis_kernel(pd_kernel_ctx *ctx)
{
    pd_set_output(ctx, 0, pd_sum(ctx, pd_input(ctx, 0), pd_attr_int(ctx, 0), false));
}

PD_BUILD_OP(mt_sum_axis,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"axis: int"},
    .kernel = sum_axis_kernel,
    .infer_shape = kernel_decides,
    .infer_dtype = kernel_decides);

/* Out = a copy of X whose every other column (a strided view) is set to `value`. */
static void fill_columns_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor *out = pd_cast(ctx, pd_input(ctx, 0), pd_dtype(pd_input(ctx, 0)));
    pd_fill(ctx, pd_slice_step(ctx, out, 1, 0, pd_dim(out, 1), 2), pd_attr_double(ctx, 0));
    pd_set_output(ctx, 0, out);
}

PD_BUILD_OP(mt_fill_columns,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"value: double"},
    .kernel = fill_columns_kernel,
    .infer_shape = kernel_decides,
    .infer_dtype = kernel_decides);

/* Out = X @ W + Bias (Bias [n] broadcast over the rows): a linear layer composed in C. */
static void linear_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *w = pd_input(ctx, 1), *bias = pd_input(ctx, 2);
    pd_set_output(ctx, 0, pd_add(ctx, pd_matmul(ctx, x, w), bias));
}

/* Its gradient: dX = G @ W^T, dW = X^T @ G, dBias = the column sums of G. */
static void linear_grad_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *w = pd_input(ctx, 1), *g = pd_input(ctx, 2);
    pd_set_output(ctx, 0, pd_matmul_t(ctx, g, w, false, true));
    pd_set_output(ctx, 1, pd_matmul_t(ctx, x, g, true, false));
    pd_set_output(ctx, 2, pd_sum(ctx, g, 0, false));
}

PD_BUILD_OP(mt_linear,
    .inputs = {"X", "W", "Bias"},
    .outputs = {"Out"},
    .kernel = linear_kernel);

PD_BUILD_OP(mt_linear_grad,
    .inputs = {"X", "W", "G"},
    .outputs = {"DX", "DW", "DBias"},
    .kernel = linear_grad_kernel);

/* Out = (X + X^T) * 0.5 for a square X, the transpose a strided view. */
static void symmetric_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *sum = pd_add(ctx, x, pd_transpose(ctx, x, 0, 1));
    pd_set_output(ctx, 0, pd_multiply_scalar(ctx, sum, 0.5));
}

PD_BUILD_OP(mt_symmetric,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = symmetric_kernel,
    .infer_shape = kernel_decides,
    .infer_dtype = kernel_decides);

/* Out = pd_add(X, NULL): a missing operand. */
static void null_operand_kernel(pd_kernel_ctx *ctx)
{
    pd_set_output(ctx, 0, pd_add(ctx, pd_input(ctx, 0), NULL));
}

PD_BUILD_OP(mt_null_operand,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = null_operand_kernel,
    .infer_shape = kernel_decides,
    .infer_dtype = kernel_decides);

/* pd_add over a view the kernel made by hand that reaches past A's storage (twice its rows):
 * the tensor functions must refuse it, not read past the memory. */
static void past_storage_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor wide = *pd_input(ctx, 0);
    wide.shape[0] *= 2;
    pd_set_output(ctx, 0, pd_add(ctx, &wide, &wide));
}

PD_BUILD_OP(mt_past_storage,
    .inputs = {"A"},
    .outputs = {"Out"},
    .kernel = past_storage_kernel,
    .infer_shape = kernel_decides,
    .infer_dtype = kernel_decides);
