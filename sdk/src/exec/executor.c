/*
 * executor.c - the executor (pdext_executor.h): its streams, each a queue of submitted calls
 * with one worker thread that runs their launch stage in order, and the host calls that wait
 * for them (synchronize, destroy).
 *
 * A queue is a linked list under the stream's mutex. The worker takes every queued call at
 * once and runs them outside the lock, so that a submitter pays for one short critical section
 * and a condition signal only when the worker sleeps. Destroyed executors keep their header
 * (a few dozen bytes) on a list for the life of the process, marked dead, so that a call on a
 * destroyed handle is refused instead of reading freed memory.
 */
#include "exec/executor_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STREAMS_MAX 64
#define DEPTH_DEFAULT 1024
#define DEPTH_MAX (1 << 20)
#define INLINE_DEFAULT 65536
#define INLINE_MAX (1 << 20)
#define QUEUED_BYTES_MAX ((size_t)2 << 20) /* see pd__exec_enqueue */

static atomic_uint_fast64_t next_id = 1;

/* The CPUs this process may run on (its affinity mask: taskset, cpusets), at least 1. */
static int32_t cpus_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (int32_t)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int32_t)n : 1;
}

/* Whether an executor that does not choose measures whether handing calls over pays:
 * yes, unless PDEXT_EXECUTOR_ADAPTIVE=0 (every call then goes where the rules of size and
 * cores send it, as before the measure: what a test of pending state or a benchmark of the
 * hand-over wants). */
static bool adaptive_default(void)
{
    const char *v = getenv("PDEXT_EXECUTOR_ADAPTIVE");
    return v == NULL || strcmp(v, "0") != 0;
}

/* Headers of destroyed executors (see the file comment). */
static pthread_mutex_t grave_mu = PTHREAD_MUTEX_INITIALIZER;
static pd_executor *grave;

uint64_t pd__executor_id(const pd_executor *ex) { return ex->id; }

pd_status pd__exec_check_failed(const char *who, const pd_executor *ex, int32_t stream)
{
    if (ex == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: executor is NULL", who);
    unsigned magic = atomic_load_explicit(&((pd_executor *)ex)->magic, memory_order_acquire);
    if (magic == PD__EXEC_DEAD)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: the executor was destroyed", who);
    if (magic != PD__EXEC_LIVE)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: executor %p is not an executor", who,
                        (const void *)ex);
    if (ex->fork_generation != atomic_load_explicit(&pd__fork_generation, memory_order_relaxed))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the executor was created before this process was forked; its "
                        "worker threads stayed in the parent process, so it cannot run or wait "
                        "for calls here: create a new executor in this process",
                        who);
    if (stream < 0 || stream >= ex->n_streams)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: stream %d is out of range; the executor has %d stream%s (0..%d)", who,
                        (int)stream, (int)ex->n_streams, ex->n_streams == 1 ? "" : "s",
                        (int)ex->n_streams - 1);
    return PD_OK;
}

void pd__exec_note_done(pd_executor *ex, pd_status status, const char *message)
{
    if (status != PD_OK) {
        atomic_fetch_add_explicit(&ex->failed, 1, memory_order_relaxed);
        pthread_mutex_lock(&ex->err_mu);
        if (ex->first_status == PD_OK) {
            ex->first_status = status;
            ex->first_message = message ? strdup(message) : NULL;
        }
        pthread_mutex_unlock(&ex->err_mu);
    }
    atomic_fetch_add_explicit(&ex->done, 1, memory_order_release);
}

/* The queue holds `depth` calls, or (past the first) the output bytes it may hold (mu held):
 * nothing more fits, whatever its size. */
static bool queue_full(const pd_executor *ex, const pd__exec_stream *st)
{
    return st->queued >= ex->depth || (st->queued > 0 && st->queued_bytes >= QUEUED_BYTES_MAX);
}

void pd__exec_wait_room(pd_executor *ex, int32_t stream)
{
    pd__exec_stream *st = &ex->streams[stream];
    if (!atomic_load_explicit(&st->full, memory_order_relaxed))
        return; /* a hint: pd__exec_enqueue applies the limits under the lock */
    pthread_mutex_lock(&st->mu);
    while (queue_full(ex, st)) {
        ++st->waiting;
        pthread_cond_wait(&st->not_full, &st->mu);
        --st->waiting;
    }
    pthread_mutex_unlock(&st->mu);
}

