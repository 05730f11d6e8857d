/*
 * pending.c - completions (pending.h): tensors the executor has handed out before computing
 * them, and the wait for them that the host functions reading element data, the synchronous
 * runner (call/ctx.c) and pd_tensor_wait (exec/executor.c) share.
 */
#include "tensor/pending.h"
#include "pdext_executor.h"

#include <stdlib.h>
#include <string.h>

atomic_long pd__async_in_flight;
atomic_uint pd__fork_generation;

/* A fork's child has the parent's memory but none of its other threads: no executor worker
 * of the parent runs there, so its pending calls never end. */
static void note_fork(void) { atomic_fetch_add(&pd__fork_generation, 1); }
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void fork_watch_once(void) { (void)pthread_atfork(NULL, NULL, note_fork); }
void pd__fork_watch(void) { pthread_once(&fork_once, fork_watch_once); }

/* Completions whose last reference is gone, kept (initialized) for reuse: first in a short
 * list of the thread that dropped them (no lock: a caller makes its calls' completions and,
 * releasing their tensors, drops them again), then in a list shared by all threads; `next`
 * links them through `message`'s slot. A thread's list goes to the shared one when the
 * thread ends. */
#define FREE_MAX 1024
#define LOCAL_MAX 64
static pthread_mutex_t free_mu = PTHREAD_MUTEX_INITIALIZER;
static pd__completion *free_list;
static int free_count;

typedef struct local_list {
    pd__completion *head;
    int count;
    bool registered; /* its thread's exit hands it over (pthread key) */
} local_list;
static _Thread_local local_list local __attribute__((tls_model("initial-exec")));
static pthread_key_t local_key;
static pthread_once_t local_once = PTHREAD_ONCE_INIT;

static pd__completion *next_of(pd__completion *c) { return (pd__completion *)(void *)c->message; }

