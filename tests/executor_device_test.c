/*
 * executor_device_test.c - the executor on a device: the simulated one, whose streams run
 * their jobs only when something waits for them, so that work left queued stays queued.
 * Each executor stream runs its calls on a device stream of its own, after the work its
 * submitter queued before; a tensor one stream makes is read by another after the device
 * waited for it, even once the launch that made it has ended, and so is a synchronous call;
 * an output the kernel makes comes back
 * from the launch; the device cache reuses no memory under work still queued on another stream
 * (pd_tensor_record_stream, and the executor's own note); pd_executor_synchronize waits for the
 * device work; destroying an executor ends its streams.
 */
#include "executor_helpers.h"

#include <time.h>

/* The simulated device's ops alone. */
static pd_registry *sim_ops(void) { return rt_registry1("ds_sim_ops"); }

/* n float32 values start, start + 1, ... copied to the sim device 0. */
static pd_tensor on_sim(int64_t n, float start)
{
    pd_tensor h = rt_tensor(PD_FLOAT32, 1, &n, NULL), d = PD_TENSOR_UNDEFINED;
    for (int64_t i = 0; i < n; ++i)
        ((float *)h.data)[i] = start + (float)i;
    if (pd_tensor_copy_to(&d, &h, sim(0)) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_tensor_copy_to: %s", pd_last_error());
    pd_tensor_release(&h);
    return d;
}

/* Element i of a device tensor, read through a host copy (which waits for it). */
static double read_at(const pd_tensor *d, int64_t i)
{
    pd_tensor h = PD_TENSOR_UNDEFINED;
    if (pd_tensor_copy_to(&h, d, pd_place_cpu()) != PD_OK) {
        pd_test_fail(__FILE__, __LINE__, "pd_tensor_copy_to: %s", pd_last_error());
        return -1e30;
    }
    double v = rt_at(&h, i);
    pd_tensor_release(&h);
    return v;
}

static pd_status run1(pd_executor *ex, int32_t stream, const char *op, pd_tensor *x, pd_tensor *out)
{
    pd_arg in = pd_arg_of(x), o = pd_arg_of(out);
    return pd_run_async(ex, stream, op, &in, 1, NULL, 0, &o, 1);
}

/* Waits (up to 10 s) until the executor's workers have launched `n` calls: their device work
 * is then queued on the device streams, where the sim keeps it until something waits. */
static bool launched(const pd_executor *ex, uint64_t n)
{
    for (int i = 0; i < 100000; ++i) {
        pd_executor_stats st;
        if (pd_executor_get_stats(ex, &st) == PD_OK && st.done >= n)
            return true;
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    return false;
}

PD_TEST(ExecutorDevice, EachExecutorStreamRunsOnADeviceStreamOfItsOwn)
{
    pd_registry *reg = sim_ops();
    pd_executor *ex = executor(reg, 2);
    pd_tensor x = on_sim(4, 1),
              h[3] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    PD_ASSERT_OK(run1(ex, 0, "sim_stream_of", &x, &h[0]));
    PD_ASSERT_OK(run1(ex, 1, "sim_stream_of", &x, &h[1]));
    PD_ASSERT_OK(run1(ex, 0, "sim_stream_of", &x, &h[2]));
    int64_t first = (int64_t)read_at(&h[0], 0), second = (int64_t)read_at(&h[1], 0);
    int64_t deflt = (int64_t)(intptr_t)pd_stream_handle(pd_stream_current(sim(0)));
    PD_EXPECT(first != 0 && second != 0);
    PD_EXPECT_NE(first, second); /* one stream each */
    PD_EXPECT_NE(first, deflt);  /* not the device's default stream */
    PD_EXPECT_NE(second, deflt);
    PD_EXPECT_EQ((int64_t)read_at(&h[2], 0), first); /* the same one for the next call */
    pd_tensor *all[] = {&h[0], &h[1], &h[2], &x};
    finish(ex, reg, all, 4);
}

/* y = relu(x) on stream 0, then z = relu(y) on stream 1 (once y's launch has ended, with
 * `after_launch`: its device work is then all that is left of it), both left queued on the
 * device; z's read drains stream 1, whose wait for y's event drains stream 0. */
static void relu_on_two_streams(bool after_launch)
{
    pd_registry *reg = sim_ops();
    pd_executor *ex = executor(reg, 2);
    pd_tensor x = on_sim(64, -8), y = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    pd_sim_stats before, after;
    pd_sim_stats_get(&before);
    PD_ASSERT_OK(run1(ex, 0, "sim_relu", &x, &y));
    if (after_launch) {
        PD_ASSERT(launched(ex, 1));
        /* The executor counts a call done just before it finishes the call's completion (the
         * count must not touch a call its waiter may free): allow that moment to pass. */
        for (int i = 0; i < 10000 && pd_tensor_is_pending(&y); ++i) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
        PD_EXPECT(!pd_tensor_is_pending(&y));
    }
    PD_ASSERT_OK(run1(ex, 1, "sim_relu", &y, &z)); /* reads y, made on stream 0 */
    PD_ASSERT(launched(ex, 2));
    pd_sim_stats_get(&after);
    PD_EXPECT(after.pending > before.pending); /* queued on the device, nothing waited yet */
    for (int64_t i = 0; i < 64; ++i)
        PD_EXPECT_EQ(read_at(&z, i), i - 8 > 0 ? (double)(i - 8) : 0.0);
    pd_sim_stats_get(&after);
    PD_EXPECT_EQ(after.launches, before.launches + 2);
    pd_tensor *all[] = {&x, &y, &z};
    finish(ex, reg, all, 3);
}

PD_TEST(ExecutorDevice, ATensorOfOneStreamIsReadByAnotherAfterTheDeviceWaitedForIt)
{
    relu_on_two_streams(false);
}

/* Done completions were once left out of a call's dependencies: the reader's kernel ran on
 * memory nothing had written yet. */
PD_TEST(ExecutorDevice, AnInputWhoseLaunchEndedIsStillWaitedForOnTheDevice)
{
    relu_on_two_streams(true);
}

/* Once the executor has launched every call, a synchronous call (on the host's own stream of
 * the device) reading one of their outputs still waits for that output's device work. (It
 * once looked at its inputs only while calls were in flight, and ran first.) */
PD_TEST(ExecutorDevice, ASynchronousCallWaitsForTheDeviceWorkOfALaunchedCall)
{
    pd_registry *reg = sim_ops();
    pd_executor *ex = executor(reg, 1);
    pd_tensor x = on_sim(64, -8), y = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(ex, 0, "sim_relu", &x, &y));
    PD_ASSERT(launched(ex, 1));
    struct timespec pause = {0, 2000000}; /* the worker's in-flight count follows its batch */
    nanosleep(&pause, NULL);
    pd_arg in = pd_arg_of(&y), out = pd_arg_of(&z);
    PD_ASSERT_OK(pd_run(reg, "sim_relu", &in, 1, NULL, 0, &out, 1));
    for (int64_t i = 0; i < 64; ++i) /* z's read drains the host's stream only */
        PD_EXPECT_EQ(read_at(&z, i), i - 8 > 0 ? (double)(i - 8) : 0.0);
    pd_tensor *all[] = {&x, &y, &z};
    finish(ex, reg, all, 3);
}

/* The host's own work queued on its stream before a call (a synchronous call on the default
 * stream, still queued) comes before the call's launch on the executor stream. */
PD_TEST(ExecutorDevice, ACallRunsAfterTheWorkItsSubmitterQueuedBeforeIt)
{
    pd_registry *reg = sim_ops();
    pd_executor *ex = executor(reg, 2);
    pd_tensor x = on_sim(64, 1), y = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&y);
    PD_ASSERT_OK(pd_run(reg, "sim_relu", &in, 1, NULL, 0, &o, 1)); /* queued on the default */
    PD_ASSERT_OK(run1(ex, 1, "sim_relu", &y, &z));
    for (int64_t i = 0; i < 64; i += 9) /* z's read drains stream 1, which waits for the default */
        PD_EXPECT_EQ(read_at(&z, i), (double)(i + 1));
    pd_tensor *all[] = {&x, &y, &z};
    finish(ex, reg, all, 3);
}

