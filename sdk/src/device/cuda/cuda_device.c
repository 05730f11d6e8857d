/*
 * cuda_device.c - the CUDA plug-in (libpdext_cuda): pd_device_table over the CUDA runtime,
 * for GPU and GPU-pinned places. libpdext loads it with dlopen on the first GPU use and
 * asks pdext_cuda_device_table for the table; only this library links cudart.
 *
 * The entry point checks what a GPU place needs and says which part is missing: a driver
 * (cudaErrorInsufficientDriver / cudaErrorNoDevice from cudaGetDeviceCount), or a device.
 * Every table function makes its device current first (the runtime's calls may come from any
 * thread, whose current CUDA device is its own), and maps cudaErrorMemoryAllocation to
 * PD_ERR_OUT_OF_MEMORY; other CUDA errors are PD_ERR_UNAVAILABLE. A NULL stream means a
 * synchronous operation, as pd_device.h defines it.
 *
 * The convert member (strided copies and casts on the GPU) is cuda_convert.cu, present when
 * the plug-in was built with nvcc (PDEXT_CUDA_KERNELS); without it the member is NULL and
 * the runtime stages those copies through host memory.
 */
#include "pd_device.h"

#include <cuda_runtime_api.h>

#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

static pd_status status_of(cudaError_t e)
{
    if (e == cudaSuccess)
        return PD_OK;
    (void)cudaGetLastError(); /* clear the sticky-free error so the next call starts clean */
    return e == cudaErrorMemoryAllocation ? PD_ERR_OUT_OF_MEMORY : PD_ERR_UNAVAILABLE;
}

/* Makes `device` this thread's current CUDA device unless it is already. */
static cudaError_t use(int32_t device)
{
    int current = -1;
    cudaError_t e = cudaGetDevice(&current);
    if (e == cudaSuccess && current != device)
        e = cudaSetDevice(device);
    return e;
}

static pd_status cu_count(void *user, int32_t *count)
{
    (void)user;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    *count = e == cudaSuccess ? n : 0;
    return e == cudaSuccess || e == cudaErrorNoDevice ? PD_OK : status_of(e);
}

static pd_status cu_set_device(void *user, int32_t device)
{
    (void)user;
    return status_of(cudaSetDevice(device));
}

static pd_status cu_get_device(void *user, int32_t *device)
{
    (void)user;
    int d = 0;
    cudaError_t e = cudaGetDevice(&d);
    *device = d;
    return status_of(e);
}

static pd_status cu_alloc(void *user, int32_t device, size_t bytes, void **ptr)
{
    (void)user;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = cudaMalloc(ptr, bytes);
    return status_of(e);
}

static pd_status cu_free(void *user, int32_t device, void *ptr, size_t bytes)
{
    (void)user;
    (void)bytes;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = cudaFree(ptr); /* synchronizes with work that may still use ptr */
    return status_of(e);
}

static pd_status cu_host_alloc(void *user, size_t bytes, void **ptr)
{
    (void)user;
    /* Portable: pinned for every device's copies, not only the current one's. */
    return status_of(cudaHostAlloc(ptr, bytes, cudaHostAllocPortable));
}

static pd_status cu_host_free(void *user, void *ptr, size_t bytes)
{
    (void)user;
    (void)bytes;
    return status_of(cudaFreeHost(ptr));
}

static pd_status cu_memset(void *user, int32_t device, void *ptr, int value, size_t bytes,
                           pd_device_stream stream)
{
    (void)user;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = stream ? cudaMemsetAsync(ptr, value, bytes, (cudaStream_t)stream)
                   : cudaMemset(ptr, value, bytes);
    return status_of(e);
}

static pd_status copy(int32_t device, void *dst, const void *src, size_t bytes,
                      enum cudaMemcpyKind kind, pd_device_stream stream)
{
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = stream ? cudaMemcpyAsync(dst, src, bytes, kind, (cudaStream_t)stream)
                   : cudaMemcpy(dst, src, bytes, kind);
    return status_of(e);
}

static pd_status cu_h2d(void *user, int32_t device, void *dst, const void *src, size_t bytes,
                        pd_device_stream stream)
{
    (void)user;
    return copy(device, dst, src, bytes, cudaMemcpyHostToDevice, stream);
}

static pd_status cu_d2h(void *user, int32_t device, void *dst, const void *src, size_t bytes,
                        pd_device_stream stream)
{
    (void)user;
    return copy(device, dst, src, bytes, cudaMemcpyDeviceToHost, stream);
}

static pd_status cu_d2d(void *user, int32_t dst_device, void *dst, int32_t src_device,
                        const void *src, size_t bytes, pd_device_stream stream)
{
    (void)user;
    if (dst_device == src_device)
        return copy(dst_device, dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
    cudaError_t e = use(dst_device);
    if (e == cudaSuccess)
        e = stream
                ? cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, (cudaStream_t)stream)
                : cudaMemcpyPeer(dst, dst_device, src, src_device, bytes);
    return status_of(e);
}

