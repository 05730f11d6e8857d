/*
 * device_host_stream_test.c - op calls on a stream the host hands pdext (pd_stream_wrap of a
 * stream the host made with the device's own API, as the torch, JAX and ONNX Runtime fronts
 * do with theirs), on the simulated device, counting the device table's calls
 * (pd_sim_calls_get).
 *
 * On the host's stream a call queues its kernel there and takes its output from the device
 * cache, and nothing else: no stream_synchronize, no event, no query, no allocation, call
 * after call. The sim runs stream work only when something waits for it, so "no host
 * synchronization" shows up as launches still queued after the calls, and a missing order
 * between two streams as a wrong value. Memory that moves between the host's stream and
 * pdext's default stream is ordered by one event (recorded where it was last used, waited
 * for where it is used next), the first time only.
 */
#include "pd_sim_device.h"
#include "pdext_executor.h"
#include "runner_helpers.h"

static pd_place sim(int32_t id)
{
    int32_t type = 0;
    if (pd_sim_device_install(&type) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_sim_device_install: %s", pd_last_error());
    return pd_place_make(type, id);
}

static pd_sim_calls calls(void)
{
    pd_sim_calls c;
    pd_sim_calls_get(&c);
    return c;
}

static int64_t launches_run(void)
{
    pd_sim_stats s;
    pd_sim_stats_get(&s);
    return s.launches;
}

/* A stream the host made with the device's own API (for CUDA, torch's current stream), and
 * pdext's wrapper of it, current for device 0. */
typedef struct host_stream {
    pd_device_stream handle;
    pd_stream_t *wrapper;
} host_stream;

static host_stream host_stream_make(void)
{
    host_stream h = {NULL, NULL};
    const pd_device_table *t = pd_sim_device_table();
    if (t->stream_create(t->user, 0, &h.handle) != PD_OK ||
        pd_stream_wrap(sim(0), h.handle, &h.wrapper) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "the host's stream: %s", pd_last_error());
    return h;
}

static void host_stream_end(host_stream *h)
{
    const pd_device_table *t = pd_sim_device_table();
    PD_EXPECT_OK(pd_stream_set_current(sim(0), NULL));
    PD_EXPECT_OK(pd_stream_destroy(h->wrapper)); /* waits for its work; the handle stays */
    PD_EXPECT_OK(t->stream_destroy(t->user, 0, h->handle));
}

/* n float32 values i - n/2 on device 0, copied on the thread's current stream. */
static pd_tensor device_iota(int64_t n)
{
    pd_tensor x = PD_TENSOR_UNDEFINED, d = PD_TENSOR_UNDEFINED;
    if (pd_tensor_empty(&x, PD_FLOAT32, pd_place_cpu(), 1, &n) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "%s", pd_last_error());
    for (int64_t i = 0; i < n; ++i)
        ((float *)x.data)[i] = (float)(i - n / 2);
    if (pd_tensor_copy_to(&d, &x, sim(0)) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "%s", pd_last_error());
    pd_tensor_release(&x);
    return d;
}

/* relu(x) by the sim op (queued on the thread's stream of x's device). */
static pd_tensor relu(pd_registry *reg, const pd_tensor *x)
{
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of((pd_tensor *)x), o = pd_arg_of(&out);
    if (pd_run(reg, "sim_relu", &in, 1, NULL, 0, &o, 1) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "sim_relu: %s", pd_last_error());
    return out;
}

/* t (on the sim) equals relu(i - n/2), read back to the host (which waits for its stream). */
static void expect_relu_of_iota(const pd_tensor *t, int64_t n)
{
    pd_tensor h = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_copy_to(&h, t, pd_place_cpu()));
    for (int64_t i = 0; i < n; ++i) {
        float want = i - n / 2 > 0 ? (float)(i - n / 2) : 0.0f;
        PD_EXPECT_EQ(((float *)h.data)[i], want);
    }
    pd_tensor_release(&h);
}

