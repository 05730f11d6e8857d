"""bench/python_bench.py - the in-Python half of bench_python (python_bench.c runs it): times
pdext calls from Python and prints one line per sample set on stdout,

    <key> <median ns> <p10 ns> <p90 ns> <samples>

or "<key> skip <reason>" for a figure it cannot measure. Modes:

  call R N            ops.custom_relu(x) on a 1-element float32 numpy array (call_pdext) and
                      numpy's own relu, np.maximum(x, zero), on it (call_numpy); ns per call,
                      R samples of N calls each, alternating
  torch R N DIR       a PyTorch cpp_extension PYBIND11 relu (-O2, built in DIR by
                      torch.utils.cpp_extension.load) on a 1-element torch tensor (torch_ext),
                      ops.custom_relu on the numpy array (torch_pdext_numpy) and on the torch
                      tensor (torch_pdext_torch); alternating
  bandwidth R MIB     ops.custom_relu on a MIB-MiB float32 array of random signs, ns per call
                      (bw_pdext, then every sample on a bw_pdext_samples line), each output
                      dropped as it comes

Per-call figures use the thread's CPU time around N calls (time.thread_time_ns, as the C
benchmarks' bench_cpu_ns: time spent waiting for a core on a shared machine is left out; the
calls are single-threaded), the loop costing the same for pdext and its baseline. The
bandwidth figure uses the wall clock: the kernel may run on several threads
(pd_parallel_for), as it does when the C side calls it. PDEXT_CACHE_DIR (the bench's private cache) holds the module.
"""

import os
import sys
import time

import bench_rows

RELU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "relu", "relu.c")

TORCH_RELU = r"""
#include <torch/extension.h>

torch::Tensor relu(torch::Tensor x)
{
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const float *a = x.data_ptr<float>();
    float *b = out.data_ptr<float>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i)
        b[i] = a[i] > 0 ? a[i] : 0;
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("relu", &relu, "relu (float32)"); }
"""


def stats(samples):
    s = sorted(samples)
    n = len(s)
    pick = lambda q: s[min(n - 1, int(q * (n - 1) + 0.5))]
    return "%.6g %.6g %.6g %d" % (pick(0.5), pick(0.1), pick(0.9), n)


def per_call(fn, arg, n):
    return bench_rows.per_call(fn, n, arg, clock=time.thread_time_ns)


def interleave(figures, reps, n):
    """{key: (fn, arg)} timed in turn, reps samples each of n calls; prints every key."""
    for fn, arg in figures.values():
        per_call(fn, arg, max(1, n // 10))  # warm-up
    samples = {k: [] for k in figures}
    for _ in range(reps):
        for k, (fn, arg) in figures.items():
            samples[k].append(per_call(fn, arg, n))
    for k in figures:
        print(k, stats(samples[k]))


def mode_call(reps, n):
    import numpy as np
    import pdext

    ops = pdext.load("relu", [RELU])
    x = np.ones(1, np.float32)
    zero = np.zeros((), np.float32)
    relu = ops.custom_relu
    interleave({"call_pdext": (relu, x), "call_numpy": (lambda a: np.maximum(a, zero), x)}, reps, n)


def mode_torch(reps, n, build_dir):
    try:
        import torch
        import torch.utils.cpp_extension as ext
    except ImportError:
        print("torch_ext skip python3-torch is not installed")
        return
    import numpy as np
    import pdext

    os.makedirs(build_dir, exist_ok=True)
    src = os.path.join(build_dir, "bench_torch_relu.cpp")
    if not os.path.exists(src) or open(src).read() != TORCH_RELU:
        with open(src, "w") as f:
            f.write(TORCH_RELU)
    try:
        mod = ext.load("pdext_bench_torch_relu", [src], extra_cflags=["-O2"],
                       build_directory=build_dir, verbose=False)
    except Exception as e:  # no compiler, no headers, a failing build: the row is skipped
        lines = str(e).splitlines() or ["?"]
        why = next((ln.split("error: ", 1)[1] for ln in lines if "error: " in ln), lines[0])
        if "torch/extension.h" in why or "pybind11" in why:
            why += " (Debian ships the headers in libtorch-dev and pybind11-dev)"
        print("torch_ext skip the torch extension did not build: %s" % why)
        return
    ops = pdext.load("relu", [RELU])
    x = np.ones(1, np.float32)
    t = torch.ones(1)
    assert mod.relu(t).item() == 1.0 and ops.custom_relu(t).item() == 1.0
    interleave({"torch_ext": (mod.relu, t), "torch_pdext_numpy": (ops.custom_relu, x),
                "torch_pdext_torch": (ops.custom_relu, t)}, reps, n)


def mode_bandwidth(reps, mib):
    import numpy as np
    import pdext

    ops = pdext.load("relu", [RELU])
    n = mib * (1 << 20) // 4
    x = (np.random.default_rng(0).random(n, dtype=np.float32) - 0.5).astype(np.float32)
    relu = ops.custom_relu
    relu(x)  # warm-up
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        relu(x)
        samples.append(time.perf_counter_ns() - t0)
    print("bw_pdext", stats(samples))
    print("bw_pdext_samples", " ".join("%d" % v for v in samples))


def main(argv):
    mode = argv[1]
    if mode == "call":
        mode_call(int(argv[2]), int(argv[3]))
    elif mode == "torch":
        mode_torch(int(argv[2]), int(argv[3]), argv[4])
    elif mode == "bandwidth":
        mode_bandwidth(int(argv[2]), int(argv[3]))
    else:
        sys.exit("python_bench.py: unknown mode %r" % mode)


if __name__ == "__main__":
    main(sys.argv)