/* An op whose kernel gives its output itself (pd_set_output, no inference) makes it in the
 * launch, on the executor stream's device stream; the caller gets it once launched. */
PD_TEST(ExecutorDevice, AnOutputTheKernelMakesComesBackFromTheLaunch)
{
    pd_registry *reg = sim_ops();
    pd_executor *ex = executor(reg, 2);
    pd_tensor x = on_sim(16, 3), y = on_sim(16, 0), z = PD_TENSOR_UNDEFINED;
    pd_tensor both[2] = {x, y};
    pd_arg in[2] = {pd_arg_of(&both[0]), pd_arg_of(&both[1])}, o = pd_arg_of(&z);
    PD_ASSERT_OK(pd_run_async(ex, 1, "sim_pair", in, 2, NULL, 0, &o, 1));
    PD_EXPECT(pd_place_equal(z.place, sim(0)));
    for (int64_t i = 0; i < 16; i += 5)
        PD_EXPECT_EQ(read_at(&z, i), (double)(i + 3));
    pd_tensor *all[] = {&x, &y, &z};
    finish(ex, reg, all, 3);
}

/* x (made on the default stream) is read by a call on executor stream 1 whose device work is
 * still queued when x dies; a new tensor of x's size made and written on the default stream
 * must not get x's memory, or the queued work would read the new values. x holds 2 MiB, so
 * that the worker drops the call's references right after the launch (records.c), before it
 * launches the next call: once that one is launched, x is dead. */
