"""The framework venv: each framework that this run must have (PDEXT_FRAMEWORKS) imports in a
process of its own, next to pdext, and its own relu agrees with pdext's custom_relu on the same
data, fed as the framework's array turned into numpy (zero-copy where the framework allows).
Each framework runs in its own process: some of them bundle the same native libraries (oneDNN)
in versions that clash when one process loads two."""

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import FRAMEWORKS, RELU, frameworks_wanted

# The framework's relu of [-1.5, 0, 2.25] as a numpy array, from its own op, in its own words.
FRAMEWORK_RELU = {
    "torch": "import torch; x = torch.tensor(data); y = torch.relu(x).numpy(); xs = x.numpy()",
    "jax": "import jax.numpy as jnp, jax; x = jnp.asarray(data); y = np.asarray(jax.nn.relu(x)); xs = np.asarray(x)",
    "onnxruntime": textwrap.dedent(
        """
        import onnx, onnxruntime as ort
        from onnx import helper, TensorProto
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        onnx.checker.check_model(m)
        xs = np.asarray(data, np.float32)
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        y = s.run(None, {"x": xs})[0]
        """
    ),
    "paddle": "import paddle; x = paddle.to_tensor(data); y = paddle.nn.functional.relu(x).numpy(); xs = x.numpy()",
    "mindspore": "import mindspore as ms; x = ms.Tensor(data); y = ms.ops.relu(x).asnumpy(); xs = x.asnumpy()",
}


@pytest.mark.parametrize("name", sorted(FRAMEWORKS))
def test_framework_relu_agrees_with_pdext(name, tmp_path):
    wanted = frameworks_wanted()
    if wanted is not None and name not in wanted:
        pytest.skip("%s is left out of this run (PDEXT_FRAMEWORKS=%s)" % (name, os.environ["PDEXT_FRAMEWORKS"]))
    code = "\n".join(
        [
            "import numpy as np, pdext",
            "data = np.array([-1.5, 0.0, 2.25], np.float32)",
            textwrap.dedent(FRAMEWORK_RELU[name]),
            "ops = pdext.load('relu', [%r])" % str(RELU),
            "mine = ops.custom_relu(xs)",
            "assert mine.dtype == y.dtype, (mine.dtype, y.dtype)",
            "assert np.array_equal(mine, y), (mine, y)",
            "print('agree', np.__version__)",
        ]
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    missing = "No module named" in out.stderr and out.returncode != 0
    if missing and wanted is None:
        pytest.skip("%s is not installed in this Python; ./setup.sh test installs it" % name)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    assert out.stdout.startswith("agree"), out.stdout


def test_an_unknown_framework_is_named(monkeypatch):
    monkeypatch.setenv("PDEXT_FRAMEWORKS", "torch,tensorflow")
    with pytest.raises(RuntimeError, match="tensorflow.*known frameworks are jax, mindspore, onnxruntime, paddle, torch"):
        frameworks_wanted()
