/*
 * executor_internal.h - what the executor's two files share: the executor and its streams
 * (executor.c: queues, workers, synchronize, destroy) and one submitted call (submit.c: the
 * caller's stage and the launch stage).
 */
#ifndef PD_EXEC_EXECUTOR_INTERNAL_H
#define PD_EXEC_EXECUTOR_INTERNAL_H

#include "call/kernel_ctx.h"
#include "exec/pending.h"
#include "pdext_executor.h"

#define PD__EXEC_INLINE 4     /* inputs and outputs a call record holds without the heap */
#define PD__EXEC_FREE_MAX 256 /* call records an executor keeps for reuse */

/* One submitted call, from pd_run_async until its launch stage ends. */
typedef struct pd__exec_call {
    pd_kernel_ctx ctx;          /* the runner's state; points into itself, so never moves */
    struct pd__exec_call *next; /* in its stream's queue */
    pd__completion *done;       /* its outputs' completion (one reference) */
    pd__completion **deps;      /* completions of pending inputs (one reference each) */
    pd_place *dep_places;       /* the place of the input each came with */
    int32_t n_deps;
    pd_tensor *inputs; /* retained copies of the host's input tensors, which ctx binds */
    int32_t n_inputs;
    pd_tensor *outs; /* retained copies of the outputs handed to the host, in slot order */
    int32_t n_outs;
    size_t bytes;     /* of its outputs: what the queue's back pressure counts */
    void *attr_copy;  /* the attr values' strings and arrays, copied */
    bool wait_launch; /* the caller waits for the launch and hands the outputs over itself */
    bool retired;     /* launched; still holds its tensors for the caller to release */
    pd_status status; /* wait_launch: how the launch went (message in `message`) */
    char *message;
    pd_tensor inline_inputs[PD__EXEC_INLINE]; /* inputs, outs, deps, dep_places point here */
    pd_tensor inline_outs[PD__EXEC_INLINE];   /* when they fit */
    pd__completion *inline_deps[PD__EXEC_INLINE];
    pd_place inline_dep_places[PD__EXEC_INLINE];
} pd__exec_call;

typedef struct pd__exec_stream {
    struct pd_executor *ex;
    pthread_mutex_t mu;
    pthread_cond_t not_empty; /* the worker sleeps on it (`sleeping` set) */
    pthread_cond_t not_full;  /* submitters wait on it while `queued` reaches the depth */
    pthread_cond_t idle;      /* synchronize waits on it until the queue is empty and idle */
    pd__exec_call *head, *tail;
    int32_t queued;
    size_t queued_bytes;  /* the queued calls' output bytes */
    int32_t waiting;      /* submitters waiting on not_full */
    atomic_bool has_work; /* head != NULL, readable without the mutex (the worker's polling) */
    bool busy;            /* the worker is running calls it took */
    bool sleeping;        /* the worker waits on not_empty */
    bool closing;         /* destroy: the worker drains the queue and ends */
    pthread_t thread;
    /* Calls enqueued (under mu) and launched by the worker: equal when the stream is idle,
     * which lets a small call run on its submitter (pd_run_async) without the lock. */
    atomic_uint_fast64_t pushed;
    char pad[64];
    atomic_uint_fast64_t finished;
} pd__exec_stream;

struct pd_executor {
    atomic_uint magic; /* EXEC_LIVE, or EXEC_DEAD once destroyed */
    uint64_t id;
    const pd_registry *reg;
    int32_t n_streams;
    int32_t depth;
    size_t inline_bytes; /* see pd_executor_options; 0: never */
    pd__exec_stream *streams;
    atomic_uint_fast64_t submitted, failed;
    char pad0[64]; /* `done` is the workers': not on the submitters' cache line */
    atomic_uint_fast64_t done;
    pthread_mutex_t err_mu; /* guards the first error since the last synchronize */
    pd_status first_status;
    char *first_message;
    struct pd_executor *grave_next; /* destroyed executors' headers (executor.c) */
    /* Records kept for reuse (submit.c). The workers push launched records on `retired`
     * without a lock, still holding their tensors; a submitter takes the whole stack into
     * `free_calls` (under free_mu, which only submitters take) and releases a record's
     * tensors when it reuses it. Tensors are so freed on the thread that allocated them,
     * where malloc reuses their memory at once: freed on a worker, they went to the
     * allocating thread's arena under its lock, and the caller's next allocation met cold
     * memory and the lock. synchronize and destroy release what retired records hold. */
    char pad1[64];
    _Atomic(struct pd__exec_call *) retired;
    char pad2[64];
    pthread_mutex_t free_mu;
    pd__exec_call *free_calls;
    int32_t n_free_calls;
};

/* executor.c: the executor is live (else a message naming `who`). */
pd_status pd__exec_check(const char *who, const pd_executor *ex, int32_t stream);
/* executor.c: appends a call to the stream's queue (blocks while it is full). */
void pd__exec_enqueue(pd_executor *ex, int32_t stream, pd__exec_call *call);
/* executor.c: notes a finished call in the counters and the first error. */
void pd__exec_note_done(pd_executor *ex, pd_status status, const char *message);

/* submit.c: releases what retired records hold (the stack taken, records kept for reuse). */
void pd__exec_reclaim(pd_executor *ex);
/* submit.c: frees every record kept for reuse (destroy, after its workers ended). */
void pd__exec_free_records(pd_executor *ex);

/* submit.c: the launch stage of one call, on its stream's worker: waits for its inputs,
 * allocates the workspace, runs the kernel and settles the outputs; then finishes the
 * completion and frees the call (or, for wait_launch, wakes the caller). */
void pd__exec_launch(pd_executor *ex, pd__exec_call *call);

#endif /* PD_EXEC_EXECUTOR_INTERNAL_H */
