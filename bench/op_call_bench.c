/*
 * op_call_bench.c - figure 1, op_call_overhead: what the runner adds to an op call.
 *
 * custom_relu (the example, JIT-built with default flags) on a one-element float32 tensor,
 * through pd_op_run with a handle resolved once and through pd_run by name, each call
 * releasing its output, against the same kernel work done directly in C with its own
 * malloc/free of the output. Each sample times a batch of calls in thread CPU time (so that
 * time spent waiting for a core on a shared machine is left out); the three loops take turns
 * so that cache and memory pressure from other work fall on all of them alike. The figure is
 * the added ns per call: pdext's median minus the direct call's.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

/* The kernel's work, done directly: allocate the output, compute, hand it back. noinline and
 * the escape keep the compiler from folding the malloc/free pair away. */
__attribute__((noinline)) static float *direct_relu(const float *in, int64_t n)
{
    float *o = malloc((size_t)n * sizeof *o);
    if (!o)
        abort();
    for (int64_t i = 0; i < n; ++i)
        o[i] = in[i] > 0 ? in[i] : 0;
    return o;
}

static double time_direct(const float *x, int calls)
{
    uint64_t t0 = bench_cpu_ns();
    for (int i = 0; i < calls; ++i) {
        float *o = direct_relu(x, 1);
        bench_escape(o);
        free(o);
    }
    return (double)(bench_cpu_ns() - t0) / calls;
}

/* The output's allocation alone, as the runner does it: pd_tensor_empty + pd_tensor_release.
 * Shown in the note, to split the overhead into allocation and dispatch. */
static double time_alloc(const pd_tensor *like, int calls)
{
    uint64_t t0 = bench_cpu_ns();
    for (int i = 0; i < calls; ++i) {
        pd_tensor t = PD_TENSOR_UNDEFINED;
        if (pd_tensor_empty_like(&t, like) != PD_OK)
            return -1;
        bench_escape(t.data);
        pd_tensor_release(&t);
    }
    return (double)(bench_cpu_ns() - t0) / calls;
}

/* by_name: pd_run(reg, "custom_relu") instead of pd_op_run(op). Returns ns per call, or -1. */
static double time_runner(const pd_registry *reg, const pd_op *op, pd_tensor *x, int calls,
                          bool by_name)
{
    pd_arg in = pd_arg_of(x);
    uint64_t t0 = bench_cpu_ns();
    for (int i = 0; i < calls; ++i) {
        pd_tensor out = PD_TENSOR_UNDEFINED;
        pd_arg oa = pd_arg_of(&out);
        pd_status st = by_name ? pd_run(reg, "custom_relu", &in, 1, NULL, 0, &oa, 1)
                               : pd_op_run(op, &in, 1, NULL, 0, &oa, 1);
        if (st != PD_OK) {
            bench_report_error(by_name ? "pd_run custom_relu" : "pd_op_run custom_relu", st);
            return -1;
        }
        pd_tensor_release(&out);
    }
    return (double)(bench_cpu_ns() - t0) / calls;
}

static void emit(const char *name, bench_stats p, bench_stats b, double alloc, double limit,
                 const char *how)
{
    static char note[2][256];
    static int which;
    char *n = note[which++ & 1];
    snprintf(n, sizeof note[0],
             "added %.0f ns/call (%s); direct C call + malloc/free %.1f ns; "
             "pd_tensor_empty + release of the output alone %.1f ns; thread CPU time",
             p.median - b.median, how, b.median, alloc);
    static char target[2][32];
    char *t = target[which & 1];
    snprintf(t, sizeof target[0], "<= %.0f ns added", limit);
    bench_row r = {name, "ns/call", p, b, true, true, t, BENCH_ADDED_AT_MOST, limit, n};
    bench_emit(&r);
}

static int run(void)
{
    pd_registry *reg = NULL;
    pd_module *mod = NULL;
    pd_tensor x = PD_TENSOR_UNDEFINED;
    const char *src[] = {BENCH_RELU_SOURCE};
    int rc = 1;
    if (pd_registry_create(&reg) != PD_OK || bench_jit_load(reg, "bench_relu", src, 1, NULL, &mod))
        goto done;
    const pd_op *op = pd_op_find(reg, "custom_relu");
    if (!op) {
        bench_report_error("pd_op_find custom_relu", pd_last_status());
        goto done;
    }
    if (pd_tensor_full(&x, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){1}, -0.5) != PD_OK)
        goto done;

    const int samples = bench_smoke ? 1 : 301, calls = bench_smoke ? 1 : 2000;
    double *h = calloc(samples, sizeof *h), *n = calloc(samples, sizeof *n),
           *d = calloc(samples, sizeof *d), *a = calloc(samples, sizeof *a);
    if (!h || !n || !d || !a)
        goto free_samples;
    /* Warm-up: caches, the allocator's free lists, lazy binding of every symbol. */
    if (time_runner(reg, op, &x, calls, false) < 0 || time_runner(reg, op, &x, calls, true) < 0)
        goto free_samples;
    time_direct(pd_data(&x), calls);
    for (int s = 0; s < samples; ++s) {
        h[s] = time_runner(reg, op, &x, calls, false);
        n[s] = time_runner(reg, op, &x, calls, true);
        d[s] = time_direct(pd_data(&x), calls);
        a[s] = time_alloc(&x, calls);
        if (h[s] < 0 || n[s] < 0 || a[s] < 0)
            goto free_samples;
    }
    bench_stats hs = bench_stats_of(h, samples), ns = bench_stats_of(n, samples),
                ds = bench_stats_of(d, samples);
    double alloc = bench_stats_of(a, samples).median;
    emit("op_call_overhead_handle", hs, ds, alloc, 100, "pd_op_run, pre-resolved handle");
    emit("op_call_overhead_name", ns, ds, alloc, 150, "pd_run by name");
    rc = 0;
free_samples:
    free(h);
    free(n);
    free(d);
    free(a);
done:
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    return rc;
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    int rc = run();
    if (rc) {
        bench_emit_missing("op_call_overhead_handle", "ns/call", "<= 100 ns added", true,
                           "could not run custom_relu (see stderr)");
        bench_emit_missing("op_call_overhead_name", "ns/call", "<= 150 ns added", true,
                           "could not run custom_relu (see stderr)");
    }
    return bench_finish();
}
