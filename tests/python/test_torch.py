"""PyTorch: torch tensors in and out through DLPack, and autograd through pdext.torch.wrap
(forward op + registered grad op). Runs in the framework venv (torch 2 from PyPI); skipped,
saying why, where torch is left out."""

import numpy as np
import pytest
from conftest import require_framework

torch = require_framework("torch")


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
    # torch refuses to export it (RuntimeError in torch 1.x, BufferError in 2.x); pdext says for
    # which op and input.
    with pytest.raises((RuntimeError, BufferError), match=r"py_inplace\(\): input 'X'.*require"):
        pyops.py_inplace(t)
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_wrap_passes_ops_without_grad_or_with_vector_outputs_through(pdext, pyops):
    import pdext.torch

    wrapped = pdext.torch.wrap(pyops)
    assert wrapped.py_pair is pyops.py_pair  # no grad op
    assert wrapped.py_split is pyops.py_split  # a vector output


def test_vector_inputs_backward_and_gradcheck(pdext, concat):
    import pdext.torch

    tcat = pdext.torch.wrap(concat).custom_concat
    a = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
    b = torch.rand(2, 2, dtype=torch.float64, requires_grad=True)
    out = tcat([a, b], axis=1)
    assert torch.equal(out, torch.cat([a, b], 1))
    (out * torch.arange(10.0, dtype=torch.float64).reshape(2, 5)).sum().backward()
    assert a.grad.tolist() == [[0, 1, 2], [5, 6, 7]] and b.grad.tolist() == [[3, 4], [8, 9]]
    c = torch.rand(1, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, y: tcat([x, y], axis=0), (a, c))


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


def test_double_grad_through_the_double_grad_op(pdext, tape):
    import pdext.torch

    tops = pdext.torch.wrap(tape)
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(tops.tp_square(x).sum(), x, create_graph=True)
    assert g.tolist() == [1.0, -2.0, 4.0]  # 2 x, from tp_square_grad
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [2.0, 2.0, 2.0]  # from tp_square_grad_grad
    assert torch.autograd.gradgradcheck(tops.tp_square, (x,))


def test_wrong_double_grad_op_fails_gradgradcheck(pdext, tape):
    import pdext.torch

    tops = pdext.torch.wrap(tape)
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(tops.tp_bad_dd, (x,))
    assert not torch.autograd.gradgradcheck(tops.tp_bad_dd, (x,), raise_exception=False)


def test_pdext_gradcheck_on_the_wrapped_function(pdext, tops):
    x = torch.tensor([-1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert pdext.gradcheck(tops.custom_relu, (x,))


def test_lazily_negated_and_conjugated_views(relu, pyops):
    """DLPack (the C exchange API and __dlpack__ alike) hands out a torch view's memory as it
    is, without its negative or conjugate bit: pdext reads a negated view as its resolve_neg(),
    refuses to write one in place, and keeps torch's refusal of a conjugated view."""
    z = torch.tensor([1 + 2j, -3 - 1j], dtype=torch.complex128).conj()
    neg = z.imag  # [-2, 1], a lazy negation of the memory's [2, -1]
    assert neg.is_neg()
    assert relu.custom_relu(neg).tolist() == [0.0, 1.0]
    assert relu.custom_relu(neg.detach()).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"py_inplace\(\): input 'X'.*negated"):
        pyops.py_inplace(neg)
    assert neg.tolist() == [-2.0, 1.0]
    with pytest.raises(BufferError, match=r"custom_relu\(\): input 'X'.*conjugate"):
        relu.custom_relu(z)


def test_results_come_back_as_torch_tensors_that_own_their_memory(relu):
    x = torch.tensor([-1.0, 2.0, -3.0])
    ys = [relu.custom_relu(x) for _ in range(3)]
    del x
    for y in ys:
        assert type(y) is torch.Tensor and y.tolist() == [0.0, 2.0, 0.0]
    assert len({y.data_ptr() for y in ys}) == 3


def test_grad_op_bound_by_its_published_binding(pdext, gbops):
    # gb_mul_grad declares Out, Out@GRAD, Y, X and returns Y@GRAD, X@GRAD: the wrapped
    # backward binds them through grad_inputs / grad_outputs, and torch's gradcheck compares
    # with finite differences of Out = X * X * Y.
    gops = pdext.torch.wrap(gbops)
    rng = np.random.default_rng(3)
    x, y = (torch.tensor(rng.uniform(0.5, 2.0, (3, 2)), requires_grad=True) for _ in range(2))
    assert torch.autograd.gradcheck(gops.gb_mul, (x, y))
    gops.gb_mul(x, y).sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach() * y.detach())
    torch.testing.assert_close(y.grad, x.detach() ** 2)
