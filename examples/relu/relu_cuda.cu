/*
 * relu_cuda.cu - the GPU half of custom_relu: the forward and backward CUDA kernels and their
 * launchers, which relu.c calls for GPU tensors (pd_is_gpu), as Paddle's guide splits
 * relu.cc and relu.cu. Built together with relu.c into one module:
 *
 *     nvcc -O3 -std=c++20 -Xcompiler=-fPIC -I<prefix>/include/pdext -c relu_cuda.cu
 *     cc -O3 -fPIC -I<prefix>/include/pdext -c relu.c
 *     c++ -shared relu.o relu_cuda.o -L<cuda>/lib64 -lcudart -o librelu.so
 *
 * or with the JIT, which does the same given both sources (pd_jit_load, `pdext build`).
 *
 * The launchers have C linkage and report failure by returning CUDA's message (NULL on
 * success) rather than throwing: relu.c is C, and an exception must not unwind through it.
 * The kernels launch on the op call's stream (pd_stream(ctx), passed in by relu.c), so they
 * run after the work that produced their inputs and before whatever the host queues next.
 * A grid-stride loop over 64-bit indices covers any size with a bounded grid.
 */
#include "pd_dtype.h"

#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int block_threads = 256;
constexpr int64_t max_blocks = 65535 * 8;

template <typename T>
__global__ void relu_forward_kernel(const T *__restrict__ x, T *__restrict__ out, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        T v = x[i];
        out[i] = v > T(0) ? v : T(0);
    }
}

template <typename T>
__global__ void relu_backward_kernel(const T *__restrict__ out, const T *__restrict__ grad,
                                     T *__restrict__ grad_x, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        T g = grad[i];
        grad_x[i] = out[i] > T(0) ? g : T(0);
    }
}

unsigned grid_for(int64_t n)
{
    int64_t blocks = (n + block_threads - 1) / block_threads;
    return (unsigned)(blocks < 1 ? 1 : blocks > max_blocks ? max_blocks : blocks);
}

/* CUDA's message for the launch just made, or NULL. */
const char *launch_error()
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

} // namespace

/* Out = max(X, 0) over n elements of dtype (float32 or float64) on `stream`; NULL, or why the
 * launch failed. */
extern "C" const char *relu_cuda_forward(pd_data_type dtype, const void *x, void *out, int64_t n,
                                         void *stream)
{
    if (n == 0)
        return nullptr;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (dtype == PD_FLOAT32)
        relu_forward_kernel<<<grid_for(n), block_threads, 0, s>>>(static_cast<const float *>(x),
                                                                  static_cast<float *>(out), n);
    else if (dtype == PD_FLOAT64)
        relu_forward_kernel<<<grid_for(n), block_threads, 0, s>>>(static_cast<const double *>(x),
                                                                  static_cast<double *>(out), n);
    else
        return "relu_cuda_forward handles float32 and float64 only";
    return launch_error();
}

/* X@GRAD = Out@GRAD where Out > 0, else 0, over n elements on `stream`; NULL, or why the
 * launch failed. */
extern "C" const char *relu_cuda_backward(pd_data_type dtype, const void *out, const void *grad,
                                          void *grad_x, int64_t n, void *stream)
{
    if (n == 0)
        return nullptr;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (dtype == PD_FLOAT32)
        relu_backward_kernel<<<grid_for(n), block_threads, 0, s>>>(static_cast<const float *>(out),
                                                                   static_cast<const float *>(grad),
                                                                   static_cast<float *>(grad_x), n);
    else if (dtype == PD_FLOAT64)
        relu_backward_kernel<<<grid_for(n), block_threads, 0, s>>>(static_cast<const double *>(out),
                                                                   static_cast<const double *>(
                                                                       grad),
                                                                   static_cast<double *>(grad_x),
                                                                   n);
    else
        return "relu_cuda_backward handles float32 and float64 only";
    return launch_error();
}
