"""JAX for pdext ops: each op becomes an XLA FFI custom call, usable eagerly and under
jax.jit, jax.grad / jax.vjp and jax.vmap, with no JAX-specific code from its author.

    ops = pdext.load("relu", ["relu.c"])
    jops = pdext.jax.register(ops)
    y = jax.jit(jops.custom_relu)(x)                 # x: a jax array (CPU)
    g = jax.grad(lambda x: jops.custom_relu(x).sum())(x)
    out = jops.custom_concat([a, b], axis=1)         # vector inputs as lists, attrs as keywords

How it works:
- The call runs through one C handler (xla_ffi_handler.c, shipped with this package) written
  against the XLA FFI C API of jaxlib; pdext's JIT builds it on first use against
  jax.ffi.include_dir() and caches it like any module. It is registered under one target per
  op; XLA's operand and result buffers go to the pdext runner (pd_op_run_into) without a
  copy: the kernel writes into XLA's result buffers. An op's error comes back as an XLA FFI
  error carrying pdext's message, which JAX raises.
- Result shapes and dtypes come at trace time from pd_op_infer (_pdext.infer): the op's infer
  functions on shapes only. An op whose output shape depends on its data is refused there,
  with pd_op_infer's message.
- Attrs are checked against the declaration (a TypeError names the attr and its declared
  type), defaults applied, and passed to XLA as typed attributes (int -> s32, int64_t -> s64,
  float -> f32, double -> f64, bool -> pred, std::string -> string, vectors -> arrays;
  std::vector<std::string>, which XLA has no attribute for, as one encoded string).
- Gradients: an op with a grad op is a jax.custom_vjp whose backward runs the grad op, itself
  differentiable where it has a grad op of its own (a double grad op). An op without one
  raises a TypeError naming it when differentiated. Ops with a vector output are not
  differentiable here.
- vmap: an op whose declaration has the flag PD_OP_LEADING_BATCH (pd_op.h: a leading
  dimension may be a batch; the examples' relu has it) gets XLA FFI's "broadcast_all" method:
  the whole batch goes to one call as a leading axis, an unbatched input broadcast to it.
  An op that declares nothing gets "sequential": it runs once per batch element (correct
  for any op, and slow: one call per element). register(ops, vmap={"custom_relu":
  "expand_dims"}) overrides the declaration per op: "expand_dims" / "broadcast_all" (one
  call), "sequential", or "sequential_unrolled" (the loop unrolled).
- Devices: the handler is registered for the "cpu" platform, and its CUDA entry
  (xla_ffi_cuda.c) for "CUDA" where jaxlib has a GPU plug-in and a GPU is present; it runs
  the op's kernels on XLA's stream for the call. An input on another device (or on several)
  is refused naming it.
"""

import ctypes
import os
import re
import threading
import types

import jax as _jax
import jax.numpy as _jnp
import numpy as _np

from . import _front, _pdext

__all__ = ["register", "ffi_api_version"]

# The attrs' declared types as the numpy types that make XLA's typed attributes.
_SCALAR = {
    "bool": _np.bool_,
    "int": _np.int32,
    "int64_t": _np.int64,
    "float": _np.float32,
    "double": _np.float64,
}
_VECTOR = {
    "std::vector<int>": _np.int32,
    "std::vector<int64_t>": _np.int64,
    "std::vector<float>": _np.float32,
}

_lock = threading.Lock()
_handler = None  # (ctypes library, capsules of the CPU and CUDA entries (None: no GPU))
_targets = {}  # op handle -> (target name, index in the handler's table)
_keep = []  # the Op objects registered: their libraries stay loaded while XLA may call them


def ffi_api_version(include_dir=None):
    """The XLA FFI C API version (major, minor) of the jaxlib in use, from the c_api.h it
    ships (jax.ffi.include_dir())."""
    path = os.path.join(include_dir or _jax.ffi.include_dir(), "xla", "ffi", "api", "c_api.h")
    with open(path) as f:
        text = f.read()
    found = [re.search(r"#define\s+XLA_FFI_API_%s\s+(\d+)" % w, text) for w in ("MAJOR", "MINOR")]
    if None in found:
        raise RuntimeError("pdext.jax: %s does not define XLA_FFI_API_MAJOR / MINOR" % path)
    return int(found[0].group(1)), int(found[1].group(1))


