/*
 * bandwidth_bench.c - relu_bandwidth and concat_bandwidth: the example kernels, JIT-built with
 * the JIT's default flags and run through the runner, against two baselines that stream the
 * same bytes in the same run.
 *
 * Every buffer is 4x the last-level cache (bench_stream_bytes: read from sysfs, at least
 * 64 MiB), so that each figure is a memory figure: with a buffer about the size of a large L3
 * the copy partly stays in cache, and glibc's memcpy switches to non-temporal stores near the
 * cache size, so that memcpy alone can run slower than the kernel it is meant to bound.
 *
 * relu_bandwidth: custom_relu on a float32 tensor of random signs (each call releasing its
 * output, as a host would), bytes read + written per second.
 * concat_bandwidth_axis0 / _lastaxis: custom_concat of two [rows, 2048] float32 tensors of half
 * the buffer each, along axis 0 and along the last axis.
 * Each figure gets two rows, target ratio >= 0.85 for both: against memcpy between two touched
 * buffers (<figure>), and against a plain read-write copy loop built by the JIT with its own
 * flags (<figure>_vs_loop, bench/copy_loop.c: the same code generation as the kernels, normal
 * stores). Calls and baselines alternate after warm-up, timed in thread CPU time (page faults
 * included; waiting for a core on a shared machine left out).
 *
 * The note also gives memcpy into a newly malloc'd (untouched) buffer each time: a runner
 * that allocates each output afresh pays those page faults, and this figure shows how much.
 */
#include "bench_util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bench/copy_loop.c, as the JIT built it. */
typedef void (*copy_fn)(float *restrict dst, const float *restrict src, int64_t n);

#define BENCH_COPY_LOOP_SOURCE PDEXT_SOURCE_DIR "/bench/copy_loop.c"

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

