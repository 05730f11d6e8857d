/*
 * executor_where_test.c - where the executor runs a call (sdk/src/exec/where.c): a stream
 * whose worker does not keep up runs its calls on the submitter, one whose hand-over pays
 * keeps handing them over, the switch is off on demand, and calls run on the submitter keep
 * the order and the values of a handed-over chain.
 *
 * The rule times its own trials, so a test sets up a large difference (a factor of ten or
 * two, in sleeps that need no CPU), asserts on the executor's counts of where calls ran,
 * never on a time, and gives a judgment three runs (expect_judged). The starved worker is an op
 * that sleeps only off the test's thread (ex_lagged_add1): what a worker waiting for a busy core
 * costs, and what running on the submitter saves.
 */
#include "pdext_executor.h"
#include "runner_helpers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define N 1024 /* floats per tensor: 4 KiB, past the size run on the submitter (executor) */

static pd_registry *ops(void)
{
    const char *mods[] = {"ex_ops"};
    return rt_registry(mods, 1);
}

static pd_executor *executor(const pd_registry *reg, int32_t adaptive)
{
    pd_executor_options o = {sizeof o, 1, 0, 1024, adaptive}; /* small: inputs to 512 bytes */
    pd_executor *ex = NULL;
    if (pd_executor_create(reg, &o, &ex) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_executor_create: %s", pd_last_error());
    return ex;
}

static void sleep_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* One call of a chain: *x = op(*x) on `stream` (x + 1, its kernel sleeping as `attrs`, us
 * and home, say); *x is replaced only when the call was taken. */
static pd_status chain_step(pd_executor *ex, int32_t stream, const char *op, const pd_attr *attrs,
                            pd_tensor *x)
{
    pd_tensor y = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(x), out = pd_arg_of(&y);
    pd_status s = pd_run_async(ex, stream, op, &in, 1, attrs, 2, &out, 1);
    if (s == PD_OK) {
        pd_tensor_release(x);
        *x = y;
    }
    return s;
}

/* A chain of `calls` x = x + 1 from zeros, each kernel sleeping `lag_us` off `home` (0: on
 * every thread), the host sleeping `host_us` between calls (its own work); checks the
 * result and returns the executor's counts. */
static void chain(pd_executor *ex, int calls, int64_t lag_us, pthread_t *home, long host_us,
                  pd_executor_counts *c)
{
    int64_t n = N;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, NULL);
    for (int64_t i = 0; i < n; ++i)
        ((float *)x.data)[i] = 0;
    pd_attr attrs[2] = {pd_attr_of_int64("us", lag_us),
                        pd_attr_of_int64("home", home ? (int64_t)*home : 0)};
    for (int k = 0; k < calls; ++k) {
        PD_ASSERT_OK(chain_step(ex, 0, "ex_lagged_add1", attrs, &x));
        sleep_us(host_us);
    }
    PD_ASSERT_OK(pd_tensor_wait(ex, &x));
    PD_EXPECT_EQ(((const float *)x.data)[0], (float)calls); /* every call, in order */
    PD_EXPECT_EQ(((const float *)x.data)[N - 1], (float)calls);
    pd_tensor_release(&x);
    PD_EXPECT_OK(pd_executor_synchronize(ex));
    PD_EXPECT_OK(pd_executor_get_counts(ex, c));
}

/* A judgment of the trials, on up to JUDGE_TRIES fresh executors: the first that reads
 * right passes. The differences set up are large (a factor of two to ten, in sleeps), but a
 * trial times the wall clock, and on a CI machine of two cores running other suites beside
 * this one a thread's wake-up once took longer than the difference itself (the right way then
 * truly was the other). A rule that is wrong reads wrong every time; each run's values and
 * counts are checked whatever it judged. */
#define JUDGE_TRIES 3
typedef bool (*judged_run)(const pd_registry *reg);

static void expect_judged(const char *what, judged_run run)
{
    pd_registry *reg = ops();
    bool right = false;
    for (int k = 0; k < JUDGE_TRIES && !right; ++k) {
        right = run(reg);
        if (!right)
            printf("run %d of %d read the other way under this load (%s); again\n", k + 1,
                   JUDGE_TRIES, what);
    }
    PD_EXPECT(right);
    pd_registry_destroy(reg);
}

