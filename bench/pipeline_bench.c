/*
 * pipeline_bench.c - the executor (pdext_executor.h) against the synchronous runner doing the
 * same work in the same run, alternating samples:
 *
 *   pipeline_two_streams      two independent chains of relu on 64 Ki float32, each on its own
 *                             executor stream, against one thread running both with pd_run;
 *                             ops per ms, target ratio >= 1.7 (what two cores can give).
 *   pipeline_chain_small      one dependent chain of relu on 256 float32: the hand-off's price
 *                             where the kernel is tiny; time per op, target ratio <= 1.2.
 *   pipeline_chain_small_queued  that chain with every call handed to the worker
 *                             (inline_bytes -1): the hand-off's own price, reported.
 *   pipeline_chain_large      one dependent chain of relu on 64 MiB: target ratio <= 1.05.
 *   pipeline_wait_each        a chain of relu on 64 Ki float32 (past the size run inline) that
 *                             waits for each call's result before the next: what a host that
 *                             reads every result pays for the hand-off and the wait, reported.
 *
 * The op is JIT-built from the source below with the JIT's default flags. Times are wall
 * time (the pipeline's work is on other threads) and include waiting for the chain's end.
 */
#include "bench_util.h"
#include "pdext_executor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char relu_source[] =
    "/* bench_relu: Out = max(X, 0) on float32 (written by bench/pipeline_bench.c). */\n"
    "#include \"extension.h\"\n"
    "static void relu(pd_kernel_ctx *ctx)\n"
    "{\n"
    "    const pd_tensor *x = pd_input(ctx, 0);\n"
    "    const float *in = pd_data(x);\n"
    "    float *out = pd_data(pd_output(ctx, 0));\n"
    "    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)\n"
    "        out[i] = in[i] > 0 ? in[i] : 0;\n"
    "}\n"
    "PD_BUILD_OP(bench_relu, .inputs = {\"X\"}, .outputs = {\"Out\"}, .kernel = relu);\n";

static const pd_op *relu_op;

/* One op of a chain: *cur = relu(*cur), synchronously or on executor stream `stream`. */
static bool step(pd_executor *ex, int32_t stream, pd_tensor *cur)
{
    pd_tensor next = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(cur), out = pd_arg_of(&next);
    pd_status s = ex ? pd_op_run_async(ex, stream, relu_op, &in, 1, NULL, 0, &out, 1)
                     : pd_op_run(relu_op, &in, 1, NULL, 0, &out, 1);
    if (s != PD_OK)
        return false;
    pd_tensor_release(cur);
    *cur = next;
    return true;
}

/* Runs `chains` chains of `ops` relus each on `n` elements (interleaved, one op of each in
 * turn); with `ex`, chain c on stream c, and with `wait_each` a wait for each call's result
 * before the next call. Returns the wall time in ns, -1 on failure. */
static double run_chains(pd_executor *ex, int chains, int ops, int64_t n, bool wait_each)
{
    pd_tensor cur[2];
    for (int c = 0; c < chains; ++c) {
        if (pd_tensor_empty(&cur[c], PD_FLOAT32, pd_place_cpu(), 1, &n) != PD_OK)
            return -1;
        bench_fill_random_signs(cur[c].data, n);
    }
    bool ok = true;
    uint64_t t0 = bench_now_ns();
    for (int k = 0; ok && k < ops; ++k)
        for (int c = 0; ok && c < chains; ++c)
            ok = step(ex, c, &cur[c]) && (!wait_each || pd_tensor_wait(ex, &cur[c]) == PD_OK);
    for (int c = 0; ok && c < chains; ++c)
        ok = pd_tensor_wait(ex, &cur[c]) == PD_OK;
    uint64_t t1 = bench_now_ns();
    for (int c = 0; c < chains; ++c)
        pd_tensor_release(&cur[c]);
    return ok ? (double)(t1 - t0) : -1;
}

typedef struct figure {
    const char *name, *unit, *target, *note;
    int samples; /* pairs of runs (executor, synchronous), at most MAX_SAMPLES */
    int chains, ops;
    int64_t n;
    bench_goal goal;
    double limit;
    bool per_ms;    /* ops per ms (higher is better) instead of us per op */
    bool queued;    /* through an executor that runs no call inline (inline_bytes -1) */
    bool wait_each; /* the result of each call waited for before the next call */
} figure;

#define MAX_SAMPLES 41

/* Runs of the executor and of pd_op_run in pairs, alternating which goes first (the one
 * that runs first in each pair read ~2% slower on this box); the row's ratio is the median
 * of the pairs' ratios (bench_emit_paired). */
