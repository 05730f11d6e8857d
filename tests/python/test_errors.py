"""Bad inputs give clear Python exceptions: TypeError / ValueError for arguments, OpError
with the op's message for failures inside the op."""

import numpy as np
import pytest


def test_op_failure_is_an_op_error_with_the_ops_message(pdext, concat):
    a = np.ones((2, 2), np.float32)
    with pytest.raises(pdext.OpError, match=r"attr 'axis' is 5, but it must be in \[-2, 2\)"):
        concat.custom_concat([a, a], axis=5)
    assert issubclass(pdext.OpError, RuntimeError)


def test_kernel_without_the_dtype_raises_op_error(pdext, relu):
    with pytest.raises(pdext.OpError, match="int64"):
        relu.custom_relu(np.arange(3, dtype=np.int64))


def test_too_many_arguments(relu):
    x = np.ones(2)
    with pytest.raises(TypeError, match=r"custom_relu\(\) takes at most 1 arguments"):
        relu.custom_relu(x, x)


def test_missing_input(relu, concat):
    with pytest.raises(TypeError, match="missing required input 'X'"):
        relu.custom_relu()
    with pytest.raises(TypeError, match="missing required input 'X'"):
        relu.custom_relu(None)


def test_missing_attr_without_default(concat):
    with pytest.raises(TypeError, match="missing required attr 'axis'"):
        concat.custom_concat([np.ones(2)])


def test_unknown_keyword_names_what_the_op_takes(concat):
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'.*'X', 'axis'"):
        concat.custom_concat([np.ones(2)], axes=0)


def test_argument_given_twice(concat):
    with pytest.raises(TypeError, match="multiple values for argument 'axis'"):
        concat.custom_concat([np.ones(2)], 0, axis=0)


@pytest.mark.parametrize(
    "kwargs, exc, text",
    [
        (dict(b=1, i64=0), TypeError, "attr 'b' is declared 'b: bool', got int"),
        (dict(b=True, i64=1.5), TypeError, "attr 'i64' is declared 'i64: int64_t', got float"),
        (dict(b=True, i64=True), TypeError, "got bool"),
        (dict(b=True, i64=0, i=2**31), ValueError, "attr 'i' .* is out of range"),
        (dict(b=True, i64=2**63), ValueError, "out of range"),
        (dict(b=True, i64=0, f="1"), TypeError, "attr 'f'"),
        (dict(b=True, i64=0, s=b"x"), TypeError, "attr 's'"),
        (dict(b=True, i64=0, ints=[1, "2"]), TypeError, "attr 'ints'"),
        (dict(b=True, i64=0, ints="12"), TypeError, "attr 'ints'"),
        (dict(b=True, i64=0, strs=["a", 1]), TypeError, "attr 'strs'"),
    ],
)
def test_attr_of_the_wrong_type(pyops, kwargs, exc, text):
    with pytest.raises(exc, match=text):
        pyops.py_attrs(np.zeros(1), **kwargs)


def test_object_array(relu):
    with pytest.raises(TypeError, match="dtype object, which pdext has no dtype for"):
        relu.custom_relu(np.array([1, "a"], dtype=object))


def test_dtype_pdext_lacks(relu):
    with pytest.raises(TypeError, match="no dtype for"):
        relu.custom_relu(np.array(["2020-01-01"], dtype="datetime64[D]"))


def test_non_native_byte_order(relu):
    with pytest.raises(ValueError, match="non-native byte order"):
        relu.custom_relu(np.ones(2, dtype=">f4"))


def test_not_an_array(relu):
    with pytest.raises(TypeError, match="is a list; pass an array"):
        relu.custom_relu([1.0, 2.0])
    with pytest.raises(TypeError, match="neither a numpy array, a pdext.Tensor, an object with "
                       "__dlpack__ nor a tensor with asnumpy"):
        relu.custom_relu(object())


def test_from_dlpack_of_an_object_without_dlpack_says_so(pdext):
    with pytest.raises(TypeError, match=r"pdext.from_dlpack\(\): input 'obj' is a object, which has no "
                       "__dlpack__"):
        pdext.from_dlpack(object())


def test_vector_input_needs_a_list(concat):
    with pytest.raises(TypeError, match="input 'X' takes a list of arrays"):
        concat.custom_concat(np.ones(2), axis=0)
    with pytest.raises(TypeError, match=r"input 'X'\[1\] is a str"):
        concat.custom_concat([np.ones(2), "x"], axis=0)


def test_too_many_dims(relu):
    with pytest.raises(ValueError, match="at most 8"):
        relu.custom_relu(np.ones((1,) * 9))


def test_read_only_array_to_an_inplace_op(pyops):
    x = np.ones(3)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only array, but the op writes it in place"):
        pyops.py_inplace(x)
    np.testing.assert_array_equal(x, 1)


def test_strided_view_to_an_inplace_op(pyops):
    x = np.ones(6)
    with pytest.raises(ValueError, match="strided view and the op writes it in place"):
        pyops.py_inplace(x[::2])
    np.testing.assert_array_equal(x, 1)


def test_unaligned_array(relu):
    raw = np.zeros(17, np.uint8)
    x = raw[1:].view(np.float64)
    with pytest.raises(ValueError, match="not aligned"):
        relu.custom_relu(x)


def test_shape_mismatch_inside_the_op(pdext, pyops):
    with pytest.raises(pdext.OpError, match="A and B must have the same shape"):
        pyops.py_pair(np.ones(2), np.ones(3))
