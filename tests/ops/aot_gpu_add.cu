// aot_gpu_add.cu - a MindSpore GPU AOT kernel (out = a + b, float32) in MindSpore's calling
// convention: the stream argument is a cudaStream_t. aot_cuda_test compiles it through
// pd_aot_load (nvcc) and checks that, with no CUDA device driven by the adapter, calling it
// fails clearly.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void add_kernel(const float *a, const float *b, float *out, int64_t n)
{
    int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a[i] + b[i];
}

extern "C" int GpuAdd(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                      void *stream, void *extra)
{
    (void)dtypes;
    (void)extra;
    if (nparam != 3)
        return 1;
    int64_t n = 1;
    for (int d = 0; d < ndims[2]; ++d)
        n *= shapes[2][d];
    int blocks = static_cast<int>((n + 255) / 256);
    add_kernel<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const float *>(
                                                                          params[0]),
                                                                      static_cast<const float *>(
                                                                          params[1]),
                                                                      static_cast<float *>(
                                                                          params[2]),
                                                                      n);
    return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
