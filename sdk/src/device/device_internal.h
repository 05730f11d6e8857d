/*
 * device_internal.h - the device layer's interface to the layers above it: one entry per
 * device type (its table and what was learnt from it once), memory and copies on any place,
 * the thread's streams, which stream handles exist, and places in messages and checks.
 * Defined by device.c, device_copy.c... (see each declaration), place_types.c and stream.c.
 */
#ifndef PD_DEVICE_INTERNAL_H
#define PD_DEVICE_INTERNAL_H

#include "pd_internal.h"

#include <stddef.h>

struct pd_storage;

/* --- device/place_types.c: custom device type names ---------------------------------------- */

/* The registered name of custom type `type`, or the name an undefined place made from an
 * unregistered name remembers (device_id < 0); NULL otherwise. */
const char *pd__place_custom_name(pd_place place);
/* pd_device_type_name, or "undefined" for a number that is no registered custom type: the
 * function table's device_type_name. */
const char *pd__device_type_label(int32_t type);

/* "cpu", "gpu:0", "gpu_pinned", "npu:1" (custom), "undefined (type 7)": for messages. */
void pd__place_format(pd_place place, char *buf, size_t size);
/* PD_OK if memory can be held on `place`: the CPU, or a place a device table serves
 * (device/device.c). Otherwise PD_ERR_UNAVAILABLE (no CUDA plug-in, driver or device; a
 * custom type without a table) or PD_ERR_INVALID_ARGUMENT (undefined, a device id out of
 * range, a CPU place with a device id), with a message naming `who` and the place. */
pd_status pd__place_check(const char *who, pd_place place);
/* The CPU case of pd__place_check, inline and without a message: for hot paths, which take
 * the general path (device places, or the message) only once this says no. */
static inline bool pd__place_ok(const pd_place *place)
{
    return place->type == PD_PLACE_CPU && place->device_id == 0;
}
/* Refuses a place no device serves: the message says why (not registered, no table, ...). */
pd_status pd__place_refuse(const char *who, pd_place place);

/* --- device/device.c, device/stream.c: device tables, streams ------------------------------- */

#define PD__DEVICE_IDS 64 /* devices of one type pdext addresses */

/* One device type as the runtime holds it: its table and what was learnt from it once. */
typedef struct pd__device {
    const pd_device_table *table;
    int32_t type;  /* place type number (PD_PLACE_GPU serves GPU-pinned too) */
    int32_t count; /* devices present when the entry was made (at most PD__DEVICE_IDS) */
    pthread_mutex_t lock;
    _Atomic(struct pd_stream_t *) defaults[PD__DEVICE_IDS]; /* default streams, made lazily */
    /* The cache of freed blocks per device (tensor/device_cache.c owns these lists), under
     * `lock`. */
    struct pd_storage *cached[PD__DEVICE_IDS];
    size_t cached_bytes[PD__DEVICE_IDS];
    struct pd_storage *pinned; /* the cache of pinned host memory (GPU-pinned places) */
    size_t pinned_bytes;
    /* Handles of the streams of this type that exist (under `lock`, stream.c): a cached block
     * whose stream is gone (destroyed after finishing its work) is idle, and its handle must
     * never reach stream_query again. */
    void **live_streams;
    int32_t n_live_streams, cap_live_streams;
} pd__device;

/* The member `m` lies inside table `t` as its plug-in compiled it (struct_size), and is set. */
#define PD__DEVICE_HAS(t, m) \
    ((t)->struct_size >= offsetof(pd_device_table, m) + sizeof((t)->m) && (t)->m)

/* The device entry serving `place` (loading the CUDA plug-in for GPU places), with its
 * device id checked; NULL with a message naming `who` (what is missing, what to install). */
pd__device *pd__device_of(const char *who, pd_place place);
/* Whether custom type number `type` has a device table. */
bool pd__device_registered(int32_t type);
/* Records "who: <op> on <place> failed (...)" with status st; returns st. */
pd_status pd__device_failed(const char *who, const pd__device *d, pd_place place, const char *op,
                            pd_status st);
/* `bytes` of place's memory (device memory, or pinned host memory for GPU-pinned). */
pd_status pd__device_alloc(const char *who, pd__device *d, pd_place place, size_t bytes,
                           void **ptr);
void pd__device_free(pd__device *d, pd_place place, void *ptr, size_t bytes);
/* memset of `bytes` at ptr on any place, on the thread's stream of the device. */
pd_status pd__device_memset(const char *who, pd_place place, void *ptr, int value, size_t bytes);
/* Copies `bytes` between any two places (host memory included) on the thread's streams;
 * returns once host memory on either side may be used again. */
pd_status pd__device_copy(const char *who, pd_place dst_place, void *dst, pd_place src_place,
                          const void *src, size_t bytes);
/* The stream this thread made current for place's device (pd_stream_set_current), or NULL
 * when it uses the device's default stream (stream.c). */
struct pd_stream_t *pd__stream_chosen(pd_place place);
/* The device handle of this thread's stream for place's device (current, else default). */
pd_status pd__device_stream_of(const char *who, pd__device *d, pd_place place,
                               pd_device_stream *handle);
/* src's elements densely, as dst_type, to dst on dst_place, by the device's convert member
 * on the thread's stream when src is on that same device and the table has one; *done
 * false (and PD_OK) when the caller must stage through host memory instead. */
pd_status pd__device_convert(const char *who, pd_place dst_place, void *dst, pd_data_type dst_type,
                             const pd_tensor *src, bool *done);
/* A stream of d was made / is being destroyed (after its work is done): the device keeps
 * which stream handles exist, so that the device cache counts blocks of a destroyed stream
 * as idle and never queries a dead handle (stream.c). */
pd_status pd__device_stream_born(pd__device *d, void *stream);
void pd__device_stream_gone(pd__device *d, void *stream);
/* Whether `stream` is a stream of d that exists; the caller holds d->lock. */
bool pd__device_stream_live(const pd__device *d, const void *stream);

#endif /* PD_DEVICE_INTERNAL_H */
