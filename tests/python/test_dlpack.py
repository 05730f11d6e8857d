"""DLPack both ways (CPU): pdext.from_dlpack, Tensor.__dlpack__, op calls on any object with
__dlpack__, and capsules that can be consumed once."""

import numpy as np
import pytest


class Foreign:
    """An array of another library: only the DLPack protocol."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_from_dlpack_shares_memory(pdext):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = pdext.from_dlpack(x)
    assert t.shape == (2, 3) and t.dtype == "float32"
    back = np.from_dlpack(t)
    assert np.shares_memory(back, x)
    x[0, 0] = 42
    assert back[0, 0] == 42 and np.asarray(t)[0, 0] == 42


def test_from_dlpack_of_a_strided_view(pdext):
    x = np.arange(12.0).reshape(3, 4)
    view = x[::-1, 1::2]
    t = pdext.from_dlpack(view)
    np.testing.assert_array_equal(t.numpy(), view)
    assert np.shares_memory(t.numpy(), x)


def test_from_dlpack_keeps_the_producer_alive(pdext):
    t = pdext.from_dlpack(np.arange(3.0))
    import gc

    gc.collect()
    np.testing.assert_array_equal(t.numpy(), [0.0, 1.0, 2.0])


def test_tensor_inputs_give_tensor_outputs(pdext, relu):
    t = pdext.from_dlpack(np.array([-1.0, 3.0]))
    y = relu.custom_relu(t)
    assert isinstance(y, pdext.Tensor)
    np.testing.assert_array_equal(np.from_dlpack(y), [0.0, 3.0])


def test_any_dlpack_object_is_an_input(pdext, relu):
    y = relu.custom_relu(Foreign(np.array([-2.0, 2.0])))
    np.testing.assert_array_equal(np.asarray(y), [0.0, 2.0])


def test_capsule_consumed_twice(pdext):
    cap = np.arange(3.0).__dlpack__()
    pdext.from_dlpack(cap)
    with pytest.raises(ValueError, match="consumed already"):
        pdext.from_dlpack(cap)


def test_unconsumed_export_capsule_frees_its_tensor(pdext, relu):
    y = relu.custom_relu(pdext.from_dlpack(np.ones(4)))
    for _ in range(100):
        y.__dlpack__()  # dropped unconsumed: its destructor releases the reference
    assert y.__dlpack_device__() == (1, 0)


def test_buffer_protocol(pdext):
    t = pdext.from_dlpack(np.arange(4, dtype=np.int32))
    m = memoryview(t)
    assert m.format == "i" and m.shape == (4,) and m.tolist() == [0, 1, 2, 3]


def test_capsule_as_an_op_input_consumed_twice(pdext, relu):
    cap = np.array([-1.0, 2.0]).__dlpack__()
    np.testing.assert_array_equal(np.from_dlpack(relu.custom_relu(cap)), [0.0, 2.0])
    with pytest.raises(ValueError, match="custom_relu\\(\\): input 'X'.*consumed already"):
        relu.custom_relu(cap)
