/*
 * device_sim_test.c - the device path on the simulated device (pd_sim_device.h): tensors on a
 * device place, copies in every direction, fills, casts and contiguous copies of device
 * tensors, streams and events in order, op calls on the device's stream, and the device
 * table's registration rules. The sim runs stream work only when it is waited for, so a
 * missing synchronize shows up here as a wrong value, every time.
 */
#include "pd_sim_device.h"
#include "runner_helpers.h"

#include <stdlib.h>

static pd_place sim(int32_t id)
{
    int32_t type = 0;
    if (pd_sim_device_install(&type) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_sim_device_install: %s", pd_last_error());
    return pd_place_make(type, id);
}

static pd_sim_stats stats(void)
{
    pd_sim_stats s;
    pd_sim_stats_get(&s);
    return s;
}

/* A CPU float32 tensor of n values: i - n/2 (negatives, zero, positives). */
static pd_tensor iota(int64_t n)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    if (pd_tensor_empty(&t, PD_FLOAT32, pd_place_cpu(), 1, &n) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "%s", pd_last_error());
    for (int64_t i = 0; i < n; ++i)
        ((float *)t.data)[i] = (float)(i - n / 2);
    return t;
}

/* t's values as a new CPU tensor (through the device table for device tensors). */
static pd_tensor on_cpu(const pd_tensor *t)
{
    pd_tensor h = PD_TENSOR_UNDEFINED;
    if (pd_tensor_copy_to(&h, t, pd_place_cpu()) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "%s", pd_last_error());
    return h;
}

/* --- Tensors and copies -------------------------------------------------------------------- */

PD_TEST(DeviceSim, TensorsOnTheSimPlaceAreSimMemoryAndFreedOnRelease)
{
    pd_place p = sim(0);
    pd_sim_stats before = stats();
    pd_tensor t;
    const int64_t shape[2] = {3, 5};
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_FLOAT32, p, 2, shape));
    PD_EXPECT(pd_place_equal(t.place, p));
    PD_EXPECT_STREQ(pd_place_type_name(&t.place), "sim");
    PD_EXPECT_EQ(stats().live_allocs, before.live_allocs + 1);
    PD_EXPECT_EQ(stats().live_bytes, before.live_bytes + 512); /* 60 bytes, rounded by the cache */
    /* The data pointer is the device's: not host memory the CPU may read. */
    PD_EXPECT(pd_sim_host_address(t.data) != NULL);
    PD_EXPECT(pd_sim_host_address(t.data) != t.data);
    pd_tensor_release(&t);
    /* The block waits in the device cache; releasing the cache gives it back to the sim. */
    PD_EXPECT_EQ(stats().live_allocs, before.live_allocs + 1);
    PD_EXPECT_OK(pd_device_cache_release(p));
    PD_EXPECT_EQ(stats().live_allocs, before.live_allocs);
    PD_EXPECT_EQ(stats().frees, before.frees + 1);
}

PD_TEST(DeviceSim, CopyToRunsEveryDirectionThroughTheTable)
{
    pd_sim_stats before = stats();
    pd_tensor x = iota(10), d0, d0b, d1, back;
    PD_ASSERT_OK(pd_tensor_copy_to(&d0, &x, sim(0)));   /* host -> device */
    PD_ASSERT_OK(pd_tensor_copy_to(&d0b, &d0, sim(0))); /* device -> same device */
    PD_ASSERT_OK(pd_tensor_copy_to(&d1, &d0b, sim(1))); /* device -> another device */
    back = on_cpu(&d1);                                 /* device -> host */
    for (int i = 0; i < 10; ++i)
        PD_EXPECT_EQ(((float *)back.data)[i], (float)(i - 5));
    pd_sim_stats after = stats();
    PD_EXPECT_EQ(after.copies_h2d - before.copies_h2d, 1);
    PD_EXPECT_EQ(after.copies_d2d - before.copies_d2d, 2);
    PD_EXPECT_EQ(after.copies_d2h - before.copies_d2h, 1);
    PD_EXPECT(pd_place_equal(d1.place, sim(1)));
    pd_tensor *all[] = {&x, &d0, &d0b, &d1, &back};
    for (int i = 0; i < 5; ++i)
        pd_tensor_release(all[i]);
    PD_EXPECT_OK(pd_device_cache_release(sim(0)));
    PD_EXPECT_OK(pd_device_cache_release(sim(1)));
    PD_EXPECT_EQ(stats().live_allocs, before.live_allocs);
}

