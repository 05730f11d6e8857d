// ops_cuda.cu - fixture: a CUDA source in a static bundle, bundle_cuda_scale (Out = 2 * X,
// float32 on a GPU). The test builds and registers it (compile-only on machines without a
// GPU: registering needs no device; running it does).
#include "extension.h"

__global__ void scale2(const float *in, float *out, int64_t n)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}

static void cuda_scale_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_is_gpu(x), "bundle_cuda_scale takes a GPU tensor");
    pd_tensor *out = pd_output(ctx, 0);
    int64_t n = pd_numel(x);
    if (n > 0)
        scale2<<<(unsigned)((n + 255) / 256), 256>>>(static_cast<const float *>(pd_data(x)),
                                                     static_cast<float *>(pd_data(out)), n);
}

PD_BUILD_OP(bundle_cuda_scale,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = cuda_scale_kernel);