/* Frees a completion nobody keeps. */
static void completion_free(pd__completion *c)
{
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

/* A thread ends: its list goes to the shared one (what does not fit is freed). */
static void local_flush(void *arg)
{
    local_list *l = arg;
    while (l->head != NULL) {
        pd__completion *c = l->head;
        l->head = next_of(c);
        pthread_mutex_lock(&free_mu);
        bool kept = free_count < FREE_MAX;
        if (kept) {
            c->message = (char *)(void *)free_list;
            free_list = c;
            ++free_count;
        }
        pthread_mutex_unlock(&free_mu);
        if (!kept)
            completion_free(c);
    }
    l->count = 0;
    l->registered = false; /* a later release (another key's destructor) registers again */
}

static void local_key_create(void) { (void)pthread_key_create(&local_key, local_flush); }

pd__completion *pd__completion_new(uint64_t executor_id)
{
    pd__completion *c = local.head;
    if (c != NULL) {
        local.head = next_of(c);
        --local.count;
    } else {
        pthread_mutex_lock(&free_mu);
        c = free_list;
        if (c != NULL) {
            free_list = next_of(c);
            --free_count;
        }
        pthread_mutex_unlock(&free_mu);
    }
    if (c == NULL) {
        if ((c = malloc(sizeof *c)) == NULL) {
            pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_run_async: out of memory");
            return NULL;
        }
        pthread_mutex_init(&c->mu, NULL);
        pthread_cond_init(&c->cv, NULL);
    }
    atomic_init(&c->refs, 1);
    atomic_init(&c->state, PD__PENDING);
    atomic_init(&c->sleepers, 0);
    c->executor_id = executor_id;
    c->fork_generation = atomic_load_explicit(&pd__fork_generation, memory_order_relaxed);
    c->status = PD_OK;
    c->message = NULL;
    c->event = NULL;
    c->event_stream = NULL;
    return c;
}

void pd__completion_retain(pd__completion *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void pd__completion_release(pd__completion *c)
{
    if (c == NULL || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (atomic_load_explicit(&c->state, memory_order_relaxed) == PD__FAILED)
        atomic_fetch_sub_explicit(&pd__async_in_flight, 1, memory_order_release);
    if (c->event != NULL)
        pd_event_destroy(c->event);
    free(c->message);
    if (!local.registered) {
        pthread_once(&local_once, local_key_create);
        local.registered = pthread_setspecific(local_key, &local) == 0;
    }
    if (local.registered && local.count < LOCAL_MAX) {
        c->message = (char *)(void *)local.head;
        local.head = c;
        ++local.count;
        return;
    }
    pthread_mutex_lock(&free_mu);
    if (free_count < FREE_MAX) {
        c->message = (char *)(void *)free_list;
        free_list = c;
        ++free_count;
        c = NULL;
    }
    pthread_mutex_unlock(&free_mu);
    if (c != NULL)
        completion_free(c);
}

void pd__completion_finish(pd__completion *c, pd_status status, const char *message,
                           pd_event_t *event, pd_stream_t *stream)
{
    c->status = status;
    c->message = status != PD_OK && message ? strdup(message) : NULL;
    c->event = event;
    c->event_stream = stream;
    /* A poisoned completion counts as in flight while it lives, so that the synchronous
     * runner keeps looking at its inputs' completions and refuses a poisoned one with its
     * error instead of reading the failed call's unwritten output (pending.h). */
    if (status != PD_OK)
        atomic_fetch_add_explicit(&pd__async_in_flight, 1, memory_order_relaxed);
    /* No sleeper (the usual case: the caller is ahead): a store, no lock. A waiter counts
     * itself in `sleepers` before it tests the state, and both sides use sequentially
     * consistent operations, so either the waiter sees the new state or this sees the
     * waiter, which is then woken under the mutex (it tests the state under it too). */
    atomic_store_explicit(&c->state, status == PD_OK ? PD__DONE : PD__FAILED, memory_order_seq_cst);
    if (atomic_load_explicit(&c->sleepers, memory_order_seq_cst) == 0)
        return;
    pthread_mutex_lock(&c->mu);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void pd__completion_wait_state(pd__completion *c)
{
    /* A call submitted a moment ago (a caller that reads each result, a dependency on
     * another stream) is usually done within the polls: sleeping at once cost a chain that
     * waited for each call ~10 us a call, the futex sleep and the worker's wake-up. */
    for (int i = 0; i < PD__SPIN_POLLS; ++i) {
        if (atomic_load_explicit(&c->state, memory_order_acquire) != PD__PENDING)
            return;
        pd__spin_pause(i);
    }
    pthread_mutex_lock(&c->mu);
    atomic_fetch_add_explicit(&c->sleepers, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&c->state, memory_order_seq_cst) == PD__PENDING)
        pthread_cond_wait(&c->cv, &c->mu);
    atomic_fetch_sub_explicit(&c->sleepers, 1, memory_order_relaxed);
    pthread_mutex_unlock(&c->mu);
}

pd_status pd__completion_wait(pd__completion *c)
{
    if (atomic_load_explicit(&c->state, memory_order_acquire) == PD__PENDING &&
        c->fork_generation != atomic_load_explicit(&pd__fork_generation, memory_order_relaxed))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "the tensor was still being computed by an executor of the parent "
                        "process when this process was forked; its worker threads do not exist "
                        "here, so it will never be ready: read it before fork(), or compute it "
                        "again in this process");
    pd__completion_wait_state(c);
    if (atomic_load_explicit(&c->state, memory_order_acquire) == PD__FAILED)
        return pd__fail(c->status, "%s", c->message ? c->message : "an op failed (out of memory)");
    if (c->event != NULL)
        return pd_event_synchronize(c->event);
    return PD_OK;
}

void pd__storage_give_pending(pd_storage *s, pd__completion *c)
{
    pd__completion *old = atomic_exchange_explicit(&s->pending, c, memory_order_acq_rel);
    pd__completion_release(old);
}

void pd__storage_pending_drop(pd_storage *s)
{
    pd__completion *c = atomic_exchange_explicit(&s->pending, NULL, memory_order_acquire);
    pd__completion_release(c);
}

pd_status pd__storage_wait(const pd_storage *s)
{
    pd__completion *c = pd__storage_pending(s);
    return c ? pd__completion_wait(c) : PD_OK;
}

/* --- Host API ----------------------------------------------------------------------------- */

bool pd_tensor_is_pending(const pd_tensor *t)
{
    pd__completion *c = t ? pd__storage_pending(t->storage) : NULL;
    /* In a fork's child a call the parent left pending never ends: not pending, so that a
     * reader goes to pd_tensor_wait and gets its error rather than polling for ever. */
    return c != NULL && atomic_load_explicit(&c->state, memory_order_acquire) == PD__PENDING &&
           c->fork_generation == atomic_load_explicit(&pd__fork_generation, memory_order_relaxed);
}
