/*
 * where.c - where one executor call runs: on its stream's worker (handed over) or on the
 * submitting thread as pd_op_run (pdext_executor.h, pd_executor_options.inline_bytes).
 *
 * Three rules. A small call on an idle stream runs on the submitter: the hand-over costs
 * more than its kernel. A call of any size does too while every other CPU runs another
 * stream's worker (a thread pool's caller-runs policy). And a stream measures whether
 * handing its other calls over pays at all: on a machine whose cores are busy with other
 * work, a worker waits for a core while its caller waits for the worker, and a pipelined
 * chain ran at half a synchronous one's speed (bench/NOTES.md). So the stream runs trials,
 * each of a few milliseconds and a few dozen calls: all its calls handed over, or all run on
 * the submitter, and keeps the way that gave fewer ns per call, trying the other again after
 * a number of trials that doubles each time it loses, and grows with how much slower it was
 * (up to TRY_MAX), so that trying the slower way costs a few percent of the time at most.
 *
 * What a trial measures is the wall time per call that the host sees, whatever bounds it:
 * run on the submitter, from the end of one call to the end of the next (the host's own work
 * between calls included); handed over, from the end of the last trial's marked call's
 * launch to the end of this one's, over the calls submitted in between (the worker ends them
 * in order), which is the pipeline's throughput whether the caller or the worker is the
 * slower stage. A pause of the host (no call for PAUSE_NS) is left out: a hand-over trial
 * over one is dropped, and on the submitter the step of calls it fell in is not counted.
 *
 * Nearly every call of a stream that runs its calls on the submitter is run at once: by its
 * first submitter, past a few loads, through the runner's counting entry
 * (pd__exec_here_counter, executor_internal.h), all but one in PD__EXEC_CLOCK_EVERY; the
 * others take the short path (pd__exec_fast, inlined into pd_op_run_async, then
 * pd__exec_here_done): one walk of the args before the call, a count after it, and for that
 * one call (or, from other threads, every PD__EXEC_CLOCK_EVERY calls) one clock read and
 * the trial's step under the stream's lock (a clock read cost ~40 ns in a call's path, a
 * mutex ~20 ns), so that the executor adds little to pd_op_run where handing over does not
 * pay (bench/NOTES.md).
 */
#include "exec/executor_internal.h"

#include <time.h>

#define TRIAL_CALLS 16    /* a trial holds at least this many calls */
#define TRIAL_NS 5000000u /* and lasts at least 5 ms */
#define PAUSE_NS 5000000u /* a host that submits nothing for 5 ms has paused */
#define TRY_FIRST 2       /* hand-over trials before the first trial on the caller */
#define TRY_MIN 8         /* trials before the way not chosen is tried again */
#define TRY_MAX 512       /* ... at most, after it lost each time */
#define TRY_COST 16       /* ... and at least this many per x it was slower (see judge) */
#define HERE_MARGIN 0.95  /* the submitter must be this much faster to take over */
#define STRIKES 2         /* trials the way chosen must lose in a row to be left */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- The rules of size and cores ------------------------------------------------------------ */

/* The bytes of an arg list's defined tensors (their storages' sizes, which bound a view's:
 * one load instead of a walk of the dims), up to just past `limit`. */
static size_t arg_bytes(const pd_arg *args, int32_t n, size_t limit)
{
    size_t bytes = 0;
    for (int32_t i = 0; i < n && bytes <= limit; ++i)
        for (int32_t k = 0; args[i].tensors != NULL && k < args[i].count; ++k) {
            const pd_tensor *t = &args[i].tensors[k];
            if (pd_defined(t))
                bytes += t->storage != NULL ? t->storage->bytes : pd_nbytes(t);
        }
    return bytes;
}

/* Every CPU but the submitter's is taken by another stream's worker (a stream with calls
 * queued or running): handing the call to its own worker would only add a thread to share
 * them, while the submitting thread's core is the one free, as a thread pool's caller-runs
 * policy judges. Two chains on two streams of a 2-core machine then run one on the caller,
 * one on a worker: two threads for two cores, where three (the caller sharing a core with a
 * worker) gave 1.2x one thread instead of ~1.9x. Only with two CPUs or more (one CPU has no
 * core to free) and at least as many streams as CPUs. */
