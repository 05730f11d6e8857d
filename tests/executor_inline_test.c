/*
 * executor_inline_test.c - the calls the executor runs on their submitting thread
 * (pdext_executor.h, inline_bytes and the rule of cores): which ones, that they are complete
 * when the call returns, counted as run here, and that every other call still goes to the
 * worker in submission order.
 *
 * Nothing here is timed: where a call ran is read from pd_executor_get_counts, and a worker
 * is held busy by a gate op (ex_gated_add1) whose kernel waits until the test sets a flag.
 */
#include "executor_helpers.h"

#include <sched.h>

/* An executor running host calls of inputs up to 2048 bytes inline. */
static pd_executor *inline_executor(const pd_registry *reg)
{
    pd_executor_options o = {sizeof o, 1, 0, 4096, 0};
    pd_executor *ex = NULL;
    if (pd_executor_create(reg, &o, &ex) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_executor_create: %s", pd_last_error());
    return ex;
}

PD_TEST(Executor, InlineASmallCallOnAnIdleStreamIsCompleteWhenItReturns)
{
    pd_registry *reg = ops();
    pd_executor *ex = inline_executor(reg);
    pd_tensor x = ramp(16, -8), y = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(affine(ex, 0, &x, 2, 1, &y));
    PD_EXPECT(!pd_tensor_is_pending(&y)); /* ran on this thread: no wait needed */
    PD_EXPECT_EQ(at(&y, 0), -15.0f);
    PD_EXPECT_EQ(at(&y, 15), 15.0f);
    pd_executor_stats st;
    PD_ASSERT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.submitted, 1u);
    PD_EXPECT_EQ(st.done, 1u);
    finish(ex, reg, (pd_tensor *[]){&x, &y}, 2);
}

PD_TEST(Executor, InlineNeverRunsAnOpThatMayBlock)
{
    pd_registry *reg = ops();
    pd_executor *ex = inline_executor(reg);
    pd_tensor x = ramp(4, 0), g = gate(), y = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(gated(ex, 0, &x, &g, &y)); /* small, idle stream, but PD_OP_MAY_BLOCK */
    PD_EXPECT(pd_tensor_is_pending(&y));    /* on the worker: this thread can open the gate */
    gate_open(&g);
    PD_ASSERT_OK(pd_tensor_wait(ex, &y));
    PD_EXPECT_EQ(at(&y, 3), 4.0f);
    finish(ex, reg, (pd_tensor *[]){&x, &g, &y}, 3);
}

/* The CPUs this process may run on, as the executor counts them. */
static int32_t cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? (int32_t)CPU_COUNT(&set) : 1;
}

/* Where an executor's calls ran so far. */
static pd_executor_counts counts(const pd_executor *ex)
{
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    PD_EXPECT_OK(pd_executor_get_counts(ex, &c));
    return c;
}
/* The calls of an executor run on the submitting thread so far. */
static uint64_t ran_here(const pd_executor *ex) { return counts(ex).ran_here; }
/* The calls of an executor handed to a worker so far. */
static uint64_t handed_over(const pd_executor *ex) { return counts(ex).handed_over; }

/* A call of any size runs on the caller when every other CPU runs another stream's worker;
 * with fewer streams than CPUs (or one CPU) it goes to its worker. */
PD_TEST(Executor, ACallOfAnySizeRunsOnTheCallerWhileOtherStreamsTakeEveryOtherCpu)
{
    pd_registry *reg = ops();
    int32_t n = cpus();
    bool caller_runs = n >= 2 && n <= 64;
    int32_t streams = caller_runs ? n : 2;
    pd_executor_options o = {sizeof o, streams, 0, 4096, 0}; /* inline up to 2 KiB of inputs */
    pd_executor *ex = NULL;
    PD_ASSERT_OK(pd_executor_create(reg, &o, &ex));
    pd_tensor big = ramp(2048, 0), y = PD_TENSOR_UNDEFINED; /* 8 KiB: over the size */
    PD_ASSERT_OK(affine(ex, 0, &big, 2, 0, &y));
    /* Where a call went is read from the counts, not from whether its output is still
     * pending: a worker may finish it before the submitter looks (seen on a loaded CI). */
    PD_EXPECT_EQ(ran_here(ex), 0u);            /* the other streams idle: to the worker */
    PD_ASSERT_OK(pd_executor_synchronize(ex)); /* stream 0 idle again, its counters too */
    pd_tensor_release(&y);
    pd_tensor x = ramp(4, 0), g = gate(), held[64];
    for (int32_t s = 1; s < streams; ++s) { /* every other stream's worker held by a gate */
        held[s] = (pd_tensor)PD_TENSOR_UNDEFINED;
        PD_ASSERT_OK(gated(ex, s, &x, &g, &held[s]));
    }
    PD_ASSERT_OK(affine(ex, 0, &big, 2, 0, &y));
    PD_EXPECT_EQ(ran_here(ex), caller_runs ? 1u : 0u);
    gate_open(&g);
    PD_ASSERT_OK(pd_executor_synchronize(ex));
    PD_EXPECT_EQ(at(&y, 2047), 4094.0f);
    for (int32_t s = 1; s < streams; ++s) {
        PD_EXPECT_EQ(at(&held[s], 3), 4.0f);
        pd_tensor_release(&held[s]);
    }
    finish(ex, reg, (pd_tensor *[]){&big, &y, &x, &g}, 4);
}

