/*
 * relu.c - the reference elementwise op: custom_relu (Out = max(X, 0)) and its gradient
 * (X@GRAD = Out@GRAD where Out > 0, else 0), for float32 and float64, on the CPU and, built
 * together with relu_cuda.cu, on a GPU.
 *
 * By hand (README.md): cc -O3 -shared -fPIC -I<prefix>/include/pdext relu.c -o librelu.so
 * (CPU only), or with nvcc for relu_cuda.cu and both objects linked with -lcudart.
 *
 * Kernels choose by place, as in Paddle's guide: a GPU tensor goes to the launchers of
 * relu_cuda.cu, on the op call's stream (pd_stream). They are declared weak, so relu.c built
 * alone (a machine without nvcc) still links and loads: the launchers are then NULL, and a
 * GPU tensor gets a message saying the module was built without relu_cuda.cu.
 *
 * The loops are written branch-free (a conditional select per element) so that -O3
 * vectorizes them. From PARALLEL_MIN elements on they run on the runtime's thread pool
 * (pd_parallel_for), in chunks of at least PARALLEL_GRAIN elements; every element is computed
 * the same way either way, so the results are identical. Below that, waking threads costs
 * more than the loop. Neither op needs an infer_shape / infer_dtype: the forward op has one
 * input and one output, so Out takes X's shape and dtype; the grad op's output X@GRAD takes
 * the shape and dtype of its input X.
 */
#include "extension.h"

#if defined(__GNUC__)
#define RELU_CUDA_LAUNCHER __attribute__((weak, visibility("hidden")))
#define RELU_OUT_OF_LINE __attribute__((noinline, cold))
#else
#define RELU_CUDA_LAUNCHER
#define RELU_OUT_OF_LINE
#endif

/* relu_cuda.cu: NULL, or CUDA's message for a failed launch. */
const char *relu_cuda_forward(pd_data_type dtype, const void *x, void *out, int64_t n,
                              void *stream) RELU_CUDA_LAUNCHER;
const char *relu_cuda_backward(pd_data_type dtype, const void *out, const void *grad, void *grad_x,
                               int64_t n, void *stream) RELU_CUDA_LAUNCHER;

#define PARALLEL_MIN (1 << 18)   /* elements: 1 MiB of float32 */
#define PARALLEL_GRAIN (1 << 16) /* elements per chunk, at least */

/* What one chunk needs: the buffers and their dtype (checked before the loop). */
typedef struct relu_args {
    pd_data_type dtype;
    const void *x;    /* forward: X; backward: Out */
    const void *grad; /* backward: Out@GRAD */
    void *out;        /* forward: Out; backward: X@GRAD */
} relu_args;

static inline void relu_forward_range(void *arg, int64_t begin, int64_t end)
{
    const relu_args *a = (const relu_args *)arg;
    PD_DISPATCH_FLOATING_TYPES(a->dtype, "relu_forward", {
        const data_t *restrict in = (const data_t *)a->x;
        data_t *restrict o = (data_t *)a->out;
        for (int64_t i = begin; i < end; ++i)
            o[i] = in[i] > 0 ? in[i] : (data_t)0;
    });
}

static void relu_backward_range(void *arg, int64_t begin, int64_t end)
{
    const relu_args *a = (const relu_args *)arg;
    PD_DISPATCH_FLOATING_TYPES(a->dtype, "relu_backward", {
        const data_t *restrict o = (const data_t *)a->x;
        const data_t *restrict g = (const data_t *)a->grad;
        data_t *restrict gx = (data_t *)a->out;
        for (int64_t i = begin; i < end; ++i) {
            data_t gi = g[i]; /* loaded unconditionally: the select below vectorizes */
            gx[i] = o[i] > 0 ? gi : (data_t)0;
        }
    });
}

