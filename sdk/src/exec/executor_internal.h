/*
 * executor_internal.h - what the executor's files share: the executor and its streams
 * (executor.c: queues, workers, synchronize, destroy), one submitted call (submit.c: the
 * caller's stage and the launch stage) and its record's life (records.c).
 */
#ifndef PD_EXEC_EXECUTOR_INTERNAL_H
#define PD_EXEC_EXECUTOR_INTERNAL_H

#include "call/kernel_ctx.h"
#include "pdext_executor.h"
#include "tensor/pending.h"

#define PD__EXEC_INLINE 4     /* inputs and outputs a call record holds without the heap */
#define PD__EXEC_FREE_MAX 256 /* call records a stream keeps for reuse */
#define PD__EXEC_SPARES 4     /* storages a reused record hands to the next call's outputs */
#define PD__EXEC_DEVICES 8    /* devices one executor stream may run calls on */

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
    size_t bytes;            /* of its outputs: what the queue's back pressure counts */
    void *attr_copy;         /* the attr values' strings and arrays, copied */
    int32_t stream;          /* the executor stream it was submitted to */
    pd_stream_t *dev_stream; /* a device call: its executor stream's stream on that device */
    pd_event_t *host_event;  /* recorded at submission on the submitter's stream of the
                              * device, which dev_stream waits for before the launch */
    int32_t n_spares;
    pd_storage *spares[PD__EXEC_SPARES]; /* see call_new (submit.c) */
    bool wait_launch; /* the caller waits for the launch and hands the outputs over itself */
    bool mark;        /* ends a hand-over trial (where.c): its launch's end time is noted */
    bool retired;     /* launched; still holds its tensors for the caller to release */
    pd_status status; /* wait_launch: how the launch went (message in `message`) */
    char *message;
    pd_tensor inline_inputs[PD__EXEC_INLINE]; /* inputs, outs, deps, dep_places point here */
    pd_tensor inline_outs[PD__EXEC_INLINE];   /* when they fit */
    pd__completion *inline_deps[PD__EXEC_INLINE];
    pd_place inline_dep_places[PD__EXEC_INLINE];
} pd__exec_call;

/* Where a call runs (where.c). */
typedef enum pd__exec_where_to {
    PD__EXEC_HAND,        /* queued to its stream's worker */
    PD__EXEC_HAND_MARK,   /* queued, and its launch ends a hand-over trial (call->mark) */
    PD__EXEC_HERE,        /* on the submitter: small, or the other CPUs run other workers */
    PD__EXEC_HERE_UNPAID, /* on the submitter because handing over was measured not to pay:
                           * after its stream's queued calls and its pending inputs */
} pd__exec_where_to;

/* A stream's measure of whether handing its calls over pays (where.c): trials of a few
 * milliseconds, each all handed over (the other rules applying) or all run on the
 * submitter, compared in ns per call. Submitters only, under `mu`. */
typedef struct pd__exec_adapt {
    pthread_mutex_t mu;
    bool here;                /* the current trial runs calls on the submitter */
    bool probing;             /* it tries the way not chosen: judged after its first sample */
    bool fresh;               /* its first sample replaces the way's average (old conditions) */
    bool mark_out;            /* a hand-over trial's last call is queued, its end not yet seen */
    bool discard;             /* that trial spans a pause of the host: no sample */
    int32_t count;            /* calls in the trial so far */
    int32_t mark_count;       /* calls the marked trial holds */
    int32_t since;            /* trials since the last switch */
    int32_t interval;         /* trials before the way not chosen is tried again */
    int32_t strikes;          /* trials the way chosen lost in a row */
    uint64_t epoch;           /* the executor's `switches` when this stream's trial began */
    uint64_t probe_seen;      /* the executor's `here_probes` this stream saw last */
    uint64_t start_ns;        /* the trial's start; 0: at the next call */
    _Atomic uint64_t last_ns; /* the stream's last measured submit (pauses end a trial) */
    double ns_hand, ns_here;  /* average ns per call of each way; 0: not measured */
    /* A trial on the submitter is under way, and what its calls take is known: a call may
     * run here at once (pd__exec_fast) without the rule's other steps, and is timed in
     * steps of several calls. Written under `mu`, read without it. */
    atomic_bool fast;
    /* Calls the measure ran on the submitter (ran_here_unpaid), counted as the stream's
     * small calls are (`here_owner`): its first submitter's in `runs_owned`, any other
     * thread's in `runs`. The trial on the submitter reads the clock once every
     * PD__EXEC_CLOCK_EVERY of them (where.c), `seen` at the last. */
    atomic_uint_fast64_t runs_owned;
    atomic_uint_fast64_t runs;
    uint64_t seen;
} pd__exec_adapt;

