"""MindSpore CustomOpBuilder sources (ms_extension/api.h) built and run by pdext, without
MindSpore: tests/python/ms_extension/add3.cc (the tutorial's add3) and ops.cc (a workspace, two
outputs, in-place and strided ops, the tensor-making functions, failures in every stage), checked
against numpy. test_ms_extension_mindspore.py compares the same sources with MindSpore's own
builder."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import pdext

HERE = pathlib.Path(__file__).resolve().parent
ADD3 = HERE.parents[1] / "examples" / "ms_extension" / "add3.cc"
OPS = HERE / "ms_extension" / "ops.cc"


def _have_pybind11():
    if importlib.util.find_spec("pybind11") is not None:
        return True
    return os.path.isfile("/usr/include/pybind11/pybind11.h")


pytestmark = pytest.mark.skipif(
    not _have_pybind11(),
    reason="pybind11 is not installed (pip install pybind11, or apt install pybind11-dev)",
)


@pytest.fixture(scope="module")
def add3():
    return pdext.CustomOpBuilder("pdext_ms_add3", [str(ADD3)], backend="CPU").load()


@pytest.fixture(scope="module")
def ops():
    return pdext.CustomOpBuilder("pdext_ms_ops", str(OPS), backend="CPU").load()


def test_add3_matches_numpy(add3):
    rng = np.random.default_rng(0)
    for shape in [(2,), (3, 5), (0,), ()]:
        x, y, z = (rng.integers(-100, 100, size=shape).astype(np.int32) for _ in range(3))
        out = add3.add3(x, y, z)
        assert isinstance(out, np.ndarray) and out.dtype == np.int32 and out.shape == shape
        np.testing.assert_array_equal(out, x + y + z)
    # keywords, as the source names them
    x = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(add3.add3(x=x, y=x, z=x), 3 * x)


def test_second_load_returns_the_loaded_module(add3):
    again = pdext.CustomOpBuilder("pdext_ms_add3", [str(ADD3)], backend="CPU").load()
    assert again is add3


def test_warm_load_in_a_new_process_compiles_nothing(add3):
    code = (
        "import pdext, sys\n"
        "m = pdext.CustomOpBuilder('pdext_ms_add3', [sys.argv[1]], verbose=True).load()\n"
        "import numpy as np\n"
        "x = np.arange(3, dtype=np.int32)\n"
        "assert (m.add3(x, x, x) == 3 * x).all()\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(ADD3)], capture_output=True, text=True, check=True
    )
    assert "c++" not in run.stderr and "ninja" not in run.stderr.lower(), run.stderr


def test_relu_with_workspace(ops):
    rng = np.random.default_rng(1)
    for n in [1, 7, 1000]:
        x = rng.standard_normal(n).astype(np.float32)
        np.testing.assert_array_equal(ops.relu_ws(x), np.maximum(x, 0))


def test_two_outputs_are_a_tuple(ops):
    a = np.linspace(-1, 1, 5)
    b = np.arange(5.0)
    s, d = ops.sum_diff(a, b)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(d, a - b)


def test_in_place_writes_the_callers_array(ops):
    x = np.array([1.0, -2.0, 3.5], np.float32)
    assert ops.scale_(x, 2.0) is None  # Call<0>
    np.testing.assert_array_equal(x, [2.0, -4.0, 7.0])
    # A strided view is made contiguous for the call (as MindSpore does on CPU): the write
    # lands in the copy, not in the caller's array.
    base = np.arange(6, dtype=np.float32)
    view = base[::2]
    ops.scale_(view, 10.0)
    np.testing.assert_array_equal(base, np.arange(6, dtype=np.float32))


def test_strided_inputs_only_when_asked(ops):
    s = np.arange(12, dtype=np.float32).reshape(3, 4).T  # a transposed view
    out, saw_contiguous = ops.strided_copy(s, True)
    np.testing.assert_array_equal(out, s)
    assert saw_contiguous[0] == 0  # the kernel read the strides
    out, saw_contiguous = ops.strided_copy(s, False)
    np.testing.assert_array_equal(out, s)
    assert saw_contiguous[0] == 1  # made contiguous before the function


def test_tensor_making_functions_and_tensor_ops(ops):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ints, halves, scalar, one, zero, flat, reshaped, casted, first, last = ops.made(x)
    expect = [
        (ints, np.array([1, 2, 3], np.int32)),
        (halves, np.array([0.5, 1.5], np.float16)),
        (scalar, np.array(7, np.int64)),
        (one, np.ones((2, 3), np.float32)),
        (zero, np.zeros(4, np.int64)),
        (flat, x.ravel()),
        (reshaped, x.reshape(-1, 2)),
        (casted, x.astype(np.int32)),
        (first, x.ravel()[:2]),
        (last, x.ravel()[4:]),
    ]
    for got, want in expect:
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    # a strided argument reshaped / flattened in row-major order of its elements
    t = np.arange(6, dtype=np.float32).reshape(2, 3).T
    got = ops.made(t)
    np.testing.assert_array_equal(got[5], t.ravel())
    np.testing.assert_array_equal(got[6], t.reshape(-1, 2))


def _repeat_interleave(x, counts, axis):
    # numpy's repeat is torch's repeat_interleave; independent of the op under test.
    return np.repeat(x, counts, axis=axis)


def test_gathering_and_tiling(ops):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    for dim, index, reps, counts in [
        (1, np.array([3, 0, 0, 2], np.int64), [2, 1], np.array([1, 0, 2, 3], np.int64)),
        (0, np.array([2], np.int32), [1, 2, 3], np.array([2], np.int32)),
        (-2, np.array([], np.int64), [0, 1], np.array([0, 1, 2], np.int64)),
    ]:
        picked, tiled, by_counts, by_two, sized = (
            ops.tiled(k, x, dim, index, reps, counts) for k in range(5)
        )
        np.testing.assert_array_equal(picked, np.take(x, index, axis=dim))
        np.testing.assert_array_equal(tiled, np.tile(x, reps))
        want = np.broadcast_to(counts, (x.shape[dim],)) if counts.size == 1 else counts
        np.testing.assert_array_equal(by_counts, _repeat_interleave(x, want, dim))
        np.testing.assert_array_equal(by_two, np.repeat(x.ravel(), 2))
        np.testing.assert_array_equal(sized, np.repeat(x, 3, axis=dim))
        for got in (picked, tiled, by_counts, by_two, sized):
            assert got.dtype == np.float32
    # a strided argument is read in its logical order
    t = np.arange(12, dtype=np.int64).reshape(3, 4).T
    picked, tiled, by_two = (
        ops.tiled(k, t, 0, np.array([1, 3]), [2, 1], np.array([1])) for k in (0, 1, 3)
    )
    np.testing.assert_array_equal(picked, t[[1, 3]])
    np.testing.assert_array_equal(tiled, np.tile(t, (2, 1)))
    np.testing.assert_array_equal(by_two, np.repeat(t.ravel(), 2))


def test_gathering_and_tiling_refuse_bad_arguments(ops):
    x = np.ones((2, 3), np.float32)
    cases = [
        ((0, x, 1, np.array([3]), [1, 1], np.array([1])), r"index_select: index 3 is out of "
         r"range"),
        ((0, x, 2, np.array([0]), [1, 1], np.array([1])), r"index_select: dim 2 is out of range"),
        ((0, x, 1, np.array([0.5]), [1, 1], np.array([1])), r"index must be an int32 or int64"),
        ((0, x, 1, np.zeros((1, 1), np.int64), [1, 1], np.array([1])), r"index must be 0-d or "
         r"1-d"),
        ((0, np.array(1.0, np.float32), 0, np.array([0]), [1], np.array([1])), r"the tensor is 0-d"),
        ((1, x, 1, np.array([0]), [2], np.array([1])), r"repeat: got 1 repeats for a tensor of "
         r"2"),
        ((1, x, 1, np.array([0]), [1, -1], np.array([1])), r"repeat: repeats must be >= 0"),
        ((2, x, 1, np.array([0]), [1, 1], np.array([1, 2])), r"repeats has 2 entries, but the "
         r"dimension has size 3"),
        ((2, x, 1, np.array([0]), [1, 1], np.array([1, -1, 1])), r"repeats must be >= 0, got "
         r"-1"),
    ]
    for args, message in cases:
        with pytest.raises(pdext.OpError, match=message):
            ops.tiled(*args)


def test_assign_tensor(ops):
    # As in MindSpore, the handle takes the source's tensor: its dtype, shape and values.
    x = np.arange(6, dtype=np.float64).reshape(2, 3) / 4
    got = ops.assigned(x, np.zeros(1, np.float32))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(ops.assigned(x.T, x), x.T)  # a strided source
    # the same memory, not a copy: a pdext.Tensor source comes back aliasing it
    t = pdext.from_dlpack(x)
    alias = ops.assigned(t, t)
    x[0, 0] = 42.0
    assert np.asarray(alias)[0, 0] == 42.0


def test_optional_input(ops):
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(ops.maybe_add(x), x)
    np.testing.assert_array_equal(ops.maybe_add(x, None), x)
    np.testing.assert_array_equal(ops.maybe_add(x, x), 2 * x)


def test_errors_name_the_op_and_message(ops):
    x = np.ones(4, np.float32)
    with pytest.raises(pdext.OpError, match=r"Fails: C\+\+ exception: kernel refused the input"):
        ops.fails(x, 0)
    with pytest.raises(pdext.OpError, match=r"Fails: C\+\+ exception: workspace refused"):
        ops.fails(x, 1)
    with pytest.raises(MemoryError, match=r"Fails: .*workspace of 1152921504606846976 bytes"):
        ops.fails(x, 2)
    with pytest.raises(pdext.OpError, match=r"refused before Run"):
        ops.fails(x, 3)
    # the kernel's own std::invalid_argument for a dtype it does not take
    with pytest.raises(pdext.OpError, match=r"relu_ws takes float32, got TypeId 35"):
        ops.relu_ws(np.arange(3, dtype=np.int64))
    with pytest.raises(ValueError, match=r"output size should be equal to 3 .*returned 2"):
        ops.sum_diff_bad_n(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match=r"incompatible function arguments"):
        ops.relu_ws(3)
    # the module still works after each failure
    np.testing.assert_array_equal(ops.relu_ws(np.array([-1.0, 1.0], np.float32)), [0.0, 1.0])


def test_pipeline_returns_pending_tensors_and_errors_at_the_wait(ops, add3):
    x = np.arange(-8, 8, dtype=np.float32)
    with pdext.Executor(inline_bytes=-1) as ex:  # every call goes to the worker
        tx = pdext.from_dlpack(x)
        y = ops.relu_ws(tx)
        z = ops.relu_ws(y)  # a pending input, not waited for
        assert isinstance(y, pdext.Tensor) and isinstance(z, pdext.Tensor)
        bad = ops.fails(tx, 0)  # returns after binding; the kernel fails later
        assert isinstance(bad, pdext.Tensor)
        np.testing.assert_array_equal(np.asarray(z), np.maximum(x, 0))
        with pytest.raises(pdext.OpError, match=r"Fails: C\+\+ exception: kernel refused"):
            np.asarray(bad)
        with pytest.raises(pdext.OpError, match=r"Fails"):
            ex.synchronize()
    # outside a block, pdext.Tensor in gives pdext.Tensor out (the module's own executor)
    i = pdext.from_dlpack(np.arange(5, dtype=np.int32))
    r = add3.add3(i, add3.add3(i, i, i), i)
    assert isinstance(r, pdext.Tensor)
    np.testing.assert_array_equal(np.asarray(r), 5 * np.arange(5, dtype=np.int32))


def test_dlpack_capsule_input(add3):
    x = np.arange(3, dtype=np.int32)
    out = add3.add3(x.__dlpack__(), x, x)
    np.testing.assert_array_equal(np.asarray(out), 3 * x)


def test_module_name_must_be_an_identifier():
    with pytest.raises(ValueError, match=r"must be a Python identifier"):
        pdext.CustomOpBuilder("bad-name", [str(ADD3)]).load()


def test_builder_keywords():
    # MindSpore's Ascend-only parts are refused, saying why.
    with pytest.raises(ValueError, match=r"enable_atb=True asks for Ascend .*ATB"):
        pdext.CustomOpBuilder("pdext_ms_add3", [str(ADD3)], backend="CPU", enable_atb=True)
    with pytest.raises(ValueError, match=r"backend 'Ascend' is not supported"):
        pdext.CustomOpBuilder("pdext_ms_add3", [str(ADD3)], "Ascend")
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'enable_atp'"):
        pdext.CustomOpBuilder("pdext_ms_add3", [str(ADD3)], enable_atp=False)
    with pytest.raises(TypeError, match=r"debug_mode must be True or False"):
        pdext.CustomOpBuilder("pdext_ms_add3", [str(ADD3)], debug_mode="yes")
    # debug_mode builds with symbols: the library carries DWARF; backend=None is the CPU;
    # enable_atb=False is accepted; build() returns the library without importing it.
    path = pdext.CustomOpBuilder(
        "pdext_ms_add3_debug", [str(ADD3)], None, debug_mode=True, enable_atb=False
    ).build()
    with open(path, "rb") as f:
        assert b".debug_info" in f.read()
    with open(pdext.CustomOpBuilder("pdext_ms_add3", [str(ADD3)]).build(), "rb") as f:
        assert b".debug_info" not in f.read()  # the default build has none
    assert "pdext_ms_add3_debug" not in sys.modules
    code = (
        "import importlib.util, sys, numpy as np, pdext\n"
        "spec = importlib.util.spec_from_file_location('pdext_ms_add3_debug', sys.argv[1])\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "x = np.arange(3, dtype=np.int32)\n"
        "assert (m.add3(x, x, x) == 3 * x).all()\n"
    )
    subprocess.run([sys.executable, "-c", code, path], check=True)


def test_unsupported_api_fails_to_compile_naming_it(tmp_path):
    src = tmp_path / "uses_stub_node.cc"
    src.write_text(
        '#include "ms_extension/api.h"\n'
        "py::object node(const ms::Tensor &x) {\n"
        "  return ms::pynative::PyboostRunner::Call<0>(\n"
        "      [](const ms::Tensor &t) { t.stub_node(); return 0; }, x);\n"
        "}\n"
        "PYBIND11_MODULE(MS_EXTENSION_NAME, m) { m.def(\"node\", &node); }\n"
    )
    with pytest.raises(pdext.BuildError, match=r"ms::Tensor::stub_node is not supported by pdext"):
        pdext.CustomOpBuilder("pdext_ms_unsupported", [str(src)]).load()
