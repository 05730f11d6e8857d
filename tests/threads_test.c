/*
 * threads_test.c - many threads running ops at once through one registry: relu forward and
 * backward and concat by name and by handle, with failing calls mixed in. Each thread checks
 * its own results against values it computes itself, and its own error messages (errors and
 * their frames are per thread).
 */
#include "runner_helpers.h"

#include <pthread.h>

#define N_THREADS 8
#define N_RUNS 200

typedef struct worker {
    pd_registry *reg;
    const pd_op *relu; /* handle resolved once, shared by all threads */
    int id;
    int failures; /* checks that failed in this thread (reported by the main thread) */
    char first_failure[256];
} worker;

static void note_failure(worker *w, const char *what)
{
    if (w->failures++ == 0)
        snprintf(w->first_failure, sizeof w->first_failure, "thread %d: %s", w->id, what);
}

static void run_once(worker *w, int run)
{
    int64_t n = 64 + run % 7;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, NULL);
    float *xv = pd_data(&x);
    for (int64_t i = 0; i < n; ++i)
        xv[i] = (float)((i * 7 + run + w->id) % 13) - 6.0f;

    /* relu by handle, its grad by name. */
    pd_tensor out = PD_TENSOR_UNDEFINED, gx = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    if (pd_op_run(w->relu, &in, 1, NULL, 0, &o, 1) != PD_OK) {
        note_failure(w, pd_last_error());
        pd_tensor_release(&x);
        return;
    }
    pd_arg gin[3] = {pd_arg_named("X", &x, 1), pd_arg_named("Out", &out, 1),
                     pd_arg_named("Out@GRAD", &x, 1)};
    pd_arg go = pd_arg_of(&gx);
    if (pd_run(w->reg, "custom_relu_grad", gin, 3, NULL, 0, &go, 1) != PD_OK)
        note_failure(w, pd_last_error());
    for (int64_t i = 0; i < n && pd_defined(&gx); ++i) {
        float want = xv[i] > 0 ? xv[i] : 0;
        if (((float *)out.data)[i] != want || ((float *)gx.data)[i] != want)
            note_failure(w, "relu values differ");
    }

    /* concat of [x, out] along axis 0. */
    pd_tensor parts[2] = {x, out}, joined = PD_TENSOR_UNDEFINED;
    pd_arg cin = pd_arg_named("X", parts, 2), co = pd_arg_of(&joined);
    pd_attr axis = pd_attr_of_int64("axis", 0);
    if (pd_run(w->reg, "custom_concat", &cin, 1, &axis, 1, &co, 1) != PD_OK)
        note_failure(w, pd_last_error());
    else if (pd_dim(&joined, 0) != 2 * n || memcmp(joined.data, x.data, (size_t)n * 4) != 0 ||
             memcmp((float *)joined.data + n, out.data, (size_t)n * 4) != 0)
        note_failure(w, "concat values differ");

    /* A failing call every few runs: the message is this thread's own. */
    if (run % 5 == 0) {
        pd_attr bad = pd_attr_of_int64("axis", 100 + w->id);
        char want[128];
        snprintf(want, sizeof want, "custom_concat: attr 'axis' is %d, but", 100 + w->id);
        if (pd_run(w->reg, "custom_concat", &cin, 1, &bad, 1, &co, 1) != PD_ERR_OP_FAILED ||
            !pd_test_contains(pd_last_error(), want))
            note_failure(w, "wrong error for a bad axis");
    }
    pd_tensor_release(&joined);
    pd_tensor_release(&gx);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
}

static void *work(void *arg)
{
    worker *w = arg;
    for (int run = 0; run < N_RUNS; ++run)
        run_once(w, run);
    return NULL;
}

PD_TEST(Threads, ManyThreadsRunOpsAtOnceWithTheirOwnResultsAndErrors)
{
    static const char *const modules[] = {"rt_example_relu", "rt_example_concat"};
    pd_registry *reg = rt_registry(modules, 2);
    PD_ASSERT(reg != NULL);
    const pd_op *relu = pd_op_find(reg, "custom_relu");
    PD_ASSERT(relu != NULL);
    worker workers[N_THREADS];
    pthread_t threads[N_THREADS];
    for (int t = 0; t < N_THREADS; ++t) {
        workers[t] = (worker){reg, relu, t, 0, ""};
        PD_ASSERT_EQ(pthread_create(&threads[t], NULL, work, &workers[t]), 0);
    }
    for (int t = 0; t < N_THREADS; ++t)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < N_THREADS; ++t)
        if (workers[t].failures)
            pd_test_fail(__FILE__, __LINE__, "%d failures, first: %s", workers[t].failures,
                         workers[t].first_failure);
    pd_registry_destroy(reg);
}