def _built_version(lib):
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.pdext_xla_ffi_built_version(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def _check_version(built, runtime):
    """Refuses a jaxlib whose FFI API is older than the handler's (or of another major)."""
    if runtime[0] != built[0] or runtime[1] < built[1]:
        raise RuntimeError(
            "pdext.jax: this jaxlib's XLA FFI API is %d.%d, older than %d.%d, which pdext's "
            "XLA FFI handler was built against; upgrade jaxlib (or clear the pdext JIT cache "
            "if jaxlib was downgraded)" % (runtime + built)
        )


def _load_handler():
    """Builds (first use) or finds in the JIT cache the handler library, against the headers
    of the jaxlib in use, and loads it."""
    global _handler
    if _handler is not None:
        return _handler
    include = _jax.ffi.include_dir()
    runtime = ffi_api_version(include)
    here = os.path.dirname(os.path.abspath(__file__))
    sources = [os.path.join(here, f) for f in ("xla_ffi_handler.c", "xla_ffi_cuda.c")]
    libpdext = _pdext._library_path()
    # Linked against the very libpdext this package runs on (the loader finds it already
    # loaded by its soname), so that op handles and the runner are one. The JIT's cache key
    # covers the headers the source includes: another jaxlib's c_api.h is a rebuild.
    path = _pdext.load(
        "pdext_xla_ffi",
        sources,
        include_dirs=[include],
        ldflags=[libpdext, "-Wl,-rpath," + os.path.dirname(libpdext)],
        library_only=True,
    )
    lib = ctypes.CDLL(path)
    _check_version(_built_version(lib), runtime)
    lib.pdext_xla_ffi_add_op.restype = ctypes.c_int64
    lib.pdext_xla_ffi_add_op.argtypes = [ctypes.c_void_p]
    lib.pdext_xla_ffi_leading_batch.restype = ctypes.c_int
    lib.pdext_xla_ffi_leading_batch.argtypes = [ctypes.c_void_p]
    cuda = _jax.ffi.pycapsule(lib.pdext_xla_ffi_handler_cuda) if _gpu_present() else None
    _handler = (lib, _jax.ffi.pycapsule(lib.pdext_xla_ffi_handler), cuda)
    return _handler


def _gpu_present():
    """Whether this jax has a CUDA GPU (jaxlib's GPU plug-in and a device): the handler's CUDA
    entry is then registered too."""
    try:
        return any(d.platform == "gpu" for d in _jax.devices("cuda"))
    except RuntimeError:  # no CUDA backend in this jaxlib, or no device
        return False


def _target(op):
    """The FFI target of op and its index in the handler's table, registered on first use."""
    handle = _pdext._op_handle(op)
    found = _targets.get(handle)
    if found is not None:
        return found
    with _lock:
        found = _targets.get(handle)
        return found if found is not None else _register_target(op, handle)


def _register_target(op, handle):
    lib, capsule, cuda = _load_handler()
    index = lib.pdext_xla_ffi_add_op(handle)
    if index < 0:
        raise RuntimeError("pdext.jax: %s: the handler's op table is full" % op.__name__)
    name = "pdext_%d_%s" % (index, op.__name__)
    _jax.ffi.register_ffi_target(name, capsule, platform="cpu")
    if cuda is not None:
        _jax.ffi.register_ffi_target(name, cuda, platform="CUDA")
    _keep.append(op)
    _targets[handle] = (name, index)
    return name, index


def _declared_vmap(op):
    """The vmap method op's declaration implies: "broadcast_all" where it declares that a
    leading dimension may be a batch (PD_OP_LEADING_BATCH; every input then gets the batch
    axis, an unbatched one broadcast, as the flag's promise needs equal leading sizes), else
    "sequential"."""
    lib = _load_handler()[0]
    batches = lib.pdext_xla_ffi_leading_batch(_pdext._op_handle(op))
    return "broadcast_all" if batches else "sequential"


def _py_name(name):
    return name.replace("@", "_")


def _bind(op, args, kwargs):
    """The op's inputs (one entry per declared input) and the attrs given, from a call."""
    n_in = len(op.inputs)
    inputs = list(args[:n_in]) + [None] * max(0, n_in - len(args))
    extra = args[n_in:]
    if len(extra) > len(op.attrs):
        raise TypeError(
            "%s() takes %d inputs and %d attrs, but %d positional arguments were given"
            % (op.__name__, n_in, len(op.attrs), len(args))
        )
    attrs = dict(zip(op.attrs, extra))
    by_name = {_py_name(n): i for i, n in enumerate(op.inputs)}
    for key, value in kwargs.items():
        if key in by_name:
            inputs[by_name[key]] = value
        elif key in attrs:
            raise TypeError("%s(): attr '%s' given twice" % (op.__name__, key))
        else:
            attrs[key] = value  # unknown names: _pdext.infer raises, naming the declared ones
    for i, (x, name) in enumerate(zip(inputs, op.inputs)):
        if x is None and not op.optional_inputs[i]:
            raise TypeError("%s(): input '%s' is missing" % (op.__name__, name))
    return inputs, attrs


def _platforms():
    """The jax platforms pdext.jax runs ops on: the CPU, and CUDA GPUs where present."""
    return ("cpu", "gpu") if _handler is not None and _handler[2] is not None else ("cpu",)


def _as_array(op, name, x):
    if isinstance(x, _jax.Array) and not isinstance(x, _jax.core.Tracer):
        platforms = {d.platform for d in x.devices()}
        if len(platforms) != 1 or not platforms <= set(_platforms()):
            raise ValueError(
                "%s(): input '%s' is on %s; pdext.jax runs ops on %s (move it with "
                "jax.device_put(x, jax.devices('cpu')[0]))"
                % (op.__name__, name, ", ".join(sorted(platforms)),
                   " or ".join(p.upper() for p in _platforms()))
            )
        return x
    return _jnp.asarray(x)


def _flatten(op, inputs):
    """Flat arrays, the per-input counts (pd_in) and the descriptions _pdext.infer takes."""
    flat, counts, meta = [], [], []
    for x, name, vec in zip(inputs, op.inputs, op.vector_inputs):
        if x is None:
            counts.append(0)
            meta.append(None)
        elif vec:
            if not isinstance(x, (list, tuple)):
                raise TypeError(
                    "%s(): vector input '%s' takes a list of arrays" % (op.__name__, name)
                )
            items = [_as_array(op, name, v) for v in x]
            flat.extend(items)
            counts.append(len(items))
            meta.append([(_jnp.dtype(v.dtype).name, tuple(v.shape)) for v in items])
        else:
            if isinstance(x, (list, tuple)):
                raise TypeError(
                    "%s(): input '%s' takes one array, not a list" % (op.__name__, name)
                )
            v = _as_array(op, name, x)
            flat.append(v)
            counts.append(1)
            meta.append((_jnp.dtype(v.dtype).name, tuple(v.shape)))
    return flat, counts, meta


def _nest(flat, counts):
    out, i = [], 0
    for k in counts:
        out.append(list(flat[i : i + k]))
        i += k
    return out


def _ffi_attrs(op, applied):
    """The attrs as XLA typed attributes, in the declared types."""
    out = {}
    for name, decl in zip(op.attrs, op.attr_types):
        value = applied[name]
        if decl in _SCALAR:
            out[name] = _SCALAR[decl](value)
        elif decl in _VECTOR:
            out[name] = _np.asarray(value, dtype=_VECTOR[decl])
        elif decl == "std::string":
            out[name] = value
        elif decl == "std::vector<std::string>":
            # XLA has no list-of-strings attribute: one string, each item <bytes>:<text>
            # (xla_ffi_handler.c decodes it).
            items = [v.encode() for v in value]
            out["pd_strs_" + name] = b"".join(b"%d:%s" % (len(v), v) for v in items).decode()
        else:
            raise TypeError(
                "%s(): attr '%s' has type '%s', unknown to pdext.jax" % (op.__name__, name, decl)
            )
    return out


_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


def _run(op, inputs, attrs, vmap_method="sequential"):
    """One custom call of op: its outputs, one entry per declared output (an array, a list
    for a vector output, None for an unset optional one)."""
    flat, in_counts, meta = _flatten(op, inputs)
    outs, applied = _pdext.infer(op, meta, attrs)
    results, out_counts = [], []
    for o in outs:
        items = [] if o is None else (o if isinstance(o, list) else [o])
        out_counts.append(len(items))
        results.extend(_jax.ShapeDtypeStruct(shape, _jnp.dtype(dt)) for dt, shape in items)
    name, index = _target(op)
    call = _jax.ffi.ffi_call(name, results, vmap_method=vmap_method)
    got = call(
        *flat,
        pd_op=_np.int64(index),
        pd_name=op.__name__,
        pd_in=_np.asarray(in_counts, dtype=_np.int32),
        pd_out=_np.asarray(out_counts, dtype=_np.int32),
        **_ffi_attrs(op, applied),
    )
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    nested = _nest(got, out_counts)
    return [
        (items if vec else (items[0] if items else None))
        for items, vec in zip(nested, op.vector_outputs)
    ]


def _result(op, outs):
    return outs[0] if len(outs) == 1 else tuple(outs)


def _no_grad(op):
    def bwd(res, g):
        raise TypeError(
            "%s has no grad op: jax.grad / jax.vjp cannot differentiate it (declare one with "
            "PD_BUILD_GRAD_OP)" % op.__name__
        )

    return bwd


def _attrs_key(attrs):
    """A hashable key of the attrs given, or None (then the call is not cached). Values are
    keyed with their types: 1, 1.0 and True are equal in Python, but not to a declaration."""

    def typed(v):
        if isinstance(v, (list, tuple)):
            return (type(v), tuple(typed(e) for e in v))
        return (type(v), v)

    try:
        key = tuple(sorted((k, typed(v)) for k, v in attrs.items()))
        hash(key)
        return key
    except TypeError:
        return None


def _zero_cotangent(x):
    """The cotangent of an input the grad op gives none for: zeros, of JAX's float0 type for
    an integer or bool input (what custom_vjp wants for them)."""
    if _jnp.issubdtype(x.dtype, _jnp.inexact):
        return _jnp.zeros_like(x)
    return _np.zeros(x.shape, dtype=_jax.dtypes.float0)


def _function(op, ops, vmap):
    """A JAX function of op: differentiable through its grad op where it has one."""
    grad = getattr(ops, op.grad_op, None) if op.grad_op else None
    grad_fn = _function(grad, ops, vmap) if grad is not None else None
    method = vmap.get(op.__name__) or _declared_vmap(op)
    differentiable = not any(op.vector_outputs)

    eager_cache = {}

    def call(*args, **kwargs):
        inputs, attrs = _bind(op, args, kwargs)
        # An eager call (no tracer among the inputs) runs a jitted call cached per attrs
        # (jax.jit caches per shapes in turn): building the custom call anew costs
        # milliseconds, a cached one what a jitted function costs.
        leaves = [
            (i, v)
            for i, x in enumerate(inputs)
            if x is not None
            for v in (x if isinstance(x, (list, tuple)) else [x])
        ]
        if not any(isinstance(v, _jax.core.Tracer) for _, v in leaves):
            for i, v in leaves:
                _as_array(op, op.inputs[i], v)  # refuses a device other than the CPU
            key = _attrs_key(attrs)
            if key is not None:
                fn = eager_cache.get(key)
                if fn is None:
                    if len(eager_cache) >= 64:
                        eager_cache.clear()
                    fn = eager_cache[key] = _jax.jit(lambda ins: traced(ins, attrs))
                return fn(inputs)
        return traced(inputs, attrs)

    def traced(inputs, attrs):
        if not differentiable:
            return _result(op, _run(op, inputs, attrs, method))
        present = [i for i, x in enumerate(inputs) if x is not None]
        layout = [len(inputs[i]) if op.vector_inputs[i] else None for i in present]
        flat = []
        for i, k in zip(present, layout):
            flat.extend(inputs[i] if k is not None else [inputs[i]])

        def unflatten(xs):
            full, j = [None] * len(inputs), 0
            for i, k in zip(present, layout):
                full[i] = list(xs[j : j + k]) if k is not None else xs[j]
                j += 1 if k is None else k
            return full

        @_jax.custom_vjp
        def f(*xs):
            return tuple(_run(op, unflatten(xs), attrs, method))

        def fwd(*xs):
            # f itself, not its body: a second differentiation (jax.grad of jax.grad) sees
            # the residuals come from a differentiable function.
            outs = f(*xs)
            return outs, (xs, outs)

        def bwd(res, gouts):
            xs, outs = res
            ograds = [g if o is not None else None for g, o in zip(gouts, outs)]
            args = _front.grad_args(grad, unflatten(xs), outs, ograds)
            grad_attrs = {k: v for k, v in attrs.items() if k in grad.attrs}
            res_g = grad_fn(*args, **grad_attrs)
            res_g = res_g if isinstance(res_g, tuple) else (res_g,)
            per_input = _front.input_grads(grad, res_g, len(op.inputs))
            flat_g = []
            for i, k in zip(present, layout):
                g = per_input[i]
                xs_i = inputs_of(xs, i)
                if k is None:
                    flat_g.append(g if g is not None else _zero_cotangent(xs_i[0]))
                else:
                    flat_g.extend(
                        g[j] if g is not None else _zero_cotangent(v) for j, v in enumerate(xs_i)
                    )
            return tuple(flat_g)

        def inputs_of(xs, i):
            j = 0
            for p, k in zip(present, layout):
                n = 1 if k is None else k
                if p == i:
                    return list(xs[j : j + n])
                j += n
            return []

        f.defvjp(fwd, bwd if grad_fn is not None else _no_grad(op))
        outs = f(*flat)
        return _result(op, list(outs))

    call.__name__ = op.__name__
    call.__qualname__ = op.__name__
    call.__doc__ = op.__doc__
    call.op = op
    return call


def register(ops, vmap=None):
    """A module with one JAX function per op of `ops` (a module from pdext.load, load_inline,
    load_library or a bundle; one op; a pdext.aot callable made with n_inputs): each runs as
    an XLA FFI custom call, eagerly and under jax.jit, differentiable through the op's grad op
    (see the module's doc). Builds the XLA FFI handler on first use (cached by pdext's JIT) and
    refuses a jaxlib whose FFI API is older than the handler's.

    vmap: {op name: method}, overriding what the op's declaration implies (PD_OP_LEADING_BATCH:
    "broadcast_all", else "sequential"): "expand_dims", "broadcast_all", "sequential",
    "sequential_unrolled" (see the module's doc)."""
    title, found = _front.ops_of(ops, "pdext.jax.register")
    lookup = types.SimpleNamespace(**found)
    vmap = dict(vmap or {})
    for name, method in vmap.items():
        if name not in found:
            raise ValueError(
                "pdext.jax.register: vmap names %r, which is no op of %s" % (name, title)
            )
        if method not in _VMAP_METHODS:
            raise ValueError(
                "pdext.jax.register: vmap method %r of %s is none of %s"
                % (method, name, ", ".join(_VMAP_METHODS))
            )
    with _lock:
        _load_handler()
    mod = types.ModuleType(title + ".jax", "JAX functions over " + title)
    for name, op in found.items():
        setattr(mod, name, _function(op, lookup, vmap))
    mod.ops = ops
    return mod
