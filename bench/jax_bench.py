"""bench/jax_bench.py - pdext ops under JAX (pdext.jax) against JAX's own op, in one run:

  jax_relu_1        a jitted function that is one relu on a 1-element float32 array:
                    pdext's custom_relu (an XLA FFI custom call) vs jax.nn.relu, both jitted,
                    ns per call including jax's dispatch (block_until_ready each call);
                    ratio = pdext / jax (the issue's bound: <= 1.5)
  jax_relu_64mib    relu on a 64 MiB float32 array under jit vs the C call (the pdext op
                    called directly on a numpy array: pd_op_run on the same data), and
                    jax.nn.relu jitted for reference; bandwidth in GB/s (read + write);
                    ratio = jit / C call (the issue's bound: >= 0.9), ratio_to_jax = jit /
                    jax.nn.relu jitted. XLA hands every call a fresh result buffer (its page
                    faults bound jax's own relu too) and pdext.jax copies the runner's output
                    into it: the runner has no entry point that writes into host memory.

Each figure is the median of R samples, alternating the contenders. Prints one line per
row: <key> <value> ... Run in the framework venv with the build tree's package, e.g.

    PYTHONPATH=build/python PDEXT_CACHE_DIR=/tmp/pdext-bench /tmp/fw/v/bin/python \\
        bench/jax_bench.py [R]
"""

import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import pdext
import pdext.jax

RELU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "relu", "relu.c")


def per_call_ns(fn, x, n):
    t = time.perf_counter_ns()
    for _ in range(n):
        fn(x).block_until_ready()
    return (time.perf_counter_ns() - t) / n


def main():
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    ops = pdext.load("relu", [RELU])
    jops = pdext.jax.register(ops)

    # 1 element, jitted, dispatch included
    x1 = jnp.asarray(np.array([-0.5], dtype=np.float32))
    f_pd = jax.jit(jops.custom_relu)
    f_jax = jax.jit(jax.nn.relu)
    for f in (f_pd, f_jax):
        per_call_ns(f, x1, 2000)  # compile and warm
    pd_t, jax_t = [], []
    for _ in range(samples):
        pd_t.append(per_call_ns(f_pd, x1, 2000))
        jax_t.append(per_call_ns(f_jax, x1, 2000))
    pd_m, jax_m = statistics.median(pd_t), statistics.median(jax_t)
    print("jax_relu_1 pdext_ns %.0f jax_ns %.0f ratio %.2f" % (pd_m, jax_m, pd_m / jax_m))

    # 64 MiB, bandwidth
    n = 64 * 1024 * 1024 // 4
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    xb = jnp.asarray(host)
    contenders = {
        "jit": lambda: f_pd(xb).block_until_ready(),
        "c_call": lambda: ops.custom_relu(host),
        "jax": lambda: f_jax(xb).block_until_ready(),
    }
    np.testing.assert_array_equal(np.asarray(f_pd(xb)), np.maximum(host, 0))
    times = {k: [] for k in contenders}
    for k, fn in contenders.items():
        fn()
    for _ in range(samples):
        for k, fn in contenders.items():
            t = time.perf_counter_ns()
            fn()
            times[k].append(time.perf_counter_ns() - t)
    gbps = {k: 2 * host.nbytes / statistics.median(v) for k, v in times.items()}
    print(
        "jax_relu_64mib jit_GBps %.2f c_call_GBps %.2f jax_GBps %.2f ratio %.2f ratio_to_jax %.2f"
        % (gbps["jit"], gbps["c_call"], gbps["jax"], gbps["jit"] / gbps["c_call"],
           gbps["jit"] / gbps["jax"])
    )


if __name__ == "__main__":
    main()