static bool cores_taken(const pd_executor *ex, int32_t stream)
{
    if (ex->n_cpus < 2 || ex->n_streams < ex->n_cpus)
        return false;
    int32_t busy = 0;
    for (int32_t i = 0; i < ex->n_streams && busy < ex->n_cpus - 1; ++i) {
        const pd__exec_stream *st = &ex->streams[i];
        if (i != stream && atomic_load_explicit(&st->finished, memory_order_acquire) !=
                               atomic_load_explicit(&st->pushed, memory_order_acquire))
            ++busy;
    }
    return busy >= ex->n_cpus - 1;
}

/* Waits until the stream ran every call queued to it: polled, then slept on as synchronize
 * does. Stops early when `*flag` turns non-zero (while polling) or a call that may block is
 * submitted (pd__exec_blocking_begins wakes the sleepers): false then, unless idle. */
static bool wait_idle(pd_executor *ex, pd__exec_stream *st, atomic_uint_fast64_t *flag)
{
    for (int i = 0; i < PD__SPIN_POLLS && !pd__exec_stream_idle(st); ++i) {
        if ((flag != NULL && atomic_load_explicit(flag, memory_order_acquire) != 0) ||
            pd__exec_blocking(ex))
            return false;
        pd__spin_pause(i);
    }
    if (pd__exec_stream_idle(st))
        return true;
    pthread_mutex_lock(&st->mu);
    while ((st->head != NULL || st->busy) && !pd__exec_blocking(ex))
        pthread_cond_wait(&st->idle, &st->mu);
    bool idle = st->head == NULL && !st->busy;
    pthread_mutex_unlock(&st->mu);
    return idle;
}

void pd__exec_blocking_begins(pd_executor *ex)
{
    atomic_fetch_add_explicit(&ex->blocking, 1, memory_order_acq_rel);
    /* Under each stream's lock, so that a submitter about to sleep in wait_idle either saw
     * the count or is asleep and woken here. */
    for (int32_t i = 0; i < ex->n_streams; ++i) {
        pthread_mutex_lock(&ex->streams[i].mu);
        pthread_cond_broadcast(&ex->streams[i].idle);
        pthread_mutex_unlock(&ex->streams[i].mu);
    }
}

/* --- The trials ------------------------------------------------------------------------------ */

void pd__exec_adapt_init(pd__exec_stream *st)
{
    pthread_mutex_init(&st->adapt.mu, NULL);
    st->adapt.interval = TRY_FIRST;
    atomic_init(&st->mark_done_ns, 0);
    atomic_init(&st->adapt.last_ns, 0);
    atomic_init(&st->adapt.fast, false);
    atomic_init(&st->adapt.runs_owned, 0);
    atomic_init(&st->adapt.runs, 0);
}

void pd__exec_adapt_free(pd__exec_stream *st) { pthread_mutex_destroy(&st->adapt.mu); }

void pd__exec_mark_done(pd__exec_stream *st)
{
    atomic_store_explicit(&st->mark_done_ns, now_ns(), memory_order_release);
}

/* Starts trials of the other way (a->here flipped); `probing`: to try it, not chosen. A
 * trial on the submitter starts at the end of its first call, which waits for the calls
 * queued before it (pd__exec_here_done). Other streams see the switch: their trials under
 * way measured the executor as it was (judge), and a trial of the submitter is one they
 * join (adapt_choose). */
static void switch_way(pd_executor *ex, pd__exec_adapt *a, bool probing)
{
    a->here = !a->here;
    a->probing = probing;
    a->fresh = true;
    a->since = 0;
    a->count = 0;
    a->strikes = 0;
    a->start_ns = 0;
    a->epoch = atomic_fetch_add_explicit(&ex->switches, 1, memory_order_relaxed) + 1;
    if (!a->here)
        atomic_store_explicit(&a->fast, false, memory_order_relaxed);
}

