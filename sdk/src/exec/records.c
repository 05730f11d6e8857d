/*
 * records.c - the executor's call records (executor_internal.h): made, kept for reuse per
 * stream, retired by the worker with their tensors still held, and reclaimed by the next
 * submitter, which keeps the storages only the record still held as spares for its own
 * call's outputs.
 */
#include "call/runner_steps.h"
#include "exec/executor_internal.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Records launched on a worker hold at most this many bytes of tensors for their caller to
 * release (executor_internal.h, `retired`); a larger one is released on the worker, where
 * its memory goes back to the system anyway (mmap) and holding it would cost memory. */
#define RETIRE_BYTES_MAX ((size_t)1 << 20)

/* Call records live outside the malloc heap, in pages of their own: a record is ~10 KiB
 * and lives as long as its stream keeps it for reuse, and records that malloc placed among
 * the host's tensors fragmented its heap, so that a synchronous chain run after the
 * executor's calls no longer reused its buffers in turn (a Python chain of 16 KiB calls
 * slowed from 0.76 to 0.86 us a call while an idle executor lived, and back once it was
 * closed). Only a stream's growth maps pages; its kept records are reused. */
static pd__exec_call *record_map(void)
{
    /* Records start at different offsets into their pages (multiples of 64 bytes, within the
     * mapping's slack), so that the fields every call touches do not all fall in the same
     * cache sets. */
    static atomic_uint color;
    size_t page = 4096, map = (sizeof(pd__exec_call) + page - 1) / page * page;
    size_t slots = (map - sizeof(pd__exec_call)) / 64 + 1;
    size_t offset = atomic_fetch_add_explicit(&color, 7, memory_order_relaxed) % slots * 64;
    void *p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : (pd__exec_call *)(void *)((char *)p + offset);
}

static void record_unmap(pd__exec_call *call)
{
    size_t page = 4096, map = (sizeof(pd__exec_call) + page - 1) / page * page;
    munmap((void *)((uintptr_t)call & ~(uintptr_t)(page - 1)), map);
}

/* A storage only this reference holds, of host memory the runtime allocated (no deleter, no
 * device), small enough for a retired record to have held it: the next call's output may
 * take it over instead of a malloc. Nobody else can take a new reference to it (references
 * are made from references), so the count cannot rise behind this test. */
static bool spare_worthy(const pd_storage *s)
{
    return s != NULL && !s->external && s->dev == NULL && s->capacity <= RETIRE_BYTES_MAX &&
           atomic_load_explicit(&((pd_storage *)s)->refcount, memory_order_acquire) == 1;
}

/* Drops one reference to s, or keeps s among the call's spares (see spare_worthy). */
static void release_or_keep(pd__exec_call *call, bool keep, pd_storage *s)
{
    if (keep && call->n_spares < PD__EXEC_SPARES && spare_worthy(s)) {
        call->spares[call->n_spares++] = s;
        return;
    }
    pd__storage_release(s);
}

/* Releases what the call holds but its context (and frees its own arrays); with `keep`, the
 * storages of its tensors that only it holds become its spares. */
static void call_release(pd__exec_call *call, bool keep)
{
    for (int32_t j = 0; j < call->n_inputs; ++j)
        if (call->inputs[j].storage != NULL)
            release_or_keep(call, keep, call->inputs[j].storage);
    for (int32_t j = 0; j < call->n_outs; ++j)
        release_or_keep(call, keep, call->outs[j].storage);
    for (int32_t j = 0; j < call->n_deps; ++j)
        pd__completion_release(call->deps[j]);
    pd__completion_release(call->done);
    if (call->inputs != call->inline_inputs)
        free(call->inputs);
    if (call->outs != call->inline_outs)
        free(call->outs);
    if (call->deps != call->inline_deps)
        free(call->deps);
    if (call->dep_places != call->inline_dep_places)
        free(call->dep_places);
    free(call->attr_copy);
    free(call->message);
    if (call->host_event != NULL) /* a call that failed before its launch */
        (void)pd_event_destroy(call->host_event);
    call->host_event = NULL;
    call->retired = false;
}

/* Releases the spares a call did not use. */
void pd__exec_drop_spares(pd__exec_call *call)
{
    for (int32_t i = 0; i < call->n_spares; ++i)
        pd__storage_release(call->spares[i]);
    call->n_spares = 0;
}

/* Moves the worker's retired stack onto the submitters' list (free_mu held). */
static void take_retired(pd__exec_stream *st)
{
    pd__exec_call *c = atomic_exchange_explicit(&st->retired, NULL, memory_order_acquire);
    while (c != NULL) {
        pd__exec_call *next = c->next;
        c->next = st->free_calls;
        st->free_calls = c;
        ++st->n_free_calls;
        c = next;
    }
}

/* A call record for `stream`: one kept for reuse (its tensors released here, on the
 * submitter's thread, those only it held kept as spares for the new call's outputs), else a
 * new one (NULL on out of memory). */
