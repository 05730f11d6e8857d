"""pdext.paddle: pdext ops as real Paddle operators.

    pops = pdext.paddle.register(pdext.load("relu", ["custom_relu_op.cc"]))
    y = pops.custom_relu(x)                 # x a paddle.Tensor; y one too, with autograd

register() declares every forward op of a pdext module, with its grad op and double grad op,
as a Paddle custom operator (the same kind paddle.utils.cpp_extension.load makes) through
paddle_native.cpp, a bridge compiled once per Paddle and pdext version with the wheel's
headers into pdext's cache. So the ops are Paddle's own in every mode:

- dygraph: tensors cross without a copy either way (the kernel borrows the Paddle tensors'
  memory; outputs are Paddle tensors over pdext's storage), GPU tensors run on Paddle's stream
  of the tensor; autograd is Paddle's, from the grad op, and the double grad op serves
  paddle.grad(..., create_graph=True);
- paddle.jit.to_static, paddle.jit.save and paddle.inference: the saved program names the
  op type (`<namespace>_<op>`), so a process that registers the same module under the same
  namespace before loading the model runs it (see examples/paddle/README.md).

Why this and not a PyLayer around the pdext call: that route took 30 us a call against Paddle's
own custom op's 8.6 us (issue 26's figures; PyLayer.apply alone adds ~12 us over the op it
wraps, measured here), runs Python per backward, and cannot enter a static program; why not a C++ source generated per module and built by cpp_extension.load: each
build preprocesses ~80k lines of Paddle headers (tens of seconds), where the bridge is built
once and registering a module then takes microseconds per op.

Paddle and MindSpore in one process: import mindspore first, then paddle. The other order fails
upstream (mindspore's CPU ops library wants a oneDNN symbol that Paddle's copy, loaded first,
lacks: an ImportError); pdext imports neither framework until asked (pdext.paddle imports
paddle), so it changes nothing there.
"""

import inspect as _inspect
import os
import sysconfig
import threading
import types

import paddle as _paddle

from . import _front, _pdext

__all__ = ["register", "native_library", "Registered"]

_lock = threading.RLock()
_native = None  # the loaded bridge (ctypes.CDLL), False once it failed
_native_error = None
# Paddle op type -> (pdext op, the registration); ops stay alive for the process: Paddle keeps
# their kernels, which point into the pdext modules.
_types = {}
_by_module = {}  # (id(ops), namespace) -> Registered
_keep = []


def _paddle_dirs():
    """(include dirs, library dirs) of the installed Paddle wheel, as cpp_extension finds them."""
    root = os.path.dirname(os.path.abspath(_paddle.__file__))
    inc = os.path.join(root, "include")
    return [inc, os.path.join(inc, "third_party")], [os.path.join(root, "base"),
                                                     os.path.join(root, "libs")]


def _with_cuda():
    try:
        return bool(_paddle.is_compiled_with_cuda())
    except Exception:
        return False


def _cuda_home():
    return os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"


def _build_command(src, out, cuda=None):
    """The compiler command of the bridge; cuda (default: Paddle is built with CUDA) compiles
    its GPU path (Paddle's stream of a GPU tensor) too."""
    incs, libs = _paddle_dirs()
    pdext_lib = _pdext._library_path()
    cmd = [os.environ.get("CXX", "c++"), "-std=c++17", "-O2", "-fPIC", "-shared", "-w",
           "-fvisibility=hidden", "-DPADDLE_WITH_CUSTOM_KERNEL"]
    if _with_cuda() if cuda is None else cuda:
        home = _cuda_home()
        cmd += ["-DPADDLE_WITH_CUDA", "-I" + os.path.join(home, "include")]
        cccl = os.path.join(home, "include", "cccl")  # thrust's home from CUDA 13 on
        if os.path.isdir(cccl):
            cmd.append("-I" + cccl)
    cmd += ["-I" + d for d in incs]
    cmd += ["-I" + sysconfig.get_paths()["include"]]
    cmd += ["-I" + _pdext._sdk_include_dir(), src, "-o", out]
    for d in libs:
        cmd += ["-L" + d, "-Wl,-rpath," + d]
    cmd += ["-Wl,--no-as-needed", "-l:libpaddle.so", "-Wl,--as-needed",
            "-L" + os.path.dirname(pdext_lib), "-l:" + os.path.basename(pdext_lib),
            "-Wl,-rpath," + os.path.dirname(pdext_lib)]
    return cmd


def native_library():
    """The path of the Paddle bridge library, building it into pdext's cache on first use (one
    build per Paddle and pdext version, ~10 s of CPU). RuntimeError saying why when it cannot
    be built (no C++ compiler, a Paddle wheel without headers)."""
    lib = _native_lib()
    if lib is None:
        raise RuntimeError("pdext.paddle: the Paddle bridge cannot be built: %s" % _native_error)
    return lib._name