/* One trial's ns per call, in the current way: the averages, then whether to switch. */
static void judge(pd_executor *ex, pd__exec_adapt *a, double ns)
{
    /* Another stream switched during the trial: with one host feeding several streams, the
     * trial measured a mix of ways (a stream handing over to a starved worker slows the
     * host's calls on every stream); no sample. */
    uint64_t epoch = atomic_load_explicit(&ex->switches, memory_order_relaxed);
    if (epoch != a->epoch) {
        a->epoch = epoch;
        return;
    }
    atomic_fetch_add_explicit(&ex->trials, 1, memory_order_relaxed);
    double *mine = a->here ? &a->ns_here : &a->ns_hand;
    *mine = a->fresh || *mine == 0 ? ns : (*mine + ns) / 2;
    a->fresh = false;
    double other = a->here ? a->ns_hand : a->ns_here;
    bool lost = other > 0 &&
                (a->here ? a->ns_hand <= a->ns_here : a->ns_here < a->ns_hand * HERE_MARGIN);
    if (a->probing) { /* the way tried: kept if it won, else back, and tried later still */
        a->probing = false;
        if (lost) {
            /* Tried again after twice as many trials, and after TRY_COST trials per x the
             * way tried was slower: a trial of it costs about that x in trials of the way
             * chosen, so that trying it costs at most ~1/TRY_COST of the time. Beside a busy
             * core a starved worker took 20-50x a call's time, and each try cost 7-17 ms. */
            double slower = a->here ? a->ns_here / a->ns_hand : a->ns_hand / a->ns_here;
            double want = slower * TRY_COST;
            int32_t doubled = a->interval < TRY_MIN ? TRY_MIN : a->interval * 2;
            if (want > doubled)
                doubled = want > TRY_MAX ? TRY_MAX : (int32_t)want;
            a->interval = doubled > TRY_MAX ? TRY_MAX : doubled;
            switch_way(ex, a, false);
        } else {
            a->interval = TRY_MIN;
        }
        return;
    }
    /* The way chosen is left when it lost twice in a row: one trial that a burst of other
     * work slowed does not send the stream to the slower way for TRY_MIN trials. */
    if (lost && ++a->strikes >= STRIKES) {
        a->interval = TRY_MIN;
        switch_way(ex, a, false);
    } else if (!lost) {
        a->strikes = 0;
        if (++a->since >= a->interval) {
            switch_way(ex, a, true);
            if (a->here) /* a trial of the submitter the other streams join (not a join) */
                a->probe_seen =
                    atomic_fetch_add_explicit(&ex->here_probes, 1, memory_order_relaxed) + 1;
        }
    }
}

/* A pause of the host ends the current hand-over trial without a sample (one on the
 * submitter leaves the pause out instead: pd__exec_here_done). */
static void drop_trial(pd__exec_adapt *a, uint64_t now)
{
    a->start_ns = now;
    a->count = 0;
    a->discard = a->mark_out;
}

/* The way for this call, under the stream's lock; `cores`: the rule of cores would run it
 * here. Counts it in the trial and ends a trial where one is due. */