pd__exec_call *pd__exec_record_new(pd_executor *ex, int32_t stream)
{
    pd__exec_stream *st = &ex->streams[stream];
    pthread_mutex_lock(&st->free_mu);
    if (st->free_calls == NULL)
        take_retired(st);
    pd__exec_call *call = st->free_calls;
    if (call != NULL) {
        st->free_calls = call->next;
        --st->n_free_calls;
    }
    pthread_mutex_unlock(&st->free_mu);
    if (call != NULL && call->retired) {
        pd__runner_release(&call->ctx, false);
        call_release(call, true);
    }
    if (call == NULL) {
        if ((call = record_map()) == NULL)
            return NULL;
        call->n_spares = 0;
    }
    call->next = NULL;
    call->done = NULL;
    call->deps = NULL;
    call->dep_places = NULL;
    call->n_deps = 0;
    call->inputs = NULL;
    call->n_inputs = 0;
    call->outs = NULL;
    call->n_outs = 0;
    call->bytes = 0;
    call->attr_copy = NULL;
    call->stream = stream;
    call->dev_stream = NULL;
    call->host_event = NULL;
    call->wait_launch = false;
    call->retired = false;
    call->status = PD_OK;
    call->message = NULL;
    return call;
}

/* Keeps a record for reuse on its stream (free_mu held), or frees it. */
static void keep_record(pd__exec_stream *st, pd__exec_call *call)
{
    if (st->n_free_calls < PD__EXEC_FREE_MAX) {
        call->next = st->free_calls;
        st->free_calls = call;
        ++st->n_free_calls;
    } else {
        record_unmap(call);
    }
}

/* Releases what the call holds but its context, and keeps the record for reuse. */
void pd__exec_record_free(pd_executor *ex, pd__exec_call *call)
{
    pd__exec_stream *st = &ex->streams[call->stream];
    call_release(call, false);
    pd__exec_drop_spares(call);
    pthread_mutex_lock(&st->free_mu);
    keep_record(st, call);
    pthread_mutex_unlock(&st->free_mu);
}

/* On a worker, after the launch: the record goes to the retired stack with its tensors when
 * they are small, else is released here. */
void pd__exec_record_retire(pd_executor *ex, pd__exec_call *call)
{
    size_t held = call->bytes;
    for (int32_t j = 0; j < call->n_inputs; ++j)
        held += pd_nbytes(&call->inputs[j]);
    if (held > RETIRE_BYTES_MAX) {
        pd__runner_release(&call->ctx, false);
        pd__exec_record_free(ex, call);
        return;
    }
    call->retired = true;
    pd__exec_stream *st = &ex->streams[call->stream];
    pd__exec_call *top = atomic_load_explicit(&st->retired, memory_order_relaxed);
    do
        call->next = top;
    while (!atomic_compare_exchange_weak_explicit(&st->retired, &top, call, memory_order_release,
                                                  memory_order_relaxed));
}

void pd__exec_reclaim(pd__exec_stream *st)
{
    pthread_mutex_lock(&st->free_mu);
    take_retired(st);
    pd__exec_call *list = st->free_calls;
    st->free_calls = NULL;
    st->n_free_calls = 0;
    pthread_mutex_unlock(&st->free_mu);
    /* released outside the lock: a deleter may run host code (Python takes its lock) */
    for (pd__exec_call *c = list; c != NULL; c = c->next)
        if (c->retired) {
            pd__runner_release(&c->ctx, false);
            call_release(c, false);
        }
    pthread_mutex_lock(&st->free_mu);
    while (list != NULL) {
        pd__exec_call *next = list->next;
        keep_record(st, list);
        list = next;
    }
    pthread_mutex_unlock(&st->free_mu);
}

void pd__exec_free_records(pd__exec_stream *st)
{
    pd__exec_reclaim(st);
    for (pd__exec_call *c = st->free_calls, *next; c != NULL; c = next) {
        next = c->next;
        record_unmap(c);
    }
    st->free_calls = NULL;
    st->n_free_calls = 0;
}

/* A spare of the call that holds `bytes` without wasting more than half of itself (the
 * storage cache's rule, tensor/storage.c), taken out of the spares; NULL if none. */
pd_storage *pd__exec_take_spare(pd__exec_call *call, size_t bytes)
{
    for (int32_t i = 0; i < call->n_spares; ++i) {
        pd_storage *s = call->spares[i];
        if (s->capacity >= bytes && s->capacity / 2 <= bytes) {
            call->spares[i] = call->spares[--call->n_spares];
            s->bytes = bytes;
            /* its last call's completion goes (plain loads and stores: only this thread
             * can reach the storage) */
            pd__completion *old = atomic_load_explicit(&s->pending, memory_order_relaxed);
            if (old != NULL) {
                atomic_store_explicit(&s->pending, NULL, memory_order_relaxed);
                pd__completion_release(old);
            }
            return s;
        }
    }
    return NULL;
}