PD_TEST(DeviceSim, FullZerosAndOnesFillDeviceMemory)
{
    pd_sim_stats before = stats();
    const int64_t n = 7;
    pd_tensor z, o, f, hz, ho, hf;
    PD_ASSERT_OK(pd_tensor_zeros(&z, PD_INT32, sim(0), 1, &n));
    PD_ASSERT_OK(pd_tensor_ones(&o, PD_FLOAT32, sim(0), 1, &n));
    PD_ASSERT_OK(pd_tensor_full(&f, PD_FLOAT64, sim(1), 1, &n, 2.5));
    hz = on_cpu(&z);
    ho = on_cpu(&o);
    hf = on_cpu(&f);
    for (int i = 0; i < n; ++i) {
        PD_EXPECT_EQ(((int32_t *)hz.data)[i], 0);
        PD_EXPECT_EQ(((float *)ho.data)[i], 1.0f);
        PD_EXPECT_EQ(((double *)hf.data)[i], 2.5);
    }
    /* Zeros are one device memset; other values are filled on the host and copied. */
    PD_EXPECT_EQ(stats().memsets - before.memsets, 1);
    PD_EXPECT_EQ(stats().copies_h2d - before.copies_h2d, 2);
    pd_tensor *all[] = {&z, &o, &f, &hz, &ho, &hf};
    for (int i = 0; i < 6; ++i)
        pd_tensor_release(all[i]);
}

PD_TEST(DeviceSim, CastAndContiguousOfDeviceTensorsStayOnTheDevice)
{
    pd_tensor x = iota(6), d, t, c, cast, hc, hcast;
    const int64_t shape[2] = {2, 3};
    pd_tensor x23;
    PD_ASSERT_OK(pd_tensor_reshape(&x23, &x, 2, shape));
    PD_ASSERT_OK(pd_tensor_copy_to(&d, &x23, sim(0)));
    const int32_t dims[2] = {1, 0};
    PD_ASSERT_OK(pd_tensor_permute(&t, &d, 2, dims)); /* a strided view on the device */
    PD_EXPECT(!pd_is_contiguous(&t));
    PD_ASSERT_OK(pd_tensor_contiguous(&c, &t));
    PD_ASSERT_OK(pd_tensor_cast(&cast, &t, PD_INT64));
    PD_EXPECT(pd_place_equal(c.place, sim(0)));
    PD_EXPECT(pd_place_equal(cast.place, sim(0)));
    hc = on_cpu(&c);
    hcast = on_cpu(&cast);
    /* transpose of [[-3,-2,-1],[0,1,2]] */
    const float want[6] = {-3, 0, -2, 1, -1, 2};
    for (int i = 0; i < 6; ++i) {
        PD_EXPECT_EQ(((float *)hc.data)[i], want[i]);
        PD_EXPECT_EQ(((int64_t *)hcast.data)[i], (int64_t)want[i]);
    }
    pd_tensor *all[] = {&x, &x23, &d, &t, &c, &cast, &hc, &hcast};
    for (int i = 0; i < 8; ++i)
        pd_tensor_release(all[i]);
}

PD_TEST(DeviceSim, DeviceOutOfMemoryIsAClearErrorAndLeaksNothing)
{
    pd_place p = sim(0);
    pd_sim_stats before = stats();
    pd_sim_set_capacity((size_t)1 << 20);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t n = 1 << 20; /* 4 MiB of float32 */
    PD_EXPECT_ERROR(pd_tensor_zeros(&t, PD_FLOAT32, p, 1, &n), PD_ERR_OUT_OF_MEMORY,
                    "pd_tensor_zeros: out of memory allocating 4194304 bytes on sim:0");
    pd_sim_set_capacity(0);
    PD_EXPECT(!pd_defined(&t));
    PD_EXPECT_OK(pd_device_cache_release(p));
    PD_EXPECT(stats().live_allocs <= before.live_allocs);
}

PD_TEST(DeviceSim, DeviceIdOutOfRangeIsRefusedNamingTheCount)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t n = 2;
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, sim(5), 1, &n), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_empty: place sim:5: device id 5 is out of range; device type "
                    "'sim' has 2 devices");
    PD_EXPECT(!pd_defined(&t));
}