/* An executor of one stream whose chain of starved calls (2 ms on the worker, none here)
 * sent it to its submitter: it runs its calls there when the test goes on. A judgment too
 * (expect_judged): up to JUDGE_TRIES executors; *c holds the one returned's counts. */
static pd_executor *switched_executor(const pd_registry *reg, pd_executor_counts *c)
{
    pthread_t me = pthread_self();
    for (int k = 0; k < JUDGE_TRIES; ++k) {
        pd_executor *ex = executor(reg, 1);
        chain(ex, 200, 2000, &me, 100, c);
        if (c->ran_here_unpaid > 0)
            return ex;
        printf("run %d of %d stayed with the worker under this load; again\n", k + 1, JUDGE_TRIES);
        PD_EXPECT_OK(pd_executor_destroy(ex));
    }
    pd_test_fail(__FILE__, __LINE__, "no chain sent its executor to the submitter");
    return NULL;
}

/* The worker pays 2 ms a call that the submitter does not: after a few trials of each way the
 * stream runs its calls on the submitter, trying the worker again now and then. */
static bool starved_worker_run(const pd_registry *reg)
{
    pd_executor *ex = executor(reg, 1);
    pthread_t me = pthread_self();
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    chain(ex, 400, 2000, &me, 100, &c);
    PD_EXPECT_EQ(c.ran_here, c.ran_here_unpaid); /* none was small */
    PD_EXPECT_EQ(c.handed_over + c.ran_here, 400u);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    /* the worker's trials, then the submitter's, judged */
    return c.trials >= 3 && c.ran_here_unpaid > 2 * c.handed_over;
}

PD_TEST(ExecutorWhere, AStarvedWorkerSendsTheCallsBackToTheSubmitter)
{
    expect_judged("most calls on the submitter", starved_worker_run);
}

/* Kernel and host each sleep 1 ms a call: handed over they overlap (1 ms a call), on the
 * submitter they add up (2 ms). The trial of the submitter loses and the stream keeps
 * handing its calls over. */
static bool hand_over_pays_run(const pd_registry *reg)
{
    pd_executor *ex = executor(reg, 1);
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    chain(ex, 300, 1000, NULL, 1000, &c);
    PD_EXPECT_EQ(c.handed_over + c.ran_here, 300u);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    return c.trials >= 3 && c.handed_over > 2 * c.ran_here_unpaid;
}

PD_TEST(ExecutorWhere, AHandOverThatPaysIsKept)
{
    expect_judged("most calls handed over", hand_over_pays_run);
}

/* One host feeds two streams a chain each of `calls` x = x + 1 (`op`, its kernel sleeping
 * `lag_us` on or off this thread as the op says), sleeping `host_us` after each call; checks
 * both results (every call, in order) and returns the executor's counts. */
static void two_chains(const pd_registry *reg, const char *op, int64_t lag_us, long host_us,
                       int calls, pd_executor_counts *cnt)
{
    pd_executor_options o = {sizeof o, 2, 0, 1024, 1};
    pd_executor *ex = NULL;
    PD_ASSERT_OK(pd_executor_create(reg, &o, &ex));
    int64_t n = N;
    pd_tensor x[2] = {rt_tensor(PD_FLOAT32, 1, &n, NULL), rt_tensor(PD_FLOAT32, 1, &n, NULL)};
    for (int c = 0; c < 2; ++c)
        for (int64_t i = 0; i < n; ++i)
            ((float *)x[c].data)[i] = (float)c;
    pd_attr attrs[2] = {pd_attr_of_int64("us", lag_us),
                        pd_attr_of_int64("home", (int64_t)pthread_self())};
    for (int k = 0; k < calls; ++k)
        for (int c = 0; c < 2; ++c) {
            PD_ASSERT_OK(chain_step(ex, c, op, attrs, &x[c]));
            sleep_us(host_us);
        }
    for (int c = 0; c < 2; ++c) {
        PD_ASSERT_OK(pd_tensor_wait(ex, &x[c]));
        PD_EXPECT_EQ(((const float *)x[c].data)[0], (float)(calls + c));
        PD_EXPECT_EQ(((const float *)x[c].data)[N - 1], (float)(calls + c));
        pd_tensor_release(&x[c]);
    }
    PD_EXPECT_OK(pd_executor_get_counts(ex, cnt));
    PD_EXPECT_EQ(cnt->handed_over + cnt->ran_here, 2u * (uint64_t)calls);
    PD_EXPECT_OK(pd_executor_destroy(ex));
}

