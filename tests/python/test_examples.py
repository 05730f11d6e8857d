"""The Python examples (examples/python) run as printed in their README."""

import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def run(name):
    out = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_relu_numpy():
    assert "custom_relu(x) = [[0.0, 0.5], [2.0, 0.0]]" in run("relu_numpy.py")


def test_concat_numpy():
    text = run("concat_numpy.py")
    assert "[[0.0, 1.0, 2.0, 0.0, 1.0], [3.0, 4.0, 5.0, 2.0, 3.0]]" in text
    assert "pdext.OpError: custom_concat: attr 'axis' is 5" in text


@pytest.mark.parametrize("name", ["relu_torch.py", "train_torch.py"])
def test_torch_examples(name):
    pytest.importorskip("torch", reason="python3-torch is not installed")
    run(name)
