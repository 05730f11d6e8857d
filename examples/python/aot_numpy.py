"""A MindSpore AOT kernel from Python: pdext.aot with MindSpore's keywords on
examples/aot/scale_cumsum.cc (compiled once through the JIT's cache, as MindSpore compiles
AOT sources). Attrs given to pdext.aot are defaults that a call may override.

    /usr/bin/python3 examples/python/aot_numpy.py
"""

import pathlib

import numpy as np

import pdext

HERE = pathlib.Path(__file__).resolve().parent
spec = "%s:ScaleCumsum" % (HERE.parent / "aot" / "scale_cumsum.cc")

# out_shape / out_dtype may be left out: the kernel's ScaleCumsumInferShape gives the shape,
# and the dtype is the input's. n_inputs loads it now rather than at the first call.
scale_cumsum = pdext.aot(spec, out_dtype=np.float32, n_inputs=1, scale=2.0, bias=0.5,
                         reverse=False)
x = np.array([1, 2, 3, 4], np.float32)
y = scale_cumsum(x)
print("scale_cumsum(x) =", y.tolist())  # 2 * cumsum(x) + 0.5
assert y.tolist() == [2.5, 6.5, 12.5, 20.5]
print("reverse, scale 1 =", scale_cumsum(x, scale=1.0, reverse=True).tolist())
