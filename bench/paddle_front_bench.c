/*
 * paddle_front_bench.c - paddle_front_relu_overhead: what the Paddle C++ front adds to an op
 * call. The relu of Paddle's guide (examples/paddle/custom_relu_op.cc: paddle::Tensor,
 * paddle::empty_like, PD_DISPATCH, a returned std::vector<paddle::Tensor>) against the same
 * relu written in C against extension.h (examples/relu/relu.c), both JIT-built with default
 * flags, each called by a pre-resolved handle (pd_op_run) on a one-element float32 tensor and
 * releasing its output. The two loops take turns, timed in thread CPU time; the figure is the
 * added ns per call: the Paddle relu's median minus the C relu's.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

#define PADDLE_RELU_SOURCE PDEXT_SOURCE_DIR "/examples/paddle/custom_relu_op.cc"

static double time_op(const pd_op *op, pd_tensor *x, int calls)
{
    pd_arg in = pd_arg_of(x);
    uint64_t t0 = bench_cpu_ns();
    for (int i = 0; i < calls; ++i) {
        pd_tensor out = PD_TENSOR_UNDEFINED;
        pd_arg oa = pd_arg_of(&out);
        pd_status st = pd_op_run(op, &in, 1, NULL, 0, &oa, 1);
        if (st != PD_OK) {
            bench_report_error("pd_op_run custom_relu", st);
            return -1;
        }
        pd_tensor_release(&out);
    }
    return (double)(bench_cpu_ns() - t0) / calls;
}

static int run(void)
{
    pd_registry *c_reg = NULL, *p_reg = NULL;
    pd_module *c_mod = NULL, *p_mod = NULL;
    pd_tensor x = PD_TENSOR_UNDEFINED;
    const char *c_src[] = {BENCH_RELU_SOURCE}, *p_src[] = {PADDLE_RELU_SOURCE};
    double *c = NULL, *p = NULL;
    int rc = 1;
    if (pd_registry_create(&c_reg) != PD_OK || pd_registry_create(&p_reg) != PD_OK ||
        bench_jit_load(c_reg, "bench_relu", c_src, 1, NULL, &c_mod) ||
        bench_jit_load(p_reg, "bench_paddle_relu", p_src, 1, NULL, &p_mod))
        goto done;
    const pd_op *c_op = pd_op_find(c_reg, "custom_relu"), *p_op = pd_op_find(p_reg, "custom_relu");
    if (!c_op || !p_op) {
        bench_report_error("pd_op_find custom_relu", pd_last_status());
        goto done;
    }
    if (pd_tensor_full(&x, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){1}, -0.5) != PD_OK)
        goto done;
    const int samples = bench_smoke ? 1 : 301, calls = bench_smoke ? 1 : 2000;
    c = calloc(samples, sizeof *c);
    p = calloc(samples, sizeof *p);
    if (!c || !p || time_op(c_op, &x, calls) < 0 || time_op(p_op, &x, calls) < 0)
        goto done;
    for (int s = 0; s < samples; ++s) {
        p[s] = time_op(p_op, &x, calls);
        c[s] = time_op(c_op, &x, calls);
        if (p[s] < 0 || c[s] < 0)
            goto done;
    }
    bench_stats ps = bench_stats_of(p, samples), cs = bench_stats_of(c, samples);
    char note[256];
    snprintf(note, sizeof note,
             "added %.0f ns/call: Paddle-front relu %.1f ns, C relu %.1f ns (pd_op_run, "
             "pre-resolved handles, thread CPU time)",
             ps.median - cs.median, ps.median, cs.median);
    bench_row r = {"paddle_front_relu_overhead", "ns/call", ps,  cs, true, true, "<= 150 ns added",
                   BENCH_ADDED_AT_MOST,          150,       note};
    bench_emit(&r);
    rc = 0;
done:
    free(c);
    free(p);
    pd_tensor_release(&x);
    pd_registry_destroy(c_reg);
    pd_registry_destroy(p_reg);
    return rc;
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    if (run())
        bench_emit_missing("paddle_front_relu_overhead", "ns/call", "<= 150 ns added", true,
                           "could not run the two relus (see stderr)");
    return bench_finish();
}
