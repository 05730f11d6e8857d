/*
 * concat.c - the reference multi-input op: custom_concat joins a vector of tensors X along
 * the int64_t attr `axis` (negative counts from the end), and its grad op splits Out@GRAD back
 * into one gradient per input.
 *
 * By hand (README.md): cc -O3 -shared -fPIC -I<prefix>/include/pdext concat.c -o libconcat.so
 * (CPU only), or with nvcc for concat_cuda.cu and both objects linked with -lcudart.
 *
 * Concatenation only moves bytes, so one byte-copy kernel serves every dtype. In row-major
 * order, everything from `axis` inward is one contiguous block per outer index: for each outer
 * index the output row is the inputs' blocks one after another, and each is one memcpy. On a
 * GPU (pd_is_gpu) the blocks of one input are one 2D copy on the call's stream
 * (concat_cuda.cu); its launcher is declared weak, so concat.c built alone still links and a
 * GPU tensor then gets a message saying the module was built without concat_cuda.cu.
 */
#include "extension.h"

#include <string.h>

#if defined(__GNUC__)
#define CONCAT_CUDA_LAUNCHER __attribute__((weak, visibility("hidden")))
#else
#define CONCAT_CUDA_LAUNCHER
#endif

/* concat_cuda.cu: NULL, or CUDA's message for a failed copy. */
const char *concat_cuda_copy_rows(void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                                  size_t width, size_t rows, void *stream) CONCAT_CUDA_LAUNCHER;

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

/* `joined` and the inputs X are all on the CPU (false) or all on the GPU (true), else an
 * error naming the first on another place; on the GPU, the module must have been built
 * with concat_cuda.cu. */
static bool on_gpu(pd_kernel_ctx *ctx, const pd_tensor *joined, const char *joined_name)
{
    bool gpu = pd_is_gpu(joined);
    PD_CHECK(gpu || pd_is_cpu(joined), "%s must be a CPU or GPU Tensor.", joined_name);
    for (int32_t k = 0, n = pd_input_count(ctx, 0); k < n; ++k)
        PD_CHECK(pd_is_gpu(pd_input_at(ctx, 0, k)) == gpu &&
                     (gpu || pd_is_cpu(pd_input_at(ctx, 0, k))),
                 "input X[%d] must be a %s Tensor, as %s is.", k, gpu ? "GPU" : "CPU", joined_name);
    PD_CHECK(!gpu || concat_cuda_copy_rows != NULL,
             "GPU Tensors need concat_cuda.cu, but this module was built without it; build "
             "concat.c and concat_cuda.cu together (nvcc) to run on a GPU.");
    return gpu;
}

/* Copies between the whole tensor `joined` and its parts along `axis`: parts -> joined when
 * `join`, joined -> parts otherwise; on the GPU as one 2D copy per part on `stream`. */
static void copy_blocks(pd_tensor *const *parts, int32_t n, pd_tensor *joined, int32_t axis,
                        int join, bool gpu, void *stream)
{
    size_t elem = pd_dtype_size(pd_dtype(joined));
    int64_t outer = numel_before(joined, axis);
    size_t row = (size_t)numel_from(joined, axis) * elem;
    size_t offset = 0;
    for (int32_t k = 0; k < n; ++k) {
        size_t block = (size_t)numel_from(parts[k], axis) * elem;
        char *whole = (char *)pd_data(joined) + offset;
        char *part = (char *)pd_data(parts[k]);
        if (gpu) {
            const char *err =
                join ? concat_cuda_copy_rows(whole, row, part, block, block, (size_t)outer, stream)
                     : concat_cuda_copy_rows(part, block, whole, row, block, (size_t)outer, stream);
            PD_CHECK(err == NULL, "concat_cuda_copy_rows: %s.", err);
        } else if (block > 0) {
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
    for (int32_t k = 0; k < n; ++k)
        p[k] = (pd_tensor *)pd_input_at(ctx, 0, k);
    bool gpu = on_gpu(ctx, x0, "X[0]");
    /* The output is made from the inferred shape, on X[0]'s place. */
    copy_blocks(p, n, pd_output(ctx, 0), axis, 1, gpu, gpu ? pd_stream(ctx) : NULL);
}

static void concat_backward(pd_kernel_ctx *ctx)
{
    int32_t n = pd_input_count(ctx, 0);
    const pd_tensor *x0 = pd_input_at(ctx, 0, 0);
    const pd_tensor *grad_out = pd_input(ctx, 1);
    int32_t axis = normalized_axis(pd_attr_int64(ctx, 0), x0->ndim);
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
    bool gpu = on_gpu(ctx, grad_out, "Out@GRAD");
    for (int32_t k = 0; k < n; ++k)
        p[k] = pd_output_at(ctx, 0, k); /* X@GRAD[k]: X[k]'s shape, dtype and place */
    copy_blocks(p, n, (pd_tensor *)grad_out, axis, 0, gpu, gpu ? pd_stream(ctx) : NULL);
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
