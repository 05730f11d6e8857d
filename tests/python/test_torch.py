"""PyTorch: torch tensors in and out through DLPack, and autograd through pdext.torch.wrap
(forward op + registered grad op). Skipped where Debian's python3-torch is not installed."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")


@pytest.fixture(scope="module")
def tops(pdext, relu):
    import pdext.torch

    return pdext.torch.wrap(relu)


def test_torch_in_torch_out_without_copy(relu):
    x = torch.tensor([-1.0, 2.0])
    y = relu.custom_relu(x)
    assert isinstance(y, torch.Tensor)
    assert y.tolist() == [0.0, 2.0]


def test_backward_fills_grad(tops):
    x = torch.tensor([-1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    tops.custom_relu(x).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


def test_gradcheck(tops):
    x = torch.tensor([-1.5, 0.7, 2.0, -0.3], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(tops.custom_relu, (x,))
