/*
 * concat.c - the reference multi-input op: custom_concat joins a vector of tensors X along
 * the int64_t attr `axis` (negative counts from the end), and its grad op splits Out@GRAD back
 * into one gradient per input.
 *
 * By hand (README.md): cc -O3 -shared -fPIC -I<prefix>/include/pdext concat.c -o libconcat.so
 *
 * Concatenation only moves bytes, so one byte-copy kernel serves every dtype. In row-major
 * order, everything from `axis` inward is one contiguous block per outer index: for each outer
 * index the output row is the inputs' blocks one after another, and each is one memcpy.
 */
#include "extension.h"

#include <string.h>

/* `axis` in [0, ndim), or an error naming the attr and the allowed range. */
static int32_t normalized_axis(int64_t axis, int32_t ndim)
{
    PD_CHECK(ndim > 0, "inputs must have at least one dimension, got a scalar.");
    PD_CHECK(axis >= -ndim && axis < ndim,
             "attr 'axis' is %lld, but it must be in [%d, %d) for rank-%d inputs.", (long long)axis,
             -ndim, ndim, ndim);
    return (int32_t)(axis < 0 ? axis + ndim : axis);
}

/* Product of shape[from..ndim-1]. */
static int64_t numel_from(const pd_tensor *t, int32_t from)
{
    int64_t n = 1;
    for (int32_t d = from; d < t->ndim; ++d)
        n *= t->shape[d];
    return n;
}

/* Product of shape[0..axis-1]. */
static int64_t numel_before(const pd_tensor *t, int32_t axis)
{
    int64_t n = 1;
    for (int32_t d = 0; d < axis; ++d)
        n *= t->shape[d];
    return n;
}

/* Every X[k] has X[0]'s rank and, except along `axis`, its dims; returns the summed size
 * along `axis`. */
static int64_t checked_axis_size(pd_kernel_ctx *ctx, int32_t axis)
{
    const pd_tensor *x0 = pd_input_at(ctx, 0, 0);
    int64_t total = 0;
    for (int32_t k = 0, n = pd_input_count(ctx, 0); k < n; ++k) {
        const pd_tensor *xk = pd_input_at(ctx, 0, k);
        PD_CHECK(xk->ndim == x0->ndim, "input X[%d] has rank %d, but X[0] has rank %d.", k,
                 xk->ndim, x0->ndim);
        for (int32_t d = 0; d < x0->ndim; ++d)
            PD_CHECK(d == axis || xk->shape[d] == x0->shape[d],
                     "input X[%d] has size %lld in dim %d, but X[0] has %lld; only dim %d "
                     "(the axis) may differ.",
                     k, (long long)xk->shape[d], d, (long long)x0->shape[d], axis);
        total += xk->shape[axis];
    }
    return total;
}

static void concat_infer_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x0 = pd_input_at(ctx, 0, 0);
    int32_t axis = normalized_axis(pd_attr_int64(ctx, 0), x0->ndim);
    int64_t shape[PD_MAX_DIMS];
    memcpy(shape, x0->shape, sizeof shape);
    shape[axis] = checked_axis_size(ctx, axis);
    pd_set_output_shape(ctx, 0, x0->ndim, shape);
}

static void concat_infer_dtype(pd_kernel_ctx *ctx)
{
    pd_data_type t = pd_dtype(pd_input_at(ctx, 0, 0));
    for (int32_t k = 1, n = pd_input_count(ctx, 0); k < n; ++k)
        PD_CHECK(pd_dtype(pd_input_at(ctx, 0, k)) == t,
                 "input X[%d] is %s, but X[0] is %s; all inputs must have the same dtype.", k,
                 pd_dtype_name(pd_dtype(pd_input_at(ctx, 0, k))), pd_dtype_name(t));
    pd_set_output_dtype(ctx, 0, t);
}

/* Copies between the whole tensor `joined` and its parts along `axis`: parts -> joined when
 * `join`, joined -> parts otherwise. */
