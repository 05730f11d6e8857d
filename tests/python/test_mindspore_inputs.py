"""MindSpore tensors as inputs of pdext calls: they have no __dlpack__, and on the CPU their
asnumpy() shares their memory, which the call borrows (no copy: an inplace op changes the
MindSpore tensor); results come back as MindSpore tensors (mindspore.from_dlpack) and agree
with MindSpore's own functions."""

import numpy as np
import pytest

from conftest import require_framework

ms = require_framework("mindspore")


def test_a_mindspore_tensor_is_an_input_and_the_result_is_a_mindspore_tensor(relu):
    x = ms.Tensor(np.array([[-1.5, 0.0], [2.25, -3.0]], np.float32))
    y = relu.custom_relu(x)
    assert isinstance(y, ms.Tensor)
    np.testing.assert_array_equal(y.asnumpy(), ms.ops.relu(x).asnumpy())


def test_a_mindspore_input_is_not_copied(pyops):
    x = ms.Tensor(np.array([1.0, -2.5, 4.0]))
    pyops.py_inplace(x)
    np.testing.assert_array_equal(x.asnumpy(), [2.0, -5.0, 8.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_a_list_of_mindspore_tensors(concat, dtype):
    a = ms.Tensor(np.arange(6, dtype=dtype).reshape(2, 3))
    b = ms.Tensor(np.arange(6, 12, dtype=dtype).reshape(2, 3))
    out = concat.custom_concat([a, b], 1)
    assert isinstance(out, ms.Tensor)
    assert out.dtype == a.dtype
    np.testing.assert_array_equal(out.asnumpy(), ms.ops.concat((a, b), axis=1).asnumpy())
