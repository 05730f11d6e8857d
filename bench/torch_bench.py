"""bench/torch_bench.py - pdext ops from PyTorch 2 against torch's own, in the ROW format of
bench/bench_util.h (the framework venv's python runs it; bench/run.sh does when
PDEXT_BENCH_FRAMEWORK_PYTHON is set):

  torch_op_call          the registered op's eager call, torch.ops.<ns>.custom_relu(t)
                         (pdext.torch.register of examples/relu/relu.c), on a 1-element float32
                         CPU tensor, against torch.relu(t); us per call, target <= 1.5.
  torch_op_vs_custom_op  the same call against a torch.library.custom_op relu written in
                         Python over the same math (torch.relu inside); target <= 1.0.
  torch_plain_call       the plain call ops.custom_relu(t) (the module of pdext.load, no torch
                         registration) on the torch tensor, against the same call on a
                         1-element numpy array; us per call, target <= 3 (and <= 1 us, in the
                         note, beside torch.from_numpy's own cost: a torch result costs at least
                         that).
  torch_relu_64mib       the registered op on 64 MiB of float32 torch tensor (16 Mi elements),
                         against the pdext op called on a numpy array over the same memory (the
                         C call: the runner on the same buffer, through the cheapest way in);
                         GB/s read + written, target >= 0.9.
  torch_compile_call     a warm torch.compile'd function (fullgraph) of the registered op on the
                         1-element tensor, against the same function called eagerly; us per
                         call, target <= 1.2. The note gives the same ratio for torch.relu
                         (torch.compile's own per-call cost on a tiny input).

Per-call figures are the thread's CPU time over N calls (time.thread_time_ns, as
bench/python_bench.py: time spent waiting for a core on a shared machine is left out), the
contenders' samples interleaved so that a burst of load hits both alike; medians of the samples.
The 64 MiB figure is wall clock (the kernel may use several threads).

Usage: PYTHONPATH=<build>/python PDEXT_CACHE_DIR=<dir> python torch_bench.py [--smoke]
"""
import os
import pathlib
import sys
import time

import numpy as np
import torch

import pdext
import pdext.torch
from bench_rows import interleaved_medians, per_call, row

ROOT = pathlib.Path(__file__).resolve().parents[1]


def per_call_us(fn, arg, n):
    return per_call(fn, n, arg, clock=time.thread_time) * 1e6


def compare(fns, args, n, samples):
    """Median us per call of each fn (on its arg), samples interleaved."""
    m = interleaved_medians({k: (lambda fn=fn, arg=arg: per_call_us(fn, arg, n))
                             for k, (fn, arg) in enumerate(zip(fns, args))}, samples)
    return [m[k] for k in range(len(fns))]


def main():
    smoke = "--smoke" in sys.argv
    n, samples = (20, 1) if smoke else (20000, 9)
    ops = pdext.load("relu", [str(ROOT / "examples" / "relu" / "relu.c")])
    tops = pdext.torch.register(ops, namespace="pdext_bench")
    op = torch.ops.pdext_bench.custom_relu
    native, why = pdext.torch.native_kernels()
    kernel = "native C++ kernel" if native else "Python kernel (%s)" % why

    @torch.library.custom_op("pdext_bench_py::relu", mutates_args=())
    def py_relu(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

    @py_relu.register_fake
    def _(x):
        return torch.empty_like(x)

    t = torch.tensor([0.5], dtype=torch.float32)
    a = np.array([0.5], dtype=np.float32)
    assert torch.equal(op(t), torch.relu(t)) and torch.equal(py_relu(t), torch.relu(t))
    assert torch.equal(ops.custom_relu(t), torch.relu(t))

    p, b, c = compare([op, torch.relu, py_relu], [t, t, t], n, samples)
    row("torch_op_call", "us", p, b, "<= 1.5", p / b <= 1.5,
        "torch.ops eager call, 1 float32 CPU: pdext.torch.register(relu) vs torch.relu; %s; a "
        "torch.library.custom_op relu (Python) took %.3g us" % (kernel, c))
    row("torch_op_vs_custom_op", "us", p, c, "<= 1.0", p / c <= 1.0,
        "torch.ops eager call, 1 float32 CPU: pdext.torch.register(relu) vs a Python "
        "torch.library.custom_op relu over torch.relu")

    p, b, w = compare([ops.custom_relu, ops.custom_relu, torch.from_numpy], [t, a, a], n, samples)
    row("torch_plain_call", "us", p, b, "<= 3", p / b <= 3 and p <= 1.0,
        "ops.custom_relu(t), 1 float32: torch tensor vs numpy array (target also <= 1 us: %s); "
        "torch tensors in and out through DLPack's C exchange API (__dlpack_c_exchange_api__) "
        "where torch has it; torch.from_numpy alone (torch's cheapest wrapping of existing "
        "memory) took %.3g us" % ("met" if p <= 1.0 else "not met", w))

    size = 1024 if smoke else 16 << 20
    big = torch.randn(size, dtype=torch.float32)
    arr = big.numpy()  # the same memory
    assert torch.equal(op(big), torch.relu(big))
    reps, bsamples = (1, 1) if smoke else (5, 7)
    def wall(fn, x):  # the best of `reps` single calls, in seconds
        return min(per_call(fn, 1, x) for _ in range(reps))

    m = interleaved_medians({"p": lambda: wall(op, big), "c": lambda: wall(ops.custom_relu, arr),
                             "t": lambda: wall(torch.relu, big)}, bsamples)
    gb = 2 * 4 * size / 1e9
    pb, cb, tb = gb / m["p"], gb / m["c"], gb / m["t"]
    row("torch_relu_64mib", "GB/s", pb, cb, ">= 0.9", pb / cb >= 0.9,
        "64 MiB float32 (read + written): the registered op on a torch tensor vs the pdext op "
        "on a numpy array over the same memory; torch.relu: %.3g GB/s" % tb)

    def f(x):
        return op(x) * 2.0

    def g(x):
        return torch.relu(x) * 2.0

    cf, cg = torch.compile(f, fullgraph=True), torch.compile(g, fullgraph=True)
    for _ in range(3):
        assert torch.equal(cf(t), f(t)) and torch.equal(cg(t), g(t))
    pc, pe, gc, ge = compare([cf, f, cg, g], [t, t, t, t], max(1, n // 4), samples)
    row("torch_compile_call", "us", pc, pe, "<= 1.2", pc / pe <= 1.2,
        "warm torch.compile(fullgraph) of op(x) * 2 vs eager, 1 float32 CPU; the same for "
        "torch.relu(x) * 2: %.3g us compiled vs %.3g us eager (%.2fx)" % (gc, ge, gc / ge))


if __name__ == "__main__":
    main()