PD_TEST(DeviceSim, WrappedDeviceBufferCallsItsDeleterOnce)
{
    pd_tensor d, w, h;
    pd_tensor x = iota(4);
    PD_ASSERT_OK(pd_tensor_copy_to(&d, &x, sim(0)));
    PD_ASSERT_OK(pd_tensor_from_buffer(&w, d.data, PD_FLOAT32, sim(0), 1, x.shape, NULL, NULL));
    h = on_cpu(&w);
    PD_EXPECT_EQ(((float *)h.data)[3], 1.0f);
    pd_tensor_release(&w);
    pd_tensor_release(&h);
    pd_tensor_release(&d);
    pd_tensor_release(&x);
}

/* --- The device cache --------------------------------------------------------------------- */

static void nothing(void *arg) { (void)arg; }

PD_TEST(DeviceCache, AFreedBlockIsReusedOnTheSameStreamWithoutAllocating)
{
    pd_place p = sim(0);
    PD_ASSERT_OK(pd_device_cache_release(p));
    const int64_t n = 1000;
    pd_tensor a, b;
    PD_ASSERT_OK(pd_tensor_empty(&a, PD_FLOAT32, p, 1, &n));
    void *first = a.data;
    pd_tensor_release(&a);
    pd_sim_stats before = stats();
    PD_ASSERT_OK(pd_tensor_empty(&b, PD_FLOAT32, p, 1, &n));
    PD_EXPECT_EQ(stats().allocs, before.allocs);
    PD_EXPECT(b.data == first);
    pd_tensor_release(&b);
    PD_EXPECT_OK(pd_device_cache_release(p));
}

PD_TEST(DeviceCache, ABlockOfABusyStreamWaitsUntilThatStreamIsIdle)
{
    pd_place p = sim(0);
    PD_ASSERT_OK(pd_device_cache_release(p));
    pd_stream_t *a = NULL, *b = NULL;
    PD_ASSERT_OK(pd_stream_create(p, &a));
    PD_ASSERT_OK(pd_stream_create(p, &b));
    const int64_t n = 256;
    pd_tensor t, u, w;
    PD_ASSERT_OK(pd_stream_set_current(p, a));
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_FLOAT32, p, 1, &n));
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(a), nothing, NULL)); /* a is busy */
    pd_tensor_release(&t);
    PD_ASSERT_OK(pd_stream_set_current(p, b));
    pd_sim_stats before = stats();
    PD_ASSERT_OK(pd_tensor_empty(&u, PD_FLOAT32, p, 1, &n)); /* a new block */
    PD_EXPECT_EQ(stats().allocs, before.allocs + 1);
    PD_ASSERT_OK(pd_stream_synchronize(a));
    PD_ASSERT_OK(pd_tensor_empty(&w, PD_FLOAT32, p, 1, &n)); /* a's block, now idle */
    PD_EXPECT_EQ(stats().allocs, before.allocs + 1);
    pd_tensor_release(&u);
    pd_tensor_release(&w);
    PD_ASSERT_OK(pd_stream_set_current(p, NULL));
    PD_EXPECT_OK(pd_stream_destroy(a));
    PD_EXPECT_OK(pd_stream_destroy(b));
    PD_EXPECT_OK(pd_device_cache_release(p));
}

PD_TEST(DeviceCache, BlocksOfADestroyedStreamAreIdleForEveryStream)
{
    pd_place p = sim(0);
    PD_ASSERT_OK(pd_device_cache_release(p));
    pd_stream_t *a = NULL;
    PD_ASSERT_OK(pd_stream_create(p, &a));
    const int64_t n = 300;
    pd_tensor cached, live, again1, again2;
    PD_ASSERT_OK(pd_stream_set_current(p, a));
    PD_ASSERT_OK(pd_tensor_empty(&cached, PD_FLOAT32, p, 1, &n));
    PD_ASSERT_OK(pd_tensor_empty(&live, PD_FLOAT32, p, 1, &n));
    pd_tensor_release(&cached); /* cached before the stream goes */
    PD_ASSERT_OK(pd_stream_set_current(p, NULL));
    PD_ASSERT_OK(pd_stream_destroy(a));
    pd_tensor_release(&live); /* cached after it went */
    pd_sim_stats before = stats();
    /* On the default stream: both blocks are reused, and no destroyed stream is asked. */
    PD_ASSERT_OK(pd_tensor_empty(&again1, PD_FLOAT32, p, 1, &n));
    PD_ASSERT_OK(pd_tensor_empty(&again2, PD_FLOAT32, p, 1, &n));
    PD_EXPECT_EQ(stats().allocs, before.allocs);
    pd_tensor_release(&again1);
    pd_tensor_release(&again2);
    PD_EXPECT_OK(pd_device_cache_release(p));
}

