/*
 * tensor.c - the host tensor API: constructors, copies and reference counting, and the
 * argument checks the tensor functions share. Views (slice, permute, expand, reshape, ...)
 * live in view.c, layouts and strided copies in layout.c, element conversion (cast, and the
 * value of full) in cast.c, memory and places in storage.c.
 *
 * Tensors off the CPU (pd_device.h) are made, filled and copied through their place's device
 * table: storage.c allocates, cross_place.c copies; device memory is never read here.
 *
 * Every public function validates all of its arguments before it allocates anything and
 * writes *out only at the very end, so a failed call changes nothing and leaks nothing.
 */
#include "tensor/tensor_internal.h"

#include <stdlib.h>
#include <string.h>

/* Most bytes one tensor may span: pointer differences inside it must stay defined. */
#define PD__MAX_BYTES ((uint64_t)PTRDIFF_MAX)

/* One of the 15 data types: pd_dtype_size() is 0 for PD_UNDEFINED and anything else. */
static bool dtype_valid(pd_data_type dtype) { return pd_dtype_size(dtype) != 0; }

pd_status pd__tensor_check_out(const char *who, const void *out)
{
    if (out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: out is NULL; pass the address of a pd_tensor",
                        who);
    return PD_OK;
}

/* `t` is defined, with a valid dtype and rank; with `need_memory`, initialized too. */
static pd_status check_tensor(const char *who, const char *arg, const pd_tensor *t,
                              bool need_memory)
{
    if (t == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, arg);
    if (!pd_defined(t))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s is an undefined tensor", who, arg);
    if (!dtype_valid(t->dtype))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s has dtype %d, which is not a pdext data type", who, arg,
                        (int)t->dtype);
    if (t->ndim < 0 || t->ndim > PD_MAX_DIMS)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s has ndim %d; expected 0..%d", who, arg,
                        (int)t->ndim, PD_MAX_DIMS);
    /* Memory a host lends (data without storage: a numpy or DLPack input of a Python call)
     * counts: views of it are storage-less too and live as long as the host's memory. */
    if (need_memory && t->storage == NULL && t->data == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s is not initialized (it has a dtype and shape but no memory)", who,
                        arg);
    return PD_OK;
}

/* A tensor whose elements or storage a function reads: also inside its storage, so that a
 * struct a host edited by hand cannot make the function read past it. */
pd_status pd__tensor_check_source(const char *who, const char *arg, const pd_tensor *t)
{
    pd_status st = check_tensor(who, arg, t, true);
    for (int32_t i = 0; st == PD_OK && i < t->ndim; ++i)
        if (t->shape[i] < 0)
            st = pd__fail(PD_ERR_INVALID_ARGUMENT,
                          "%s: %s has shape[%d] = %lld; dims must be "
                          ">= 0",
                          who, arg, (int)i, (long long)t->shape[i]);
    return st == PD_OK ? pd__tensor_check_bounds(who, arg, t) : st;
}

/* Makes *t a dense tensor over `storage` (whose reference it takes over), data at `data`.
 * Written field by field into *t rather than built and returned by value: a tensor is 176
 * bytes, and every op call makes one per output (the by-value form cost ~5 ns a call). */
static void tensor_make(pd_tensor *t, pd_storage *storage, void *data, pd_data_type dtype,
                        pd_place place, int32_t ndim, const int64_t *shape)
{
    t->data = data;
    t->storage = storage;
    t->dtype = dtype;
    t->ndim = ndim;
    t->place = place;
    t->layout = PD_LAYOUT_DENSE;
    t->reserved = 0;
    t->offset = 0;
    int64_t s = 1;
    for (int32_t d = PD_MAX_DIMS - 1; d >= 0; --d) {
        int64_t n = d < ndim ? shape[d] : 0;
        t->shape[d] = n;
        t->strides[d] = d < ndim ? s : 0;
        if (n > 0)
            s *= n;
    }
}

pd_tensor pd__tensor_view(const pd_tensor *src, void *data, int32_t ndim, const int64_t *shape,
                          const int64_t *strides)
{
    pd_tensor t;
    tensor_make(&t, src->storage, data, src->dtype, src->place, ndim, shape);
    pd__tensor_set_layout(&t, strides);
    if (src->storage == NULL) { /* lent memory: offsets count from the lender's first element */
        t.offset = src->offset + ((int64_t)((uintptr_t)data - (uintptr_t)src->data)) /
                                     (int64_t)pd_dtype_size(src->dtype);
        return t;
    }
    t.offset = (int64_t)((uintptr_t)data - (uintptr_t)src->storage->ptr) /
               (int64_t)pd_dtype_size(src->dtype);
    pd__storage_retain(src->storage);
    return t;
}

