/*
 * executor_test.c - the executor (pdext_executor.h): calls run in submission order, pending
 * outputs are usable at once and waited for where they are read, data-dependent output
 * counts, errors poisoning dependents, destruction with work in flight, many threads on one
 * executor, the workspace stage (and the same field in the synchronous runner), calls on
 * the simulated device, and the bad input the header defines.
 *
 * Nothing here is timed: a call is held in flight by a "gate" op (ex_gated_add1) whose kernel
 * waits until the test sets a flag, so "still pending" is a fact, not a race.
 */
#include "executor_helpers.h"
#include "pdext_npy.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* --- Creating ---------------------------------------------------------------------------- */

PD_TEST(Executor, CreatesWithDefaultsAndRefusesBadOptionsNamingThem)
{
    pd_executor *ex = NULL;
    PD_ASSERT_OK(pd_executor_create(NULL, NULL, &ex));
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_executor_options o = {sizeof o, 65, 0, 0, 0};
    PD_EXPECT_ERROR(pd_executor_create(NULL, &o, &ex), PD_ERR_INVALID_ARGUMENT,
                    "n_streams is 65; expected 1..64");
    o.n_streams = 1;
    o.depth = -1;
    PD_EXPECT_ERROR(pd_executor_create(NULL, &o, &ex), PD_ERR_INVALID_ARGUMENT,
                    "depth is -1; expected 1..");
    o.struct_size = 4;
    PD_EXPECT_ERROR(pd_executor_create(NULL, &o, &ex), PD_ERR_INVALID_ARGUMENT,
                    "set it to sizeof(pd_executor_options)");
    PD_EXPECT_ERROR(pd_executor_create(NULL, NULL, NULL), PD_ERR_INVALID_ARGUMENT, "out is NULL");
}

PD_TEST(Executor, RefusesAnInlineSizeOutOfRangeNamingIt)
{
    pd_executor *ex = NULL;
    pd_executor_options o = {sizeof o, 1, 0, -2, 0};
    PD_EXPECT_ERROR(pd_executor_create(NULL, &o, &ex), PD_ERR_INVALID_ARGUMENT,
                    "inline_bytes is -2; expected -1 (never), 0 (the default, 65536) or 1..");
    o.inline_bytes = (1 << 20) + 1;
    PD_EXPECT_ERROR(pd_executor_create(NULL, &o, &ex), PD_ERR_INVALID_ARGUMENT,
                    "inline_bytes is 1048577");
}

/* --- Ordering ------------------------------------------------------------------------------ */

PD_TEST(Executor, RunsADependentChainInSubmissionOrder)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(16, -8), cur = x, next;
    pd_tensor_retain(&cur, &x);
    double want[16];
    for (int i = 0; i < 16; ++i)
        want[i] = -8 + i;
    for (int k = 0; k < 100; ++k) {
        float a = (k % 3 == 0) ? -1.0f : 1.0f, b = (float)(k % 7) - 3.0f;
        next = (pd_tensor)PD_TENSOR_UNDEFINED;
        PD_ASSERT_OK(affine(ex, 0, &cur, a, b, &next));
        PD_EXPECT_EQ(next.ndim, 1);
        PD_EXPECT_EQ(next.shape[0], 16);
        PD_EXPECT_EQ(next.dtype, PD_FLOAT32);
        pd_tensor_release(&cur); /* the pipeline holds its own reference */
        cur = next;
        for (int i = 0; i < 16; ++i)
            want[i] = want[i] * a + b;
    }
    PD_ASSERT_OK(pd_tensor_wait(ex, &cur));
    for (int i = 0; i < 16; ++i)
        PD_EXPECT_EQ(at(&cur, i), (float)want[i]);
    pd_executor_stats st;
    PD_ASSERT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.submitted, 100u);
    PD_ASSERT_OK(pd_executor_synchronize(ex));
    PD_ASSERT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.done, 100u);
    PD_EXPECT_EQ(st.failed, 0u);
    finish(ex, reg, (pd_tensor *[]){&cur, &x}, 2);
}

