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


def test_torch_input_is_not_copied(pyops):
    t = torch.arange(4, dtype=torch.float64)
    out = pyops.py_inplace(t)
    assert out is t
    assert t.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_strided_torch_inputs(relu):
    x = torch.arange(-6.0, 6.0).reshape(3, 4)
    for view in (x.t(), x[:, ::2], x.flip(0)):
        assert torch.equal(relu.custom_relu(view), view.clamp(min=0))


def test_several_outputs_are_torch_tensors(pyops):
    r = pyops.py_pair(torch.tensor([3.0], dtype=torch.float64),
                      torch.tensor([1.0], dtype=torch.float64))
    assert isinstance(r.Sum, torch.Tensor) and r.Sum.item() == 4.0 and r.Diff.item() == 2.0


def test_tensor_that_requires_grad_to_an_inplace_op_is_refused(pyops):
    t = torch.ones(3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="require"):
        pyops.py_inplace(t)
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_wrap_passes_ops_without_grad_through(pdext, concat, pyops):
    import pdext.torch

    wrapped = pdext.torch.wrap(pyops)
    assert wrapped.py_pair is pyops.py_pair
    assert pdext.torch.wrap(concat).custom_concat is concat.custom_concat


def test_training_through_the_op_lowers_the_loss(tops):
    torch.manual_seed(0)
    x = torch.randn(64, 3)
    target = x[:, :1].relu() * 2
    lin = torch.nn.Linear(3, 8)
    out = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(list(lin.parameters()) + list(out.parameters()), lr=0.1)
    losses = []
    for _ in range(60):
        loss = torch.nn.functional.mse_loss(out(tops.custom_relu(lin(x))), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 2
    assert lin.weight.grad is not None


def test_double_backward_is_refused_clearly(tops):
    x = torch.tensor([1.0, -1.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(tops.custom_relu(x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable|does not require grad"):
        g.sum().backward()