/* Fills n elements of `dtype` at dst with `value` converted once by cast.c's rules. */
static void fill(void *dst, pd_data_type dtype, size_t n, double value)
{
    size_t size = pd_dtype_size(dtype);
    unsigned char elem[16];
    pd__cast_elements(elem, dtype, &value, PD_FLOAT64, 1);
    size_t nbytes = n * size;
    bool all_same_byte = true;
    for (size_t i = 1; i < size; ++i)
        all_same_byte = all_same_byte && elem[i] == elem[0];
    if (all_same_byte) { /* zeros, bools, int8 / uint8, ...: memset is the fastest fill */
        memset(dst, elem[0], nbytes);
        return;
    }
    if (nbytes == 0)
        return;
    /* Doubling copies: log2(n) memcpy calls instead of n element stores. */
    unsigned char *d = dst;
    memcpy(d, elem, size);
    for (size_t done = size; done < nbytes;) {
        size_t chunk = done < nbytes - done ? done : nbytes - done;
        memcpy(d + done, d, chunk);
        done += chunk;
    }
}

/* fill for a tensor in device memory: one device memset when every byte of the value is the
 * same (zeros, ...), else the value filled on the host and copied over. */
static __attribute__((noinline)) pd_status device_fill(const char *who, pd_tensor *t, double value)
{
    size_t size = pd_dtype_size(t->dtype), n = (size_t)pd_numel(t);
    unsigned char elem[16];
    pd__cast_elements(elem, t->dtype, &value, PD_FLOAT64, 1);
    bool all_same_byte = true;
    for (size_t i = 1; i < size; ++i)
        all_same_byte = all_same_byte && elem[i] == elem[0];
    if (all_same_byte)
        return pd__device_memset(who, t->place, t->data, elem[0], n * size);
    void *host = malloc(n * size);
    if (host == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory staging %zu bytes", who, n * size);
    fill(host, t->dtype, n, value);
    pd_status st = pd__device_copy(who, t->place, t->data, pd_place_cpu(), host, n * size);
    free(host);
    return st;
}

pd_status pd__rank_check(const char *who, int32_t ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > PD_MAX_DIMS)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: ndim is %d; expected 0..%d", who, (int)ndim,
                        PD_MAX_DIMS);
    if (ndim > 0 && shape == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: shape is NULL but ndim is %d", who,
                        (int)ndim);
    return PD_OK;
}

pd_status pd__shape_check(const char *who, pd_data_type dtype, int32_t ndim, const int64_t *shape,
                          size_t *bytes)
{
    size_t n;
    if (pd__shape_bytes(dtype, ndim, shape, &n)) {
        if (bytes != NULL)
            *bytes = n;
        return PD_OK;
    }
    if (!dtype_valid(dtype)) {
        if (dtype == PD_UNDEFINED)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: dtype is PD_UNDEFINED; expected a data type such as PD_FLOAT32",
                            who);
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: dtype %d is not a pdext data type (expected 1..%d)", who, (int)dtype,
                        PD_NUM_DTYPES - 1);
    }
    pd_status st = pd__rank_check(who, ndim, shape);
    if (st != PD_OK)
        return st;
    for (int32_t i = 0; i < ndim; ++i)
        if (shape[i] < 0)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: shape[%d] is %lld; dimensions must be >= 0", who, (int)i,
                            (long long)shape[i]);
    /* The product of the non-zero dimensions must fit, so that pd_numel never overflows
     * whatever the order of the dimensions. */
    uint64_t count = 1;
    bool empty = false;
    for (int32_t i = 0; i < ndim; ++i) {
        if (shape[i] == 0) {
            empty = true;
            continue;
        }
        if (__builtin_mul_overflow(count, (uint64_t)shape[i], &count) ||
            count > PD__MAX_BYTES / pd_dtype_size(dtype))
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: shape is too large: the byte size of %s elements up to shape[%d] "
                            "= %lld overflows",
                            who, pd_dtype_name(dtype), (int)i, (long long)shape[i]);
    }
    if (bytes != NULL)
        *bytes = empty ? 0 : (size_t)count * pd_dtype_size(dtype);
    return PD_OK;
}

/* empty without the out check, for the constructors that share it. */
static pd_status tensor_new(const char *who, pd_tensor *out, pd_data_type dtype, pd_place place,
                            int32_t ndim, const int64_t *shape)
{
    size_t bytes = 0; /* set by pd__shape_check; -O3 cannot see it */
    pd_storage *storage;
    pd_status st = pd__tensor_check_out(who, out);
    if (st == PD_OK)
        st = pd__shape_check(who, dtype, ndim, shape, &bytes);
    if (st == PD_OK)
        st = pd__storage_new(who, place, bytes, &storage);
    if (st != PD_OK)
        return st;
    tensor_make(out, storage, storage->ptr, dtype, place, ndim, shape);
    return PD_OK;
}

static pd_status tensor_full(const char *who, pd_tensor *out, pd_data_type dtype, pd_place place,
                             int32_t ndim, const int64_t *shape, double value)
{
    pd_tensor t;
    pd_status st = pd__tensor_check_out(who, out);
    if (st == PD_OK)
        st = tensor_new(who, &t, dtype, place, ndim, shape);
    if (st != PD_OK)
        return st;
    if (pd_place_is_host(place))
        fill(t.data, dtype, (size_t)pd_numel(&t), value);
    else if ((st = device_fill(who, &t, value)) != PD_OK)
        pd_tensor_release(&t);
    if (st == PD_OK)
        *out = t;
    return st;
}

