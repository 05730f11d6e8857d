/*
 * device_bench.c - the device rows, on the simulated device:
 *   - device_cache_alloc: a tensor allocated and released on sim:0 (pd_tensor_empty +
 *     pd_tensor_release of 4 KiB), which the device cache serves without calling the device
 *     table, against malloc + free of the same size. Target: <= 100 ns per pair. The sim's
 *     allocation counter proves the cache served every pair after the first.
 *   - device_call_host_stream: an op call on a 1-element sim tensor on a stream the host made
 *     and handed pdext (pd_stream_wrap, current: what the torch, JAX and ONNX Runtime fronts
 *     do with their framework's stream), against the same call on pdext's own default
 *     stream. Target: <= 1.1x. The sim's call counters prove that neither made a
 *     stream_synchronize, an event, a query or a device allocation per call.
 */
#include "bench_util.h"
#include "extension.h"
#include "pd_sim_device.h"

#include <stdio.h>
#include <stdlib.h>

#define ROW_NAME "device_cache_alloc"
#define ROW_UNIT "ns"
#define ROW_TARGET "<= 100 ns per alloc/free pair"

static void cache_alloc_row(void)
{
    const int samples = bench_smoke ? 1 : 15, reps = bench_smoke ? 10 : 200000;
    const int64_t n = 1024; /* 4 KiB of float32 */
    int32_t type = 0;
    double *p = calloc(samples, sizeof *p), *b = calloc(samples, sizeof *b);
    pd_sim_stats before, after;
    if (p == NULL || b == NULL || pd_sim_device_install(&type) != PD_OK) {
        bench_emit_missing(ROW_NAME, ROW_UNIT, ROW_TARGET, true, "set-up failed");
        free(p);
        free(b);
        return;
    }
    pd_place place = pd_place_make(type, 0);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    bool ok = pd_tensor_empty(&t, PD_FLOAT32, place, 1, &n) == PD_OK; /* warms the cache */
    pd_tensor_release(&t);
    pd_sim_stats_get(&before);
    for (int k = 0; ok && k < samples; ++k) {
        uint64_t t0 = bench_cpu_ns();
        for (int r = 0; ok && r < reps; ++r) {
            ok = pd_tensor_empty(&t, PD_FLOAT32, place, 1, &n) == PD_OK;
            bench_escape(t.data);
            pd_tensor_release(&t);
        }
        uint64_t t1 = bench_cpu_ns();
        for (int r = 0; r < reps; ++r) {
            void *m = malloc((size_t)n * sizeof(float));
            bench_escape(m);
            free(m);
        }
        uint64_t t2 = bench_cpu_ns();
        p[k] = (double)(t1 - t0) / reps;
        b[k] = (double)(t2 - t1) / reps;
    }
    pd_sim_stats_get(&after);
    if (!ok || after.allocs != before.allocs) {
        fprintf(stderr, "device_bench: %s\n",
                ok ? "the device table allocated: the cache did not serve every pair"
                   : pd_last_error());
        bench_emit_missing(ROW_NAME, ROW_UNIT, ROW_TARGET, true, "could not run (see stderr)");
    } else {
        bench_row r = {ROW_NAME,
                       ROW_UNIT,
                       bench_stats_of(p, samples),
                       bench_stats_of(b, samples),
                       true,
                       true,
                       ROW_TARGET,
                       BENCH_VALUE_AT_MOST,
                       100,
                       "pd_tensor_empty + pd_tensor_release of 4 KiB on the simulated device, "
                       "served by the device cache (no device allocation: counted); baseline "
                       "malloc + free of 4 KiB"};
        bench_emit(&r);
    }
    pd_device_cache_release(place);
    free(p);
    free(b);
}

/* --- device_call_host_stream ------------------------------------------------------------- */

/* The kernel's work on the device: nothing (the row measures the call, not the kernel). */
static void no_work(void *arg) { (void)arg; }

/* Out = a launch on the call's stream, as a CUDA kernel launches on pd_stream(ctx). */
static void launch_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor *out = pd_output(ctx, 0); /* from the device cache, on the call's stream */
    PD_CHECK(pd_sim_launch(pd_stream(ctx), no_work, out->data) == PD_OK, "the sim launch failed");
}

PD_BUILD_OP(bench_sim_launch,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = launch_kernel);

/* Mean ns of `reps` calls of op on x on the thread's current stream, or -1 on failure. */
static double calls_ns(const pd_op *op, pd_tensor *x, int reps)
{
    uint64_t t0 = bench_cpu_ns();
    for (int r = 0; r < reps; ++r) {
        pd_tensor out = PD_TENSOR_UNDEFINED;
        pd_arg in = pd_arg_of(x), o = pd_arg_of(&out);
        if (pd_op_run(op, &in, 1, NULL, 0, &o, 1) != PD_OK)
            return -1;
        pd_tensor_release(&out);
    }
    return (double)(bench_cpu_ns() - t0) / reps;
}

/* Whether the calls between two counts made only their launches (n of them): no
 * stream_synchronize, event, query or device allocation; says which on stderr otherwise. */