static double time_loop(copy_fn copy, void *dst, const void *src, size_t bytes)
{
    uint64_t t0 = bench_cpu_ns();
    copy(dst, src, (int64_t)(bytes / sizeof(float)));
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

/* The two rows of a figure that could not be measured. */
static void emit_missing_pair(const char *name, const char *reason)
{
    char loop_name[96];
    snprintf(loop_name, sizeof loop_name, "%s_vs_loop", name);
    bench_emit_missing(name, "GB/s", "ratio >= 0.85", true, reason);
    bench_emit_missing(loop_name, "GB/s", "ratio >= 0.85", true, reason);
}

/* Measures `c` against memcpy and against the JIT-built copy loop of `bytes` (the output's
 * size: read + written = 2 * bytes). */
static int figure(const char *name, const call *c, size_t bytes, const char *what, copy_fn copy)
{
    const int warmup = bench_smoke ? 1 : 3, samples = bench_smoke ? 1 : 21;
    char *src = malloc(bytes), *dst = malloc(bytes);
    double *p = calloc(samples, sizeof *p), *b = calloc(samples, sizeof *b),
           *l = calloc(samples, sizeof *l), *f = calloc(samples, sizeof *f);
    int rc = 1, n = 0;
    if (!src || !dst || !p || !b || !l || !f)
        goto done;
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    for (int i = 0; i < warmup; ++i)
        if (time_call(c) < 0 || time_memcpy(dst, src, bytes) < 0 ||
            (copy && time_loop(copy, dst, src, bytes) < 0))
            goto done;
    double moved = 2.0 * (double)bytes / 1e9;
    for (; n < samples; ++n) {
        double tp = time_call(c), tb = time_memcpy(dst, src, bytes);
        double tl = copy ? time_loop(copy, dst, src, bytes) : 1;
        double tf = time_memcpy_fresh(src, bytes);
        if (tp <= 0 || tb <= 0 || tl <= 0 || tf <= 0)
            goto done;
        p[n] = moved / tp;
        b[n] = moved / tb;
        l[n] = moved / tl;
        f[n] = moved / tf;
    }
    const char *llc_from = NULL;
    size_t llc = bench_llc_bytes(&llc_from);
    bench_stats ps = bench_stats_of(p, n), bs = bench_stats_of(b, n), ls = bench_stats_of(l, n);
    bench_stats fs = bench_stats_of(f, n);
    static char note[2][400];
    snprintf(note[0], sizeof note[0],
             "%s; %zu %s per buffer (last-level cache %zu KiB, %s); baseline memcpy between "
             "touched buffers; JIT-built copy loop %.2f GB/s; memcpy into a new malloc'd buffer "
             "each time: %.2f GB/s",
             what, bytes >= (1u << 20) ? bytes >> 20 : bytes >> 10,
             bytes >= (1u << 20) ? "MiB" : "KiB", llc >> 10, llc_from, ls.median, fs.median);
    snprintf(note[1], sizeof note[1],
             "the same op against a plain read-write copy loop built by the JIT with its default "
             "flags (bench/copy_loop.c); memcpy %.2f GB/s",
             bs.median);
    bench_row r = {name, "GB/s", ps, bs, true, true, "ratio >= 0.85", BENCH_RATIO_AT_LEAST,
                   0.85, note[0]};
    bench_emit(&r);
    char loop_name[96];
    snprintf(loop_name, sizeof loop_name, "%s_vs_loop", name);
    if (copy) {
        bench_row rl =
            {loop_name, "GB/s", ps, ls, true, true, "ratio >= 0.85", BENCH_RATIO_AT_LEAST,
             0.85,      note[1]};
        bench_emit(&rl);
    } else {
        bench_emit_missing(loop_name, "GB/s", "ratio >= 0.85", true,
                           "the JIT-built copy loop was not found (see stderr)");
    }
    rc = 0;
done:
    if (rc)
        emit_missing_pair(name, "could not run (see stderr)");
    free(src);
    free(dst);
    free(p);
    free(b);
    free(l);
    free(f);
    return rc;
}

static int relu_figure(pd_registry *reg, copy_fn copy)
{
    const int64_t n = (int64_t)(bench_stream_bytes() / sizeof(float));
    pd_tensor x = PD_TENSOR_UNDEFINED;
    call c = {pd_op_find(reg, "custom_relu"), &x, 1, NULL, 0};
    if (!c.op || pd_tensor_empty(&x, PD_FLOAT32, pd_place_cpu(), 1, &n) != PD_OK) {
        bench_report_error("custom_relu input", pd_last_status());
        emit_missing_pair("relu_bandwidth", "no custom_relu");
        return 1;
    }
    bench_fill_random_signs(pd_data(&x), n);
    int rc = figure("relu_bandwidth", &c, pd_nbytes(&x),
                    "custom_relu on float32 of random signs, one thread (PDEXT_NUM_THREADS=1)",
                    copy);
    pd_tensor_release(&x);
    return rc;
}

static int concat_figure(pd_registry *reg, const char *name, int64_t axis, const char *what,
                         copy_fn copy)
{
    /* Two inputs of half the stream buffer each. */
    const int64_t cols = 2048;
    const int64_t rows = (int64_t)(bench_stream_bytes() / 2 / (sizeof(float) * (size_t)cols));
    const int64_t shape[2] = {rows > 0 ? rows : 1, cols};
    pd_tensor xs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_attr axis_attr = pd_attr_of_int64("axis", axis);
    call c = {pd_op_find(reg, "custom_concat"), xs, 2, &axis_attr, 1};
    int rc = 1;
    if (!c.op || pd_tensor_full(&xs[0], PD_FLOAT32, pd_place_cpu(), 2, shape, 1.0) != PD_OK ||
        pd_tensor_full(&xs[1], PD_FLOAT32, pd_place_cpu(), 2, shape, -1.0) != PD_OK) {
        bench_report_error("custom_concat inputs", pd_last_status());
        emit_missing_pair(name, "no custom_concat");
    } else {
        rc = figure(name, &c, 2 * pd_nbytes(&xs[0]), what, copy);
    }
    pd_tensor_release(&xs[0]);
    pd_tensor_release(&xs[1]);
    return rc;
}

/* pd_bench_copy_floats from the loaded module's library (already loaded: RTLD_NOLOAD). */
static copy_fn find_copy_loop(pd_module *mod, void **handle)
{
    const char *path = pd_module_path(mod);
    *handle = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void *sym = *handle ? dlsym(*handle, "pd_bench_copy_floats") : NULL;
    if (!sym)
        fprintf(stderr, "bench: pd_bench_copy_floats not found in %s: %s\n",
                path ? path : "(no path)", dlerror());
    copy_fn fn;
    memcpy(&fn, &sym, sizeof fn); /* object pointer to function pointer, as POSIX allows */
    return fn;
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    /* One thread on both sides: custom_relu splits large tensors over pd_parallel_for, whose
     * pool would otherwise put two cores against the one of memcpy and the copy loop (the
     * pool's scaling is parallel_for_softmax's row). Set before the pool's first use. */
    setenv("PDEXT_NUM_THREADS", "1", 1);
    pd_registry *reg = NULL;
    pd_module *mod = NULL;
    void *handle = NULL;
    const char *src[] = {BENCH_RELU_SOURCE, BENCH_CONCAT_SOURCE, BENCH_COPY_LOOP_SOURCE};
    if (pd_registry_create(&reg) == PD_OK &&
        bench_jit_load(reg, "bench_bandwidth", src, 3, NULL, &mod) == PD_OK) {
        copy_fn copy = find_copy_loop(mod, &handle);
        relu_figure(reg, copy);
        concat_figure(reg, "concat_bandwidth_axis0", 0,
                      "custom_concat of two [rows, 2048] float32 along axis 0", copy);
        concat_figure(reg, "concat_bandwidth_lastaxis", -1,
                      "custom_concat of two [rows, 2048] float32 along axis -1", copy);
    } else {
        emit_missing_pair("relu_bandwidth", "JIT load failed");
    }
    if (handle)
        dlclose(handle);
    pd_registry_destroy(reg);
    return bench_finish();
}
