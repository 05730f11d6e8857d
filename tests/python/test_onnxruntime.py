"""pdext ops in ONNX Runtime: `pdext bundle --onnxruntime` builds a custom-op library from
examples/relu/relu.c and examples/concat/concat.c; models made with onnx.helper (accepted by
onnx.checker) run in onnxruntime.InferenceSession after
SessionOptions.register_custom_ops_library, compared with ORT's own Relu / Concat nodes in the
same session and with numpy; ORT's shape inference sees the ops' output shapes; bad models fail
with ORT's error carrying pdext's message."""

import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

from conftest import CONCAT, PY_OPS, RELU, pdext_command, require_framework

ort = require_framework("onnxruntime")
import onnx  # noqa: E402  (require_framework imported it)
from onnx import TensorProto, helper  # noqa: E402

DOMAIN = "pdext"


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    out = tmp_path_factory.mktemp("ort") / "libmyops_ort.so"
    done = subprocess.run(
        [pdext_command(), "bundle", "--onnxruntime", "-o", str(out), str(RELU), str(CONCAT)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "custom_relu" in done.stdout and "custom_concat" in done.stdout
    return str(out)


def make_model(nodes, inputs, outputs, domain=DOMAIN):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(domain, 1)]
    )
    onnx.checker.check_model(model)
    return model.SerializeToString()


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def session(library, model):
    options = ort.SessionOptions()
    options.register_custom_ops_library(library)
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def test_library_exports_only_the_ort_entry_point_and_needs_no_libpdext(library):
    lib = ctypes.CDLL(library)
    assert lib.RegisterCustomOps is not None
    for private in ("pdext_module_info", "pd_op_run", "pd_ort_register_ops", "pd_registry_create"):
        with pytest.raises(AttributeError):
            getattr(lib, private)
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed: cannot list the library's NEEDED entries")
    dyn = subprocess.run([readelf, "-d", library], capture_output=True, text=True, check=True).stdout
    needed = [line for line in dyn.splitlines() if "(NEEDED)" in line]
    assert needed and not any("pdext" in line or "onnxruntime" in line for line in needed), needed


def test_matmul_custom_relu_add_matches_the_same_graph_with_ort_relu(library):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal((16,)).astype(np.float32)
    inits = [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel()),
             helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.ravel())]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("custom_relu", ["h"], ["r"], domain=DOMAIN, name="my_relu"),
        helper.make_node("Add", ["r", "b"], ["y"]),
        helper.make_node("Relu", ["h"], ["r_ort"]),
        helper.make_node("Add", ["r_ort", "b"], ["y_ort"]),
    ]
    graph = helper.make_graph(nodes, "g", [value("x", ["n", 8])],
                              [value("y", ["n", 16]), value("y_ort", ["n", 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(DOMAIN, 1)])
    onnx.checker.check_model(model)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    y, y_ort = session(library, model.SerializeToString()).run(None, {"x": x})
    np.testing.assert_array_equal(y, y_ort)
    np.testing.assert_allclose(y, np.maximum(x @ w, 0) + b, rtol=1e-5, atol=1e-5)


# Small inputs have the op make its outputs (copied into ORT's); from 4 KiB on the op writes
# into ORT's own outputs: both ways are checked.
SHAPES = [[3, 4, 5], [3, 40, 50]]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype,elem", [(np.float32, TensorProto.FLOAT),
                                        (np.float64, TensorProto.DOUBLE)])
def test_custom_relu_matches_ort_relu_per_dtype(library, dtype, elem, shape):
    model = make_model(
        [helper.make_node("custom_relu", ["x"], ["y"], domain=DOMAIN),
         helper.make_node("Relu", ["x"], ["y_ort"])],
        [value("x", shape, elem)],
        [value("y", shape, elem), value("y_ort", shape, elem)],
    )
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    y, y_ort = session(library, model).run(None, {"x": x})
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, y_ort)