static pd__exec_where_to adapt_choose(pd_executor *ex, pd__exec_stream *st, bool cores)
{
    pd__exec_adapt *a = &st->adapt;
    pthread_mutex_lock(&a->mu);
    uint64_t now = now_ns(), last = atomic_load_explicit(&a->last_ns, memory_order_relaxed);
    if (!a->here && last != 0 && now > last && now - last > PAUSE_NS) /* before any wait */
        drop_trial(a, now);
    /* A trial of handing over that is not the way chosen (or not yet: the first ones) ends
     * at its marked call: the
     * submitter waits for it rather than queue more behind a worker that may be starved
     * (up to the queue's depth, each call to wait for before the next one run here); not
     * while a PD_OP_MAY_BLOCK call is in flight, which this thread may have to free. */
    bool waited = false;
    while (!a->here && (a->probing || a->ns_here == 0) && a->mark_out &&
           atomic_load_explicit(&st->mark_done_ns, memory_order_acquire) == 0 &&
           !pd__exec_blocking(ex)) {
        pthread_mutex_unlock(&a->mu);
        wait_idle(ex, st, &st->mark_done_ns);
        pthread_mutex_lock(&a->mu);
        waited = true;
    }
    if (waited) /* one clock read per call otherwise: this runs on every submit */
        now = now_ns();
    uint64_t end = a->mark_out ? atomic_load_explicit(&st->mark_done_ns, memory_order_acquire) : 0;
    if (end != 0) { /* a hand-over trial's last call has run */
        atomic_store_explicit(&st->mark_done_ns, 0, memory_order_relaxed);
        a->mark_out = false;
        uint64_t start = a->start_ns;
        a->start_ns = end > start ? end : start; /* the next trial's calls end after it */
        if (!a->discard && end > start)
            judge(ex, a, (double)(end - start) / a->mark_count);
        a->discard = false;
        if (a->here) { /* switched: the calls queued since are the first call's to wait for */
            a->start_ns = 0;
            a->count = 0;
        }
    }
    /* Another stream of the executor started a trial of the submitter: this one joins it
     * (not in the middle of a trial of its own), so that the trial measures every stream
     * on the submitter. One host feeding two streams whose workers starve ran 2x faster so
     * than with either stream alone handing over, which is what a trial of one stream
     * measured: each stayed with its worker (bench/NOTES.md). */
    if (!a->here && !a->probing && !a->mark_out && ex->n_streams > 1) {
        uint64_t p = atomic_load_explicit(&ex->here_probes, memory_order_relaxed);
        if (p != a->probe_seen) {
            a->probe_seen = p;
            switch_way(ex, a, true);
        }
    }
    pd__exec_where_to to;
    if (a->here) {
        to = PD__EXEC_HERE_UNPAID; /* timed at its end (pd__exec_here_done) */
    } else {
        if (a->start_ns == 0)
            a->start_ns = now;
        ++a->count;
        to = cores ? PD__EXEC_HERE : PD__EXEC_HAND;
        if (!cores && !a->mark_out && a->count >= TRIAL_CALLS && now - a->start_ns >= TRIAL_NS) {
            to = PD__EXEC_HAND_MARK;
            a->mark_out = true;
            a->mark_count = a->count;
            a->count = 0;
        }
    }
    pthread_mutex_unlock(&a->mu);
    return to;
}

/* --- The choice ------------------------------------------------------------------------------ */

void pd__exec_measured(pd_executor *ex, int32_t stream)
{
    atomic_store_explicit(&ex->streams[stream].adapt.last_ns, now_ns(), memory_order_relaxed);
}

void pd__exec_here_done(pd_executor *ex, int32_t stream, bool ok)
{
    pd__exec_stream *st = &ex->streams[stream];
    pd__exec_adapt *a = &st->adapt;
    if (!ok) /* a call that failed is not counted; its time falls in the next step's */
        return;
    /* While `fast`, one call in PD__EXEC_CLOCK_EVERY takes the trial's step: of the stream's
     * first submitter's own (pd__exec_here_counter sends it here, and runs the others at
     * once), or of all of them for another thread. The first submitter's count alone decides
     * for it, so that its calls keep timing the trial whatever other threads counted. */
    bool owner = pd__exec_count_here(st, &a->runs_owned, &a->runs);
    uint64_t owned = atomic_load_explicit(&a->runs_owned, memory_order_relaxed);
    uint64_t n = owned + atomic_load_explicit(&a->runs, memory_order_relaxed);
    if ((owner ? owned : n) % PD__EXEC_CLOCK_EVERY != 0 &&
        atomic_load_explicit(&a->fast, memory_order_relaxed))
        return;
    pthread_mutex_lock(&a->mu);
    uint64_t now = now_ns(), last = atomic_load_explicit(&a->last_ns, memory_order_relaxed);
    atomic_store_explicit(&a->last_ns, now, memory_order_relaxed);
    /* the calls since the last step (other submitters' steps may come in any order) */
    uint64_t calls = n > a->seen ? n - a->seen : 0;
    if (n > a->seen)
        a->seen = n;
    if (!a->here) { /* another submitter's call of this stream switched the way meanwhile */
        pthread_mutex_unlock(&a->mu);
        return;
    }
    if (a->start_ns == 0 || last < a->start_ns || now < last) {
        a->start_ns = now; /* the trial starts at the end of its first call */
        a->count = 0;
    } else if (calls > 0) {
        /* From the last step's end to this one's: those calls and the host's work between
         * them. Past a pause's length, and several times what the calls take on average (a
         * long kernel is no pause), the host paused: the step is left out of the trial. */
        uint64_t gap = now - last;
        double avg = a->count > 0 ? (double)(last - a->start_ns) / a->count : a->ns_here;
        if (avg > 0 && gap > PAUSE_NS && (double)gap > 4 * avg * (double)calls)
            a->start_ns += gap;
        else
            a->count += (int32_t)calls;
        if (a->count >= TRIAL_CALLS && now - a->start_ns >= TRIAL_NS) {
            /* the calls since the start have run (here, in turn): a trial */
            double ns = (double)(now - a->start_ns) / a->count;
            a->start_ns = now;
            a->count = 0;
            judge(ex, a, ns); /* handed over from the next call on, when it switches */
        }
    }
    /* Steps of several calls once what a call takes is known (a pause is told from calls
     * by it); until then one a call. */
    if (a->here && (a->count >= PD__EXEC_CLOCK_EVERY || a->ns_here > 0))
        atomic_store_explicit(&a->fast, true, memory_order_relaxed);
    pthread_mutex_unlock(&a->mu);
}