PD_TEST(HostStream, CallsOnTheHostsStreamMakeNoSynchronizeNoEventAndNoAllocation)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    host_stream h = host_stream_make();
    PD_ASSERT_OK(pd_stream_set_current(sim(0), h.wrapper));
    const int64_t n = 16;
    pd_tensor x = device_iota(n);
    for (int i = 0; i < 2; ++i) { /* the cache's first block on this stream */
        pd_tensor warm = relu(reg, &x);
        pd_tensor_release(&warm);
    }
    PD_ASSERT_OK(pd_stream_synchronize(h.wrapper)); /* the warm-up's kernels run */
    enum { N = 64 };
    pd_sim_calls before = calls();
    int64_t ran = launches_run();
    pd_tensor out = PD_TENSOR_UNDEFINED;
    for (int i = 0; i < N; ++i) {
        pd_tensor_release(&out); /* the previous result's block, back for the next call */
        out = relu(reg, &x);
    }
    pd_sim_calls after = calls();
    PD_EXPECT_EQ(after.launch - before.launch, N);
    PD_EXPECT_EQ(after.stream_synchronize - before.stream_synchronize, 0);
    PD_EXPECT_EQ(after.stream_query - before.stream_query, 0);
    PD_EXPECT_EQ(after.event_create - before.event_create, 0);
    PD_EXPECT_EQ(after.event_record - before.event_record, 0);
    PD_EXPECT_EQ(after.event_wait - before.event_wait, 0);
    PD_EXPECT_EQ(after.event_synchronize - before.event_synchronize, 0);
    PD_EXPECT_EQ(after.alloc - before.alloc, 0);
    PD_EXPECT_EQ(after.free - before.free, 0);
    /* Nobody waited: the kernels are all still queued on the host's stream. */
    PD_EXPECT_EQ(launches_run(), ran);
    expect_relu_of_iota(&out, n);
    PD_EXPECT_EQ(launches_run(), ran + N);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    host_stream_end(&h);
    pd_registry_destroy(reg);
}

PD_TEST(HostStream, AChainOnTheHostsStreamIsOrderedByTheStreamAlone)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    host_stream h = host_stream_make();
    PD_ASSERT_OK(pd_stream_set_current(sim(0), h.wrapper));
    const int64_t n = 9;
    pd_tensor x = device_iota(n);
    pd_sim_calls before = calls();
    pd_tensor y = relu(reg, &x), z = relu(reg, &y), w = relu(reg, &z);
    pd_sim_calls after = calls();
    PD_EXPECT_EQ(after.event_record - before.event_record, 0);
    PD_EXPECT_EQ(after.event_wait - before.event_wait, 0);
    PD_EXPECT_EQ(after.stream_synchronize - before.stream_synchronize, 0);
    expect_relu_of_iota(&w, n);
    pd_tensor *all[] = {&x, &y, &z, &w};
    for (int i = 0; i < 4; ++i)
        pd_tensor_release(all[i]);
    host_stream_end(&h);
    pd_registry_destroy(reg);
}

/* y made on pdext's default stream, used on the host's stream and back: each move waits for
 * the stream that used the memory last, by one event (no host synchronization), once. */
PD_TEST(HostStream, MemoryMovingBetweenTheDefaultStreamAndTheHostsIsOrderedByAnEvent)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    host_stream h = host_stream_make();
    const int64_t n = 12;
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL)); /* the default stream */
    pd_tensor x = device_iota(n);
    pd_tensor y = relu(reg, &x); /* queued on the default stream, not run */
    PD_ASSERT_OK(pd_stream_set_current(sim(0), h.wrapper));
    pd_sim_calls before = calls();
    int64_t ran = launches_run();
    pd_tensor z = relu(reg, &y); /* on the host's stream: after y's kernel */
    pd_sim_calls after = calls();
    PD_EXPECT_EQ(after.event_record - before.event_record, 1);
    PD_EXPECT_EQ(after.event_wait - before.event_wait, 1);
    PD_EXPECT_EQ(after.stream_synchronize - before.stream_synchronize, 0);
    PD_EXPECT_EQ(launches_run(), ran); /* ordered on the device, nothing waited for */
    before = after;
    pd_tensor z2 = relu(reg, &y); /* y's last use is on this stream now: no event */
    after = calls();
    PD_EXPECT_EQ(after.event_record - before.event_record, 0);
    PD_EXPECT_EQ(after.event_wait - before.event_wait, 0);
    /* Reading z waits for the host's stream only; its wait for y's kernel runs that. */
    expect_relu_of_iota(&z, n);
    expect_relu_of_iota(&z2, n);
    /* Back on the default stream: z was last used on the host's stream. */
    pd_tensor z3 = relu(reg, &z2); /* queued on the host's stream, not run */
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    before = calls();
    pd_tensor w = relu(reg, &z3);
    after = calls();
    PD_EXPECT_EQ(after.event_record - before.event_record, 1);
    PD_EXPECT_EQ(after.event_wait - before.event_wait, 1);
    PD_EXPECT_EQ(after.stream_synchronize - before.stream_synchronize, 0);
    expect_relu_of_iota(&w, n);
    pd_tensor *all[] = {&x, &y, &z, &z2, &z3, &w};
    for (int i = 0; i < 6; ++i)
        pd_tensor_release(all[i]);
    host_stream_end(&h);
    pd_registry_destroy(reg);
}

