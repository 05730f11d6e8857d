// cuda_scale.cu - JIT test fixture: a CUDA source compiled by nvcc into the same library as
// C sources. jit_cuda_half: Out = X / 2 (float32) on the CPU, or by a kernel on the GPU.
#include "extension.h"

__global__ void half_kernel(const float *in, float *out, int64_t n)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 0.5f;
}

static void half_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    const float *in = static_cast<const float *>(pd_data(x));
    float *o = static_cast<float *>(pd_data(out));
    int64_t n = pd_numel(x);
    if (pd_is_gpu(x)) {
        half_kernel<<<(unsigned)((n + 255) / 256), 256>>>(in, o, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        o[i] = in[i] * 0.5f;
}

PD_BUILD_OP(jit_cuda_half,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = half_forward);
