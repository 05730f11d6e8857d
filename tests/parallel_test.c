/*
 * parallel_test.c - pd_parallel_for (sdk/src/call/parallel.c) through op modules written in C
 * and C++ (tests/ops/parallel_ops.{c,cc}): every index is visited exactly once, the pool's
 * threads are really used (counted, not timed), PDEXT_NUM_THREADS=1 and nested loops run on
 * the calling thread, and an error inside a chunk ends the op call with its message and
 * [file:line] on the caller's thread, leaving the pool usable.
 *
 * ctest runs every case in a process of its own, and the pool starts on the first loop of a
 * process, so each case picks its PDEXT_NUM_THREADS with setenv before anything runs.
 */
#include "runner_helpers.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Info output of par_cover (tests/ops/parallel_ops.c). */
enum { INFO_THREADS = 0, INFO_CHUNKS = 1, INFO_ALL_ON_CALLER = 2, INFO_NESTED_ELSEWHERE = 3 };

typedef struct cover_result {
    pd_status status;
    int64_t once; /* indices visited exactly once (nested: exactly 8 times) */
    int64_t info[4];
} cover_result;

static cover_result run_cover(pd_registry *reg, int64_t n, int64_t grain, int64_t want,
                              int64_t nested)
{
    cover_result r = {PD_OK, 0, {0, 0, 0, 0}};
    pd_tensor x = rt_tensor(PD_INT64, 1, (int64_t[]){n}, NULL);
    pd_tensor hits = PD_TENSOR_UNDEFINED, info = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x);
    pd_arg out[2] = {pd_arg_of(&hits), pd_arg_of(&info)};
    pd_attr attrs[3] = {pd_attr_of_int64("grain", grain), pd_attr_of_int64("want", want),
                        pd_attr_of_int64("nested", nested)};
    r.status = pd_run(reg, "par_cover", &in, 1, attrs, 3, out, 2);
    if (r.status == PD_OK) {
        const int64_t *h = (const int64_t *)pd_data(&hits);
        for (int64_t i = 0; i < n; ++i)
            r.once += h[i] == (nested ? 8 : 1);
        for (int k = 0; k < 4; ++k)
            r.info[k] = ((const int64_t *)pd_data(&info))[k];
    }
    pd_tensor_release(&x);
    pd_tensor_release(&hits);
    pd_tensor_release(&info);
    return r;
}

/* Runs a one-input op of the module on a length-n int64 tensor; the status. */
static pd_status run_simple(pd_registry *reg, const char *op, int64_t n, const pd_attr *attrs,
                            int n_attrs)
{
    pd_tensor x = rt_tensor(PD_INT64, 1, (int64_t[]){n}, NULL);
    pd_tensor y = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), out = pd_arg_of(&y);
    pd_status s = pd_run(reg, op, &in, 1, attrs, n_attrs, &out, 1);
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    return s;
}

PD_TEST(ParallelFor, VisitsEveryIndexExactlyOnceOnEveryThreadOfThePool)
{
    setenv("PDEXT_NUM_THREADS", "4", 1);
    pd_registry *reg = rt_registry1("rt_parallel_c");
    PD_ASSERT(reg != NULL);
    int64_t n = 100003;
    cover_result r = run_cover(reg, n, 7, 4, 0);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.once, n);
    PD_EXPECT_EQ(r.info[INFO_THREADS], 4);
    PD_EXPECT_EQ(r.info[INFO_CHUNKS], 4);
    PD_EXPECT_EQ(r.info[INFO_ALL_ON_CALLER], 0);
    pd_registry_destroy(reg);
}

PD_TEST(ParallelFor, CutsNoChunkShorterThanTheGrain)
{
    setenv("PDEXT_NUM_THREADS", "4", 1);
    pd_registry *reg = rt_registry1("rt_parallel_c");
    PD_ASSERT(reg != NULL);
    /* 10 indices with grain 5: two chunks, so two threads at most. */
    cover_result r = run_cover(reg, 10, 5, 2, 0);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.once, 10);
    PD_EXPECT_EQ(r.info[INFO_CHUNKS], 2);
    PD_EXPECT_EQ(r.info[INFO_THREADS], 2);
    /* n <= grain: one chunk on the caller. */
    r = run_cover(reg, 10, 10, 1, 0);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.once, 10);
    PD_EXPECT_EQ(r.info[INFO_CHUNKS], 1);
    PD_EXPECT_EQ(r.info[INFO_ALL_ON_CALLER], 1);
    /* n == 0 calls nothing. */
    r = run_cover(reg, 0, 1, 1, 0);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.info[INFO_CHUNKS], 0);
    pd_registry_destroy(reg);
}

PD_TEST(ParallelFor, OneThreadRunsInlineOnTheCaller)
{
    setenv("PDEXT_NUM_THREADS", "1", 1);
    pd_registry *reg = rt_registry1("rt_parallel_c");
    PD_ASSERT(reg != NULL);
    cover_result r = run_cover(reg, 100000, 1, 1, 0);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.once, 100000);
    PD_EXPECT_EQ(r.info[INFO_THREADS], 1);
    PD_EXPECT_EQ(r.info[INFO_CHUNKS], 1);
    PD_EXPECT_EQ(r.info[INFO_ALL_ON_CALLER], 1);
    pd_registry_destroy(reg);
}

