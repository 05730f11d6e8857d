/*
 * storage.c - reference-counted memory blocks behind every tensor, and the checks that decide
 * which places this build can allocate on.
 *
 * A runtime allocation is ONE 64-byte aligned block: the pd_storage header, padded to 64 bytes,
 * then the data. One allocation per tensor keeps small tensors cheap (one malloc, one free) and
 * puts the data at a 64-byte boundary, which AVX-512 loads and cache lines like. A wrapped
 * external buffer gets a header of its own that points at the caller's memory and remembers the
 * deleter, called exactly once when the last reference goes.
 *
 * This build is CPU only: GPU, GPU-pinned and custom places are refused with
 * PD_ERR_UNAVAILABLE and a message saying what to do instead.
 */
#include "pd_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PD__ALIGN 64

/* The header's size rounded up to the alignment, so that the data after it is aligned too. */
#define PD__HEADER_BYTES ((sizeof(pd_storage) + PD__ALIGN - 1) / PD__ALIGN * PD__ALIGN)

void pd__place_format(pd_place place, char *buf, size_t size)
{
    switch (place.type) {
    case PD_PLACE_CPU:
        snprintf(buf, size, "cpu");
        break;
    case PD_PLACE_GPU:
        snprintf(buf, size, "gpu:%d", (int)place.device_id);
        break;
    case PD_PLACE_GPU_PINNED:
        snprintf(buf, size, "gpu_pinned");
        break;
    case PD_PLACE_CUSTOM:
        /* custom_type may come from a hand-filled struct: print at most its capacity. */
        snprintf(buf, size, "%.*s:%d", PD_PLACE_CUSTOM_NAME_MAX, place.custom_type,
                 (int)place.device_id);
        break;
    default:
        snprintf(buf, size, "undefined (type %d)", (int)place.type);
        break;
    }
}

pd_status pd__place_check(const char *who, pd_place place)
{
    char name[64];
    pd__place_format(place, name, sizeof name);
    switch (place.type) {
    case PD_PLACE_CPU:
        if (place.device_id != 0)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: place cpu has device id %d; CPU places have device id 0 "
                            "(use pd_place_cpu())",
                            who, (int)place.device_id);
        return PD_OK;
    case PD_PLACE_GPU:
    case PD_PLACE_GPU_PINNED:
        return pd__fail(PD_ERR_UNAVAILABLE,
                        "%s: place %s needs CUDA, which this build of pdext cannot use yet "
                        "(CPU only); allocate on pd_place_cpu()",
                        who, name);
    case PD_PLACE_CUSTOM:
        return pd__fail(PD_ERR_UNAVAILABLE,
                        "%s: place %s is a custom device of type '%.*s', which this build of "
                        "pdext cannot use (no custom device plug-ins); allocate on "
                        "pd_place_cpu()",
                        who, name, PD_PLACE_CUSTOM_NAME_MAX, place.custom_type);
    default:
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: place is %s; expected a place made by pd_place_cpu(), "
                        "pd_place_gpu(), pd_place_gpu_pinned() or pd_place_custom()",
                        who, name);
    }
}

pd_status pd__storage_new(const char *who, pd_place place, size_t bytes, pd_storage **out)
{
    pd_status st = pd__place_check(who, place);
    if (st != PD_OK)
        return st;
    /* aligned_alloc wants a multiple of the alignment; the header is one already. */
    size_t padded = (bytes + PD__ALIGN - 1) / PD__ALIGN * PD__ALIGN;
    if (bytes > SIZE_MAX - PD__ALIGN || padded > SIZE_MAX - PD__HEADER_BYTES)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes: the size overflows",
                        who, bytes);
    unsigned char *block = aligned_alloc(PD__ALIGN, PD__HEADER_BYTES + padded);
    if (block == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory allocating %zu bytes", who, bytes);
    pd_storage *s = (pd_storage *)block;
    atomic_init(&s->refcount, 1);
    s->ptr = block + PD__HEADER_BYTES;
    s->bytes = bytes;
    s->place = place;
    s->deleter = NULL;
    s->user = NULL;
    s->external = false;
    *out = s;
    return PD_OK;
}

pd_status pd__storage_wrap(const char *who, pd_place place, void *ptr, size_t bytes,
                           pd_deleter_fn deleter, void *user, pd_storage **out)
{
    pd_status st = pd__place_check(who, place);
    if (st != PD_OK)
        return st;
    pd_storage *s = malloc(sizeof *s);
    if (s == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory wrapping a buffer", who);
    atomic_init(&s->refcount, 1);
    s->ptr = ptr;
    s->bytes = bytes;
    s->place = place;
    s->deleter = deleter;
    s->user = user;
    s->external = true;
    *out = s;
    return PD_OK;
}

void pd__storage_retain(pd_storage *s)
{
    /* Relaxed suffices: a new reference is made from an existing one, which keeps s alive. */
    atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

void pd__storage_release(pd_storage *s)
{
    if (s == NULL)
        return;
    /* Release on every drop, acquire on the last one: every write made through other
     * references happens-before the deleter or free, as in std::shared_ptr. */
    if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_release) != 1)
        return;
    atomic_thread_fence(memory_order_acquire);
    if (s->external && s->deleter != NULL)
        s->deleter(s->ptr, s->user);
    free(s);
}

int64_t pd__storage_use_count(const pd_storage *s)
{
    return s ? (int64_t)atomic_load_explicit(&s->refcount, memory_order_relaxed) : 0;
}
