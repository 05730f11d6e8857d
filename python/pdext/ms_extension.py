"""MindSpore CustomOpBuilder sources (``#include "ms_extension/api.h"``, PYBIND11_MODULE) built
by pdext's JIT and imported as the pybind11 module they define.

pdext.CustomOpBuilder(name, sources, backend="CPU").load() comes here when a source includes
ms_extension/api.h. The build is pdext's cached JIT build of a plain library (a warm load
compiles nothing): C++20, -DMS_EXTENSION_NAME=<name>, the SDK, pybind11 and Python include
directories, linked with libpdext. pybind11's headers come from the pybind11 package of the
running Python (pip install pybind11), else from /usr/include (Debian's pybind11-dev).
"""

import importlib.machinery
import importlib.util
import os
import re
import sys
import sysconfig

from . import _pdext

# A second load() of the same name in one process returns the module already loaded, as
# MindSpore's builder does (a Python extension cannot be imported twice under one name).
_LOADED = {}

_INCLUDE = re.compile(rb'^\s*#\s*include\s*[<"]ms_extension/api\.h[>"]', re.M)


def is_ms_extension_source(paths):
    """Whether any of the source files includes ms_extension/api.h."""
    for path in paths:
        try:
            with open(path, "rb") as f:
                if _INCLUDE.search(f.read()):
                    return True
        except OSError:
            continue  # the build names a missing source with the compiler's message
    return False


def pybind11_include():
    """The directory holding pybind11/pybind11.h: the pybind11 package's, else Debian's."""
    try:
        import pybind11

        path = pybind11.get_include()
        if os.path.isfile(os.path.join(path, "pybind11", "pybind11.h")):
            return path
    except ImportError:
        pass
    if os.path.isfile("/usr/include/pybind11/pybind11.h"):
        return "/usr/include"
    raise _pdext.BuildError(
        "pdext.CustomOpBuilder: a MindSpore CustomOpBuilder source needs pybind11's headers; "
        "install them with `pip install pybind11` (into %s) or `apt install pybind11-dev`"
        % sys.prefix
    )


def _split(flags):
    if flags is None:
        return []
    if isinstance(flags, str):
        return flags.split()
    return [str(f) for f in flags]


_BACKENDS = ("CPU", "GPU", "CUDA")


def builder_options(backend, kwargs):
    """CustomOpBuilder's backend and keywords, checked: (backend, {build_dir, debug_mode,
    enable_atb, verbose}). MindSpore's Ascend-only parts are refused with the reason."""
    options = dict(build_dir=None, debug_mode=False, enable_atb=False, verbose=False)
    unknown = sorted(set(kwargs) - set(options))
    if unknown:
        raise TypeError(
            "pdext.CustomOpBuilder: unexpected keyword argument%s %s (it takes MindSpore's "
            "build_dir, debug_mode and enable_atb, and pdext's verbose)"
            % ("s" if len(unknown) > 1 else "", ", ".join(map(repr, unknown)))
        )
    options.update(kwargs)
    if backend is None:
        backend = "CPU"  # MindSpore's default device is its context's; pdext's is the CPU
    if isinstance(backend, str) and backend.lower() == "ascend":
        raise ValueError(
            "pdext.CustomOpBuilder: backend 'Ascend' is not supported: MindSpore's Ascend-only "
            "API (aclnn and ATB runners) has no pdext counterpart; build with backend='CPU'"
        )
    if backend not in _BACKENDS:
        raise ValueError("backend must be 'CPU', 'GPU' or 'CUDA', got %r" % (backend,))
    if options["enable_atb"]:
        raise ValueError(
            "pdext.CustomOpBuilder: enable_atb=True asks for Ascend Transformer Boost (ATB) "
            "runners, which exist only on MindSpore's Ascend backend; pdext builds for %s "
            "(leave enable_atb False)" % backend
        )
    for key in ("debug_mode", "enable_atb", "verbose"):
        if not isinstance(options[key], bool):
            raise TypeError(
                "pdext.CustomOpBuilder: %s must be True or False, got %r" % (key, options[key])
            )
    return backend, options


def debug_cflags(cflags):
    """cflags with MindSpore's debug_mode added: -g (symbols kept; pdext strips nothing)."""
    return _split(cflags) + ["-g"]


def _check_name(name):
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            "pdext.CustomOpBuilder: the module name must be a Python identifier (it names "
            "PyInit_<name> through MS_EXTENSION_NAME), got %r" % (name,)
        )


def build(name, sources, cflags=None, ldflags=None, include_paths=None, build_dir=None,
          verbose=False):
    """Builds (or finds in the cache) the pybind11 module `name`; the library's path."""
    _check_name(name)
    lib_dir = os.path.dirname(_pdext._library_path())
    includes = [pybind11_include(), sysconfig.get_paths()["include"]]
    includes += [os.fspath(p) for p in (include_paths or [])]
    cxxflags = ["-DMS_EXTENSION_NAME=%s" % name] + _split(cflags)
    link = ["-L" + lib_dir, "-Wl,-rpath," + lib_dir, "-lpdext"] + _split(ldflags)
    return _pdext.load(
        name,
        [os.fspath(s) for s in sources],
        cxx_cflags=cxxflags,
        ldflags=link,
        include_dirs=includes,
        build_directory=os.fspath(build_dir) if build_dir is not None else None,
        verbose=bool(verbose),
        library_only=True,
    )


def load(name, sources, cflags=None, ldflags=None, include_paths=None, build_dir=None,
         verbose=False):
    """Builds (or finds in the cache) and imports the pybind11 module `name`."""
    _check_name(name)
    if name in _LOADED:
        return _LOADED[name]
    path = build(name, sources, cflags, ldflags, include_paths, build_dir, verbose)
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    _LOADED[name] = module
    return module