PD_TEST(DeviceCache, OutOfMemoryReleasesTheCacheAndTriesOnceMore)
{
    pd_place p = sim(1);
    PD_ASSERT_OK(pd_device_cache_release(p));
    pd_sim_stats before = stats();
    pd_sim_set_capacity((size_t)1 << 20);
    const int64_t small = 150000, big = 200000; /* 600 kB, then 800 kB: not both in 1 MiB */
    pd_tensor a, b;
    PD_ASSERT_OK(pd_tensor_empty(&a, PD_FLOAT32, p, 1, &small));
    pd_tensor_release(&a); /* cached: the sim still holds it */
    PD_EXPECT_EQ(stats().live_allocs, before.live_allocs + 1);
    PD_EXPECT_OK(pd_tensor_empty(&b, PD_FLOAT32, p, 1, &big));
    PD_EXPECT_EQ(stats().frees, before.frees + 1); /* the cached block went back first */
    pd_tensor_release(&b);
    pd_sim_set_capacity(0);
    PD_EXPECT_OK(pd_device_cache_release(p));
    PD_EXPECT_EQ(stats().live_allocs, before.live_allocs);
}

/* --- Streams and events -------------------------------------------------------------------- */

static void set_one(void *arg) { *(int *)arg = 1; }
static void add_one(void *arg) { *(int *)arg += 1; }

typedef struct copy_int {
    const int *from;
    int *to;
} copy_int;
static void copy_value(void *arg)
{
    copy_int *c = arg;
    *c->to = *c->from;
}

PD_TEST(DeviceStream, WorkRunsInOrderOnlyOnceTheStreamIsSynchronized)
{
    pd_stream_t *s = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(0), &s));
    int value = 0;
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(s), set_one, &value));
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(s), add_one, &value));
    bool done = true;
    PD_ASSERT_OK(pd_stream_query(s, &done));
    PD_EXPECT(!done);
    PD_EXPECT_EQ(value, 0); /* nothing ran: a missing synchronize reads the old value */
    PD_ASSERT_OK(pd_stream_synchronize(s));
    PD_EXPECT_EQ(value, 2); /* set, then add: in order */
    PD_ASSERT_OK(pd_stream_query(s, &done));
    PD_EXPECT(done);
    PD_EXPECT_OK(pd_stream_destroy(s));
}

/* A host's own stream (here one pdext made, standing for a cudaStream_t of the host's):
 * wrapped, it is the stream calls run on once current; destroying the wrapper waits for its
 * work and leaves the host's stream usable. */
PD_TEST(DeviceStream, WrappedHostStreamRunsWorkAndStaysTheHosts)
{
    pd_stream_t *own = NULL, *w = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(0), &own));
    PD_ASSERT_OK(pd_stream_wrap(sim(0), pd_stream_handle(own), &w));
    PD_EXPECT(pd_stream_handle(w) == pd_stream_handle(own));
    PD_EXPECT(pd_place_equal(pd_stream_place(w), sim(0)));
    PD_ASSERT_OK(pd_stream_set_current(sim(0), w));
    PD_EXPECT(pd_stream_current(sim(0)) == w);
    int value = 0;
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(pd_stream_current(sim(0))), set_one, &value));
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(w), add_one, &value));
    PD_EXPECT_ERROR(pd_stream_destroy(w), PD_ERR_INVALID_ARGUMENT, "current stream");
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    PD_EXPECT_EQ(value, 0);
    PD_EXPECT_OK(pd_stream_destroy(w)); /* waits for the work, keeps the handle */
    PD_EXPECT_EQ(value, 2);
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(own), add_one, &value));
    PD_ASSERT_OK(pd_stream_synchronize(own));
    PD_EXPECT_EQ(value, 3);
    PD_EXPECT_OK(pd_stream_destroy(own));
    /* What cannot be wrapped. */
    PD_EXPECT_ERROR(pd_stream_wrap(sim(0), NULL, &w), PD_ERR_INVALID_ARGUMENT,
                    "pd_stream_wrap: handle");
    PD_EXPECT_ERROR(pd_stream_wrap(pd_place_cpu(), (pd_device_stream)&value, &w),
                    PD_ERR_INVALID_ARGUMENT, "host memory, which has no streams");
}