PD_TEST(ExecutorDevice, MemoryAnotherStreamStillReadsIsNotReusedWhenItsTensorDies)
{
    const int64_t n = 512 * 1024;
    pd_registry *reg = sim_ops();
    pd_executor *ex = executor(reg, 2);
    pd_tensor x = on_sim(n, 1), y = PD_TENSOR_UNDEFINED, w = on_sim(8, 0), v = PD_TENSOR_UNDEFINED;
    const void *x_memory = x.data;
    PD_ASSERT_OK(run1(ex, 1, "sim_relu", &x, &y));
    pd_tensor_release(&x);
    PD_ASSERT_OK(run1(ex, 1, "sim_relu", &w, &v));
    PD_ASSERT(launched(ex, 2));         /* x is dead; relu(x) is still queued on the device */
    pd_tensor fresh = on_sim(n, -1000); /* x's size, on the default stream */
    PD_EXPECT(fresh.data != x_memory);
    for (int64_t i = 0; i < n; i += 50001)
        PD_EXPECT_EQ(read_at(&y, i), (double)(i + 1)); /* relu of x, not of the new values */
    PD_EXPECT_OK(pd_executor_synchronize(ex));
    pd_tensor again = on_sim(n, 0); /* every stream idle: x's memory serves again */
    PD_EXPECT(again.data == x_memory);
    pd_tensor *all[] = {&y, &w, &v, &fresh, &again};
    finish(ex, reg, all, 5);
}

/* The same hazard made by hand: a host runs a call on a stream of its own, notes the stream
 * on the input (pd_tensor_record_stream) and drops it; once that stream is idle the cache
 * hands the memory out again. */