@pytest.mark.parametrize("rows", [1, 300])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_custom_concat_with_an_axis_attr_matches_ort_concat(library, axis, rows):
    shapes = {0: [(2, 3), (4, 3), (1, 3)], 1: [(2, 3), (2, 5), (2, 1)], -1: [(2, 3), (2, 5), (2, 1)]}
    arrays = [np.random.default_rng(i).standard_normal((s[0] * rows, s[1])).astype(np.float32)
              for i, s in enumerate(shapes[axis])]
    names = ["a", "b", "c"]
    model = make_model(
        [helper.make_node("custom_concat", names, ["y"], domain=DOMAIN, axis=axis),
         helper.make_node("Concat", names, ["y_ort"], axis=axis)],
        [value(n, list(a.shape)) for n, a in zip(names, arrays)],
        [value("y", ["d0", "d1"]), value("y_ort", ["d0", "d1"])],
    )
    y, y_ort = session(library, model).run(None, dict(zip(names, arrays)))
    np.testing.assert_array_equal(y, y_ort)
    np.testing.assert_array_equal(y, np.concatenate(arrays, axis=axis))


def test_ort_shape_inference_gets_the_ops_output_shapes(library):
    # The graph declares its outputs with symbolic dims only: the concrete shapes ORT reports
    # come from its shape inference, i.e. from the ops' infer functions (pd_op_infer), and
    # must equal what ORT infers for its own Concat and Relu.
    model = make_model(
        [helper.make_node("custom_concat", ["a", "b"], ["c"], domain=DOMAIN, axis=1),
         helper.make_node("custom_relu", ["c"], ["y"], domain=DOMAIN),
         helper.make_node("Concat", ["a", "b"], ["c_ort"], axis=1),
         helper.make_node("Relu", ["c_ort"], ["y_ort"])],
        [value("a", [2, 3]), value("b", [2, 5])],
        [value("y", ["p", "q"]), value("y_ort", ["r", "s"])],
    )
    outputs = {o.name: o for o in session(library, model).get_outputs()}
    assert outputs["y_ort"].shape == [2, 8]
    assert outputs["y"].shape == outputs["y_ort"].shape
    assert outputs["y"].type == "tensor(float)"


def test_symbolic_input_dims_leave_shapes_unknown_and_still_run(library):
    model = make_model(
        [helper.make_node("custom_concat", ["a", "b"], ["y"], domain=DOMAIN, axis=0)],
        [value("a", ["n", 3]), value("b", ["m", 3])],
        [value("y", ["k", 3])],
    )
    s = session(library, model)
    a, b = np.ones((2, 3), np.float32), np.zeros((4, 3), np.float32)
    np.testing.assert_array_equal(s.run(None, {"a": a, "b": b})[0], np.concatenate([a, b]))


def test_attr_of_another_onnx_type_fails_session_creation_naming_node_op_and_attr(library):
    model = make_model(
        [helper.make_node("custom_concat", ["a", "b"], ["y"], domain=DOMAIN, axis=1.5,
                          name="cat_float_axis")],
        [value("a", [2, 3]), value("b", [2, 5])], [value("y", ["d0", "d1"])],
    )
    with pytest.raises(Exception) as e:
        session(library, model)
    msg = str(e.value)
    for part in ("cat_float_axis", "custom_concat", "'axis'", "FLOAT", "int64_t"):
        assert part in msg, msg


def test_attr_missing_without_default_fails_session_creation(library):
    model = make_model(
        [helper.make_node("custom_concat", ["a", "b"], ["y"], domain=DOMAIN, name="cat_no_axis")],
        [value("a", [2, 3]), value("b", [2, 5])], [value("y", ["d0", "d1"])],
    )
    with pytest.raises(Exception) as e:
        session(library, model)
    msg = str(e.value)
    for part in ("cat_no_axis", "custom_concat", "no attr 'axis'", "without a default"):
        assert part in msg, msg


