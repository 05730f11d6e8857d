/*
 * layout.c - where a tensor's elements are: dense strides, the byte range a (possibly
 * strided) tensor reaches and the check that it lies inside its storage, and the copy of a
 * strided tensor's elements into a dense buffer (with a dtype conversion on the way), which
 * pd_tensor_contiguous, pd_tensor_copy_to and pd_tensor_cast share.
 *
 * A tensor whose layout is PD_LAYOUT_DENSE is read as row-major whatever its strides array
 * holds (a host may have filled the struct by hand, leaving them 0): every reader here goes
 * through pd__tensor_strides, which says what the layout means.
 */
#include "tensor/tensor_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pd__tensor_strides(const pd_tensor *t, int64_t *strides)
{
    if (t->layout == PD_LAYOUT_DENSE) {
        pd__dense_strides(t->ndim, t->shape, strides);
        return;
    }
    for (int32_t d = 0; d < PD_MAX_DIMS; ++d)
        strides[d] = d < t->ndim ? t->strides[d] : 0;
}

bool pd__strides_are_dense(int32_t ndim, const int64_t *shape, const int64_t *strides)
{
    int64_t expect = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
        if (shape[d] == 0)
            return true; /* no elements: any strides describe them */
        if (shape[d] != 1 && strides[d] != expect)
            return false;
        expect *= shape[d];
    }
    return true;
}

void pd__tensor_set_layout(pd_tensor *t, const int64_t *strides)
{
    bool dense = pd__strides_are_dense(t->ndim, t->shape, strides);
    if (dense)
        pd__dense_strides(t->ndim, t->shape, t->strides);
    else
        for (int32_t d = 0; d < PD_MAX_DIMS; ++d)
            t->strides[d] = d < t->ndim ? strides[d] : 0;
    t->layout = dense ? PD_LAYOUT_DENSE : PD_LAYOUT_STRIDED;
}

bool pd__tensor_span(const pd_tensor *t, int64_t *lo, int64_t *hi)
{
    int64_t strides[PD_MAX_DIMS], low = 0, high = 0;
    pd__tensor_strides(t, strides);
    int64_t size = (int64_t)pd_dtype_size(t->dtype);
    for (int32_t d = 0; d < t->ndim; ++d) {
        if (t->shape[d] == 0) {
            *lo = *hi = 0;
            return true;
        }
    }
    for (int32_t d = 0; d < t->ndim; ++d) {
        int64_t reach;
        if (__builtin_mul_overflow(t->shape[d] - 1, strides[d], &reach))
            return false;
        if (reach < 0 ? __builtin_add_overflow(low, reach, &low)
                      : __builtin_add_overflow(high, reach, &high))
            return false;
    }
    if (__builtin_mul_overflow(low, size, &low) || __builtin_mul_overflow(high, size, &high) ||
        __builtin_add_overflow(high, size, &high))
        return false;
    *lo = low;
    *hi = high;
    return true;
}

pd_status pd__tensor_check_bounds(const char *who, const char *arg, const pd_tensor *t)
{
    if (t->storage == NULL)
        return PD_OK; /* a host's own memory: nothing to check it against */
    int64_t lo, hi;
    /* who NULL: no "who: " prefix (the runner puts the op's name in front itself). */
    const char *sep = who ? ": " : "";
    who = who ? who : "";
    if (!pd__tensor_span(t, &lo, &hi))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s%s%s has a shape and strides whose byte range overflows", who, sep, arg);
    if (lo == hi)
        return PD_OK; /* no elements */
    /* Compared as integers: the pointers need not point into one object. */
    int64_t at = (int64_t)((uintptr_t)t->data - (uintptr_t)t->storage->ptr);
    int64_t bytes = (int64_t)t->storage->bytes;
    if (at + lo < 0 || at > bytes || hi > bytes - at) {
        char shape[160], strides[160];
        int64_t st[PD_MAX_DIMS];
        pd__tensor_strides(t, st);
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s%s%s reaches bytes [%lld, %lld) of its storage, which holds %lld "
                        "bytes (shape %s, strides %s, data at byte %lld); expected a shape, "
                        "strides and offset that stay inside the storage",
                        who, sep, arg, (long long)(at + lo), (long long)(at + hi), (long long)bytes,
                        pd__dims_text(t->ndim, t->shape, shape, sizeof shape),
                        pd__dims_text(t->ndim, st, strides, sizeof strides), (long long)at);
    }
    return PD_OK;
}

