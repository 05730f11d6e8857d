"""How long a pdext op call takes from Python, against baselines measured in the same run:
custom_relu on a 1-element float32 array next to numpy's own np.negative (a C ufunc) on the
same array; when torch is installed, torch's built-in torch.relu on a 1-element tensor (a
built-in op, no slower than a cpp_extension op) and custom_relu on that torch tensor (through
DLPack both ways); and the bandwidth of custom_relu on 64 MiB next to np.maximum(x, 0).

    /usr/bin/python3 examples/python/call_overhead.py
"""

import pathlib
import timeit

import numpy as np

import pdext

HERE = pathlib.Path(__file__).resolve().parent
ops = pdext.load("relu", [str(HERE.parent / "relu" / "relu.c")])
relu = ops.custom_relu


def per_call_ns(fn, arg, number=200000, repeat=7):
    runs = timeit.repeat("fn(arg)", globals={"fn": fn, "arg": arg}, number=number, repeat=repeat)
    return min(runs) / number * 1e9


x1 = np.ones(1, np.float32)
pd_ns = per_call_ns(relu, x1)
np_ns = per_call_ns(np.negative, x1)
print("call, 1 element   pdext custom_relu %6.0f ns   numpy np.negative %6.0f ns   ratio %.2f"
      % (pd_ns, np_ns, pd_ns / np_ns))

try:
    import torch
except ImportError:
    print("torch rows skipped: torch is not installed (pip install torch)")
else:
    t1 = torch.ones(1)
    th_ns = per_call_ns(torch.relu, t1)
    pt_ns = per_call_ns(relu, t1, number=50000)
    print("call, 1 element   pdext (numpy) %6.0f ns   torch.relu (torch) %6.0f ns   ratio %.2f"
          % (pd_ns, th_ns, pd_ns / th_ns))
    print("call, 1 element   pdext on a torch tensor (DLPack in and out) %6.0f ns" % pt_ns)

big = np.random.default_rng(0).standard_normal(16 * 1024 * 1024).astype(np.float32)  # 64 MiB
t_pd = min(timeit.repeat(lambda: relu(big), number=3, repeat=5)) / 3
t_np = min(timeit.repeat(lambda: np.maximum(big, 0), number=3, repeat=5)) / 3
gbs = lambda t: 2 * big.nbytes / t / 1e9  # read + write
print("64 MiB relu        pdext %6.2f GB/s   numpy np.maximum %6.2f GB/s   ratio %.2f"
      % (gbs(t_pd), gbs(t_np), t_np / t_pd))
