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


INDEX_CHECK = r"""
import ctypes, sys
ort = ctypes.CDLL(sys.argv[1])
ort.OrtGetApiBase.restype = ctypes.POINTER(ctypes.c_void_p * 2)
base = ort.OrtGetApiBase().contents
get_api = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint32)(base[0])
table = ctypes.cast(get_api(17), ctypes.POINTER(ctypes.c_void_p))
P, VP = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
def entry(index, *args):
    return ctypes.CFUNCTYPE(P, *args)(table[index])
cpu = ctypes.c_void_p()
assert entry(69, ctypes.c_int, ctypes.c_int, VP)(1, 0, ctypes.byref(cpu)) is None  # CreateCpuMemoryInfo
data = (ctypes.c_float * 4)()
shape = (ctypes.c_int64 * 1)(4)
value = ctypes.c_void_p()
assert entry(49, P, P, ctypes.c_size_t, P, ctypes.c_size_t, ctypes.c_int, VP)(
    cpu, ctypes.addressof(data), 16, ctypes.addressof(shape), 1, 1, ctypes.byref(value)) is None
mem = ctypes.c_void_p()
assert entry(194, P, VP)(value, ctypes.byref(mem)) is None  # GetTensorMemoryInfo (pdext: 194)
same = ctypes.c_int(-1)
assert entry(70, P, P, ctypes.POINTER(ctypes.c_int))(mem, cpu, ctypes.byref(same)) is None
device = ctypes.c_int(-1)
assert entry(72, P, ctypes.POINTER(ctypes.c_int))(mem, ctypes.byref(device)) is None  # MemoryInfoGetId
print(same.value, device.value)
"""


def test_the_abi_entries_the_cuda_variant_uses_sit_where_pdext_declares_them(tmp_path):
    # ort_abi.h reaches GetTensorMemoryInfo (194) and MemoryInfoGetId (72) by index; they are
    # called here on a CPU tensor through the wheel's libonnxruntime.so (a subprocess: a wrong
    # index would crash it): the value's memory info compares equal to the CPU one it was made
    # with (CompareMemoryInfo, 70: 0) and names device 0.
    import pathlib
    import sys
    capi = pathlib.Path(ort.__file__).parent / "capi"
    lib = sorted(capi.glob("libonnxruntime.so.*"))
    if not lib:
        pytest.fail("the onnxruntime wheel at %s holds no libonnxruntime.so.*" % capi)
    done = subprocess.run([sys.executable, "-c", INDEX_CHECK, str(lib[-1])], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["0", "0"], done.stdout
