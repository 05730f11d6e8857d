/*
 * pd_device.h - device types as plug-ins: the table a device type implements (memory, pinned
 * host memory, copies, streams, events), its registration, and the streams hosts run op calls
 * on. For hosts and device plug-in authors; op code reaches the call's stream through
 * pd_stream(ctx) (pd_api.h).
 *
 * A device type is one pd_device_table, in the spirit of Paddle's CustomDevice C API and
 * PJRT: plain function pointers, a `struct_size` first so that old and new sides meet
 * safely, and every function returning a pd_status. The CPU is a table like any other (built
 * in); CUDA is a plug-in library (libpdext_cuda.so) that libpdext loads with dlopen the first
 * time a GPU place is used; the simulated device (libpdext_sim, pd_sim_device.h) is the
 * reference implementation and what the test suite runs the device path with. A host adds
 * its own device with pd_device_register("npu", &table, &type): tensors then live on
 * pd_place_custom("npu", id), and storage, copies, casts and op calls reach that memory only
 * through the table.
 *
 * Versioning. PD_DEVICE_ABI_VERSION changes when a member changes meaning; members are only
 * appended otherwise, and the runtime reads a table only up to its struct_size (a member past
 * it counts as NULL): a plug-in compiled against an older pd_device.h keeps working, without
 * what was appended since. Every member below is required unless it says "optional"; every
 * appended member is optional.
 *
 * Streams. A stream is an in-order queue of device work (a cudaStream_t for CUDA, opaque for
 * other devices). Work enqueued on one stream runs in order; work on different streams is
 * ordered only by events. Functions that take a stream accept NULL, meaning "now, and
 * returning only when done" (synchronous). Every op call runs on a stream: the thread's
 * current stream for the call's device (pd_stream_set_current), or the device's default
 * stream, which the runtime makes on first use.
 */
#ifndef PD_DEVICE_H
#define PD_DEVICE_H

#include "pd_base.h"
#include "pd_dtype.h"
#include "pd_place.h"

#include <stddef.h>
#include <stdint.h>

PD_EXTERN_C_BEGIN

/* The version of pd_device_table's meaning. A table with another version is refused with
 * both versions in the message. */
#define PD_DEVICE_ABI_VERSION 1

/* A device's stream and event: opaque to the runtime (cudaStream_t / cudaEvent_t for CUDA). */
typedef void *pd_device_stream;
typedef void *pd_device_event;

/*
 * The table of one device type. Every function gets `user` (the table's user member) first,
 * and the device number (0 .. device_count - 1) where it acts on one device; the runtime
 * checks the number before calling. Functions return PD_OK or a failure status
 * (PD_ERR_OUT_OF_MEMORY for memory the device does not have, PD_ERR_UNAVAILABLE for a device
 * that cannot be used); the runtime turns a failure into a message naming the function, the
 * device and the operation. Functions may be called from any thread.
 */