PD_TEST(DeviceStream, EventSynchronizeWaitsForTheWorkBeforeTheRecordOnly)
{
    pd_stream_t *s = NULL;
    pd_event_t *e = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(0), &s));
    PD_ASSERT_OK(pd_event_create(sim(0), &e));
    int count = 0;
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(s), add_one, &count));
    PD_ASSERT_OK(pd_event_record(e, s));
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(s), add_one, &count));
    PD_ASSERT_OK(pd_event_synchronize(e));
    PD_EXPECT_EQ(count, 1);
    PD_ASSERT_OK(pd_stream_synchronize(s));
    PD_EXPECT_EQ(count, 2);
    PD_EXPECT_OK(pd_event_destroy(e));
    PD_EXPECT_OK(pd_stream_destroy(s));
}

PD_TEST(DeviceStream, EventWaitOrdersAStreamAfterAnother)
{
    pd_stream_t *a = NULL, *b = NULL;
    pd_event_t *e = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(0), &a));
    PD_ASSERT_OK(pd_stream_create(sim(0), &b));
    PD_ASSERT_OK(pd_event_create(sim(0), &e));
    int produced = 0, consumed = -1;
    copy_int c = {&produced, &consumed};
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(a), set_one, &produced));
    PD_ASSERT_OK(pd_event_record(e, a));
    PD_ASSERT_OK(pd_event_wait(b, e));
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(b), copy_value, &c));
    /* Only b is synchronized: its wait runs a's work first. */
    PD_ASSERT_OK(pd_stream_synchronize(b));
    PD_EXPECT_EQ(consumed, 1);
    PD_EXPECT_OK(pd_event_destroy(e));
    PD_EXPECT_OK(pd_stream_destroy(a));
    PD_EXPECT_OK(pd_stream_destroy(b));
}

PD_TEST(DeviceStream, AStreamWaitingForAnEventOfItsOwnRunsInOrderWithoutBlocking)
{
    pd_stream_t *s = NULL;
    pd_event_t *e = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(0), &s));
    PD_ASSERT_OK(pd_event_create(sim(0), &e));
    int count = 0;
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(s), add_one, &count));
    PD_ASSERT_OK(pd_event_record(e, s));
    PD_ASSERT_OK(pd_event_wait(s, e)); /* met by the stream's own order */
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(s), add_one, &count));
    PD_ASSERT_OK(pd_stream_synchronize(s)); /* ran the wait job on s's own drain */
    PD_EXPECT_EQ(count, 2);
    PD_EXPECT_OK(pd_event_destroy(e));
    PD_EXPECT_OK(pd_stream_destroy(s));
}

PD_TEST(DeviceStream, TwoStreamsWaitingForEachOthersEarlierWorkBothFinish)
{
    pd_stream_t *a = NULL, *b = NULL;
    pd_event_t *ea = NULL, *eb = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(0), &a));
    PD_ASSERT_OK(pd_stream_create(sim(0), &b));
    PD_ASSERT_OK(pd_event_create(sim(0), &ea));
    PD_ASSERT_OK(pd_event_create(sim(0), &eb));
    int x = 0, y = 0;
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(a), add_one, &x));
    PD_ASSERT_OK(pd_event_record(ea, a)); /* a: x+1 | */
    PD_ASSERT_OK(pd_event_wait(b, ea));   /* b: wait(a's x+1) | */
    PD_ASSERT_OK(pd_event_record(eb, b));
    PD_ASSERT_OK(pd_event_wait(a, eb)); /* a: wait(b's wait), met while a drains */
    PD_ASSERT_OK(pd_sim_launch(pd_stream_handle(b), add_one, &y));
    PD_ASSERT_OK(pd_stream_synchronize(a));
    PD_ASSERT_OK(pd_stream_synchronize(b));
    PD_EXPECT_EQ(x, 1);
    PD_EXPECT_EQ(y, 1);
    PD_EXPECT_OK(pd_event_destroy(ea));
    PD_EXPECT_OK(pd_event_destroy(eb));
    PD_EXPECT_OK(pd_stream_destroy(a));
    PD_EXPECT_OK(pd_stream_destroy(b));
}

PD_TEST(DeviceStream, StreamOfAnotherDeviceIsRefused)
{
    pd_stream_t *s1 = NULL;
    pd_event_t *e0 = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(1), &s1));
    PD_ASSERT_OK(pd_event_create(sim(0), &e0));
    PD_EXPECT_ERROR(pd_stream_set_current(sim(0), s1), PD_ERR_INVALID_ARGUMENT,
                    "pd_stream_set_current: the stream belongs to sim:1, not to sim:0");
    PD_EXPECT_ERROR(pd_event_record(e0, s1), PD_ERR_INVALID_ARGUMENT,
                    "pd_event_record: the event belongs to sim:0 but the stream to sim:1");
    PD_EXPECT_OK(pd_event_destroy(e0));
    PD_EXPECT_OK(pd_stream_destroy(s1));
}

