"""MindSpore for pdext ops: each op becomes a MindSpore ops.Custom(func_type="aot") primitive,
usable in PyNative, in GRAPH_MODE and under mindspore.jit, differentiable with mindspore.grad
/ value_and_grad through the op's grad op, with no MindSpore-specific code from its author.

    ops = pdext.load("relu", ["relu.c"])
    mops = pdext.mindspore.register(ops)
    y = mops.custom_relu(x)                          # x: a mindspore.Tensor (CPU)
    g = mindspore.grad(lambda x: mops.custom_relu(x).sum())(x)
    out = mops.custom_concat([a, b], axis=1)         # vector inputs as lists, attrs as keywords

How it works:
- One C++ library (ms_aot_shim.cc, shipped with this package, built by pdext's JIT on first
  use as MindSpore builds AOT kernels and then found warm in its cache) holds the AOT entry
  points pdext_ms_aot / pdext_ms_aotInit of MindSpore's calling convention. Every op runs
  through them: Init reads the primitive's attrs through MindSpore's AotExtra getters (the
  op's index pd_op, its name pd_name, the tensors per input pd_in and the op's own attrs by
  their declared names and types); the kernel wraps MindSpore's buffers in pd_tensors (no
  copy), runs the pdext runner and copies its outputs into MindSpore's output buffers.
- One primitive per op, input counts and attrs (cached): attrs are fixed per primitive in
  MindSpore. The functions of the returned module are plain Python that MindSpore's graph
  compiler parses: they pick the primitive at compile time (ops.constexpr) and call it.
- Output shapes and dtypes come from pd_op_infer (_pdext.infer) in the primitive's __infer__,
  at call time in PyNative and at compile time in a graph: a shape or attr the op's infer
  functions refuse raises there (pdext.OpError / TypeError naming the op). An output whose
  shape depends on its data cannot be a MindSpore custom op output and is refused the same way.
- Attrs are checked against the declaration when the primitive is made (a TypeError names
  the op, the attr and its declared type): bool, int, int64_t, float, double (passed as its
  repr, AotExtra having float getters only), std::string, std::vector<int / int64_t / float>.
  std::vector<std::string> has no AotExtra getter and is refused.
- Gradients: the primitive's bprop runs the grad op's primitive (itself differentiable where
  a double grad op is declared); an input the grad op gives no gradient for gets zeros. Ops
  with a vector output are differentiable only as grad ops (their outputs are gradients).
- PyNative with no gradient being recorded: the primitive's __call__ runs the op at once
  through pdext on the tensors' memory (asnumpy() waits for MindSpore's queued work and shares
  the buffer; the result is Tensor.from_numpy of pdext's output), skipping MindSpore's launch
  of a custom op (milliseconds); its errors come at the call as pdext.OpError. While a
  gradient is recorded, and in graphs, the op runs as the AOT primitive.
- An AOT kernel's failure makes MindSpore raise RuntimeError naming pdext_ms_aot and a code
  (in PyNative when the result is read); pdext's own message goes to stderr and is returned by
  last_error().
- In a graph, MindSpore's compiler keeps a float literal written inside the jitted function
  as float32: a double attr given there is rounded so (exact in PyNative).
- CPU only. An optional input left out (None) is absent, in graphs too (one branch per
  combination of the optional inputs given).
- Import order: MindSpore and Paddle clash in one process when MindSpore is imported after
  Paddle (an undefined oneDNN symbol, upstream); importing mindspore first works, as does
  one framework per process (see examples/mindspore/README.md).
"""

import ctypes
import hashlib
import keyword
import linecache
import numbers
import os
import sys
import tempfile
import threading
import types

import mindspore as _ms
import numpy as _np
from mindspore import Tensor as _Tensor
from mindspore import ops as _ops
from mindspore.ops import Custom as _Custom

try:
    from mindspore.graph.api import _pynative_executor
except ImportError:  # MindSpore before 2.9
    from mindspore.common.api import _pynative_executor

from . import _front, _pdext

__all__ = ["register", "last_error"]

_requires_grad = _pynative_executor.requires_grad
_lock = threading.RLock()
_shim = None  # (ctypes library, "path:pdext_ms_aot")
_keep = {}  # op handle -> Op: their libraries stay loaded while MindSpore may call them
# Primitives kept per register() call: one per op, input counts and attrs. Attrs that change
# from call to call (a float schedule) would make one each: past this many the cache starts
# afresh (a compiled graph holds its own primitives).
_MAX_PRIMITIVES = 1024

