/*
 * sim_device.c - the simulated device (pd_sim_device.h): a complete pd_device_table over host
 * memory, built as its own library (libpdext_sim) that reaches libpdext only through
 * pd_device_register, as any custom device plug-in does. Read it as the reference for
 * writing one.
 *
 * Memory. Each allocation is its own anonymous mapping, listed per process; the address the
 * table hands out is the mapping's plus SIM_OFFSET, which no CPU access can use, so host code
 * that forgets a tensor is not on the CPU faults at once. Every copy and memset looks its
 * device range up in the list and refuses one that no allocation of that device contains.
 *
 * Streams. A stream is a FIFO of jobs (copy, memset, launched function, wait for an event)
 * that runs only when something waits for it: drain() pops and runs jobs in order on the
 * waiting thread. One mutex guards all lists and counters and is never held while a job
 * runs (a job may drain another stream). One recursive lock, `running`, is held while jobs
 * run: two waiters never run a stream's jobs out of order, and a wait job that drains
 * another stream (which may wait on the first in turn, later in its queue) takes no second
 * lock, so two streams waiting on each other's events at different times cannot deadlock
 * (one lock per stream could: A draining B while B drains A). Events are (stream, sequence
 * number) pairs: recording takes the count of jobs enqueued so far, and the event is done
 * once that many have run.
 *
 * Pinned host memory (host_alloc) is plain mapped pages the CPU may use, counted; the convert
 * kernel (strided copies and casts on the device) is sim_convert.c, run as a stream job.
 *
 * About 600 lines: the table is one unit that a custom-device author reads top to
 * bottom, so memory, streams and events stay together.
 */
#include "pd_sim_device.h"
#include "pdext.h"
#include "sim_convert.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Added to a mapping's address to make the device address: bit 52 is above every user address
 * of 48-bit x86-64 and AArch64 (non-canonical there, so an access traps) and below AArch64's
 * ignored top byte. */
#define SIM_OFFSET ((uintptr_t)1 << 52)
#define SIM_DEFAULT_CAPACITY ((size_t)1 << 30)

typedef struct sim_alloc {
    struct sim_alloc *next;
    unsigned char *host; /* the mapping */
    size_t bytes;        /* as asked for */
    size_t mapped;       /* mapping length (whole pages) */
    int32_t device;
} sim_alloc;

typedef enum job_kind { JOB_COPY, JOB_MEMSET, JOB_LAUNCH, JOB_WAIT } job_kind;

struct sim_stream;

typedef struct job {
    struct job *next;
    job_kind kind;
    void *dst; /* host addresses, resolved when enqueued */
    const void *src;
    size_t bytes;
    int value;
    void (*fn)(void *);
    void *arg;
    struct sim_stream *wait_stream; /* JOB_WAIT: run that stream up to wait_seq */
    uint64_t wait_seq;
    int64_t *counter; /* counted when the job has run */
} job;

typedef struct sim_stream {
    int32_t device;
    job *head, *tail;
    uint64_t enqueued, completed;
} sim_stream;

typedef struct sim_event {
    sim_stream *stream; /* NULL until recorded */
    uint64_t seq;
} sim_event;

static struct {
    pthread_mutex_t lock;
    sim_alloc *allocs;
    size_t used[PD_SIM_DEVICES];
    size_t capacity;
    pd_sim_stats stats;
    int64_t waits;   /* event waits run (not part of pd_sim_stats) */
    int32_t current; /* set_device / get_device: one per process is enough for a simulation */
} sim = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Table calls by member (pd_sim_calls_get): counted without the lock, at each member's entry,
 * so that counting changes nothing about how the members order or block. */
static pd_sim_calls calls;
#define CALLED(member) __atomic_fetch_add(&calls.member, 1, __ATOMIC_RELAXED)

/* --- Memory -------------------------------------------------------------------------------- */

/* The allocation of `device` (any device if < 0) that holds [addr, addr + bytes) of device
 * addresses, or NULL; under the lock. */
static sim_alloc *find_range(int32_t device, const void *addr, size_t bytes)
{
    uintptr_t a = (uintptr_t)addr;
    if (a < SIM_OFFSET)
        return NULL;
    a -= SIM_OFFSET;
    for (sim_alloc *m = sim.allocs; m; m = m->next) {
        uintptr_t lo = (uintptr_t)m->host;
        if ((device < 0 || m->device == device) && a >= lo && a - lo <= m->bytes &&
            bytes <= m->bytes - (a - lo))
            return m;
    }
    return NULL;
}

