/*
 * pending.h - completions: how a tensor made by the executor says whether it is computed yet.
 *
 * Every call the executor runs owns one completion, shared by all its outputs: each output's
 * storage points at it (pd_storage.pending, one reference per storage). A completion is
 * pending until the call's launch stage ends, then done or failed (with the status and
 * message of the failing op, which poisoned dependents copy). On a device the launch stage
 * also records an event after the kernel's work: a waiter waits for the state, then for the
 * event. A completion that is done is never pending again, so readers test the state with one
 * acquire load and take no lock in the common case.
 *
 * The storage keeps its completion until it dies; an inplace call replaces it (the new call
 * depends on the old one, captured at submission).
 */
#ifndef PD_TENSOR_PENDING_H
#define PD_TENSOR_PENDING_H

#include "tensor/tensor_internal.h"

#include <sched.h>

enum { PD__PENDING = 0, PD__DONE = 1, PD__FAILED = 2 };

typedef struct pd__completion {
    atomic_int refs;
    atomic_int state;     /* PD__PENDING, PD__DONE or PD__FAILED (release store, acquire load) */
    uint64_t executor_id; /* the executor that runs the call (for pd_tensor_wait's check) */
    pd_status status;     /* failed: the error; written before the state */
    char *message;        /* failed: "<op>: <message> [file:line]" (heap; NULL: out of memory) */
    pd_event_t *event;    /* device work of the call, recorded after its launch; NULL: none */
    pd_stream_t *event_stream; /* the stream the event was recorded on (an executor stream's) */
    atomic_int sleepers;       /* threads on cv (or about to be): finish skips the mutex at 0 */
    pthread_mutex_t mu;        /* with cv: sleeping until the state leaves PD__PENDING */
    pthread_cond_t cv;
    unsigned fork_generation; /* pd__fork_generation when made: pending in a fork's child
                               * means never done (its worker is in the parent) */
} pd__completion;

/* Async calls submitted and not yet done, over all executors (a worker subtracts its calls
 * once per batch, so the count may lag behind, never ahead), plus the failed completions
 * still alive (a poisoned tensor must never be read as data). While it is 0 no storage is
 * pending or poisoned, which lets the synchronous runner skip looking at its host inputs'
 * completions (a device input may still have its call's work queued on the device: see the
 * event). */
extern atomic_long pd__async_in_flight;

/* Forks seen by this process (bumped in each child, pthread_atfork): an executor or a
 * pending completion made under another generation belongs to the parent's threads. */
extern atomic_uint pd__fork_generation;
/* Starts counting forks (once per process; pd_executor_create calls it). */
void pd__fork_watch(void);

/* Polls a thread makes, about 20-50 us, before it sleeps on a condition: a worker waiting
 * for calls (executor.c) and a host waiting for a call's completion. Work handed to another
 * thread a moment ago usually arrives or ends within that time, sooner than a futex sleep and
 * its wake-up (several microseconds each). */
#define PD__SPIN_POLLS 4096

/* One poll's pause: a spin-wait hint to the core (x86 pause, Arm yield), and every 64th
 * poll the CPU given up, which this machine's other threads may need. */
static inline void pd__spin_pause(int poll)
{
    if (poll % 64 == 63) {
        sched_yield();
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

/* A new pending completion with one reference; NULL on out of memory (message set). */
pd__completion *pd__completion_new(uint64_t executor_id);
void pd__completion_retain(pd__completion *c);
void pd__completion_release(pd__completion *c);
/* Ends the completion: done (status PD_OK) or failed with `message` (copied); `event`
 * (owned by the completion from here on), recorded on `stream`, marks the call's device
 * work. Wakes every waiter. */
void pd__completion_finish(pd__completion *c, pd_status status, const char *message,
                           pd_event_t *event, pd_stream_t *stream);
/* Blocks until c is no longer pending (host side only: no event waited for): polls first
 * (PD__SPIN_POLLS), then sleeps. */
void pd__completion_wait_state(pd__completion *c);
/* Blocks until c's call is computed, device work included; PD_OK, or its error recorded as
 * this thread's last error. */
pd_status pd__completion_wait(pd__completion *c);

/* The storage's completion (no reference taken), NULL if it was never pending. */
static inline pd__completion *pd__storage_pending(const pd_storage *s)
{
    return s ? atomic_load_explicit(&((pd_storage *)s)->pending, memory_order_acquire) : NULL;
}
/* Makes c the storage's completion, with a reference to c the caller gives, dropping the
 * one it had. */
void pd__storage_give_pending(pd_storage *s, pd__completion *c);

#endif /* PD_TENSOR_PENDING_H */
