"""bench/jax_bench.py - pdext ops under JAX (pdext.jax) against their baselines from the same
run, in the ROW format of bench/bench_util.h (bench/run.sh runs it on
PDEXT_BENCH_FRAMEWORK_PYTHON):

  jax_relu_call        a jitted function that is one relu on a 1-element float32 array:
                       pdext's custom_relu (an XLA FFI custom call) vs jax.nn.relu, both
                       jitted; us per call including jax's dispatch (block_until_ready each
                       call); target ratio <= 1.5.
  jax_relu_64mib       relu on 64 MiB of float32 (16 Mi elements) under jit vs the C call
                       (the pdext op called directly on a numpy array: pd_op_run on the same
                       data, its output from the runner's memory cache); GB/s read + written;
                       target ratio >= 0.9. The kernel writes into XLA's result buffer, but
                       XLA allocates a fresh one per call (glibc maps blocks this large anew),
                       which the kernel must zero-fill on first touch: the gap left (the
                       handler asks for huge pages, which saves the page faults, not the zeroing).
  jax_relu_64mib_jax   the same jitted custom_relu vs jax.nn.relu jitted, for reference (no
                       target): the same fresh buffer bounds jax's own relu too.

Each figure is the median of the samples, the contenders alternating so that a burst of load
hits both alike.

Usage: PYTHONPATH=<build>/python PDEXT_CACHE_DIR=<dir> python jax_bench.py [--smoke]
       (a python with jax, e.g. the framework venv's)
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import pdext
import pdext.jax
from bench_rows import interleaved_medians, per_call, row

RELU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "relu", "relu.c")


def medians(contenders, reps, samples):
    """Median seconds per call of each contender, samples alternating between them."""
    for fn in contenders.values():
        fn()  # compile and warm
    return interleaved_medians(
        {k: (lambda fn=fn: per_call(fn, reps)) for k, fn in contenders.items()}, samples)


def main():
    smoke = "--smoke" in sys.argv
    ops = pdext.load("relu", [RELU])
    jops = pdext.jax.register(ops)
    f_pd = jax.jit(jops.custom_relu)
    f_jax = jax.jit(jax.nn.relu)

    x1 = jnp.asarray(np.array([-0.5], dtype=np.float32))
    m = medians(
        {"pd": lambda: f_pd(x1).block_until_ready(), "jax": lambda: f_jax(x1).block_until_ready()},
        20 if smoke else 2000,
        1 if smoke else 15,
    )
    row("jax_relu_call", "us", m["pd"] * 1e6, m["jax"] * 1e6, "<= 1.5", m["pd"] / m["jax"] <= 1.5,
        "jitted call, 1 float32: custom_relu (XLA FFI custom call) vs jax.nn.relu")

    n = 1024 if smoke else 16 << 20
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    xb = jnp.asarray(host)
    np.testing.assert_array_equal(np.asarray(f_pd(xb)), np.maximum(host, 0))
    m = medians(
        {
            "pd": lambda: f_pd(xb).block_until_ready(),
            "c": lambda: ops.custom_relu(host),
            "jax": lambda: f_jax(xb).block_until_ready(),
        },
        1 if smoke else 5,
        1 if smoke else 9,
    )
    gb = 2 * host.nbytes / 1e9
    pd_bw, c_bw, jax_bw = gb / m["pd"], gb / m["c"], gb / m["jax"]
    row("jax_relu_64mib", "GB/s", pd_bw, c_bw, ">= 0.9", pd_bw / c_bw >= 0.9,
        "jitted custom_relu on 64 MiB float32 (read + written) vs the C call (pd_op_run)")
    row("jax_relu_64mib_jax", "GB/s", pd_bw, jax_bw, "-", None,
        "jitted custom_relu on 64 MiB float32 vs jax.nn.relu jitted (reference)")


if __name__ == "__main__":
    main()
