/*
 * concat_cuda.cu - the GPU half of custom_concat: concat.c moves one contiguous block per
 * input and outer index, and on a GPU those blocks are one 2D copy per input
 * (cudaMemcpy2DAsync: `rows` rows of `width` bytes, each side with its own pitch), queued on
 * the op call's stream. Built together with concat.c (see README.md); concat.c declares the
 * launcher weak, so concat.c alone still builds and loads on a machine without nvcc.
 *
 * C linkage, and failure returned as CUDA's message (NULL on success): concat.c is C, and an
 * exception must not unwind through it.
 */
#include <cuda_runtime.h>

#include <stddef.h>

/* Copies `rows` rows of `width` bytes from src (rows `src_pitch` bytes apart) to dst (rows
 * `dst_pitch` bytes apart), device to device, on `stream`; NULL, or why it failed. */
extern "C" const char *concat_cuda_copy_rows(void *dst, size_t dst_pitch, const void *src,
                                             size_t src_pitch, size_t width, size_t rows,
                                             void *stream)
{
    if (width == 0 || rows == 0)
        return nullptr;
    cudaError_t e = cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows,
                                      cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream));
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}