PD_TEST(Executor, ReturnsPendingOutputsWithShapeDtypeAndMemoryAtOnce)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(5, 0), g = gate(), y = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(gated(ex, 0, &x, &g, &y));
    PD_EXPECT(pd_tensor_is_pending(&y));
    PD_EXPECT_EQ(y.ndim, 1);
    PD_EXPECT_EQ(y.shape[0], 5);
    PD_EXPECT_EQ(y.dtype, PD_FLOAT32);
    PD_EXPECT(y.data != NULL);
    /* A later call consumes the pending tensor without any wait by the caller. */
    PD_ASSERT_OK(affine(ex, 0, &y, 2, 0, &z));
    PD_EXPECT(pd_tensor_is_pending(&z));
    pd_executor_stats st;
    PD_ASSERT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.done, 0u);
    gate_open(&g);
    PD_ASSERT_OK(pd_tensor_wait(NULL, &z));
    PD_EXPECT(!pd_tensor_is_pending(&z));
    for (int i = 0; i < 5; ++i)
        PD_EXPECT_EQ(at(&z, i), 2.0f * (float)(i + 1));
    finish(ex, reg, (pd_tensor *[]){&x, &g, &y, &z}, 4);
}

PD_TEST(Executor, OrdersACallAfterItsInputsMadeOnAnotherStream)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 2);
    pd_tensor x = ramp(4, 1), g = gate(), y = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(gated(ex, 0, &x, &g, &y));    /* stream 0, held */
    PD_ASSERT_OK(affine(ex, 1, &y, 3, 1, &z)); /* stream 1 must wait for it */
    PD_EXPECT(pd_tensor_is_pending(&z));
    gate_open(&g);
    PD_ASSERT_OK(pd_tensor_wait(ex, &z));
    for (int i = 0; i < 4; ++i)
        PD_EXPECT_EQ(at(&z, i), 3.0f * (float)(i + 2) + 1.0f);
    finish(ex, reg, (pd_tensor *[]){&x, &g, &y, &z}, 4);
}

PD_TEST(Executor, OrdersInplaceCallsOnOneTensorInSubmissionOrder)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 2);
    pd_tensor x = ramp(3, 10), g = gate(), y = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(gated(ex, 0, &x, &g, &y));
    for (int k = 0; k < 5; ++k) {
        pd_tensor out = PD_TENSOR_UNDEFINED;
        pd_arg in = pd_arg_of(&y), o = pd_arg_of(&out);
        PD_ASSERT_OK(pd_run_async(ex, k % 2, "ex_add1_", &in, 1, NULL, 0, &o, 1));
        PD_EXPECT(out.storage == y.storage); /* the output is the input itself */
        pd_tensor_release(&out);
    }
    gate_open(&g);
    PD_ASSERT_OK(pd_executor_synchronize(ex));
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_EQ(at(&y, i), (float)(10 + i) + 1.0f + 5.0f);
    finish(ex, reg, (pd_tensor *[]){&x, &g, &y}, 3);
}

/* --- Waiting where data is read ------------------------------------------------------------ */

PD_TEST(Executor, HostReadsAndTheSynchronousRunnerWaitForPendingTensors)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(6, 0), g = gate(), y = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(gated(ex, 0, &x, &g, &y));
    /* Opened from another thread while this one is blocked in the reads below. */
    pthread_t opener;
    PD_ASSERT(pthread_create(&opener, NULL, (void *(*)(void *))(void *)gate_open, &g) == 0);
    pd_tensor c = PD_TENSOR_UNDEFINED, d = PD_TENSOR_UNDEFINED, r = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_copy_to(&c, &y, pd_place_cpu()));
    PD_ASSERT_OK(pd_tensor_cast(&d, &y, PD_FLOAT64));
    pd_arg in = pd_arg_of(&y), o = pd_arg_of(&r);
    pd_attr attrs[2] = {pd_attr_of_float("a", 1), pd_attr_of_float("b", 0)};
    PD_ASSERT_OK(pd_run(reg, "ex_affine", &in, 1, attrs, 2, &o, 1));
    for (int i = 0; i < 6; ++i) {
        PD_EXPECT_EQ(at(&c, i), (float)(i + 1));
        PD_EXPECT_EQ(((double *)d.data)[i], (double)(i + 1));
        PD_EXPECT_EQ(at(&r, i), (float)(i + 1));
    }
    pthread_join(opener, NULL);
    finish(ex, reg, (pd_tensor *[]){&x, &g, &y, &c, &d, &r}, 6);
}