/* pd_op_run_async tries the commonest small call (one tensor an arg, fresh outputs) before
 * its other checks; every other small call must be judged the same by the full path, and
 * the size rule must sum the inputs either way. */
PD_TEST(Executor, InlineASmallCallRunsHereWhateverItsArgsLookLike)
{
    pd_registry *reg = ops();
    pd_executor *ex = inline_executor(reg); /* inputs up to 2048 bytes run here */
    pd_tensor x = ramp(4, 1), y = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(affine(ex, 0, &x, 2, 0, &y)); /* the commonest call */
    PD_EXPECT_EQ(ran_here(ex), 1u);
    pd_arg two[2] = {pd_arg_of(&x), pd_arg_of(&y)}, o = pd_arg_of(&z);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_add", two, 2, NULL, 0, &o, 1)); /* two inputs */
    PD_EXPECT_EQ(ran_here(ex), 2u);
    PD_EXPECT_EQ(at(&z, 3), 12.0f);
    float values[3] = {1, 2, 3};
    pd_tensor lent = PD_TENSOR_UNDEFINED, w = PD_TENSOR_UNDEFINED, parts[8];
    lent.data = values; /* the host's own memory, no storage: the full path sizes it */
    lent.dtype = PD_FLOAT32;
    lent.ndim = 1;
    lent.shape[0] = 3;
    lent.place = pd_place_cpu();
    PD_ASSERT_OK(affine(ex, 0, &lent, 1, 1, &w));
    PD_EXPECT_EQ(ran_here(ex), 3u);
    PD_EXPECT_EQ(at(&w, 2), 4.0f);
    for (int k = 0; k < 8; ++k)
        parts[k] = (pd_tensor)PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&w), vec = pd_arg_named("Out", parts, 8); /* w[0] = 2 parts */
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_split_by_value", &in, 1, NULL, 0, &vec, 1));
    PD_EXPECT_EQ(ran_here(ex), 4u);
    PD_ASSERT_EQ(vec.count, 2);
    PD_EXPECT_EQ(at(&parts[1], 0), 1.0f);
    PD_EXPECT_EQ(handed_over(ex), 0u);
    /* Two inputs of 1.5 KiB each: each under the size, their sum over it. */
    pd_tensor a = ramp(384, 0), b = ramp(384, 1), sum = PD_TENSOR_UNDEFINED;
    pd_arg ab[2] = {pd_arg_of(&a), pd_arg_of(&b)}, os = pd_arg_of(&sum);
    PD_ASSERT_OK(pd_run_async(ex, 0, "ex_add", ab, 2, NULL, 0, &os, 1));
    PD_EXPECT_EQ(handed_over(ex), 1u);
    PD_EXPECT_EQ(ran_here(ex), 4u);
    PD_ASSERT_OK(pd_tensor_wait(ex, &sum));
    PD_EXPECT_EQ(at(&sum, 383), 767.0f);
    finish(ex, reg, (pd_tensor *[]){&x, &y, &z, &w, &parts[0], &parts[1], &a, &b, &sum}, 9);
}

PD_TEST(Executor, InlineACallOverTheSizeOrBehindQueuedWorkGoesToTheWorkerInOrder)
{
    pd_registry *reg = ops();
    pd_executor *ex = inline_executor(reg);
    pd_tensor big = ramp(2048, 0), g = gate(), big_out = PD_TENSOR_UNDEFINED; /* 8 KiB */
    PD_ASSERT_OK(gated(ex, 0, &big, &g, &big_out)); /* over the size: the worker waits */
    PD_EXPECT(pd_tensor_is_pending(&big_out));
    pd_tensor x = ramp(4, 0), y = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(affine(ex, 0, &x, 2, 0, &y)); /* small, but the stream is busy: queued */
    PD_EXPECT(pd_tensor_is_pending(&y));
    gate_open(&g);
    PD_ASSERT_OK(pd_tensor_wait(ex, &y));
    PD_EXPECT_EQ(at(&y, 3), 6.0f);
    PD_EXPECT(!pd_tensor_is_pending(&big_out)); /* ran before y: submission order */
    PD_EXPECT_EQ(at(&big_out, 2047), 2048.0f);
    PD_ASSERT_OK(pd_executor_synchronize(ex));
    finish(ex, reg, (pd_tensor *[]){&big, &g, &big_out, &x, &y}, 5);
}

PD_TEST(Executor, InlineAKernelErrorOfAnInlineCallIsTheCallsOwn)
{
    pd_registry *reg = ops();
    pd_executor *ex = inline_executor(reg);
    pd_tensor x = ramp(2, -1), y = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&y);
    PD_EXPECT_ERROR(pd_run_async(ex, 0, "ex_fail_if_negative", &in, 1, NULL, 0, &o, 1),
                    PD_ERR_OP_FAILED, "ex_fail_if_negative: boom: x[0] is -1");
    PD_EXPECT(!pd_defined(&y));                /* nothing written, as for any failed call */
    PD_EXPECT_OK(pd_executor_synchronize(ex)); /* reported once, at the call */
    pd_executor_stats st;
    PD_ASSERT_OK(pd_executor_get_stats(ex, &st));
    PD_EXPECT_EQ(st.submitted, 0u);
    finish(ex, reg, (pd_tensor *[]){&x}, 1);
}