/* Host address of a checked device range, or NULL. */
static void *resolve(int32_t device, const void *addr, size_t bytes)
{
    pthread_mutex_lock(&sim.lock);
    sim_alloc *m = find_range(device, addr, bytes);
    pthread_mutex_unlock(&sim.lock);
    return m ? (void *)((uintptr_t)addr - SIM_OFFSET) : NULL;
}

void *pd_sim_host_address(const void *device_ptr) { return resolve(-1, device_ptr, 0); }

static pd_status sim_count(void *user, int32_t *count)
{
    (void)user;
    *count = PD_SIM_DEVICES;
    return PD_OK;
}

static pd_status sim_set_device(void *user, int32_t device)
{
    (void)user;
    pthread_mutex_lock(&sim.lock);
    sim.current = device;
    pthread_mutex_unlock(&sim.lock);
    return PD_OK;
}

static pd_status sim_get_device(void *user, int32_t *device)
{
    (void)user;
    pthread_mutex_lock(&sim.lock);
    *device = sim.current;
    pthread_mutex_unlock(&sim.lock);
    return PD_OK;
}

static pd_status sim_alloc_fn(void *user, int32_t device, size_t bytes, void **ptr)
{
    CALLED(alloc);
    (void)user;
    size_t page = 4096, mapped = (bytes + page - 1) / page * page;
    pthread_mutex_lock(&sim.lock);
    size_t cap = sim.capacity ? sim.capacity : SIM_DEFAULT_CAPACITY;
    bool room = bytes <= cap && sim.used[device] <= cap - bytes;
    if (room)
        sim.used[device] += bytes;
    pthread_mutex_unlock(&sim.lock);
    if (!room)
        return PD_ERR_OUT_OF_MEMORY;
    sim_alloc *m = malloc(sizeof *m);
    void *host = m ? mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                   : MAP_FAILED;
    if (host == MAP_FAILED) {
        free(m);
        pthread_mutex_lock(&sim.lock);
        sim.used[device] -= bytes;
        pthread_mutex_unlock(&sim.lock);
        return PD_ERR_OUT_OF_MEMORY;
    }
    m->host = host;
    m->bytes = bytes;
    m->mapped = mapped;
    m->device = device;
    pthread_mutex_lock(&sim.lock);
    m->next = sim.allocs;
    sim.allocs = m;
    sim.stats.live_allocs++;
    sim.stats.live_bytes += (int64_t)bytes;
    sim.stats.allocs++;
    pthread_mutex_unlock(&sim.lock);
    *ptr = (void *)((uintptr_t)host + SIM_OFFSET);
    return PD_OK;
}

/* Pinned host memory: pages the CPU reads and writes directly, counted like device memory. */
static pd_status sim_host_alloc(void *user, size_t bytes, void **ptr)
{
    (void)user;
    void *host = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (host == MAP_FAILED)
        return PD_ERR_OUT_OF_MEMORY;
    pthread_mutex_lock(&sim.lock);
    sim.stats.host_allocs++;
    sim.stats.live_host_allocs++;
    pthread_mutex_unlock(&sim.lock);
    *ptr = host;
    return PD_OK;
}

static pd_status sim_host_free(void *user, void *ptr, size_t bytes)
{
    (void)user;
    if (munmap(ptr, bytes) != 0)
        return PD_ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&sim.lock);
    sim.stats.host_frees++;
    sim.stats.live_host_allocs--;
    pthread_mutex_unlock(&sim.lock);
    return PD_OK;
}

/* --- Streams ------------------------------------------------------------------------------- */

static sim_stream *all_streams[256]; /* live streams, for frees that must drain them all */
static int n_streams;

/* Runs one job (no lock held). */
static void drain(sim_stream *s, uint64_t upto);

static void run(job *j)
{
    switch (j->kind) {
    case JOB_COPY: memcpy(j->dst, j->src, j->bytes); break;
    case JOB_MEMSET: memset(j->dst, j->value, j->bytes); break;
    case JOB_LAUNCH: j->fn(j->arg); break;
    case JOB_WAIT: drain(j->wait_stream, j->wait_seq); break;
    }
}

/* The lock held while jobs run (recursive: a wait job drains another stream), made once. */
static pthread_mutex_t running;
static pthread_once_t running_once = PTHREAD_ONCE_INIT;
static void running_init(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&running, &a);
    pthread_mutexattr_destroy(&a);
}

/* Runs s's jobs in order until `upto` of them have completed (UINT64_MAX: all). Returns at
 * once when they have: a wait job for an event of its own stream (or of a stream draining
 * this one) is met by the stream's order, so a nested drain of a stream this thread is
 * draining never runs its later jobs early. */
