/*
 * tensor_internal.h - the tensor layer's interface to the layers above it: the storage block
 * behind every tensor (storage.c), its device memory (device_cache.c), readiness of memory an
 * async call fills (pending.c), shapes and layouts (layout.c), the checks the host tensor
 * functions share (tensor.c, view.c), casts (cast.c) and copies across places
 * (cross_place.c).
 */
#ifndef PD_TENSOR_INTERNAL_H
#define PD_TENSOR_INTERNAL_H

#include "device/device_internal.h"

/* A reference-counted memory block. Runtime allocations put this header and the data in one
 * 64-byte aligned allocation (data at `ptr`, right after the header); wrapped external
 * buffers point `ptr` at the caller's memory and call `deleter` once at the end. */
struct pd_storage {
    atomic_int_fast64_t refcount;
    void *ptr;             /* first byte of the buffer */
    size_t bytes;          /* its size */
    pd_place place;        /* where it lives */
    pd_deleter_fn deleter; /* external buffers: called once with (ptr, user); else NULL */
    void *user;
    bool external;   /* ptr is the caller's, not part of this allocation */
    void *block;     /* runtime allocations: what malloc returned (header and data) */
    size_t capacity; /* runtime allocations: usable data bytes at ptr (>= bytes) */
    /* Device memory (any place but the CPU): the device cache's record of the block
     * (tensor/device_cache.c; the header is then part of that allocation and goes back
     * through pd__device_block_free). NULL for host memory from malloc and wrapped buffers. */
    struct pd__device_block *dev;
    /* The executor's completion for memory an async call fills (tensor/pending.h): NULL for
     * memory that was never pending. One reference, dropped when the storage dies. */
    _Atomic(struct pd__completion *) pending;
};

/* --- storage.c --------------------------------------------------------------------------- */

/* A new block of `bytes` on `place`, refcount 1, 64-byte aligned. Fails (with a message
 * naming `who`) for GPU places without CUDA, undefined places, and out of memory. */
pd_status pd__storage_new(const char *who, pd_place place, size_t bytes, pd_storage **out);
/* pd__storage_new for a caller that has already accepted *place (pd__place_ok) and bounded
 * bytes (<= PTRDIFF_MAX): no checks, no message; NULL when out of memory. The runner's
 * output path, where both facts are known and every instruction counts. */
pd_storage *pd__storage_alloc(const pd_place *place, size_t bytes);
void pd__storage_retain(pd_storage *s);
void pd__storage_release(pd_storage *s);

/* Wraps the caller's buffer: refcount 1; `deleter(ptr, user)` (if not NULL) runs when the
 * last reference goes. On failure the deleter is not called. */
pd_status pd__storage_wrap(const char *who, pd_place place, void *ptr, size_t bytes,
                           pd_deleter_fn deleter, void *user, pd_storage **out);
/* References to s (0 for NULL). */
int64_t pd__storage_use_count(const pd_storage *s);
/* --- tensor.c ---------------------------------------------------------------------------- */

/* Zeroes *t (PD_TENSOR_UNDEFINED) in parts of at most 64 bytes, which compilers emit as vector
 * stores: a single memset of the whole struct becomes `rep stos`, whose start-up costs more
 * than that, and every op call's output goes through here (made, and released by the host). */
_Static_assert(sizeof(pd_tensor) > 128 && sizeof(pd_tensor) <= 192, "three parts of <= 64 bytes");
static inline void pd__tensor_clear(pd_tensor *t)
{
    memset(t, 0, 64);
    memset((char *)t + 64, 0, 64);
    memset((char *)t + 128, 0, sizeof *t - 128);
}

/* Validates dtype, ndim and shape and computes the byte size without overflow; the message
 * names `who` and the offending argument. */
/* ndim in [0, PD_MAX_DIMS] and a shape array to go with it; else a message naming `who`. */
pd_status pd__rank_check(const char *who, int32_t ndim, const int64_t *shape);
PD__SIBLING_API pd_status pd__shape_check(const char *who, pd_data_type dtype, int32_t ndim,
                                          const int64_t *shape, size_t *bytes);
/* pd__shape_check's verdict, without a message: true, with the byte size in *bytes, for a data
 * type, ndim in [0, PD_MAX_DIMS], a shape (when ndim > 0) of dims >= 0 and a byte size (of
 * the non-zero dims) within PTRDIFF_MAX. Inline for the runner's output path; pd__shape_check
 * starts with it and only works out a message once it says no. */
static inline bool pd__shape_bytes(pd_data_type dtype, int32_t ndim, const int64_t *shape,
                                   size_t *bytes)
{
    if ((unsigned)dtype - 1u >= PD_NUM_DTYPES - 1u || (uint32_t)ndim > PD_MAX_DIMS ||
        (ndim > 0 && shape == NULL))
        return false;
    uint64_t total = pd_dtype_size(dtype);
    bool empty = false;
    for (int32_t d = 0; d < ndim; ++d) {
        if (shape[d] <= 0) {
            if (shape[d] < 0)
                return false;
            empty = true;
        } else if (__builtin_mul_overflow(total, (uint64_t)shape[d], &total) ||
                   total > (uint64_t)PTRDIFF_MAX) {
            return false;
        }
    }
    *bytes = empty ? 0 : (size_t)total;
    return true;
}

/* --- layout.c: strides, byte ranges, strided copies ---------------------------------------- */