const char *pd__dims_text(int32_t ndim, const int64_t *dims, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int32_t d = 0; d < ndim && used < size; ++d)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "",
                                 (long long)dims[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

/* --- Strided copies ------------------------------------------------------------------------ */

/* Up to this many bytes of a non-unit-stride row are gathered at a time before conversion. */
#define GATHER_BYTES 4096

/* Copies n elements of `size` bytes, `stride` elements apart, to dst densely. */
static void gather(unsigned char *dst, const unsigned char *src, int64_t n, int64_t stride,
                   size_t size)
{
    switch (size) {
#define GATHER_AS(T)                                  \
    {                                                 \
        T *d = (T *)(void *)dst;                      \
        const T *s = (const T *)(const void *)src;    \
        for (int64_t i = 0; i < n; ++i)               \
            memcpy(&d[i], &s[i * stride], sizeof(T)); \
        return;                                       \
    }
    case 1: GATHER_AS(uint8_t)
    case 2: GATHER_AS(uint16_t)
    case 4: GATHER_AS(uint32_t)
    case 8: GATHER_AS(uint64_t)
#undef GATHER_AS
    default:
        for (int64_t i = 0; i < n; ++i)
            memcpy(dst + (size_t)i * size, src + (size_t)(i * stride) * size, size);
        return;
    }
}

/* Side of the square tiles a transpose-like copy goes through: 16 rows of 16 elements keep
 * both the rows read and the rows written in L1. */
#define TILE 16

/* rows x cols elements, element [i, j] at src + (i * rs + j * cs) elements, to dst densely,
 * tile by tile. */
static void copy_tiled(unsigned char *dst, const unsigned char *src, int64_t rows, int64_t cols,
                       int64_t rs, int64_t cs, size_t size)
{
    for (int64_t i0 = 0; i0 < rows; i0 += TILE) {
        int64_t ie = i0 + TILE < rows ? i0 + TILE : rows;
        for (int64_t j0 = 0; j0 < cols; j0 += TILE) {
            int64_t je = j0 + TILE < cols ? j0 + TILE : cols;
            switch (size) {
#define TILE_AS(T)                                                        \
    {                                                                     \
        T *d = (T *)(void *)dst;                                          \
        const T *s = (const T *)(const void *)src;                        \
        for (int64_t i = i0; i < ie; ++i)                                 \
            for (int64_t j = j0; j < je; ++j)                             \
                memcpy(&d[i * cols + j], &s[i * rs + j * cs], sizeof(T)); \
        break;                                                            \
    }
            case 1: TILE_AS(uint8_t)
            case 2: TILE_AS(uint16_t)
            case 4: TILE_AS(uint32_t)
            case 8: TILE_AS(uint64_t)
#undef TILE_AS
            default:
                for (int64_t i = i0; i < ie; ++i)
                    for (int64_t j = j0; j < je; ++j)
                        memcpy(dst + (size_t)(i * cols + j) * size,
                               src + (size_t)(i * rs + j * cs) * size, size);
                break;
            }
        }
    }
}

void pd__copy_to_dense(void *dst, pd_data_type dst_type, const pd_tensor *src)
{
    int64_t numel = pd_numel(src);
    if (numel == 0)
        return;
    if (src->layout == PD_LAYOUT_DENSE) {
        pd__cast_elements(dst, dst_type, src->data, src->dtype, (size_t)numel);
        return;
    }
    /* Drop axes of size 1 and merge neighbours that are laid out as one axis, so a view
     * that is dense in its inner axes copies whole runs at once. */
    int64_t shape[PD_MAX_DIMS], strides[PD_MAX_DIMS];
    int32_t n = 0;
    for (int32_t d = 0; d < src->ndim; ++d) {
        if (src->shape[d] == 1)
            continue;
        if (n > 0 && strides[n - 1] == src->strides[d] * src->shape[d]) {
            shape[n - 1] *= src->shape[d];
            strides[n - 1] = src->strides[d];
            continue;
        }
        shape[n] = src->shape[d];
        strides[n] = src->strides[d];
        ++n;
    }
    if (n == 0) { /* one element */
        pd__cast_elements(dst, dst_type, src->data, src->dtype, 1);
        return;
    }
    size_t in_size = pd_dtype_size(src->dtype), out_size = pd_dtype_size(dst_type);
    int64_t inner = shape[n - 1], inner_stride = strides[n - 1];
    /* A transpose-like view (same dtype, the next axis closer in memory than the last) is
     * copied two axes at a time in tiles; anything else one row at a time. */
    bool tiled = dst_type == src->dtype && n >= 2 && inner_stride != 1 &&
                 llabs(strides[n - 2]) < llabs(inner_stride);
    int32_t outer = n - (tiled ? 2 : 1); /* axes the odometer walks */
    int64_t block = tiled ? shape[n - 2] * inner : inner;
    int64_t index[PD_MAX_DIMS] = {0};
    const unsigned char *row = src->data;
    unsigned char *out = dst;
    unsigned char buf[GATHER_BYTES] __attribute__((aligned(16)));
    int64_t chunk = (int64_t)(GATHER_BYTES / in_size);
    for (;;) {
        if (tiled) {
            copy_tiled(out, row, shape[n - 2], inner, strides[n - 2], inner_stride, in_size);
        } else if (inner_stride == 1) {
            pd__cast_elements(out, dst_type, row, src->dtype, (size_t)inner);
        } else if (dst_type == src->dtype) {
            gather(out, row, inner, inner_stride, in_size);
        } else {
            for (int64_t i = 0; i < inner; i += chunk) {
                int64_t k = inner - i < chunk ? inner - i : chunk;
                gather(buf, row + (size_t)(i * inner_stride) * in_size, k, inner_stride, in_size);
                pd__cast_elements(out + (size_t)i * out_size, dst_type, buf, src->dtype, (size_t)k);
            }
        }
        out += (size_t)block * out_size;
        /* The next block: an odometer over the outer axes. */
        int32_t d = outer - 1;
        for (; d >= 0; --d) {
            row += strides[d] * (int64_t)in_size;
            if (++index[d] < shape[d])
                break;
            row -= shape[d] * strides[d] * (int64_t)in_size;
            index[d] = 0;
        }
        if (d < 0)
            return;
    }
}
