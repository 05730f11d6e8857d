"""Is my op right? pdext.gradcheck and pdext.check from Python, over the same C code as the
command `pdext check` and pd_gradcheck (pdext_gradcheck.h):

    report = pdext.gradcheck(ops.custom_relu, (x,))          # truthy when it passed
    print(report)                                            # the worst element, both orders
    table = pdext.check(ops)                                 # every forward op, like the command
    assert table.passed, table

gradcheck binds its inputs and attrs as a call of the op does and runs pd_gradcheck in C: the
grad op's analytic gradient against central finite differences (float64 where the op has it),
and the double grad op one order up where there is one. check runs, per forward op, the rows of
`pdext check`: the dtypes its kernel takes (float32, float64, float16, int32, int64; numpy has
no bfloat16), runs at [3, 4], [1, 1], [0, 4] and [64, 300] (the runner checks every output
against the infer functions), two runs giving the same bytes, transposed (strided) inputs
agreeing with contiguous ones, and gradcheck in float32 and float64.
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

_DTYPES = ("float32", "float64", "float16", "int32", "int64")
_SHAPES = (((1, 1), "one element [1, 1]"), ((0, 4), "empty [0, 4]"),
           ((64, 300), "large [64, 300]"))
_VECTOR_ITEMS = 2


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


def _first_line(exc):
    return str(exc).split("\n", 1)[0]


class _OpChecker:
    """The checks of one forward op (cli/cmd_check.c's, from Python)."""

    def __init__(self, np, op, attrs, shapes, report, rng):
        self.np, self.op, self.attrs, self.shapes = np, op, attrs, shapes
        self.report, self.rng = report, rng

    def row(self, dtype, check, status, detail=""):
        self.report.rows.append(Row(self.op.__name__, dtype, check, status, detail))

    def tensor(self, dtype, shape, strided):
        np = self.np
        dims = (shape[1], shape[0]) if strided and len(shape) == 2 else tuple(shape)
        if np.dtype(dtype).kind in "iu":
            t = self.rng.integers(0, 3, size=dims).astype(dtype)
        else:
            v = 0.1 + 0.9 * self.rng.random(dims)
            t = np.where(self.rng.random(dims) < 0.5, -v, v).astype(dtype)
        return t.T if strided and len(shape) == 2 else t

    def inputs(self, dtype, shape, strided=False):
        """Random inputs in declared order: vector inputs get two tensors, optional ones None;
        `shapes` gives an input its own shape (and dtype)."""
        out = []
        for name, vec, opt in zip(self.op.inputs, self.op.vector_inputs,
                                  self.op.optional_inputs):
            spec = self.shapes.get(name)
            s, dt = shape, dtype
            if spec is not None:
                s, dt = (spec[0], spec[1] or dtype) if len(spec) == 2 and isinstance(
                    spec[0], (list, tuple)) else (spec, dtype)
            if vec:
                out.append([self.tensor(dt, s, strided) for _ in range(_VECTOR_ITEMS)])
            else:
                out.append(None if opt else self.tensor(dt, s, strided))
        return out

    def run(self, xs):
        res = self.op(*xs, **self.attrs)
        if not isinstance(res, tuple):
            res = (res,)
        flat = []
        for r in res:
            flat.extend(r if isinstance(r, list) else [r])
        return [self.np.ascontiguousarray(self.np.asarray(r)) for r in flat]

    def same(self, a, b):
        if len(a) != len(b):
            return "%d vs %d outputs" % (len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
                return "output %d differs" % i
        return None

    def check(self):
        trial = {}
        for dt in _DTYPES:
            try:
                self.run(self.inputs(dt, (3, 4)))
                trial[dt] = None
            except (Error, ValueError, TypeError) as e:
                trial[dt] = _first_line(e)
        works = [d for d in _DTYPES if trial[d] is None]
        refused = [d for d in _DTYPES if trial[d] is not None]
        if not works:
            self.row("-", "dtypes", "FAIL",
                     "takes none of float32..int64: %s" % trial[refused[0]])
            return
        self.row("-", "dtypes", "ok", "takes %s%s" % (
            " ".join(works), "; refuses " + " ".join(refused) if refused else ""))
        for dt in works:
            self.check_shapes(dt)
            self.check_determinism(dt)
            self.check_strided(dt)
            self.check_gradient(dt)

    def check_shapes(self, dt):
        if self.shapes:
            self.row(dt, "shapes+infer", "ok", "the given shapes")
            return
        for shape, label in _SHAPES:
            try:
                self.run(self.inputs(dt, shape))
            except (Error, ValueError, TypeError) as e:
                self.row(dt, "shapes+infer", "FAIL", "%s: %s" % (label, _first_line(e)))
                return
        self.row(dt, "shapes+infer", "ok", "[3, 4], [1, 1], [0, 4], [64, 300]")

    def check_determinism(self, dt):
        xs = self.inputs(dt, (3, 4) if self.shapes else (64, 300))
        copy = [[t.copy() for t in x] if isinstance(x, list) else
                (None if x is None else x.copy()) for x in xs]
        try:
            why = self.same(self.run(xs), self.run(copy))
        except (Error, ValueError, TypeError) as e:
            why = _first_line(e)
        self.row(dt, "deterministic", "FAIL" if why else "ok", why or "two runs, same bytes")

    def check_strided(self, dt):
        if any(self.op.written_inputs):
            self.row(dt, "strided", "skip", "the op writes an input in place")
            return
        xs = self.inputs(dt, (3, 4), strided=True)
        dense = [[self.np.ascontiguousarray(t) for t in x] if isinstance(x, list) else
                 (None if x is None else self.np.ascontiguousarray(x)) for x in xs]
        try:
            why = self.same(self.run(xs), self.run(dense))
        except (Error, ValueError, TypeError) as e:
            why = _first_line(e)
        self.row(dt, "strided", "FAIL" if why else "ok", why or "transposed inputs agree")

    def check_gradient(self, dt):
        if self.op.grad_op is None:
            self.row(dt, "gradcheck", "skip", "no grad op")
            return
        if dt not in ("float32", "float64"):
            self.row(dt, "gradcheck", "skip", "checked in float32/float64"
                     if dt == "float16" else "not differentiable")
            return
        try:
            r = gradcheck(self.op, self.inputs(dt, (3, 4)), keep_dtype=True, max_elements=24,
                          attrs=self.attrs)
        except (Error, ValueError, TypeError, FileNotFoundError) as e:
            self.row(dt, "gradcheck", "FAIL", _first_line(e))
            return
        first_ok = r.worst.abs_error <= r.atol + r.rtol * abs(r.worst.numeric)
        w = r.double_worst if r.double_grad_checked and not r.double_grad_passed and first_ok \
            else r.worst
        detail = "%s %s %s[%d]: analytic %.6g numeric %.6g (rel err %.2g)%s" % (
            "worst" if r.passed else "WRONG", w.op, w.input, w.index, w.analytic, w.numeric,
            w.rel_error, "; skipped " + "; ".join(r.skipped) if r.skipped else "")
        self.row(dt, "gradcheck x2" if r.double_grad_checked else "gradcheck",
                 "ok" if r.passed else "FAIL", detail)


def _guess_attrs(op, given, notes):
    """The attrs op is checked with: given values, declared defaults, 0 for int attrs without
    one (said in a note); any other attr without a default is a ValueError naming it."""
    attrs = {}
    for name, type_name, required in zip(op.attrs, op.attr_types, op.attr_required):
        if name in given:
            attrs[name] = given[name]
        elif not required:
            continue
        elif type_name in ("int", "int64_t"):
            attrs[name] = 0
            notes.append("%s: attr %s = 0 (no default; attrs={%r: VALUE} to choose)" % (
                op.__name__, name, name))
        else:
            raise ValueError(
                "pdext.check: op '%s' needs attr '%s' (%s), which has no default; pass "
                "attrs={'%s': VALUE}" % (op.__name__, name, type_name, name))
    return attrs


def check(module, op=None, attrs=None, shapes=None, seed=0):
    """Checks every forward op of `module` (from pdext.load, load_library, ...) or only `op`
    (a name or an op) as `pdext check` does, and returns a CheckReport (truthy when no check
    failed; str() is the table). attrs: values for attrs (others take their defaults; int
    attrs without one take 0, said in report.notes; other attrs without one raise a
    ValueError naming them). shapes: {input name: shape or (shape, dtype)} for ops whose inputs
    cannot all share one shape (a matmul); the op then runs at those shapes only."""
    import numpy as np

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
    rng = np.random.default_rng(seed)
    for o in ops:
        a = _guess_attrs(o, dict(attrs or {}), report.notes)
        _OpChecker(np, o, a, dict(shapes or {}), report, rng).check()
    return report
