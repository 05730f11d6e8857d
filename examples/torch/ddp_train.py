"""A small model using a pdext op (custom_relu, registered with pdext.torch.register) trained
with torch.nn.parallel.DistributedDataParallel over gloo. torch.distributed starts and joins
the processes; pdext does nothing of its own for it: each rank loads the same module from the
content-addressed JIT cache and registers it.

    # 2 processes on this machine
    python -m torch.distributed.run --nproc_per_node=2 examples/torch/ddp_train.py --out w2.pt
    # the same training in one process, no torch.distributed
    python examples/torch/ddp_train.py --out w1.pt

Each rank trains on its half of the batch; DDP averages the gradients, so the weights after N
steps equal the single-process run on the whole batch (within float tolerance).
"""

import argparse
import os
import pathlib

import torch
import torch.distributed as dist

import pdext
import pdext.torch

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 16)
        self.b = torch.nn.Linear(16, 1)

    def forward(self, x):
        return self.b(torch.ops.ddp_demo.custom_relu(self.a(x)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    relu = pdext.load("relu", [str(ROOT / "examples" / "relu" / "relu.c")])
    pdext.torch.register(relu, namespace="ddp_demo")
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    torch.manual_seed(0)
    model = Net().double()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 4, dtype=torch.float64, generator=g)
    y = (x[:, :1] - x[:, 1:2]).relu() + 0.1 * x[:, 2:3]
    xs, ys = x[rank::world], y[rank::world]
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    first = None
    for _ in range(args.steps):
        loss = torch.nn.functional.mse_loss(model(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    if rank == 0:
        net = model.module if distributed else model
        torch.save({k: v.detach().clone() for k, v in net.state_dict().items()}, args.out)
        print("rank 0 of %d: loss %.5f -> %.5f" % (world, first, loss.item()))
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
