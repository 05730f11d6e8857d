"""Calling ops on numpy arrays: zero-copy inputs (strided views included), outputs owned by
pdext, attrs converted to their declared types, inplace ops, vector / optional inputs and
several outputs."""

import gc
import sys

import numpy as np
import pytest


def relu_ref(x):
    return np.where(x > 0, x, 0).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_matches_numpy(relu, dtype):
    x = np.linspace(-3, 3, 37).astype(dtype).reshape(37)
    y = relu.custom_relu(x)
    assert isinstance(y, np.ndarray) and y.dtype == dtype and y.shape == x.shape
    np.testing.assert_array_equal(y, relu_ref(x))


def test_output_is_writable_and_owned_by_a_pdext_tensor(pdext, relu):
    y = relu.custom_relu(np.ones((2, 3), np.float32))
    assert isinstance(y.base, pdext.Tensor)
    assert y.flags.writeable and y.flags.c_contiguous
    y[0, 0] = 7
    assert y[0, 0] == 7


def test_output_outlives_the_module(pdext):
    from conftest import RELU

    ops = pdext.load("relu", [str(RELU)])
    y = ops.custom_relu(np.array([-1.0, 4.0]))
    del ops
    gc.collect()
    np.testing.assert_array_equal(y, [0.0, 4.0])


def test_strided_views_are_read_through_their_strides(relu):
    base = np.arange(-12, 12, dtype=np.float32).reshape(4, 6)
    for view in (base[:, ::2], base.T, base[::-1, ::-3], base[1:3, 2:5]):
        np.testing.assert_array_equal(relu.custom_relu(view), relu_ref(view))


def test_negative_strides(relu):
    x = np.arange(-5, 5, dtype=np.float64)[::-1]
    np.testing.assert_array_equal(relu.custom_relu(x), relu_ref(x))


def test_broadcast_view_with_zero_strides(relu):
    x = np.broadcast_to(np.array([-1.0, 2.0]), (3, 2))
    np.testing.assert_array_equal(relu.custom_relu(x), [[0, 2]] * 3)


def test_zero_dim_array_is_a_scalar_tensor(relu):
    y = relu.custom_relu(np.array(-2.5))
    assert y.shape == () and y == 0
    assert relu.custom_relu(np.array(2.5)) == 2.5


def test_empty_array(relu):
    y = relu.custom_relu(np.zeros((0, 3), np.float32))
    assert y.shape == (0, 3)


def test_inputs_are_not_copied(pyops):
    # py_inplace writes through the pointer it is given: the caller's array changes.
    x = np.arange(4.0)
    out = pyops.py_inplace(x)
    assert out is x
    np.testing.assert_array_equal(x, [0, 2, 4, 6])


def test_an_output_aliasing_an_input_is_copied_into_pdext_memory(pyops):
    x = np.arange(6.0)
    for view in (x, x[::-2]):
        y = pyops.py_alias(view)
        np.testing.assert_array_equal(y, view)
        assert not np.shares_memory(y, x)


def test_concat_takes_a_list_and_keyword_attr(concat):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(concat.custom_concat([a, b], axis=1), np.concatenate([a, b], 1))
    np.testing.assert_array_equal(concat.custom_concat((a.T, b.T), 0), np.concatenate([a.T, b.T]))
    np.testing.assert_array_equal(concat.custom_concat(X=[a, b], axis=-1), np.concatenate([a, b], 1))


def test_concat_grad_splits_the_gradient(concat):
    a = np.ones((2, 3), np.float32)
    b = np.ones((2, 2), np.float32)
    g = np.arange(10, dtype=np.float32).reshape(2, 5)
    ga, gb = concat.custom_concat_grad([a, b], g, axis=1)
    np.testing.assert_array_equal(ga, g[:, :3])
    np.testing.assert_array_equal(gb, g[:, 3:])


def test_relu_grad_by_keyword_names(relu):
    x = np.array([-1.0, 2.0, 3.0])
    out = relu.custom_relu(x)
    g = relu.custom_relu_grad(X=x, Out=out, Out_GRAD=np.array([5.0, 6.0, 7.0]))
    np.testing.assert_array_equal(g, [0.0, 6.0, 7.0])


def test_every_attr_type_arrives_with_its_value(pyops):
    x = np.zeros(1)
    got = pyops.py_attrs(x, True, 1, 2.5, 3.25, 2**40, "hello", [1, 2, 3], (0.5, 0.25),
                         [10, 2**35], ["ab", "c"])
    np.testing.assert_array_equal(got, [1, 1, 2.5, 3.25, 2**40, 5, 6, 0.75, 10 + 2**35, 4])


def test_attr_defaults_apply_when_left_out(pyops):
    got = pyops.py_attrs(np.zeros(1), b=False, i64=-3)
    np.testing.assert_array_equal(got, [0, 7, 0.5, -2.25, -3, 3, 3, 0.5, 0, 0])


def test_long_list_attrs(pyops):
    got = pyops.py_attrs(np.zeros(1), b=True, i64=0, ints=list(range(100)),
                         i64s=list(range(50)), floats=[1.0] * 40, strs=["x"] * 30)
    assert got[6] == sum(range(100)) and got[8] == sum(range(50))
    assert got[7] == 40 and got[9] == 31


