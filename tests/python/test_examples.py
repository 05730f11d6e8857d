"""The Python examples (examples/python) run as printed in their README, and the main
README's Python section runs as printed from the repository's root."""

import os
import pathlib
import re
import subprocess
import sys

import pytest
from conftest import require_framework

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python"


def run(name):
    out = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_relu_numpy():
    text = run("relu_numpy.py")
    assert "custom_relu(x) = [[0.0, 0.5], [2.0, 0.0]]" in text
    assert "gradcheck passed in float64" in text
    assert "9 checks, 0 failed" in text


def test_concat_numpy():
    text = run("concat_numpy.py")
    assert "[[0.0, 1.0, 2.0, 0.0, 1.0], [3.0, 4.0, 5.0, 2.0, 3.0]]" in text
    assert "gradcheck passed: True in float64" in text
    assert "pdext.OpError: custom_concat: attr 'axis' is 5" in text


def test_aot_numpy():
    text = run("aot_numpy.py")
    assert "scale_cumsum(x) = [2.5, 6.5, 12.5, 20.5]" in text
    assert "reverse, scale 1 = [10.5, 9.5, 7.5, 4.5]" in text


@pytest.mark.parametrize("name", ["relu_torch.py", "concat_torch.py"])
def test_torch_examples(name):
    require_framework("torch")
    text = run(name)
    assert "gradcheck: True" in text


def test_training_loop_lowers_the_loss():
    require_framework("torch")
    m = re.search(r"loss ([0-9.]+) -> ([0-9.]+)", run("train_torch.py"))
    assert m and float(m.group(2)) < float(m.group(1)) / 2


def test_readme_python_section_runs_as_printed():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env=dict(os.environ))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[0. 2.]" in out.stdout
    assert "custom_relu(X)" in out.stdout  # help()
    assert "0 failed" in out.stdout
