"""pdext from Python: load custom operators written against pdext's C SDK and call them on
numpy arrays, pdext Tensors and any DLPack-capable tensor (PyTorch's included), without
copying.

    import numpy as np, pdext
    ops = pdext.load("relu", ["relu.c"])          # JIT build (cached), like torch's load()
    y = ops.custom_relu(np.array([-1.0, 2.0], dtype=np.float32))
    out = ops.custom_concat([a, b], axis=1)

Each op of the module is a callable attribute (its grad ops as <name>_grad); help() on one
shows its inputs, attrs and outputs. Inputs are positional or keyword arguments named as
declared ("X"; "Out@GRAD" becomes Out_GRAD), attrs come after them or as keywords; results
have the kind of the first input (numpy in, numpy out; torch in, torch out). Op failures
raise pdext.OpError, build failures pdext.BuildError, bad arguments TypeError / ValueError.

pdext.aot("add.cc:CustomAdd", out_dtype=...) calls MindSpore AOT kernels; pdext.gradcheck(op,
inputs, **attrs) and pdext.check(ops) tell whether an op is right; pdext.torch.wrap(ops) gives
PyTorch autograd functions.
"""

import difflib
import os
import types

from . import _pdext
from ._pdext import BuildError, Error, OpError, Tensor, from_dlpack
from ._pdext import Executor  # asynchronous op calls (pdext_executor.h)
from ._pdext import set_gil_threshold  # small calls keep the GIL through the kernel

# Imported on first use (PEP 562), so that `import pdext` and a warm load stay cheap.
_LAZY = {
    "aot": "aot_op",
    "gradcheck": "workbench",
    "check": "workbench",
    "GradcheckReport": "workbench",
    "GradcheckError": "workbench",
    "CheckReport": "workbench",
}


# Framework fronts, imported on first use of pdext.<name> (each imports its framework).
_SUBMODULES = ("jax",)


def __getattr__(name):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module("." + name, __name__)
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError("module 'pdext' has no attribute %r" % name)
    import importlib

    value = getattr(importlib.import_module("." + where, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))

__all__ = [
    "load",
    "load_inline",
    "load_library",
    "CustomOpBuilder",
    "aot",
    "gradcheck",
    "check",
    "GradcheckReport",
    "GradcheckError",
    "CheckReport",
    "Tensor",
    "from_dlpack",
    "Error",
    "OpError",
    "BuildError",
    "Executor",
    "set_gil_threshold",
    "include_dir",
    "lib_dir",
    "cmake_dir",
]

__version__ = _pdext.version()


def lib_dir():
    """The directory of the libpdext this package runs on: libpdext, libpdext_jit, their
    static archives and plug-ins, pkgconfig/ (PKG_CONFIG_PATH=<lib_dir>/pkgconfig) and
    cmake/pdext."""
    return os.path.dirname(_pdext._library_path())


def include_dir():
    """The SDK's headers (extension.h, pdext.h, paddle/extension.h): -I<include_dir()>.
    The JIT compiles against the same directory."""
    return _pdext._sdk_include_dir()


def cmake_dir():
    """The CMake package: cmake -DCMAKE_PREFIX_PATH=<cmake_dir()> finds it with
    find_package(pdext). FileNotFoundError when this pdext is not installed (a build tree)."""
    path = os.path.join(lib_dir(), "cmake", "pdext")
    if not os.path.isfile(os.path.join(path, "pdextConfig.cmake")):
        raise FileNotFoundError(
            "pdext.cmake_dir(): %s holds no pdextConfig.cmake; this pdext runs from a build "
            "tree, not an install (pip install . or ./setup.sh installs one)" % path
        )
    return path


def _module(name, library):
    """A module object with one attribute per op of `library`."""
    mod = types.ModuleType(name, "pdext ops loaded from %s" % library.path)
    mod.__file__ = library.path
    mod._library = library
    names = []
    for op in library.ops():
        setattr(mod, op.__name__, op)
        names.append(op.__name__)
    names.sort()

    def __getattr__(attr):
        # An unknown op is told with the module's ops (and the closest one), as pdext run
        # and pd_op_find tell it.
        if attr.startswith("__"):
            raise AttributeError("module %r has no attribute %r" % (name, attr))
        close = difflib.get_close_matches(attr, names, n=1)
        raise AttributeError(
            "module %r has no op %r%s; its ops: %s"
            % (name, attr, "; did you mean %r?" % close[0] if close else "", ", ".join(names))
        )

    mod.__getattr__ = __getattr__
    return mod


def _strings(value, what):
    if value is None:
        return None
    if isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError("%s must be a list of strings, not a single string" % what)
    return [os.fspath(v) for v in value]


