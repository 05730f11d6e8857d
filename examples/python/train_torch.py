"""A tiny PyTorch model trained through a pdext op: y = W2 relu(W1 x) with pdext's
custom_relu as the activation, fitted to synthetic data; the loss goes down.
Needs torch (pip install torch; ./setup.sh test has it in its framework venv).

    /usr/bin/python3 examples/python/train_torch.py
"""

import pathlib

import torch

import pdext
import pdext.torch

HERE = pathlib.Path(__file__).resolve().parent
ops = pdext.torch.wrap(pdext.load("relu", [str(HERE.parent / "relu" / "relu.c")]))

torch.manual_seed(0)
x = torch.randn(256, 4)
target = (x[:, :1] * 2 - x[:, 1:2]).relu() + 0.5 * x[:, 2:3]

w1 = torch.nn.Linear(4, 16)
w2 = torch.nn.Linear(16, 1)
opt = torch.optim.SGD(list(w1.parameters()) + list(w2.parameters()), lr=0.05)

first = None
for step in range(200):
    pred = w2(ops.custom_relu(w1(x)))
    loss = torch.nn.functional.mse_loss(pred, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    first = first if first is not None else loss.item()
    if step % 50 == 0:
        print("step %3d  loss %.4f" % (step, loss.item()))
print("loss %.4f -> %.4f" % (first, loss.item()))
assert loss.item() < first / 2
