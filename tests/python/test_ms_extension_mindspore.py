"""The same MindSpore CustomOpBuilder sources (tests/python/ms_extension/*.cc) built by
MindSpore's own builder (mindspore.ops.CustomOpBuilder) and by pdext's
(pdext.CustomOpBuilder), called on the same mindspore.Tensors: every output must agree, and
pdext's results are mindspore.Tensors. add3 is also checked against MindSpore's own ops.

Replacing MindSpore's builder in a script is one import line:
    from mindspore.ops import CustomOpBuilder   ->   from pdext import CustomOpBuilder
"""

import importlib.util
import os
import pathlib

import numpy as np
import pytest

from conftest import require_framework

ms = require_framework("mindspore")

import pdext  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
ADD3 = HERE.parents[1] / "examples" / "ms_extension" / "add3.cc"
OPS = HERE / "ms_extension" / "ops.cc"

if importlib.util.find_spec("pybind11") is None and not os.path.isfile(
    "/usr/include/pybind11/pybind11.h"
):
    pytest.skip(
        "pybind11 is not installed (pip install pybind11, or apt install pybind11-dev)",
        allow_module_level=True,
    )


def _ms_build_dir(name):
    # MindSpore's builder keeps its Ninja build here: a later run rebuilds only what changed.
    return os.path.join(os.environ["PDEXT_CACHE_DIR"], "mindspore-builds", name)


@pytest.fixture(scope="module")
def both_add3():
    from mindspore.ops import CustomOpBuilder

    theirs = CustomOpBuilder(
        "ms_ref_add3", [str(ADD3)], backend="CPU", build_dir=_ms_build_dir("ms_ref_add3")
    ).load()
    ours = pdext.CustomOpBuilder("pdext_ms_add3", [str(ADD3)], backend="CPU").load()
    return theirs, ours


@pytest.fixture(scope="module")
def both_ops():
    from mindspore.ops import CustomOpBuilder

    theirs = CustomOpBuilder(
        "ms_ref_ops", [str(OPS)], backend="CPU", build_dir=_ms_build_dir("ms_ref_ops")
    ).load()
    ours = pdext.CustomOpBuilder("pdext_ms_ops", [str(OPS)], backend="CPU").load()
    return theirs, ours


def _np(t):
    assert isinstance(t, ms.Tensor), type(t)
    return t.asnumpy()