/* The GPU launchers are there (the module was built with relu_cuda.cu), or an error. */
static void check_cuda_built(void)
{
    PD_CHECK(relu_cuda_forward != NULL && relu_cuda_backward != NULL,
             "GPU Tensors need relu_cuda.cu, but this module was built without it; build "
             "relu.c and relu_cuda.cu together (nvcc) to run on a GPU.");
}

/* The forward op on a tensor that is not on the CPU: a GPU one goes to relu_cuda.cu. Out of
 * line, so that the CPU path of a one-element call stays a few instructions. */
static RELU_OUT_OF_LINE void relu_forward_device(pd_kernel_ctx *ctx, const pd_tensor *x)
{
    PD_CHECK(pd_is_gpu(x), "x must be a CPU or GPU Tensor.");
    check_cuda_built();
    pd_tensor *out = pd_output(ctx, 0); /* allocated with X's shape and dtype, on X's place */
    const char *err = relu_cuda_forward(pd_dtype(x), pd_data(x), pd_data(out), pd_numel(x),
                                        pd_stream(ctx));
    PD_CHECK(err == NULL, "relu_cuda_forward: %s.", err);
}

static void relu_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    if (!pd_is_cpu(x)) {
        relu_forward_device(ctx, x);
        return;
    }
    pd_tensor *out = pd_output(ctx, 0); /* allocated with X's shape and dtype */
    relu_args a = {pd_dtype(x), pd_data(x), NULL, pd_data(out)};
    int64_t n = pd_numel(x);
    if (n >= PARALLEL_MIN) /* on the pool; below that, waking threads costs more than the loop */
        pd_parallel_for(ctx, n, PARALLEL_GRAIN, relu_forward_range, &a);
    else
        relu_forward_range(&a, 0, n);
}

static void relu_backward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    const pd_tensor *out = pd_input(ctx, 1);
    const pd_tensor *grad_out = pd_input(ctx, 2);
    bool gpu = pd_is_gpu(out);
    PD_CHECK((pd_is_cpu(out) && pd_is_cpu(grad_out)) || (gpu && pd_is_gpu(grad_out)),
             "Out and Out@GRAD must be both CPU or both GPU Tensors.");
    PD_CHECK(pd_same_shape(x, out) && pd_same_shape(out, grad_out),
             "X, Out and Out@GRAD must have the same shape.");
    PD_CHECK(pd_dtype(x) == pd_dtype(out) && pd_dtype(out) == pd_dtype(grad_out),
             "X, Out and Out@GRAD must have the same dtype, got %s, %s and %s.",
             pd_dtype_name(pd_dtype(x)), pd_dtype_name(pd_dtype(out)),
             pd_dtype_name(pd_dtype(grad_out)));
    if (gpu)
        check_cuda_built();
    pd_tensor *grad_x = pd_output(ctx, 0); /* allocated with X's shape and dtype */
    if (gpu) {
        const char *err = relu_cuda_backward(pd_dtype(out), pd_data(out), pd_data(grad_out),
                                             pd_data(grad_x), pd_numel(out), pd_stream(ctx));
        PD_CHECK(err == NULL, "relu_cuda_backward: %s.", err);
        return;
    }
    relu_args a = {pd_dtype(out), pd_data(out), pd_data(grad_out), pd_data(grad_x)};
    int64_t n = pd_numel(out);
    if (n >= PARALLEL_MIN)
        pd_parallel_for(ctx, n, PARALLEL_GRAIN, relu_backward_range, &a);
    else
        relu_backward_range(&a, 0, n);
}

/* Both ops are elementwise: a leading dimension may be a batch (PD_OP_LEADING_BATCH), so a
 * batching host (jax.vmap through pdext.jax) makes one call per batch, not one per item. */
PD_BUILD_OP(custom_relu,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = relu_forward,
    .flags = PD_OP_LEADING_BATCH);

PD_BUILD_GRAD_OP(custom_relu,
    .inputs = {"X", "Out", PD_GRAD("Out")},
    .outputs = {PD_GRAD("X")},
    .kernel = relu_backward,
    .flags = PD_OP_LEADING_BATCH);
