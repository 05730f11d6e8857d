/*
 * parallel.c - pd_parallel_for: the runtime's thread pool and the parallel loops kernels run
 * on it (table function parallel_for; pd_api.h documents the contract).
 *
 * The pool. One per process, started on the first loop that can use it: PDEXT_NUM_THREADS
 * threads counting the caller (default: the CPUs this process may run on), so it starts that
 * many minus one workers, which live as long as the process and sleep on a condition
 * variable between loops. One loop holds the pool at a time; a loop that finds it held, a
 * nested loop (started inside a chunk) and a loop too small to split run inline on the
 * calling thread, so no loop ever waits for another and nesting cannot deadlock. So does
 * every loop of a child process forked after the pool started: the workers are not there.
 *
 * A loop. Its range is cut into chunks of at least `grain` indices, as many as there are
 * threads (fewer for a short range); the caller and every worker claim chunks with one
 * atomic counter until none is left, and the caller then waits until every worker is out of
 * the loop: the loop's state lives on the caller's stack.
 *
 * Errors. Each chunk runs under a frame of its own (a sigsetjmp on the thread running it).
 * A throw inside the chunk (PD_CHECK, PD_THROW, a failing table function; a C++ chunk reports
 * its exception instead) records the error in the loop, first one wins, and jumps back to
 * that frame, on that thread; the loop stops handing out chunks. When every thread is out of
 * the loop the caller raises the error (pd__ctx_throw_at) from its own frame, as if the
 * kernel had thrown it there, with its status, message and [file:line]. No jump crosses a
 * thread, and an inline loop takes the same path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif

#include "call/parallel.h"
#include "call/kernel_ctx.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 1024 /* largest PDEXT_NUM_THREADS accepted */

/* One running loop; on the caller's stack. */
typedef struct loop {
    pd_parallel_fn fn;
    void *arg;
    int64_t n, chunk_size, n_chunks;
    atomic_int_fast64_t next_chunk; /* the next chunk to hand out */
    atomic_bool failed;             /* an error was recorded: hand out no more chunks */
    /* The first error, written by the thread whose compare-exchange set `failed`, read by
     * the caller after every worker left the loop (ordered by the pool's mutex). */
    pd_status status;
    const char *file;
    int line;
    char *message;
} loop;

/* The frame of the chunk a thread runs; the thread's innermost one. */
typedef struct chunk_frame {
    sigjmp_buf frame;
    loop *loop;
    pd_kernel_ctx *call;       /* pd__current_call when the chunk began */
    struct chunk_frame *outer; /* the chunk this thread ran when this one began, if any */
} chunk_frame;

static _Thread_local chunk_frame *current_chunk;

static struct {
    pthread_once_t once;
    int n_threads;       /* threads of the pool, the callers' included; 0 when not usable */
    const char *bad_env; /* PDEXT_NUM_THREADS when it is not a valid count, else NULL */
    atomic_flag held;    /* a loop holds the pool */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a new loop was posted */
    pthread_cond_t idle; /* the last worker left the loop */
    uint64_t generation; /* loops posted so far */
    loop *posted;        /* the loop of the current generation */
    int busy;            /* workers not yet out of the posted loop */
    int n_workers;       /* workers started */
    pid_t pid;           /* the process that started them: a forked child has none */
} pool = {
    .once = PTHREAD_ONCE_INIT,
    .held = ATOMIC_FLAG_INIT,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .idle = PTHREAD_COND_INITIALIZER,
};

bool pd__parallel_record(pd_status status, const char *file, int line, char *message)
{
    chunk_frame *chunk = current_chunk;
    if (chunk == NULL || chunk->call != pd__current_call)
        return false;
    loop *l = chunk->loop;
    bool expected = false;
    if (atomic_compare_exchange_strong(&l->failed, &expected, true)) {
        l->status = status;
        l->file = file;
        l->line = line;
        l->message = message;
    } else {
        free(message); /* a later error of a loop that already failed */
    }
    return true;
}

void pd__parallel_leave_chunk(void) { siglongjmp(current_chunk->frame, 1); }

/* Claims chunks of `l` and runs them until none is left or the loop failed. */
static void run_chunks(loop *l)
{
    chunk_frame chunk;
    chunk.loop = l;
    chunk.call = pd__current_call;
    chunk.outer = current_chunk;
    /* A guard of the C++ table armed around this loop (a guarded parallel_for) is not the
     * innermost frame while a chunk runs: the chunk's is. */
    sigjmp_buf *guard = pd__cxx_guard;
    pd__cxx_guard = NULL;
    current_chunk = &chunk;
    for (;;) {
        if (sigsetjmp(chunk.frame, 0) != 0)
            break; /* the chunk failed; the error is in the loop */
        if (atomic_load_explicit(&l->failed, memory_order_relaxed))
            break;
        int64_t i = atomic_fetch_add_explicit(&l->next_chunk, 1, memory_order_relaxed);
        if (i >= l->n_chunks)
            break;
        int64_t begin = i * l->chunk_size;
        int64_t end = l->n - begin < l->chunk_size ? l->n : begin + l->chunk_size;
        l->fn(l->arg, begin, end);
    }
    current_chunk = chunk.outer;
    pd__cxx_guard = guard;
}

