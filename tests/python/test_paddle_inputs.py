"""Paddle tensors as inputs of pdext calls: a Paddle CPU tensor goes in through DLPack without
a copy (Paddle 3 reports a CPU tensor's DLPack device id as None, which pdext reads as device
0), results come back as Paddle tensors, and they agree with Paddle's own functions."""

import numpy as np
import pytest

from conftest import require_framework

paddle = require_framework("paddle")


def test_a_paddle_tensor_is_an_input_and_the_result_is_a_paddle_tensor(relu):
    x = paddle.to_tensor(np.array([[-1.5, 0.0], [2.25, -3.0]], np.float32))
    y = relu.custom_relu(x)
    assert isinstance(y, paddle.Tensor)
    assert y.place.is_cpu_place()
    np.testing.assert_array_equal(y.numpy(), paddle.nn.functional.relu(x).numpy())


def test_a_paddle_input_is_not_copied(pyops):
    # py_inplace doubles X in place: the Paddle tensor's own memory changes.
    x = paddle.to_tensor(np.array([1.0, -2.5, 4.0]))
    pyops.py_inplace(x)
    np.testing.assert_array_equal(x.numpy(), [2.0, -5.0, 8.0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_dtypes_and_shapes_survive_the_round_trip(concat, dtype):
    a = paddle.arange(6, dtype=dtype).reshape([2, 3])
    b = paddle.arange(6, 12, dtype=dtype).reshape([2, 3])
    out = concat.custom_concat([a, b], 1)
    assert isinstance(out, paddle.Tensor)
    assert out.dtype == a.dtype
    np.testing.assert_array_equal(out.numpy(), paddle.concat([a, b], axis=1).numpy())


def test_a_strided_paddle_view_is_read_through_its_strides(relu):
    x = paddle.to_tensor(np.arange(-6, 6, dtype=np.float32).reshape(3, 4))
    xt = x.transpose([1, 0])  # a view in Paddle 3 (strided), or a copy: both must work
    np.testing.assert_array_equal(relu.custom_relu(xt).numpy(),
                                  np.maximum(x.numpy().T, 0))