typedef struct pd_device_table {
    /* sizeof(pd_device_table) as the plug-in was compiled: members past it count as NULL. */
    size_t struct_size;
    /* PD_DEVICE_ABI_VERSION as the plug-in was compiled. */
    uint32_t abi_version;
    uint32_t reserved; /* 0 */
    /* The device type's name for messages ("cuda", "sim"); not NULL. */
    const char *name;
    /* Passed back as the first argument of every function. */
    void *user;

    /* Devices of this type present now (0 when none; a failure says why none can be used). */
    pd_status (*device_count)(void *user, int32_t *count);
    /* The device this thread works on, as cudaSetDevice / cudaGetDevice. Optional. */
    pd_status (*set_device)(void *user, int32_t device);
    pd_status (*get_device)(void *user, int32_t *device);

    /* `bytes` (> 0) of device memory into *ptr. The pointer is the device's: the runtime never
     * reads or writes through it. PD_ERR_OUT_OF_MEMORY when the device has no room. */
    pd_status (*alloc)(void *user, int32_t device, size_t bytes, void **ptr);
    /* Frees what alloc returned (`bytes` as allocated), once all work already enqueued on any
     * stream that uses it is done. */
    pd_status (*free)(void *user, int32_t device, void *ptr, size_t bytes);
    /* Page-locked host memory, readable and writable by the CPU, that copies to and from the
     * device can use without staging (PD_PLACE_GPU_PINNED for CUDA). Optional. */
    pd_status (*host_alloc)(void *user, size_t bytes, void **ptr);
    pd_status (*host_free)(void *user, void *ptr, size_t bytes);

    /* Sets `bytes` bytes at device pointer `ptr` to `value`, on `stream` (NULL: now). */
    pd_status (*memset)(void *user, int32_t device, void *ptr, int value, size_t bytes,
                        pd_device_stream stream);
    /* Copies host -> device, device -> host and device -> device, on `stream` (NULL: now,
     * returning when done). With a stream, host memory must stay valid until the stream has
     * done the copy. copy_d2d copies between devices of this type, src_device's memory to
     * dst_device's; `stream` belongs to dst_device. */
    pd_status (*copy_h2d)(void *user, int32_t device, void *dst, const void *src, size_t bytes,
                          pd_device_stream stream);
    pd_status (*copy_d2h)(void *user, int32_t device, void *dst, const void *src, size_t bytes,
                          pd_device_stream stream);
    pd_status (*copy_d2d)(void *user, int32_t dst_device, void *dst, int32_t src_device,
                          const void *src, size_t bytes, pd_device_stream stream);

    /* Streams: create, destroy (after finishing its work), wait for all enqueued work, and
     * ask whether all enqueued work is done (*done) without waiting. */
    pd_status (*stream_create)(void *user, int32_t device, pd_device_stream *stream);
    pd_status (*stream_destroy)(void *user, int32_t device, pd_device_stream stream);
    pd_status (*stream_synchronize)(void *user, int32_t device, pd_device_stream stream);
    pd_status (*stream_query)(void *user, int32_t device, pd_device_stream stream, bool *done);

    /* Events: a point in a stream's work. record marks the work enqueued on `stream` so far;
     * wait makes `stream` wait (without blocking the host) until the event's work is done;
     * synchronize blocks the host until it is. An event never recorded counts as done. */
    pd_status (*event_create)(void *user, int32_t device, pd_device_event *event);
    pd_status (*event_destroy)(void *user, int32_t device, pd_device_event event);
    pd_status (*event_record)(void *user, int32_t device, pd_device_event event,
                              pd_device_stream stream);
    pd_status (*event_wait)(void *user, int32_t device, pd_device_stream stream,
                            pd_device_event event);
    pd_status (*event_synchronize)(void *user, int32_t device, pd_device_event event);

    /* --- Optional members appended since the first table (read up to struct_size) --- */

    /* Writes the elements of a strided view in `device`'s memory densely, in C order,
     * converted from src_dtype to dst_dtype, to `dst` (memory of the same device), on
     * `stream`: the kernel behind pd_tensor_contiguous (same dtypes) and pd_tensor_cast of
     * device tensors. Element (i0, ..., i[ndim-1]) of the view is at `src` plus
     * sum(ik * strides[k]) elements of src_dtype (strides may be 0; ndim may be 0: one
     * element); shape and strides are read before it returns. Conversions follow
     * pd_tensor_cast (pdext.h): floating to integer truncates toward zero and saturates, NaN
     * giving 0. PD_ERR_UNAVAILABLE for a pair of dtypes or a view it does not handle: the
     * runtime then stages the copy through host memory, as it does without this member. */
    pd_status (*convert)(void *user, int32_t device, void *dst, pd_data_type dst_dtype,
                         const void *src, pd_data_type src_dtype, int32_t ndim,
                         const int64_t *shape, const int64_t *strides, pd_device_stream stream);
} pd_device_table;

/* Registers device type `name` with `table` (which must stay valid for the life of the
 * process) and writes its type number to *type: places pd_place_custom(name, id) then hold
 * memory through the table. The name follows pd_device_type_register's rules; "gpu" is
 * taken by the CUDA plug-in. Registering the same name again with the same table gives the
 * same number; with another table it fails with PD_ERR_ALREADY_EXISTS. A table of another
 * PD_DEVICE_ABI_VERSION, too small a struct_size or a required member NULL is refused
 * (PD_ERR_INVALID_ARGUMENT) naming what is wrong. */