/* One host feeds two streams whose workers both starve (ex_lagged_add1 sleeps 1 ms off this
 * thread): each stream's trial of the submitter alone still waits for the other's worker,
 * so only both on the submitter pay (the streams' trials are joined). Most calls of both
 * chains run here, in order. */
static bool two_starved_run(const pd_registry *reg)
{
    pd_executor_counts cnt = {sizeof cnt, 0, 0, 0, 0};
    two_chains(reg, "ex_lagged_add1", 1000, 50, 300, &cnt);
    return cnt.ran_here > 2 * cnt.handed_over;
}

PD_TEST(ExecutorWhere, TwoStarvedStreamsOfOneHostBothRunOnTheSubmitter)
{
    expect_judged("most calls of both streams on the submitter", two_starved_run);
}

/* Two streams of one host whose hand-over pays (ex_home_slow_add1 sleeps 3 ms on this thread
 * only, a worker runs it at once, and the host sleeps 0.3 ms a call: the submitter's way is
 * ten times slower): the joined trials of the submitter lose, and both streams stay with
 * their workers. */
static bool two_paying_run(const pd_registry *reg)
{
    const int calls = 150;
    pd_executor_counts cnt = {sizeof cnt, 0, 0, 0, 0};
    two_chains(reg, "ex_home_slow_add1", 3000, 300, calls, &cnt);
#ifdef __SANITIZE_THREAD__
    /* TSan runs every thread several times slower and its scheduling beside other tests then
     * decides the trials (how many are judged, and how); there the run checks the threads,
     * the values and the counts. */
    return true;
#else
    /* trials judged, and the submitter's trials are its only calls */
    return cnt.trials >= 3 && cnt.ran_here_unpaid * 3 < 2u * calls;
#endif
}

PD_TEST(ExecutorWhere, TwoStreamsWhoseHandOverPaysKeepIt)
{
    expect_judged("most calls of both streams handed over", two_paying_run);
}

/* A host thread's chain of `calls` x = x + 1 from zeros over `n` floats on stream 0,
 * ex_lagged_add1 sleeping `us` off thread `home` (0: on every thread); `last` is where it
 * ended (-1: a call failed). */
typedef struct thread_chain {
    pd_executor *ex;
    int64_t home, us, n;
    int calls;
    float last;
} thread_chain;

static void *run_thread_chain(void *arg)
{
    thread_chain *s = arg;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &s->n, NULL);
    for (int64_t i = 0; i < s->n; ++i)
        ((float *)x.data)[i] = 0;
    pd_attr attrs[2] = {pd_attr_of_int64("us", s->us), pd_attr_of_int64("home", s->home)};
    s->last = -1;
    for (int k = 0; k < s->calls; ++k)
        if (chain_step(s->ex, 0, "ex_lagged_add1", attrs, &x) != PD_OK)
            break;
    if (pd_tensor_wait(s->ex, &x) == PD_OK)
        s->last = ((const float *)x.data)[s->n - 1];
    pd_tensor_release(&x);
    return NULL;
}

#define CHAIN_THREADS 4

/* CHAIN_THREADS such chains at once on stream 0 of `ex`, each checked to end right; with
 * `here`, one more on the calling thread meanwhile. */
static void thread_chains(pd_executor *ex, int64_t home, int64_t us, int64_t n, int calls,
                          bool here)
{
    pthread_t threads[CHAIN_THREADS];
    thread_chain subs[CHAIN_THREADS];
    for (int t = 0; t < CHAIN_THREADS; ++t) {
        subs[t] = (thread_chain){ex, home, us, n, calls, 0};
        PD_ASSERT(pthread_create(&threads[t], NULL, run_thread_chain, &subs[t]) == 0);
    }
    if (here) {
        thread_chain mine = {ex, home, us, n, calls, 0};
        run_thread_chain(&mine);
        PD_EXPECT_EQ(mine.last, (float)calls);
    }
    for (int t = 0; t < CHAIN_THREADS; ++t) {
        pthread_join(threads[t], NULL);
        PD_EXPECT_EQ(subs[t].last, (float)calls);
    }
    PD_EXPECT_OK(pd_executor_synchronize(ex));
}

