"""bench/onnxruntime_bench.py - pdext ops in ONNX Runtime against ORT's own op, in the ROW format
of bench/bench_util.h:

  ort_relu_call     session.run of a model of one custom_relu node (a library built by
                    `pdext bundle --onnxruntime` from examples/relu/relu.c) on a 1-element
                    float32 tensor, against the same model with ORT's Relu; us per run, target
                    ratio <= 1.2.
  ort_relu_64mib    the same on 64 MiB of float32 (16 Mi elements); GB/s read + written,
                    target ratio >= 0.9.

Both sessions run in this process with ORT's defaults, their repetitions interleaved so that a
burst of load hits both alike; medians of the samples.

Usage: PDEXT_COMMAND=<build>/cli/pdext PDEXT_CACHE_DIR=<dir> python3 onnxruntime_bench.py
       [--smoke]   (the framework venv's python; PDEXT_COMMAND defaults to `pdext` in PATH)
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from bench_rows import interleaved_medians, per_call, row

ROOT = pathlib.Path(__file__).resolve().parents[1]


def build_library(out):
    cmd = os.environ.get("PDEXT_COMMAND") or shutil.which("pdext")
    if cmd is None:
        sys.exit("onnxruntime_bench.py: set PDEXT_COMMAND to the pdext command")
    subprocess.run([cmd, "bundle", "--onnxruntime", "-o", out, str(ROOT / "examples/relu/relu.c")],
                   check=True, stdout=subprocess.DEVNULL)


def session(op, domain, n, library):
    node = helper.make_node(op, ["x"], ["y"], domain=domain)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("pdext", 1)])
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.register_custom_ops_library(library)
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def measure(n, reps, samples, library):
    ours, theirs = session("custom_relu", "pdext", n, library), session("Relu", "", n, library)
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    feed = {"x": x}
    np.testing.assert_array_equal(ours.run(None, feed)[0], theirs.run(None, feed)[0])
    m = interleaved_medians({"a": lambda: per_call(ours.run, reps, None, feed),
                             "b": lambda: per_call(theirs.run, reps, None, feed)}, samples)
    return m["a"], m["b"]


def main():
    smoke = "--smoke" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        library = os.path.join(tmp, "librelu_ort.so")
        build_library(library)
        p, b = measure(1, 20 if smoke else 20000, 1 if smoke else 7, library)
        row("ort_relu_call", "us", p * 1e6, b * 1e6, "<= 1.2", p / b <= 1.2,
            "session.run, 1 float32: custom_relu (pdext bundle --onnxruntime) vs ORT Relu")
        n = 1024 if smoke else 16 << 20
        p, b = measure(n, 1 if smoke else 10, 1 if smoke else 7, library)
        gb = 2 * 4 * n / 1e9
        row("ort_relu_64mib", "GB/s", gb / p, gb / b, ">= 0.9", (gb / p) / (gb / b) >= 0.9,
            "session.run, 64 MiB float32 (read + written): custom_relu vs ORT Relu")


if __name__ == "__main__":
    main()