pd_status pd_device_register(const char *name, const pd_device_table *table, int32_t *type);

/* Number of devices of `type` (a pd_place_type or a registered custom number) into *count.
 * For GPU this loads the CUDA plug-in: PD_ERR_UNAVAILABLE names what is missing (the
 * plug-in, the driver or a device) and what to install. */
pd_status pd_device_count(int32_t type, int32_t *count);
/* Makes place's device this thread's current device of its type (cudaSetDevice). */
pd_status pd_device_set_current(pd_place place);
/* Blocks until the work on place's device's default stream and on this thread's current
 * stream of that device is done. */
pd_status pd_device_synchronize(pd_place place);
/* Gives the memory cached for reuse on place's device back to the device table. Tensor
 * memory of a device is cached when the tensor dies (per device, reused on the stream it was
 * made on, at most PDEXT_DEVICE_CACHE_MB MiB per device, default 1024; 0 turns caching off);
 * an allocation that runs out of memory releases that cache and tries once more. Pinned host
 * memory (pd_place_gpu_pinned()) has a cache of its own, with the same limit, that this
 * releases for a GPU-pinned place. Nothing to do for the CPU. */
pd_status pd_device_cache_release(pd_place place);

/* --- DLPack devices ----------------------------------------------------------------------
 *
 * The one mapping between places and DLPack's DLDevice (dlpack.h), for fronts that exchange
 * tensors through DLPack: CPU <-> (kDLCPU, 0), GPU <-> (kDLCUDA, id), GPU-pinned <->
 * (kDLCUDAHost, 0), a custom device type <-> (kDLExtDev, id). DLPack has one ExtDev type for
 * every custom device, so coming back the front says which custom type number it means. */

/* DLPack's DLDeviceType values pdext maps (as in dlpack.h). */
typedef enum pd_dlpack_device_type {
    PD_DLPACK_CPU = 1,       /* kDLCPU */
    PD_DLPACK_CUDA = 2,      /* kDLCUDA */
    PD_DLPACK_CUDA_HOST = 3, /* kDLCUDAHost */
    PD_DLPACK_EXT_DEV = 12   /* kDLExtDev */
} pd_dlpack_device_type;

/* DLPack's device of `p` into *device_type and *device_id; false (and nothing written) for
 * an undefined place. */
static inline bool pd_place_to_dlpack(pd_place p, int32_t *device_type, int32_t *device_id)
{
    int32_t t = p.type == PD_PLACE_CPU                                ? PD_DLPACK_CPU
                : p.type == PD_PLACE_GPU                              ? PD_DLPACK_CUDA
                : p.type == PD_PLACE_GPU_PINNED                       ? PD_DLPACK_CUDA_HOST
                : p.type >= PD_PLACE_CUSTOM_FIRST && p.device_id >= 0 ? PD_DLPACK_EXT_DEV
                                                                      : 0;
    if (t == 0)
        return false;
    *device_type = t;
    *device_id = p.device_id;
    return true;
}

/* The place of DLPack device (device_type, device_id); kDLExtDev becomes a place of
 * `custom_type` (a registered custom type number). An undefined place for any other device
 * type, a negative id, or kDLExtDev with a custom_type below PD_PLACE_CUSTOM_FIRST. */
static inline pd_place pd_place_from_dlpack(int32_t device_type, int32_t device_id,
                                            int32_t custom_type)
{
    if (device_id < 0)
        return pd_place_make(PD_PLACE_UNDEFINED, 0);
    switch (device_type) {
    case PD_DLPACK_CPU: return pd_place_make(PD_PLACE_CPU, 0);
    case PD_DLPACK_CUDA: return pd_place_make(PD_PLACE_GPU, device_id);
    case PD_DLPACK_CUDA_HOST: return pd_place_make(PD_PLACE_GPU_PINNED, 0);
    case PD_DLPACK_EXT_DEV:
        if (custom_type >= PD_PLACE_CUSTOM_FIRST)
            return pd_place_make(custom_type, device_id);
        return pd_place_make(PD_PLACE_UNDEFINED, 0);
    default: return pd_place_make(PD_PLACE_UNDEFINED, 0);
    }
}

