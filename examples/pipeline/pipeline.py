"""The executor from Python: calls inside `with pdext.Executor():` return pending
pdext.Tensors at once, so a chain of calls never waits between them; reading a result
(.numpy(), np.asarray, DLPack) waits for it.

    PYTHONPATH=<build>/python python3 pipeline.py
"""
import pathlib

import numpy as np

import pdext

HERE = pathlib.Path(__file__).resolve().parent
relu = pdext.load("relu", [str(HERE.parent / "relu" / "relu.c")])

x = pdext.from_dlpack(np.linspace(-1, 1, 4096).astype(np.float32))  # a Tensor: no copy
with pdext.Executor() as ex:
    y = x
    for _ in range(1000):
        y = relu.custom_relu(y)  # returns at once: y is pending
    print("submitted:", ex.stats()["submitted"], "pending:", ex.pending(y))
    result = y.numpy()  # waits for the chain's last call
print("max:", result.max(), "min:", result.min())
assert result.min() == 0 and abs(result.max() - 1) < 1e-6

# A kernel error surfaces where the result is read (and when the block ends).
try:
    with pdext.Executor():
        bad = relu.custom_relu(pdext.from_dlpack(np.arange(3, dtype=np.int32)))
        bad.numpy()
except pdext.OpError as e:
    print("error, as expected:", str(e).splitlines()[0])