/* A copy to the host on the host's stream of memory the default stream computes waits for
 * that work (through the event), not only for the host's stream. */
PD_TEST(HostStream, ACopyOnTheHostsStreamWaitsForWorkOfTheDefaultStream)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    host_stream h = host_stream_make();
    const int64_t n = 10;
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    pd_tensor x = device_iota(n);
    pd_tensor y = relu(reg, &x); /* queued on the default stream */
    PD_ASSERT_OK(pd_stream_set_current(sim(0), h.wrapper));
    pd_sim_calls before = calls();
    expect_relu_of_iota(&y, n); /* a copy on the host's stream */
    pd_sim_calls after = calls();
    PD_EXPECT_EQ(after.event_record - before.event_record, 1);
    PD_EXPECT_EQ(after.event_wait - before.event_wait, 1);
    PD_EXPECT_EQ(after.stream_synchronize - before.stream_synchronize, 1); /* the copy's */
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    host_stream_end(&h);
    pd_registry_destroy(reg);
}

/* A block the default stream allocated and the host's stream used is not handed to another
 * allocation on the default stream while the host's stream may still read it. */
PD_TEST(HostStream, TheCacheKeepsABlockTheHostsStreamStillUses)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    PD_ASSERT_OK(pd_device_cache_release(sim(0)));
    host_stream h = host_stream_make();
    const int64_t n = 700;
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    pd_tensor x = device_iota(n);
    const void *block = x.data;
    PD_ASSERT_OK(pd_stream_set_current(sim(0), h.wrapper));
    pd_tensor y = relu(reg, &x); /* reads x on the host's stream, queued */
    pd_tensor_release(&x);
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    pd_tensor again = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_empty(&again, PD_FLOAT32, sim(0), 1, &n));
    PD_EXPECT(again.data != block);
    PD_ASSERT_OK(pd_stream_set_current(sim(0), h.wrapper));
    expect_relu_of_iota(&y, n);
    pd_tensor_release(&again);
    pd_tensor_release(&y);
    host_stream_end(&h);
    PD_EXPECT_OK(pd_device_cache_release(sim(0)));
    pd_registry_destroy(reg);
}

/* --- pd_tensor_ready_on: a consumer's stream (a DLPack consumer's) -------------------------- */

typedef struct read_job {
    const float *from; /* host address of sim memory */
    float *to;
    int64_t n;
} read_job;

static void read_values(void *arg)
{
    read_job *j = arg;
    for (int64_t i = 0; i < j->n; ++i)
        j->to[i] = j->from[i];
}

/* A consumer pdext never saw (a raw stream of the device's own API) reads memory the default
 * stream is still computing: pd_tensor_ready_on orders it by one event, no host wait. */