PD_TEST(Executor, NpySaveWaitsForAPendingTensor)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(4, 0), g = gate(), y = PD_TENSOR_UNDEFINED, back = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(gated(ex, 0, &x, &g, &y));
    pthread_t opener;
    PD_ASSERT(pthread_create(&opener, NULL, (void *(*)(void *))(void *)gate_open, &g) == 0);
    char path[256];
    snprintf(path, sizeof path, "%s/executor_npy_%d.npy", PD_TEST_BINARY_DIR, (int)getpid());
    PD_ASSERT_OK(pd_npy_save(path, &y));
    PD_ASSERT_OK(pd_npy_load(path, &back));
    for (int i = 0; i < 4; ++i)
        PD_EXPECT_EQ(at(&back, i), (float)(i + 1));
    pthread_join(opener, NULL);
    remove(path);
    finish(ex, reg, (pd_tensor *[]){&x, &g, &y, &back}, 4);
}

/* --- Outputs the caller waits for ----------------------------------------------------------- */

PD_TEST(Executor, DataDependentOutputCountIsKnownWhenTheCallReturns)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(1, 2), y = PD_TENSOR_UNDEFINED, parts[8];
    PD_ASSERT_OK(affine(ex, 0, &x, 1, 1, &y)); /* y = [3], pending */
    pd_arg in = pd_arg_of(&y), o = pd_arg_named("Out", parts, 8);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_split_by_value", &in, 1, NULL, 0, &o, 1));
    PD_ASSERT_EQ(o.count, 3);
    PD_ASSERT_OK(pd_executor_synchronize(ex));
    for (int k = 0; k < 3; ++k) {
        PD_EXPECT_EQ(at(&parts[k], 0), (float)k);
        pd_tensor_release(&parts[k]);
    }
    finish(ex, reg, (pd_tensor *[]){&x, &y}, 2);
}

PD_TEST(Executor, OutputsOnlyTheKernelCanShapeAreHandedOverAfterItsLaunch)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(3, 5), y = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&y);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_twice", &in, 1, NULL, 0, &o, 1));
    PD_ASSERT_EQ(y.shape[0], 6);
    PD_EXPECT(!pd_tensor_is_pending(&y));
    for (int i = 0; i < 6; ++i)
        PD_EXPECT_EQ(at(&y, i), (float)(5 + i % 3));
    finish(ex, reg, (pd_tensor *[]){&x, &y}, 2);
}

PD_TEST(Executor, AnOutputTheKernelGivesWithSetOutputLandsInThePendingOutput)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(4, 0), y = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&y);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_set_output", &in, 1, NULL, 0, &o, 1));
    void *held = y.data;
    PD_ASSERT_OK(pd_tensor_wait(ex, &y));
    PD_EXPECT(y.data == held);
    for (int i = 0; i < 4; ++i)
        PD_EXPECT_EQ(at(&y, i), (float)(i + 2));
    finish(ex, reg, (pd_tensor *[]){&x, &y}, 2);
}

PD_TEST(Executor, AttrValuesAreCopiedWhenTheCallIsSubmitted)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(1, 7), g = gate(), y = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(gated(ex, 0, &x, &g, &y)); /* y = [8], held */
    char tag[16] = "tag-8";
    pd_arg in = pd_arg_of(&y), o = pd_arg_of(&z);
    pd_attr a = pd_attr_of_string("tag", tag);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_tagged", &in, 1, &a, 1, &o, 1));
    snprintf(tag, sizeof tag, "overwritten");
    gate_open(&g);
    PD_EXPECT_OK(pd_tensor_wait(ex, &z));
    finish(ex, reg, (pd_tensor *[]){&x, &g, &y, &z}, 4);
}

/* --- Errors ------------------------------------------------------------------------------- */

PD_TEST(Executor, BadInputFailsAtTheCallWithTheRunnersMessage)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(2, 0), y = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&y);
    pd_attr a = pd_attr_of_float("a", 1);
    PD_EXPECT_EQ(pd_run(reg, "ex_affine", &in, 1, &a, 1, &o, 1), PD_ERR_INVALID_ARGUMENT);
    char sync_message[512];
    snprintf(sync_message, sizeof sync_message, "%s", pd_last_error());
    PD_EXPECT_EQ(pd_run_async(ex, 0, "ex_affine", &in, 1, &a, 1, &o, 1), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT_STREQ(pd_last_error(), sync_message);
    PD_EXPECT(strstr(sync_message, "attr 'b' (float) is missing") != NULL);
    PD_EXPECT(!pd_defined(&y)); /* nothing written */
    PD_EXPECT_ERROR(pd_run_async(ex, 0, "ex_nope", &in, 1, NULL, 0, &o, 1), PD_ERR_NOT_FOUND,
                    "ex_nope");
    PD_EXPECT_ERROR(pd_run_async(ex, 1, "ex_affine", &in, 1, NULL, 0, &o, 1),
                    PD_ERR_INVALID_ARGUMENT, "stream 1 is out of range; the executor has 1 stream");
    pd_executor_stats st;
    PD_ASSERT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.submitted, 0u);
    finish(ex, reg, (pd_tensor *[]){&x}, 1);
}

