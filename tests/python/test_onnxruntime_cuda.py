"""pdext ops on ONNX Runtime's CUDA execution provider: a library built from CUDA sources
(examples/relu/relu.c with relu_cuda.cu, compiled by nvcc) registers each op for the CPU and the
CUDA providers. Without a GPU and onnxruntime-gpu only the CPU half can run: it still must (the
library loads, and ORT picks the CPU kernel); the CUDA half runs where both are present, on
ORT's compute stream, compared with numpy and with ORT's own Relu on the same provider."""

import os
import shutil
import subprocess

import numpy as np
import pytest

from conftest import RELU, pdext_command, require_framework

ort = require_framework("onnxruntime")
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

RELU_CUDA = RELU.parent / "relu_cuda.cu"


def nvcc():
    explicit = os.environ.get("NVCC")
    if explicit:
        return explicit
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    return shutil.which("nvcc") or (os.path.join(home, "bin", "nvcc")
                                    if os.access(os.path.join(home, "bin", "nvcc"), os.X_OK)
                                    else None)


@pytest.fixture(scope="module")
def cuda_library(tmp_path_factory):
    if nvcc() is None:
        pytest.skip("nvcc is not installed: a library with CUDA sources cannot be built")
    out = tmp_path_factory.mktemp("ort_cuda") / "libcudaops_ort.so"
    done = subprocess.run([pdext_command(), "bundle", "--onnxruntime", "-o", str(out), str(RELU),
                           str(RELU_CUDA)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return str(out)


def relu_model():
    model = helper.make_model(
        helper.make_graph([helper.make_node("custom_relu", ["x"], ["y"], domain="pdext"),
                           helper.make_node("Relu", ["x"], ["y_ort"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 5]),
                           helper.make_tensor_value_info("y_ort", TensorProto.FLOAT, ["n", 5])]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("pdext", 1)])
    onnx.checker.check_model(model)
    return model.SerializeToString()


def session(library, providers):
    options = ort.SessionOptions()
    options.register_custom_ops_library(library)
    return ort.InferenceSession(relu_model(), options, providers=providers)


def test_a_library_with_cuda_code_still_serves_the_cpu_provider(cuda_library):
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    y, y_ort = session(cuda_library, ["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    np.testing.assert_array_equal(y, y_ort)


def test_the_cuda_provider_runs_the_op_on_the_gpu(cuda_library):
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("this onnxruntime has no CUDAExecutionProvider (onnxruntime-gpu is not "
                    "installed, or no GPU): the CUDA half of the library cannot run here")
    options = ort.SessionOptions()
    options.register_custom_ops_library(cuda_library)
    options.enable_profiling = True
    s = ort.InferenceSession(relu_model(), options, providers=["CUDAExecutionProvider",
                                                               "CPUExecutionProvider"])
    for n in (1, 3, 1 << 12):
        x = np.random.default_rng(n).standard_normal((n, 5)).astype(np.float32)
        y, y_ort = s.run(None, {"x": x})
        np.testing.assert_array_equal(y, np.maximum(x, 0))
        np.testing.assert_array_equal(y, y_ort)
    # ORT's profile names the provider each node ran on: custom_relu ran on the GPU.
    import json
    with open(s.end_profiling()) as f:
        events = json.load(f)
    providers = {e["args"].get("provider") for e in events
                 if e.get("cat") == "Node" and e["args"].get("op_name") == "custom_relu"}
    assert providers == {"CUDAExecutionProvider"}, providers