def _native_lib():
    global _native, _native_error
    if _native is not None:
        return _native or None
    import ctypes

    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paddle_native.cpp")
    try:
        path = _front.built_bridge("paddle-native", "pdext_paddle", src, _build_command,
                                   (_paddle.__version__, _pdext.version()))
        lib = ctypes.CDLL(path)
        lib.pdext_paddle_native_declare.argtypes = [ctypes.c_char_p, ctypes.c_void_p,
                                                    ctypes.c_char_p, ctypes.c_size_t]
        lib.pdext_paddle_native_declare.restype = ctypes.c_int
        lib.pdext_paddle_native_infer_calls.argtypes = []
        lib.pdext_paddle_native_infer_calls.restype = ctypes.c_ulonglong
        lib.pdext_paddle_native_take_error.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.pdext_paddle_native_take_error.restype = ctypes.c_int
        _native = lib
        return lib
    except Exception as e:
        _native, _native_error = False, "%s: %s" % (type(e).__name__, e)
        return None


def infer_calls():
    """How many times Paddle has called the infer functions (InferShape, InferDtype) of
    registered pdext ops in this process: it does when it builds a static program, not per
    dygraph call (tests and the curious read it)."""
    lib = _native_lib()
    return 0 if lib is None else int(lib.pdext_paddle_native_infer_calls())


def _raise_pending(op_type):
    """Raises what an infer function of a pdext op refused while Paddle built a static program
    (paddle_native.cpp records it there instead of throwing: an exception out of an infer
    function ends Paddle's process)."""
    import ctypes

    buf = ctypes.create_string_buffer(4096)
    if _native and _native.pdext_paddle_native_take_error(buf, len(buf)):
        raise ValueError("%s (Paddle op %s, while building the static program)"
                         % (buf.value.decode(errors="replace"), op_type))


_ATTR_CONVERT = {
    "bool": bool, "int": int, "int64_t": int, "float": float, "double": float,
    "std::string": str,
}
_LIST_CONVERT = {
    "std::vector<int>": int, "std::vector<int64_t>": int, "std::vector<float>": float,
    "std::vector<std::string>": str,
}


def _attr_value(op_name, attr, type_name, value):
    """value as Paddle's custom-op call takes an attr of pdext type type_name; a TypeError
    naming the op and the attr for a value of another kind (a str for an int, ...)."""
    conv = _ATTR_CONVERT.get(type_name)
    try:
        if conv is not None:
            if conv is str and not isinstance(value, str):
                raise TypeError
            if conv is not str and isinstance(value, (str, bytes, list, tuple)):
                raise TypeError
            if conv is int and isinstance(value, float) and not value.is_integer():
                raise TypeError
            return conv(value)
        item = _LIST_CONVERT[type_name]
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError
        out = []
        for v in value:
            if (item is str) != isinstance(v, str):
                raise TypeError
            if item is int and isinstance(v, float) and not v.is_integer():
                raise TypeError
            out.append(item(v))
        return out
    except (TypeError, ValueError):
        raise TypeError("%s(): attr '%s' takes a %s, got %r" % (op_name, attr, type_name, value)) \
            from None


class Registered(types.SimpleNamespace):
    """What pdext.paddle.register returns: one function per forward op (on paddle.Tensors, in
    dygraph and inside paddle.jit.to_static), plus `namespace`, `op_types` (pdext op name ->
    the Paddle op type) and `skipped` (pdext op name -> why Paddle cannot have it: a vector
    output the op sizes itself)."""


def _make_function(op, op_type):
    """The Python function of Paddle op `op_type` for pdext op `op`: inputs then attrs, as the
    pdext op takes them, with its attr defaults; one output is returned as a tensor, several
    as a list (as Paddle's own custom-op functions do)."""
    from paddle import _C_ops

    run = _C_ops._run_custom_op
    facts = _pdext.infer_facts(op)
    n_in = len(op.inputs)
    names = [_identifier(n) for n in op.inputs] + list(op.attrs)
    types_ = list(op.attr_types)
    defaults = [None if o else _inspect.Parameter.empty for o in op.optional_inputs]
    defaults += [_inspect.Parameter.empty if req else d
                 for req, d in zip(op.attr_required, facts["attr_defaults"])]
    n_args = len(names)
    n_out = len(op.outputs)
    name = op.__name__

    def fill(args, kwargs):
        if len(args) > n_args:
            raise TypeError("%s() takes at most %d arguments (%d given)" % (name, n_args, len(args)))
        full = list(args)
        for k in range(len(args), n_args):
            if names[k] in kwargs:
                full.append(kwargs.pop(names[k]))
            elif defaults[k] is not _inspect.Parameter.empty:
                full.append(defaults[k])
            else:
                raise TypeError("%s() missing argument '%s'" % (name, names[k]))
        if kwargs:
            raise TypeError("%s() got an unexpected keyword argument '%s' (it takes %s)"
                            % (name, next(iter(kwargs)), ", ".join(names)))
        return full

    def convert(args):
        args = list(args)
        for j, t in enumerate(types_):
            args[n_in + j] = _attr_value(name, names[n_in + j], t, args[n_in + j])
        return args

    Tensor = _paddle.Tensor
    # In a static program (to_static) the outputs are pir.Values, not Tensors: only then can
    # an infer function have refused (Paddle runs none per dygraph call).
    if n_args == n_in == n_out == 1:
        def fn(*args, **kwargs):
            if kwargs or len(args) != 1:
                args = fill(args, kwargs)
            y = run(op_type, *args)[0]
            if y.__class__ is not Tensor:
                _raise_pending(op_type)
            return y
    else:
        def fn(*args, **kwargs):
            if kwargs or len(args) != n_args:
                args = fill(args, kwargs)
            if types_:
                args = convert(args)
            outs = run(op_type, *args)
            if not any(o.__class__ is Tensor for o in outs):
                _raise_pending(op_type)
            return outs[0] if n_out == 1 else list(outs)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = "%s: pdext op %s as Paddle operator %s.\n\n%s" % (
        name, name, op_type, op.__doc__ or "")
    params = [_inspect.Parameter(n, _inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d)
              for n, d in zip(names, defaults)]
    try:
        fn.__signature__ = _inspect.Signature(params)
    except ValueError:
        pass  # a required attr after an optional input: no signature, the call still works
    return fn


