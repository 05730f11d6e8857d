"""bench/ms_extension_python.py - MindSpore CustomOpBuilder sources through pdext against
MindSpore's own builder, in the ROW format of bench/bench_util.h. Needs mindspore and pybind11
(the framework venv); run with that venv's python:

  ms_ext_add3_call        the tutorial's add3 (examples/ms_extension/add3.cc) on 2-element
                          int32 mindspore.Tensors: pdext.CustomOpBuilder's module against
                          mindspore.ops.CustomOpBuilder's (PyNative, CPU), same source, same
                          tensors; us per call (each timed loop ends by reading the last
                          result, so MindSpore's queued work is counted); target ratio <= 0.25.
  ms_ext_add3_call_numpy  the same pdext call on numpy arrays, against MindSpore's module call.
  ms_ext_add3_vs_ms_add   pdext's add3 on mindspore.Tensors against MindSpore's own
                          ops.add(ops.add(x, y), z) on them (no target: for reference).
  ms_ext_cold_build       (--cold only: minutes) a cold build of add3.cc by each builder, in
                          fresh directories (their modules then serve the call rows);
                          target ratio <= 0.5. bench/run.sh passes --cold outside smoke mode.

Usage: PYTHONPATH=<build>/python PDEXT_CACHE_DIR=<dir> <framework venv>/bin/python \
           bench/ms_extension_python.py [--smoke] [--cold]
"""
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

import pdext
from bench_rows import interleaved_medians, per_call_synced, row

ROOT = pathlib.Path(__file__).resolve().parents[1]
ADD3 = ROOT / "examples" / "ms_extension" / "add3.cc"
SMOKE = "--smoke" in sys.argv


def per_call_us(call, sync, n):
    return per_call_synced(call, n, sync) * 1e6


def alternate(a, b, reps, n):
    """Medians of `reps` alternating measurements a(n) and b(n) (a burst of load hits both)."""
    m = interleaved_medians({"a": lambda: a(n), "b": lambda: b(n)}, reps)
    return m["a"], m["b"]


def load_both(name_ms, name_pd, build_dir, cache_dir=None):
    """MindSpore's module and pdext's of add3.cc, and the seconds each load took."""
    from mindspore.ops import CustomOpBuilder

    t = time.perf_counter()
    theirs = CustomOpBuilder(name_ms, [str(ADD3)], backend="CPU", build_dir=build_dir).load()
    ms_s = time.perf_counter() - t
    if cache_dir is not None:
        os.environ["PDEXT_CACHE_DIR"] = cache_dir
        os.makedirs(cache_dir, mode=0o700)
    t = time.perf_counter()
    ours = pdext.CustomOpBuilder(name_pd, [str(ADD3)], backend="CPU").load()
    return theirs, ours, ms_s, time.perf_counter() - t


def main():
    import mindspore as ms

    if "--cold" in sys.argv:
        # Both builders from nothing, in fresh directories, MindSpore's first; the modules
        # then serve the call rows.
        work = tempfile.mkdtemp(prefix="pdext-ms-bench-")
        theirs, ours, ms_cold, pd_cold = load_both(
            "ms_cold_add3", "pdext_cold_add3", os.path.join(work, "ms_cold"),
            os.path.join(work, "pdext_cold"))
        row("ms_ext_cold_build", "s", pd_cold, ms_cold, "<= 0.5", lambda r: r <= 0.5,
            "cold build and import of add3.cc, fresh directories, MindSpore's first")
    else:
        # The builds live in the JIT cache (MindSpore's Ninja directory too), named as
        # tests/python/test_ms_extension_mindspore.py names them: a run after the tests builds
        # nothing.
        theirs, ours, _, _ = load_both(
            "ms_ref_add3", "pdext_ms_add3",
            os.path.join(os.environ["PDEXT_CACHE_DIR"], "mindspore-builds", "ms_ref_add3"))
    x = ms.Tensor(np.array([1, 2], np.int32))
    xn = np.array([1, 2], np.int32)
    assert (ours.add3(x, x, x).asnumpy() == theirs.add3(x, x, x).asnumpy()).all()
    n, reps = (10, 1) if SMOKE else (2000, 7)
    read = lambda r: r.asnumpy()  # noqa: E731
    pd_ms, ms_call = alternate(
        lambda k: per_call_us(lambda: ours.add3(x, x, x), read, k),
        lambda k: per_call_us(lambda: theirs.add3(x, x, x), read, k), reps, n)
    row("ms_ext_add3_call", "us/call", pd_ms, ms_call, "<= 0.25", lambda r: r <= 0.25,
        "add3 on 2-element int32 mindspore.Tensors; baseline: mindspore.ops.CustomOpBuilder "
        "module of the same source")
    pd_np, ms_call2 = alternate(
        lambda k: per_call_us(lambda: ours.add3(xn, xn, xn), lambda r: r, k),
        lambda k: per_call_us(lambda: theirs.add3(x, x, x), read, k), reps, n)
    row("ms_ext_add3_call_numpy", "us/call", pd_np, ms_call2, "<= 0.25", lambda r: r <= 0.25,
        "pdext on numpy arrays; baseline: MindSpore's module on mindspore.Tensors")
    add = ms.ops.add
    pd_ms2, ms_add = alternate(
        lambda k: per_call_us(lambda: ours.add3(x, x, x), read, k),
        lambda k: per_call_us(lambda: add(add(x, x), x), read, k), reps, n)
    row("ms_ext_add3_vs_ms_add", "us/call", pd_ms2, ms_add, "-", None,
        "baseline: mindspore.ops.add(ops.add(x, y), z)")


if __name__ == "__main__":
    main()
