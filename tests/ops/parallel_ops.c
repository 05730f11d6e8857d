/*
 * parallel_ops.c - ops that exercise pd_parallel_for from C (tests/parallel_test.c).
 *
 *   par_cover(X) -> (Hits, Info), attrs grain, want, nested: one loop over numel(X) indices.
 *     Hits[i] counts the visits of index i (atomically, so a double visit shows). Info holds
 *     {distinct threads that ran chunks, chunks run, 1 if every chunk ran on the kernel's
 *     thread, nested chunks that ran on another thread than their outer chunk}. Each chunk
 *     waits (up to 10 s, a safety net, not a measurement) until `want` distinct threads have
 *     entered the loop, so a pool of `want` threads is proven to be used. With nested != 0
 *     each index runs a nested loop of 8 indices instead of being counted directly.
 *   par_fail(X), attrs bad, grain: PD_CHECK fails inside the chunk holding index `bad`.
 *   par_bad_args(X), attr which: pd_parallel_for with n < 0 (0), grain < 0 (1), fn NULL (2).
 */
#include "extension.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#define MAX_SEEN 64

typedef struct cover_state {
    pd_kernel_ctx *ctx;
    int64_t *hits;
    int64_t want, nested;
    pthread_t kernel_thread;
    pthread_mutex_t lock;
    pthread_t seen[MAX_SEEN];
    int64_t n_seen, chunks, off_kernel_thread, nested_elsewhere;
} cover_state;

static int64_t seen_count(cover_state *s)
{
    pthread_mutex_lock(&s->lock);
    int64_t n = s->n_seen;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void note_thread(cover_state *s)
{
    pthread_t self = pthread_self();
    pthread_mutex_lock(&s->lock);
    bool known = false;
    for (int64_t i = 0; i < s->n_seen; ++i)
        known = known || pthread_equal(s->seen[i], self);
    if (!known && s->n_seen < MAX_SEEN)
        s->seen[s->n_seen++] = self;
    ++s->chunks;
    if (!pthread_equal(self, s->kernel_thread))
        ++s->off_kernel_thread;
    pthread_mutex_unlock(&s->lock);
}

typedef struct nested_state {
    cover_state *outer;
    pthread_t outer_thread;
    int64_t index;
} nested_state;

static void nested_chunk(void *arg, int64_t begin, int64_t end)
{
    nested_state *ns = (nested_state *)arg;
    if (!pthread_equal(pthread_self(), ns->outer_thread))
        __atomic_fetch_add(&ns->outer->nested_elsewhere, 1, __ATOMIC_RELAXED);
    for (int64_t j = begin; j < end; ++j)
        __atomic_fetch_add(&ns->outer->hits[ns->index], 1, __ATOMIC_RELAXED);
}

static void cover_chunk(void *arg, int64_t begin, int64_t end)
{
    cover_state *s = (cover_state *)arg;
    note_thread(s);
    time_t give_up = time(NULL) + 10;
    while (seen_count(s) < s->want && time(NULL) < give_up)
        sched_yield();
    for (int64_t i = begin; i < end; ++i) {
        if (s->nested) {
            nested_state ns = {s, pthread_self(), i};
            pd_parallel_for(s->ctx, 8, 1, nested_chunk, &ns);
        } else {
            __atomic_fetch_add(&s->hits[i], 1, __ATOMIC_RELAXED);
        }
    }
}

static void cover_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *hits = pd_empty_like(ctx, x);
    pd_set_output(ctx, 0, hits);
    int64_t n = pd_numel(x);
    cover_state s = {.ctx = ctx, .hits = (int64_t *)pd_data(hits)};
    s.want = pd_attr_int64(ctx, pd_attr_index(ctx, "want"));
    s.nested = pd_attr_int64(ctx, pd_attr_index(ctx, "nested"));
    s.kernel_thread = pthread_self();
    pthread_mutex_init(&s.lock, NULL);
    for (int64_t i = 0; i < n; ++i)
        s.hits[i] = 0;
    pd_parallel_for(ctx, n, pd_attr_int64(ctx, pd_attr_index(ctx, "grain")), cover_chunk, &s);
    pthread_mutex_destroy(&s.lock);
    pd_tensor *info = pd_empty(ctx, PD_INT64, pd_place_cpu(), 1, (const int64_t[]){4});
    int64_t *v = (int64_t *)pd_data(info);
    v[0] = s.n_seen;
    v[1] = s.chunks;
    v[2] = s.off_kernel_thread == 0;
    v[3] = s.nested_elsewhere;
    pd_set_output(ctx, 1, info);
}

PD_BUILD_OP(par_cover,
    .inputs = {"X"},
    .outputs = {"Hits", "Info"},
    .attrs = {"grain: int64_t", "want: int64_t", "nested: int64_t"},
    .kernel = cover_kernel);

static void fail_chunk(void *arg, int64_t begin, int64_t end)
{
    int64_t bad = *(const int64_t *)arg;
    for (int64_t i = begin; i < end; ++i)
        PD_CHECK(i != bad, "index %lld is bad", (long long)i);
}

static void fail_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t bad = pd_attr_int64(ctx, 0);
    pd_parallel_for(ctx, pd_numel(x), pd_attr_int64(ctx, 1), fail_chunk, &bad);
    PD_THROW("the loop returned although a chunk failed");
}

PD_BUILD_OP(par_fail,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"bad: int64_t", "grain: int64_t"},
    .kernel = fail_kernel);

static void nothing_chunk(void *arg, int64_t begin, int64_t end)
{
    (void)arg;
    (void)begin;
    (void)end;
}

static void bad_args_kernel(pd_kernel_ctx *ctx)
{
    switch (pd_attr_int(ctx, 0)) {
    case 0: pd_parallel_for(ctx, -1, 1, nothing_chunk, NULL); break;
    case 1: pd_parallel_for(ctx, 10, -2, nothing_chunk, NULL); break;
    default: pd_parallel_for(ctx, 10, 1, NULL, NULL); break;
    }
    PD_THROW("pd_parallel_for accepted bad arguments");
}

PD_BUILD_OP(par_bad_args,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"which: int"},
    .kernel = bad_args_kernel);
