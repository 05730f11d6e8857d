"""The native kernels of pdext.torch.register (torch_library.py): torch_native.cpp, beside this
file, built once per torch and pdext version into pdext's cache (one build however many
processes ask at once), loaded with ctypes, and its C entry points that register an op's
kernel (CPU, CUDA) and autograd kernel."""

import os
import types

import torch as _torch

from . import _front, _pdext

# torch_native.cpp is one boxed C++ kernel for every pdext op (and one autograd kernel): built
# with torch's headers, it runs the op through the pdext runner on the tensors' own memory.
# Where it cannot be built (no C++ compiler, torch without headers) the kernels are the Python
# ones of torch_library.py (_make_kernel), which call the op through DLPack, with torch's
# register_autograd; PDEXT_TORCH_NATIVE=0 asks for those.

_native = None  # the loaded library, False once it failed, None before the first try
_native_error = None


def _native_build_command(src, out):
    from torch.utils import cpp_extension

    torch_lib = os.path.join(os.path.dirname(_torch.__file__), "lib")
    pdext_lib = os.path.dirname(_pdext._library_path())
    cmd = [os.environ.get("CXX", "c++"), "-std=c++20", "-O2", "-fPIC", "-shared",
           "-fvisibility=hidden",
           "-D_GLIBCXX_USE_CXX11_ABI=%d" % int(_torch._C._GLIBCXX_USE_CXX11_ABI)]
    cmd += ["-I" + p for p in cpp_extension.include_paths()]
    cmd += ["-I" + _pdext._sdk_include_dir(), src, "-o", out,
            "-L" + torch_lib, "-lc10", "-ltorch_cpu", "-Wl,-rpath," + torch_lib,
            "-L" + pdext_lib, "-l:" + os.path.basename(_pdext._library_path()),
            "-Wl,-rpath," + pdext_lib]
    return cmd


def lib():
    """The native kernel library, built into the cache on first use (one build per torch and
    pdext version, and one build when many processes ask at once: a file lock beside it). None,
    with _native_error saying why, where it cannot be had."""
    global _native, _native_error
    if _native is not None:
        return _native or None
    if os.environ.get("PDEXT_TORCH_NATIVE", "1") == "0":
        _native, _native_error = False, "PDEXT_TORCH_NATIVE=0"
        return None
    import ctypes

    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_native.cpp")
    try:
        path = _front.built_bridge("torch-native", "pdext_torch", src, _native_build_command,
                                   (_torch.__version__, _pdext.version()))
        lib = ctypes.CDLL(path)
        lib.pdext_torch_native_register.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_ubyte), ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
        lib.pdext_torch_native_register.restype = ctypes.c_int
        ip = ctypes.POINTER(ctypes.c_int)
        lib.pdext_torch_native_register_autograd.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
            ip, ip, ctypes.c_int, ip, ctypes.c_int, ip, ctypes.c_int, ctypes.c_char_p,
            ctypes.c_size_t]
        lib.pdext_torch_native_register_autograd.restype = ctypes.c_int
        lib.pdext_torch_native_drop.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        lib.pdext_torch_native_drop.restype = None
        _native = lib
        return lib
    except Exception as e:  # no compiler, no headers: the Python kernels serve
        _native, _native_error = False, "%s: %s" % (type(e).__name__, e)
        return None


def native_kernels():
    """(True, path-or-None) when registered ops run pdext's native C++ kernel, else (False,
    why)."""
    found = lib()
    return (True, found._name) if found is not None else (False, _native_error)


def register_kernel(lib, f, namespace, key):
    import ctypes

    returned = (ctypes.c_ubyte * max(1, len(f.outputs)))(
        *[1 if o in f.returned else 0 for o in range(len(f.outputs))])
    err = ctypes.create_string_buffer(2048)
    rc = lib.pdext_torch_native_register(
        namespace.encode(), f.name.encode(), _pdext._op_handle(f.op), key.encode(), returned,
        len(f.outputs), err, len(err))
    if rc != 0:
        raise RuntimeError("pdext.torch.register: %s: the native %s kernel: %s"
                           % (f.name, key, err.value.decode(errors="replace")))


def register_autograd(lib, f, grad, namespace):
    """The C++ autograd kernel of op f (torch_native.cpp AutogradKernel), calling grad op
    `grad` (a _Facts) in backward; grad None: f is not differentiable (its outputs never
    require grad). The grad op's inputs are bound as libpdext bound them at registration
    (grad.grad_inputs, grad.grad_outputs), handed to the C++ kernel as its GradSource codes."""
    import ctypes

    if grad is None:  # no grad op: the outputs never require grad (torch's usual error)
        grad = types.SimpleNamespace(inputs=[], attrs=[], returned=[], outputs=[], name="",
                                     grad_inputs=(), grad_outputs=())
    codes = {"input": 0, "output": 1, "output_grad": 2}  # torch_native.cpp's GradSource
    kind = [3 if b is None else codes[b[0]] for b in grad.grad_inputs]
    index = [-1 if b is None else b[1] for b in grad.grad_inputs]
    attr_src = [f.n_in + f.attrs.index(a) if a in f.attrs else -1 for a in grad.attrs]
    out_to_input = [-1 if grad.grad_outputs[o] is None else grad.grad_outputs[o]
                    for o in grad.returned]

    def ints(xs):
        return (ctypes.c_int * max(1, len(xs)))(*xs)

    err = ctypes.create_string_buffer(2048)
    rc = lib.pdext_torch_native_register_autograd(
        namespace.encode(), f.name.encode(), f.n_in, len(f.attrs), grad.name.encode(),
        ints(kind), ints(index), len(kind), ints(attr_src), len(attr_src), ints(out_to_input),
        len(out_to_input), err, len(err))
    if rc != 0:
        raise RuntimeError("pdext.torch.register: %s: the native autograd kernel: %s"
                           % (f.name, err.value.decode(errors="replace")))