PD_TEST(Executor, AKernelErrorPoisonsDependentsAndTheWaitNamesTheOp)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(2, -1), y = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    pd_tensor ok_in = ramp(2, 1), ok = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&y);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_fail_if_negative", &in, 1, NULL, 0, &o, 1));
    PD_ASSERT_OK(affine(ex, 0, &y, 2, 0, &z));      /* depends on the failing call */
    PD_ASSERT_OK(affine(ex, 0, &ok_in, 2, 0, &ok)); /* does not */
    PD_EXPECT_ERROR(pd_tensor_wait(ex, &z), PD_ERR_OP_FAILED,
                    "ex_fail_if_negative: boom: x[0] is -1");
    PD_EXPECT_ERROR(pd_tensor_wait(ex, &y), PD_ERR_OP_FAILED, "boom");
    PD_EXPECT_ERROR(pd_tensor_wait(ex, &z), PD_ERR_OP_FAILED, "boom"); /* every wait */
    PD_EXPECT_OK(pd_tensor_wait(ex, &ok));
    PD_EXPECT_EQ(at(&ok, 1), 4.0f);
    PD_EXPECT_ERROR(pd_executor_synchronize(ex), PD_ERR_OP_FAILED, "ex_fail_if_negative: boom");
    PD_EXPECT_OK(pd_executor_synchronize(ex)); /* reported once */
    pd_executor_stats st;
    PD_ASSERT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.done, 3u);
    PD_EXPECT_EQ(st.failed, 2u);
    /* A host read of a poisoned tensor fails the same way. */
    pd_tensor c = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tensor_copy_to(&c, &z, pd_place_cpu()), PD_ERR_OP_FAILED, "boom");
    finish(ex, reg, (pd_tensor *[]){&x, &y, &z, &ok_in, &ok}, 5);
}

PD_TEST(Executor, WaitingWithAnotherExecutorIsRefused)
{
    pd_registry *reg = ops();
    pd_executor *a = executor(reg, 1), *b = executor(reg, 1);
    pd_tensor x = ramp(2, 0), g = gate(), y = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(gated(a, 0, &x, &g, &y));
    PD_EXPECT_ERROR(pd_tensor_wait(b, &y), PD_ERR_INVALID_ARGUMENT, "was made by executor #");
    PD_EXPECT(pd_tensor_is_pending(&y)); /* nothing was waited for */
    gate_open(&g);
    PD_EXPECT_OK(pd_tensor_wait(a, &y));
    PD_EXPECT_ERROR(pd_tensor_wait(a, NULL), PD_ERR_INVALID_ARGUMENT, "NULL");
    pd_tensor *all[] = {&x, &g, &y};
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(all[i]);
    PD_EXPECT_OK(pd_executor_destroy(a));
    PD_EXPECT_OK(pd_executor_destroy(b));
    pd_registry_destroy(reg);
}

/* --- Destruction ---------------------------------------------------------------------------- */

