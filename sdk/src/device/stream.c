/*
 * stream.c - streams and events as hosts see them (pd_stream_t, pd_event_t in pd_device.h):
 * a device's handle plus the place it belongs to, the thread's current stream per device,
 * each device's default stream, and the stream an op call runs on (pd_stream(ctx)).
 *
 * Every op call and every copy runs on a stream: the thread's current one for the device
 * (pd_stream_set_current), else the device's default stream. Default streams are made on
 * first use, one per device, and live as long as the process (as CUDA's default stream
 * does); they are published with a release store, so finding one takes no lock.
 *
 * The current streams are per thread: a small array of (place, stream) pairs, since a thread
 * rarely works on more than a device or two.
 */
#include "device/device_internal.h"

#include <stdlib.h>

struct pd_stream_t {
    pd_place place;
    pd__device *device;
    pd_device_stream handle;
    bool is_default; /* the device's own: never destroyed */
    bool borrowed;   /* pd_stream_wrap: the handle belongs to the host, which destroys it */
};

struct pd_event_t {
    pd_place place;
    pd__device *device;
    pd_device_event handle;
};

#define CURRENT_MAX 8 /* devices a thread may have a current stream for at once */

static _Thread_local struct {
    pd_place place;
    pd_stream_t *stream;
} current[CURRENT_MAX];
static _Thread_local int current_count;

static pd_status failed(const char *who, const pd__device *d, pd_place place, const char *op,
                        pd_status st)
{
    return st == PD_OK ? PD_OK : pd__device_failed(who, d, place, op, st);
}

/* A new stream object for place's device (d) into *out. */
static pd_status stream_new(const char *who, pd__device *d, pd_place place, bool is_default,
                            pd_stream_t **out)
{
    pd_stream_t *s = malloc(sizeof *s);
    if (s == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    s->place = pd_place_make(d->type, place.device_id);
    s->device = d;
    s->is_default = is_default;
    s->borrowed = false;
    pd_status st = d->table->stream_create(d->table->user, place.device_id, &s->handle);
    if (st != PD_OK) {
        free(s);
        return failed(who, d, place, "stream_create", st);
    }
    if (pd__device_stream_born(d, s->handle) != PD_OK) {
        (void)d->table->stream_destroy(d->table->user, place.device_id, s->handle);
        free(s);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
    *out = s;
    return PD_OK;
}

/* The default stream of place's device, made on first use. */
static pd_status default_stream(const char *who, pd__device *d, pd_place place, pd_stream_t **out)
{
    _Atomic(pd_stream_t *) *slot = &d->defaults[place.device_id];
    pd_stream_t *s = atomic_load_explicit(slot, memory_order_acquire);
    pd_status st = PD_OK;
    if (s == NULL) {
        /* A lock of its own: making the stream registers it with the cache under d->lock. */
        static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;
        pthread_mutex_lock(&making);
        s = atomic_load_explicit(slot, memory_order_relaxed);
        if (s == NULL && (st = stream_new(who, d, place, true, &s)) == PD_OK)
            atomic_store_explicit(slot, s, memory_order_release);
        pthread_mutex_unlock(&making);
    }
    *out = s;
    return st;
}

/* The thread's stream for place's device (current or default). */
static pd_status stream_for(const char *who, pd__device *d, pd_place place, pd_stream_t **out)
{
    int32_t type = d->type;
    for (int i = 0; i < current_count; ++i)
        if (current[i].place.type == type && current[i].place.device_id == place.device_id) {
            *out = current[i].stream;
            return PD_OK;
        }
    return default_stream(who, d, place, out);
}

pd_status pd__device_stream_of(const char *who, pd__device *d, pd_place place,
                               pd_device_stream *handle)
{
    pd_stream_t *s = NULL;
    pd_status st = stream_for(who, d, place, &s);
    if (st == PD_OK)
        *handle = s->handle;
    return st;
}

/* --- Host API: streams --------------------------------------------------------------------- */

static pd_status need(const char *who, const char *arg, const void *p)
{
    return p ? PD_OK : pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, arg);
}

/* A device place (not host memory) whose device is usable, into *d. */
static pd_status device_place(const char *who, pd_place place, pd__device **d)
{
    if (pd_place_is_host(place)) {
        char name[96];
        pd__place_format(place, name, sizeof name);
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: place %s is host memory, which has no streams; pass a device place "
                        "(pd_place_gpu, pd_place_custom)",
                        who, name);
    }
    *d = pd__device_of(who, place);
    return *d ? PD_OK : pd_last_status();
}

pd_status pd_stream_create(pd_place place, pd_stream_t **out)
{
    static const char who[] = "pd_stream_create";
    pd__device *d = NULL;
    pd_status st = need(who, "out", out);
    if (st == PD_OK)
        st = device_place(who, place, &d);
    return st == PD_OK ? stream_new(who, d, place, false, out) : st;
}

