/*
 * custom_relu_op.cc - the relu of Paddle's custom C++ operator guide, written against
 * paddle/extension.h exactly as a Paddle author writes it: forward, backward and double
 * backward, CPU kernels, float32 and float64. Built by pdext unchanged (see README.md).
 * The GPU halves are in custom_relu_op.cu; as in Paddle, this file calls them only when built
 * with PADDLE_WITH_CUDA (both files together, -DPADDLE_WITH_CUDA), so it also builds and runs
 * alone on a CPU-only machine.
 */
#include <iostream>
#include <vector>

#include "paddle/extension.h"

#define CHECK_CPU_INPUT(x) PD_CHECK(x.is_cpu(), #x " must be a CPU Tensor.")

template <typename data_t>
void relu_cpu_forward_kernel(const data_t *x_data, data_t *out_data, int64_t x_numel)
{
    PD_CHECK(x_data != nullptr, "x_data is nullptr.");
    PD_CHECK(out_data != nullptr, "out_data is nullptr.");
    for (int64_t i = 0; i < x_numel; ++i)
        out_data[i] = std::max(static_cast<data_t>(0.), x_data[i]);
}

template <typename data_t>
void relu_cpu_backward_kernel(const data_t *grad_out_data, const data_t *out_data,
                              data_t *grad_x_data, int64_t out_numel)
{
    for (int64_t i = 0; i < out_numel; ++i)
        grad_x_data[i] = grad_out_data[i] * (out_data[i] > static_cast<data_t>(0) ? 1. : 0.);
}

template <typename data_t>
void relu_cpu_double_backward_kernel(const data_t *out_data, const data_t *ddx_data,
                                     data_t *ddout_data, int64_t ddout_numel)
{
    for (int64_t i = 0; i < ddout_numel; ++i)
        ddout_data[i] = ddx_data[i] * (out_data[i] > static_cast<data_t>(0) ? 1. : 0.);
}

std::vector<paddle::Tensor> relu_cpu_forward(const paddle::Tensor &x)
{
    CHECK_CPU_INPUT(x);
    auto out = paddle::empty_like(x);

    PD_DISPATCH_FLOATING_TYPES(x.type(), "relu_cpu_forward", ([&] {
                                   relu_cpu_forward_kernel<data_t>(x.data<data_t>(),
                                                                   out.data<data_t>(), x.numel());
                               }));

    return {out};
}

std::vector<paddle::Tensor> relu_cpu_backward(const paddle::Tensor &x, const paddle::Tensor &out,
                                              const paddle::Tensor &grad_out)
{
    auto grad_x = paddle::empty_like(x);

    PD_DISPATCH_FLOATING_TYPES(out.type(), "relu_cpu_backward", ([&] {
                                   relu_cpu_backward_kernel<data_t>(grad_out.data<data_t>(),
                                                                    out.data<data_t>(),
                                                                    grad_x.data<data_t>(),
                                                                    out.size());
                               }));

    return {grad_x};
}

std::vector<paddle::Tensor> relu_cpu_double_backward(const paddle::Tensor &out,
                                                     const paddle::Tensor &ddx)
{
    CHECK_CPU_INPUT(out);
    CHECK_CPU_INPUT(ddx);
    auto ddout = paddle::empty(out.shape(), out.dtype(), out.place());

    PD_DISPATCH_FLOATING_TYPES(out.type(), "relu_cpu_double_backward", ([&] {
                                   relu_cpu_double_backward_kernel<
                                       data_t>(out.data<data_t>(), ddx.data<data_t>(),
                                               ddout.mutable_data<data_t>(out.place()),
                                               ddout.size());
                               }));

    return {ddout};
}

#ifdef PADDLE_WITH_CUDA
std::vector<paddle::Tensor> relu_cuda_forward(const paddle::Tensor &x);
std::vector<paddle::Tensor> relu_cuda_backward(const paddle::Tensor &x, const paddle::Tensor &out,
                                               const paddle::Tensor &grad_out);
#endif

std::vector<paddle::Tensor> ReluForward(const paddle::Tensor &x)
{
    if (x.is_cpu())
        return relu_cpu_forward(x);
#ifdef PADDLE_WITH_CUDA
    if (x.is_gpu())
        return relu_cuda_forward(x);
#endif
    PD_THROW("Not implemented.");
}

std::vector<paddle::Tensor> ReluBackward(const paddle::Tensor &x, const paddle::Tensor &out,
                                         const paddle::Tensor &grad_out)
{
    if (x.is_cpu())
        return relu_cpu_backward(x, out, grad_out);
#ifdef PADDLE_WITH_CUDA
    if (x.is_gpu())
        return relu_cuda_backward(x, out, grad_out);
#endif
    PD_THROW("Not implemented.");
}

std::vector<paddle::Tensor> ReluDoubleBackward(const paddle::Tensor &out, const paddle::Tensor &ddx)
{
    if (out.is_cpu())
        return relu_cpu_double_backward(out, ddx);
    PD_THROW("Not implemented.");
}

std::vector<std::vector<int64_t>>
ReluDoubleBackwardInferShape(const std::vector<int64_t> &out_shape,
                             const std::vector<int64_t> &ddx_shape)
{
    (void)ddx_shape;
    return {out_shape};
}

PD_BUILD_OP(custom_relu).Inputs({"X"}).Outputs({"Out"}).SetKernelFn(PD_KERNEL(ReluForward));

// clang-format off
PD_BUILD_GRAD_OP(custom_relu)
    .Inputs({"X", "Out", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X")})
    .SetKernelFn(PD_KERNEL(ReluBackward));
// clang-format on

// clang-format off
PD_BUILD_DOUBLE_GRAD_OP(custom_relu)
    .Inputs({"Out", paddle::Grad(paddle::Grad("X"))})
    .Outputs({paddle::Grad(paddle::Grad("Out"))})
    .SetKernelFn(PD_KERNEL(ReluDoubleBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(ReluDoubleBackwardInferShape));
// clang-format on
