/*
 * device_convert.c - strided copies and dtype conversions that stay on one device: the
 * table's optional convert member (pd_device.h), behind pd_tensor_contiguous, pd_tensor_cast,
 * copy_to within a device and the runner's dense copies of strided device inputs. It is
 * tried before cross_place.c's staging through host memory, which costs two transfers; a
 * table without the member, or one that answers PD_ERR_UNAVAILABLE for this pair of dtypes
 * or this view, gets the staging.
 *
 * The conversion is enqueued on the thread's stream of the device, like a device-to-device
 * copy: it returns before the device has done it, and work later queued on that stream (or a
 * read from the host, which synchronizes) sees the result.
 */
#include "device/device_internal.h"

pd_status pd__device_convert(const char *who, pd_place dst_place, void *dst, pd_data_type dst_type,
                             const pd_tensor *src, bool *done)
{
    *done = false;
    if (pd_place_is_host(dst_place) || !pd_place_equal(dst_place, src->place))
        return PD_OK;
    pd__device *d = pd__device_of(who, dst_place);
    if (d == NULL)
        return pd_last_status();
    const pd_device_table *t = d->table;
    if (!PD__DEVICE_HAS(t, convert))
        return PD_OK;
    if (pd_numel(src) == 0) {
        *done = true;
        return PD_OK;
    }
    int64_t strides[PD_MAX_DIMS];
    for (int32_t k = 0; k < src->ndim; ++k)
        strides[k] = pd_stride(src, k);
    pd_device_stream stream = NULL;
    pd_status st = pd__device_stream_of(who, d, dst_place, &stream);
    if (st != PD_OK)
        return st;
    st = t->convert(t->user, dst_place.device_id, dst, dst_type, src->data, src->dtype, src->ndim,
                    src->shape, strides, stream);
    if (st == PD_ERR_UNAVAILABLE)
        return PD_OK; /* not this pair or view: the caller stages through the host */
    if (st != PD_OK)
        return pd__device_failed(who, d, dst_place, "convert", st);
    *done = true;
    return PD_OK;
}