/* Several host threads submit chains to one stream that runs its calls on the submitter
 * (the kernel sleeps 0.5 ms on every thread but the test's own, so that neither way wins by
 * much), the test's thread too, the stream's first submitter: their calls take the short
 * path and the trial's steps side by side (the TSan build runs this one), the first
 * submitter's counted without a locked add and the others' with one (pd__exec_count_here),
 * and every chain ends right, every call counted once. */
PD_TEST(ExecutorWhere, ThreadsOnOneStreamShareItsTrialsOnTheSubmitter)
{
    pd_registry *reg = ops();
    pthread_t me = pthread_self();
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    pd_executor *ex = switched_executor(reg, &c);
    uint64_t before = c.handed_over + c.ran_here;
    thread_chains(ex, (int64_t)me, 500, N, 300, true);
    PD_EXPECT_OK(pd_executor_get_counts(ex, &c));
    PD_EXPECT_EQ(c.handed_over + c.ran_here - before, (uint64_t)(CHAIN_THREADS + 1) * 300);
    pd_executor_stats st;
    PD_EXPECT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.submitted, st.done);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}

/* A stream that runs its calls on the submitter runs most of them at once, counted by the
 * runner (pd__exec_here_counter), and sends one in PD__EXEC_CLOCK_EVERY through the trial's
 * step: its trials go on being timed and judged (here: the submitter keeps winning, the
 * worker starved by 2 ms a call), and every call is counted once, as run on the submitter
 * because handing over did not pay. Other threads' calls counted first (twelve, not a
 * multiple of PD__EXEC_CLOCK_EVERY) do not keep the stream's first submitter from its steps. */
static bool here_trials_run(const pd_registry *reg)
{
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    pd_executor *ex = switched_executor(reg, &c);
    thread_chains(ex, 0, 0, N, 3, false);
    PD_EXPECT_OK(pd_executor_get_counts(ex, &c));
    pd_executor_counts before = c;
    pthread_t me = pthread_self();
    chain(ex, 600, 2000, &me, 50, &c); /* ~60 ms here: a trial each 5 ms */
    PD_EXPECT_EQ(c.handed_over + c.ran_here - before.handed_over - before.ran_here, 600u);
    PD_EXPECT_EQ(c.ran_here, c.ran_here_unpaid); /* none was small */
    PD_EXPECT_OK(pd_executor_destroy(ex));
    return c.trials - before.trials >= 4 && c.ran_here_unpaid - before.ran_here_unpaid >= 400;
}

PD_TEST(ExecutorWhere, CallsRunAtOnceOnTheSubmitterStillTimeItsTrials)
{
    expect_judged("trials on the submitter timed", here_trials_run);
}

/* Host threads submitting small chains to one stream: the calls the size rule runs on the
 * submitter are counted by the stream's first submitter without a locked add and by the
 * others with one (pd__exec_count_here); every call counted once, whichever thread. */
PD_TEST(ExecutorWhere, SmallCallsOfSeveralThreadsOnOneStreamAreEachCountedOnce)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    const int calls = 3000;
    thread_chains(ex, 0, 0, 16, calls, false); /* 64 bytes: run here while idle */
    uint64_t total = (uint64_t)CHAIN_THREADS * (uint64_t)calls;
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    PD_EXPECT_OK(pd_executor_get_counts(ex, &c));
    PD_EXPECT_EQ(c.handed_over + c.ran_here, total);
    PD_EXPECT(c.ran_here > 0);
    pd_executor_stats st;
    PD_EXPECT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.submitted, total);
    PD_EXPECT_EQ(st.done, total);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}

/* A call that may block for a host thread is queued while that thread waits inside a submit
 * of its own: for the end of a hand-over trial (a stream's first trials hand its calls over,
 * here to a worker starved by 2 ms a call, and the submitter waits for the trial's last call
 * rather than queue more). The gated call lands behind that trial, its gate to be opened by
 * the waiting thread once its submit returns; a submit that kept waiting for its stream to
 * go idle would wait for ever. A watchdog opens the gate after 10 s, and the test fails if it
 * had to. */
typedef struct gate_race {
    pd_executor *ex;
    pd_tensor gate;
    atomic_int submitted; /* calls of the chain so far */
    atomic_bool queued;   /* the gated call is queued */
    atomic_bool done;     /* the chain's thread ended */
    float last;
} gate_race;