void pd__exec_enqueue(pd_executor *ex, int32_t stream, pd__exec_call *call)
{
    pd__exec_stream *st = &ex->streams[stream];
    call->next = NULL;
    pthread_mutex_lock(&st->mu);
    /* Back pressure: at most `depth` calls, and (past the first) at most QUEUED_BYTES_MAX
     * bytes of their outputs, wait in the queue. A caller far ahead of the kernels would
     * otherwise hold the outputs of every queued call at once: fresh memory for each (page
     * faults, caches cold) where a synchronous chain reuses two buffers. 2 MiB: a chain of
     * 16 KiB calls ran twice as fast for the caller as with 8 MiB, measured alternating the
     * two builds, and large outputs queue one at a time. */
    while (st->queued >= ex->depth ||
           (st->queued > 0 && st->queued_bytes + call->bytes > QUEUED_BYTES_MAX)) {
        ++st->waiting;
        pthread_cond_wait(&st->not_full, &st->mu);
        --st->waiting;
    }
    if (st->tail)
        st->tail->next = call;
    else
        st->head = call;
    st->tail = call;
    ++st->queued;
    st->queued_bytes += call->bytes;
    if (queue_full(ex, st))
        atomic_store_explicit(&st->full, true, memory_order_relaxed);
    atomic_store_explicit(&st->pushed, atomic_load_explicit(&st->pushed, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (!atomic_load_explicit(&st->has_work, memory_order_relaxed))
        atomic_store_explicit(&st->has_work, true, memory_order_relaxed);
    if (st->sleeping)
        pthread_cond_signal(&st->not_empty);
    pthread_mutex_unlock(&st->mu);
}

/* Polls the queue for a while before the worker sleeps: a caller submitting a chain of small
 * ops then finds the worker awake and pays for no wake-up (a futex call of a few
 * microseconds, more than a small kernel). Called and returns with the mutex held. */
static void linger(pd__exec_stream *st)
{
    pthread_mutex_unlock(&st->mu);
    for (int i = 0; i < PD__SPIN_POLLS; ++i) {
        if (atomic_load_explicit(&st->has_work, memory_order_relaxed))
            break;
        pd__spin_pause(i);
    }
    pthread_mutex_lock(&st->mu);
}

static void *worker_main(void *arg)
{
    pd__exec_stream *st = arg;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        if (st->head == NULL && !st->closing)
            linger(st);
        while (st->head == NULL && !st->closing) {
            st->sleeping = true;
            pthread_cond_wait(&st->not_empty, &st->mu);
            st->sleeping = false;
        }
        if (st->head == NULL)
            break; /* closing, and nothing left */
        pd__exec_call *batch = st->head;
        atomic_store_explicit(&st->has_work, false, memory_order_relaxed);
        st->head = st->tail = NULL;
        st->queued = 0;
        st->queued_bytes = 0;
        if (atomic_load_explicit(&st->full, memory_order_relaxed))
            atomic_store_explicit(&st->full, false, memory_order_relaxed);
        st->busy = true;
        if (st->waiting > 0)
            pthread_cond_broadcast(&st->not_full);
        pthread_mutex_unlock(&st->mu);
        long n = 0;
        while (batch) {
            pd__exec_call *next = batch->next;
            pd__exec_launch(st->ex, batch); /* frees it, or hands it back to its caller */
            batch = next;
            ++n;
        }
        /* Once per batch, as the lines they live on are the submitters' too: both counts
         * may only lag behind the work (a stream then looks busy a little longer, and
         * pd__async_in_flight overstates what is pending, which pending.h allows). */
        atomic_fetch_add_explicit(&st->finished, (uint_fast64_t)n, memory_order_release);
        atomic_fetch_sub_explicit(&pd__async_in_flight, n, memory_order_release);
        pthread_mutex_lock(&st->mu);
        st->busy = false;
        if (st->head == NULL)
            pthread_cond_broadcast(&st->idle);
    }
    st->busy = false;
    pthread_cond_broadcast(&st->idle);
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* Stops and joins the first n streams' workers (after they drain their queues). */
static void streams_stop(pd_executor *ex, int32_t n)
{
    for (int32_t i = 0; i < n; ++i) {
        pd__exec_stream *st = &ex->streams[i];
        pthread_mutex_lock(&st->mu);
        st->closing = true;
        pthread_cond_signal(&st->not_empty);
        pthread_mutex_unlock(&st->mu);
        pthread_join(st->thread, NULL);
    }
    for (int32_t i = 0; i < ex->n_streams; ++i) {
        pd__exec_stream *st = &ex->streams[i];
        pd__exec_free_records(st);
        pd__exec_device_streams_free(st);
        pthread_mutex_destroy(&st->dev_mu);
        pthread_mutex_destroy(&st->free_mu);
        pthread_mutex_destroy(&st->mu);
        pthread_cond_destroy(&st->not_empty);
        pthread_cond_destroy(&st->not_full);
        pthread_cond_destroy(&st->idle);
        pd__exec_adapt_free(st);
    }
}

pd_status pd_executor_create(const pd_registry *reg, const pd_executor_options *options,
                             pd_executor **out)
{
    static const char who[] = "pd_executor_create";
    if (out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: out is NULL", who);
    pd_executor_options o = {sizeof o, 0, 0, 0, 0};
    if (options != NULL) {
        size_t need = offsetof(pd_executor_options, depth) + sizeof o.depth;
        if (options->struct_size < need)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: options->struct_size is %u; set it to sizeof(pd_executor_options) "
                            "(%zu)",
                            who, (unsigned)options->struct_size, sizeof o);
        o.n_streams = options->n_streams;
        o.depth = options->depth;
        if (options->struct_size >= offsetof(pd_executor_options, inline_bytes) + sizeof(int32_t))
            o.inline_bytes = options->inline_bytes;
        if (options->struct_size >= offsetof(pd_executor_options, adaptive) + sizeof(int32_t))
            o.adaptive = options->adaptive;
    }
    if (o.adaptive < -1 || o.adaptive > 1)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: adaptive is %d; expected -1 (off), 0 (the default: on, unless "
                        "PDEXT_EXECUTOR_ADAPTIVE=0) or 1 (on)",
                        who, (int)o.adaptive);
    if (o.n_streams < 0 || o.n_streams > STREAMS_MAX)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: n_streams is %d; expected 1..%d (0 for the default, 1)", who,
                        (int)o.n_streams, STREAMS_MAX);
    if (o.depth < 0 || o.depth > DEPTH_MAX)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: depth is %d; expected 1..%d (0 for the default, %d)", who,
                        (int)o.depth, DEPTH_MAX, DEPTH_DEFAULT);
    if (o.inline_bytes < -1 || o.inline_bytes > INLINE_MAX)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: inline_bytes is %d; expected -1 (never), 0 (the default, %d) or "
                        "1..%d",
                        who, (int)o.inline_bytes, INLINE_DEFAULT, INLINE_MAX);
    pd_executor *ex = calloc(1, sizeof *ex);
    int32_t n = o.n_streams ? o.n_streams : 1;
    if (ex == NULL || (ex->streams = calloc((size_t)n, sizeof *ex->streams)) == NULL) {
        free(ex);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
    atomic_init(&ex->magic, PD__EXEC_LIVE);
    ex->id = atomic_fetch_add(&next_id, 1);
    pd__fork_watch();
    ex->fork_generation = atomic_load(&pd__fork_generation);
    ex->reg = reg;
    ex->n_streams = n;
    ex->depth = o.depth ? o.depth : DEPTH_DEFAULT;
    ex->inline_bytes = o.inline_bytes == 0  ? INLINE_DEFAULT
                       : o.inline_bytes < 0 ? 0
                                            : (size_t)o.inline_bytes;
    ex->n_cpus = cpus_available();
    ex->adaptive = o.adaptive == 1 || (o.adaptive == 0 && adaptive_default());
    pthread_mutex_init(&ex->err_mu, NULL);
    for (int32_t i = 0; i < n; ++i) {
        pd__exec_stream *st = &ex->streams[i];
        st->ex = ex;
        pthread_mutex_init(&st->mu, NULL);
        pthread_mutex_init(&st->free_mu, NULL);
        pthread_mutex_init(&st->dev_mu, NULL);
        atomic_init(&st->retired, NULL);
        pthread_cond_init(&st->not_empty, NULL);
        pthread_cond_init(&st->not_full, NULL);
        pthread_cond_init(&st->idle, NULL);
        atomic_init(&st->has_work, false);
        atomic_init(&st->full, false);
        atomic_init(&st->pushed, 0);
        atomic_init(&st->finished, 0);
        atomic_init(&st->here_owner, 0);
        atomic_init(&st->here_owned, 0);
        atomic_init(&st->here_shared, 0);
        pd__exec_adapt_init(st);
    }
    for (int32_t i = 0; i < n; ++i) {
        int rc = pthread_create(&ex->streams[i].thread, NULL, worker_main, &ex->streams[i]);
        if (rc != 0) {
            streams_stop(ex, i);
            pthread_mutex_destroy(&ex->err_mu);
            free(ex->streams);
            free(ex);
            return pd__fail(PD_ERR_INTERNAL, "%s: cannot start worker thread %d (%s)", who, (int)i,
                            strerror(rc));
        }
    }
    *out = ex;
    return PD_OK;
}