PD_TEST(ExecutorDevice, RecordStreamKeepsMemoryFromTheCacheUntilThatStreamIsIdle)
{
    pd_registry *reg = sim_ops();
    pd_stream_t *mine = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(0), &mine));
    pd_tensor x = on_sim(128, 1), y = PD_TENSOR_UNDEFINED;
    const void *x_memory = x.data;
    PD_ASSERT_OK(pd_stream_set_current(sim(0), mine));
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&y);
    PD_ASSERT_OK(pd_run(reg, "sim_relu", &in, 1, NULL, 0, &o, 1)); /* queued on `mine` */
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    PD_ASSERT_OK(pd_tensor_record_stream(&x, mine));
    pd_tensor_release(&x);
    pd_tensor fresh = on_sim(128, -1000); /* default stream: not x's memory */
    PD_EXPECT(fresh.data != x_memory);
    PD_ASSERT_OK(pd_stream_synchronize(mine)); /* runs relu(x) */
    for (int64_t i = 0; i < 128; i += 31)
        PD_EXPECT_EQ(read_at(&y, i), (double)(i + 1));
    pd_tensor again = on_sim(128, 0); /* `mine` is idle now: x's memory serves again */
    PD_EXPECT(again.data == x_memory);
    pd_tensor *all[] = {&y, &fresh, &again};
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(all[i]);
    PD_EXPECT_OK(pd_stream_destroy(mine));
    pd_registry_destroy(reg);
}

PD_TEST(ExecutorDevice, RecordStreamRefusesWhatIsNotDeviceMemoryOfTheStreamsDevice)
{
    pd_stream_t *mine = NULL, *other = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(0), &mine));
    PD_ASSERT_OK(pd_stream_create(sim(1), &other));
    pd_tensor d = on_sim(4, 0), h = rt_tensor(PD_FLOAT32, 0, NULL, NULL);
    pd_tensor none = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tensor_record_stream(NULL, mine), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_record_stream: t is NULL");
    PD_EXPECT_ERROR(pd_tensor_record_stream(&d, NULL), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_record_stream: stream is NULL");
    PD_EXPECT_ERROR(pd_tensor_record_stream(&none, mine), PD_ERR_INVALID_ARGUMENT,
                    "t has no storage");
    PD_EXPECT_ERROR(pd_tensor_record_stream(&h, mine), PD_ERR_INVALID_ARGUMENT,
                    "host memory, which no stream reuses");
    PD_EXPECT_ERROR(pd_tensor_record_stream(&d, other), PD_ERR_INVALID_ARGUMENT,
                    "record a stream of the tensor's own device");
    PD_EXPECT_OK(pd_tensor_record_stream(&d, mine));
    pd_tensor_release(&d);
    pd_tensor_release(&h);
    PD_EXPECT_OK(pd_stream_destroy(mine));
    PD_EXPECT_OK(pd_stream_destroy(other));
}

PD_TEST(ExecutorDevice, SynchronizeWaitsForTheDeviceWorkAndDestroyEndsTheStreams)
{
    pd_registry *reg = sim_ops();
    pd_tensor x = on_sim(32, -4), y[4];
    pd_sim_stats before, queued, done;
    pd_sim_stats_get(&before);
    pd_executor *ex = executor(reg, 2);
    for (int k = 0; k < 4; ++k) {
        y[k] = (pd_tensor)PD_TENSOR_UNDEFINED;
        PD_ASSERT_OK(run1(ex, k % 2, "sim_relu", &x, &y[k]));
    }
    PD_ASSERT(launched(ex, 4));
    pd_sim_stats_get(&queued);
    PD_EXPECT_EQ(queued.pending, before.pending + 4);           /* four jobs, none run */
    PD_EXPECT_EQ(queued.live_streams, before.live_streams + 2); /* one per executor stream */
    PD_ASSERT_OK(pd_executor_synchronize(ex));
    pd_sim_stats_get(&done);
    PD_EXPECT_EQ(done.pending, before.pending);
    PD_EXPECT_EQ(done.launches, before.launches + 4);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_sim_stats_get(&done);
    PD_EXPECT_EQ(done.live_streams, before.live_streams);
    rt_release_all(y, 4);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}