def test_dtype_the_op_does_not_dispatch_raises_with_pdexts_message(library):
    model = make_model(
        [helper.make_node("custom_relu", ["x"], ["y"], domain=DOMAIN, name="relu_int")],
        [value("x", [3], TensorProto.INT32)], [value("y", [3], TensorProto.INT32)],
    )
    s = session(library, model)
    with pytest.raises(Exception) as e:
        s.run(None, {"x": np.arange(3, dtype=np.int32)})
    msg = str(e.value)
    assert "relu_int" in msg and "custom_relu" in msg and "int32" in msg, msg
    assert "relu_forward" in msg, msg  # the op's own dispatch message, carried through


def test_inputs_the_op_refuses_at_run_time_raise_with_pdexts_message(library):
    model = make_model(
        [helper.make_node("custom_concat", ["a", "b"], ["y"], domain=DOMAIN, axis=1,
                          name="cat_bad")],
        [value("a", ["n", 3]), value("b", ["m", 5])], [value("y", ["d0", "d1"])],
    )
    s = session(library, model)
    with pytest.raises(Exception) as e:
        s.run(None, {"a": np.ones((2, 3), np.float32), "b": np.ones((3, 5), np.float32)})
    msg = str(e.value)
    assert "cat_bad" in msg and "custom_concat" in msg and "dim 0" in msg, msg


def test_an_op_the_library_lacks_is_refused_by_ort(library):
    model = make_model([helper.make_node("custom_nope", ["x"], ["y"], domain=DOMAIN)],
                       [value("x", [3])], [value("y", [3])])
    with pytest.raises(Exception) as e:
        session(library, model)
    assert "custom_nope" in str(e.value)


def test_a_library_registered_twice_into_one_options_is_refused_not_a_crash(library):
    options = ort.SessionOptions()
    model = make_model([helper.make_node("custom_relu", ["x"], ["y"], domain=DOMAIN)],
                       [value("x", [3])], [value("y", [3])])
    with pytest.raises(Exception) as e:
        options.register_custom_ops_library(library)
        options.register_custom_ops_library(library)
        ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    assert "domain" in str(e.value).lower(), str(e.value)


def test_the_domain_option_names_the_ops_domain(library, tmp_path):
    out = tmp_path / "libother_ort.so"
    done = subprocess.run([pdext_command(), "bundle", "--onnxruntime", "--domain", "com.example",
                           "-o", str(out), str(RELU)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    model = make_model([helper.make_node("custom_relu", ["x"], ["y"], domain="com.example")],
                       [value("x", [4])], [value("y", [4])], domain="com.example")
    x = np.array([-1, 2, -3, 4], np.float32)
    np.testing.assert_array_equal(session(str(out), model).run(None, {"x": x})[0], np.maximum(x, 0))
    # and the default domain is not served by it
    with pytest.raises(Exception):
        session(str(out), make_model([helper.make_node("custom_relu", ["x"], ["y"], domain=DOMAIN)],
                                     [value("x", [4])], [value("y", [4])]))


@pytest.mark.parametrize("args,expected", [
    (["--domain", "x", "-o", "libx.a"], "add --onnxruntime"),
    (["--onnxruntime", "--domain", "bad domain", "-o", "libx.so"], "'bad domain'"),
    (["--onnxruntime", "-o", "libx.so", "add.cc:CustomAdd"], "--inputs"),
])
def test_the_command_refuses_what_an_ort_library_cannot_be(args, expected, tmp_path):
    done = subprocess.run([pdext_command(), "bundle"] + args + [str(RELU)], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode != 0
    assert expected in done.stderr, done.stderr


SCALE_CUMSUM = RELU.parents[1] / "aot" / "scale_cumsum.cc"


@pytest.fixture(scope="module")
def aot_library(tmp_path_factory):
    """relu.c and the MindSpore AOT function ScaleCumsum (examples/aot) in one ORT library."""
    out = tmp_path_factory.mktemp("ort_aot") / "libaotops_ort.so"
    done = subprocess.run(
        [pdext_command(), "bundle", "--onnxruntime", "-o", str(out), str(RELU),
         "%s:ScaleCumsum" % SCALE_CUMSUM, "--inputs", "1", "--attr", "scale: float",
         "--attr", "bias: float"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ScaleCumsum" in done.stdout and "custom_relu" in done.stdout, done.stdout
    return str(out)


def test_an_aot_function_runs_in_ort_beside_a_pdext_op_and_matches_numpy(aot_library):
    # x -> MatMul -> ScaleCumsum (AOT: 2 * cumsum + 0.5 over the flattened input)
    #   -> custom_relu -> Add
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 6)).astype(np.float32)
    b = rng.standard_normal((6,)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("ScaleCumsum", ["h"], ["c"], domain=DOMAIN, name="cumsum",
                              scale=2.0, bias=0.5),
             helper.make_node("custom_relu", ["c"], ["r"], domain=DOMAIN),
             helper.make_node("Add", ["r", "b"], ["y"])]
    graph = helper.make_graph(nodes, "g", [value("x", [3, 4])], [value("y", ["p", "q"])],
                              [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel()),
                               helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.ravel())])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(DOMAIN, 1)])
    onnx.checker.check_model(model)
    s = session(aot_library, model.SerializeToString())
    # the AOT function's InferShape reaches ORT's shape inference
    assert s.get_outputs()[0].shape == [3, 6]
    for _ in range(2):  # the second run reuses the state the first made (Init once per shape)
        x = rng.standard_normal((3, 4)).astype(np.float32)
        h = x @ w
        expected = np.maximum(2 * np.cumsum(h.ravel()).reshape(h.shape) + 0.5, 0) + b
        np.testing.assert_allclose(s.run(None, {"x": x})[0], expected, rtol=1e-4, atol=1e-4)