typedef struct pd__exec_stream {
    struct pd_executor *ex;
    pthread_mutex_t mu;
    pthread_cond_t not_empty; /* the worker sleeps on it (`sleeping` set) */
    pthread_cond_t not_full;  /* submitters wait on it while `queued` reaches the depth */
    pthread_cond_t idle;      /* synchronize waits on it until the queue is empty and idle */
    pd__exec_call *head, *tail;
    int32_t queued;
    size_t queued_bytes; /* the queued calls' output bytes */
    int32_t waiting;     /* submitters waiting on not_full */
    atomic_bool full;    /* queued reached a limit even for a call without outputs (see
                          * pd__exec_wait_room); set and cleared under mu */
    bool busy;           /* the worker is running calls it took */
    bool sleeping;       /* the worker waits on not_empty */
    bool closing;        /* destroy: the worker drains the queue and ends */
    pthread_t thread;
    /* head != NULL, readable without the mutex: the worker polls it while it lingers, so it
     * has a cache line of its own, which a submitter writes only when it turns true (the
     * lines the submitter writes per call are then not the ones the worker spins on). */
    char pad_w[64];
    atomic_bool has_work;
    char pad_w2[64];
    /* Calls enqueued (under mu) and launched by the worker: equal when the stream is idle,
     * which lets a small call run on its submitter (pd_run_async) without the lock. */
    atomic_uint_fast64_t pushed;
    char pad[64];
    atomic_uint_fast64_t finished;
    /* Records kept for reuse (submit.c), one set per stream so that a stream's next outputs
     * reuse memory its own worker touched last. The worker pushes launched records on
     * `retired` without a lock, still holding their tensors; a submitter takes the whole
     * stack into `free_calls` (under free_mu, which only submitters take) and, when it reuses
     * a record, releases its tensors on the thread that allocated them (where malloc reuses
     * the memory at once; freed on a worker, it went to the allocating thread's arena under
     * its lock, and the caller's next allocation met cold memory and the lock), keeping the
     * storages nobody else holds for the new call's outputs. synchronize and destroy release
     * what retired records hold. */
    char pad1[64];
    _Atomic(struct pd__exec_call *) retired;
    char pad2[64];
    pthread_mutex_t free_mu;
    pd__exec_call *free_calls;
    int32_t n_free_calls;
    /* A hand-over trial's marked call: the time its launch ended (0: not yet), written by the
     * worker, read and cleared by submitters (where.c). */
    char pad3[64];
    atomic_uint_fast64_t mark_done_ns;
    /* Calls of this stream run on their submitter by the rules of size and cores (submitted
     * and done at once). The stream's first such submitter, `here_owner`, counts its own in
     * `here_owned` with a load and a store; any other thread with an atomic add to
     * `here_shared`. A locked add after the kernel's stores cost ~6 ns, a fifth of what the
     * executor added to a small call (bench/NOTES.md), and one host thread per stream is
     * the common case. Exact either way: only the owner writes `here_owned`. */
    char pad4[64];
    atomic_uintptr_t here_owner; /* the first's token (pd__exec_submitter), 0: none yet */
    atomic_uint_fast64_t here_owned;
    atomic_uint_fast64_t here_shared;
    pd__exec_adapt adapt;
    /* Its own stream on each device it ran calls on (dev_streams.c), made on first use; the
     * submitters' allocate step and the worker look them up under dev_mu. */
    pthread_mutex_t dev_mu;
    int32_t n_dev;
    struct {
        pd_place place;
        pd_stream_t *stream;
    } dev[PD__EXEC_DEVICES];
} pd__exec_stream;

