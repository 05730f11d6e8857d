"""bench/paddle_bench.py - pdext ops inside real Paddle against Paddle's own custom op built from
the same source, in the ROW format of bench/bench_util.h:

  paddle_relu_call   pops.custom_relu(x) (pdext.paddle.register over pdext.load of
                     examples/paddle/custom_relu_op.cc) on a 1-element float32 paddle.Tensor with
                     autograd on (stop_gradient=False), against the custom_relu that
                     paddle.utils.cpp_extension.load builds from the same file; us per call,
                     target ratio <= 1.0.
  paddle_relu_train  the same call plus backward() through the grad op (custom_relu_grad),
                     against Paddle's build; us per step, reported, target ratio <= 1.0.
  paddle_plain_call  the pdext op called directly (no register) on a 1-element paddle.Tensor
                     without autograd (DLPack's C exchange API both ways), against Paddle's
                     build on the same tensor; us per call, target ratio <= 1.0.
  paddle_cold_build  a cold pdext.load of custom_relu_op.cc (an empty private PDEXT_CACHE_DIR,
                     default settings) against paddle.utils.cpp_extension.load of the same
                     file into an empty private build_directory; s per build, target ratio
                     <= 0.3. Each build runs in a fresh python of its own (a module name
                     Paddle has loaded cannot be loaded again), timing the load call only,
                     not the imports; median of the samples, pdext's and Paddle's interleaved.
                     This build also starts precompiling paddle/extension.h in the background
                     (jit/jit_pch.c); the bench waits for that job (untimed) before it times
                     anything else, so that it takes no CPU from the next build timed.
  paddle_cold_warm   a second cold module in that cache (defaults): it loads the precompiled
                     header the first one made: the cold figure of every module after the
                     first with the same compiler and flags; target ratio <= 0.3.
  paddle_cold_nopch  the first build with PDEXT_JIT_PCH=0 (no background job); reported.

Both run in this process, their repetitions interleaved so that a burst of load hits both
alike; medians of the samples. Paddle's build goes to a directory of its own under
PDEXT_CACHE_DIR (reused by the next run), not to ~/.cache/paddle_extensions.

Usage: PYTHONPATH=<build>/python PDEXT_CACHE_DIR=<dir> python paddle_bench.py [--smoke] [--cold]
       (--cold: the cold-build rows only)
       (a python with paddlepaddle: the framework venv's)
"""
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import paddle

import pdext
import pdext.paddle
from bench_rows import interleaved_medians, per_call, row

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = str(ROOT / "examples" / "paddle" / "custom_relu_op.cc")