_NAMES = [
    "float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128",
]
_TO_MS = {n: getattr(_ms, "bool_" if n == "bool" else n) for n in _NAMES
          if hasattr(_ms, "bool_" if n == "bool" else n)}
_FROM_MS = {v: k for k, v in _TO_MS.items()}


def _load_shim():
    """Builds (first use) or finds in the JIT cache the AOT shim library, and loads it."""
    global _shim
    if _shim is not None:
        return _shim
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ms_aot_shim.cc")
    libpdext = _pdext._library_path()
    # AotExtra's getters take and return std::string: the shim is built with the std::string
    # ABI of MindSpore's own libraries (the old one in MindSpore's wheels, as MindSpore builds
    # AOT kernels). Linked against the very libpdext this package runs on, so that op handles
    # are one.
    path = _pdext.load(
        "pdext_ms_aot",
        [source],
        cxx_cflags=["-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=%d" % _mindspore_cxx11_abi()],
        ldflags=[libpdext, "-Wl,-rpath," + os.path.dirname(libpdext)],
        library_only=True,
    )
    lib = ctypes.CDLL(path)
    lib.pdext_ms_aot_add_op.restype = ctypes.c_int64
    lib.pdext_ms_aot_add_op.argtypes = [ctypes.c_void_p]
    lib.pdext_ms_aot_last_error.restype = None
    lib.pdext_ms_aot_last_error.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    _shim = (lib, path + ":pdext_ms_aot")
    return _shim


def _mindspore_cxx11_abi():
    """1 when MindSpore's core library was built with libstdc++'s new std::string ABI (its
    symbols then name std::__cxx11::basic_string), else 0 (MindSpore's wheels: the old one)."""
    core = os.path.join(os.path.dirname(_ms.__file__), "lib", "libmindspore_core.so")
    try:
        with open(core, "rb") as f:
            return 1 if b"NSt7__cxx1112basic_string" in f.read() else 0
    except OSError:
        return 0


def last_error():
    """pdext's message of the last failed AOT kernel call (any thread), or ''."""
    lib, _ = _load_shim()
    buf = ctypes.create_string_buffer(4096)
    lib.pdext_ms_aot_last_error(buf, len(buf))
    return buf.value.decode(errors="replace")


def _py_name(name):
    """A declared input or attr name as a Python parameter: '@' becomes '_', and a keyword
    ("from", "in") gets a trailing '_'."""
    name = name.replace("@", "_")
    return name + "_" if keyword.iskeyword(name) else name


# --- Attrs -----------------------------------------------------------------------------------

_INT_TYPES = ("int", "int64_t")
_VEC = {"std::vector<int>": int, "std::vector<int64_t>": int, "std::vector<float>": float}


def _attr_value(op, name, decl, value):
    """value as the primitive attr the shim reads for declared type decl, or TypeError."""

    def bad(what):
        return TypeError(
            "%s: attr '%s' is declared %s, but got %s (%r)"
            % (op.__name__, name, decl, what or type(value).__name__, value)
        )

    def is_int(v):
        return isinstance(v, numbers.Integral) and not isinstance(v, (bool, _np.bool_))

    def is_num(v):
        return isinstance(v, numbers.Real) and not isinstance(v, (bool, _np.bool_))

    def in_range(v):
        bits = 31 if decl in ("int", "std::vector<int>") else 63
        return -(2**bits) <= int(v) < 2**bits

    if decl == "bool":
        if not isinstance(value, (bool, _np.bool_)):
            raise bad(None)
        return bool(value)
    if decl in _INT_TYPES:
        if not is_int(value):
            raise bad(None)
        if not in_range(value):
            raise bad("a value out of its range")
        return int(value)
    if decl == "float":
        if not is_num(value):
            raise bad(None)
        return float(value)
    if decl == "double":
        if not is_num(value):
            raise bad(None)
        return repr(float(value))  # AotExtra reads floats only: the shim parses the repr
    if decl == "std::string":
        if not isinstance(value, str):
            raise bad(None)
        return value
    if decl in _VEC:
        if not isinstance(value, (list, tuple)):
            raise bad(None)
        check = is_int if _VEC[decl] is int else is_num
        for v in value:
            if not check(v):
                raise bad("an item %r" % (v,))
            if _VEC[decl] is int and not in_range(v):
                raise bad("an item out of its range, %r" % (v,))
        return tuple(_VEC[decl](v) for v in value)
    raise TypeError(
        "%s: attr '%s' has type %s, which MindSpore's AOT attrs cannot carry (pdext.mindspore "
        "passes bool, int, int64_t, float, double, std::string and vectors of int, int64_t and "
        "float)" % (op.__name__, name, decl)
    )