static pd_status cu_stream_create(void *user, int32_t device, pd_device_stream *stream)
{
    (void)user;
    cudaStream_t s = NULL;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    *stream = s;
    return status_of(e);
}

static pd_status cu_stream_destroy(void *user, int32_t device, pd_device_stream stream)
{
    (void)user;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = cudaStreamDestroy((cudaStream_t)stream);
    return status_of(e);
}

static pd_status cu_stream_synchronize(void *user, int32_t device, pd_device_stream stream)
{
    (void)user;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize((cudaStream_t)stream);
    return status_of(e);
}

static pd_status cu_stream_query(void *user, int32_t device, pd_device_stream stream, bool *done)
{
    (void)user;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = cudaStreamQuery((cudaStream_t)stream);
    *done = e == cudaSuccess;
    return e == cudaSuccess || e == cudaErrorNotReady ? PD_OK : status_of(e);
}

static pd_status cu_event_create(void *user, int32_t device, pd_device_event *event)
{
    (void)user;
    cudaEvent_t ev = NULL;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    *event = ev;
    return status_of(e);
}

static pd_status cu_event_destroy(void *user, int32_t device, pd_device_event event)
{
    (void)user;
    (void)device;
    return status_of(cudaEventDestroy((cudaEvent_t)event));
}

static pd_status cu_event_record(void *user, int32_t device, pd_device_event event,
                                 pd_device_stream stream)
{
    (void)user;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream);
    return status_of(e);
}

static pd_status cu_event_wait(void *user, int32_t device, pd_device_stream stream,
                               pd_device_event event)
{
    (void)user;
    cudaError_t e = use(device);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0);
    return status_of(e);
}

static pd_status cu_event_synchronize(void *user, int32_t device, pd_device_event event)
{
    (void)user;
    (void)device;
    return status_of(cudaEventSynchronize((cudaEvent_t)event));
}

#if defined(PDEXT_CUDA_KERNELS)
pd_status pdext_cuda_convert(void *dst, pd_data_type dst_dtype, const void *src,
                             pd_data_type src_dtype, int32_t ndim, const int64_t *shape,
                             const int64_t *strides, void *stream);

static pd_status cu_convert(void *user, int32_t device, void *dst, pd_data_type dst_dtype,
                            const void *src, pd_data_type src_dtype, int32_t ndim,
                            const int64_t *shape, const int64_t *strides, pd_device_stream stream)
{
    (void)user;
    cudaError_t e = use(device);
    if (e != cudaSuccess)
        return status_of(e);
    return pdext_cuda_convert(dst, dst_dtype, src, src_dtype, ndim, shape, strides, stream);
}
#endif

static const pd_device_table cuda_table = {
    .struct_size = sizeof(pd_device_table),
    .abi_version = PD_DEVICE_ABI_VERSION,
    .name = "cuda",
    .device_count = cu_count,
    .set_device = cu_set_device,
    .get_device = cu_get_device,
    .alloc = cu_alloc,
    .free = cu_free,
    .host_alloc = cu_host_alloc,
    .host_free = cu_host_free,
    .memset = cu_memset,
    .copy_h2d = cu_h2d,
    .copy_d2h = cu_d2h,
    .copy_d2d = cu_d2d,
    .stream_create = cu_stream_create,
    .stream_destroy = cu_stream_destroy,
    .stream_synchronize = cu_stream_synchronize,
    .stream_query = cu_stream_query,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_wait = cu_event_wait,
    .event_synchronize = cu_event_synchronize,
#if defined(PDEXT_CUDA_KERNELS)
    .convert = cu_convert,
#endif
};

/* The plug-in's one entry point: the table, or a status and a message saying what is
 * missing (the driver, a device) and what to do. */
EXPORT pd_status pdext_cuda_device_table(uint32_t abi_version, const pd_device_table **table,
                                         char *message, size_t size)
{
    if (abi_version != PD_DEVICE_ABI_VERSION) {
        snprintf(message, size,
                 "it serves device tables of version %d, but the runtime asks for version %u; "
                 "install the libpdext_cuda.so built with this libpdext",
                 PD_DEVICE_ABI_VERSION, (unsigned)abi_version);
        return PD_ERR_ABI_MISMATCH;
    }
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice ||
        (e != cudaSuccess && e != cudaErrorNoDevice)) {
        bool driver = e == cudaErrorInsufficientDriver;
        snprintf(message, size, "%s (cudaGetDeviceCount: %s); %s",
                 driver                   ? "no usable CUDA driver"
                 : e == cudaErrorNoDevice ? "no GPU is visible"
                                          : "CUDA cannot start",
                 cudaGetErrorString(e),
                 driver ? "install the NVIDIA driver (libcuda.so.1; Debian: nvidia-driver) "
                          "of a version that supports this CUDA runtime"
                        : "check nvidia-smi and CUDA_VISIBLE_DEVICES");
        return PD_ERR_UNAVAILABLE;
    }
    *table = &cuda_table;
    return PD_OK;
}