struct pd_executor {
    atomic_uint magic; /* PD__EXEC_LIVE, or PD__EXEC_DEAD once destroyed */
    uint64_t id;
    unsigned fork_generation; /* pd__fork_generation at creation: its workers' process */
    const pd_registry *reg;
    int32_t n_streams;
    int32_t depth;
    size_t inline_bytes; /* see pd_executor_options; 0: never */
    bool adaptive;       /* calls run on the submitter where handing over does not pay */
    int32_t n_cpus;      /* CPUs this process may run on, when the executor was made */
    pd__exec_stream *streams;
    atomic_uint_fast64_t failed;
    atomic_uint_fast64_t trials;      /* trials measured (where.c) */
    atomic_uint_fast64_t switches;    /* ways switched, all streams (where.c) */
    atomic_uint_fast64_t here_probes; /* trials of the submitter started, all streams */
    atomic_int_fast64_t blocking;     /* PD_OP_MAY_BLOCK calls queued or running */
    char pad0[64]; /* `done` is the workers': not on the submitters' cache line */
    atomic_uint_fast64_t done;
    pthread_mutex_t err_mu; /* guards the first error since the last synchronize */
    pd_status first_status;
    char *first_message;
    struct pd_executor *grave_next; /* destroyed executors' headers (executor.c) */
};

/* executor.c: the executor is live (else a message naming `who`). */
#define PD__EXEC_LIVE 0x45584543u /* "EXEC" */
#define PD__EXEC_DEAD 0x44454144u /* "DEAD" */

/* The error of a call naming executor `ex` and `stream` (NULL, destroyed, not an executor,
 * made before a fork, stream out of range); PD_OK when there is none. */
pd_status pd__exec_check_failed(const char *who, const pd_executor *ex, int32_t stream);
/* A live executor of this process and a stream of it (pd__exec_check: else its error).
 * Inlined into every call: a few loads where a call out cost a small call ~1%
 * (bench/NOTES.md). */
static inline bool pd__exec_live(const pd_executor *ex, int32_t stream)
{
    return ex != NULL &&
           atomic_load_explicit(&((pd_executor *)ex)->magic, memory_order_acquire) ==
               PD__EXEC_LIVE &&
           ex->fork_generation ==
               atomic_load_explicit(&pd__fork_generation, memory_order_relaxed) &&
           stream >= 0 && stream < ex->n_streams;
}
static inline pd_status pd__exec_check(const char *who, const pd_executor *ex, int32_t stream)
{
    return pd__exec_live(ex, stream) ? PD_OK : pd__exec_check_failed(who, ex, stream);
}
/* executor.c: blocks while the stream's queue is full even for a call without outputs, so
 * that a submitter waits before it allocates its call's outputs rather than after (one
 * output fewer alive per stream while it waits). */
void pd__exec_wait_room(pd_executor *ex, int32_t stream);
/* executor.c: appends a call to the stream's queue (blocks while it is full). */
void pd__exec_enqueue(pd_executor *ex, int32_t stream, pd__exec_call *call);
/* executor.c: notes a finished call in the counters and the first error. */
void pd__exec_note_done(pd_executor *ex, pd_status status, const char *message);

/* records.c: a call record for `stream`, one kept for reuse (its tensors released on this
 * thread, those only it held kept as its spares) or a new one; NULL on out of memory. */
pd__exec_call *pd__exec_record_new(pd_executor *ex, int32_t stream);
/* records.c: a spare of the call that holds `bytes` (taken out of its spares), else NULL. */
pd_storage *pd__exec_take_spare(pd__exec_call *call, size_t bytes);
/* records.c: releases the spares the call did not use. */
void pd__exec_drop_spares(pd__exec_call *call);
/* records.c: releases what the call holds but its context; keeps the record for reuse. */
void pd__exec_record_free(pd_executor *ex, pd__exec_call *call);
/* records.c: on the worker after a launch: the record goes back to its stream's submitters
 * with its tensors (or, when they are large, is released here). */
void pd__exec_record_retire(pd_executor *ex, pd__exec_call *call);
/* records.c: releases what a stream's retired records hold (the records kept for reuse). */
void pd__exec_reclaim(pd__exec_stream *st);
/* records.c: frees every record a stream keeps for reuse (destroy, after its worker ended). */
void pd__exec_free_records(pd__exec_stream *st);