# --- Primitives ------------------------------------------------------------------------------


class _Primitive(_Custom):
    """ops.Custom over the shim for one op, its input counts and its attrs."""

    def __init__(self, op, in_counts, attrs, bprop):
        lib, func = _load_shim()
        self._pd_op = op
        self._pd_in_counts = in_counts
        self._pd_attrs = attrs
        self._pd_nested = any(op.vector_inputs) or 0 in in_counts
        # out_shape / out_dtype are given (as callables never called: __infer__ is ours), so
        # MindSpore asks no C++ InferShape / InferType of the library.
        super().__init__(func, out_shape=_unused, out_dtype=_unused, func_type="aot",
                         bprop=bprop)
        multi = len(op.outputs) > 1 or any(op.vector_outputs)
        self.multi_output = multi
        self.add_prim_attr("multi_output", multi)
        self._pd_attr("pd_op", int(lib.pdext_ms_aot_add_op(_pdext._op_handle(op))))
        self._pd_attr("pd_name", op.__name__)
        self._pd_attr("pd_in", tuple(in_counts))
        for name, decl in zip(op.attrs, op.attr_types):
            if name in attrs:
                self._pd_attr(name, _attr_value(op, name, decl, attrs[name]))

    def _pd_eager(self, arrays):
        if self._pd_nested:
            ins, k = [], 0
            for n, vec in zip(self._pd_in_counts, self._pd_op.vector_inputs):
                ins.append(arrays[k : k + n] if vec else arrays[k] if n else None)
                k += n
        else:
            ins = arrays
        out = self._pd_op(*ins, **self._pd_attrs)
        if not self.multi_output:
            return _from_numpy(out)
        flat = []
        for o in out if isinstance(out, tuple) else (out,):
            flat.extend(o if isinstance(o, list) else [] if o is None else [o])
        return tuple(_from_numpy(o) for o in flat)

    def _pd_attr(self, name, value):
        # add_prim_attr without its setattr: an op's attr may be named like an attribute of
        # the primitive object ("name", "func").
        self.attrs[name] = value
        self.add_attr(name, value)

    def __infer__(self, *args):
        op = self._pd_op
        meta, k = [], 0
        for n, vec in zip(self._pd_in_counts, op.vector_inputs):
            items = []
            for a in args[k : k + n]:
                dt = a["dtype"]
                dt = dt.element_type() if hasattr(dt, "element_type") else dt
                if dt not in _FROM_MS:
                    raise TypeError(
                        "%s: input %d has MindSpore dtype %s, which pdext has no dtype for"
                        % (op.__name__, k + len(items), dt)
                    )
                items.append((_FROM_MS[dt], tuple(int(d) for d in a["shape"])))
            k += n
            meta.append(items if vec else (items[0] if items else None))
        outs, _ = _pdext.infer(op, meta, self._pd_attrs)
        shapes, dtypes = [], []
        for o in outs:
            for dt, shape in [] if o is None else (o if isinstance(o, list) else [o]):
                shapes.append(list(shape))
                dtypes.append(_TO_MS[dt])
        if not self.multi_output:
            return {"shape": shapes[0], "dtype": dtypes[0], "value": None}
        return {"shape": tuple(shapes), "dtype": tuple(dtypes), "value": None}

    def __call__(self, *args):
        # PyNative (an eager call of the primitive) with no gradient being recorded: the op
        # runs at once through pdext on the tensors' memory (asnumpy() waits for MindSpore's
        # queued work and shares the buffer; from_numpy shares pdext's result), which costs a
        # fraction of MindSpore's launch of a custom op. Recording a gradient, or in a graph
        # (where __call__ is not used), the primitive runs as MindSpore's AOT op.
        if not _requires_grad():
            try:
                arrays = [a.asnumpy() for a in args]
            except AttributeError:
                arrays = None
            if arrays is not None:
                return self._pd_eager(arrays)
        try:
            return super().__call__(*args)
        except RuntimeError as e:
            if "pdext_ms_aot" not in str(e):
                raise
            raise _pdext.OpError("%s (MindSpore: %s)" % (last_error(), str(e).splitlines()[0]))


def _from_numpy(a):
    return _Tensor.from_numpy(a if a.flags.c_contiguous else _np.ascontiguousarray(a))


def _unused(*args):
    return None


def _args(items):
    """items as the start of an argument list or tuple: "a, b, " ("" for none)."""
    return "".join(x + ", " for x in items)


def _attrs_key(attrs):
    def typed(v):
        if isinstance(v, (list, tuple)):
            return (type(v), tuple(typed(e) for e in v))
        return (type(v), v)

    return tuple(sorted((k, typed(v)) for k, v in attrs.items()))