pd_status pd_executor_synchronize(pd_executor *ex)
{
    pd_status s = pd__exec_check("pd_executor_synchronize", ex, 0);
    if (s != PD_OK)
        return s;
    for (int32_t i = 0; i < ex->n_streams; ++i) {
        pd__exec_stream *st = &ex->streams[i];
        pthread_mutex_lock(&st->mu);
        while (st->head != NULL || st->busy)
            pthread_cond_wait(&st->idle, &st->mu);
        pthread_mutex_unlock(&st->mu);
        pd__exec_reclaim(st); /* the tensors the launched calls still held */
    }
    /* and the device work the launches queued */
    pd_status device = PD_OK;
    for (int32_t i = 0; i < ex->n_streams && device == PD_OK; ++i)
        device = pd__exec_device_synchronize(&ex->streams[i]);
    pthread_mutex_lock(&ex->err_mu);
    s = ex->first_status;
    char *message = ex->first_message;
    ex->first_status = PD_OK;
    ex->first_message = NULL;
    pthread_mutex_unlock(&ex->err_mu);
    if (s != PD_OK)
        pd__fail(s, "%s", message ? message : "an op failed (out of memory for its message)");
    free(message);
    if (s == PD_OK && device != PD_OK)
        return pd__fail_prefix("pd_executor_synchronize: ");
    return s;
}