/* --- Streams ----------------------------------------------------------------------------- */

/* A stream of one device, made by pd_stream_create. */
typedef struct pd_stream_t pd_stream_t;

/* A new stream on `place` (a device place, not CPU). */
pd_status pd_stream_create(pd_place place, pd_stream_t **out);
/* A stream object over a stream the host made itself with the device's own API (a
 * cudaStream_t from PyTorch or the host's CUDA code): op calls and copies run on it once it is
 * current (pd_stream_set_current). pd_stream_destroy waits for its work and frees the object;
 * the handle stays the host's, which destroys it after that. */
pd_status pd_stream_wrap(pd_place place, pd_device_stream handle, pd_stream_t **out);
/* Waits for the stream's work, then destroys it (a wrapped stream: only the object); NULL is
 * ignored. It must not be the current stream of any thread. */
pd_status pd_stream_destroy(pd_stream_t *stream);
/* Blocks until all work enqueued on the stream is done. */
pd_status pd_stream_synchronize(pd_stream_t *stream);
/* Whether all enqueued work is done, into *done, without blocking. */
pd_status pd_stream_query(pd_stream_t *stream, bool *done);
/* Makes `stream` the current stream of this thread for its device: op calls with inputs on
 * that device, and copies to and from it, run on it. NULL (with `place`) goes back to the
 * device's default stream. */
pd_status pd_stream_set_current(pd_place place, pd_stream_t *stream);
/* The stream op calls on `place` run on in this thread: the current one, or the device's
 * default stream (made on first use). NULL with a message if the place has none (CPU, or a
 * device that cannot be used). */
pd_stream_t *pd_stream_current(pd_place place);
/* The device's own handle (cudaStream_t for CUDA): what pd_stream(ctx) gives kernels. */
pd_device_stream pd_stream_handle(const pd_stream_t *stream);
struct pd_tensor; /* pd_tensor.h */
/* Notes that work using t's device memory was queued on `stream`, a stream of t's device
 * other than the one its memory was allocated on (as torch's Tensor.record_stream): once t's
 * last reference goes, the device cache hands that memory to no allocation until `stream`
 * is idle, where without the note an allocation on the memory's own stream could reuse it
 * under that work. Executor streams note their own use. Memory the host wrapped (not
 * allocated through pdext) is the host's to keep alive: nothing to note, PD_OK. Fails with
 * PD_ERR_INVALID_ARGUMENT for NULL, a tensor without storage or on host memory, and a
 * stream of another device. */
pd_status pd_tensor_record_stream(const struct pd_tensor *t, pd_stream_t *stream);
/* Makes `consumer` (a device handle of a stream of t's device, such as the stream a DLPack
 * consumer names, which pdext need not know) wait for the work pdext queued that uses t's
 * memory, without blocking the host: an event recorded on the stream that used the memory
 * last (for memory pdext did not allocate, the thread's current stream of the device) and
 * waited for on `consumer`; nothing when that stream is `consumer` itself, or for host
 * memory. A consumer pdext knows (wrapped or its own) becomes the memory's last stream, so
 * that pdext's later work on it waits for the consumer's in turn. PD_ERR_INVALID_ARGUMENT
 * for a NULL tensor or consumer. */
pd_status pd_tensor_ready_on(const struct pd_tensor *t, pd_device_stream consumer);
/* The place of the stream's device. */
pd_place pd_stream_place(const pd_stream_t *stream);

/* --- Events ------------------------------------------------------------------------------- */

typedef struct pd_event_t pd_event_t;

/* A new event on `place`'s device. */
pd_status pd_event_create(pd_place place, pd_event_t **out);
/* Destroys the event; NULL is ignored. */
pd_status pd_event_destroy(pd_event_t *event);
/* Marks the work enqueued on `stream` so far (same device as the event). */
pd_status pd_event_record(pd_event_t *event, pd_stream_t *stream);
/* Makes `stream` wait for the event's work without blocking the host (same device). */
pd_status pd_event_wait(pd_stream_t *stream, pd_event_t *event);
/* Blocks until the event's work is done. */
pd_status pd_event_synchronize(pd_event_t *event);

PD_EXTERN_C_END

#endif /* PD_DEVICE_H */
