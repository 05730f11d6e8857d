"""bench/mindspore_bench.py - pdext ops inside MindSpore (pdext.mindspore.register) against
MindSpore's own AOT custom op of the same kernel, in the ROW format of bench/bench_util.h:

  ms_relu_call   mops.custom_relu(x) in PyNative on a (4, 5) float32 mindspore.Tensor (pdext's
                 examples/relu/relu.c), against ops.Custom(func_type="aot") over
                 examples/mindspore/relu_aot.cc (the same relu as a MindSpore AOT kernel,
                 compiled by MindSpore itself with g++ as it builds AOT .so's) on the same
                 tensor; us per call, each timed loop ending by reading its last result (so
                 MindSpore's queued work is counted); target ratio <= 0.5.
  ms_relu_jit    the same two ops each inside a mindspore.jit function (the pdext op runs as an
                 ops.Custom AOT primitive over pdext's AOT shim there); us per call, for
                 reference (no target): what the shim and pdext's runner add to MindSpore's
                 AOT launch.

Both run in this process, their repetitions interleaved so that a burst of load hits both
alike; medians of the samples.

Usage: PYTHONPATH=<build>/python PDEXT_CACHE_DIR=<dir> <venv>/bin/python \
           bench/mindspore_bench.py [--smoke]
"""
import os
import pathlib
import shutil
import sys
import tempfile

import numpy as np

import mindspore as ms
from mindspore import ops

import pdext
import pdext.mindspore
from bench_rows import interleaved_medians, per_call_synced, row

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = "--smoke" in sys.argv


def per_call_us(call, n):
    call().asnumpy()  # warm
    return per_call_synced(call, n, lambda r: r.asnumpy()) * 1e6


def alternate(a, b, reps, n):
    """Medians of `reps` alternating measurements of a and b (a burst of load hits both)."""
    m = interleaved_medians({"a": lambda: per_call_us(a, n), "b": lambda: per_call_us(b, n)}, reps)
    return m["a"], m["b"]


def main():
    work = tempfile.mkdtemp(prefix="pdext-ms-bench-")
    cwd = os.getcwd()
    try:
        # MindSpore compiles "file.cc:Func" into ./custom_kernel_meta (its cache): a private
        # directory keeps the tree clean and makes its build a cold one.
        os.chdir(work)
        src = os.path.join(work, "relu_aot.cc")
        shutil.copy(ROOT / "examples" / "mindspore" / "relu_aot.cc", src)
        theirs = ops.Custom(src + ":CustomRelu", out_shape=lambda s: s, out_dtype=lambda d: d,
                            func_type="aot")
        mops = pdext.mindspore.register(pdext.load("relu", [str(ROOT / "examples" / "relu" /
                                                               "relu.c")]))
        x = ms.Tensor(np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32))
        try:  # MindSpore 2.10 under numpy 2: its first numpy bridge use fails once (upstream)
            (x * x).asnumpy()
        except (SystemError, ImportError):
            pass
        ours_out, theirs_out = mops.custom_relu(x).asnumpy(), theirs(x).asnumpy()
        if not np.array_equal(ours_out, theirs_out):
            raise SystemExit("mindspore_bench: pdext's relu and MindSpore's AOT relu differ")
        reps, n = (3, 50) if SMOKE else (9, 2000)
        a, b = alternate(lambda: mops.custom_relu(x), lambda: theirs(x), reps, n)
        row("ms_relu_call", "us", a, b, "<=0.5", lambda r: r <= 0.5,
            "PyNative (4,5) float32; baseline ops.Custom aot of examples/mindspore/relu_aot.cc "
            "built by MindSpore; medians of %d x %d calls" % (reps, n))

        @ms.jit
        def ours_jit(v):
            return mops.custom_relu(v)

        @ms.jit
        def theirs_jit(v):
            return theirs(v)

        if not np.array_equal(ours_jit(x).asnumpy(), theirs_jit(x).asnumpy()):
            raise SystemExit("mindspore_bench: the jitted relus differ")
        a, b = alternate(lambda: ours_jit(x), lambda: theirs_jit(x), reps, n)
        row("ms_relu_jit", "us", a, b, "-", None,
            "mindspore.jit function of one op, (4,5) float32, both as ops.Custom aot; "
            "medians of %d x %d calls" % (reps, n))
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
