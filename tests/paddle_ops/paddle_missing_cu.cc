/*
 * paddle_missing_cu.cc - Paddle-style ops whose GPU half is declared here and defined in a .cu
 * that this build does not compile, as Paddle's own relu test source does: the JIT links
 * stubs for the missing functions (jit/jit_stubs.c), so the module loads and its CPU path
 * runs, and calling the GPU half is an op error naming the function (paddle_jit_test.c).
 */
#include <vector>

#include "paddle/extension.h"

/* Defined in a .cu source this build leaves out. */
std::vector<paddle::Tensor> scale_cuda_forward(const paddle::Tensor &x);
void scale_cuda_inplace(paddle::Tensor &x, float factor);

/* Out = 2 * X on the CPU; the GPU half on a GPU. */
std::vector<paddle::Tensor> ScaleForward(const paddle::Tensor &x)
{
    if (x.is_gpu())
        return scale_cuda_forward(x);
    return {x * 2.0};
}

/* Calls the GPU half whatever the place (on a CPU-only build: the missing function), after
 * making a tensor that the failed call must release. */
std::vector<paddle::Tensor> ForceGpuForward(const paddle::Tensor &x)
{
    auto scratch = paddle::empty_like(x);
    (void)scratch;
    return scale_cuda_forward(x);
}

void ForceGpuInplace(paddle::Tensor &x) { scale_cuda_inplace(x, 2.0f); }

// clang-format off
PD_BUILD_OP(pp_scale)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(ScaleForward));

PD_BUILD_OP(pp_scale_gpu_path)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(ForceGpuForward));

PD_BUILD_OP(pp_scale_gpu_inplace)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetInplaceMap({{"X", "Out"}})
    .SetKernelFn(PD_KERNEL(ForceGpuInplace));
// clang-format on