PD_TEST(DeviceStream, HostMemoryHasNoStreams)
{
    pd_stream_t *s = NULL;
    PD_EXPECT_ERROR(pd_stream_create(pd_place_cpu(), &s), PD_ERR_INVALID_ARGUMENT,
                    "pd_stream_create: place cpu is host memory, which has no streams");
    PD_EXPECT(pd_stream_current(pd_place_cpu()) == NULL);
}

PD_TEST(DeviceStream, CopiesRunOnTheCurrentStreamAndAreDoneWhenTheyReturn)
{
    pd_stream_t *s = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(0), &s));
    PD_ASSERT_OK(pd_stream_set_current(sim(0), s));
    PD_EXPECT(pd_stream_current(sim(0)) == s);
    pd_tensor x = iota(5), d, h;
    PD_ASSERT_OK(pd_tensor_copy_to(&d, &x, sim(0)));
    h = on_cpu(&d);
    PD_EXPECT_EQ(((float *)h.data)[4], 2.0f);
    bool done = false;
    PD_ASSERT_OK(pd_stream_query(s, &done));
    PD_EXPECT(done);
    PD_EXPECT_ERROR(pd_stream_destroy(s), PD_ERR_INVALID_ARGUMENT, "current stream");
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    PD_EXPECT(pd_stream_current(sim(0)) != s);
    PD_EXPECT_OK(pd_stream_destroy(s));
    pd_tensor_release(&x);
    pd_tensor_release(&d);
    pd_tensor_release(&h);
}

/* --- Op calls on the device ---------------------------------------------------------------- */

PD_TEST(DeviceOp, RunsOnTheInputsDeviceWithItsOutputThereAndOnTheCallsStream)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota(8), d, out = PD_TENSOR_UNDEFINED, h;
    PD_ASSERT_OK(pd_tensor_copy_to(&d, &x, sim(1)));
    pd_stream_t *s = NULL;
    PD_ASSERT_OK(pd_stream_create(sim(1), &s));
    PD_ASSERT_OK(pd_stream_set_current(sim(1), s));
    pd_sim_stats before = stats();
    pd_arg in = pd_arg_of(&d), o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "sim_relu", &in, 1, NULL, 0, &o, 1));
    PD_EXPECT(pd_place_equal(out.place, sim(1)));
    /* The kernel enqueued its work on the current stream; nothing ran yet. */
    PD_EXPECT_EQ(stats().launches, before.launches);
    bool done = true;
    PD_ASSERT_OK(pd_stream_query(s, &done));
    PD_EXPECT(!done);
    PD_ASSERT_OK(pd_stream_synchronize(s));
    PD_EXPECT_EQ(stats().launches, before.launches + 1);
    h = on_cpu(&out);
    for (int i = 0; i < 8; ++i)
        PD_EXPECT_EQ(((float *)h.data)[i], i - 4 > 0 ? (float)(i - 4) : 0.0f);
    PD_ASSERT_OK(pd_stream_set_current(sim(1), NULL));
    PD_EXPECT_OK(pd_stream_destroy(s));
    pd_tensor *all[] = {&x, &d, &out, &h};
    for (int i = 0; i < 4; ++i)
        pd_tensor_release(all[i]);
    pd_registry_destroy(reg);
}

PD_TEST(DeviceOp, ReadingTheOutputOnTheHostAfterTheCallSeesTheKernelsWork)
{
    /* No stream of the host's own: the call runs on the device's default stream, which the
     * copy to the host synchronizes. */
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota(4), d, out = PD_TENSOR_UNDEFINED, h;
    PD_ASSERT_OK(pd_tensor_copy_to(&d, &x, sim(0)));
    pd_arg in = pd_arg_of(&d), o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "sim_relu", &in, 1, NULL, 0, &o, 1));
    h = on_cpu(&out);
    const float want[4] = {0, 0, 0, 1};
    for (int i = 0; i < 4; ++i)
        PD_EXPECT_EQ(((float *)h.data)[i], want[i]);
    pd_tensor *all[] = {&x, &d, &out, &h};
    for (int i = 0; i < 4; ++i)
        pd_tensor_release(all[i]);
    pd_registry_destroy(reg);
}