static void drain(sim_stream *s, uint64_t upto)
{
    pthread_mutex_lock(&sim.lock);
    bool reached = s->completed >= upto;
    pthread_mutex_unlock(&sim.lock);
    if (reached)
        return;
    pthread_once(&running_once, running_init);
    pthread_mutex_lock(&running);
    for (;;) {
        pthread_mutex_lock(&sim.lock);
        job *j = s->completed < upto ? s->head : NULL;
        if (j != NULL) {
            s->head = j->next;
            if (s->head == NULL)
                s->tail = NULL;
        }
        pthread_mutex_unlock(&sim.lock);
        if (j == NULL)
            break;
        run(j);
        pthread_mutex_lock(&sim.lock);
        s->completed++;
        sim.stats.pending--;
        (*j->counter)++;
        pthread_mutex_unlock(&sim.lock);
        free(j);
    }
    pthread_mutex_unlock(&running);
}

/* Enqueues *proto on s, or runs it now when s is NULL. */
static pd_status submit(sim_stream *s, const job *proto)
{
    if (s == NULL) {
        job now = *proto;
        run(&now);
        pthread_mutex_lock(&sim.lock);
        (*now.counter)++;
        pthread_mutex_unlock(&sim.lock);
        return PD_OK;
    }
    job *j = malloc(sizeof *j);
    if (j == NULL)
        return PD_ERR_OUT_OF_MEMORY;
    *j = *proto;
    j->next = NULL;
    pthread_mutex_lock(&sim.lock);
    if (s->tail)
        s->tail->next = j;
    else
        s->head = j;
    s->tail = j;
    s->enqueued++;
    sim.stats.pending++;
    pthread_mutex_unlock(&sim.lock);
    return PD_OK;
}

static pd_status sim_free_fn(void *user, int32_t device, void *ptr, size_t bytes)
{
    CALLED(free);
    (void)user;
    (void)bytes;
    /* Queued work may still use the memory: finish every stream first, as cudaFree does. */
    pthread_mutex_lock(&sim.lock);
    int n = n_streams;
    sim_stream *live[256];
    memcpy(live, all_streams, (size_t)n * sizeof *live);
    pthread_mutex_unlock(&sim.lock);
    for (int i = 0; i < n; ++i)
        drain(live[i], UINT64_MAX);
    pthread_mutex_lock(&sim.lock);
    sim_alloc **p = &sim.allocs;
    while (*p && !((*p)->device == device && (uintptr_t)(*p)->host + SIM_OFFSET == (uintptr_t)ptr))
        p = &(*p)->next;
    sim_alloc *m = *p;
    if (m) {
        *p = m->next;
        sim.used[device] -= m->bytes;
        sim.stats.live_allocs--;
        sim.stats.live_bytes -= (int64_t)m->bytes;
        sim.stats.frees++;
    }
    pthread_mutex_unlock(&sim.lock);
    if (m == NULL)
        return PD_ERR_INVALID_ARGUMENT;
    munmap(m->host, m->mapped);
    free(m);
    return PD_OK;
}

static pd_status sim_memset(void *user, int32_t device, void *ptr, int value, size_t bytes,
                            pd_device_stream stream)
{
    CALLED(memset);
    (void)user;
    void *dst = resolve(device, ptr, bytes);
    if (dst == NULL)
        return PD_ERR_INVALID_ARGUMENT;
    job j = {.kind = JOB_MEMSET,
             .dst = dst,
             .bytes = bytes,
             .value = value,
             .counter = &sim.stats.memsets};
    return submit(stream, &j);
}

static pd_status copy(sim_stream *s, void *dst, const void *src, size_t bytes, int64_t *counter)
{
    if (dst == NULL || src == NULL)
        return PD_ERR_INVALID_ARGUMENT;
    job j = {.kind = JOB_COPY, .dst = dst, .src = src, .bytes = bytes, .counter = counter};
    return submit(s, &j);
}

static pd_status sim_h2d(void *user, int32_t device, void *dst, const void *src, size_t bytes,
                         pd_device_stream stream)
{
    CALLED(copy);
    (void)user;
    return copy(stream, resolve(device, dst, bytes), src, bytes, &sim.stats.copies_h2d);
}

static pd_status sim_d2h(void *user, int32_t device, void *dst, const void *src, size_t bytes,
                         pd_device_stream stream)
{
    CALLED(copy);
    (void)user;
    return copy(stream, dst, resolve(device, src, bytes), bytes, &sim.stats.copies_d2h);
}