pd_status pd_stream_wrap(pd_place place, pd_device_stream handle, pd_stream_t **out)
{
    static const char who[] = "pd_stream_wrap";
    pd__device *d = NULL;
    pd_status st = need(who, "out", out);
    if (st == PD_OK)
        st = need(who,
                  "handle (the device's stream; the device's default stream is "
                  "pd_stream_current's when no stream is set)",
                  handle);
    if (st == PD_OK)
        st = device_place(who, place, &d);
    if (st != PD_OK)
        return st;
    pd_stream_t *s = malloc(sizeof *s);
    if (s == NULL || pd__device_stream_born(d, handle) != PD_OK) {
        free(s);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
    s->place = pd_place_make(d->type, place.device_id);
    s->device = d;
    s->handle = handle;
    s->is_default = false;
    s->borrowed = true;
    *out = s;
    return PD_OK;
}

pd_status pd_stream_destroy(pd_stream_t *s)
{
    static const char who[] = "pd_stream_destroy";
    if (s == NULL || s->is_default)
        return PD_OK;
    for (int i = 0; i < current_count; ++i)
        if (current[i].stream == s)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: the stream is this thread's current stream; set another "
                            "(pd_stream_set_current(place, NULL)) first",
                            who);
    const pd_device_table *t = s->device->table;
    int32_t id = s->place.device_id;
    pd_status st = t->stream_synchronize(t->user, id, s->handle);
    pd__device_stream_gone(s->device, s->handle);
    pd_status st2 = s->borrowed ? PD_OK : t->stream_destroy(t->user, id, s->handle);
    pd__device *d = s->device;
    pd_place place = s->place;
    free(s);
    if (st != PD_OK)
        return failed(who, d, place, "stream_synchronize", st);
    return failed(who, d, place, "stream_destroy", st2);
}

pd_status pd_stream_synchronize(pd_stream_t *s)
{
    static const char who[] = "pd_stream_synchronize";
    pd_status st = need(who, "stream", s);
    if (st != PD_OK)
        return st;
    const pd_device_table *t = s->device->table;
    return failed(who, s->device, s->place, "stream_synchronize",
                  t->stream_synchronize(t->user, s->place.device_id, s->handle));
}

pd_status pd_stream_query(pd_stream_t *s, bool *done)
{
    static const char who[] = "pd_stream_query";
    pd_status st = need(who, "stream", s);
    if (st == PD_OK)
        st = need(who, "done", done);
    if (st != PD_OK)
        return st;
    const pd_device_table *t = s->device->table;
    return failed(who, s->device, s->place, "stream_query",
                  t->stream_query(t->user, s->place.device_id, s->handle, done));
}

pd_status pd_stream_set_current(pd_place place, pd_stream_t *s)
{
    static const char who[] = "pd_stream_set_current";
    pd__device *d = NULL;
    pd_status st = device_place(who, place, &d);
    if (st != PD_OK)
        return st;
    pd_place key = pd_place_make(d->type, place.device_id);
    if (s != NULL && !pd_place_equal(s->place, key)) {
        char a[96], b[96];
        pd__place_format(s->place, a, sizeof a);
        pd__place_format(place, b, sizeof b);
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the stream belongs to %s, not to %s; a stream serves only its own "
                        "device",
                        who, a, b);
    }
    int i = 0;
    while (i < current_count && !pd_place_equal(current[i].place, key))
        ++i;
    if (s == NULL) { /* back to the default: drop the entry */
        if (i < current_count)
            current[i] = current[--current_count];
        return PD_OK;
    }
    if (i == current_count) {
        if (current_count == CURRENT_MAX)
            return pd__fail(PD_ERR_UNAVAILABLE,
                            "%s: this thread has current streams on %d devices already, the most "
                            "it may have; reset one with pd_stream_set_current(place, NULL)",
                            who, CURRENT_MAX);
        ++current_count;
    }
    current[i].place = key;
    current[i].stream = s;
    return PD_OK;
}

pd_stream_t *pd_stream_current(pd_place place)
{
    static const char who[] = "pd_stream_current";
    pd__device *d = NULL;
    pd_stream_t *s = NULL;
    if (device_place(who, place, &d) != PD_OK || stream_for(who, d, place, &s) != PD_OK)
        return NULL;
    return s;
}

pd_device_stream pd_stream_handle(const pd_stream_t *s) { return s ? s->handle : NULL; }

pd_place pd_stream_place(const pd_stream_t *s)
{
    return s ? s->place : pd_place_make(PD_PLACE_UNDEFINED, 0);
}

pd_stream_t *pd__stream_chosen(pd_place place)
{
    for (int i = 0; i < current_count; ++i)
        if (current[i].place.type == place.type && current[i].place.device_id == place.device_id)
            return current[i].stream;
    return NULL;
}

