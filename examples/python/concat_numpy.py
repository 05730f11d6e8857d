"""custom_concat from numpy: a vector input (a list of arrays) and an int64 attr, its grad op,
and pdext.gradcheck of it (the attr given by keyword, as to the op).

    /usr/bin/python3 examples/python/concat_numpy.py
"""

import pathlib

import numpy as np

import pdext

HERE = pathlib.Path(__file__).resolve().parent
ops = pdext.load("concat", [str(HERE.parent / "concat" / "concat.c")])

a = np.arange(6, dtype=np.float32).reshape(2, 3)
b = np.arange(4, dtype=np.float32).reshape(2, 2)
out = ops.custom_concat([a, b], axis=1)
print("custom_concat([a, b], axis=1) =", out.tolist())
assert (out == np.concatenate([a, b], axis=1)).all()

# The grad op splits the gradient back, one array per input.
ga, gb = ops.custom_concat_grad([a, b], np.ones_like(out), axis=1)
print("gradient shapes:", ga.shape, gb.shape)
report = pdext.gradcheck(ops.custom_concat, ([a, b],), axis=1)
print("gradcheck passed:", report.passed, "in", report.dtype)
assert report.passed

# Errors inside the op are Python exceptions with the op's message.
try:
    ops.custom_concat([a, b], axis=5)
except pdext.OpError as e:
    print("pdext.OpError:", e)