def test_numpy_scalars_are_accepted_as_attrs(pyops, concat):
    got = pyops.py_attrs(np.zeros(1), b=np.bool_(True), i64=np.int64(9), f=np.float32(1.5))
    assert got[0] == 1 and got[4] == 9 and got[2] == 1.5


def test_several_outputs_come_back_as_a_named_tuple(pyops):
    a = np.array([5.0, 1.0])
    b = np.array([2.0, 3.0])
    r = pyops.py_pair(a, b)
    np.testing.assert_array_equal(r.Sum, [7.0, 4.0])
    np.testing.assert_array_equal(r.Diff, [3.0, -2.0])
    s, d = r
    np.testing.assert_array_equal(s, r[0])


def test_optional_input_may_be_omitted_or_none(pyops):
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(pyops.py_opt(x), [101.0, 102.0])
    np.testing.assert_array_equal(pyops.py_opt(x, None), [101.0, 102.0])
    np.testing.assert_array_equal(pyops.py_opt(x, Y=x), [2.0, 4.0])


def test_calls_leak_no_references(relu, concat):
    x = np.array([-1.0, 1.0])
    before = sys.getrefcount(x)
    for _ in range(1000):
        relu.custom_relu(x)
        concat.custom_concat([x, x], axis=0)
        with pytest.raises(Exception):
            concat.custom_concat([x, x], axis=3)
        with pytest.raises(TypeError):
            relu.custom_relu(x, x)
    assert sys.getrefcount(x) == before


def test_vector_output_longer_than_the_inputs(pyops):
    pieces = pyops.py_split(np.arange(40.0), parts=40)
    assert isinstance(pieces, list) and len(pieces) == 40
    assert [float(p[0]) for p in pieces] == list(range(40))


def test_vector_output_of_more_items_than_any_guessed_room(pyops):
    # The runner makes the output's array with exactly its items (pd_arg_release): 300
    # pieces of one input, past the 64 the call once reserved, and no references leak.
    x = np.arange(600.0)
    before = sys.getrefcount(x)
    for _ in range(3):
        pieces = pyops.py_split(x, parts=300)
        assert len(pieces) == 300
        assert [float(p[1]) for p in pieces] == [2.0 * k + 1 for k in range(300)]
    del pieces
    assert sys.getrefcount(x) == before


def test_the_gil_is_released_while_the_kernel_runs(pyops):
    # The kernel says it started, then waits for this thread's helper to answer: a helper
    # that needs the GIL can answer only if the call released it.
    import threading
    import time

    x = np.zeros(2, np.int64)

    def answer():
        for _ in range(10000):
            if x[1] == 1:
                x[0] = 1
                return
            time.sleep(0.001)

    helper = threading.Thread(target=answer)
    helper.start()
    pyops.py_wait(x)
    helper.join()
    assert x[1] == 2, "the kernel never saw the other thread: the GIL was held"


def test_small_calls_keep_the_gil_and_large_ones_release_it(pdext, relu):
    # Releasing the GIL costs more than a kernel on a few KiB: such calls keep it (numpy's
    # rule for ufunc loops); larger inputs, and every call once the threshold is 0, release it.
    count = pdext._pdext._gil_releases
    small, large = np.array([-1.0, 2.0], np.float32), np.ones(1 << 16, np.float32)
    before = count()
    np.testing.assert_array_equal(relu.custom_relu(small), [0.0, 2.0])
    assert count() == before, "a call on 8 bytes released the GIL"
    relu.custom_relu(large)
    assert count() == before + 1, "a call on 256 KiB kept the GIL"
    old = pdext.set_gil_threshold(0)
    try:
        assert old == 4096
        relu.custom_relu(small)
        assert count() == before + 2, "threshold 0: every call releases the GIL"
    finally:
        assert pdext.set_gil_threshold(old) == 0
    with pytest.raises(ValueError, match="nbytes is -1"):
        pdext.set_gil_threshold(-1)


def test_an_op_that_may_block_releases_the_gil_even_on_small_inputs(pdext, pyops):
    count = pdext._pdext._gil_releases
    before = count()
    x = np.array([1, 0], np.int64)  # X[0] already set: the kernel returns at once
    pyops.py_wait(x)
    assert x[1] == 2 and count() == before + 1


def test_extra_cflags_and_include_paths_reach_the_compiler(pdext, tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "py_factor.h").write_text("#define PY_FACTOR 7.0\n")
    src = (
        '#include "extension.h"\n#include "py_factor.h"\n'
        "static void k(pd_kernel_ctx *c) {\n"
        "    const pd_tensor *x = pd_input(c, 0);\n"
        "    pd_tensor *o = pd_empty_like(c, x);\n"
        "    const double *a = pd_data(x); double *b = pd_data(o);\n"
        "    for (int64_t i = 0; i < pd_numel(x); ++i) b[i] = a[i] * PY_FACTOR + PY_OFFSET;\n"
        "    pd_set_output(c, 0, o);\n"
        "}\n"
        'PD_BUILD_OP(py_flags, .inputs = {"X"}, .outputs = {"Out"}, .kernel = k);\n'
    )
    ops = pdext.load_inline("py_flags", src, extra_cflags=["-DPY_OFFSET=0.5"],
                            extra_include_paths=[str(inc)], extra_ldflags=["-lm"],
                            build_directory=tmp_path / "b")
    np.testing.assert_array_equal(ops.py_flags(np.array([1.0, 2.0])), [7.5, 14.5])