static pd_status sim_d2d(void *user, int32_t dst_device, void *dst, int32_t src_device,
                         const void *src, size_t bytes, pd_device_stream stream)
{
    CALLED(copy);
    (void)user;
    return copy(stream, resolve(dst_device, dst, bytes), resolve(src_device, src, bytes), bytes,
                &sim.stats.copies_d2d);
}

pd_status pd_sim_launch(pd_device_stream stream, void (*fn)(void *arg), void *arg)
{
    CALLED(launch);
    if (fn == NULL)
        return PD_ERR_INVALID_ARGUMENT;
    job j = {.kind = JOB_LAUNCH, .fn = fn, .arg = arg, .counter = &sim.stats.launches};
    return submit(stream, &j);
}

/* The convert kernel (pd_device_table.convert): the view's range is checked against the
 * device's allocations now, the conversion runs as a job of `stream` (sim_convert.c). */
static pd_status sim_convert(void *user, int32_t device, void *dst, pd_data_type dst_dtype,
                             const void *src, pd_data_type src_dtype, int32_t ndim,
                             const int64_t *shape, const int64_t *strides, pd_device_stream stream)
{
    CALLED(convert);
    (void)user;
    if (!sim_convert_supported(dst_dtype, src_dtype) || ndim < 0 || ndim > PD_MAX_DIMS)
        return PD_ERR_UNAVAILABLE;
    sim_convert_job *j = malloc(sizeof *j);
    if (j == NULL)
        return PD_ERR_OUT_OF_MEMORY;
    j->dst_dtype = dst_dtype;
    j->src_dtype = src_dtype;
    j->ndim = ndim;
    int64_t numel = 1;
    for (int32_t k = 0; k < ndim; ++k) {
        j->shape[k] = shape[k];
        j->strides[k] = strides[k];
        numel *= shape[k];
    }
    int64_t lo = 0, hi = 0;
    sim_convert_span(j, &lo, &hi);
    const unsigned char *in = resolve(device, (const unsigned char *)src + lo, (size_t)(hi - lo));
    j->src = in ? in - lo : NULL;
    j->dst = resolve(device, dst, (size_t)numel * pd_dtype_size(dst_dtype));
    if (j->src == NULL || j->dst == NULL) {
        free(j);
        return PD_ERR_INVALID_ARGUMENT;
    }
    job launch = {.kind = JOB_LAUNCH,
                  .fn = sim_convert_run,
                  .arg = j,
                  .counter = &sim.stats.converts};
    pd_status st = submit(stream, &launch);
    if (st != PD_OK)
        free(j);
    return st;
}

static pd_status sim_stream_create(void *user, int32_t device, pd_device_stream *stream)
{
    CALLED(stream_create);
    (void)user;
    sim_stream *s = calloc(1, sizeof *s);
    if (s == NULL)
        return PD_ERR_OUT_OF_MEMORY;
    s->device = device;
    pthread_mutex_lock(&sim.lock);
    bool room = n_streams < 256;
    if (room) {
        all_streams[n_streams++] = s;
        sim.stats.live_streams++;
    }
    pthread_mutex_unlock(&sim.lock);
    if (!room) {
        free(s);
        return PD_ERR_UNAVAILABLE;
    }
    *stream = s;
    return PD_OK;
}

static pd_status sim_stream_synchronize(void *user, int32_t device, pd_device_stream stream)
{
    CALLED(stream_synchronize);
    (void)user;
    (void)device;
    drain(stream, UINT64_MAX);
    return PD_OK;
}

static pd_status sim_stream_destroy(void *user, int32_t device, pd_device_stream stream)
{
    CALLED(stream_destroy);
    sim_stream *s = stream;
    (void)user;
    (void)device;
    drain(s, UINT64_MAX); /* its work first (not counted as a stream_synchronize call) */
    pthread_mutex_lock(&sim.lock);
    for (int i = 0; i < n_streams; ++i)
        if (all_streams[i] == s) {
            all_streams[i] = all_streams[--n_streams];
            break;
        }
    sim.stats.live_streams--;
    pthread_mutex_unlock(&sim.lock);
    free(s);
    return PD_OK;
}

static pd_status sim_stream_query(void *user, int32_t device, pd_device_stream stream, bool *done)
{
    CALLED(stream_query);
    (void)user;
    (void)device;
    sim_stream *s = stream;
    pthread_mutex_lock(&sim.lock);
    *done = s->completed == s->enqueued;
    pthread_mutex_unlock(&sim.lock);
    return PD_OK;
}

