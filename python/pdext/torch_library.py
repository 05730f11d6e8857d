"""pdext.torch.register (re-exported by pdext.torch): every op of a pdext module a torch.library
operator. The schema comes from the op's declaration, the CPU and CUDA kernels are one boxed C++
kernel (torch_native.cpp) that runs the op through the pdext runner (a Python kernel over
DLPack where it cannot be built, and for in-place ops), the fake kernel is pdext's own
inference on shapes only (_pdext.infer: pd_op_infer), and a forward op with a grad op gets
an autograd rule (C++ beside the kernel; torch.library.register_autograd where that cannot be
built) that calls the grad op as a torch op itself (so that a grad op with a double grad op is
twice differentiable)."""

import inspect as _inspect
import threading as _threading
import types

import torch as _torch

from . import _front, _pdext
from . import torch_native as _tn
from .torch_native import native_kernels  # noqa: F401 (pdext.torch re-exports it)

# --- torch.library registration ----------------------------------------------------------------
#
# What runs in Python per eager call: only torch's own dispatch from torch.ops. The autograd
# kernel and the CPU / CUDA kernels are C++ (torch_native.cpp); the Python kernels below
# (_make_kernel) and register_autograd serve in-place ops and machines where the native ones
# cannot be built: they detach, call the pdext op (DLPack in, torch.from_dlpack out) and drop
# in-place outputs.

# pdext attr types -> torch schema types.
_SCHEMA_TYPES = {
    "bool": "bool",
    "int": "int",
    "int64_t": "int",
    "float": "float",
    "double": "float",
    "std::string": "str",
    "std::vector<int>": "int[]",
    "std::vector<int64_t>": "int[]",
    "std::vector<float>": "float[]",
    "std::vector<std::string>": "str[]",
}

# pdext dtype names <-> torch dtypes (the dtypes both have).
_TORCH_DTYPES = {
    "bool": _torch.bool,
    "int8": _torch.int8,
    "uint8": _torch.uint8,
    "int16": _torch.int16,
    "int32": _torch.int32,
    "int64": _torch.int64,
    "float16": _torch.float16,
    "bfloat16": _torch.bfloat16,
    "float32": _torch.float32,
    "float64": _torch.float64,
    "complex64": _torch.complex64,
    "complex128": _torch.complex128,
}
for _name in ("uint16", "uint32", "uint64"):
    if hasattr(_torch, _name):
        _TORCH_DTYPES[_name] = getattr(_torch, _name)
_PDEXT_DTYPES = {v: k for k, v in _TORCH_DTYPES.items()}

_MIN_TORCH = (2, 4)
_lock = _threading.Lock()
# (namespace, op name) -> the _Registration that defined it.
_defined = {}


