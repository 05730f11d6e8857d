/*
 * dev_streams.c - the device streams of the executor's streams (executor_internal.h). Each
 * executor stream runs its device calls on a stream of its own per device, made on first use
 * and destroyed with the executor, so that the device work of two executor streams may
 * overlap as their host work does. Between them, events carry the order (submit.c waits for
 * another stream's event on the device, not on the host), and the device cache learns which
 * streams used a block, so that it reuses none under queued work (tensor/device_cache.c).
 */
#include "exec/executor_internal.h"

static int32_t stream_index(const pd__exec_stream *st) { return (int32_t)(st - st->ex->streams); }

pd_status pd__exec_device_stream(pd__exec_stream *st, pd_place place, pd_stream_t **out)
{
    pd_status s = PD_OK;
    pthread_mutex_lock(&st->dev_mu);
    int32_t i = 0;
    while (i < st->n_dev &&
           !(st->dev[i].place.type == place.type && st->dev[i].place.device_id == place.device_id))
        ++i;
    if (i == st->n_dev) {
        char name[96];
        pd__place_format(place, name, sizeof name);
        if (st->n_dev == PD__EXEC_DEVICES)
            s = pd__fail(PD_ERR_UNAVAILABLE,
                         "executor stream %d has run calls on %d devices, the most it may; "
                         "submit the calls for %s to another executor stream",
                         (int)stream_index(st), PD__EXEC_DEVICES, name);
        else if ((s = pd_stream_create(place, &st->dev[i].stream)) != PD_OK)
            pd__fail_prefix("executor stream %d cannot make its stream on %s: ",
                            (int)stream_index(st), name);
        else
            st->dev[st->n_dev++].place = place;
    }
    *out = s == PD_OK ? st->dev[i].stream : NULL;
    pthread_mutex_unlock(&st->dev_mu);
    return s;
}

pd_status pd__exec_device_synchronize(pd__exec_stream *st)
{
    /* The streams are taken under the lock and waited for outside it, so that submitters
     * of this executor stream are not held up for as long as its device work runs (a
     * stream lives as long as the executor). */
    pd_stream_t *streams[PD__EXEC_DEVICES];
    pthread_mutex_lock(&st->dev_mu);
    int32_t n = st->n_dev;
    for (int32_t i = 0; i < n; ++i)
        streams[i] = st->dev[i].stream;
    pthread_mutex_unlock(&st->dev_mu);
    pd_status first = PD_OK;
    for (int32_t i = 0; i < n; ++i) {
        pd_status s = pd_stream_synchronize(streams[i]);
        if (first == PD_OK)
            first = s;
    }
    return first;
}

void pd__exec_device_streams_free(pd__exec_stream *st)
{
    for (int32_t i = 0; i < st->n_dev; ++i)
        (void)pd_stream_destroy(st->dev[i].stream); /* waits for its work */
    st->n_dev = 0;
}
