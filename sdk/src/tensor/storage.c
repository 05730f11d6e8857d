/*
 * storage.c - reference-counted memory blocks behind every tensor.
 *
 * A runtime allocation is ONE malloc'd block: the pd_storage header, then the data at the next
 * 64-byte boundary. One allocation per tensor keeps small tensors cheap (one malloc, one free) and
 * puts the data at a 64-byte boundary, which AVX-512 loads and cache lines like. A wrapped
 * external buffer gets a header of its own that points at the caller's memory and remembers the
 * deleter, called exactly once when the last reference goes.
 *
 * Memory on any other place (GPU, GPU-pinned, a registered custom device) comes from that
 * place's device table through the device cache (device_cache.c). Which places are accepted,
 * and the message for one that is not, is the device layer's (device/place_types.c,
 * device/device.c).
 */
#include "tensor/tensor_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PD__ALIGN 64

/* --- Big-block cache -----------------------------------------------------------------------
 *
 * glibc serves blocks above its mmap threshold (at most 32 MiB) with a fresh mmap, and returns
 * them to the kernel on free. An op that makes a 64 MiB output on every call then pays for
 * 16,384 zero-filled page faults per call, which costs more than the kernel's own work (relu
 * ran at 0.15x memcpy bandwidth that way). So the last few freed big blocks are kept and
 * handed to the next allocation of a similar size, as every tensor framework's caching
 * allocator does. The cache holds at most PD__CACHE_SLOTS blocks and PDEXT_STORAGE_CACHE_MB
 * MiB in all (default 256; 0 turns it off); pd_storage_cache_clear() empties it. */

#define PD__CACHE_MIN_BYTES ((size_t)1 << 20) /* smaller blocks are malloc's business */
#define PD__CACHE_SLOTS 4
#define PD__HUGE_PAGE ((size_t)2 << 20)

static struct {
    pthread_mutex_t lock;
    pd_storage *slots[PD__CACHE_SLOTS];
    size_t total; /* bytes held */
    size_t limit; /* PDEXT_STORAGE_CACHE_MB in bytes */
    pthread_once_t once;
} cache = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0, 0, PTHREAD_ONCE_INIT};

static void cache_configure(void)
{
    const char *env = getenv("PDEXT_STORAGE_CACHE_MB");
    char *end = NULL;
    unsigned long long mb = env && *env ? strtoull(env, &end, 10) : 256;
    if (env && *env && (end == env || *end != '\0'))
        mb = 256; /* not a number: keep the default rather than guess */
    cache.limit = mb > (SIZE_MAX >> 20) ? SIZE_MAX : (size_t)mb << 20;
}

/* A cached block that holds `bytes` without wasting more than half of itself, or NULL. Never
 * inlined: it is off the small-tensor path, whose registers it would otherwise claim. */
static __attribute__((noinline)) pd_storage *cache_take(size_t bytes)
{
    pd_storage *found = NULL;
    pthread_mutex_lock(&cache.lock);
    for (int i = 0; i < PD__CACHE_SLOTS; ++i) {
        pd_storage *s = cache.slots[i];
        if (s && s->capacity >= bytes && s->capacity / 2 <= bytes) {
            cache.slots[i] = NULL;
            cache.total -= s->capacity;
            found = s;
            break;
        }
    }
    pthread_mutex_unlock(&cache.lock);
    return found;
}

/* Keeps a dying big block for reuse; false if the cache has no room (the caller frees it). */
static bool cache_keep(pd_storage *s)
{
    pthread_once(&cache.once, cache_configure);
    bool kept = false;
    pthread_mutex_lock(&cache.lock);
    if (s->capacity <= cache.limit - (cache.total < cache.limit ? cache.total : cache.limit)) {
        for (int i = 0; i < PD__CACHE_SLOTS && !kept; ++i) {
            if (cache.slots[i] == NULL) {
                cache.slots[i] = s;
                cache.total += s->capacity;
                kept = true;
            }
        }
    }
    pthread_mutex_unlock(&cache.lock);
    return kept;
}

void pd_storage_cache_clear(void)
{
    pd_storage *dying[PD__CACHE_SLOTS];
    pthread_mutex_lock(&cache.lock);
    for (int i = 0; i < PD__CACHE_SLOTS; ++i) {
        dying[i] = cache.slots[i];
        cache.slots[i] = NULL;
    }
    cache.total = 0;
    pthread_mutex_unlock(&cache.lock);
    for (int i = 0; i < PD__CACHE_SLOTS; ++i)
        if (dying[i])
            free(dying[i]->block);
}