pd_status pd_executor_destroy(pd_executor *ex)
{
    if (ex == NULL)
        return PD_OK;
    pd_status s = pd__exec_check("pd_executor_destroy", ex, 0);
    if (s != PD_OK)
        return s;
    atomic_store_explicit(&ex->magic, PD__EXEC_DEAD, memory_order_release);
    streams_stop(ex, ex->n_streams); /* the workers drain their queues first */
    free(ex->streams);
    ex->streams = NULL;
    ex->n_streams = 0;
    pthread_mutex_destroy(&ex->err_mu);
    free(ex->first_message);
    ex->first_message = NULL;
    pthread_mutex_lock(&grave_mu);
    ex->grave_next = grave;
    grave = ex;
    pthread_mutex_unlock(&grave_mu);
    return PD_OK;
}

/* Calls its submitters ran: by the rules of size and cores (`unpaid` false), or because the
 * measure found handing over did not pay (true). */
static uint64_t ran_here(const pd_executor *e, bool unpaid)
{
    uint64_t n = 0;
    for (int32_t i = 0; i < e->n_streams; ++i)
        n += unpaid ? atomic_load_explicit(&e->streams[i].adapt.runs_owned, memory_order_relaxed) +
                          atomic_load_explicit(&e->streams[i].adapt.runs, memory_order_relaxed)
                    : pd__exec_here_runs(&e->streams[i]);
    return n;
}

pd_status pd_executor_get_stats(const pd_executor *ex, pd_executor_stats *out)
{
    pd_status s = pd__exec_check("pd_executor_get_stats", ex, 0);
    if (s != PD_OK)
        return s;
    if (out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_executor_get_stats: out is NULL");
    pd_executor *e = (pd_executor *)ex;
    uint64_t inline_runs = ran_here(e, false) + ran_here(e, true);
    out->submitted = inline_runs;
    for (int32_t i = 0; i < e->n_streams; ++i) /* calls queued, counted under the queue's lock */
        out->submitted += atomic_load_explicit(&e->streams[i].pushed, memory_order_relaxed);
    out->done = atomic_load_explicit(&e->done, memory_order_acquire) + inline_runs;
    out->failed = atomic_load_explicit(&e->failed, memory_order_relaxed);
    return PD_OK;
}

pd_status pd_executor_get_counts(const pd_executor *ex, pd_executor_counts *out)
{
    pd_status s = pd__exec_check("pd_executor_get_counts", ex, 0);
    if (s != PD_OK)
        return s;
    if (out == NULL || out->struct_size < offsetof(pd_executor_counts, trials) + sizeof(uint64_t))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "pd_executor_get_counts: %s; set out->struct_size to "
                        "sizeof(pd_executor_counts) (%zu)",
                        out ? "out->struct_size is too small" : "out is NULL",
                        sizeof(pd_executor_counts));
    pd_executor *e = (pd_executor *)ex;
    out->handed_over = 0;
    for (int32_t i = 0; i < e->n_streams; ++i)
        out->handed_over += atomic_load_explicit(&e->streams[i].pushed, memory_order_relaxed);
    out->ran_here_unpaid = ran_here(e, true);
    out->ran_here = out->ran_here_unpaid + ran_here(e, false);
    out->trials = atomic_load_explicit(&e->trials, memory_order_relaxed);
    return PD_OK;
}

pd_status pd_tensor_wait(const pd_executor *ex, const pd_tensor *t)
{
    if (t == NULL || !pd_defined(t))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_tensor_wait: the tensor is %s",
                        t ? "undefined" : "NULL");
    pd__completion *c = pd__storage_pending(t->storage);
    if (c == NULL)
        return PD_OK;
    if (ex != NULL && c->executor_id != pd__executor_id(ex))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "pd_tensor_wait: the tensor was made by executor #%llu, not by the "
                        "executor given (#%llu); pass that executor or NULL",
                        (unsigned long long)c->executor_id,
                        (unsigned long long)pd__executor_id(ex));
    return pd__completion_wait(c);
}
