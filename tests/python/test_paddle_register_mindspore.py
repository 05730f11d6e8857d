"""Paddle and MindSpore in one process with pdext (each case in a child process: this one imports
neither). Importing mindspore before paddle works, and then pdext ops registered with Paddle and
pdext calls on MindSpore tensors both run there; importing mindspore after paddle fails upstream
(oneDNN: libmindspore_ops_cpu.so wants a dnnl symbol that Paddle's copy of oneDNN, loaded
first, lacks), and with pdext in between it fails the same way, as an ImportError, not a crash.
examples/paddle/README.md says which order works."""

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import frameworks_wanted, ROOT

# conftest's require_framework imports the framework; here both are found without importing
# either (the children import them), with the same rule: left out of the run, or (without
# PDEXT_FRAMEWORKS) not installed, skips; named but missing fails.
import importlib.util  # noqa: E402

for _name in ("paddle", "mindspore"):
    _wanted = frameworks_wanted()
    if _wanted is not None and _name not in _wanted:
        pytest.skip("%s is left out of this run (PDEXT_FRAMEWORKS=%s)"
                    % (_name, os.environ["PDEXT_FRAMEWORKS"]), allow_module_level=True)
    if importlib.util.find_spec(_name) is None:
        if _wanted is None:
            pytest.skip("%s is not installed in this Python" % _name, allow_module_level=True)
        raise ImportError("PDEXT_FRAMEWORKS names %s, which is not installed" % _name)

RELU = str(ROOT / "examples" / "paddle" / "custom_relu_op.cc")


def child(code):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=dict(os.environ), timeout=900)


def test_mindspore_then_paddle_runs_both_with_pdext():
    r = child("""
        import numpy as np
        import mindspore
        import paddle
        import pdext, pdext.paddle
        ops = pdext.load("paddle_ms_relu", [%r])
        pops = pdext.paddle.register(ops, namespace="pdms")
        x = paddle.to_tensor(np.array([-1.0, 2.0], "float32"))
        x.stop_gradient = False
        y = pops.custom_relu(x)
        y.sum().backward()
        assert y.numpy().tolist() == [0.0, 2.0], y.numpy()
        assert x.grad.numpy().tolist() == [0.0, 1.0], x.grad.numpy()
        m = mindspore.Tensor(np.array([-3.0, 4.0], "float32"))
        out = ops.custom_relu(m)
        assert np.asarray(out.asnumpy() if hasattr(out, "asnumpy") else out).tolist() == [0.0, 4.0]
        print("both ok")
    """ % RELU)
    assert r.returncode == 0 and "both ok" in r.stdout, r.stdout[-2000:] + r.stderr[-3000:]


def test_mindspore_after_paddle_fails_upstream_as_an_import_error_with_pdext_too():
    r = child("""
        import paddle
        import pdext, pdext.paddle
        try:
            import mindspore
        except ImportError as e:
            print("ImportError:", e)
            raise SystemExit(3)
        print("imported")
    """)
    if r.returncode == 0 and "imported" in r.stdout:
        pytest.skip("this mindspore imports after paddle (the upstream clash is gone)")
    assert r.returncode == 3, "not an ImportError (rc %d): %s" % (r.returncode, r.stderr[-3000:])
    assert "ImportError" in r.stdout