PD_TEST(Executor, DestroyWaitsForWorkInFlightAndLaterCallsAreRefused)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 2);
    pd_tensor x = ramp(8, 0), cur, outs[2];
    for (int s = 0; s < 2; ++s) {
        pd_tensor_retain(&cur, &x);
        for (int k = 0; k < 20; ++k) {
            pd_tensor next = PD_TENSOR_UNDEFINED;
            pd_arg in = pd_arg_of(&cur), o = pd_arg_of(&next);
            pd_attr us = pd_attr_of_int64("us", 200);
            PD_ASSERT_OK(pd_run_async(ex, s, "ex_slow_add1", &in, 1, &us, 1, &o, 1));
            pd_tensor_release(&cur);
            cur = next;
        }
        outs[s] = cur;
    }
    PD_ASSERT_OK(pd_executor_destroy(ex));
    for (int s = 0; s < 2; ++s) {
        PD_EXPECT(!pd_tensor_is_pending(&outs[s]));
        PD_EXPECT_OK(pd_tensor_wait(NULL, &outs[s]));
        for (int i = 0; i < 8; ++i)
            PD_EXPECT_EQ(at(&outs[s], i), (float)(i + 20));
        pd_tensor_release(&outs[s]);
    }
    pd_tensor y = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&y);
    PD_EXPECT_ERROR(pd_run_async(ex, 0, "ex_affine", &in, 1, NULL, 0, &o, 1),
                    PD_ERR_INVALID_ARGUMENT, "pd_run_async: the executor was destroyed");
    PD_EXPECT_ERROR(pd_executor_synchronize(ex), PD_ERR_INVALID_ARGUMENT, "was destroyed");
    PD_EXPECT_ERROR(pd_executor_destroy(ex), PD_ERR_INVALID_ARGUMENT, "was destroyed");
    PD_EXPECT_OK(pd_executor_destroy(NULL));
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Executor, DroppingAPoisonedChainWithoutWaitingLeaksNothing)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(64, -1), cur;
    pd_tensor_retain(&cur, &x);
    for (int k = 0; k < 10; ++k) {
        pd_tensor next = PD_TENSOR_UNDEFINED;
        pd_arg in = pd_arg_of(&cur), o = pd_arg_of(&next);
        PD_ASSERT_OK(pd_run_async(ex, 0, k == 0 ? "ex_fail_if_negative" : "ex_set_output", &in, 1,
                                  NULL, 0, &o, 1));
        pd_tensor_release(&cur);
        cur = next;
    }
    pd_tensor_release(&cur); /* never waited for; ASan's leak check runs this suite */
    PD_EXPECT_ERROR(pd_executor_synchronize(ex), PD_ERR_OP_FAILED, "boom");
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 1);
    finish(ex, reg, (pd_tensor *[]){&x}, 1);
}

/* --- Threads ------------------------------------------------------------------------------- */

typedef struct submitter {
    pd_executor *ex;
    int32_t stream;
    int id;
    pd_tensor result;
    pd_status status;
} submitter;

#define CHAIN 200

static void *submit_chain(void *arg)
{
    submitter *s = arg;
    int64_t n = 32;
    pd_tensor cur = rt_tensor(PD_FLOAT32, 1, &n, NULL);
    for (int i = 0; i < 32; ++i)
        ((float *)cur.data)[i] = (float)s->id;
    s->status = PD_OK;
    for (int k = 0; k < CHAIN && s->status == PD_OK; ++k) {
        pd_tensor next = PD_TENSOR_UNDEFINED;
        s->status = affine(s->ex, s->stream, &cur, 1, 1, &next);
        pd_tensor_release(&cur);
        cur = next;
    }
    s->result = cur;
    return NULL;
}

PD_TEST(Executor, ManyThreadsSubmitToOneExecutor)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 3);
    submitter subs[8];
    pthread_t threads[8];
    for (int t = 0; t < 8; ++t) {
        subs[t] = (submitter){ex, t % 3, t, PD_TENSOR_UNDEFINED, PD_OK};
        PD_ASSERT(pthread_create(&threads[t], NULL, submit_chain, &subs[t]) == 0);
    }
    for (int t = 0; t < 8; ++t)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < 8; ++t) {
        PD_EXPECT_OK(subs[t].status);
        PD_EXPECT_OK(pd_tensor_wait(ex, &subs[t].result));
        for (int i = 0; i < 32; ++i)
            PD_EXPECT_EQ(at(&subs[t].result, i), (float)(t + CHAIN));
        pd_tensor_release(&subs[t].result);
    }
    PD_ASSERT_OK(pd_executor_synchronize(ex));
    pd_executor_stats st;
    PD_ASSERT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.submitted, 8u * CHAIN);
    PD_EXPECT_EQ(st.done, 8u * CHAIN);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}

PD_TEST(Executor, ASmallDepthMakesSubmittersWaitButLosesNothing)
{
    pd_registry *reg = ops();
    pd_executor_options o = {sizeof o, 1, 2, -1, 0};
    pd_executor *ex = NULL;
    PD_ASSERT_OK(pd_executor_create(reg, &o, &ex));
    submitter s = {ex, 0, 5, PD_TENSOR_UNDEFINED, PD_OK};
    submit_chain(&s);
    PD_EXPECT_OK(s.status);
    PD_EXPECT_OK(pd_tensor_wait(ex, &s.result));
    PD_EXPECT_EQ(at(&s.result, 31), (float)(5 + CHAIN));
    pd_tensor_release(&s.result);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}