static void copy_blocks(pd_tensor *const *parts, int32_t n, pd_tensor *joined, int32_t axis,
                        int join)
{
    size_t elem = pd_dtype_size(pd_dtype(joined));
    int64_t outer = numel_before(joined, axis);
    size_t row = (size_t)numel_from(joined, axis) * elem;
    size_t offset = 0;
    for (int32_t k = 0; k < n; ++k) {
        size_t block = (size_t)numel_from(parts[k], axis) * elem;
        char *whole = (char *)pd_data(joined) + offset;
        char *part = (char *)pd_data(parts[k]);
        if (block > 0) {
            for (int64_t o = 0; o < outer; ++o) {
                if (join)
                    memcpy(whole + (size_t)o * row, part + (size_t)o * block, block);
                else
                    memcpy(part + (size_t)o * block, whole + (size_t)o * row, block);
            }
        }
        offset += block;
    }
}

static void concat_forward(pd_kernel_ctx *ctx)
{
    int32_t n = pd_input_count(ctx, 0);
    const pd_tensor *x0 = pd_input_at(ctx, 0, 0);
    int32_t axis = normalized_axis(pd_attr_int64(ctx, 0), x0->ndim);
    pd_tensor *parts[64];
    pd_tensor **p = n <= 64 ? parts
                            : (pd_tensor **)pd_scratch(ctx, sizeof(pd_tensor *) * (size_t)n);
    for (int32_t k = 0; k < n; ++k) {
        p[k] = (pd_tensor *)pd_input_at(ctx, 0, k);
        PD_CHECK(pd_is_cpu(p[k]), "input X[%d] must be a CPU Tensor.", k);
    }
    copy_blocks(p, n, pd_output(ctx, 0), axis, 1); /* output made from the inferred shape */
}

static void concat_backward(pd_kernel_ctx *ctx)
{
    int32_t n = pd_input_count(ctx, 0);
    const pd_tensor *x0 = pd_input_at(ctx, 0, 0);
    const pd_tensor *grad_out = pd_input(ctx, 1);
    int32_t axis = normalized_axis(pd_attr_int64(ctx, 0), x0->ndim);
    PD_CHECK(pd_is_cpu(grad_out), "Out@GRAD must be a CPU Tensor.");
    PD_CHECK(pd_dtype(grad_out) == pd_dtype(x0), "Out@GRAD is %s, but X[0] is %s.",
             pd_dtype_name(pd_dtype(grad_out)), pd_dtype_name(pd_dtype(x0)));
    int64_t shape[PD_MAX_DIMS];
    memcpy(shape, x0->shape, sizeof shape);
    shape[axis] = checked_axis_size(ctx, axis);
    PD_CHECK(grad_out->ndim == x0->ndim &&
                 memcmp(grad_out->shape, shape, sizeof(int64_t) * (size_t)x0->ndim) == 0,
             "Out@GRAD must have the shape of the concatenated X (rank %d, %lld along axis %d).",
             x0->ndim, (long long)shape[axis], axis);
    pd_tensor *parts[64];
    pd_tensor **p = n <= 64 ? parts
                            : (pd_tensor **)pd_scratch(ctx, sizeof(pd_tensor *) * (size_t)n);
    for (int32_t k = 0; k < n; ++k)
        p[k] = pd_output_at(ctx, 0, k); /* X@GRAD[k]: X[k]'s shape and dtype */
    copy_blocks(p, n, (pd_tensor *)grad_out, axis, 0);
}

PD_BUILD_OP(custom_concat,
    .inputs = {PD_VEC("X")},
    .outputs = {"Out"},
    .attrs = {"axis: int64_t"},
    .kernel = concat_forward,
    .infer_shape = concat_infer_shape,
    .infer_dtype = concat_infer_dtype);

PD_BUILD_GRAD_OP(custom_concat,
    .inputs = {PD_VEC("X"), PD_GRAD("Out")},
    .outputs = {PD_GRAD(PD_VEC("X"))},
    .attrs = {"axis: int64_t"},
    .kernel = concat_backward);