static void *worker_main(void *unused)
{
    (void)unused;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool.lock);
        while (pool.generation == seen)
            pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.generation;
        loop *l = pool.posted;
        pthread_mutex_unlock(&pool.lock);

        run_chunks(l);

        pthread_mutex_lock(&pool.lock);
        if (--pool.busy == 0)
            pthread_cond_signal(&pool.idle);
        pthread_mutex_unlock(&pool.lock);
    }
    return NULL;
}

/* The CPUs this process may run on (its affinity mask), at least 1. */
static int cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < MAX_THREADS ? n : MAX_THREADS) : 1;
}

/* Reads PDEXT_NUM_THREADS and starts the workers. Workers block every signal: signals belong
 * to the host's threads. A worker that cannot be started only makes the pool smaller. */
static void pool_start(void)
{
    const char *env = getenv("PDEXT_NUM_THREADS");
    int n = cpu_count();
    if (env != NULL && *env != '\0') {
        char *end;
        errno = 0;
        long v = strtol(env, &end, 10);
        if (errno != 0 || *end != '\0' || v < 1 || v > MAX_THREADS) {
            pool.bad_env = env;
            return;
        }
        n = (int)v;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int started = 0;
    for (int i = 1; i < n; ++i) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, NULL) != 0)
            break;
        pthread_detach(t);
        ++started;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pool.n_workers = started;
    pool.n_threads = started + 1;
    pool.pid = getpid();
}

/* Runs `l` on the pool's workers and this thread; false (nothing run) if another loop holds
 * the pool, or in a child forked after the pool started (its workers stayed in the parent). */
static bool run_on_pool(loop *l)
{
    if (pool.pid != getpid())
        return false;
    if (atomic_flag_test_and_set_explicit(&pool.held, memory_order_acquire))
        return false;
    pthread_mutex_lock(&pool.lock);
    pool.posted = l;
    pool.busy = pool.n_workers;
    ++pool.generation;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    run_chunks(l);

    pthread_mutex_lock(&pool.lock);
    while (pool.busy > 0)
        pthread_cond_wait(&pool.idle, &pool.lock);
    pool.posted = NULL;
    pthread_mutex_unlock(&pool.lock);
    atomic_flag_clear_explicit(&pool.held, memory_order_release);
    return true;
}

void pd__ctx_parallel_for(pd_kernel_ctx *ctx, int64_t n, int64_t grain, pd_parallel_fn fn,
                          void *arg)
{
    (void)ctx; /* the loop belongs to the running call; chunks find it per thread */
    if (n < 0)
        pd__ctx_throw(PD_ERR_INVALID_ARGUMENT, "pd_parallel_for: n must be >= 0, got %lld",
                      (long long)n);
    if (grain < 0)
        pd__ctx_throw(PD_ERR_INVALID_ARGUMENT,
                      "pd_parallel_for: grain must be >= 0 (0 means 1), got %lld",
                      (long long)grain);
    if (fn == NULL)
        pd__ctx_throw(PD_ERR_INVALID_ARGUMENT, "pd_parallel_for: fn is NULL");
    if (n == 0)
        return;
    if (grain == 0)
        grain = 1;

    bool nested = current_chunk != NULL;
    int threads = 1;
    if (!nested && n > grain) {
        pthread_once(&pool.once, pool_start);
        if (pool.bad_env != NULL)
            pd__ctx_throw(PD_ERR_INVALID_ARGUMENT,
                          "pd_parallel_for: PDEXT_NUM_THREADS='%s' is not a whole number from "
                          "1 to %d",
                          pool.bad_env, MAX_THREADS);
        threads = pool.n_threads;
    }

    loop l = {.fn = fn, .arg = arg, .n = n};
    int64_t most = (n + grain - 1) / grain; /* chunks of at least `grain` */
    l.n_chunks = most < threads ? most : threads;
    l.chunk_size = (n + l.n_chunks - 1) / l.n_chunks;
    l.n_chunks = (n + l.chunk_size - 1) / l.chunk_size;
    atomic_init(&l.next_chunk, 0);
    atomic_init(&l.failed, false);

    if (l.n_chunks == 1 || !run_on_pool(&l)) {
        l.n_chunks = 1;
        l.chunk_size = n;
        run_chunks(&l);
    }
    if (atomic_load(&l.failed))
        pd__ctx_throw_at(l.status, l.file, l.line, l.message);
}