def load(
    name,
    sources,
    extra_cflags=None,
    extra_cuda_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose=False,
    *,
    extra_cxx_cflags=None,
    extra_library_paths=None,
):
    """Builds the op sources (.c .cc .cpp .cu) into a module, or finds it in the cache, and
    loads it; returns a module with one callable per op.

    The keywords are torch's (torch.utils.cpp_extension.load, same positions) and Paddle's
    (paddle.utils.cpp_extension.load, by keyword): extra_cflags go to C and C++ sources,
    extra_cxx_cflags (Paddle's) to C++ sources only, after extra_cflags; extra_cuda_cflags to
    nvcc, extra_ldflags to the link, extra_include_paths become -I, extra_library_paths -L.
    build_directory replaces the cache directory ($PDEXT_CACHE_DIR/<name>, else
    ~/.cache/pdext/<name>). verbose logs every compiler command to stderr. A warm load (the
    sources and flags unchanged) compiles nothing and starts no process.
    """
    return _load(
        name,
        _strings(sources, "sources"),
        None,
        extra_cflags,
        extra_cuda_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory,
        verbose,
        extra_cxx_cflags,
        extra_library_paths,
    )


def load_inline(
    name,
    sources,
    extra_cflags=None,
    extra_cuda_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose=False,
    language="c",
):
    """load() from source text: `sources` is a string, a list of strings, or a dict of
    file name -> text (the extension picks the compiler). Plain strings are named
    <name>_<i>.c (language="c++": .cc, "cuda": .cu). The text is hashed: the same text is a
    warm load, a changed one a rebuild."""
    ext = {"c": ".c", "c++": ".cc", "cpp": ".cc", "cuda": ".cu"}.get(language)
    if ext is None:
        raise ValueError("language must be 'c', 'c++' or 'cuda', got %r" % (language,))
    if isinstance(sources, str):
        sources = [sources]
    if isinstance(sources, dict):
        pairs = [(str(k), str(v)) for k, v in sources.items()]
    else:
        pairs = [("%s_%d%s" % (name, i, ext), str(text)) for i, text in enumerate(sources)]
    return _load(
        name,
        None,
        pairs,
        extra_cflags,
        extra_cuda_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory,
        verbose,
    )


def _load(name, sources, inline, cflags, cuda_cflags, ldflags, includes, build_dir, verbose,
          cxx_cflags=None, library_paths=None):
    cflags = _strings(cflags, "extra_cflags")
    cxx = _strings(cxx_cflags, "extra_cxx_cflags")
    if cxx is not None:
        cxx = (cflags or []) + cxx
    ldflags = _strings(ldflags, "extra_ldflags")
    paths = _strings(library_paths, "extra_library_paths")
    if paths:
        ldflags = ["-L" + p for p in paths] + (ldflags or [])
    library = _pdext.load(
        name,
        sources or [],
        inline,
        cflags,
        _strings(cuda_cflags, "extra_cuda_cflags"),
        ldflags,
        _strings(includes, "extra_include_paths"),
        os.fspath(build_dir) if build_dir is not None else None,
        bool(verbose),
        cxx,
    )
    return _module(name, library)


def load_library(path):
    """Loads a prebuilt op library (cc -shared -fPIC op.c, or `pdext build`); returns a module
    with one callable per op."""
    library = _pdext.load_library(os.fspath(path))
    name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return _module(name, library)


class CustomOpBuilder:
    """MindSpore's spelling and signature: CustomOpBuilder(name, sources, backend="CPU").load().

    The positional order is MindSpore's (name, sources, backend, include_paths, cflags,
    ldflags). backend "CPU" (or None) builds for the CPU; "GPU" / "CUDA" expects .cu sources
    (nvcc); "Ascend" is refused. MindSpore's keywords: build_dir, debug_mode (adds -g) and
    enable_atb (Ascend only: True is refused); pdext's verbose too (pdext/ms_extension.py)."""

    def __init__(
        self,
        name,
        sources,
        backend=None,
        include_paths=None,
        cflags=None,
        ldflags=None,
        **kwargs,
    ):
        from . import ms_extension

        backend, options = ms_extension.builder_options(backend, kwargs)
        if isinstance(sources, (str, os.PathLike)):
            sources = [sources]
        self.name = name
        self.sources = list(sources)
        self.backend = backend
        if options["debug_mode"]:
            cflags = ms_extension.debug_cflags(cflags)
        self._kwargs = dict(
            extra_cflags=cflags,
            extra_ldflags=ldflags,
            extra_include_paths=include_paths,
            build_directory=options["build_dir"],
            verbose=options["verbose"],
        )

    def _ms_extension(self):
        from . import ms_extension

        return ms_extension if ms_extension.is_ms_extension_source(self.sources) else None

    def load(self):
        """Builds (or finds in the cache) and loads the module. Sources that include
        ms_extension/api.h (MindSpore's C++ API: PyboostRunner, PYBIND11_MODULE) build into
        the pybind11 module they define (pdext/ms_extension.py); others into pdext ops."""
        msext = self._ms_extension()
        if msext is not None:
            return msext.load(self.name, self.sources, **self._ms_kwargs())
        return load(self.name, self.sources, **self._kwargs)

    def build(self):
        """Builds (or finds in the cache) without importing; the path of the library."""
        msext = self._ms_extension()
        if msext is not None:
            return msext.build(self.name, self.sources, **self._ms_kwargs())
        return load(self.name, self.sources, **self._kwargs).__file__

    def _ms_kwargs(self):
        k = self._kwargs
        return dict(
            cflags=k["extra_cflags"],
            ldflags=k["extra_ldflags"],
            include_paths=k["extra_include_paths"],
            build_dir=k["build_directory"],
            verbose=k["verbose"],
        )
