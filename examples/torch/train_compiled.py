"""A training loop compiled with torch.compile(fullgraph=True) around a pdext op: custom_relu
(examples/relu/relu.c), registered with pdext.torch.register, between two linear layers. Dynamo
keeps the op in the graph (no graph break), AOTAutograd traces its backward through the grad op
custom_relu_grad, and the compiled loop ends with the weights of the same loop run eagerly.

    PYTHONPATH=build/python PDEXT_CACHE_DIR=/tmp/pdext-cache python examples/torch/train_compiled.py
"""

import pathlib

import torch

import pdext
import pdext.torch

ROOT = pathlib.Path(__file__).resolve().parents[2]

pdext.torch.register(pdext.load("relu", [str(ROOT / "examples" / "relu" / "relu.c")]),
                     namespace="example")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 16)
        self.b = torch.nn.Linear(16, 1)

    def forward(self, x):
        return self.b(torch.ops.example.custom_relu(self.a(x)))


def train(compiled, steps=30):
    torch.manual_seed(0)
    model = Net().double()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(64, 4, dtype=torch.float64)
    y = (x[:, :1] - 2 * x[:, 1:2]).abs()

    # The forward and backward of the model compile (the optimizer step stays eager).
    forward = torch.compile(model, fullgraph=True) if compiled else model
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(forward(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model.state_dict()


if __name__ == "__main__":
    explain = torch._dynamo.explain(Net().double())(torch.randn(2, 4, dtype=torch.float64))
    print("graph breaks: %d" % explain.graph_break_count)
    losses, weights = train(compiled=True)
    eager_losses, eager_weights = train(compiled=False)
    same = all(torch.allclose(weights[k], eager_weights[k], rtol=1e-9, atol=1e-12)
               for k in weights)
    print("loss %.4f -> %.4f" % (losses[0], losses[-1]))
    print("compiled weights equal eager: %s" % same)