static bool only_launches(const pd_sim_calls *a, const pd_sim_calls *b, int64_t n)
{
    int64_t sync = b->stream_synchronize - a->stream_synchronize,
            query = b->stream_query - a->stream_query,
            events = b->event_create - a->event_create + b->event_record - a->event_record +
                     b->event_wait - a->event_wait + b->event_synchronize - a->event_synchronize,
            allocs = b->alloc - a->alloc + b->free - a->free, launches = b->launch - a->launch;
    if (sync == 0 && query == 0 && events == 0 && allocs == 0 && launches == n)
        return true;
    fprintf(stderr,
            "device_bench: %lld calls made %lld synchronize, %lld query, %lld event, %lld "
            "alloc/free and %lld launch device calls\n",
            (long long)n, (long long)sync, (long long)query, (long long)events, (long long)allocs,
            (long long)launches);
    return false;
}

#define CALL_NAME "device_call_host_stream"
#define CALL_UNIT "ns"
#define CALL_TARGET "<= 1.1x the call on pdext's own stream"

static void host_stream_row(void)
{
    const int samples = bench_smoke ? 1 : 15, reps = bench_smoke ? 10 : 20000;
    const int64_t one = 1;
    int32_t type = 0;
    pd_registry *reg = NULL;
    const pd_op *op = NULL;
    if (pd_sim_device_install(&type) != PD_OK || pd_registry_create(&reg) != PD_OK ||
        pd_register_linked_ops(reg, NULL) != PD_OK ||
        (op = pd_op_find(reg, "bench_sim_launch")) == NULL) {
        fprintf(stderr, "device_bench: %s\n", pd_last_error());
        bench_emit_missing(CALL_NAME, CALL_UNIT, CALL_TARGET, true, "set-up failed");
        pd_registry_destroy(reg);
        return;
    }
    pd_place place = pd_place_make(type, 0);
    const pd_device_table *table = pd_sim_device_table();
    pd_device_stream handle = NULL; /* the host's stream, made with the device's own API */
    pd_stream_t *host = NULL, *own = pd_stream_current(place);
    double *p = calloc(samples, sizeof *p), *b = calloc(samples, sizeof *b);
    bool ok = p && b && own && table->stream_create(table->user, 0, &handle) == PD_OK &&
              pd_stream_wrap(place, handle, &host) == PD_OK;
    /* One input per stream, made on it (a memset queued there), as a host's tensors are made
     * on its stream: each call reads memory its own stream used last, so there is nothing to
     * wait for. The warm-up puts each stream's output block in the device cache. */
    pd_tensor x[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED}; /* the host's, pdext's */
    for (int s = 0; ok && s < 2; ++s)
        ok = pd_stream_set_current(place, s ? NULL : host) == PD_OK &&
             pd_tensor_zeros(&x[s], PD_FLOAT32, place, 1, &one) == PD_OK &&
             calls_ns(op, &x[s], 2) >= 0;
    for (int k = 0; ok && k < samples; ++k) {
        pd_sim_calls before, after;
        pd_sim_calls_get(&before);
        ok = pd_stream_set_current(place, host) == PD_OK &&
             (p[k] = calls_ns(op, &x[0], reps)) >= 0 &&
             pd_stream_set_current(place, NULL) == PD_OK && (b[k] = calls_ns(op, &x[1], reps)) >= 0;
        pd_sim_calls_get(&after);
        ok = ok && only_launches(&before, &after, 2 * (int64_t)reps);
        /* the queued launches run, outside the timing (the sim keeps them until waited for) */
        ok = ok && pd_stream_synchronize(host) == PD_OK && pd_stream_synchronize(own) == PD_OK;
    }
    if (!ok) {
        fprintf(stderr, "device_bench: %s\n", pd_last_error());
        bench_emit_missing(CALL_NAME, CALL_UNIT, CALL_TARGET, true, "could not run (see stderr)");
    } else {
        bench_row r = {CALL_NAME,
                       CALL_UNIT,
                       bench_stats_of(p, samples),
                       bench_stats_of(b, samples),
                       true,
                       true,
                       CALL_TARGET,
                       BENCH_RATIO_AT_MOST,
                       1.1,
                       "pd_op_run of a one-launch op on a 1-element float32 tensor on sim:0 on a "
                       "stream the host made (pd_stream_wrap, current), output released; "
                       "baseline the same call on pdext's default stream; no stream_synchronize, "
                       "event, query or device allocation in either (the sim's call counters)"};
        bench_emit(&r);
    }
    (void)pd_stream_set_current(place, NULL);
    pd_tensor_release(&x[0]);
    pd_tensor_release(&x[1]);
    (void)pd_stream_destroy(host);
    if (handle != NULL)
        (void)table->stream_destroy(table->user, 0, handle);
    (void)pd_device_cache_release(place);
    pd_registry_destroy(reg);
    free(p);
    free(b);
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    cache_alloc_row();
    host_stream_row();
    return bench_finish();
}