def test_an_aot_library_needs_no_pdext_library_at_run_time(aot_library):
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed: cannot list the library's NEEDED entries")
    dyn = subprocess.run([readelf, "-d", aot_library], capture_output=True, text=True,
                         check=True).stdout
    assert not any("pdext" in line for line in dyn.splitlines()
                   if "(NEEDED)" in line or "PATH)" in line), dyn
    lib = ctypes.CDLL(aot_library)
    for private in ("pd_aot_bundle_kernel", "pd_jit_build_library", "ScaleCumsum"):
        with pytest.raises(AttributeError):
            getattr(lib, private)


def test_an_aot_node_without_its_attr_fails_session_creation(aot_library):
    model = make_model([helper.make_node("ScaleCumsum", ["x"], ["y"], domain=DOMAIN,
                                         name="cumsum_no_bias", scale=2.0)],
                       [value("x", [4])], [value("y", [4])])
    with pytest.raises(Exception) as e:
        session(aot_library, model)
    msg = str(e.value)
    for part in ("cumsum_no_bias", "ScaleCumsum", "'bias'"):
        assert part in msg, msg


def test_an_aot_function_refusing_a_dtype_raises_through_ort(aot_library):
    model = make_model([helper.make_node("ScaleCumsum", ["x"], ["y"], domain=DOMAIN,
                                         name="cumsum_f64", scale=2.0, bias=0.0)],
                       [value("x", [4], TensorProto.DOUBLE)], [value("y", [4], TensorProto.DOUBLE)])
    s = session(aot_library, model)
    with pytest.raises(Exception) as e:
        s.run(None, {"x": np.ones(4)})
    msg = str(e.value)
    assert "cumsum_f64" in msg and "ScaleCumsum" in msg, msg