def _same(a, b):
    a, b = _np(a), _np(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_array_equal(a, b)


def test_add3_matches_mindspore(both_add3):
    theirs, ours = both_add3
    rng = np.random.default_rng(0)
    for shape in [(2,), (4, 3)]:
        x, y, z = (ms.Tensor(rng.integers(-50, 50, size=shape).astype(np.int32)) for _ in range(3))
        got = ours.add3(x, y, z)
        _same(got, theirs.add3(x, y, z))
        _same(got, ms.ops.add(ms.ops.add(x, y), z))  # MindSpore's own ops


def test_ops_match_mindspore(both_ops):
    theirs, ours = both_ops
    rng = np.random.default_rng(1)
    x = ms.Tensor(rng.standard_normal(33).astype(np.float32))
    _same(ours.relu_ws(x), theirs.relu_ws(x))
    _same(ours.relu_ws(x), ms.ops.relu(x))
    a = ms.Tensor(rng.standard_normal(5))
    b = ms.Tensor(rng.standard_normal(5))
    for g, w in zip(ours.sum_diff(a, b), theirs.sum_diff(a, b)):
        _same(g, w)
    m = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    got, want = ours.made(m), theirs.made(m)
    assert len(got) == len(want) == 10
    for g, w in zip(got, want):
        _same(g, w)
    y = ms.Tensor(np.array([1.0, 2.0], np.float32))
    _same(ours.maybe_add(y), theirs.maybe_add(y))
    _same(ours.maybe_add(y, y), theirs.maybe_add(y, y))


def test_strided_input_matches_mindspore(both_ops):
    theirs, ours = both_ops
    base = np.arange(24, dtype=np.float32).reshape(3, 8)
    s = ms.Tensor(base)[:, ::2]  # a strided view (strides [8, 2])
    for keep in (False, True):
        g_out, _ = ours.strided_copy(s, keep)
        w_out, _ = theirs.strided_copy(s, keep)
        _same(g_out, w_out)
        np.testing.assert_array_equal(_np(g_out), base[:, ::2])


def test_in_place_matches_mindspore(both_ops):
    theirs, ours = both_ops
    start = np.array([1.0, -2.0, 3.5], np.float32)
    mine, ref = ms.Tensor(start.copy()), ms.Tensor(start.copy())
    assert ours.scale_(mine, 3.0) is None
    theirs.scale_(ref, 3.0)
    _same(mine, ref)
    np.testing.assert_array_equal(_np(mine), start * 3)


def test_kernel_error_comes_back(both_ops):
    _, ours = both_ops
    x = ms.Tensor(np.ones(3, np.float32))
    with pytest.raises(pdext.OpError, match=r"Fails: C\+\+ exception: kernel refused the input"):
        ours.fails(x, 0)


# index_select, repeat and repeat_interleave cannot be compared with MindSpore's builder on
# the CPU: MindSpore 2.10's CPU backend registers no kernel for the ops they dispatch (its
# module raises "The kernel IndexSelect unregistered" -- likewise Repeat,
# RepeatInterleaveTensor, RepeatInterleaveInt -- when the result is read, and the error then
# sticks to later MindSpore calls in the process). The source is still built by MindSpore's
# builder (so pdext's members have MindSpore's signatures); pdext's results on
# mindspore.Tensors are checked against numpy, which has the same semantics.
def _tiled_numpy(which, x, dim, index, reps, counts):
    if which == 0:
        return np.take(x, index, axis=dim)
    if which == 1:
        return np.tile(x, reps)
    if which == 2:
        return np.repeat(x, counts if len(counts) > 1 else counts[0], axis=dim)
    if which == 3:
        return np.repeat(x.ravel(), 2)
    return np.repeat(x, 3, axis=dim)


def test_gathering_and_tiling_on_mindspore_tensors(both_ops):
    theirs, ours = both_ops
    assert hasattr(theirs, "tiled")  # MindSpore's builder compiled the same members
    rng = np.random.default_rng(2)
    xn = rng.standard_normal((3, 4)).astype(np.float32)
    x = ms.Tensor(xn)
    for dim, index, reps, counts in [
        (1, [3, 0, 0, 2], [2, 1], [1, 0, 2, 3]),
        (0, [2], [1, 2, 3], [2]),
        (-2, [1, 1], [2, 2], [0, 1, 2]),
    ]:
        args = (x, dim, ms.Tensor(np.array(index, np.int64)), reps,
                ms.Tensor(np.array(counts, np.int64)))
        for which in range(5):
            got = _np(ours.tiled(which, *args))
            want = _tiled_numpy(which, xn, dim, index, reps, counts)
            assert got.dtype == want.dtype and got.shape == want.shape, (which, got.shape)
            np.testing.assert_array_equal(got, want)


def test_assign_tensor_matches_mindspore(both_ops):
    theirs, ours = both_ops
    x = ms.Tensor(np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32))
    like = ms.Tensor(np.zeros(1, np.float16))
    _same(ours.assigned(x, like), theirs.assigned(x, like))  # x's dtype, not like's
    _same(ours.assigned(x, x), theirs.assigned(x, x))
    view = x[:, ::2]
    _same(ours.assigned(view, like), theirs.assigned(view, like))


def test_mindspore_inputs_zero_copy_and_pending(both_add3, both_ops):
    theirs, ours = both_add3
    # A result MindSpore may still be computing (its pipeline is asynchronous) is read after
    # MindSpore's work on it is done.
    x = ms.Tensor(np.arange(100000, dtype=np.int32))
    pending = ms.ops.add(x, x)
    _same(ours.add3(pending, pending, x), theirs.add3(pending, pending, x))
    # A strided view reaches a kernel that keeps strides without a copy, and is read right.
    _, ops_ours = both_ops
    base = ms.Tensor(np.arange(40, dtype=np.float32).reshape(5, 8))
    view = base[1:, 2::3]
    out, saw_contiguous = ops_ours.strided_copy(view, True)
    np.testing.assert_array_equal(_np(out), np.arange(40, dtype=np.float32).reshape(5, 8)[1:, 2::3])
    assert _np(saw_contiguous)[0] == 0
    # A tensor made with an initializer gets its memory when pdext reads it, as in asnumpy().
    from mindspore.common.initializer import One

    lazy = ms.Tensor(shape=(3,), dtype=ms.int32, init=One())
    np.testing.assert_array_equal(_np(ours.add3(lazy, lazy, lazy)), [3, 3, 3])
    # Results are mindspore.Tensors that own their memory past the call.
    r = ours.add3(x, x, x)
    del x, pending
    np.testing.assert_array_equal(_np(r), 3 * np.arange(100000, dtype=np.int32))
    np.testing.assert_array_equal(_np(ms.ops.add(r, r)), 6 * np.arange(100000, dtype=np.int32))
