/*
 * device_cache.c - the caching allocator of device memory, one cache per device, in front of
 * every device table's alloc and free (as PyTorch's CUDACachingAllocator is in front of
 * cudaMalloc): a tensor's memory comes back here when its last reference goes, and the next
 * allocation of a similar size takes it without calling the device.
 *
 * Stream safety. Work that uses a block may still be queued when the tensor dies. A block
 * therefore remembers the stream it was allocated on (the thread's stream of the device at
 * that time, which the op calls and copies that used it ran on), and is reused at once only
 * by an allocation on that same stream: the stream's order puts the new work after the old.
 * An allocation on another stream takes it only once stream_query says its stream is idle.
 * Work queued on other streams that used the block is recorded on it (USED_ON_MAX
 * streams, pd__device_record_stream: the executor's streams do it, hosts with
 * pd_tensor_record_stream, as with CUDA's record_stream), and the block is reused only once
 * each of those streams is idle too, even by an allocation on its own stream, which their
 * work is not ordered with. A block used on more streams than it remembers waits, when it
 * dies, for every stream of its device.
 *
 * Order between streams. A block also remembers the stream that used it last. An op call or
 * a copy about to use it on another stream makes that stream wait for the last one (one
 * event, recorded there and waited for here: no host synchronization) and notes the new
 * stream for the cache. Calls that stay on one stream, a host's or pdext's, make no device
 * call for it at all.
 *
 * Sizes. Requests round up to 512 bytes (to 2 MiB from 1 MiB up), and a cached block serves a
 * request of at least half its size, so blocks of one shape of tensor meet again. The cache
 * holds at most PDEXT_DEVICE_CACHE_MB MiB per device (default 1024; 0 turns caching off);
 * pd_device_cache_release empties it, and an allocation that finds the device out of memory
 * empties it and tries once more.
 *
 * Pinned host memory (GPU-pinned places: cudaHostAlloc behind the table's host_alloc) is
 * cached the same way, in one list per device type: page-locking memory costs far more than
 * a malloc, so a pinned staging buffer made per copy would eat what pinning gains. Its
 * blocks have no stream: a copy from or to host memory synchronizes before it returns, so
 * a pinned block is idle once its tensor is dead. Kernels that read pinned memory through
 * its device mapping are the host's to synchronize before releasing the tensor.
 *
 * The cached block is the storage header itself (with the device memory it points at), kept
 * on a list through dev->cache_next, so that taking one from the cache allocates nothing.
 */
#include "tensor/tensor_internal.h"

#include <stdlib.h>
#include <string.h>

#define USED_ON_MAX 2 /* streams besides its own a block remembers (see above) */

/* What the cache knows of a block of device memory, behind pd_storage.dev: only this file
 * reads or writes it (under the device's lock where it says so). */
struct pd__device_block {
    /* The device table the memory came from (alloc, or host_alloc for GPU-pinned) and goes
     * back to. */
    pd__device *device;
    /* The device handle of the stream it was allocated on, which the cache reuses it on;
     * NULL for pinned memory. */
    void *stream;
    /* The next cached block while cached. */
    pd_storage *cache_next;
    /* Other streams of its device that work using it was queued on (pd_tensor_record_stream,
     * the executor's streams), under the device's lock; `used_on_more`: more streams than
     * the slots hold (the cache then waits for all of the device's streams). */
    void *used_on[USED_ON_MAX];
    bool used_on_more;
    /* The stream the last op call or copy that used it was queued on (the one it was
     * allocated on until another uses it; NULL for pinned memory): a use on another stream
     * waits for that one first (pd__device_block_order). */
    _Atomic(void *) last;
};

/* A device block's storage header and the cache's record of it, in one malloc: the cached
 * block is the header itself, kept on a list through dev->cache_next, so that taking one
 * from the cache allocates nothing. */
typedef struct block {
    pd_storage header;
    struct pd__device_block dev;
} block;

#define SMALL_ROUND ((size_t)512)
#define LARGE_ROUND ((size_t)2 << 20)
#define LARGE_FROM ((size_t)1 << 20)

static size_t cache_limit(void)
{
    static _Atomic size_t limit = (size_t)-1;
    size_t v = atomic_load_explicit(&limit, memory_order_relaxed);
    if (v == (size_t)-1) {
        const char *env = getenv("PDEXT_DEVICE_CACHE_MB");
        char *end = NULL;
        unsigned long long mb = env && *env ? strtoull(env, &end, 10) : 1024;
        if (env && *env && (end == env || *end != '\0'))
            mb = 1024; /* not a number: keep the default rather than guess */
        v = mb > (SIZE_MAX >> 21) ? SIZE_MAX >> 1 : (size_t)mb << 20;
        atomic_store_explicit(&limit, v, memory_order_relaxed);
    }
    return v;
}