/* --- Constructors -------------------------------------------------------------------------- */

pd_status pd_tensor_empty(pd_tensor *out, pd_data_type dtype, pd_place place, int32_t ndim,
                          const int64_t *shape)
{
    return tensor_new("pd_tensor_empty", out, dtype, place, ndim, shape);
}

pd_status pd_tensor_full(pd_tensor *out, pd_data_type dtype, pd_place place, int32_t ndim,
                         const int64_t *shape, double value)
{
    return tensor_full("pd_tensor_full", out, dtype, place, ndim, shape, value);
}

pd_status pd_tensor_zeros(pd_tensor *out, pd_data_type dtype, pd_place place, int32_t ndim,
                          const int64_t *shape)
{
    return tensor_full("pd_tensor_zeros", out, dtype, place, ndim, shape, 0.0);
}

pd_status pd_tensor_ones(pd_tensor *out, pd_data_type dtype, pd_place place, int32_t ndim,
                         const int64_t *shape)
{
    return tensor_full("pd_tensor_ones", out, dtype, place, ndim, shape, 1.0);
}

pd_status pd_tensor_empty_like(pd_tensor *out, const pd_tensor *like)
{
    static const char who[] = "pd_tensor_empty_like";
    pd_status st = check_tensor(who, "like", like, false);
    if (st != PD_OK)
        return st;
    return tensor_new(who, out, like->dtype, like->place, like->ndim, like->shape);
}

pd_status pd_tensor_full_like(pd_tensor *out, const pd_tensor *like, double value)
{
    static const char who[] = "pd_tensor_full_like";
    pd_status st = check_tensor(who, "like", like, false);
    if (st != PD_OK)
        return st;
    return tensor_full(who, out, like->dtype, like->place, like->ndim, like->shape, value);
}

pd_status pd_tensor_from_buffer(pd_tensor *out, void *data, pd_data_type dtype, pd_place place,
                                int32_t ndim, const int64_t *shape, pd_deleter_fn deleter,
                                void *user)
{
    static const char who[] = "pd_tensor_from_buffer";
    size_t bytes = 0; /* set by pd__shape_check; -O3 cannot see it */
    pd_status st = pd__tensor_check_out(who, out);
    if (st == PD_OK)
        st = pd__shape_check(who, dtype, ndim, shape, &bytes);
    if (st != PD_OK)
        return st;
    if (data == NULL && bytes > 0)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: data is NULL for %zu bytes of %s", who, bytes,
                        pd_dtype_name(dtype));
    /* Kernels index data as an array of the element type: it must be aligned as one. */
    size_t align = pd_dtype_is_complex(dtype) ? pd_dtype_size(dtype) / 2 : pd_dtype_size(dtype);
    if ((uintptr_t)data % align != 0)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: data %p is not aligned to %zu bytes, as %s elements need", who, data,
                        align, pd_dtype_name(dtype));
    pd_storage *storage;
    st = pd__storage_wrap(who, place, data, bytes, deleter, user, &storage);
    if (st != PD_OK)
        return st;
    tensor_make(out, storage, data, dtype, place, ndim, shape);
    return PD_OK;
}

/* --- Copies and views ---------------------------------------------------------------------- */

pd_status pd_tensor_copy_to(pd_tensor *out, const pd_tensor *src, pd_place place)
{
    static const char who[] = "pd_tensor_copy_to";
    pd_status st = pd__tensor_check_out(who, out);
    if (st == PD_OK)
        st = pd__tensor_check_source(who, "src", src);
    if (st == PD_OK)
        st = pd__tensor_ready(src); /* an async call may still be writing it */
    pd_tensor t;
    if (st == PD_OK && !pd_place_is_host(src->place) && pd__device_of(who, src->place) == NULL)
        st = pd_last_status();
    if (st == PD_OK)
        st = tensor_new(who, &t, src->dtype, place, src->ndim, src->shape);
    if (st != PD_OK)
        return st;
    st = pd__copy_across(who, t.data, place, t.dtype, src);
    if (st != PD_OK) {
        pd_tensor_release(&t);
        return st;
    }
    *out = t;
    return PD_OK;
}

/* --- References ---------------------------------------------------------------------------- */

void pd_tensor_retain(pd_tensor *dst, const pd_tensor *src)
{
    if (dst == NULL)
        return;
    if (src == NULL) {
        memset(dst, 0, sizeof *dst);
        return;
    }
    if (src->storage != NULL)
        pd__storage_retain(src->storage);
    *dst = *src;
}

void pd_tensor_release(pd_tensor *t)
{
    if (t == NULL)
        return;
    pd__storage_release(t->storage);
    pd__tensor_clear(t);
}

int64_t pd_tensor_use_count(const pd_tensor *t)
{
    if (t == NULL || !pd_defined(t))
        return 0;
    return pd__storage_use_count(t->storage);
}
