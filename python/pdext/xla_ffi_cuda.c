/*
 * xla_ffi_cuda.c - the CUDA entry of pdext.jax's XLA FFI handler: what XLA calls for a pdext
 * op on platform "CUDA" (pdext/jax.py registers it where jaxlib has a GPU plug-in and a GPU is
 * present). It asks XLA's execution context for the call's device ordinal and stream, makes
 * that stream this thread's current pdext stream of the device, so that the op's kernels
 * (pd_stream(ctx)) and the runner's copies are queued behind XLA's own work and before what
 * XLA queues next, and runs the call (xla_ffi_handler.c) on XLA's device buffers. Nothing here
 * waits for the device: XLA orders the work by its stream.
 *
 * Plain C over the XLA FFI C API and pdext's device API (pd_device.h): no CUDA header is
 * needed, the stream being an opaque handle (a cudaStream_t) that pdext's CUDA plug-in uses.
 */
#include "xla_ffi_handler.h"

#include <pthread.h>
#include <stdint.h>

/* XLA's streams, wrapped once each: XLA keeps a few streams per device for the life of the
 * process, and wrapping one costs an allocation. A stream past the table is wrapped for its
 * call and released after it (pd_stream_destroy waits for its work: slower, still right). */
#define PD_XLA_STREAMS 64
static struct {
    void *handle;
    int32_t device;
    pd_stream_t *stream;
} streams[PD_XLA_STREAMS];
static int n_streams;
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;

/* pdext's stream over XLA's `handle` on `place`, or NULL (pd_last_error says why). *owned is
 * set when the caller must destroy it after the call. */
static pd_stream_t *stream_of(pd_place place, void *handle, bool *owned)
{
    *owned = false;
    pd_stream_t *found = NULL;
    pthread_mutex_lock(&streams_lock);
    for (int i = 0; i < n_streams && found == NULL; ++i)
        if (streams[i].handle == handle && streams[i].device == place.device_id)
            found = streams[i].stream;
    if (found == NULL && pd_stream_wrap(place, handle, &found) == PD_OK) {
        if (n_streams < PD_XLA_STREAMS) {
            streams[n_streams].handle = handle;
            streams[n_streams].device = place.device_id;
            streams[n_streams].stream = found;
            ++n_streams;
        } else {
            *owned = true;
        }
    }
    pthread_mutex_unlock(&streams_lock);
    return found;
}

/* The handler of every pdext op on a CUDA GPU. */
PD_XLA_EXPORT XLA_FFI_Error *pdext_xla_ffi_handler_cuda(XLA_FFI_CallFrame *frame)
{
    bool execute;
    XLA_FFI_Error *err = pd_xla_ffi_prepare(frame, &execute);
    if (!execute)
        return err;
    const XLA_FFI_Api *api = frame->api;
    XLA_FFI_DeviceOrdinal_Get_Args device = {XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, NULL,
                                             frame->ctx, 0};
    if ((err = api->XLA_FFI_DeviceOrdinal_Get(&device)) != NULL)
        return err;
    XLA_FFI_Stream_Get_Args stream = {XLA_FFI_Stream_Get_Args_STRUCT_SIZE, NULL, frame->ctx, NULL};
    if ((err = api->XLA_FFI_Stream_Get(&stream)) != NULL)
        return err;
    pd_place place = pd_place_gpu(device.device_ordinal);
    bool owned;
    pd_stream_t *s = stream_of(place, stream.stream, &owned);
    if (s == NULL || pd_stream_set_current(place, s) != PD_OK) {
        err = pd_xla_ffi_fail(api, XLA_FFI_Error_Code_UNAVAILABLE, pd_last_error());
    } else {
        err = pd_xla_ffi_run(frame, place);
        pd_stream_set_current(place, NULL); /* the thread is XLA's: leave it as it was */
    }
    if (owned)
        pd_stream_destroy(s);
    return err;
}