static size_t round_size(size_t bytes)
{
    size_t r = bytes < LARGE_FROM ? SMALL_ROUND : LARGE_ROUND;
    if (bytes == 0)
        return SMALL_ROUND;
    return bytes > SIZE_MAX - r ? bytes : (bytes + r - 1) / r * r;
}

void pd__device_record_stream(pd_storage *s, void *stream)
{
    /* host or pinned memory (whose copies synchronize), or the block's own stream (set when
     * it was allocated, not changed while it lives: no lock needed to compare) */
    if (s->dev == NULL || s->place.type == PD_PLACE_GPU_PINNED || stream == NULL ||
        s->dev->stream == stream)
        return;
    pd__device *d = s->dev->device;
    pthread_mutex_lock(&d->lock);
    int32_t k = 0, free_slot = -1;
    for (; k < USED_ON_MAX && s->dev->used_on[k] != stream; ++k)
        if (s->dev->used_on[k] == NULL && free_slot < 0)
            free_slot = k;
    if (k == USED_ON_MAX) { /* not noted yet */
        if (free_slot >= 0)
            s->dev->used_on[free_slot] = stream;
        else
            s->dev->used_on_more = true;
    }
    pthread_mutex_unlock(&d->lock);
}

/* Makes `stream` wait for the work queued on `last` so far (both streams of d's device
 * `place`): one event, made for this and given back once the wait is queued (a device keeps
 * what a queued wait needs, as cudaEventDestroy does). Moves between streams are rare next to
 * the calls on one stream, which make none. Nothing when `last` no longer exists (destroyed
 * after finishing its work). */
static pd_status wait_for_stream(const char *who, pd__device *d, pd_place place, void *last,
                                 void *stream)
{
    pthread_mutex_lock(&d->lock);
    bool live = pd__device_stream_live(d, last);
    pthread_mutex_unlock(&d->lock);
    if (!live)
        return PD_OK;
    const pd_device_table *t = d->table;
    int32_t id = place.device_id;
    void *event = NULL;
    pd_status st = t->event_create(t->user, id, &event);
    if (st == PD_OK) {
        st = t->event_record(t->user, id, event, last);
        if (st == PD_OK)
            st = t->event_wait(t->user, id, stream, event);
        (void)t->event_destroy(t->user, id, event);
    }
    return st == PD_OK ? PD_OK
                       : pd__device_failed(who, d, place,
                                           "waiting for the stream that last used the memory", st);
}

pd_status pd__device_block_order(const char *who, pd_storage *s, void *stream)
{
    struct pd__device_block *b = s->dev;
    if (b == NULL || stream == NULL || s->place.type == PD_PLACE_GPU_PINNED)
        return PD_OK;
    void *last = atomic_load_explicit(&b->last, memory_order_acquire);
    if (last == stream) /* the steady state: the stream's own order is enough */
        return PD_OK;
    pd_status st = last ? wait_for_stream(who, b->device, s->place, last, stream) : PD_OK;
    if (st != PD_OK)
        return st;
    atomic_store_explicit(&b->last, stream, memory_order_release);
    pd__device_record_stream(s, stream); /* the cache waits for this stream too */
    return PD_OK;
}

void *pd__device_block_last(const pd_storage *s)
{
    return s->dev == NULL ? NULL : atomic_load_explicit(&s->dev->last, memory_order_acquire);
}

pd_status pd__device_order_on_current(const char *who, pd_storage *s)
{
    if (s == NULL || s->dev == NULL || s->place.type == PD_PLACE_GPU_PINNED)
        return PD_OK;
    void *stream = NULL;
    pd_status st = pd__device_stream_of(who, s->dev->device, s->place, &stream);
    return st == PD_OK ? pd__device_block_order(who, s, stream) : st;
}

/* Whether work on `other` cannot touch the block any more for an allocation on `stream`:
 * none, the same stream (whose order puts the new work after), destroyed (after finishing
 * its work: stream.c keeps which handles exist, and a dead handle must never reach
 * stream_query), or idle. Under d->lock. */
static bool stream_done_with(const pd__device *d, int32_t id, void *other, void *stream)
{
    bool idle = false;
    return other == NULL || other == stream || !pd__device_stream_live(d, other) ||
           (d->table->stream_query(d->table->user, id, other, &idle) == PD_OK && idle);
}

/* Whether a cached block may serve an allocation on `stream`: its own stream and every
 * other stream it was used on are done with it (the others even for its own stream: their
 * work is not ordered with it). Under d->lock. */
static bool block_usable(const pd__device *d, int32_t id, const pd_storage *s, void *stream)
{
    if (!stream_done_with(d, id, s->dev->stream, stream))
        return false;
    for (int32_t k = 0; k < USED_ON_MAX; ++k)
        if (s->dev->used_on[k] != NULL && !stream_done_with(d, id, s->dev->used_on[k], NULL))
            return false;
    return true;
}

