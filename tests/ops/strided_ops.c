/*
 * strided_ops.c - test ops for runner_strided_test.c: probes that record whether their input
 * reached the kernel contiguous (a dense op, an op that accepts strided inputs, one that
 * accepts them on one input only), an inplace op, op code using views (pd_transpose,
 * pd_slice_step, pd_expand, pd_contiguous), and op code looking up a custom device place.
 */
#include "extension.h"

#include <string.h>

/* Out: X's values in C order; Contig: [1] int32, pd_is_contiguous(X) as the kernel saw it. */
static void probe_infer_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    const int64_t one = 1;
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
    pd_set_output_shape(ctx, 1, 1, &one);
}

static void probe_infer_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, PD_FLOAT32);
    pd_set_output_dtype(ctx, 1, PD_INT32);
}

/* A 2-d float32 tensor's elements in C order, read through the strides the struct carries
 * (x->strides, not pd_stride: the runner must have filled them for strided-accepting ops). */
static void read_2d(const pd_tensor *x, float *out)
{
    const float *base = pd_data(x);
    for (int64_t i = 0; i < x->shape[0]; ++i)
        for (int64_t j = 0; j < x->shape[1]; ++j)
            *out++ = base[i * x->strides[0] + j * x->strides[1]];
}

static void dense_probe_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == PD_FLOAT32 && pd_ndim(x) == 2);
    ((int32_t *)pd_data(pd_output(ctx, 1)))[0] = pd_is_contiguous(x);
    /* Reads pd_data as a dense array, as 0.1 kernels do. */
    memcpy(pd_data(pd_output(ctx, 0)), pd_data(x), pd_nbytes(x));
}

static void strided_probe_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == PD_FLOAT32 && pd_ndim(x) == 2);
    ((int32_t *)pd_data(pd_output(ctx, 1)))[0] = pd_is_contiguous(x);
    read_2d(x, pd_data(pd_output(ctx, 0)));
}

PD_BUILD_OP(st_dense_probe,
    .inputs = {"X"},
    .outputs = {"Out", "Contig"},
    .kernel = dense_probe_kernel,
    .infer_shape = probe_infer_shape,
    .infer_dtype = probe_infer_dtype);

PD_BUILD_OP(st_strided_probe,
    .inputs = {"X"},
    .outputs = {"Out", "Contig"},
    .kernel = strided_probe_kernel,
    .infer_shape = probe_infer_shape,
    .infer_dtype = probe_infer_dtype,
    .flags = PD_OP_STRIDED_INPUTS);

/* Contig: [2] int32, whether A and B reached the kernel contiguous; only B may be strided. */
static void mixed_infer_shape(pd_kernel_ctx *ctx)
{
    const int64_t two = 2;
    pd_set_output_shape(ctx, 0, 1, &two);
}

static void mixed_infer_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_INT32); }

static void mixed_kernel(pd_kernel_ctx *ctx)
{
    int32_t *seen = pd_data(pd_output(ctx, 0));
    seen[0] = pd_is_contiguous(pd_input(ctx, 0));
    seen[1] = pd_is_contiguous(pd_input(ctx, 1));
}

PD_BUILD_OP(st_mixed,
    .inputs = {"A", "B"},
    .outputs = {"Contig"},
    .kernel = mixed_kernel,
    .infer_shape = mixed_infer_shape,
    .infer_dtype = mixed_infer_dtype,
    .strided_inputs = PD_INPUT_BIT(1));

/* X += 1 in place (dense). */
static void add_one_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor *out = pd_output(ctx, 0);
    float *o = pd_data(out);
    for (int64_t i = 0, n = pd_numel(out); i < n; ++i)
        o[i] += 1;
}

PD_BUILD_OP(st_add_one,
    .inputs = {"X"},
    .outputs = {"Out"},
    .inplace = {{"X", "Out"}},
    .kernel = add_one_kernel);

/* Out = X^T made dense in op code; checks pd_contiguous's "itself when dense" rule too. */
static void transpose_infer_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    const int64_t shape[2] = {x->shape[1], x->shape[0]};
    pd_set_output_shape(ctx, 0, 2, shape);
}

static void ctx_transpose_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_contiguous(ctx, x) == x, "pd_contiguous of a dense tensor must be the tensor");
    pd_tensor *t = pd_transpose(ctx, x, 0, -1);
    PD_CHECK(!pd_is_contiguous(t) && t->strides[0] == 1 && t->strides[1] == x->shape[1]);
    pd_tensor *c = pd_contiguous(ctx, t);
    PD_CHECK(c != t && pd_is_contiguous(c));
    pd_set_output(ctx, 0, c);
}

PD_BUILD_OP(st_ctx_transpose,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = ctx_transpose_kernel,
    .infer_shape = transpose_infer_shape);

/* Out[i, j] = X[n-1-i] broadcast along j (X is 1-d of n, Out is [n, 3]): pd_slice_step with a
 * negative step, then pd_expand, then pd_contiguous. */
static void reverse_expand_infer_shape(pd_kernel_ctx *ctx)
{
    const int64_t shape[2] = {pd_input(ctx, 0)->shape[0], 3};
    pd_set_output_shape(ctx, 0, 2, shape);
}

static void reverse_expand_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t n = x->shape[0];
    pd_tensor *rev = pd_slice_step(ctx, x, 0, n - 1, -1, -1);
    const int64_t col[2] = {n, 1}, wide[2] = {n, 3};
    pd_tensor *grid = pd_expand(ctx, pd_reshape(ctx, rev, 2, col), 2, wide);
    PD_CHECK(grid->strides[1] == 0 && grid->strides[0] == -1);
    pd_set_output(ctx, 0, pd_contiguous(ctx, grid));
}

PD_BUILD_OP(st_reverse_expand,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = reverse_expand_kernel,
    .infer_shape = reverse_expand_infer_shape);

/* Out: [1] int32, the type number of pd_place_custom("st_npu", 0) in op code; the kernel
 * checks that pd_place_type_name gives the name back. */
static void place_infer_shape(pd_kernel_ctx *ctx)
{
    const int64_t one = 1;
    pd_set_output_shape(ctx, 0, 1, &one);
}

static void place_infer_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_INT32); }

static void custom_place_kernel(pd_kernel_ctx *ctx)
{
    pd_place p = pd_place_custom("st_npu", 0);
    PD_CHECK(strcmp(pd_place_type_name(&p), "st_npu") == 0, "type name is %s",
             pd_place_type_name(&p));
    ((int32_t *)pd_data(pd_output(ctx, 0)))[0] = p.type;
}

PD_BUILD_OP(st_custom_place,
    .inputs = {"X"},
    .outputs = {"Type"},
    .kernel = custom_place_kernel,
    .infer_shape = place_infer_shape,
    .infer_dtype = place_infer_dtype);

/* Out = pd_contiguous(pd_transpose(X, a, b)) with the axes as attrs: bad axes must fail. */
static void transpose_axes_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *t = pd_transpose(ctx, x, pd_attr_int(ctx, 0), pd_attr_int(ctx, 1));
    pd_set_output(ctx, 0, pd_contiguous(ctx, t));
}

PD_BUILD_OP(st_transpose_axes,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"a: int", "b: int"},
    .kernel = transpose_axes_kernel,
    .infer_shape = transpose_infer_shape);