static void *race_chain(void *arg)
{
    gate_race *r = arg;
    int64_t n = N;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, NULL);
    for (int64_t i = 0; i < n; ++i)
        ((float *)x.data)[i] = 0;
    pd_attr attrs[2] = {pd_attr_of_int64("us", 2000),
                        pd_attr_of_int64("home", (int64_t)pthread_self())};
    const int calls = 120;
    int k = 0;
    for (; k < calls; ++k) {
        if (chain_step(r->ex, 0, "ex_lagged_add1", attrs, &x) != PD_OK)
            break;
        atomic_fetch_add(&r->submitted, 1);
        if (atomic_load(&r->queued)) /* what this thread does once the call is queued */
            __atomic_store_n((int32_t *)r->gate.data, 1, __ATOMIC_RELEASE);
        sleep_us(100);
    }
    r->last = k == calls && pd_tensor_wait(r->ex, &x) == PD_OK ? ((const float *)x.data)[0] : -1;
    pd_tensor_release(&x);
    atomic_store(&r->done, true);
    return NULL;
}

PD_TEST(ExecutorWhere, ASubmitWaitingForItsStreamStopsWhenACallThatMayBlockIsQueued)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    gate_race r = {.ex = ex, .gate = rt_tensor(PD_INT32, 0, NULL, NULL), .last = 0};
    __atomic_store_n((int32_t *)r.gate.data, 0, __ATOMIC_RELEASE);
    atomic_init(&r.submitted, 0);
    atomic_init(&r.queued, false);
    atomic_init(&r.done, false);
    pthread_t chain_thread;
    PD_ASSERT(pthread_create(&chain_thread, NULL, race_chain, &r) == 0);
    while (atomic_load(&r.submitted) < 5)
        sleep_us(200);
    sleep_us(20000); /* the chain is now ~5-90 ms into its first trial: waiting, mostly */
    int64_t n = 4;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, NULL), held = PD_TENSOR_UNDEFINED;
    for (int64_t i = 0; i < n; ++i)
        ((float *)x.data)[i] = 1;
    pd_arg gin[2] = {pd_arg_of(&x), pd_arg_of(&r.gate)}, gout = pd_arg_of(&held);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_gated_add1", gin, 2, NULL, 0, &gout, 1));
    atomic_store(&r.queued, true);
    bool rescued = false;
    for (int waited = 0; !atomic_load(&r.done) && !rescued; waited += 10)
        if (waited >= 10000) { /* 10 s: the chain's thread waits for the gated call */
            __atomic_store_n((int32_t *)r.gate.data, 1, __ATOMIC_RELEASE);
            rescued = true;
        } else {
            sleep_us(10000);
        }
    pthread_join(chain_thread, NULL);
    PD_EXPECT(!rescued);
    PD_EXPECT_EQ(r.last, 120.0f);
    PD_ASSERT_OK(pd_tensor_wait(ex, &held));
    PD_EXPECT_EQ(((const float *)held.data)[3], 2.0f);
    pd_tensor *all[] = {&x, &held, &r.gate};
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(all[i]);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}

/* adaptive = -1: the starved worker gets every call, and nothing is timed. */
PD_TEST(ExecutorWhere, OffEveryLargeCallIsHandedOver)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, -1);
    pthread_t me = pthread_self();
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    chain(ex, 40, 500, &me, 0, &c);
    PD_EXPECT_EQ(c.handed_over, 40u);
    PD_EXPECT_EQ(c.ran_here, 0u);
    PD_EXPECT_EQ(c.trials, 0u);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}

/* A call to run on the submitter waits first for the calls queued on its stream and for its
 * pending inputs: a chain switching ways mid-flight keeps its order, and a failed input still
 * poisons the call (it goes to the worker). */
