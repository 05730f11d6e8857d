/*
 * cuda_convert.cu - the CUDA plug-in's convert kernel (pd_device_table.convert): a strided
 * view written densely in C order, converted between dtypes, on the GPU. It serves
 * pd_tensor_contiguous (any dtype: an element copy by size), and pd_tensor_cast between
 * int32, int64, float32 and float64 with pd_tensor_cast's rules (floating to integer
 * truncates toward zero and saturates, NaN giving 0; the rest are C's conversions, rounding
 * to nearest). Other pairs answer PD_ERR_UNAVAILABLE and the runtime stages them through
 * host memory.
 *
 * Built by nvcc into libpdext_cuda (sdk/plugins.cmake); cuda_device.c calls
 * pdext_cuda_convert with the device already current. One thread per output element, a
 * grid-stride loop; the view (at most PD_MAX_DIMS axes) travels as a kernel parameter.
 */
#include "pd_device.h"
#include "pd_tensor.h"

#include <cuda_runtime.h>

#include <stdint.h>
#include <type_traits>

namespace {

struct view {
    int32_t ndim;
    int64_t shape[PD_MAX_DIMS];
    int64_t strides[PD_MAX_DIMS];
};

struct alignas(8) bytes16 {
    uint64_t lo, hi;
};

template <typename D, typename S> struct cvt {
    __device__ static D run(S v) { return static_cast<D>(v); } // C's conversion
};
template <typename S> struct cvt<int32_t, S> {
    __device__ static int32_t run(S v)
    {
        if constexpr (std::is_same_v<S, int64_t>) { // int64 -> int32: modulo 2^32
            return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
        } else if constexpr (std::is_integral_v<S>) {
            return static_cast<int32_t>(v);
        } else {
            double d = static_cast<double>(v);
            if (d != d)
                return 0;
            d = d > (double)INT32_MIN ? d : (double)INT32_MIN;
            d = d < (double)INT32_MAX ? d : (double)INT32_MAX;
            return static_cast<int32_t>(d);
        }
    }
};
template <typename S> struct cvt<int64_t, S> {
    __device__ static int64_t run(S v)
    {
        if constexpr (std::is_integral_v<S>) {
            return static_cast<int64_t>(v);
        } else {
            double d = static_cast<double>(v);
            if (d != d)
                return 0;
            if (d >= 9223372036854775808.0)
                return INT64_MAX;
            if (d <= -9223372036854775808.0)
                return INT64_MIN;
            return static_cast<int64_t>(d);
        }
    }
};

/* The element offset in the source view of the i-th element in row-major order. */
__device__ inline int64_t view_offset(const view &v, int64_t i)
{
    int64_t at = 0;
    for (int32_t k = v.ndim - 1; k >= 0; --k) {
        int64_t q = i / v.shape[k];
        at += (i - q * v.shape[k]) * v.strides[k];
        i = q;
    }
    return at;
}

template <typename D, typename S>
__global__ void convert_kernel(D *__restrict__ dst, const S *__restrict__ src, view v, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = cvt<D, S>::run(src[view_offset(v, i)]);
}

template <typename T>
__global__ void copy_kernel(T *__restrict__ dst, const T *__restrict__ src, view v, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = src[view_offset(v, i)];
}

constexpr int threads = 256;

unsigned blocks_for(int64_t n)
{
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

template <typename D, typename S>
void launch(void *dst, const void *src, const view &v, int64_t n, cudaStream_t s)
{
    convert_kernel<D, S><<<blocks_for(n), threads, 0, s>>>(static_cast<D *>(dst),
                                                           static_cast<const S *>(src), v, n);
}

template <typename D>
bool launch_from(pd_data_type src_dtype, void *dst, const void *src, const view &v, int64_t n,
                 cudaStream_t s)
{
    switch (src_dtype) {
    case PD_INT32: launch<D, int32_t>(dst, src, v, n, s); return true;
    case PD_INT64: launch<D, int64_t>(dst, src, v, n, s); return true;
    case PD_FLOAT32: launch<D, float>(dst, src, v, n, s); return true;
    case PD_FLOAT64: launch<D, double>(dst, src, v, n, s); return true;
    default: return false;
    }
}

template <typename T>
void launch_copy(void *dst, const void *src, const view &v, int64_t n, cudaStream_t s)
{
    copy_kernel<T><<<blocks_for(n), threads, 0, s>>>(static_cast<T *>(dst),
                                                     static_cast<const T *>(src), v, n);
}

} // namespace

/* The convert member's work on the current device: PD_OK once enqueued on `stream` (NULL:
 * done before it returns), PD_ERR_UNAVAILABLE for a pair it does not convert or a failed
 * launch. */
extern "C" __attribute__((visibility("hidden"))) pd_status
pdext_cuda_convert(void *dst, pd_data_type dst_dtype, const void *src, pd_data_type src_dtype,
                   int32_t ndim, const int64_t *shape, const int64_t *strides, void *stream)
{
    if (ndim < 0 || ndim > PD_MAX_DIMS)
        return PD_ERR_UNAVAILABLE;
    view v{};
    v.ndim = ndim;
    int64_t n = 1;
    for (int32_t k = 0; k < ndim; ++k) {
        v.shape[k] = shape[k];
        v.strides[k] = strides[k];
        n *= shape[k];
    }
    if (n == 0)
        return PD_OK;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    bool launched = true;
    if (dst_dtype == src_dtype) {
        switch (pd_dtype_size(src_dtype)) {
        case 1: launch_copy<uint8_t>(dst, src, v, n, s); break;
        case 2: launch_copy<uint16_t>(dst, src, v, n, s); break;
        case 4: launch_copy<uint32_t>(dst, src, v, n, s); break;
        case 8: launch_copy<uint64_t>(dst, src, v, n, s); break;
        case 16: launch_copy<bytes16>(dst, src, v, n, s); break;
        default: launched = false;
        }
    } else {
        switch (dst_dtype) {
        case PD_INT32: launched = launch_from<int32_t>(src_dtype, dst, src, v, n, s); break;
        case PD_INT64: launched = launch_from<int64_t>(src_dtype, dst, src, v, n, s); break;
        case PD_FLOAT32: launched = launch_from<float>(src_dtype, dst, src, v, n, s); break;
        case PD_FLOAT64: launched = launch_from<double>(src_dtype, dst, src, v, n, s); break;
        default: launched = false;
        }
    }
    if (!launched)
        return PD_ERR_UNAVAILABLE;
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && stream == nullptr)
        e = cudaStreamSynchronize(nullptr);
    if (e == cudaErrorMemoryAllocation)
        return PD_ERR_OUT_OF_MEMORY;
    return e == cudaSuccess ? PD_OK : PD_ERR_UNAVAILABLE;
}
