"""custom_relu from PyTorch: forward, backward and gradcheck through pdext.torch.wrap.
Needs torch (pip install torch; ./setup.sh test has it in its framework venv).

    /usr/bin/python3 examples/python/relu_torch.py
"""

import pathlib

import torch

import pdext
import pdext.torch

HERE = pathlib.Path(__file__).resolve().parent
ops = pdext.torch.wrap(pdext.load("relu", [str(HERE.parent / "relu" / "relu.c")]))

x = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
y = ops.custom_relu(x)  # a torch tensor; the kernel read x's memory through DLPack
y.sum().backward()  # runs custom_relu_grad
print("y =", y.tolist(), " x.grad =", x.grad.tolist())
assert x.grad.tolist() == [0.0, 1.0, 1.0]
print("gradcheck:", torch.autograd.gradcheck(ops.custom_relu, (x.detach().requires_grad_(),)))