class _Registry:
    """The ops of one register() call and their primitives, made on first use and cached."""

    def __init__(self, found):
        self.found = found
        self.prims = {}

    def primitive(self, name, in_counts, attrs):
        key = (name, tuple(in_counts), _attrs_key(attrs))
        prim = self.prims.get(key)
        if prim is None:
            with _lock:
                prim = self.prims.get(key)
                if prim is None:
                    if len(self.prims) >= _MAX_PRIMITIVES:
                        self.prims.clear()
                    prim = self.prims[key] = self._make(name, tuple(in_counts), attrs)
        return prim

    def _make(self, name, in_counts, attrs):
        op = self.found[name]
        for n, iname, opt in zip(in_counts, op.inputs, op.optional_inputs):
            if n == 0 and not opt:
                raise TypeError("%s(): input '%s' is missing" % (name, iname))
        for k in attrs:
            if k not in op.attrs:
                raise TypeError(
                    "%s(): unknown attr '%s' (declared: %s)"
                    % (name, k, ", ".join(op.attrs) or "none")
                )
        for k in attrs:
            i = op.attrs.index(k)
            _attr_value(op, k, op.attr_types[i], attrs[k])  # refuses a wrong type now
        bprop = self._bprop(op, in_counts, attrs)
        _keep[_pdext._op_handle(op)] = op
        return _Primitive(op, in_counts, attrs, bprop)

    def _bprop(self, op, in_counts, attrs):
        """The bprop of op's primitive: generated Python (MindSpore's graph compiler parses
        it) calling the grad op's primitive; None without a grad op."""
        grad = self.found.get(op.grad_op) if op.grad_op else None
        xs, groups, k = [], [], 0  # groups: per forward input, its parameters' names
        for n in in_counts:
            groups.append(["x%d" % (k + j) for j in range(n)])
            xs.extend(groups[-1])
            k += n
        why = None
        if grad is None:
            why = "%s has no grad op: mindspore.grad cannot differentiate it (declare one with " \
                  "PD_BUILD_GRAD_OP)" % op.__name__
        elif any(op.vector_outputs):
            why = "%s has a vector output: pdext.mindspore cannot differentiate it" % op.__name__
        if why is not None:
            # A bprop that says why, in PyNative and in graphs (MindSpore's own message would
            # be "Custom's bprop not defined").
            src = "def bprop(%sout, dout):\n    raise TypeError(%r)\n" % (_args(xs), why)
            return _compile(src, "bprop", "%s_no_bprop" % op.__name__, {})
        n_out = len(op.outputs)
        outs = [["out" if n_out == 1 else "out[%d]" % j] for j in range(n_out)]
        douts = [["dout" if n_out == 1 else "dout[%d]" % j] for j in range(n_out)]
        args, counts = [], []
        for gname, g in zip(grad.inputs, _front.grad_args(grad, groups, outs, douts)):
            if g is None:
                raise TypeError(
                    "%s: grad op %s takes input '%s', which is neither an input nor an output "
                    "of %s (nor an output's gradient)" % (op.__name__, grad.__name__, gname,
                                                          op.__name__)
                )
            args.extend(g)
            counts.append(len(g))
        # The grad op gets the forward call's attrs, declared defaults applied (a grad op may
        # declare as required an attr the forward op defaults).
        full = {k: v for k, v in zip(op.attrs, _pdext.infer_facts(op)["attr_defaults"])
                if v is not None}
        full.update(attrs)
        grad_attrs = {k: v for k, v in full.items() if k in grad.attrs}
        gp = self.primitive(grad.__name__, counts, grad_attrs)
        # The grad op's outputs, flat, as its primitive returns them.
        flat_out, k = [], 0
        for p, vec in zip(grad.grad_outputs, grad.vector_outputs):
            n = len(groups[p]) if vec and p is not None else 1
            flat_out.append(list(range(k, k + n)))
            k += n
        multi = gp.multi_output
        rets = []
        for idx, group in zip(_front.input_grads(grad, flat_out, len(op.inputs)), groups):
            for j, x in enumerate(group):
                if idx is None:
                    rets.append("_zeros(%s)" % x)
                else:
                    rets.append("g[%d]" % idx[j] if multi else "g")
        src = "def bprop(%sout, dout):\n    g = _gp(%s)\n    return (%s)\n" % (
            _args(xs), ", ".join(args), _args(rets))
        return _compile(src, "bprop", "%s_bprop_%s" % (op.__name__, "_".join(map(str, in_counts))),
                        {"_gp": gp, "_zeros": _ops.zeros_like})


