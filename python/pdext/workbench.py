"""Is my op right? pdext.gradcheck and pdext.check from Python, over the same C code as the
command `pdext check` and pd_gradcheck (pdext_check.h, pdext_gradcheck.h):

    report = pdext.gradcheck(ops.custom_relu, (x,))          # truthy when it passed
    print(report)                                            # the worst element, both orders
    table = pdext.check(ops)                                 # every forward op, like the command
    assert table.passed, table

gradcheck binds its inputs and attrs as a call of the op does and runs pd_gradcheck in C: the
grad op's analytic gradient against central finite differences (float64 where the op has it),
and the double grad op one order up where there is one. check runs pd_check_op, the checks of
`pdext check` written once in C, and returns its rows: per forward op the dtypes its kernel
takes (float32, float64, float16, bfloat16, int32, int64), runs at [3, 4], [1, 1], [0, 4] and
[64, 300] (the runner checks every output against the infer functions; a clear refusal of an
edge shape passes the "bad input" row), two runs giving the same bytes, transposed (strided)
inputs agreeing with contiguous ones, and gradcheck in float32 and float64.
"""

import collections

from . import _pdext
from ._pdext import Error


class GradcheckError(Error):
    """pdext.gradcheck(..., raise_exception=True) found a gradient outside its tolerance."""


Element = collections.namedtuple(
    "Element", "op input index analytic numeric abs_error rel_error"
)


class GradcheckReport:
    """What pdext.gradcheck found. True in a boolean context when every compared element of
    both orders is within atol + rtol * |numeric|.

    passed, dtype (the dtype the check ran in), atol, rtol, eps, elements (compared, both
    orders), inputs_checked, worst (an Element: op, input, index, analytic, numeric, abs_error,
    rel_error), double_grad_checked, double_grad_passed, double_worst (an Element or None),
    skipped (inputs not checked, each with the reason)."""

    def __init__(self, d):
        self.passed = d["passed"]
        self.dtype = d["dtype"]
        self.atol, self.rtol, self.eps = d["atol"], d["rtol"], d["step"]
        self.elements = d["elements"]
        self.inputs_checked = d["inputs_checked"]
        self.worst = Element(**d["worst"])
        self.double_grad_checked = d["double_grad_checked"]
        self.double_grad_passed = d["double_grad_passed"]
        self.double_worst = Element(**d["double_worst"]) if d["double_worst"] else None
        self.skipped = [s for s in d["skipped"].split("; ") if s]

    def __bool__(self):
        return self.passed

    @staticmethod
    def _element(e):
        return "%s %s[%d]: analytic %.6g numeric %.6g (rel err %.2g)" % (
            e.op, e.input, e.index, e.analytic, e.numeric, e.rel_error)

    def __str__(self):
        text = "gradcheck %s in %s (%d elements, atol %g, rtol %g): worst %s" % (
            "passed" if self.passed else "FAILED", self.dtype, self.elements, self.atol,
            self.rtol, self._element(self.worst))
        if self.double_grad_checked:
            text += "; double grad %s, worst %s" % (
                "passed" if self.double_grad_passed else "FAILED",
                self._element(self.double_worst))
        if self.skipped:
            text += "; skipped " + "; ".join(self.skipped)
        return text

    __repr__ = __str__


def _op_of(f):
    """The pdext op behind f: an op of a loaded module, or a pdext.torch function over one."""
    op = getattr(f, "op", f)
    if not isinstance(op, _pdext.Op):
        raise TypeError("expected a pdext op (ops.<name>), got %s" % type(f).__name__)
    return op


def _plain(x):
    """A torch tensor without autograd history (DLPack refuses ones that require grad)."""
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    detach = getattr(x, "detach", None)
    return detach() if detach is not None and hasattr(x, "requires_grad") else x


