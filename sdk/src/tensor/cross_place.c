/*
 * cross_place.c - the one copy that copy_to, contiguous, cast and the runner's strided inputs
 * share when a tensor may live off the CPU: src's elements, any layout, densely into memory
 * on any place, converted to a data type.
 *
 * Host memory on both sides is layout.c's strided copy. A dense copy that keeps the dtype is
 * one device copy (device/device.c). A strided or converting copy within one device is the
 * device table's convert kernel where it has one (device/device_convert.c). Anything else
 * that touches a device is staged through host memory: the bytes src reaches are copied to the
 * host, converted there, and copied to the destination: what works for every device type,
 * at the cost of two transfers.
 */
#include "tensor/tensor_internal.h"

#include <stdlib.h>

/* src's elements in a host staging buffer: *host is a view of src over it (same shape,
 * strides and offset within the buffer); *stage is what to free. */
static pd_status stage_on_host(const char *who, const pd_tensor *src, pd_tensor *host, void **stage)
{
    int64_t lo = 0, hi = 0;
    if (!pd__tensor_span(src, &lo, &hi))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: src spans more bytes than fit", who);
    size_t bytes = (size_t)(hi - lo);
    unsigned char *buf = malloc(bytes ? bytes : 1);
    if (buf == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory staging %zu bytes", who, bytes);
    pd_status st = pd__device_copy(who, pd_place_cpu(), buf, src->place,
                                   (const unsigned char *)src->data + lo, bytes);
    if (st != PD_OK) {
        free(buf);
        return st;
    }
    *host = *src;
    host->data = buf - lo;
    host->place = pd_place_cpu();
    *stage = buf;
    return PD_OK;
}

pd_status pd__copy_across(const char *who, void *dst, pd_place dst_place, pd_data_type dst_type,
                          const pd_tensor *src)
{
    bool src_host = pd_place_is_host(src->place), dst_host = pd_place_is_host(dst_place);
    if (src_host && dst_host) {
        pd__copy_to_dense(dst, dst_type, src);
        return PD_OK;
    }
    /* The copy runs on the thread's stream of src's device: after the work of the stream
     * that used src's memory last, where that is another one. */
    pd_status ordered = src_host ? PD_OK : pd__device_order_on_current(who, src->storage);
    if (ordered != PD_OK)
        return ordered;
    size_t bytes = (size_t)pd_numel(src) * pd_dtype_size(dst_type);
    if (dst_type == src->dtype && pd_is_contiguous(src))
        return pd__device_copy(who, dst_place, dst, src->place, src->data, bytes);
    bool done = false; /* a strided or converting copy within one device: its kernel */
    pd_status converted = pd__device_convert(who, dst_place, dst, dst_type, src, &done);
    if (converted != PD_OK || done)
        return converted;
    pd_tensor host = *src;
    void *stage = NULL;
    pd_status st = src_host ? PD_OK : stage_on_host(who, src, &host, &stage);
    if (st == PD_OK && dst_host) {
        pd__copy_to_dense(dst, dst_type, &host);
    } else if (st == PD_OK) {
        void *dense = malloc(bytes ? bytes : 1);
        if (dense == NULL) {
            st = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory staging %zu bytes", who, bytes);
        } else {
            pd__copy_to_dense(dense, dst_type, &host);
            st = pd__device_copy(who, dst_place, dst, pd_place_cpu(), dense, bytes);
            free(dense);
        }
    }
    free(stage);
    return st;
}