def test_an_ort_older_than_the_library_needs_is_refused_naming_both(library):
    # A stand-in for an old ORT's OrtApiBase: GetApi(17) answers NULL, as a runtime older than
    # API 17 does; version 1's table holds CreateStatus (entry 0), which records the message.
    messages = []
    # (callbacks return plain integers: ctypes cannot keep a returned object alive)
    create_status = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int, ctypes.c_char_p)(
        lambda code, msg: messages.append((code, msg.decode())) or 1)
    table_v1 = (ctypes.c_void_p * 1)(ctypes.cast(create_status, ctypes.c_void_p))

    old_version = ctypes.create_string_buffer(b"1.16.3")

    @ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_uint32)
    def get_api(version):
        return ctypes.addressof(table_v1) if version == 1 else 0

    @ctypes.CFUNCTYPE(ctypes.c_size_t)
    def version_string():
        return ctypes.addressof(old_version)

    class ApiBase(ctypes.Structure):
        _fields_ = [("GetApi", ctypes.c_void_p), ("GetVersionString", ctypes.c_void_p)]

    base = ApiBase(ctypes.cast(get_api, ctypes.c_void_p), ctypes.cast(version_string, ctypes.c_void_p))
    register = ctypes.CDLL(library).RegisterCustomOps
    register.restype = ctypes.c_void_p
    register.argtypes = [ctypes.c_void_p, ctypes.POINTER(ApiBase)]
    assert register(None, ctypes.byref(base)) == 1  # the status CreateStatus made
    assert len(messages) == 1, messages
    msg = messages[0][1]
    assert "1.17" in msg and "1.16.3" in msg and "myops_ort" in msg, msg