/* Asks for transparent huge pages on the 2 MiB-aligned interior of a big block: one fault per
 * 2 MiB instead of per 4 KiB when it is first touched. Advice only; failure changes nothing. */
static __attribute__((noinline)) void advise_huge_pages(void *ptr, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    uintptr_t begin = ((uintptr_t)ptr + PD__HUGE_PAGE - 1) & ~(uintptr_t)(PD__HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t)ptr + bytes) & ~(uintptr_t)(PD__HUGE_PAGE - 1);
    if (end > begin)
        (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
#else
    (void)ptr;
    (void)bytes;
#endif
}

/* --- Blocks -------------------------------------------------------------------------------- */

/* One malloc holds the header and the data; the data starts at the first 64-byte boundary
 * after the header (malloc plus manual alignment: glibc's aligned_alloc costs several times a
 * plain malloc on this hot path). */
static pd_storage *block_new(size_t bytes)
{
    if (bytes >= PD__CACHE_MIN_BYTES) {
        pd_storage *s = cache_take(bytes);
        if (s != NULL)
            return s;
    }
    size_t capacity = bytes;
    unsigned char *block = malloc(sizeof(pd_storage) + PD__ALIGN - 1 + capacity);
    if (block == NULL)
        return NULL;
    uintptr_t data = ((uintptr_t)(block + sizeof(pd_storage)) + PD__ALIGN - 1) &
                     ~(uintptr_t)(PD__ALIGN - 1);
    pd_storage *s = (pd_storage *)(data - sizeof(pd_storage));
    s->block = block;
    s->ptr = (void *)data;
    s->capacity = capacity;
    if (bytes >= PD__HUGE_PAGE)
        advise_huge_pages(s->ptr, capacity);
    return s;
}

pd_storage *pd__storage_alloc(const pd_place *place, size_t bytes)
{
    pd_storage *s = block_new(bytes);
    if (s == NULL)
        return NULL;
    atomic_init(&s->refcount, 1);
    s->bytes = bytes;
    s->place = *place;
    s->deleter = NULL;
    s->user = NULL;
    s->external = false;
    s->dev = NULL;
    atomic_init(&s->pending, NULL);
    return s;
}

/* A block of device memory or of GPU-pinned host memory for `place`, through the device
 * cache. */
static __attribute__((noinline)) pd_status device_storage_new(const char *who, pd_place place,
                                                              size_t bytes, pd_storage **out)
{
    pd__device *d = pd__device_of(who, place);
    if (d == NULL)
        return pd_last_status();
    pd_storage *s = NULL;
    pd_status st = pd__device_block_new(who, d, place, bytes, &s);
    if (st != PD_OK)
        return st;
    atomic_init(&s->refcount, 1);
    s->bytes = bytes;
    s->place = place;
    s->deleter = NULL;
    s->user = NULL;
    s->external = false;
    atomic_init(&s->pending, NULL);
    *out = s;
    return PD_OK;
}

pd_status pd__storage_new(const char *who, pd_place place, size_t bytes, pd_storage **out)
{
    if (!pd__place_ok(&place)) {
        if (place.type == PD_PLACE_CPU)
            return pd__place_refuse(who, place);
        return device_storage_new(who, place, bytes, out);
    }
    if (bytes > SIZE_MAX - sizeof(pd_storage) - PD__ALIGN)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes: the size overflows",
                        who, bytes);
    pd_storage *s = pd__storage_alloc(&place, bytes);
    if (s == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory allocating %zu bytes", who, bytes);
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
    s->block = s;
    s->capacity = bytes;
    s->dev = NULL;
    atomic_init(&s->pending, NULL);
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
     * references happens-before the deleter or free, as in std::shared_ptr. acq_rel rather
     * than release + a fence: the same lock xadd on x86, and ThreadSanitizer (which does not
     * model fences) sees the order. */
    if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1)
        return;
    if (atomic_load_explicit(&s->pending, memory_order_relaxed) != NULL)
        pd__storage_pending_drop(s); /* memory an async call wrote */
    if (s->dev != NULL) {
        pd__device_block_free(s);
        return;
    }
    if (s->external) {
        if (s->deleter != NULL)
            s->deleter(s->ptr, s->user);
    } else if (s->capacity >= PD__CACHE_MIN_BYTES && cache_keep(s)) {
        return;
    }
    free(s->block);
}

int64_t pd__storage_use_count(const pd_storage *s)
{
    return s ? (int64_t)atomic_load_explicit(&s->refcount, memory_order_relaxed) : 0;
}
