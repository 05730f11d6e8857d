"""custom_relu from numpy: JIT-load examples/relu/relu.c, call the op and its grad op, check
the grad op against finite differences (pdext.gradcheck) and run `pdext check`'s checks
(pdext.check).

    /usr/bin/python3 examples/python/relu_numpy.py
"""

import pathlib

import numpy as np

import pdext

HERE = pathlib.Path(__file__).resolve().parent
ops = pdext.load("relu", [str(HERE.parent / "relu" / "relu.c")])

x = np.array([[-1.5, 0.5], [2.0, -0.25]], dtype=np.float32)
y = ops.custom_relu(x)  # a numpy array, computed by the C kernel
print("x =", x.tolist())
print("custom_relu(x) =", y.tolist())
assert (y == np.maximum(x, 0)).all()

# Strided views go in without a copy; the runner makes them dense for the kernel.
print("custom_relu(x.T) =", ops.custom_relu(x.T).tolist())

# The grad op: dX = dOut where Out > 0.
dx = ops.custom_relu_grad(x, y, np.ones_like(x))
print("custom_relu_grad(...) =", dx.tolist())
assert (dx == (x > 0)).all()

# Is the grad op right? Finite differences of the forward kernel, in float64.
report = pdext.gradcheck(ops.custom_relu, (x,))
print(report)
assert report.passed

# Every check of `pdext check`: dtypes, shapes against the infer functions, determinism,
# strided inputs, gradcheck. str(table) is the command's table.
table = pdext.check(ops)
print(table)
assert table.passed

# help(ops.custom_relu) shows the signature and the declaration:
print(ops.custom_relu.__doc__)