/* --- Memory reuse ----------------------------------------------------------------------------
 * A reused call record hands the storages only it still held to the next call's outputs
 * (submit.c): these check that nothing the host holds is ever handed out, and that memory of
 * a poisoned output carries no error into the call that gets it. */

PD_TEST(Executor, ReusedMemoryNeverTakesATensorTheHostStillHolds)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    enum { STEPS = 200, EVERY = 10 };
    pd_tensor y = ramp(64, 1), kept[STEPS / EVERY];
    for (int k = 0; k < STEPS; ++k) {
        pd_tensor next = PD_TENSOR_UNDEFINED;
        PD_ASSERT_OK(affine(ex, 0, &y, 1, 1, &next));
        pd_tensor_release(&y);
        y = next;
        if (k % EVERY == 0)
            pd_tensor_retain(&kept[k / EVERY], &y); /* y[i] = 1 + i + (k + 1) */
        if (k % 7 == 0)
            PD_ASSERT_OK(pd_tensor_wait(ex, &y)); /* lets records retire and be reused */
    }
    PD_ASSERT_OK(pd_executor_synchronize(ex));
    for (int j = 0; j < STEPS / EVERY; ++j) {
        PD_EXPECT_EQ(at(&kept[j], 0), (float)(2 + EVERY * j));
        PD_EXPECT_EQ(at(&kept[j], 63), (float)(65 + EVERY * j));
        pd_tensor_release(&kept[j]);
    }
    PD_EXPECT_EQ(at(&y, 0), (float)(1 + STEPS));
    finish(ex, reg, (pd_tensor *[]){&y}, 1);
}

PD_TEST(Executor, MemoryOfAReleasedPoisonedOutputServesLaterCallsCleanly)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(64, -1), bad = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&bad);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_fail_if_negative", &in, 1, NULL, 0, &o, 1));
    PD_EXPECT_ERROR(pd_tensor_wait(ex, &bad), PD_ERR_OP_FAILED, "boom");
    pd_tensor_release(&bad); /* only the retired call holds its memory now (x: the host too) */
    pd_tensor y = ramp(64, 0);
    for (int k = 0; k < 20; ++k) {
        pd_tensor next = PD_TENSOR_UNDEFINED;
        PD_ASSERT_OK(affine(ex, 0, &y, 1, 1, &next));
        pd_tensor_release(&y);
        y = next;
        PD_ASSERT_OK(pd_tensor_wait(ex, &y)); /* not poisoned, whatever memory it got */
        PD_EXPECT_EQ(at(&y, 63), (float)(63 + k + 1));
    }
    PD_EXPECT_ERROR(pd_executor_synchronize(ex), PD_ERR_OP_FAILED, "ex_fail_if_negative: boom");
    pd_executor_stats st;
    PD_ASSERT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.submitted, 21u);
    PD_EXPECT_EQ(st.failed, 1u);
    finish(ex, reg, (pd_tensor *[]){&x, &y}, 2);
}

/* --- Workspace ------------------------------------------------------------------------------- */

static pd_status workspace_call(pd_executor *ex, const pd_registry *reg, pd_tensor *x,
                                int64_t bytes, pd_tensor *out)
{
    pd_arg in = pd_arg_of(x), o = pd_arg_of(out);
    pd_attr a = pd_attr_of_int64("bytes", bytes);
    if (ex == NULL)
        return pd_run(reg, "ex_workspace", &in, 1, &a, 1, &o, 1);
    return pd_run_async(ex, 0, "ex_workspace", &in, 1, &a, 1, &o, 1);
}

