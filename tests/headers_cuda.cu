/*
 * headers_cuda.cu - build-time check that the public headers (extension.h, pdext.h,
 * pdext_jit.h) compile as CUDA C++ with nvcc, host code warning-free under
 * -Xcompiler -Wall,-Wextra,-Werror. Built by tests/headers.cmake when nvcc is found, never run.
 *
 * Host code uses PD_BUILD_OP, PD_CHECK with and without a message, PD_THROW() and a dispatch
 * macro, as a .cu op's launcher does; device code uses the float16 / bfloat16 helpers and the
 * generic conversions (PD_ACC_TYPE, pd_to_acc, pd_to_float, ...) that pd_dtype.h marks
 * __host__ __device__.
 */
#include "extension.h"
#include "pdext.h"
#include "pdext_check.h"
#include "pdext_executor.h"
#include "pdext_gradcheck.h"
#include "pdext_jit.h"
#include "pdext_tape.h"

__global__ void headers_cuda_to_half(const float *in, pd_float16 *h, pd_bfloat16 *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        h[i] = pd_float16_from_float(in[i]);
        b[i] = pd_bfloat16_from_float(pd_float16_to_float(h[i]) + pd_bfloat16_to_float(b[i]));
    }
}

/* The generic conversions in device code: one templated kernel for every dispatch type. */
template <typename T> __global__ void headers_cuda_sum(const T *in, T *out, int64_t n)
{
    PD_ACC_TYPE(T) acc = 0;
    for (int64_t i = 0; i < n; ++i)
        acc += pd_to_acc(in[i]);
    out[0] = pd_from_acc(T, acc);
    out[1] = pd_from_float(T, pd_to_float(in[0]) * 2.0f);
}
template __global__ void headers_cuda_sum<pd_float16>(const pd_float16 *, pd_float16 *, int64_t);
template __global__ void headers_cuda_sum<pd_bfloat16>(const pd_bfloat16 *, pd_bfloat16 *, int64_t);
template __global__ void headers_cuda_sum<float>(const float *, float *, int64_t);
template __global__ void headers_cuda_sum<int32_t>(const int32_t *, int32_t *, int64_t);

template <typename T> __global__ void headers_cuda_scale(const T *in, T *out, int64_t n, double f)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (T)(in[i] * f);
}

static void scale_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(x != nullptr);
    PD_CHECK(pd_is_gpu(x), "x must be a GPU tensor, not %s", pd_place_type_name(&x->place));
    if (pd_ndim(x) > 4)
        PD_THROW();
    double factor = pd_attr_double(ctx, 0);
    pd_tensor *out = pd_empty_like(ctx, x);
    int64_t n = pd_numel(x);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "headers_cuda_scale", {
        int blocks = (int)((n + 255) / 256);
        headers_cuda_scale<data_t>
            <<<blocks, 256>>>((const data_t *)pd_data(x), (data_t *)pd_data(out), n, factor);
    });
    PD_CHECK(cudaGetLastError() == cudaSuccess, "launch failed: %s",
             cudaGetErrorString(cudaGetLastError()));
    pd_set_output(ctx, 0, out);
}

PD_BUILD_OP(headers_cuda_scale,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"factor: double"},
    .kernel = scale_kernel);

/* Host side, with external linkage so that nothing here is unused. */
pd_status headers_cuda_host();
pd_status headers_cuda_host()
{
    pd_registry *reg = nullptr;
    pd_status st = pd_registry_create(&reg);
    pd_tensor x = PD_TENSOR_UNDEFINED;
    const int64_t shape[1] = {4};
    if (st == PD_OK)
        st = pd_tensor_zeros(&x, PD_FLOAT32, pd_place_gpu(0), 1, shape);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    return st;
}
