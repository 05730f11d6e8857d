/*
 * bandwidth_bench.c - figure 4, relu_bandwidth and concat_bandwidth: the example kernels,
 * JIT-built with the JIT's default flags and run through the runner, against memcpy.
 *
 * relu_bandwidth: custom_relu on a 64 MiB float32 tensor of random signs, repeated calls
 * (each releasing its output, as a host would), bytes read + written per second, against
 * memcpy of 64 MiB between two buffers already touched, in the same process.
 * concat_bandwidth_axis0 / _lastaxis: custom_concat of two 32 MiB tensors [4096, 2048] along
 * axis 0 and along the last axis, against memcpy of the 64 MiB they hold.
 * Target ratio >= 0.85 for each. Calls and memcpys alternate, after warm-up, timed in thread
 * CPU time (page faults included; waiting for a core on a shared machine left out).
 *
 * The note also gives memcpy into a newly malloc'd (untouched) buffer each time: a runner
 * that allocates each output afresh pays those page faults, and this figure shows how much.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct call {
    const pd_op *op;
    pd_tensor *inputs;
    int32_t n_inputs; /* tensors in the one (vector) input slot */
    pd_attr *attrs;
    int32_t n_attrs;
} call;

/* CPU seconds of one op call, its output released; -1 on error. */
static double time_call(const call *c)
{
    pd_arg in = {NULL, c->inputs, c->n_inputs};
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg oa = pd_arg_of(&out);
    uint64_t t0 = bench_cpu_ns();
    pd_status st = pd_op_run(c->op, &in, 1, c->attrs, c->n_attrs, &oa, 1);
    pd_tensor_release(&out);
    uint64_t t1 = bench_cpu_ns();
    if (st != PD_OK) {
        bench_report_error(pd_op_name(c->op), st);
        return -1;
    }
    return (double)(t1 - t0) / 1e9;
}

static double time_memcpy(void *dst, const void *src, size_t bytes)
{
    uint64_t t0 = bench_cpu_ns();
    memcpy(dst, src, bytes);
    bench_escape(dst);
    return (double)(bench_cpu_ns() - t0) / 1e9;
}

static double time_memcpy_fresh(const void *src, size_t bytes)
{
    uint64_t t0 = bench_cpu_ns();
    void *dst = malloc(bytes);
    if (!dst)
        return -1;
    memcpy(dst, src, bytes);
    bench_escape(dst);
    free(dst);
    return (double)(bench_cpu_ns() - t0) / 1e9;
}

/* Measures `c` against memcpy of `bytes` (the output's size: read + written = 2 * bytes). */
static int figure(const char *name, const call *c, size_t bytes, const char *what)
{
    const int warmup = bench_smoke ? 1 : 3, samples = bench_smoke ? 1 : 21;
    char *src = malloc(bytes), *dst = malloc(bytes);
    double *p = calloc(samples, sizeof *p), *b = calloc(samples, sizeof *b),
           *f = calloc(samples, sizeof *f);
    int rc = 1, n = 0;
    if (!src || !dst || !p || !b || !f)
        goto done;
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    for (int i = 0; i < warmup; ++i)
        if (time_call(c) < 0 || time_memcpy(dst, src, bytes) < 0)
            goto done;
    double moved = 2.0 * (double)bytes / 1e9;
    for (; n < samples; ++n) {
        double tp = time_call(c), tb = time_memcpy(dst, src, bytes);
        double tf = time_memcpy_fresh(src, bytes);
        if (tp <= 0 || tb <= 0 || tf <= 0)
            goto done;
        p[n] = moved / tp;
        b[n] = moved / tb;
        f[n] = moved / tf;
    }
    bench_stats fs = bench_stats_of(f, n);
    char note[256];
    snprintf(note, sizeof note, "%s; memcpy into a new malloc'd buffer each time: %.2f GB/s",
             what, fs.median);
    bench_row r = {name, "GB/s", bench_stats_of(p, n), bench_stats_of(b, n), true, true,
                   "ratio >= 0.85", BENCH_RATIO_AT_LEAST, 0.85, note};
    bench_emit(&r);
    rc = 0;
done:
    if (rc)
        bench_emit_missing(name, "GB/s", "ratio >= 0.85", true, "could not run (see stderr)");
    free(src);
    free(dst);
    free(p);
    free(b);
    free(f);
    return rc;
}

static int relu_figure(pd_registry *reg)
{
    const int64_t n = bench_smoke ? 1024 : (int64_t)16 << 20; /* 64 MiB of float32 */
    pd_tensor x = PD_TENSOR_UNDEFINED;
    call c = {pd_op_find(reg, "custom_relu"), &x, 1, NULL, 0};
    if (!c.op || pd_tensor_empty(&x, PD_FLOAT32, pd_place_cpu(), 1, &n) != PD_OK) {
        bench_report_error("custom_relu input", pd_last_status());
        bench_emit_missing("relu_bandwidth", "GB/s", "ratio >= 0.85", true, "no custom_relu");
        return 1;
    }
    bench_fill_random_signs(pd_data(&x), n);
    int rc = figure("relu_bandwidth", &c, pd_nbytes(&x),
                    "custom_relu on 64 MiB float32 of random signs vs memcpy of 64 MiB");
    pd_tensor_release(&x);
    return rc;
}

static int concat_figure(pd_registry *reg, const char *name, int64_t axis, const char *what)
{
    const int64_t shape[2] = {bench_smoke ? 8 : 4096, bench_smoke ? 16 : 2048}; /* 32 MiB */
    pd_tensor xs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_attr axis_attr = pd_attr_of_int64("axis", axis);
    call c = {pd_op_find(reg, "custom_concat"), xs, 2, &axis_attr, 1};
    int rc = 1;
    if (!c.op || pd_tensor_full(&xs[0], PD_FLOAT32, pd_place_cpu(), 2, shape, 1.0) != PD_OK ||
        pd_tensor_full(&xs[1], PD_FLOAT32, pd_place_cpu(), 2, shape, -1.0) != PD_OK) {
        bench_report_error("custom_concat inputs", pd_last_status());
        bench_emit_missing(name, "GB/s", "ratio >= 0.85", true, "no custom_concat");
    } else {
        rc = figure(name, &c, 2 * pd_nbytes(&xs[0]), what);
    }
    pd_tensor_release(&xs[0]);
    pd_tensor_release(&xs[1]);
    return rc;
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    pd_registry *reg = NULL;
    pd_module *mod = NULL;
    const char *src[] = {BENCH_RELU_SOURCE, BENCH_CONCAT_SOURCE};
    if (pd_registry_create(&reg) == PD_OK && bench_jit_load(reg, "bench_two", src, 2, NULL, &mod) == PD_OK) {
        relu_figure(reg);
        concat_figure(reg, "concat_bandwidth_axis0", 0,
                      "custom_concat of two [4096,2048] float32 along axis 0 vs memcpy of 64 MiB");
        concat_figure(reg, "concat_bandwidth_lastaxis", -1,
                      "custom_concat of two [4096,2048] float32 along axis -1 vs memcpy of 64 MiB");
    } else {
        bench_emit_missing("relu_bandwidth", "GB/s", "ratio >= 0.85", true, "JIT load failed");
    }
    pd_registry_destroy(reg);
    return bench_finish();
}