pd_status pd_device_synchronize(pd_place place)
{
    static const char who[] = "pd_device_synchronize";
    if (pd_place_is_host(place) && place.type == PD_PLACE_CPU)
        return PD_OK;
    pd__device *d = NULL;
    pd_stream_t *s = NULL;
    pd_status st = device_place(who, place, &d);
    if (st == PD_OK)
        st = stream_for(who, d, place, &s);
    if (st != PD_OK)
        return st;
    /* The default stream and this thread's current one: the streams pdext itself queues on. */
    const pd_device_table *t = d->table;
    pd_stream_t *def = atomic_load_explicit(&d->defaults[place.device_id], memory_order_acquire);
    st = t->stream_synchronize(t->user, place.device_id, s->handle);
    if (st == PD_OK && def != NULL && def != s)
        st = t->stream_synchronize(t->user, place.device_id, def->handle);
    return failed(who, d, place, "stream_synchronize", st);
}

/* --- Host API: events ---------------------------------------------------------------------- */

pd_status pd_event_create(pd_place place, pd_event_t **out)
{
    static const char who[] = "pd_event_create";
    pd__device *d = NULL;
    pd_status st = need(who, "out", out);
    if (st == PD_OK)
        st = device_place(who, place, &d);
    if (st != PD_OK)
        return st;
    pd_event_t *e = malloc(sizeof *e);
    if (e == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    e->place = pd_place_make(d->type, place.device_id);
    e->device = d;
    st = d->table->event_create(d->table->user, place.device_id, &e->handle);
    if (st != PD_OK) {
        free(e);
        return failed(who, d, place, "event_create", st);
    }
    *out = e;
    return PD_OK;
}

pd_status pd_event_destroy(pd_event_t *e)
{
    if (e == NULL)
        return PD_OK;
    const pd_device_table *t = e->device->table;
    pd_status st = t->event_destroy(t->user, e->place.device_id, e->handle);
    pd__device *d = e->device;
    pd_place place = e->place;
    free(e);
    return failed("pd_event_destroy", d, place, "event_destroy", st);
}

/* The event and the stream exist and belong to the same device. */
static pd_status same_device(const char *who, const pd_event_t *e, const pd_stream_t *s)
{
    pd_status st = need(who, "event", e);
    if (st == PD_OK)
        st = need(who, "stream", s);
    if (st == PD_OK && !pd_place_equal(e->place, s->place)) {
        char a[96], b[96];
        pd__place_format(e->place, a, sizeof a);
        pd__place_format(s->place, b, sizeof b);
        st = pd__fail(PD_ERR_INVALID_ARGUMENT,
                      "%s: the event belongs to %s but the stream to %s; both must be of one "
                      "device",
                      who, a, b);
    }
    return st;
}

pd_status pd_event_record(pd_event_t *e, pd_stream_t *s)
{
    static const char who[] = "pd_event_record";
    pd_status st = same_device(who, e, s);
    if (st != PD_OK)
        return st;
    const pd_device_table *t = e->device->table;
    return failed(who, e->device, e->place, "event_record",
                  t->event_record(t->user, e->place.device_id, e->handle, s->handle));
}

pd_status pd_event_wait(pd_stream_t *s, pd_event_t *e)
{
    static const char who[] = "pd_event_wait";
    pd_status st = same_device(who, e, s);
    if (st != PD_OK)
        return st;
    const pd_device_table *t = e->device->table;
    return failed(who, e->device, e->place, "event_wait",
                  t->event_wait(t->user, e->place.device_id, s->handle, e->handle));
}

pd_status pd_event_synchronize(pd_event_t *e)
{
    static const char who[] = "pd_event_synchronize";
    pd_status st = need(who, "event", e);
    if (st != PD_OK)
        return st;
    const pd_device_table *t = e->device->table;
    return failed(who, e->device, e->place, "event_synchronize",
                  t->event_synchronize(t->user, e->place.device_id, e->handle));
}

/* --- Which stream handles exist (the device cache asks, device_cache.c) ----------------- */

/* Whether `stream` is a stream of d that exists; under d->lock. */
bool pd__device_stream_live(const pd__device *d, const void *stream)
{
    for (int32_t i = 0; i < d->n_live_streams; ++i)
        if (d->live_streams[i] == stream)
            return true;
    return false;
}

pd_status pd__device_stream_born(pd__device *d, void *stream)
{
    pd_status st = PD_OK;
    pthread_mutex_lock(&d->lock);
    if (d->n_live_streams == d->cap_live_streams) {
        int32_t cap = d->cap_live_streams ? 2 * d->cap_live_streams : 16;
        void **grown = realloc(d->live_streams, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            st = PD_ERR_OUT_OF_MEMORY;
        } else {
            d->live_streams = grown;
            d->cap_live_streams = cap;
        }
    }
    if (st == PD_OK)
        d->live_streams[d->n_live_streams++] = stream;
    pthread_mutex_unlock(&d->lock);
    return st;
}

void pd__device_stream_gone(pd__device *d, void *stream)
{
    pthread_mutex_lock(&d->lock);
    for (int32_t i = 0; i < d->n_live_streams; ++i)
        if (d->live_streams[i] == stream) {
            d->live_streams[i] = d->live_streams[--d->n_live_streams];
            break;
        }
    pthread_mutex_unlock(&d->lock);
}
