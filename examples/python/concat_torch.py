"""custom_concat from PyTorch: a list of tensors in, autograd through its grad op
(pdext.torch.wrap), torch's gradcheck and pdext's. Needs torch (pip install torch; ./setup.sh test has it in its framework venv).

    /usr/bin/python3 examples/python/concat_torch.py
"""

import pathlib

import torch

import pdext
import pdext.torch

HERE = pathlib.Path(__file__).resolve().parent
ops = pdext.torch.wrap(pdext.load("concat", [str(HERE.parent / "concat" / "concat.c")]))

a = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
b = torch.rand(2, 2, dtype=torch.float64, requires_grad=True)
out = ops.custom_concat([a, b], axis=1)  # a torch tensor, made by the C kernel
assert torch.equal(out, torch.cat([a, b], dim=1))
weights = torch.arange(10, dtype=torch.float64).reshape(2, 5)
(out * weights).sum().backward()  # runs custom_concat_grad, which splits the gradient
print("a.grad =", a.grad.tolist())
print("b.grad =", b.grad.tolist())
assert torch.equal(a.grad, weights[:, :3]) and torch.equal(b.grad, weights[:, 3:])

c = torch.rand(1, 3, dtype=torch.float64, requires_grad=True)
print("torch gradcheck:", torch.autograd.gradcheck(lambda x, y: ops.custom_concat([x, y], 0), (a, c)))
print("pdext gradcheck:", pdext.gradcheck(ops.custom_concat, ([a, c],), axis=0).passed)
