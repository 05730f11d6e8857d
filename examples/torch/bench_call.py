"""Per-call cost of a pdext op registered with torch.library (pdext.torch.register), against
torch.relu and a torch.library.custom_op relu written in Python, in the same run, on a
1-element CPU float32 tensor (and the plain pdext call on torch and numpy inputs).

    PYTHONPATH=build/python PDEXT_CACHE_DIR=build/python/cache python examples/torch/bench_call.py
"""

import pathlib
import sys
import timeit

import numpy as np
import torch

import pdext
import pdext.torch

ROOT = pathlib.Path(__file__).resolve().parents[2]


def per_call_us(fn, arg, number=20000, repeat=7):
    fn(arg)
    return min(timeit.repeat(lambda: fn(arg), number=number, repeat=repeat)) / number * 1e6


@torch.library.custom_op("bench_py::relu", mutates_args=())
def py_relu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x)


@py_relu.register_fake
def _(x):
    return torch.empty_like(x)


def main():
    relu = pdext.load("relu", [str(ROOT / "examples" / "relu" / "relu.c")])
    pdext.torch.register(relu, namespace="bench_pd")
    t = torch.randn(1)
    a = t.numpy().copy()
    rows = [
        ("torch.relu(t)", torch.relu, t),
        ("custom_op relu in Python (torch.ops.bench_py.relu)", torch.ops.bench_py.relu, t),
        ("registered pdext op (torch.ops.bench_pd.custom_relu)", torch.ops.bench_pd.custom_relu, t),
        ("registered pdext op, .default overload", torch.ops.bench_pd.custom_relu.default, t),
        ("plain pdext call on a torch tensor (relu.custom_relu)", relu.custom_relu, t),
        ("plain pdext call on a numpy array", relu.custom_relu, a),
    ]
    res = [(name, per_call_us(fn, arg)) for name, fn, arg in rows]
    # Under inference_mode the dispatcher skips the autograd kernels (the Python
    # register_autograd rule): what the native kernel itself costs.
    with torch.inference_mode():
        ti = t.clone()
        res += [(name + " [inference_mode]", per_call_us(fn, ti)) for name, fn, arg in rows[:4]]
    # A torch.compile'd function with the op, warm (compiled on the first call), vs eager.
    def f(x):
        return torch.ops.bench_pd.custom_relu(x) + 1

    compiled = torch.compile(f, fullgraph=True)
    res += [("eager f(t) = custom_relu(t) + 1", per_call_us(f, t, number=5000)),
            ("torch.compile(f, fullgraph=True), warm", per_call_us(compiled, t, number=5000))]
    base, py = res[0][1], res[1][1]
    print("torch %s, numpy %s, 1-element float32 CPU tensor, min of 7 x 20000 calls; native "
          "kernel: %s" % (torch.__version__, np.__version__, pdext.torch.native_kernels()[0]))
    for name, us in res:
        print("  %-75s %7.2f us  %5.2fx torch.relu  %5.2fx custom_op" % (name, us, us / base, us / py))
    return 0


if __name__ == "__main__":
    sys.exit(main())