def _torch_version():
    parts = []
    for p in _torch.__version__.split("+")[0].split(".")[:2]:
        digits = "".join(c for c in p if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _schema_default(value, type_name):
    if value is None:
        return "None"
    if type_name == "bool":
        return "True" if value else "False"
    if type_name == "str":
        return '"%s"' % value.replace("\\", "\\\\").replace('"', '\\"')
    if type_name.endswith("[]"):
        inner = type_name[:-2]
        return "[%s]" % ", ".join(_schema_default(v, inner) for v in value)
    if type_name == "float":
        return repr(float(value))
    return repr(int(value))


def _identifier(name):
    """py_op.c's Python name of a declared name: every character not allowed in an identifier
    becomes '_'."""
    return "".join(c if (c.isalnum() or c == "_") and (i or not c.isdigit()) else "_"
                   for i, c in enumerate(name))


class _Facts:
    """What the torch side needs of one pdext op, read once from its declaration."""

    def __init__(self, op):
        self.op = op
        self.name = op.__name__
        self.inputs = op.inputs
        self.n_in = len(op.inputs)
        self.vector = op.vector_inputs
        self.optional = op.optional_inputs
        self.written = op.written_inputs
        self.attrs = op.attrs
        self.outputs = op.outputs
        self.vector_out = op.vector_outputs
        # A grad op's binding to its forward op, as libpdext computed it (None: forward op).
        self.grad_inputs = op.grad_inputs
        self.grad_outputs = op.grad_outputs
        infer = _pdext.infer_facts(op)
        # Python names of the arguments ("Out@GRAD" -> "Out_GRAD"), as the op's call takes them.
        self.in_params = [_identifier(n) for n in self.inputs]
        self.attr_params = list(self.attrs)
        self.attr_defaults = [
            _inspect.Parameter.empty if required else d
            for required, d in zip(op.attr_required, infer["attr_defaults"])
        ]
        self.sources = infer["sources"]
        self.infer_shape = infer["infer_shape"]
        self.infer_dtype = infer["infer_dtype"]
        # The outputs that are an input written in place: torch forbids a custom op to return
        # an alias of an input, so the schema marks the input mutable (Tensor(a!)) and returns
        # only the other outputs.
        self.inplace_out = [
            self.written[s] if s >= 0 and self.written[s] else False for s in self.sources
        ]
        self.returned = [o for o in range(len(self.outputs)) if not self.inplace_out[o]]
        # Argument positions whose None means the declared default (str[] attrs, see schema()).
        self.none_defaults = {
            self.n_in + j: d
            for j, (t, d) in enumerate(zip(op.attr_types, self.attr_defaults))
            if t == "std::vector<std::string>" and d is not _inspect.Parameter.empty
        }

        self.n_args = self.n_in + len(self.attrs)
        self.arg_names = self.in_params + self.attr_params
        empty = _inspect.Parameter.empty
        self.arg_defaults = [None if o else empty for o in self.optional] + [
            None if self.n_in + j in self.none_defaults else d
            for j, d in enumerate(self.attr_defaults)
        ]

    def with_defaults(self, args, kwargs=None):
        """The torch op's arguments as the pdext op takes them, all positional: torch hands a
        kernel its keyword-only arguments as keywords and may leave out those equal to their
        defaults."""
        if kwargs or len(args) < self.n_args:
            kwargs = kwargs or {}
            full = list(args)
            for k in range(len(args), self.n_args):
                name = self.arg_names[k]
                if name in kwargs:
                    full.append(kwargs[name])
                elif self.arg_defaults[k] is not _inspect.Parameter.empty:
                    full.append(self.arg_defaults[k])
                else:
                    raise TypeError("%s: missing argument '%s'" % (self.name, name))
            args = full
        if not self.none_defaults:
            return args
        args = list(args)
        for k, d in self.none_defaults.items():
            if k < len(args) and args[k] is None:
                args[k] = list(d)
        return args

    def schema(self):
        args = []
        seen_default = False
        alias = iter("abcdefghijklmnopqrstuvwxyz")
        for i in range(self.n_in):
            t = "Tensor"
            if self.written[i]:
                t = "Tensor(%s!)" % next(alias)
            if self.vector[i]:
                t += "[]"
            if self.optional[i]:
                t += "?"
            arg = "%s %s" % (t, self.in_params[i])
            if self.optional[i]:
                arg += "=None"
            seen_default = seen_default or self.optional[i]
            args.append(arg)
        for name, type_name, default in zip(self.attr_params, self.op.attr_types, self.attr_defaults):
            t = _SCHEMA_TYPES.get(type_name)
            if t is None:
                raise TypeError(
                    "pdext.torch.register: %s: attr '%s' has type %s, which has no torch schema "
                    "type" % (self.name, name, type_name)
                )
            has_default = default is not _inspect.Parameter.empty
            if seen_default and not has_default and "*" not in args:
                # torch's schemas take no positional argument without a default after one with
                # a default: from here on the attrs are keyword-only.
                args.append("*")
            seen_default = seen_default or has_default
            if has_default and t == "str[]":
                # torch's schemas have no str[] defaults: the attr is optional, and None stands
                # for the declared default (the kernels put it back, with_defaults).
                args.append("str[]? %s=None" % name)
                continue
            arg = "%s %s" % (t, name)
            if has_default:
                arg += "=" + _schema_default(default, t)
            args.append(arg)
        rets = ["Tensor[]" if self.vector_out[o] else "Tensor" for o in self.returned]
        ret = rets[0] if len(rets) == 1 else "(%s)" % ", ".join(rets)
        return "(%s) -> %s" % (", ".join(args), ret)


def _detach(x):
    """What the pdext op is given for a torch argument: DLPack refuses tensors that require
    grad, and the kernel runs below autograd, so a plain view (same storage) goes in."""
    if isinstance(x, _torch.Tensor):
        return x.detach() if x.requires_grad else x
    if isinstance(x, (list, tuple)):
        return [_detach(v) for v in x]
    return x


def _make_kernel(f):
    op, n_in, returned = f.op, f.n_in, f.returned
    n_out = len(f.outputs)

    fill = f.with_defaults
    written = [i for i in range(n_in) if f.written[i]]
    if written:
        plain = _make_kernel_body(f, fill)

        def kernel(*args, **kwargs):
            if _torch.is_grad_enabled():
                for i in written:
                    x = args[i] if i < len(args) else kwargs.get(f.in_params[i])
                    for t in x if isinstance(x, (list, tuple)) else (x,):
                        if isinstance(t, _torch.Tensor) and t.requires_grad:
                            raise RuntimeError(
                                "%s(): input '%s' requires grad, but the op writes it in place "
                                "and has no autograd rule; call it under torch.no_grad() or "
                                "on a detached tensor" % (f.name, f.inputs[i])
                            )
            return plain(*args, **kwargs)

        kernel.__name__ = f.name
        return kernel
    return _make_kernel_body(f, fill)


def _make_kernel_body(f, fill):
    op, n_in, returned = f.op, f.n_in, f.returned
    n_out = len(f.outputs)

    if n_out == 1 and returned == [0]:

        def kernel(*args, **kwargs):
            args = fill(args, kwargs)
            return op(*[_detach(a) for a in args[:n_in]], *args[n_in:])

    else:

        def kernel(*args, **kwargs):
            args = fill(args, kwargs)
            res = op(*[_detach(a) for a in args[:n_in]], *args[n_in:])
            if n_out == 1:
                res = (res,)
            out = tuple(res[o] for o in returned)
            if not out:
                return None
            return out[0] if len(out) == 1 else out

    kernel.__name__ = f.name
    return kernel


def _is_sym(size):
    return not isinstance(size, int)


def _desc(t):
    dtype = _PDEXT_DTYPES.get(t.dtype)
    if dtype is None:
        raise TypeError("%s has no pdext dtype" % t.dtype)
    return (dtype, tuple(t.shape))


def _make_fake(f):
    """The fake (meta) kernel: output dtypes and shapes from pd_op_infer on the inputs' dtypes
    and shapes; no data is read or made. Symbolic sizes (torch.compile(dynamic=True), export
    with dynamic shapes) pass through unchanged where the op has no infer_shape function (its
    outputs mirror an input: the runner's default inference); an op with an infer_shape function
    is a C function of concrete sizes, so its symbolic input sizes are specialized (int(),
    which guards: a new size recompiles) before it runs."""
    op, n_in = f.op, f.n_in

    def fake(*args, **kwargs):
        args = f.with_defaults(args, kwargs)
        inputs = args[:n_in]
        attrs = dict(zip(f.attrs, args[n_in:]))
        device = None
        symbolic = False
        for x in inputs:
            for t in x if isinstance(x, (list, tuple)) else (x,):
                if t is None:
                    continue
                if device is None:
                    device = t.device
                symbolic = symbolic or any(_is_sym(s) for s in t.shape)

        def describe(t):
            dtype = _PDEXT_DTYPES.get(t.dtype)
            if dtype is None:
                raise TypeError(
                    "%s: input dtype %s has no pdext dtype" % (f.name, t.dtype)
                )
            shape = tuple(s if isinstance(s, int) else _concrete(s, f) for s in t.shape)
            return (dtype, shape)

        descs = []
        for x in inputs:
            if x is None:
                descs.append(None)
            elif isinstance(x, (list, tuple)):
                descs.append([describe(t) for t in x])
            else:
                descs.append(describe(x))
        try:
            res = _pdext.infer(op, descs, attrs)[0]
        except (_pdext.OpError, ValueError) as e:
            raise type(e)(
                "%s: the fake kernel (pdext's inference on shapes only, from the op's %s) "
                "failed: %s"
                % (f.name, "infer_shape/infer_dtype functions" if f.infer_shape or f.infer_dtype
                   else "default inference", e)
            ) from None
        outs = []
        for o in f.returned:
            r = res[o]
            src = f.sources[o]
            mirror = symbolic and not f.infer_shape and src >= 0 and inputs[src] is not None
            if f.vector_out[o]:
                items = []
                for k, item in enumerate(r):
                    shape = tuple(inputs[src][k].shape) if mirror else item[1]
                    items.append(_torch.empty(shape, dtype=_TORCH_DTYPES[item[0]], device=device))
                outs.append(items)
            else:
                if mirror:  # a vector input's first tensor, as the runner mirrors it
                    x = inputs[src]
                    shape = tuple((x[0] if isinstance(x, (list, tuple)) else x).shape)
                else:
                    shape = r[1]
                outs.append(_torch.empty(shape, dtype=_TORCH_DTYPES[r[0]], device=device))
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    return fake


def _concrete(size, f):
    """A symbolic size as a concrete int for pd_op_infer. Where the op mirrors its inputs
    (no infer_shape) the fake kernel puts the symbolic sizes back on the outputs, and only the
    hint is read (no guard); otherwise int() specializes the size (a guard)."""
    if not f.infer_shape:
        hint = getattr(getattr(size, "node", None), "hint", None)
        if hint is not None:
            return int(hint)
    return int(size)


def _autograd(f, grad, qual_grad):
    """setup_context and backward for op `f` from its grad op `grad` (a _Facts), called as the
    torch op `qual_grad` so that its own autograd (from the double grad op) records history.

    The grad op's inputs are bound as libpdext bound them at registration (grad.grad_inputs):
    the forward inputs ("X"), the forward outputs ("Out") and the output gradients
    ("Out@GRAD"); its outputs (grad.grad_outputs, "X@GRAD") are the gradients of the forward
    inputs (None for an input it has none for)."""
    need_in = sorted({b[1] for b in grad.grad_inputs if b is not None and b[0] == "input"})
    need_out = sorted({b[1] for b in grad.grad_inputs if b is not None and b[0] == "output"})
    grad_attrs = [a for a in grad.attrs if a in f.attrs]
    attr_pos = {a: f.n_in + f.attrs.index(a) for a in grad_attrs}
    grad_fn = [None]

    def setup_context(ctx, inputs, output, keyword_only_inputs=None):
        inputs = f.with_defaults(inputs, keyword_only_inputs)
        outs = output if len(f.outputs) > 1 else (output,)
        flat, layout = [], []
        for v in [inputs[i] for i in need_in] + [outs[o] for o in need_out]:
            if isinstance(v, (list, tuple)):
                layout.append(len(v))
                flat.extend(v)
            else:
                layout.append(None if v is not None else -1)
                if v is not None:
                    flat.append(v)
        ctx.save_for_backward(*flat)
        ctx.layout = layout
        ctx.attrs = {a: inputs[attr_pos[a]] for a in grad_attrs}

    def backward(ctx, *gouts):
        saved = list(ctx.saved_tensors)
        ins, outs, k = [None] * f.n_in, [None] * len(f.outputs), 0
        slots = [(ins, i) for i in need_in] + [(outs, o) for o in need_out]
        for (values, j), n in zip(slots, ctx.layout):
            if n is None:
                values[j] = saved[k]
                k += 1
            elif n != -1:
                values[j] = saved[k : k + n]
                k += n
        # torch hands one gradient per returned output (an output written in place is not).
        ograds = [None] * len(f.outputs)
        for o, g in zip(f.returned, gouts):
            ograds[o] = g
        if grad_fn[0] is None:
            ns, name = qual_grad.split("::")
            grad_fn[0] = getattr(getattr(_torch.ops, ns), name).default
        res = grad_fn[0](*_front.grad_args(grad, ins, outs, ograds), **ctx.attrs)
        res = res if len(grad.returned) > 1 else (res,)
        full = [None] * len(grad.outputs)
        for o, r in zip(grad.returned, res):
            full[o] = r
        return tuple(_front.input_grads(grad, full, f.n_in)) + (None,) * len(f.attrs)

    return setup_context, backward


def _not_differentiable(f):
    """The autograd rule of an op without a grad op: its outputs are marked non-differentiable,
    as torch's own integer-valued ops are, so that a backward through them alone fails with
    torch's usual "does not require grad" and a backward that only passes by goes on."""

    def setup_context(ctx, inputs, output, keyword_only_inputs=None):
        outs = output if isinstance(output, tuple) else (output,)
        flat = []
        for o in outs:
            flat.extend(o if isinstance(o, list) else [o])
        ctx.mark_non_differentiable(*[t for t in flat if t is not None])

    def backward(ctx, *gouts):
        return (None,) * f.n_args

    return setup_context, backward


class Registered(types.SimpleNamespace):
    """What pdext.torch.register returns: one attribute per op, the torch op
    (torch.ops.<namespace>.<name>), plus `namespace`, `qualnames` and `library` (the
    torch.library.Library holding the definitions)."""


class _Registration:
    def __init__(self, key, namespace, library, result):
        self.key = key
        self.namespace = namespace
        self.library = library
        self.result = result
        self.names = []
        self.native = []  # the ops whose CPU kernel is the native one


def register(ops, namespace="pdext", replace=False, native=None):
    """Defines every op of `ops` (forward, grad and double grad ops) as torch operators in
    `namespace`, callable as torch.ops.<namespace>.<op name>:

        tops = pdext.torch.register(pdext.load("relu", ["relu.c"]), namespace="myops")
        y = torch.ops.myops.custom_relu(x)        # or tops.custom_relu(x)

    Each op's schema comes from its declaration: Tensor inputs, Tensor? for optional ones,
    Tensor[] for vector inputs and outputs, int / float / bool / str and their lists for
    attrs (with the declared defaults), Tensor(a!) for an input the op writes in place (the
    in-place output is not returned: torch's custom ops return no alias of an input). The CPU
    and CUDA kernels call the pdext op on the tensors without copying; the fake kernel runs
    pdext's inference on shapes only; a forward op with a grad op gets an autograd rule calling
    the grad op (itself differentiable where it has a double grad op). torch.compile traces the
    ops without a graph break, torch.export keeps them, torch.library.opcheck checks them.

    Registering the same module in the same namespace again returns the first registration.
    An op name already defined in the namespace by another registration is a ValueError,
    unless replace=True: then that earlier registration is removed as a whole (all its ops)
    before this one is made. Needs torch >= 2.4.

    native: None (default) runs CPU and CUDA calls, and the autograd rules, through pdext's
    native C++ kernels (torch_native.cpp, built once per torch version into pdext's cache)
    where they can be built, else through the Python kernel (DLPack) and torch's
    register_autograd; True requires the native kernels; False uses the Python ones. Ops that
    write an input in place use the Python kernel."""
    if _torch_version() < _MIN_TORCH:
        raise RuntimeError(
            "pdext.torch.register needs torch >= %d.%d (torch.library.register_fake and "
            "register_autograd); this is torch %s" % (_MIN_TORCH + (_torch.__version__,))
        )
    if not isinstance(namespace, str) or not namespace.isidentifier():
        raise ValueError("pdext.torch.register: namespace %r is not an identifier" % (namespace,))
    found = _front.ops_of(ops, "pdext.torch.register")[1]
    key = (namespace, id(ops))
    with _lock:
        for reg in {r for r in _defined.values() if r.key == key}:
            if reg.names and all(n in found for n in reg.names):
                return reg.result
        clashes = {}
        for name in found:
            reg = _defined.get((namespace, name))
            if reg is not None:
                clashes.setdefault(id(reg), (reg, []))[1].append(name)
        for reg, names in clashes.values():
            if not replace:
                raise ValueError(
                    "pdext.torch.register: torch.ops.%s already has op(s) %s from an earlier "
                    "pdext.torch.register; use another namespace, or replace=True to drop that "
                    "registration" % (namespace, ", ".join(sorted(names)))
                )
            _unregister(reg)
        for name in found:
            if (namespace, name) not in _defined and _torch_has(namespace, name):
                raise ValueError(
                    "pdext.torch.register: torch.ops.%s.%s is already defined (not by pdext); "
                    "use another namespace" % (namespace, name)
                )
        return _define(found, namespace, key, native)


def _torch_has(namespace, name):
    try:
        return _torch._C._dispatch_has_kernel_for_dispatch_key(
            "%s::%s" % (namespace, name), "CompositeImplicitAutograd"
        ) or bool(_torch._C._jit_get_schemas_for_operator("%s::%s" % (namespace, name)))
    except Exception:
        return False


def _unregister(reg):
    if reg.native:
        for name in reg.native:
            _tn.lib().pdext_torch_native_drop(reg.namespace.encode(), name.encode())
        reg.native = []
    reg.library._destroy()
    for name in reg.names:
        _defined.pop((reg.namespace, name), None)
    reg.names = []


def _define(found, namespace, key, use_native):
    lib = _torch.library.Library(namespace, "FRAGMENT")
    native = _tn.lib() if use_native is not False else None
    if use_native and native is None:
        raise RuntimeError("pdext.torch.register: the native kernel cannot be built: %s"
                           % _tn.native_kernels()[1])
    result = Registered(namespace=namespace, library=lib, qualnames={},
                        native=native is not None)
    reg = _Registration(key, namespace, lib, result)
    reg.ops = found  # the pd_ops the native kernels run live as long as their Libraries
    facts = {name: _Facts(op) for name, op in found.items()}
    try:
        for name, f in facts.items():
            lib.define(name + f.schema())
            reg.names.append(name)
            _defined[(namespace, name)] = reg
            qual = "%s::%s" % (namespace, name)
            kernel = _make_kernel(f)
            if native is not None and not any(f.written):
                # CUDA calls run on torch's current stream (torch_native.cpp).
                _tn.register_kernel(native, f, namespace, "CPU")
                _tn.register_kernel(native, f, namespace, "CUDA")
                reg.native.append(name)
            else:
                # The Python kernel runs CUDA calls on torch's current stream (py_device.c).
                lib.impl(name, kernel, "CPU")
                lib.impl(name, kernel, "CUDA")
            _torch.library.register_fake(qual, _make_fake(f), lib=lib)
            result.qualnames[name] = qual
        for name, f in facts.items():
            if any(f.written):
                continue  # the kernel refuses inputs that record history (_make_kernel)
            grad = facts.get(f.op.grad_op) if f.op.grad_op else None
            if native is not None and (grad is None or any(grad.written)):
                _tn.register_autograd(native, f, None, namespace)  # non-differentiable
                if name not in reg.native:
                    reg.native.append(name)
                continue
            if grad is None or any(grad.written):
                setup_context, backward = _not_differentiable(f)
            elif native is not None:
                # In C++: a call with no input needing grad stays in C++ (torch's Python
                # autograd kernel cost as much as the op).
                _tn.register_autograd(native, f, grad, namespace)
                if name not in reg.native:
                    reg.native.append(name)
                continue
            else:
                setup_context, backward = _autograd(f, grad, result.qualnames[grad.name])
            _torch.library.register_autograd(
                result.qualnames[name], backward, setup_context=setup_context, lib=lib
            )
    except BaseException:
        _unregister(reg)
        raise
    for name in facts:
        setattr(result, name, getattr(getattr(_torch.ops, namespace), name))
    return result