/* dev_streams.c: the executor stream's own stream on place's device, made on first use
 * (fails naming the executor stream when it cannot be made, or past PD__EXEC_DEVICES). */
pd_status pd__exec_device_stream(pd__exec_stream *st, pd_place place, pd_stream_t **out);
/* dev_streams.c: waits for the device work of every stream the executor stream made. */
pd_status pd__exec_device_synchronize(pd__exec_stream *st);
/* dev_streams.c: destroys the executor stream's device streams (after their work). */
void pd__exec_device_streams_free(pd__exec_stream *st);

/* The stream ran every call queued to it. */
static inline bool pd__exec_stream_idle(pd__exec_stream *st)
{
    return atomic_load_explicit(&st->finished, memory_order_acquire) ==
           atomic_load_explicit(&st->pushed, memory_order_acquire);
}

/* A defined tensor is on the host and (with `computed`) not pending; with `bytes`, its bytes
 * (its storage's size, which bounds a view's) are added to it on the way, so that the short
 * path reads each tensor once. */
static inline bool pd__exec_host_tensor(const pd_tensor *t, bool computed, size_t *bytes)
{
    const pd_storage *s = t->storage; /* read once: the acquire below would make it twice */
    pd__completion *c = pd__storage_pending(s);
    if (!pd_place_is_host(t->place) ||
        (computed && c != NULL &&
         atomic_load_explicit(&c->state, memory_order_acquire) != PD__DONE))
        return false;
    if (bytes != NULL)
        *bytes += s != NULL ? s->bytes : pd_nbytes(t);
    return true;
}
/* The same of every defined tensor of an arg list. */
static inline bool pd__exec_all_host(const pd_arg *args, int32_t n, bool computed, size_t *bytes)
{
    for (int32_t i = 0; i < n; ++i)
        for (int32_t k = 0; args[i].tensors != NULL && k < args[i].count; ++k)
            if (pd_defined(&args[i].tensors[k]) &&
                !pd__exec_host_tensor(&args[i].tensors[k], computed, bytes))
                return false;
    return true;
}

/* A call the submitter may run at all: the size rule is on (inline_bytes), the op does not
 * say it may block, and the arg lists are there for their counts (the rules' first test:
 * pd__exec_plain_call, pd__exec_fast, pd__exec_where). */
static inline bool pd__exec_may_run_here(const pd_executor *ex, const pd_op *op,
                                         const pd_arg *inputs, int32_t n_inputs,
                                         const pd_arg *outputs, int32_t n_outputs)
{
    return ex->inline_bytes != 0 && !op->may_block && (inputs != NULL || n_inputs == 0) &&
           (outputs != NULL || n_outputs == 0);
}

/* A submitting thread's token for a stream's here_owner (submit.c): the address of its own
 * thread-local byte (an offset from the thread pointer, where pthread_self() was a call into
 * libc). A thread that ended no longer counts, so a new one given the same address may take
 * its place. */
extern _Thread_local char pd__exec_submitter __attribute__((tls_model("initial-exec")));
/* Counts a call of stream `st` its submitter ran: the stream's first such submitter (its
 * here_owner, taken here by the first) in `owned` with a load and a store, any other thread
 * in `shared` with an atomic add (executor_internal.h: pd__exec_stream). True for the owner. */
