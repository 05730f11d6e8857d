/*
 * custom_relu_op.cu - the GPU halves of the guide's relu (custom_relu_op.cc calls them for GPU
 * tensors when both files are built with -DPADDLE_WITH_CUDA), written as Paddle writes them:
 * a templated __global__ kernel launched inside PD_DISPATCH_FLOATING_TYPES on the tensor's
 * stream.
 */
#include "paddle/extension.h"

#define CHECK_GPU_INPUT(x) PD_CHECK(x.is_gpu(), #x " must be a GPU Tensor.")

template <typename data_t>
__global__ void relu_cuda_forward_kernel(const data_t *x, data_t *y, int64_t num)
{
    int64_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t i = gid; i < num; i += blockDim.x * gridDim.x)
        y[i] = x[i] > static_cast<data_t>(0.) ? x[i] : static_cast<data_t>(0.);
}

template <typename data_t>
__global__ void relu_cuda_backward_kernel(const data_t *dy, const data_t *y, data_t *dx,
                                          int64_t num)
{
    int64_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t i = gid; i < num; i += blockDim.x * gridDim.x)
        dx[i] = dy[i] * (y[i] > static_cast<data_t>(0.) ? static_cast<data_t>(1.)
                                                        : static_cast<data_t>(0.));
}

std::vector<paddle::Tensor> relu_cuda_forward(const paddle::Tensor &x)
{
    CHECK_GPU_INPUT(x);
    auto out = paddle::empty_like(x);
    int64_t numel = x.numel();
    int64_t block = 512;
    int64_t grid = (numel + block - 1) / block;
    PD_DISPATCH_FLOATING_TYPES(x.type(), "relu_cuda_forward_kernel", ([&] {
                                   relu_cuda_forward_kernel<data_t>
                                       <<<grid, block, 0, x.stream()>>>(x.data<data_t>(),
                                                                        out.data<data_t>(), numel);
                               }));
    return {out};
}

std::vector<paddle::Tensor> relu_cuda_backward(const paddle::Tensor &x, const paddle::Tensor &out,
                                               const paddle::Tensor &grad_out)
{
    CHECK_GPU_INPUT(x);
    auto grad_x = paddle::empty_like(x);
    int64_t numel = out.numel();
    int64_t block = 512;
    int64_t grid = (numel + block - 1) / block;
    PD_DISPATCH_FLOATING_TYPES(out.type(), "relu_cuda_backward_kernel", ([&] {
                                   relu_cuda_backward_kernel<data_t>
                                       <<<grid, block, 0, x.stream()>>>(grad_out.data<data_t>(),
                                                                        out.data<data_t>(),
                                                                        grad_x.data<data_t>(),
                                                                        numel);
                               }));
    return {grad_x};
}