/* --- Events -------------------------------------------------------------------------------- */

static pd_status sim_event_create(void *user, int32_t device, pd_device_event *event)
{
    CALLED(event_create);
    (void)user;
    (void)device;
    sim_event *e = calloc(1, sizeof *e);
    if (e == NULL)
        return PD_ERR_OUT_OF_MEMORY;
    pthread_mutex_lock(&sim.lock);
    sim.stats.live_events++;
    pthread_mutex_unlock(&sim.lock);
    *event = e;
    return PD_OK;
}

static pd_status sim_event_destroy(void *user, int32_t device, pd_device_event event)
{
    CALLED(event_destroy);
    (void)user;
    (void)device;
    free(event);
    pthread_mutex_lock(&sim.lock);
    sim.stats.live_events--;
    pthread_mutex_unlock(&sim.lock);
    return PD_OK;
}

static pd_status sim_event_record(void *user, int32_t device, pd_device_event event,
                                  pd_device_stream stream)
{
    CALLED(event_record);
    (void)user;
    (void)device;
    sim_event *e = event;
    sim_stream *s = stream;
    if (s == NULL) /* the synchronous "stream": everything it did is done already */
        return PD_OK;
    pthread_mutex_lock(&sim.lock);
    e->stream = s;
    e->seq = s->enqueued;
    pthread_mutex_unlock(&sim.lock);
    return PD_OK;
}

static pd_status sim_event_wait(void *user, int32_t device, pd_device_stream stream,
                                pd_device_event event)
{
    CALLED(event_wait);
    (void)user;
    (void)device;
    sim_event *e = event;
    if (e->stream == NULL)
        return PD_OK; /* never recorded: done */
    if (stream == NULL) {
        drain(e->stream, e->seq);
        return PD_OK;
    }
    job j = {.kind = JOB_WAIT, .wait_stream = e->stream, .wait_seq = e->seq, .counter = &sim.waits};
    return submit(stream, &j);
}

static pd_status sim_event_synchronize(void *user, int32_t device, pd_device_event event)
{
    CALLED(event_synchronize);
    (void)user;
    (void)device;
    sim_event *e = event;
    if (e->stream != NULL)
        drain(e->stream, e->seq);
    return PD_OK;
}

/* --- Registration -------------------------------------------------------------------------- */

static const pd_device_table sim_table = {
    .struct_size = sizeof(pd_device_table),
    .abi_version = PD_DEVICE_ABI_VERSION,
    .name = "sim",
    .device_count = sim_count,
    .set_device = sim_set_device,
    .get_device = sim_get_device,
    .alloc = sim_alloc_fn,
    .free = sim_free_fn,
    .host_alloc = sim_host_alloc,
    .host_free = sim_host_free,
    .memset = sim_memset,
    .copy_h2d = sim_h2d,
    .copy_d2h = sim_d2h,
    .copy_d2d = sim_d2d,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_stream_destroy,
    .stream_synchronize = sim_stream_synchronize,
    .stream_query = sim_stream_query,
    .event_create = sim_event_create,
    .event_destroy = sim_event_destroy,
    .event_record = sim_event_record,
    .event_wait = sim_event_wait,
    .event_synchronize = sim_event_synchronize,
    .convert = sim_convert,
};

const pd_device_table *pd_sim_device_table(void) { return &sim_table; }

pd_status pd_sim_device_install(int32_t *type)
{
    int32_t number = 0;
    pd_status st = pd_device_register("sim", &sim_table, &number);
    if (st == PD_OK && type != NULL)
        *type = number;
    return st;
}

void pd_sim_stats_get(pd_sim_stats *out)
{
    pthread_mutex_lock(&sim.lock);
    *out = sim.stats;
    pthread_mutex_unlock(&sim.lock);
}

void pd_sim_set_capacity(size_t bytes)
{
    pthread_mutex_lock(&sim.lock);
    sim.capacity = bytes;
    pthread_mutex_unlock(&sim.lock);
}

void pd_sim_calls_get(pd_sim_calls *out)
{
#define READ(member) out->member = __atomic_load_n(&calls.member, __ATOMIC_RELAXED)
    READ(alloc), READ(free), READ(memset), READ(copy), READ(convert), READ(launch);
    READ(stream_create), READ(stream_destroy), READ(stream_synchronize), READ(stream_query);
    READ(event_create), READ(event_destroy), READ(event_record), READ(event_wait);
    READ(event_synchronize);
#undef READ
}