pd__exec_where_to pd__exec_where(pd_executor *ex, int32_t stream, const pd_op *op,
                                 const pd_arg *inputs, int32_t n_inputs, const pd_arg *outputs,
                                 int32_t n_outputs, bool *measured)
{
    *measured = false;
    pd__exec_stream *st = &ex->streams[stream];
    if (!pd__exec_may_run_here(ex, op, inputs, n_inputs, outputs, n_outputs))
        return PD__EXEC_HAND;
    /* The size is looked at first: it reads only what the caller holds, where the other
     * tests read lines the workers write (their counters, their completions). */
    size_t limit = ex->inline_bytes / 2;
    if (arg_bytes(inputs, n_inputs, limit) <= limit) /* small: the short path ran it if it */
        return PD__EXEC_HAND;                        /* could (pd__exec_fast) */
    bool cores = cores_taken(ex, stream) && pd__exec_stream_idle(st) &&
                 pd__exec_all_host(inputs, n_inputs, true, NULL) &&
                 pd__exec_all_host(outputs, n_outputs, true, NULL);
    if (!ex->adaptive || !pd__exec_all_host(inputs, n_inputs, false, NULL) ||
        !pd__exec_all_host(outputs, n_outputs, false, NULL))
        return cores ? PD__EXEC_HERE : PD__EXEC_HAND;
    *measured = true;
    pd__exec_where_to to = adapt_choose(ex, st, cores);
    /* A call the submitter runs waits for its stream's queue and its pending inputs; while a
     * call that may block for the host (PD_OP_MAY_BLOCK) is in flight, the host may be the
     * one to free it: handed over, the call waits on the worker instead. */
    if (to == PD__EXEC_HERE_UNPAID && pd__exec_blocking(ex))
        to = PD__EXEC_HAND;
    return to;
}

/* Waits for the pending tensors of an arg list; false when one failed. */
static bool wait_args(const pd_arg *args, int32_t n)
{
    for (int32_t i = 0; i < n; ++i)
        for (int32_t k = 0; args[i].tensors != NULL && k < args[i].count; ++k) {
            const pd_tensor *t = &args[i].tensors[k];
            pd__completion *c = pd_defined(t) ? pd__storage_pending(t->storage) : NULL;
            if (c == NULL)
                continue;
            pd__completion_wait_state(c);
            if (atomic_load_explicit(&c->state, memory_order_acquire) != PD__DONE)
                return false;
        }
    return true;
}

bool pd__exec_settle(pd_executor *ex, int32_t stream, const pd_arg *inputs, int32_t n_inputs,
                     const pd_arg *outputs, int32_t n_outputs)
{
    /* Submission order: every call queued to the stream before this one has run; false (to
     * the worker after all) when a call that may block was submitted meanwhile. Pending
     * inputs come from calls submitted before this one looked, which wait for no later call. */
    return wait_idle(ex, &ex->streams[stream], NULL) && wait_args(inputs, n_inputs) &&
           wait_args(outputs, n_outputs);
}
