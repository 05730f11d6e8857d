// aot_gpu_kernel.cc - the shape of a MindSpore GPU AOT kernel without CUDA at build time: it
// calls the CUDA runtime (declared here, left undefined in the library, as a kernel built by
// nvcc against libcudart refers to it). It loads on a machine without CUDA (RTLD_LAZY), and
// calling it must fail with a clear error instead of jumping to a missing symbol.
#include <cstdint>

extern "C" int cudaMemsetAsync(void *dst, int value, std::size_t count, void *stream);

extern "C" __attribute__((visibility("default"))) int
GpuZero(int nparam, void **params, int *, int64_t **, const char **, void *stream, void *)
{
    if (nparam != 2)
        return 1;
    return cudaMemsetAsync(params[1], 0, 4, stream);
}
