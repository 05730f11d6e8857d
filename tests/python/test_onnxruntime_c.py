"""pdext ops in ONNX Runtime from a C program (examples/inference, "Deploying in ONNX Runtime"):
the README's commands — `pdext bundle --onnxruntime`, ort_model.py, the C program ort_infer.c
compiled against the libonnxruntime.so that the onnxruntime wheel ships — then the program
runs with an empty environment (no Python, no compiler on PATH, no cache) and its output is
compared with numpy on the model's own initializers."""

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import CONCAT, RELU, ROOT, pdext_command, require_framework

ort = require_framework("onnxruntime")
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

EXAMPLE = ROOT / "examples" / "inference"


def ort_runtime():
    """The wheel's libonnxruntime.so.<version> (it ships no unversioned name, no headers)."""
    capi = pathlib.Path(ort.__file__).parent / "capi"
    found = sorted(capi.glob("libonnxruntime.so.*"))
    if not found:
        pytest.fail("the onnxruntime wheel at %s holds no libonnxruntime.so.*" % capi)
    return found[-1]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The README's steps: the library, the model and the program, in a scratch directory."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler (cc) to build the example program")
    work = tmp_path_factory.mktemp("ort_c")
    lib = work / "libmyops_ort.so"
    done = subprocess.run([pdext_command(), "bundle", "--onnxruntime", "-o", str(lib),
                           str(RELU), str(CONCAT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    model = work / "model.onnx"
    subprocess.run([sys.executable, str(EXAMPLE / "ort_model.py"), str(model)], check=True,
                   capture_output=True)
    runtime = ort_runtime()
    # The wheel's library has the SONAME libonnxruntime.so.1 but no file of that name: the
    # program finds it through a link of that name beside itself ($ORIGIN).
    (work / "libonnxruntime.so.1").symlink_to(runtime)
    program = work / "ort_infer"
    done = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2",
                           str(EXAMPLE / "ort_infer.c"), str(work / "libonnxruntime.so.1"),
                           "-Wl,-rpath,$ORIGIN", "-ldl", "-o", str(program)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return {"work": work, "lib": lib, "model": model, "program": program}


def run_program(built, x, model=None, lib=None):
    text = "\n".join(" ".join("%.9g" % v for v in row) for row in x) + "\n"
    return subprocess.run(
        [str(built["program"]), str(lib or built["lib"]), str(model or built["model"]),
         str(x.shape[0]), str(x.shape[1])],
        input=text, capture_output=True, text=True,
        env={"PATH": "/nonexistent", "HOME": str(built["work"])})  # no python, no compiler


def parse(stdout):
    lines = stdout.strip().splitlines()
    head = lines[0]
    assert head.startswith("y: float32 ["), stdout
    shape = tuple(int(d) for d in head[len("y: float32 ["):-1].split(" x "))
    values = np.array([[float(v) for v in line.split()] for line in lines[1:]], np.float32)
    return values.reshape(shape)


def test_the_c_program_runs_the_model_and_matches_numpy(built):
    m = onnx.load(str(built["model"]))
    init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for rows in (1, 5):
        x = np.random.default_rng(rows).standard_normal((rows, 8)).astype(np.float32)
        done = run_program(built, x)
        assert done.returncode == 0, done.stderr
        expected = np.concatenate([np.maximum(x @ init["W"], 0) + init["b"], x], axis=1)
        np.testing.assert_allclose(parse(done.stdout), expected, rtol=1e-5, atol=1e-5)


def test_the_c_program_needs_neither_python_nor_libpdext(built):
    for binary in (built["program"], built["lib"]):
        dyn = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True)
        if dyn.returncode != 0:
            pytest.skip("readelf (binutils) is not installed")
        needed = [line for line in dyn.stdout.splitlines() if "(NEEDED)" in line]
        assert not any("python" in line or "pdext" in line for line in needed), needed


def test_a_bad_input_fails_with_pdexts_message_through_ort(built):
    # x with 7 columns: MatMul with the 8 x 4 weight refuses it first (ORT's own message) ...
    done = run_program(built, np.ones((2, 7), np.float32))
    assert done.returncode == 1 and "running the model" in done.stderr, done.stderr
    # ... and a model whose custom_concat node lacks its axis fails at session creation,
    # naming the node, the op and the attribute.
    m = onnx.load(str(built["model"]))
    concat = [n for n in m.graph.node if n.op_type == "custom_concat"][0]
    del concat.attribute[:]
    bad = built["work"] / "no_axis.onnx"
    onnx.save(m, str(bad))
    done = run_program(built, np.ones((2, 8), np.float32), model=bad)
    assert done.returncode == 1, done.stdout
    for part in ("creating the session", "'concat'", "custom_concat", "'axis'"):
        assert part in done.stderr, done.stderr


def test_a_missing_library_is_orts_error_not_a_crash(built):
    done = run_program(built, np.ones((1, 8), np.float32), lib=built["work"] / "nope.so")
    assert done.returncode == 1 and "registering the custom-op library" in done.stderr, \
        done.stderr