PD_TEST(DeviceOp, ACpuOnlyKernelRefusesASimTensorByItsPlaceCheck)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota(4), d, out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_copy_to(&d, &x, sim(0)));
    pd_arg in = pd_arg_of(&d), o = pd_arg_of(&out);
    PD_EXPECT_ERROR(pd_run(reg, "sim_cpu_only", &in, 1, NULL, 0, &o, 1), PD_ERR_OP_FAILED,
                    "sim_cpu_only: x must be a CPU Tensor.");
    PD_EXPECT(!pd_defined(&out));
    pd_tensor_release(&x);
    pd_tensor_release(&d);
    pd_registry_destroy(reg);
}

PD_TEST(DeviceOp, StridedDeviceInputIsMadeContiguousOnTheDevice)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota(6), d, v, out = PD_TENSOR_UNDEFINED, h;
    PD_ASSERT_OK(pd_tensor_copy_to(&d, &x, sim(0)));
    PD_ASSERT_OK(pd_tensor_slice_step(&v, &d, 0, 0, 6, 2)); /* -3, -1, 1 */
    pd_arg in = pd_arg_of(&v), o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "sim_relu", &in, 1, NULL, 0, &o, 1));
    h = on_cpu(&out);
    PD_EXPECT_EQ(((float *)h.data)[0], 0.0f);
    PD_EXPECT_EQ(((float *)h.data)[2], 1.0f);
    pd_tensor *all[] = {&x, &d, &v, &out, &h};
    for (int i = 0; i < 5; ++i)
        pd_tensor_release(all[i]);
    pd_registry_destroy(reg);
}

PD_TEST(DeviceOp, InputsOnTwoDevicesAreRefusedNamingBothPlaces)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota(4), d0, d1, out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_copy_to(&d0, &x, sim(0)));
    PD_ASSERT_OK(pd_tensor_copy_to(&d1, &x, sim(1)));
    pd_arg in[2] = {pd_arg_of(&d0), pd_arg_of(&d1)}, o = pd_arg_of(&out);
    PD_EXPECT_ERROR(pd_run(reg, "sim_pair", in, 2, NULL, 0, &o, 1), PD_ERR_INVALID_ARGUMENT,
                    "input 'Y' is on sim:1, but the call runs on sim:0");
    in[1] = pd_arg_of(&x);
    PD_EXPECT_ERROR(pd_run(reg, "sim_pair", in, 2, NULL, 0, &o, 1), PD_ERR_INVALID_ARGUMENT,
                    "input 'Y' is on cpu, but the call runs on sim:0");
    PD_EXPECT(!pd_defined(&out));
    pd_tensor *all[] = {&x, &d0, &d1};
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(all[i]);
    pd_registry_destroy(reg);
}

/* --- Registration -------------------------------------------------------------------------- */

static void never_called(void) {}
static pd_status one_device(void *user, int32_t *count)
{
    (void)user;
    *count = 1;
    return PD_OK;
}

/* A table that passes registration: device_count works, the other members are stubs that
 * registration never calls (each test breaks one thing). */
static pd_device_table stub_table(void)
{
    pd_device_table t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    t.abi_version = PD_DEVICE_ABI_VERSION;
    t.name = "stub";
    t.device_count = one_device;
#define STUB(m) t.m = (__typeof__(t.m))never_called
    STUB(alloc);
    STUB(free);
    STUB(memset);
    STUB(copy_h2d);
    STUB(copy_d2h);
    STUB(copy_d2d);
    STUB(stream_create);
    STUB(stream_destroy);
    STUB(stream_synchronize);
    STUB(stream_query);
    STUB(event_create);
    STUB(event_destroy);
    STUB(event_record);
    STUB(event_wait);
    STUB(event_synchronize);
#undef STUB
    return t;
}

PD_TEST(DeviceRegister, RefusesATableOfAnotherAbiVersionNamingBoth)
{
    pd_device_table t = stub_table();
    t.abi_version = PD_DEVICE_ABI_VERSION + 1;
    int32_t type = 0;
    PD_EXPECT_ERROR(pd_device_register("dr_abi", &t, &type), PD_ERR_INVALID_ARGUMENT,
                    "pd_device_register: the table of 'dr_abi' is refused: abi_version is 2, but "
                    "this runtime serves device tables of version 1");
}

PD_TEST(DeviceRegister, RefusesATableMissingARequiredMember)
{
    pd_device_table t = stub_table();
    t.event_wait = NULL;
    int32_t type = 0;
    PD_EXPECT_ERROR(pd_device_register("dr_null", &t, &type), PD_ERR_INVALID_ARGUMENT,
                    "member event_wait is NULL");
    t = stub_table();
    t.struct_size = 16;
    PD_EXPECT_ERROR(pd_device_register("dr_small", &t, &type), PD_ERR_INVALID_ARGUMENT,
                    "struct_size is 16");
    PD_EXPECT_ERROR(pd_device_register("dr_none", NULL, &type), PD_ERR_INVALID_ARGUMENT,
                    "pd_device_register: table is NULL");
}