/* The row-major strides of `shape` into strides[0..PD_MAX_DIMS) (0 past ndim). Inline: the
 * runner fills them for every output it makes. A zero dim counts as 1, so that the strides
 * before it stay those of the other dims. */
static inline void pd__dense_strides(int32_t ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = PD_MAX_DIMS - 1; d >= 0; --d) {
        strides[d] = d < ndim ? s : 0;
        if (d < ndim && shape[d] > 0)
            s *= shape[d];
    }
}
/* t's strides as its layout means them (dense ones for PD_LAYOUT_DENSE), 0 past ndim. */
void pd__tensor_strides(const pd_tensor *t, int64_t *strides);
/* `strides` address `shape` row-major without gaps (axes of size 1 and empty shapes aside). */
bool pd__strides_are_dense(int32_t ndim, const int64_t *shape, const int64_t *strides);
/* Sets t's layout and strides from `strides` for t's shape: dense (with the dense strides)
 * when they describe a dense tensor, strided otherwise. */
void pd__tensor_set_layout(pd_tensor *t, const int64_t *strides);
/* Bytes from t->data to the lowest element t reaches (*lo <= 0) and to one past the end of
 * the highest (*hi); both 0 for a tensor without elements. False if they overflow. */
bool pd__tensor_span(const pd_tensor *t, int64_t *lo, int64_t *hi);
/* PD_OK unless t has storage and reaches bytes outside it; the message names who (NULL: no
 * "who: " prefix) and arg. */
pd_status pd__tensor_check_bounds(const char *who, const char *arg, const pd_tensor *t);
/* "[2, 3]" into buf, for messages. */
PD__SIBLING_API const char *pd__dims_text(int32_t ndim, const int64_t *dims, char *buf,
                                          size_t size);
/* Writes src's elements (any layout, host memory) densely in C order to dst as dst_type. */
void pd__copy_to_dense(void *dst, pd_data_type dst_type, const pd_tensor *src);

/* --- tensor.c: checks the host tensor functions share (views in view.c) ------------------- */

/* out is not NULL. */
pd_status pd__tensor_check_out(const char *who, const void *out);
/* `t` is a defined, initialized tensor with a valid dtype and rank, inside its storage. */
pd_status pd__tensor_check_source(const char *who, const char *arg, const pd_tensor *t);
/* A view of src over its storage (a new reference) with the given shape, strides (elements)
 * and data address; layout and offset follow from them. */
pd_tensor pd__tensor_view(const pd_tensor *src, void *data, int32_t ndim, const int64_t *shape,
                          const int64_t *strides);

/* --- tensor/cross_place.c ------------------------------------------------------------------ */

/* Writes src's elements (any place, any layout) densely in C order as dst_type to dst, on
 * dst_place: host loops for host memory, device copies otherwise (staged through host
 * memory when a strided or converting copy involves a device). */
pd_status pd__copy_across(const char *who, void *dst, pd_place dst_place, pd_data_type dst_type,
                          const pd_tensor *src);

/* Converts n elements of src_type at src into dst_type at dst (both valid dtypes, buffers not
 * overlapping) with pd_tensor_cast's rules; same dtype copies the bytes. */
void pd__cast_elements(void *dst, pd_data_type dst_type, const void *src, pd_data_type src_type,
                       size_t n);

/* --- device_cache.c: the caching device allocator ------------------------------------------ */

/* A block of `bytes` on place's device (or of pinned host memory for GPU-pinned) from the
 * cache or the table: a storage header with ptr, capacity, device and stream set. On out of
 * memory that cache is released and the allocation tried once more. */
pd_status pd__device_block_new(const char *who, pd__device *d, pd_place place, size_t bytes,
                               pd_storage **out);
/* Takes a dead block back (into the cache, or to the table when the cache is full). */
void pd__device_block_free(pd_storage *s);
/* Notes that work using device block s was queued on `stream` (a device handle of s's
 * device): the cache reuses s only once that stream is idle (device_cache.c). Host and
 * pinned memory are left alone. */
void pd__device_record_stream(pd_storage *s, void *stream);
/* Orders work about to be queued on `stream` (a device handle of s's device) that uses s after
 * the work of the stream that used s last, when that is another stream that still exists: an
 * event recorded there and waited for on `stream`, no host synchronization; then `stream` is
 * s's last, and noted for the cache. Nothing for memory pdext did not allocate on a device,
 * pinned memory, or s's last stream itself. The message names `who`. */
pd_status pd__device_block_order(const char *who, pd_storage *s, void *stream);
/* The device handle of the stream that used s last (NULL for memory that is no device block). */
void *pd__device_block_last(const pd_storage *s);
/* pd__device_block_order on the thread's stream of s's device (NULL s: nothing). */
pd_status pd__device_order_on_current(const char *who, pd_storage *s);

/* --- pending.c: tensors an async call has not computed yet (completions: pending.h) --------- */
/* Drops the storage's completion (its last reference is going). */
void pd__storage_pending_drop(pd_storage *s);
/* Blocks until the storage's async call is done; its error (as the last error) if it failed. */
pd_status pd__storage_wait(const pd_storage *s);
/* What every host function that reads element data calls first: PD_OK at once for memory no
 * async call writes (one load), else pd__storage_wait. */
static inline pd_status pd__tensor_ready(const pd_tensor *t)
{
    if (t->storage == NULL ||
        atomic_load_explicit(&t->storage->pending, memory_order_acquire) == NULL)
        return PD_OK;
    return pd__storage_wait(t->storage);
}
#endif /* PD_TENSOR_INTERNAL_H */