def gradcheck(f, inputs, *, eps=None, atol=None, rtol=None, keep_dtype=False, double_grad=True,
              max_elements=None, seed=None, raise_exception=False, attrs=None, **attr_values):
    """Compares op f's gradient (its grad op) with central finite differences (pd_gradcheck).

    f: an op of a loaded module (ops.custom_relu), or its pdext.torch wrapper. inputs: the op's
    inputs in order (a tuple or list; a vector input is a list inside it; a single array is
    taken as the one input), numpy arrays or tensors; they are not modified. Attrs go as
    keywords (or attrs={...} for names the options below take). Options: eps (the step),
    atol, rtol (0 or None: pd_gradcheck's defaults for the dtype), keep_dtype (no float64
    upcast), double_grad=False skips the double grad op, max_elements (per input, evenly
    spread), seed (the weights of the summed outputs). Returns a GradcheckReport, truthy when
    it passed; with raise_exception=True a failure raises pdext.GradcheckError instead.
    Raises pdext's errors when the check cannot be made: FileNotFoundError for an op without a
    grad op, ValueError when no input or output is floating, pdext.OpError when the op fails.
    """
    op = _op_of(f)
    if not isinstance(inputs, (list, tuple)):
        inputs = (inputs,)
    kwargs = dict(attrs or {})
    kwargs.update(attr_values)
    d = _pdext.gradcheck(
        op,
        tuple(_plain(x) for x in inputs),
        kwargs,
        step=float(eps or 0.0),
        atol=float(atol or 0.0),
        rtol=float(rtol or 0.0),
        keep_dtype=bool(keep_dtype),
        skip_double_grad=not double_grad,
        max_elements=int(max_elements or 0),
        seed=int(seed or 0),
    )
    report = GradcheckReport(d)
    if raise_exception and not report.passed:
        raise GradcheckError("%s: %s" % (op.__name__, report))
    return report


# --- pdext.check ------------------------------------------------------------------------------

Row = collections.namedtuple("Row", "op dtype check status detail")

class CheckReport:
    """The rows of pdext.check: Row(op, dtype, check, status, detail), status "ok", "FAIL" or
    "skip"; notes (attrs it had to guess); failed (rows that failed). True in a boolean context
    when none failed; str() is the command's table."""

    def __init__(self):
        self.rows = []
        self.notes = []

    @property
    def failed(self):
        return sum(r.status == "FAIL" for r in self.rows)

    @property
    def passed(self):
        return self.failed == 0

    def __bool__(self):
        return self.passed

    def __str__(self):
        lines = ["%-20s %-9s %-14s %-4s %s" % ("op", "dtype", "check", "ok?", "detail")]
        lines += ["%-20s %-9s %-14s %-4s %s" % r for r in self.rows]
        lines += ["note: " + n for n in self.notes]
        lines.append("%d check%s, %d failed" % (len(self.rows), "" if len(self.rows) == 1 else "s",
                                                self.failed))
        return "\n".join(lines)

    __repr__ = __str__


def _inputs_of(shapes):
    """shapes {"NAME" or "OP.NAME": shape or (shape, dtype)} as _pdext.check_op's inputs:
    (op or "", name, shape, dtype name or None)."""
    out = []
    for key, spec in (shapes or {}).items():
        op, _, name = key.rpartition(".")
        dtype = None
        if isinstance(spec, int):
            spec = (spec,)
        if len(spec) == 2 and isinstance(spec[0], (list, tuple)):
            spec, dtype = spec
        if dtype is not None and not isinstance(dtype, str):
            import numpy as np

            dtype = np.dtype(dtype).name
        out.append((op, name, tuple(int(d) for d in spec), dtype))
    return out


def check(module, op=None, attrs=None, shapes=None, seed=0):
    """Checks every forward op of `module` (from pdext.load, load_library, ...) or only `op`
    (a name or an op) as `pdext check` does, and returns a CheckReport (truthy when no check
    failed; str() is the table). attrs: values for attrs (others take their defaults; int
    attrs without one take 0, said in report.notes; other attrs without one raise a
    ValueError naming them). shapes: {input name: shape or (shape, dtype)} for ops whose inputs
    cannot all share one shape (a matmul), "OP.NAME" for one op of the module only (the
    command's --input); the op then runs at those shapes only. seed: of the random inputs (the
    same seed, the same rows; 0 is the command's)."""
    if isinstance(op, _pdext.Op):
        ops = [op]
    else:
        library = getattr(module, "_library", None)
        if library is None:
            raise TypeError("pdext.check: expected a module from pdext.load(), got %s"
                            % type(module).__name__)
        ops = [o for o in library.ops() if o.kind == "forward"]
        if op is not None:
            ops = [o for o in ops if o.__name__ == op]
            if not ops:
                raise ValueError("pdext.check: no forward op %r in the module (it has: %s)" % (
                    op, ", ".join(o.__name__ for o in library.ops())))
    report = CheckReport()
    inputs = _inputs_of(shapes)
    for o in ops:
        rows, notes = _pdext.check_op(o, dict(attrs or {}), inputs, seed=int(seed))
        report.rows += [Row(*r) for r in rows]
        report.notes += notes
    return report
