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
    for rows in (1, 5, 700):
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


@pytest.fixture(scope="module")
def asan_program(built):
    """ort_infer built with AddressSanitizer: LeakSanitizer then checks, at exit, every
    allocation of the process (ORT's, the pdext library's) whether instrumented or not."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    program = built["work"] / "ort_infer_asan"
    done = subprocess.run([cc, "-std=c11", "-O1", "-g", "-fsanitize=address",
                           str(EXAMPLE / "ort_infer.c"), str(built["work"] / "libonnxruntime.so.1"),
                           "-Wl,-rpath,$ORIGIN", "-ldl", "-o", str(program)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("the C compiler cannot build with -fsanitize=address: " + done.stderr[-300:])
    return program


def run_asan(program, lib, model, x):
    text = "\n".join(" ".join("%.9g" % v for v in row) for row in x) + "\n"
    env = {"PATH": "/nonexistent", "ASAN_OPTIONS": "detect_leaks=1:exitcode=23"}
    return subprocess.run([str(program), str(lib), str(model), str(x.shape[0]), str(x.shape[1])],
                          input=text, capture_output=True, text=True, env=env)


def test_no_leak_when_sessions_and_the_library_go(built, asan_program, tmp_path):
    # A session that ran, one whose creation failed in the pdext kernel (no axis), and one of a
    # library with a MindSpore AOT function (its state is made on the first run and freed when
    # the library is unloaded): LeakSanitizer finds nothing left at exit in any of them.
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    for rows in (3, 600):  # small calls copy the op's outputs, larger ones write into ORT's
        done = run_asan(asan_program, built["lib"], built["model"],
                        np.resize(x, (rows, 8)).astype(np.float32))
        assert done.returncode == 0 and "LeakSanitizer" not in done.stderr, done.stderr
    m = onnx.load(str(built["model"]))
    del [n for n in m.graph.node if n.op_type == "custom_concat"][0].attribute[:]
    onnx.save(m, str(tmp_path / "no_axis.onnx"))
    done = run_asan(asan_program, built["lib"], tmp_path / "no_axis.onnx", x)
    assert done.returncode == 1 and "'axis'" in done.stderr, done.stderr
    assert "LeakSanitizer" not in done.stderr, done.stderr

    aot_lib = tmp_path / "libaot_ort.so"
    done = subprocess.run([pdext_command(), "bundle", "--onnxruntime", "-o", str(aot_lib),
                           str(CONCAT), "%s:ScaleCumsum" % (ROOT / "examples/aot/scale_cumsum.cc"),
                           "--inputs", "1", "--attr", "scale: float", "--attr", "bias: float"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("ScaleCumsum", ["x"], ["c"], domain="pdext", scale=0.5, bias=1.0),
         helper.make_node("custom_concat", ["c", "x"], ["y"], domain="pdext", axis=0)],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("pdext", 1)])
    onnx.checker.check_model(model)
    onnx.save(model, str(tmp_path / "aot.onnx"))
    for rows in (3, 600):
        x = np.random.default_rng(rows).standard_normal((rows, 8)).astype(np.float32)
        done = run_asan(asan_program, aot_lib, tmp_path / "aot.onnx", x)
        assert done.returncode == 0 and "LeakSanitizer" not in done.stderr, done.stderr
        expected = np.concatenate([0.5 * np.cumsum(x.ravel()).reshape(x.shape) + 1.0, x])
        np.testing.assert_allclose(parse(done.stdout), expected, rtol=1e-4, atol=1e-3)