_compiled = [0]


def _source_file(src, tag):
    """A file holding src (named by its hash, written once, atomically), or None when the
    cache directory cannot be written."""
    digest = hashlib.sha256(src.encode()).hexdigest()[:16]
    d = _front.cache_dir("mindspore-gen")
    path = os.path.join(d, "%s_%s.py" % (tag[:60], digest))
    if os.path.exists(path):
        return path
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".py", dir=d)
        with os.fdopen(fd, "w") as f:
            f.write(src)
        os.replace(tmp, path)
        return path
    except OSError:
        return None


def _compile(src, fname, tag, env):
    """Function fname from the generated source src. MindSpore's graph compiler reads a
    function's source (inspect) and resolves its globals by importing fn.__module__: the
    text goes into a file of pdext's cache (or, where it cannot be written, linecache) and
    the globals into a module of its own in sys.modules."""
    with _lock:
        _compiled[0] += 1
        modname = "pdext._mindspore_gen_%d" % _compiled[0]
    filename = _source_file(src, tag)
    if filename is None:
        filename = "<%s %s>" % (modname, tag)
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    module = types.ModuleType(modname, "pdext.mindspore: generated code of " + tag)
    module.__dict__.update(env)
    module.__file__ = filename
    sys.modules[modname] = module
    exec(compile(src, filename, "exec"), module.__dict__)
    return module.__dict__[fname]


def _function(op, registry):
    """The user-facing function of op: generated Python that takes the inputs (a list for a
    vector input) and the attrs as keywords (None: the declared default)."""
    ins = [_py_name(n) for n in op.inputs]
    attrs = [_py_name(a) for a in op.attrs]

    def pick(counts, *values):
        given = {k: v for k, v in zip(op.attrs, values) if v is not None}
        return registry.primitive(op.__name__, counts, given)

    optional = [i for i, o in enumerate(op.optional_inputs) if o]
    if len(optional) > 4:
        raise TypeError(
            "pdext.mindspore: %s has %d optional inputs; pdext.mindspore handles at most 4"
            % (op.__name__, len(optional))
        )

    def call(present):
        """The call with the optional inputs in `present` given, the others absent."""
        counts, flat = [], []
        for i, (n, vec) in enumerate(zip(ins, op.vector_inputs)):
            if i in optional and i not in present:
                counts.append("0")
            else:
                counts.append("len(%s)" % n if vec else "1")
                flat.append("*%s" % n if vec else n)
        return "_pick((%s), %s)(%s)" % ("".join(c + ", " for c in counts), ", ".join(attrs),
                                         ", ".join(flat))

    # An absent optional input (None) is a compile-time fact in a graph: one branch per
    # combination of the optional inputs given.
    lines = []
    for mask in range(2 ** len(optional) - 1, 0, -1):
        present = [optional[j] for j in range(len(optional)) if mask >> j & 1]
        absent = [optional[j] for j in range(len(optional)) if not mask >> j & 1]
        cond = " and ".join(["%s is not None" % ins[i] for i in present] +
                            ["%s is None" % ins[i] for i in absent])
        lines.append("    if %s:\n        return %s\n" % (cond, call(present)))
    lines.append("    return %s\n" % call([]))
    params = [n + ("=None" if i in optional else "") for i, n in enumerate(ins)]
    params += ["%s=None" % a for a in attrs]
    src = "def %s(%s):\n%s" % (op.__name__, ", ".join(params), "".join(lines))
    return _compile(src, op.__name__, op.__name__, {"_pick": _ops.constexpr(pick)})


class _Ops(types.SimpleNamespace):
    """The functions register() returns, as attributes."""


def register(ops):
    """A module with one MindSpore function per op of `ops` (a module from pdext.load,
    load_inline, load_library or a bundle; one op; a pdext.aot callable made with n_inputs):
    each calls an ops.Custom AOT primitive, in PyNative and in graphs, differentiable through
    the op's grad op (see the module's doc). Builds the AOT shim on first use (cached)."""
    title, found = _front.ops_of(ops, "pdext.mindspore.register")
    with _lock:
        _load_shim()
    registry = _Registry(found)
    # Not a module object: MindSpore's graph compiler imports modules it meets by name.
    mod = _Ops()
    mod.__name__ = title + ".mindspore"
    mod.__doc__ = "MindSpore functions over " + title
    for name, op in found.items():
        fn = _function(op, registry)
        fn.__doc__ = op.__doc__
        fn.op = op
        setattr(mod, name, fn)
    mod.ops = ops
    return mod