def test_pdext_add_bundle_onnxruntime_builds_the_library_in_cmake(tmp_path):
    cmake, ninja = shutil.which("cmake"), shutil.which("ninja")
    if cmake is None or ninja is None:
        pytest.skip("cmake and ninja are needed to build a CMake project")
    functions = RELU.parents[2] / "cmake" / "pdextFunctions.cmake"
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(ort_consumer C)\n"
        'set(pdext_EXECUTABLE "%s")\ninclude("%s")\n'
        'pdext_add_bundle(myops ONNXRUNTIME DOMAIN com.example SOURCES "%s"\n'
        '                 AOT "%s:ScaleCumsum" --inputs 1 --attr "scale: float"'
        ' --attr "bias: float")\n'
        "get_target_property(lib myops PDEXT_ONNXRUNTIME_LIBRARY)\n"
        'file(WRITE "${CMAKE_BINARY_DIR}/library.txt" "${lib}")\n'
        % (pdext_command(), functions, RELU, SCALE_CUMSUM))
    build = tmp_path / "build"
    for args in ([cmake, "-S", str(tmp_path), "-B", str(build), "-G", "Ninja"],
                 [cmake, "--build", str(build)]):
        done = subprocess.run(args, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    library = (build / "library.txt").read_text()
    model = make_model([helper.make_node("custom_relu", ["x"], ["y"], domain="com.example")],
                       [value("x", [3])], [value("y", [3])], domain="com.example")
    x = np.array([-2, 0.5, 3], np.float32)
    np.testing.assert_array_equal(session(library, model).run(None, {"x": x})[0], np.maximum(x, 0))
    model = make_model([helper.make_node("ScaleCumsum", ["x"], ["y"], domain="com.example",
                                         scale=3.0, bias=-1.0)],
                       [value("x", [3])], [value("y", [3])], domain="com.example")
    np.testing.assert_allclose(session(library, model).run(None, {"x": x})[0],
                               3 * np.cumsum(x) - 1)


@pytest.fixture(scope="module")
def py_ops_library(tmp_path_factory):
    """tests/python/ops/py_ops.c: ops with every attr type, two outputs, an optional input, an
    output that is its input, a vector output and an inplace op."""
    out = tmp_path_factory.mktemp("ort_pyops") / "libpyops_ort.so"
    done = subprocess.run([pdext_command(), "bundle", "--onnxruntime", "-o", str(out),
                           str(PY_OPS)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return str(out)


def run_one(library, node, inputs, n_outputs=1, elem=TensorProto.DOUBLE):
    model = make_model([node], [value(n, list(a.shape), elem) for n, a in inputs.items()],
                       [value("o%d" % i, ["d%d" % i], elem) for i in range(n_outputs)])
    return session(library, model).run(None, inputs)


def test_every_attr_type_is_read_from_the_node_or_defaulted(py_ops_library):
    x = np.zeros(3)
    node = helper.make_node("py_attrs", ["x"], ["o0"], domain=DOMAIN, b=1, i64=-5, f=1.5, d=2.5,
                            s="hello", ints=[1, 2, 3], floats=[0.25, 0.5], i64s=[10, 20])
    (y,) = run_one(py_ops_library, node, {"x": x})
    # b, i (default 7), f, d (an ONNX float), i64, len(s), sum(ints), sum(floats), sum(i64s),
    # strs (default {}: a list of strings ORT cannot read from a node, so only its default)
    np.testing.assert_allclose(y, [1, 7, 1.5, 2.5, -5, 5, 6, 0.75, 30, 0])


def test_an_output_dtype_other_than_orts_type_is_refused_not_written(py_ops_library):
    # py_attrs makes float64 whatever X is. With X's shape known, ORT's inference learns that
    # from the op and refuses a graph that declares the output float32, at session creation:
    node = helper.make_node("py_attrs", ["x"], ["o0"], domain=DOMAIN, name="attrs_f32", b=0,
                            i64=1)
    model = make_model([node], [value("x", [3], TensorProto.FLOAT)],
                       [value("o0", ["n"], TensorProto.FLOAT)])
    with pytest.raises(Exception) as e:
        session(py_ops_library, model)
    assert "attrs_f32" in str(e.value) and "double" in str(e.value), str(e.value)
    # with a symbolic X the op's inference cannot run, ORT types the output like X, and the
    # kernel refuses at run time, before anything is written into ORT's smaller buffer
    model = make_model([node], [value("x", ["n"], TensorProto.FLOAT)],
                       [value("o0", ["n"], TensorProto.FLOAT)])
    s = session(py_ops_library, model)
    for _ in range(2):  # and again, after the node's output was made once
        with pytest.raises(Exception) as e:
            s.run(None, {"x": np.zeros(3, np.float32)})
        msg = str(e.value)
        assert "attrs_f32" in msg and "float64" in msg and "float32" in msg, msg


@pytest.mark.parametrize("n", [1, 1000])
def test_two_outputs_set_by_the_kernel_and_an_optional_input(py_ops_library, n):
    a, b = np.arange(4.0 * n), np.tile([0.5, -1, 2, 3], n)
    s, d = run_one(py_ops_library, helper.make_node("py_pair", ["a", "b"], ["o0", "o1"],
                                                    domain=DOMAIN), {"a": a, "b": b}, 2)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(d, a - b)
    (y,) = run_one(py_ops_library, helper.make_node("py_opt", ["a", "b"], ["o0"], domain=DOMAIN),
                   {"a": a, "b": b})
    np.testing.assert_array_equal(y, a + b)
    (y,) = run_one(py_ops_library, helper.make_node("py_opt", ["a"], ["o0"], domain=DOMAIN),
                   {"a": a})
    np.testing.assert_array_equal(y, a + 100)


@pytest.mark.parametrize("n", [6, 6000])
def test_an_output_that_is_its_input_and_a_vector_output(py_ops_library, n):
    x = np.arange(float(n))
    (y,) = run_one(py_ops_library, helper.make_node("py_alias", ["x"], ["o0"], domain=DOMAIN),
                   {"x": x})
    np.testing.assert_array_equal(y, x)
    parts = run_one(py_ops_library, helper.make_node("py_split", ["x"], ["o0", "o1", "o2"],
                                                     domain=DOMAIN, parts=3), {"x": x}, 3)
    for got, want in zip(parts, np.split(x, 3)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [5, 5000])
def test_an_inplace_op_leaves_orts_input_unchanged(py_ops_library, n):
    x = np.arange(float(n))
    keep = x.copy()
    model = make_model([helper.make_node("py_inplace", ["x"], ["o0"], domain=DOMAIN),
                        helper.make_node("Identity", ["x"], ["o1"])],
                       [value("x", [n], TensorProto.DOUBLE)],
                       [value("o0", [n], TensorProto.DOUBLE), value("o1", [n], TensorProto.DOUBLE)])
    y, same = session(py_ops_library, model).run(None, {"x": x})
    np.testing.assert_array_equal(y, keep * 2)
    np.testing.assert_array_equal(x, keep)  # the caller's array
    np.testing.assert_array_equal(same, keep)  # what the graph's other consumers of x see