PD_TEST(ParallelFor, NestedLoopsRunInlineOnTheirChunksThread)
{
    setenv("PDEXT_NUM_THREADS", "4", 1);
    pd_registry *reg = rt_registry1("rt_parallel_c");
    PD_ASSERT(reg != NULL);
    cover_result r = run_cover(reg, 64, 1, 4, 1);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.once, 64);
    PD_EXPECT_EQ(r.info[INFO_THREADS], 4);
    /* 4 outer chunks; each nested loop is one chunk: 64 more. */
    PD_EXPECT_EQ(r.info[INFO_CHUNKS], 4);
    PD_EXPECT_EQ(r.info[INFO_NESTED_ELSEWHERE], 0);
    pd_registry_destroy(reg);
}

PD_TEST(ParallelFor, CheckFailingInAWorkerEndsTheCallWithFileAndLine)
{
    setenv("PDEXT_NUM_THREADS", "4", 1);
    pd_registry *reg = rt_registry1("rt_parallel_c");
    PD_ASSERT(reg != NULL);
    pd_attr attrs[2] = {pd_attr_of_int64("bad", 777), pd_attr_of_int64("grain", 1)};
    PD_EXPECT_ERROR(run_simple(reg, "par_fail", 1000, attrs, 2), PD_ERR_OP_FAILED,
                    "par_fail: index 777 is bad [parallel_ops.c:");
    /* The pool survives: the next loop covers everything. */
    cover_result r = run_cover(reg, 1000, 1, 1, 0);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.once, 1000);
    pd_registry_destroy(reg);
}

PD_TEST(ParallelFor, CheckFailingInlineEndsTheCallTheSameWay)
{
    setenv("PDEXT_NUM_THREADS", "1", 1);
    pd_registry *reg = rt_registry1("rt_parallel_c");
    PD_ASSERT(reg != NULL);
    pd_attr attrs[2] = {pd_attr_of_int64("bad", 3), pd_attr_of_int64("grain", 1)};
    PD_EXPECT_ERROR(run_simple(reg, "par_fail", 10, attrs, 2), PD_ERR_OP_FAILED,
                    "par_fail: index 3 is bad [parallel_ops.c:");
    pd_registry_destroy(reg);
}

PD_TEST(ParallelFor, RejectsBadArgumentsNamingThem)
{
    pd_registry *reg = rt_registry1("rt_parallel_c");
    PD_ASSERT(reg != NULL);
    static const char *const want[3] =
        {"par_bad_args: pd_parallel_for: n must be >= 0, got -1",
         "par_bad_args: pd_parallel_for: grain must be >= 0 (0 means 1), got -2",
         "par_bad_args: pd_parallel_for: fn is NULL"};
    for (int which = 0; which < 3; ++which) {
        pd_attr a = pd_attr_of_int("which", which);
        PD_EXPECT_ERROR(run_simple(reg, "par_bad_args", 1, &a, 1), PD_ERR_INVALID_ARGUMENT,
                        want[which]);
    }
    pd_registry_destroy(reg);
}

PD_TEST(ParallelFor, RejectsAThreadCountThatIsNotANumber)
{
    setenv("PDEXT_NUM_THREADS", "four", 1);
    pd_registry *reg = rt_registry1("rt_parallel_c");
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_tensor(PD_INT64, 1, (int64_t[]){100}, NULL);
    pd_tensor hits = PD_TENSOR_UNDEFINED, info = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x);
    pd_arg out[2] = {pd_arg_of(&hits), pd_arg_of(&info)};
    pd_attr attrs[3] = {pd_attr_of_int64("grain", 1), pd_attr_of_int64("want", 1),
                        pd_attr_of_int64("nested", 0)};
    PD_EXPECT_ERROR(pd_run(reg, "par_cover", &in, 1, attrs, 3, out, 2), PD_ERR_INVALID_ARGUMENT,
                    "par_cover: pd_parallel_for: PDEXT_NUM_THREADS='four' is not a whole number "
                    "from 1 to 1024");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(ParallelFor, CxxLambdaVisitsEveryIndexExactlyOnce)
{
    setenv("PDEXT_NUM_THREADS", "4", 1);
    pd_registry *reg = rt_registry1("rt_parallel_cc");
    PD_ASSERT(reg != NULL);
    int64_t n = 50021;
    pd_tensor x = rt_tensor(PD_INT64, 1, (int64_t[]){n}, NULL);
    pd_tensor hits = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), out = pd_arg_of(&hits);
    pd_attr grain = pd_attr_of_int64("grain", 3);
    PD_ASSERT_OK(pd_run(reg, "par_cc_cover", &in, 1, &grain, 1, &out, 1));
    int64_t once = 0;
    for (int64_t i = 0; i < n; ++i)
        once += ((const int64_t *)pd_data(&hits))[i] == 1;
    PD_EXPECT_EQ(once, n);
    pd_tensor_release(&x);
    pd_tensor_release(&hits);
    pd_registry_destroy(reg);
}