/* The cache that serves `place`: its list and its byte count (under d->lock). */
static pd_storage **cache_of(pd__device *d, pd_place place, size_t **bytes)
{
    if (place.type == PD_PLACE_GPU_PINNED) {
        *bytes = &d->pinned_bytes;
        return &d->pinned;
    }
    *bytes = &d->cached_bytes[place.device_id];
    return &d->cached[place.device_id];
}

/* Whether the block is known usable on `stream` without asking the device: its own stream
 * (or none), and no other stream's use noted. */
static bool block_quiet(const pd_storage *s, void *stream)
{
    if (s->dev->stream != stream && s->dev->stream != NULL)
        return false;
    for (int32_t k = 0; k < USED_ON_MAX; ++k)
        if (s->dev->used_on[k] != NULL)
            return false;
    return true;
}

/* A cached block for `size` usable on `stream`, unlinked; NULL if none. Under d->lock. A
 * block whose stream is NULL is idle: its stream finished and was destroyed (or it is
 * pinned host memory). Blocks of the stream itself are looked at first: a block of another
 * stream costs a stream_query, which a caller that stays on one stream (a host's, switching
 * now and then) need not pay while its own blocks serve it. */
static pd_storage *take(pd__device *d, pd_place place, size_t size, void *stream)
{
    int32_t id = place.device_id;
    size_t *cached_bytes = NULL;
    pd_storage **list = cache_of(d, place, &cached_bytes);
    pd_storage **best = NULL;
    for (int pass = 0; pass < 2 && best == NULL; ++pass)
        for (pd_storage **p = list; *p; p = &(*p)->dev->cache_next) {
            pd_storage *s = *p;
            if (s->capacity < size || s->capacity / 2 > size)
                continue;
            if (pass == 0 ? !block_quiet(s, stream)
                          : block_quiet(s, stream) || !block_usable(d, id, s, stream))
                continue; /* the second pass asks only of the blocks the first left */
            if (best == NULL || s->capacity < (*best)->capacity)
                best = p;
            if (s->capacity == size)
                break;
        }
    if (best == NULL)
        return NULL;
    pd_storage *s = *best;
    *best = s->dev->cache_next;
    *cached_bytes -= s->capacity;
    return s;
}

/* Frees every cached block of place's cache through the table. */
static void release_all(pd__device *d, pd_place place)
{
    pthread_mutex_lock(&d->lock);
    size_t *cached_bytes = NULL;
    pd_storage **head = cache_of(d, place, &cached_bytes);
    pd_storage *list = *head;
    *head = NULL;
    *cached_bytes = 0;
    pthread_mutex_unlock(&d->lock);
    while (list) {
        pd_storage *next = list->dev->cache_next;
        pd__device_free(d, list->place, list->ptr, list->capacity);
        free(list);
        list = next;
    }
}

pd_status pd__device_block_new(const char *who, pd__device *d, pd_place place, size_t bytes,
                               pd_storage **out)
{
    void *stream = NULL; /* pinned host memory has no stream */
    pd_status st = place.type == PD_PLACE_GPU_PINNED ? PD_OK
                                                     : pd__device_stream_of(who, d, place, &stream);
    if (st != PD_OK)
        return st;
    size_t size = round_size(bytes), *cached_bytes = NULL;
    pthread_mutex_lock(&d->lock);
    pd_storage *s = *cache_of(d, place, &cached_bytes) ? take(d, place, size, stream) : NULL;
    pthread_mutex_unlock(&d->lock);
    if (s == NULL) {
        block *b = malloc(sizeof *b);
        if (b == NULL)
            return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
        s = &b->header;
        s->dev = &b->dev;
        st = pd__device_alloc(who, d, place, size, &s->ptr);
        if (st == PD_ERR_OUT_OF_MEMORY) { /* what the cache holds may be what is missing */
            release_all(d, place);
            st = pd__device_alloc(who, d, place, size, &s->ptr);
        }
        if (st != PD_OK) {
            free(s);
            return st;
        }
        s->capacity = size;
        s->dev->device = d;
    }
    s->place = place;
    s->dev->stream = stream;
    atomic_store_explicit(&s->dev->last, stream, memory_order_relaxed);
    s->dev->cache_next = NULL;
    for (int32_t k = 0; k < USED_ON_MAX; ++k)
        s->dev->used_on[k] = NULL;
    s->dev->used_on_more = false;
    s->block = s;
    *out = s;
    return PD_OK;
}

/* A block used on more streams than it remembers: waits for every stream of its device
 * (their handles copied under the lock, each synchronized outside it), after which no work
 * can touch it. */