PD_TEST(HostStream, ReadyOnMakesAnUnknownConsumersStreamWaitByAnEvent)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    const pd_device_table *t = pd_sim_device_table();
    pd_device_stream raw = NULL;
    PD_ASSERT_OK(t->stream_create(t->user, 0, &raw));
    const int64_t n = 6;
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    pd_tensor x = device_iota(n);
    pd_tensor y = relu(reg, &x); /* queued on the default stream */
    pd_sim_calls before = calls();
    int64_t ran = launches_run();
    PD_ASSERT_OK(pd_tensor_ready_on(&y, raw));
    pd_sim_calls after = calls();
    PD_EXPECT_EQ(after.event_record - before.event_record, 1);
    PD_EXPECT_EQ(after.event_wait - before.event_wait, 1);
    PD_EXPECT_EQ(after.stream_synchronize - before.stream_synchronize, 0);
    PD_EXPECT_EQ(launches_run(), ran); /* nothing ran: the order is on the device */
    float got[6] = {-1, -1, -1, -1, -1, -1};
    read_job job = {pd_sim_host_address(y.data), got, n};
    PD_ASSERT_OK(pd_sim_launch(raw, read_values, &job));
    PD_ASSERT_OK(t->stream_synchronize(t->user, 0, raw)); /* runs y's kernel first */
    for (int64_t i = 0; i < n; ++i)
        PD_EXPECT_EQ(got[i], i - n / 2 > 0 ? (float)(i - n / 2) : 0.0f);
    /* The stream that used it last is the consumer: nothing to wait for. */
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    before = calls();
    PD_ASSERT_OK(pd_tensor_ready_on(&x, pd_stream_handle(pd_stream_current(sim(0)))));
    after = calls();
    PD_EXPECT_EQ(after.event_record - before.event_record, 0);
    PD_EXPECT_ERROR(pd_tensor_ready_on(NULL, raw), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_ready_on: t is NULL");
    PD_EXPECT_ERROR(pd_tensor_ready_on(&y, NULL), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_ready_on: consumer is NULL");
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    PD_EXPECT_OK(t->stream_destroy(t->user, 0, raw));
    pd_registry_destroy(reg);
}

/* A consumer pdext knows (the host's wrapped stream) becomes the memory's last stream: pdext's
 * next call there needs no event, and one back on the default stream waits for it. */
PD_TEST(HostStream, ReadyOnAKnownStreamMakesItTheMemorysLast)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    host_stream h = host_stream_make();
    const int64_t n = 8;
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    pd_tensor x = device_iota(n);
    pd_tensor y = relu(reg, &x);
    PD_ASSERT_OK(pd_tensor_ready_on(&y, h.handle));
    PD_ASSERT_OK(pd_stream_set_current(sim(0), h.wrapper));
    pd_sim_calls before = calls();
    pd_tensor z = relu(reg, &y);
    pd_sim_calls after = calls();
    PD_EXPECT_EQ(after.event_record - before.event_record, 0);
    PD_EXPECT_EQ(after.event_wait - before.event_wait, 0);
    expect_relu_of_iota(&z, n);
    pd_tensor *all[] = {&x, &y, &z};
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(all[i]);
    host_stream_end(&h);
    pd_registry_destroy(reg);
}

/* --- The executor: an input last used on another stream than the submitter's ---------------- */

/* y is computed on the host's stream; the submitter then goes back to the default stream and
 * hands y to the executor: the executor's stream waits for the host's (an event at
 * submission), not only for the submitter's current stream. */
PD_TEST(HostStream, AnExecutorCallWaitsForTheStreamThatUsedItsInputLast)
{
    pd_registry *reg = rt_registry1("ds_sim_ops");
    PD_ASSERT(reg != NULL);
    pd_executor_options o = {sizeof o, 1, 0, -1, 0};
    pd_executor *ex = NULL;
    PD_ASSERT_OK(pd_executor_create(reg, &o, &ex));
    host_stream h = host_stream_make();
    const int64_t n = 11;
    PD_ASSERT_OK(pd_stream_set_current(sim(0), h.wrapper));
    pd_tensor x = device_iota(n);
    pd_tensor y = relu(reg, &x); /* queued on the host's stream */
    PD_ASSERT_OK(pd_stream_set_current(sim(0), NULL));
    pd_tensor z = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&y), out = pd_arg_of(&z);
    PD_ASSERT_OK(pd_run_async(ex, 0, "sim_relu", &in, 1, NULL, 0, &out, 1));
    expect_relu_of_iota(&z, n); /* waits for z's call, whose stream waits for y's kernel */
    pd_tensor *all[] = {&x, &y, &z};
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(all[i]);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    host_stream_end(&h);
    pd_registry_destroy(reg);
}