static void measure(pd_executor *ex, const figure *f)
{
    const int samples = bench_smoke ? 1 : f->samples < MAX_SAMPLES ? f->samples : MAX_SAMPLES;
    const int ops = bench_smoke ? 4 : f->ops;
    const int64_t n = bench_smoke ? 64 : f->n;
    double p[MAX_SAMPLES], b[MAX_SAMPLES], pairs[MAX_SAMPLES];
    bool ok = run_chains(ex, f->chains, ops, n, f->wait_each) > 0 &&
              run_chains(NULL, f->chains, ops, n, false) > 0;
    for (int k = 0; ok && k < samples; ++k) {
        double tp, tb;
        if (k % 2 == 0) {
            tp = run_chains(ex, f->chains, ops, n, f->wait_each);
            tb = run_chains(NULL, f->chains, ops, n, false);
        } else {
            tb = run_chains(NULL, f->chains, ops, n, false);
            tp = run_chains(ex, f->chains, ops, n, f->wait_each);
        }
        ok = tp > 0 && tb > 0;
        double total = (double)ops * f->chains;
        p[k] = f->per_ms ? total / (tp / 1e6) : tp / 1e3 / total;
        b[k] = f->per_ms ? total / (tb / 1e6) : tb / 1e3 / total;
        pairs[k] = p[k] / b[k];
    }
    if (!ok) {
        fprintf(stderr, "pipeline_bench: %s: %s\n", f->name, pd_last_error());
        bench_emit_missing(f->name, f->unit, f->target, true, "could not run (see stderr)");
        return;
    }
    bench_row r = {f->name,
                   f->unit,
                   bench_stats_of(p, samples),
                   bench_stats_of(b, samples),
                   true,
                   true,
                   f->target,
                   f->goal,
                   f->limit,
                   f->note};
    bench_emit_paired(&r, pairs, samples);
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0}; /* where its calls ran, all rows so far */
    if (pd_executor_get_counts(ex, &c) == PD_OK)
        fprintf(stderr,
                "  %s: executor so far: %llu calls handed over, %llu run by the caller (%llu "
                "of them as handing over did not pay), %llu trials\n",
                f->name, (unsigned long long)c.handed_over, (unsigned long long)c.ran_here,
                (unsigned long long)c.ran_here_unpaid, (unsigned long long)c.trials);
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    static const figure figures[] = {
        {"pipeline_two_streams", "ops/ms", "ratio >= 1.7",
         "two independent chains of relu on 64 Ki float32, one per executor stream; baseline: "
         "one thread running both with pd_op_run",
         9, 2, 2000, 65536, BENCH_RATIO_AT_LEAST, 1.7, true, false, false},
        {"pipeline_chain_small", "us/op", "ratio <= 1.2",
         "one dependent chain of relu on 256 float32 through the executor; baseline: pd_op_run", 41,
         1, 4000, 256, BENCH_RATIO_AT_MOST, 1.2, false, false, false},
        {"pipeline_chain_small_queued", "us/op", "-",
         "the same chain with every call handed to the worker (inline_bytes -1): the hand-off's "
         "price, reported (no target)",
         41, 1, 4000, 256, BENCH_NOT_APPLICABLE, 0, false, true, false},
        {"pipeline_chain_large", "us/op", "ratio <= 1.05",
         "one dependent chain of relu on 64 MiB through the executor; baseline: pd_op_run", 9, 1, 8,
         16 << 20, BENCH_RATIO_AT_MOST, 1.05, false, false, false},
        {"pipeline_wait_each", "us/op", "-",
         "a chain of relu on 64 Ki float32 through the executor, each call's result waited for "
         "before the next call; baseline: pd_op_run (reported, no target)",
         9, 1, 4000, 65536, BENCH_NOT_APPLICABLE, 0, false, false, true},
    };
    const int n_figures = (int)(sizeof figures / sizeof figures[0]);
    pd_registry *reg = NULL;
    pd_executor *ex = NULL, *ex_queued = NULL;
    pd_module *mod = NULL;
    pd_executor_options o = {sizeof o, 2, 0, 0, 0}, oq = {sizeof o, 1, 0, -1, 0};
    char *path = bench_write_source("bench_pipeline_relu.c", relu_source);
    const char *sources[1] = {path};
    bool ok = path && pd_registry_create(&reg) == PD_OK &&
              bench_jit_load(reg, "bench_pipeline_relu", sources, 1, NULL, &mod) == PD_OK &&
              (relu_op = pd_op_find(reg, "bench_relu")) != NULL &&
              pd_executor_create(reg, &o, &ex) == PD_OK &&
              pd_executor_create(reg, &oq, &ex_queued) == PD_OK;
    /* PDEXT_BENCH_FIGURE=<part of a row's name>: that row only (for profiling one). */
    const char *only = getenv("PDEXT_BENCH_FIGURE");
    for (int i = 0; i < n_figures; ++i) {
        if (only != NULL && strstr(figures[i].name, only) == NULL)
            continue;
        if (ok)
            measure(figures[i].queued ? ex_queued : ex, &figures[i]);
        else
            bench_emit_missing(figures[i].name, figures[i].unit, figures[i].target, true,
                               "set-up failed (see stderr)");
    }
    if (!ok)
        fprintf(stderr, "pipeline_bench: %s\n", pd_last_error());
    pd_executor_destroy(ex);
    pd_executor_destroy(ex_queued);
    pd_registry_destroy(reg);
    free(path);
    return bench_finish();
}