PD_TEST(ExecutorWhere, ACallRunOnTheSubmitterFollowsTheQueueAndAFailedInputPoisonsIt)
{
    pd_registry *reg = ops();
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    pd_executor *ex = switched_executor(reg, &c);
    int64_t n = N;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, NULL), y = PD_TENSOR_UNDEFINED;
    for (int64_t i = 0; i < n; ++i)
        ((float *)x.data)[i] = -1;
    pd_arg in = pd_arg_of(&x), out = pd_arg_of(&y);
    pd_executor_options off = {sizeof off, 1, 0, -1, -1}; /* every call on its worker */
    pd_executor *other = NULL; /* makes the failed input, pending, on another executor */
    PD_ASSERT_OK(pd_executor_create(reg, &off, &other));
    PD_ASSERT_OK(pd_run_async(other, 0, "ex_fail_if_negative", &in, 1, NULL, 0, &out, 1));
    pd_tensor z = PD_TENSOR_UNDEFINED;
    pd_arg in2 = pd_arg_of(&y), out2 = pd_arg_of(&z);
    pd_attr attrs[2] = {pd_attr_of_int64("us", 0), pd_attr_of_int64("home", 0)};
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_lagged_add1", &in2, 1, attrs, 2, &out2, 1));
    PD_EXPECT_ERROR(pd_tensor_wait(ex, &z), PD_ERR_OP_FAILED, "ex_fail_if_negative: boom");
    PD_EXPECT_ERROR(pd_executor_synchronize(ex), PD_ERR_OP_FAILED, "ex_fail_if_negative");
    PD_EXPECT_ERROR(pd_executor_synchronize(other), PD_ERR_OP_FAILED, "ex_fail_if_negative");
    pd_tensor *all[] = {&x, &y, &z};
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(all[i]);
    PD_EXPECT_OK(pd_executor_destroy(other));
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}

/* A call that may block for the host (ex_gated_add1 waits for this thread to open its gate)
 * is in flight: a stream that runs its calls on the submitter hands them over instead, since
 * waiting for the queue here would wait for the gate this thread has yet to open. */
PD_TEST(ExecutorWhere, NoCallWaitsOnTheSubmitterWhileACallThatMayBlockIsInFlight)
{
    pd_registry *reg = ops();
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    pd_executor *ex = switched_executor(reg, &c);
    int64_t n = N;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, NULL), g = rt_tensor(PD_INT32, 0, NULL, NULL);
    pd_tensor held = PD_TENSOR_UNDEFINED;
    for (int64_t i = 0; i < n; ++i)
        ((float *)x.data)[i] = 1;
    __atomic_store_n((int32_t *)g.data, 0, __ATOMIC_RELEASE);
    pd_arg gin[2] = {pd_arg_of(&x), pd_arg_of(&g)}, gout = pd_arg_of(&held);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_gated_add1", gin, 2, NULL, 0, &gout, 1));
    pd_attr attrs[2] = {pd_attr_of_int64("us", 0), pd_attr_of_int64("home", 0)};
    pd_tensor ys[4];              /* fewer than the queue holds (2 MiB) behind the closed gate */
    for (int k = 0; k < 4; ++k) { /* each would wait for the gate if run here */
        ys[k] = (pd_tensor)PD_TENSOR_UNDEFINED;
        pd_arg in = pd_arg_of(&x), out = pd_arg_of(&ys[k]);
        PD_ASSERT_OK(pd_run_async(ex, 0, "ex_lagged_add1", &in, 1, attrs, 2, &out, 1));
    }
    PD_EXPECT(pd_tensor_is_pending(&ys[3]));
    __atomic_store_n((int32_t *)g.data, 1, __ATOMIC_RELEASE);
    PD_ASSERT_OK(pd_executor_synchronize(ex));
    PD_EXPECT_EQ(((const float *)held.data)[0], 2.0f);
    for (int k = 0; k < 4; ++k) {
        PD_EXPECT_EQ(((const float *)ys[k].data)[N - 1], 2.0f);
        pd_tensor_release(&ys[k]);
    }
    pd_tensor *all[] = {&x, &g, &held};
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(all[i]);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}

PD_TEST(ExecutorWhere, RefusesABadSwitchAndATooSmallCountsStruct)
{
    pd_registry *reg = ops();
    pd_executor_options o = {sizeof o, 1, 0, 0, 2};
    pd_executor *ex = NULL;
    PD_EXPECT_ERROR(pd_executor_create(reg, &o, &ex), PD_ERR_INVALID_ARGUMENT,
                    "pd_executor_create: adaptive is 2; expected -1 (off)");
    ex = executor(reg, 0);
    pd_executor_counts c = {4, 0, 0, 0, 0};
    PD_EXPECT_ERROR(pd_executor_get_counts(ex, &c), PD_ERR_INVALID_ARGUMENT,
                    "out->struct_size is too small");
    PD_EXPECT_ERROR(pd_executor_get_counts(ex, NULL), PD_ERR_INVALID_ARGUMENT, "out is NULL");
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}