static void wait_every_stream(pd__device *d, pd_storage *s)
{
    pthread_mutex_lock(&d->lock);
    int32_t n = d->n_live_streams;
    void **copy = n > 0 ? malloc((size_t)n * sizeof *copy) : NULL;
    if (copy != NULL)
        memcpy(copy, d->live_streams, (size_t)n * sizeof *copy);
    pthread_mutex_unlock(&d->lock);
    if (n > 0 && copy == NULL)
        return; /* out of memory: the block is then freed, not cached (a device's free waits
                 * for the work using it, as cudaFree does) */
    for (int32_t i = 0; i < n; ++i)
        (void)d->table->stream_synchronize(d->table->user, s->place.device_id, copy[i]);
    free(copy);
    s->dev->used_on_more = false;
    s->dev->stream = NULL;
    for (int32_t k = 0; k < USED_ON_MAX; ++k)
        s->dev->used_on[k] = NULL;
}

void pd__device_block_free(pd_storage *s)
{
    pd__device *d = s->dev->device;
    size_t limit = cache_limit(), *cached_bytes = NULL;
    bool kept = false;
    if (s->dev->used_on_more)
        wait_every_stream(d, s);
    pthread_mutex_lock(&d->lock);
    /* streams destroyed since, after finishing their work, no longer hold the block */
    if (s->dev->stream != NULL && !pd__device_stream_live(d, s->dev->stream))
        s->dev->stream = NULL;
    for (int32_t k = 0; k < USED_ON_MAX; ++k)
        if (s->dev->used_on[k] != NULL && !pd__device_stream_live(d, s->dev->used_on[k]))
            s->dev->used_on[k] = NULL;
    pd_storage **head = cache_of(d, s->place, &cached_bytes);
    if (!s->dev->used_on_more && s->capacity <= limit && *cached_bytes <= limit - s->capacity) {
        s->dev->cache_next = *head;
        *head = s;
        *cached_bytes += s->capacity;
        kept = true;
    }
    pthread_mutex_unlock(&d->lock);
    if (!kept) {
        pd__device_free(d, s->place, s->ptr, s->capacity);
        free(s);
    }
}

pd_status pd_device_cache_release(pd_place place)
{
    pd__device *d = pd__device_of("pd_device_cache_release", place);
    if (d == NULL)
        return pd_last_status();
    if (place.type != PD_PLACE_CPU)
        release_all(d, place);
    return PD_OK;
}

pd_status pd_tensor_record_stream(const pd_tensor *t, pd_stream_t *s)
{
    static const char who[] = "pd_tensor_record_stream";
    if (t == NULL || s == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, t ? "stream" : "t");
    pd_place sp = pd_stream_place(s);
    char at[96], of[96];
    pd__place_format(t->place, at, sizeof at);
    pd__place_format(sp, of, sizeof of);
    if (t->storage == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: t has no storage (undefined, or over memory the host made itself); "
                        "pass a tensor whose memory pdext allocated on a device",
                        who);
    if (pd_place_is_host(t->place))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: t is on %s, host memory, which no stream reuses; pass a tensor on "
                        "a device place",
                        who, at);
    if (t->place.type != sp.type || t->place.device_id != sp.device_id)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: t is on %s but the stream belongs to %s; record a stream of the "
                        "tensor's own device",
                        who, at, of);
    pd__device_record_stream(t->storage,
                             pd_stream_handle(s)); /* memory the host wrapped: its own */
    return PD_OK;
}

pd_status pd_tensor_ready_on(const pd_tensor *t, pd_device_stream consumer)
{
    static const char who[] = "pd_tensor_ready_on";
    if (t == NULL || consumer == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, t ? "consumer" : "t");
    if (pd_place_is_host(t->place))
        return PD_OK;
    pd_status st = pd__tensor_ready(t); /* an async call may still be queueing it */
    pd__device *d = st == PD_OK ? pd__device_of(who, t->place) : NULL;
    if (d == NULL)
        return st == PD_OK ? pd_last_status() : st;
    pd_storage *s = t->storage;
    if (s != NULL && s->dev != NULL && s->place.type != PD_PLACE_GPU_PINNED) {
        void *last = atomic_load_explicit(&s->dev->last, memory_order_acquire);
        if (last == NULL || last == consumer) /* the usual case: no lock, no device call */
            return PD_OK;
        pthread_mutex_lock(&d->lock);
        bool known = pd__device_stream_live(d, consumer);
        pthread_mutex_unlock(&d->lock);
        return known /* ordered both ways from now on, as a call on `consumer` would be */
                   ? pd__device_block_order(who, s, consumer)
                   : wait_for_stream(who, d, t->place, last, consumer);
    }
    void *current = NULL; /* memory the host wrapped: pdext's work on it is on this stream */
    st = pd__device_stream_of(who, d, t->place, &current);
    if (st != PD_OK || current == consumer)
        return st;
    return wait_for_stream(who, d, t->place, current, consumer);
}
