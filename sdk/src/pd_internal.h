/*
 * pd_internal.h - what libpdext's own files share and hosts never see: the storage block,
 * error reporting helpers and the internal entry points one runtime file offers another.
 */
#ifndef PD_INTERNAL_H
#define PD_INTERNAL_H

#define PDEXT_NO_MODULE_ENTRY 1 /* libpdext is not an op module */
#include "pdext.h"

#include <stdatomic.h>

/* A reference-counted memory block. Runtime allocations put this header and the data in one
 * 64-byte aligned allocation (data at `ptr`, right after the header); wrapped external
 * buffers point `ptr` at the caller's memory and call `deleter` once at the end. */
struct pd_storage {
    atomic_int_fast64_t refcount;
    void *ptr;              /* first byte of the buffer */
    size_t bytes;           /* its size */
    pd_place place;         /* where it lives */
    pd_deleter_fn deleter;  /* external buffers: called once with (ptr, user); else NULL */
    void *user;
    bool external;          /* ptr is the caller's, not part of this allocation */
};

/* --- status.c ---------------------------------------------------------------------------- */

/* Records `code` and the formatted message as this thread's last error; returns `code`. */
pd_status pd__fail(pd_status code, const char *fmt, ...) PD_PRINTF(2, 3);
pd_status pd__vfail(pd_status code, const char *fmt, va_list ap);
/* Prepends "prefix" to this thread's last message (keeps its status); returns the status. */
pd_status pd__fail_prefix(const char *fmt, ...) PD_PRINTF(1, 2);

/* --- storage.c --------------------------------------------------------------------------- */

/* A new block of `bytes` on `place`, refcount 1, 64-byte aligned. Fails (with a message
 * naming `who`) for GPU places without CUDA, undefined places, and out of memory. */
pd_status pd__storage_new(const char *who, pd_place place, size_t bytes, pd_storage **out);
void pd__storage_retain(pd_storage *s);
void pd__storage_release(pd_storage *s);

/* --- tensor.c ---------------------------------------------------------------------------- */

/* Validates dtype, ndim and shape and computes the byte size without overflow; the message
 * names `who` and the offending argument. */
pd_status pd__shape_check(const char *who, pd_data_type dtype, int32_t ndim,
                          const int64_t *shape, size_t *bytes);

#endif /* PD_INTERNAL_H */
