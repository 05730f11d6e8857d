"""The per-call cost of pdext.aot's Python wrapper over the op it wraps (issue 26: <= 1 us).

    PYTHONPATH=<build>/python python bench/aot_python_bench.py [reps] [calls]

Times, interleaved in one run, the raw op (AotOp.op), the wrapper with fixed out_shape /
out_dtype, and the wrapper with out_shape / out_dtype functions, on CustomAdd of
tests/ops/aot_kernels.cc over (4,) float32 arrays; prints the median per-call time of each
and the wrappers' differences and ratios to the raw op.
"""

import os
import sys

import numpy as np

import pdext
from bench_rows import interleaved_medians, per_call

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = os.path.join(ROOT, "tests", "ops", "aot_kernels.cc") + ":CustomAdd"


def main(argv):
    reps = int(argv[1]) if len(argv) > 1 else 15
    n = int(argv[2]) if len(argv) > 2 else 20000
    a = np.arange(4, dtype=np.float32)
    fixed = pdext.aot(SPEC, out_shape=[4], out_dtype=np.float32, n_inputs=2)
    funcs = pdext.aot(SPEC, out_shape=lambda x, _: x, out_dtype=lambda x, _: x)
    rows = {"raw op": fixed.op, "aot, fixed": fixed, "aot, functions": funcs}
    for fn in rows.values():
        fn(a, a)
    med = interleaved_medians({k: (lambda fn=fn: per_call(fn, n, a, a) * 1e6)
                               for k, fn in rows.items()}, reps)
    raw = med["raw op"]
    for k, m in med.items():
        print("%-16s %7.2f us/call   +%5.2f us   %.2fx raw" % (k, m, m - raw, m / raw))


if __name__ == "__main__":
    main(sys.argv)