PD_TEST(Workspace, TheSynchronousRunnerGivesTheKernelItsWorkspace)
{
    pd_registry *reg = ops();
    pd_tensor x = ramp(100, 0), y = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(workspace_call(NULL, reg, &x, -1, &y));
    for (int i = 0; i < 100; ++i)
        PD_EXPECT_EQ(at(&y, i), 2.0f * (float)i);
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Workspace, AnAbsurdOrNegativeSizeFailsTheSynchronousCallNamingTheOp)
{
    pd_registry *reg = ops();
    pd_tensor x = ramp(4, 0), y = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(workspace_call(NULL, reg, &x, (int64_t)1 << 60, &y), PD_ERR_OUT_OF_MEMORY,
                    "ex_workspace: cannot allocate the workspace of 1152921504606846976 bytes");
    PD_EXPECT_ERROR(workspace_call(NULL, reg, &x, -5, &y), PD_ERR_OP_FAILED,
                    "ex_workspace: its workspace function returned -5; a byte count must be >= 0");
    PD_EXPECT(!pd_defined(&y));
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&y);
    PD_EXPECT_ERROR(pd_run(reg, "ex_no_workspace", &in, 1, NULL, 0, &o, 1), PD_ERR_OP_FAILED,
                    "ex_no_workspace: pd_workspace: the op declares no workspace function");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Workspace, TheExecutorAllocatesItBeforeTheLaunch)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(100, 1), y = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(workspace_call(ex, reg, &x, -1, &y));
    PD_ASSERT_OK(pd_tensor_wait(ex, &y));
    for (int i = 0; i < 100; ++i)
        PD_EXPECT_EQ(at(&y, i), 2.0f * (float)(i + 1));
    finish(ex, reg, (pd_tensor *[]){&y, &x}, 2);
}

PD_TEST(Workspace, AnAbsurdSizeInTheExecutorSurfacesAtTheNextWait)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = ramp(4, 0), y = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(workspace_call(ex, reg, &x, (int64_t)1 << 60, &y)); /* accepted at the call */
    PD_EXPECT_ERROR(pd_tensor_wait(ex, &y), PD_ERR_OUT_OF_MEMORY,
                    "ex_workspace: cannot allocate the workspace of 1152921504606846976 bytes");
    PD_EXPECT_ERROR(pd_executor_synchronize(ex), PD_ERR_OUT_OF_MEMORY, "workspace");
    finish(ex, reg, (pd_tensor *[]){&y, &x}, 2);
}

/* --- The simulated device ------------------------------------------------------------------- */

PD_TEST(ExecutorSim, LaunchesOnTheDeviceStreamAndAnEventOrdersTheHostRead)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 2);
    pd_tensor x = ramp(8, -4), d = PD_TENSOR_UNDEFINED, h = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_copy_to(&d, &x, sim(0)));
    pd_sim_stats before;
    pd_sim_stats_get(&before);
    pd_tensor cur;
    pd_tensor_retain(&cur, &d);
    for (int k = 0; k < 6; ++k) {
        pd_tensor next = PD_TENSOR_UNDEFINED;
        pd_arg in = pd_arg_of(&cur), o = pd_arg_of(&next);
        PD_ASSERT_OK(pd_run_async(ex, k % 2, "sim_relu", &in, 1, NULL, 0, &o, 1));
        PD_EXPECT(pd_place_equal(next.place, sim(0)));
        pd_tensor_release(&cur);
        cur = next;
    }
    PD_ASSERT_OK(pd_tensor_copy_to(&h, &cur, pd_place_cpu())); /* waits: launch, then event */
    for (int i = 0; i < 8; ++i)
        PD_EXPECT_EQ(at(&h, i), i - 4 > 0 ? (float)(i - 4) : 0.0f);
    pd_sim_stats after;
    pd_sim_stats_get(&after);
    PD_EXPECT_EQ(after.launches, before.launches + 6);
    PD_EXPECT_OK(pd_executor_synchronize(ex));
    finish(ex, reg, (pd_tensor *[]){&x, &d, &h, &cur}, 4);
}

PD_TEST(Executor, AnInputOverTheHostsOwnMemoryMakesTheCallWaitForItsLaunch)
{
    pd_registry *reg = ops();
    pd_executor *ex = executor(reg, 1);
    float values[3] = {1, 2, 3};
    pd_tensor x = PD_TENSOR_UNDEFINED, y = PD_TENSOR_UNDEFINED;
    x.data = values; /* no storage: the executor cannot keep this memory alive */
    x.dtype = PD_FLOAT32;
    x.ndim = 1;
    x.shape[0] = 3;
    x.place = pd_place_cpu();
    PD_ASSERT_OK(affine(ex, 0, &x, 2, 1, &y));
    PD_EXPECT(!pd_tensor_is_pending(&y)); /* complete when the call returned */
    values[0] = 100;                      /* the host may reuse its memory at once */
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_EQ(at(&y, i), 2.0f * (float)(i + 1) + 1.0f);
    finish(ex, reg, (pd_tensor *[]){&y}, 1);
}