static inline bool pd__exec_count_here(pd__exec_stream *st, atomic_uint_fast64_t *owned,
                                       atomic_uint_fast64_t *shared)
{
    uintptr_t me = (uintptr_t)&pd__exec_submitter;
    uintptr_t owner = atomic_load_explicit(&st->here_owner, memory_order_relaxed);
    if (owner == 0) { /* the first: this thread, unless another was first meanwhile */
        uintptr_t none = 0;
        owner = atomic_compare_exchange_strong_explicit(&st->here_owner, &none, me,
                                                        memory_order_relaxed, memory_order_relaxed)
                    ? me
                    : none;
    }
    if (owner == me)
        atomic_store_explicit(owned, atomic_load_explicit(owned, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    else
        atomic_fetch_add_explicit(shared, 1, memory_order_relaxed);
    return owner == me;
}

/* The trial on the submitter reads the clock once every this many calls (where.c). */
#define PD__EXEC_CLOCK_EVERY 8

/* The leanest case of the short path, tried before any other step: the usual call of a host
 * chaining ops, on an idle stream, every arg of it one tensor: each input defined, backed by
 * storage, on the host and computed, each output a fresh (undefined) tensor. Straight-line
 * for the first input and output (most ops have one output and few inputs), with no nested
 * loop and no call; *bytes: the inputs' storages' bytes. Any other call takes
 * pd_op_run_async's full path, where pd__exec_fast may still run it here. */
static inline bool pd__exec_small_input(const pd_arg *a, size_t *bytes)
{
    const pd_tensor *t = a->tensors;
    return a->count == 1 && t != NULL && t->storage != NULL && pd_defined(t) &&
           pd__exec_host_tensor(t, true, bytes);
}
static inline bool pd__exec_small_output(const pd_arg *a)
{
    return a->count == 1 && a->tensors != NULL && !pd_defined(a->tensors);
}
static inline bool pd__exec_plain_call(const pd_executor *ex, pd__exec_stream *st, const pd_op *op,
                                       const pd_arg *inputs, int32_t n_inputs,
                                       const pd_arg *outputs, int32_t n_outputs, size_t *bytes)
{
    if (!pd__exec_may_run_here(ex, op, inputs, n_inputs, outputs, n_outputs) ||
        !pd__exec_stream_idle(st))
        return false;
    *bytes = 0;
    if (n_inputs > 0 && !pd__exec_small_input(&inputs[0], bytes))
        return false;
    for (int32_t i = 1; i < n_inputs; ++i)
        if (!pd__exec_small_input(&inputs[i], bytes))
            return false;
    if (n_outputs > 0 && !pd__exec_small_output(&outputs[0]))
        return false;
    for (int32_t i = 1; i < n_outputs; ++i)
        if (!pd__exec_small_output(&outputs[i]))
            return false;
    return true;
}

/* A call that may block for the host (PD_OP_MAY_BLOCK) is queued or running: no submitter
 * runs a call that must wait for others then, nor keeps waiting for its stream (where.c),
 * since the host thread that would free that call may be this one. */
static inline bool pd__exec_blocking(const pd_executor *ex)
{
    return atomic_load_explicit(&((pd_executor *)ex)->blocking, memory_order_acquire) != 0;
}

/* The short path of pd_op_run_async, inlined there: whether a call may run on the submitter
 * at once, as pd_op_run, with nothing to decide or wait for (its stream idle, the call not
 * one that may block, its tensors on the host and computed). PD__EXEC_HERE: small (the size
 * rule: the hand-over would cost more than the kernel); PD__EXEC_HERE_UNPAID: larger, and
 * `fast` (the stream's adapt.fast: its trial on the submitter runs, where.c; read by the
 * caller) and no call that may block in flight, pd__exec_here_done to follow the call;
 * PD__EXEC_HAND: not decided here (pd__exec_where). Reads only, no lock and no clock: the
 * path of every small call and of nearly every call of a stream the measure sent back to its
 * submitter. */
static inline pd__exec_where_to pd__exec_fast(const pd_executor *ex, pd__exec_stream *st,
                                              const pd_op *op, const pd_arg *inputs,
                                              int32_t n_inputs, const pd_arg *outputs,
                                              int32_t n_outputs, bool fast)
{
    if (!pd__exec_may_run_here(ex, op, inputs, n_inputs, outputs, n_outputs) ||
        !pd__exec_stream_idle(st))
        return PD__EXEC_HAND;
    size_t in_bytes = 0;
    if (!pd__exec_all_host(inputs, n_inputs, true, &in_bytes) ||
        !pd__exec_all_host(outputs, n_outputs, true, NULL))
        return PD__EXEC_HAND;
    if (in_bytes <= ex->inline_bytes / 2)
        return PD__EXEC_HERE;
    return fast && !pd__exec_blocking(ex) ? PD__EXEC_HERE_UNPAID : PD__EXEC_HAND;
}

/* Where such a call's submitter, the stream's here_owner, runs it at once, the counter the
 * run adds to: a small one (the size rule) is counted in here_owned; a larger one, while the
 * stream's trial on the submitter runs and what a call takes is known (adapt.fast) and no
 * call that may block is in flight, in adapt.runs_owned, except every PD__EXEC_CLOCK_EVERY-th,
 * which takes the full path to time the trial (pd__exec_here_done). NULL: the full path.
 * Both are what pd__exec_fast decides, for the calls that are most of a chain's, with the
 * count left to the runner (pd__runner_run_counted, reached as the last call: no frame of
 * the executor's after it; on a chain of 256-float relus, 1.11x pd_op_run -> 1.09x, and
 * a Python chain's larger calls ran at the small ones' price: bench/NOTES.md). */
static inline atomic_uint_fast64_t *pd__exec_here_counter(const pd_executor *ex,
                                                          pd__exec_stream *st, const pd_op *op,
                                                          const pd_arg *inputs, int32_t n_inputs,
                                                          const pd_arg *outputs, int32_t n_outputs)
{
    size_t bytes;
    if (!pd__exec_plain_call(ex, st, op, inputs, n_inputs, outputs, n_outputs, &bytes) ||
        atomic_load_explicit(&st->here_owner, memory_order_relaxed) !=
            (uintptr_t)&pd__exec_submitter)
        return NULL;
    if (bytes <= ex->inline_bytes / 2)
        return &st->here_owned;
    pd__exec_adapt *a = &st->adapt;
    if (!atomic_load_explicit(&a->fast, memory_order_relaxed) || pd__exec_blocking(ex) ||
        (atomic_load_explicit(&a->runs_owned, memory_order_relaxed) + 1) % PD__EXEC_CLOCK_EVERY ==
            0)
        return NULL;
    return &a->runs_owned;
}

/* Calls of stream `st` run on their submitter by the rules of size and cores so far. */
static inline uint64_t pd__exec_here_runs(const pd__exec_stream *st)
{
    return atomic_load_explicit(&st->here_owned, memory_order_relaxed) +
           atomic_load_explicit(&st->here_shared, memory_order_relaxed);
}

/* where.c: where a call the short path did not take runs (the rule of cores and the measure
 * of the stream's trials); a call that is not PD__EXEC_HERE* goes to the worker. */
pd__exec_where_to pd__exec_where(pd_executor *ex, int32_t stream, const pd_op *op,
                                 const pd_arg *inputs, int32_t n_inputs, const pd_arg *outputs,
                                 int32_t n_outputs, bool *measured);
/* where.c: a call that pd__exec_where measured (`measured`) and handed over returns to its
 * host. */
void pd__exec_measured(pd_executor *ex, int32_t stream);
/* where.c: after a call the measure ran on the submitter (PD__EXEC_HERE_UNPAID or
 * pd__exec_fast): counts it (`ok`: it succeeded) and, every few calls, times the trial. */
void pd__exec_here_done(pd_executor *ex, int32_t stream, bool ok);
/* where.c: before a PD__EXEC_HERE_UNPAID call runs on the submitter: waits for the calls
 * queued to its stream and for its pending tensors; false when one of them failed (the call
 * then goes to the worker, which poisons its outputs as the rules say). */
bool pd__exec_settle(pd_executor *ex, int32_t stream, const pd_arg *inputs, int32_t n_inputs,
                     const pd_arg *outputs, int32_t n_outputs);
/* where.c: on the worker, after a marked call's launch: notes the time. */
void pd__exec_mark_done(pd__exec_stream *st);
/* Counts a PD_OP_MAY_BLOCK call in (`blocking`), before it is queued, and wakes submitters
 * waiting for a stream to go idle (where.c), which then stop waiting. */
void pd__exec_blocking_begins(pd_executor *ex);
/* where.c: a stream's measure, made and freed with the stream. */
void pd__exec_adapt_init(pd__exec_stream *st);
void pd__exec_adapt_free(pd__exec_stream *st);

/* submit.c: the launch stage of one call, on its stream's worker: waits for its inputs,
 * allocates the workspace, runs the kernel and settles the outputs; then finishes the
 * completion and frees the call (or, for wait_launch, wakes the caller). */
void pd__exec_launch(pd_executor *ex, pd__exec_call *call);

/* The executor's number, which completions carry (pd_tensor_wait's check). */
uint64_t pd__executor_id(const pd_executor *ex);

#endif /* PD_EXEC_EXECUTOR_INTERNAL_H */