/* Live guard objects of the C++ kernels (0 once every destructor ran). */
static int64_t cxx_alive(pd_registry *reg)
{
    pd_tensor x = rt_tensor(PD_INT64, 1, (int64_t[]){1}, NULL);
    pd_tensor y = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), out = pd_arg_of(&y);
    int64_t alive = -1;
    if (pd_run(reg, "par_cc_alive", &in, 1, NULL, 0, &out, 1) == PD_OK)
        alive = *(const int64_t *)pd_data(&y);
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    return alive;
}

PD_TEST(ParallelFor, CxxErrorsInChunksReachTheCallerWithFileAndLine)
{
    setenv("PDEXT_NUM_THREADS", "4", 1);
    pd_registry *reg = rt_registry1("rt_parallel_cc");
    PD_ASSERT(reg != NULL);
    static const char *const want[3] = {"par_cc_fail: index 777 is bad [parallel_ops.cc:",
                                        "par_cc_fail: C++ exception: boom",
                                        "par_cc_fail: index 777 is bad [parallel_ops.cc:"};
    for (int kind = 0; kind < 3; ++kind) {
        pd_attr attrs[2] = {pd_attr_of_int64("kind", kind), pd_attr_of_int64("bad", 777)};
        PD_EXPECT_ERROR(run_simple(reg, "par_cc_fail", 1000, attrs, 2), PD_ERR_OP_FAILED,
                        want[kind]);
        PD_EXPECT_EQ(cxx_alive(reg), 0);
    }
    pd_registry_destroy(reg);
}

/* examples/relu runs on the pool from 2^18 elements on: its results stay those of the plain
 * loop, for the forward and the grad op, in both dtypes. */
PD_TEST(ParallelFor, ReluAboveTheThresholdGivesTheSameNumbers)
{
    setenv("PDEXT_NUM_THREADS", "4", 1);
    pd_registry *reg = rt_registry1("rt_example_relu");
    PD_ASSERT(reg != NULL);
    const pd_data_type dtypes[2] = {PD_FLOAT32, PD_FLOAT64};
    const int64_t shape[2] = {3, (1 << 18) + 5};
    for (int d = 0; d < 2; ++d) {
        pd_tensor x = rt_random(dtypes[d], 2, shape);
        pd_tensor g = rt_random(dtypes[d], 2, shape);
        pd_tensor out = PD_TENSOR_UNDEFINED, gx = PD_TENSOR_UNDEFINED;
        pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
        PD_ASSERT_OK(pd_run(reg, "custom_relu", &in, 1, NULL, 0, &o, 1));
        pd_arg grad_in[3] = {pd_arg_of(&x), pd_arg_of(&out), pd_arg_of(&g)};
        pd_arg go = pd_arg_of(&gx);
        PD_ASSERT_OK(pd_run(reg, "custom_relu_grad", grad_in, 3, NULL, 0, &go, 1));
        int64_t wrong = 0, wrong_grad = 0;
        for (int64_t i = 0, n = pd_numel(&x); i < n; ++i) {
            double xi = rt_at(&x, i), want = xi > 0 ? xi : 0;
            wrong += rt_at(&out, i) != want;
            wrong_grad += rt_at(&gx, i) != (want > 0 ? rt_at(&g, i) : 0);
        }
        PD_EXPECT_EQ(wrong, 0);
        PD_EXPECT_EQ(wrong_grad, 0);
        pd_tensor_release(&x);
        pd_tensor_release(&g);
        pd_tensor_release(&out);
        pd_tensor_release(&gx);
    }
    pd_registry_destroy(reg);
}

/* A child forked after the pool started has no workers: its loops run inline instead of
 * waiting for threads that stayed in the parent. */
PD_TEST(ParallelFor, ForkedChildRunsLoopsInline)
{
    setenv("PDEXT_NUM_THREADS", "4", 1);
    pd_registry *reg = rt_registry1("rt_parallel_c");
    PD_ASSERT(reg != NULL);
    cover_result r = run_cover(reg, 1000, 1, 4, 0);
    PD_EXPECT_EQ(r.info[INFO_THREADS], 4); /* the pool runs in the parent */
    pid_t child = fork();
    PD_ASSERT(child >= 0);
    if (child == 0) {
        r = run_cover(reg, 1000, 1, 1, 0);
        _exit(r.status == PD_OK && r.once == 1000 && r.info[INFO_THREADS] == 1 &&
                      r.info[INFO_ALL_ON_CALLER] == 1
                  ? 0
                  : 1);
    }
    int status = 0;
    PD_ASSERT_EQ(waitpid(child, &status, 0), child);
    PD_EXPECT(WIFEXITED(status));
    PD_EXPECT_EQ(WEXITSTATUS(status), 0);
    pd_registry_destroy(reg);
}