def paddle_build():
    """Paddle's own build of SOURCE. Its build prints to stdout (the rows' stream), from this
    process and from its compiler's: the file descriptor goes to stderr meanwhile."""
    from paddle.utils.cpp_extension import load

    cache = os.environ.get("PDEXT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                              "pdext")
    d = os.path.join(cache, "paddle-bench-build")
    os.makedirs(d, exist_ok=True)
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        return load(name="pdext_bench_paddle_relu", sources=[SOURCE], build_directory=d)
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def measure(ours, theirs, x, reps, samples):
    for _ in range(20):  # first calls (lazy initialisation in Paddle and pdext) are not timed
        ours(x)
        theirs(x)
    m = interleaved_medians({"a": lambda: per_call(ours, reps, x),
                             "b": lambda: per_call(theirs, reps, x)}, samples)
    return m["a"], m["b"]


# The timed build in a python of its own: argv[1] is "pdext" or "paddle", argv[2] a directory
# for its cache (PDEXT_CACHE_DIR, or Paddle's build_directory), argv[3] the module's name.
COLD_BUILD = r"""
import os, sys, time
kind, d, name, source = sys.argv[1:5]
if kind == "pdext":
    os.environ["PDEXT_CACHE_DIR"] = d
    import pdext
    t0 = time.perf_counter()
    pdext.load(name, [source])
else:
    from paddle.utils.cpp_extension import load
    os.makedirs(d)
    t0 = time.perf_counter()
    load(name=name, sources=[source], build_directory=d)
print("SECONDS", time.perf_counter() - t0, file=sys.stderr)
"""


def pch_wait(cache):
    """Waits for the background jobs making precompiled headers in `cache` (each holds its
    directory's lock until it exits)."""
    import fcntl
    import glob
    for lock in glob.glob(os.path.join(cache, "pch", "*", "lock")):
        with open(lock, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)


def cold_build(kind, d, name, pch=None):
    """Seconds that one build of SOURCE took in a fresh python (its output kept off stdout)."""
    env = dict(os.environ)
    env.pop("PDEXT_JIT_PCH", None)
    if pch is not None:
        env["PDEXT_JIT_PCH"] = pch
    r = subprocess.run([sys.executable, "-c", COLD_BUILD, kind, d, name, SOURCE],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("SECONDS ")]
    if r.returncode != 0 or not lines:
        raise RuntimeError("%s build of %s failed:\n%s" % (kind, SOURCE, r.stderr[-4000:]))
    if kind == "pdext":
        pch_wait(d)
    return float(lines[-1].split()[1])


def cold_rows(samples):
    ours, warm, nopch, theirs = [], [], [], []
    for i in range(samples):
        with tempfile.TemporaryDirectory(prefix="pdext-cold-") as tmp:
            cache = os.path.join(tmp, "cache")
            ours.append(cold_build("pdext", cache, "paddle_cold_a"))
            # a second module in the same cache: the header was precompiled by the first
            warm.append(cold_build("pdext", cache, "paddle_cold_b"))
            nopch.append(cold_build("pdext", os.path.join(tmp, "nopch"), "paddle_cold", pch="0"))
            theirs.append(cold_build("paddle", os.path.join(tmp, "paddle"),
                                     "pdext_cold_paddle_relu"))
    p, w, n, b = (statistics.median(v) for v in (ours, warm, nopch, theirs))
    note = " [samples: pdext %s, paddle %s]" % (
        " ".join("%.2f" % v for v in ours), " ".join("%.2f" % v for v in theirs))
    row("paddle_cold_build", "s", p, b, "<= 0.3", p / b <= 0.3,
        "cold pdext.load of custom_relu_op.cc (empty cache, defaults: paddle/extension.h "
        "precompiled in the background for later builds) vs "
        "paddle.utils.cpp_extension.load of it (empty build_directory), each in a fresh python"
        + note)
    row("paddle_cold_warm", "s", w, b, "<= 0.3", w / b <= 0.3,
        "a second cold module in that cache (defaults): loads the precompiled header the "
        "first build made, vs the same Paddle builds")
    row("paddle_cold_nopch", "s", n, b, "reported", True,
        "the first build with PDEXT_JIT_PCH=0 (no background job), vs the same Paddle builds")


def main():
    smoke = "--smoke" in sys.argv
    reps, samples = (20, 1) if smoke else (20000, 9)
    if "--cold" in sys.argv:  # the cold-build rows only
        cold_rows(1 if smoke else 3)
        return
    theirs = paddle_build()
    pops = pdext.paddle.register(pdext.load("paddle_bench_relu", [SOURCE]))
    x = paddle.to_tensor(np.array([0.75], np.float32))
    x.stop_gradient = False
    np.testing.assert_array_equal(pops.custom_relu(x).numpy(), theirs.custom_relu(x).numpy())
    p, b = measure(pops.custom_relu, theirs.custom_relu, x, reps, samples)
    row("paddle_relu_call", "us", p * 1e6, b * 1e6, "<= 1.0", p / b <= 1.0,
        "1 float32, autograd on: pops.custom_relu (pdext.paddle.register) vs Paddle's own build "
        "of custom_relu_op.cc")

    def step(f):
        return lambda t: f(t).backward()

    p, b = measure(step(pops.custom_relu), step(theirs.custom_relu), x, reps // 4 or 1, samples)
    row("paddle_relu_train", "us", p * 1e6, b * 1e6, "<= 1.0", p / b <= 1.0,
        "1 float32: custom_relu + backward() through custom_relu_grad, pdext vs Paddle's build")

    plain = pdext.load("paddle_bench_relu", [SOURCE])
    xs = x.detach()
    np.testing.assert_array_equal(plain.custom_relu(xs).numpy(), theirs.custom_relu(xs).numpy())
    p, b = measure(plain.custom_relu, theirs.custom_relu, xs, reps, samples)
    row("paddle_plain_call", "us", p * 1e6, b * 1e6, "<= 1.0", p / b <= 1.0,
        "1 float32, no autograd: the pdext op called on a paddle.Tensor (DLPack C exchange API) "
        "vs Paddle's own build")
    cold_rows(1 if smoke else 3)


if __name__ == "__main__":
    main()