def _identifier(name):
    return "".join(c if (c.isalnum() or c == "_") and (i or not c.isdigit()) else "_"
                   for i, c in enumerate(name))


def _paddle_has_op(op_type):
    from paddle.base import core

    try:
        return core.has_custom_op(op_type) if hasattr(core, "has_custom_op") else \
            op_type in _paddle.base.framework.OpProtoHolder.instance().op_proto_map
    except Exception:
        return False


def register(ops, namespace="pdext"):
    """Declares every forward op of `ops` (with its grad and double grad ops) as a Paddle
    operator of type `<namespace>_<name>` (`<name>` when namespace is "" or None) and returns
    a namespace of functions, one per forward op, on paddle.Tensors:

        pops = pdext.paddle.register(pdext.load("relu", ["custom_relu_op.cc"]))
        y = pops.custom_relu(x)

    The functions work in dygraph (autograd from the grad op; paddle.grad(...,
    create_graph=True) where a double grad op is declared) and inside paddle.jit.to_static, and
    programs saved with paddle.jit.save run in paddle.inference once the same module is
    registered under the same namespace in that process. Registering a module again returns
    the first registration; an op type Paddle already has (from another module, or Paddle's
    own build of the same source) is a ValueError: use another namespace."""
    if namespace is None:
        namespace = ""
    if not isinstance(namespace, str) or (namespace and not namespace.isidentifier()):
        raise ValueError("pdext.paddle.register: namespace %r is not an identifier" % (namespace,))
    found = _front.ops_of(ops, "pdext.paddle.register")[1]
    with _lock:
        key = (id(ops), namespace)
        if key in _by_module and _by_module[key][0] is ops:
            return _by_module[key][1]
        grads = {op.grad_op for op in found.values() if op.grad_op}
        forward = {n: op for n, op in found.items()
                   if n not in grads and getattr(op, "kind", "forward") == "forward"}
        # Paddle's custom ops take a vector output only where it is an input written in place
        # (its count is then the input's); pdext's ops that size a vector output themselves
        # stay pdext-only.
        skipped = {}
        for n, op in list(forward.items()):
            bad = [] if any(op.written_inputs) else \
                [o for o, v in zip(op.outputs, op.vector_outputs) if v]
            if bad:
                skipped[n] = ("output '%s' is a vector, which Paddle's custom operators take only "
                              "as an input written in place" % bad[0])
                del forward[n]
        op_types = {n: (namespace + "_" + n if namespace else n) for n in forward}
        for n, t in op_types.items():
            if t in _types or _paddle_has_op(t):
                raise ValueError(
                    "pdext.paddle.register: Paddle already has an op '%s'%s; register under "
                    "another namespace (namespace=...)"
                    % (t, " (from an earlier pdext.paddle.register)" if t in _types else ""))
        lib = _native_lib()
        if lib is None:
            raise RuntimeError("pdext.paddle.register: the Paddle bridge (paddle_native.cpp) "
                               "cannot be built: %s" % _native_error)
        import ctypes

        for n, op in forward.items():
            err = ctypes.create_string_buffer(2048)
            if lib.pdext_paddle_native_declare(op_types[n].encode(), _pdext._op_handle(op), err,
                                               len(err)) != 0:
                raise ValueError("pdext.paddle.register: %s: %s"
                                 % (n, err.value.decode(errors="replace")))
            _types[op_types[n]] = op
        _keep.append(ops)
        from paddle.base import core
        from paddle.base.framework import OpProtoHolder

        new = core.load_op_meta_info_and_register_op(lib._name)
        OpProtoHolder.instance().update_op_proto(new)
        result = Registered(namespace=namespace, op_types=dict(op_types), skipped=skipped)
        for n, op in forward.items():
            setattr(result, _identifier(n), _make_function(op, op_types[n]))
        _by_module[key] = (ops, result)
        return result
