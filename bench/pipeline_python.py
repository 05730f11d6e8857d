"""bench/pipeline_python.py - the executor from Python (pdext.Executor), in the ROW format of
bench/bench_util.h, run by bench/run.sh when the Python front is built:

  python_pipeline_chain   a dependent chain of 10,000 calls alternating relu and add on 4096
                          float32 (pdext.Tensors), inside `with pdext.Executor()` against the
                          same calls made synchronously; calls per ms, target ratio >= 1.5.
  python_pipeline_caller  the caller's time per submitted call in that chain (submission only,
                          the final wait left out); target <= 1 us.

Usage: PYTHONPATH=<build>/python PDEXT_CACHE_DIR=<dir> python3 pipeline_python.py [--smoke]
"""
import statistics
import sys
import time

import numpy as np

import pdext
from bench_rows import row

ADD_SOURCE = r"""
#include "extension.h"
static void add_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *y = pd_input(ctx, 1);
    const float *a = pd_data(x), *b = pd_data(y);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = a[i] + b[i];
}
static void like_x_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
}
static void like_x_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, pd_input(ctx, 0)->dtype); }
PD_BUILD_OP(bench_add, .inputs = {"X", "Y"}, .outputs = {"Out"}, .kernel = add_kernel,
            .infer_shape = like_x_shape, .infer_dtype = like_x_dtype);
static void relu_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    const float *in = pd_data(x);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = in[i] > 0 ? in[i] : 0;
}
PD_BUILD_OP(bench_relu, .inputs = {"X"}, .outputs = {"Out"}, .kernel = relu_kernel);
"""


def chain(ops, x, b, n):
    y = x
    for _ in range(n // 2):
        y = ops.bench_add(ops.bench_relu(y), b)
    return y


def main():
    smoke = "--smoke" in sys.argv
    # fifteen pairs of samples: the median of five moved by up to 0.2 from run to run beside
    # a busy core, and of nine by up to 0.1 (bench/NOTES.md)
    n, samples = (20, 1) if smoke else (10000, 15)
    ops = pdext.load_inline("bench_pipeline_python", ADD_SOURCE)
    x = pdext.from_dlpack(np.random.default_rng(0).standard_normal(4096).astype(np.float32))
    b = pdext.from_dlpack(np.full(4096, 0.001, np.float32))
    ex = pdext.Executor()
    def piped_sample():
        t0 = time.perf_counter()
        with ex:
            y = chain(ops, x, b, n)
            t1 = time.perf_counter()
            y.numpy()
        t2 = time.perf_counter()
        return n / ((t2 - t0) * 1e3), (t1 - t0) / n * 1e6

    def sync_sample():
        t0 = time.perf_counter()
        np.asarray(chain(ops, x, b, n))
        return n / ((time.perf_counter() - t0) * 1e3)

    piped, sync, caller = [], [], []
    for k in range(samples + 1):  # the first pair is a warm-up
        # pairs, which one goes first alternating; the ratio is the median of the pairs'
        # ratios, as bench_emit_paired's (bench_util.h)
        if k % 2 == 0:
            (p, c), s = piped_sample(), sync_sample()
        else:
            s = sync_sample()
            p, c = piped_sample()
        piped.append(p)
        sync.append(s)
        caller.append(c)
    piped, sync, caller = piped[1:], sync[1:], caller[1:]
    ratio = statistics.median(p / s for p, s in zip(piped, sync))
    p, s, c = statistics.median(piped), statistics.median(sync), statistics.median(caller)
    row("python_pipeline_chain", "calls/ms", p, s, "ratio >= 1.5", ratio >= 1.5,
        "chain of %d calls alternating relu and add on 4096 float32 inside "
        "`with pdext.Executor()`; baseline: the same calls synchronously; ratio: the median "
        "of the pairs'" % n, ratio=ratio)
    row("python_pipeline_caller", "us/call", c, 1e3 / s, "<= 1 us", c <= 1.0,
        "caller's time per submitted call (the final wait left out); baseline: a synchronous "
        "call's whole time")
    print("python_pipeline: where the calls ran: %s" % ex.stats(), file=sys.stderr)
    ex.close()


if __name__ == "__main__":
    main()