PD_TEST(DeviceRegister, SameNameGivesTheSameNumberAndAnotherTableIsRefused)
{
    static pd_device_table a, b;
    a = stub_table();
    b = stub_table();
    int32_t first = 0, again = 0;
    PD_ASSERT_OK(pd_device_register("dr_twice", &a, &first));
    PD_ASSERT_OK(pd_device_register("dr_twice", &a, &again));
    PD_EXPECT_EQ(again, first);
    PD_EXPECT(pd_place_equal(pd_place_custom("dr_twice", 0), pd_place_make(first, 0)));
    PD_EXPECT_ERROR(pd_device_register("dr_twice", &b, &again), PD_ERR_ALREADY_EXISTS,
                    "device type 'dr_twice' is registered already, with another table");
    PD_EXPECT_ERROR(pd_device_register("gpu", &a, &again), PD_ERR_ALREADY_EXISTS,
                    "'gpu' is a built-in device type");
}

PD_TEST(DeviceRegister, NameWithoutATableSaysHowToGiveOne)
{
    int32_t type = 0;
    PD_ASSERT_OK(pd_device_type_register("dr_nametable", &type));
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t n = 1;
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, pd_place_custom("dr_nametable", 0), 1, &n),
                    PD_ERR_UNAVAILABLE, "pd_device_register(\"dr_nametable\", &table, &type)");
}

PD_TEST(DeviceRegister, DeviceCountOfTheSimAndTheCpu)
{
    int32_t count = 0;
    PD_ASSERT_OK(pd_device_count(sim(0).type, &count));
    PD_EXPECT_EQ(count, PD_SIM_DEVICES);
    PD_ASSERT_OK(pd_device_count(PD_PLACE_CPU, &count));
    PD_EXPECT_EQ(count, 1);
    PD_EXPECT_OK(pd_device_set_current(sim(1)));
    PD_EXPECT_OK(pd_device_synchronize(sim(1)));
}

/* --- DLPack devices ------------------------------------------------------------------------ */

PD_TEST(DeviceDlpack, PlacesMapToDlpackDevicesAndBack)
{
    int32_t type = -1, id = -1;
    PD_ASSERT(pd_place_to_dlpack(pd_place_cpu(), &type, &id));
    PD_EXPECT_EQ(type, 1);
    PD_EXPECT_EQ(id, 0);
    PD_ASSERT(pd_place_to_dlpack(pd_place_gpu(3), &type, &id));
    PD_EXPECT_EQ(type, 2);
    PD_EXPECT_EQ(id, 3);
    PD_ASSERT(pd_place_to_dlpack(pd_place_gpu_pinned(), &type, &id));
    PD_EXPECT_EQ(type, 3);
    PD_ASSERT(pd_place_to_dlpack(sim(1), &type, &id));
    PD_EXPECT_EQ(type, 12);
    PD_EXPECT_EQ(id, 1);
    PD_EXPECT(pd_place_equal(pd_place_from_dlpack(12, 1, sim(0).type), sim(1)));
    PD_EXPECT(pd_place_equal(pd_place_from_dlpack(2, 3, 0), pd_place_gpu(3)));
    PD_EXPECT(pd_place_equal(pd_place_from_dlpack(1, 0, 0), pd_place_cpu()));
    PD_EXPECT(pd_place_equal(pd_place_from_dlpack(3, 0, 0), pd_place_gpu_pinned()));
}

PD_TEST(DeviceDlpack, UnknownDevicesAreUndefinedPlaces)
{
    int32_t type = -1, id = -1;
    PD_EXPECT(!pd_place_to_dlpack(pd_place_make(PD_PLACE_UNDEFINED, 0), &type, &id));
    PD_EXPECT_EQ(type, -1);
    PD_EXPECT_EQ(pd_place_from_dlpack(4 /* kDLOpenCL */, 0, 0).type, PD_PLACE_UNDEFINED);
    PD_EXPECT_EQ(pd_place_from_dlpack(12, 0, 5 /* no custom type number */).type,
                 PD_PLACE_UNDEFINED);
    PD_EXPECT_EQ(pd_place_from_dlpack(2, -1, 0).type, PD_PLACE_UNDEFINED);
}
