"""Shared fixtures of the Python front's tests: the example and test op modules, JIT-built
once per session into the cache named by PDEXT_CACHE_DIR (ctest sets a private one)."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
RELU = ROOT / "examples" / "relu" / "relu.c"
CONCAT = ROOT / "examples" / "concat" / "concat.c"
PY_OPS = ROOT / "tests" / "python" / "ops" / "py_ops.c"

if not os.environ.get("PDEXT_CACHE_DIR"):
    raise RuntimeError("set PDEXT_CACHE_DIR to a private directory (ctest does)")


@pytest.fixture(scope="session")
def pdext():
    import pdext as module

    return module


@pytest.fixture(scope="session")
def relu(pdext):
    return pdext.load("relu", [str(RELU)])


@pytest.fixture(scope="session")
def concat(pdext):
    return pdext.load("concat", [str(CONCAT)])


@pytest.fixture(scope="session")
def pyops(pdext):
    return pdext.load("py_ops", [str(PY_OPS)])


TAPE_OPS = ROOT / "tests" / "tape_ops.c"


@pytest.fixture(scope="session")
def tape(pdext):
    """Small differentiable ops, some with deliberately wrong grad ops (tests/tape_ops.c)."""
    return pdext.load("tape_ops", [str(TAPE_OPS)])


GRAD_BINDING_OPS = ROOT / "tests" / "grad_binding_ops.c"


@pytest.fixture(scope="session")
def gbops(pdext):
    """Grad ops bound to their forward ops in every way the rule allows: gb_mul's grad op
    declares Out, Out@GRAD, Y, X and returns Y@GRAD, X@GRAD (tests/grad_binding_ops.c)."""
    return pdext.load("grad_binding_ops", [str(GRAD_BINDING_OPS)])


# --- frameworks -------------------------------------------------------------------------------
# The frameworks pdext integrates with come from PyPI into the framework venv that
# `./setup.sh test` makes (tests/python/frameworks.txt pins them). PDEXT_FRAMEWORKS names the
# ones a run must have: setup.sh sets it to what it installed ("none" for none). A framework it
# names that fails to import fails the test; one it leaves out skips, saying so. Without the
# variable (a developer's own Python) a framework that is not installed skips too.
FRAMEWORKS = {
    "torch": ("torch",),
    "jax": ("jax", "jaxlib"),
    "onnxruntime": ("onnxruntime", "onnx"),
    "paddle": ("paddle",),
    "mindspore": ("mindspore",),
}


def frameworks_wanted():
    """The frameworks this run must have, or None when PDEXT_FRAMEWORKS is unset."""
    text = os.environ.get("PDEXT_FRAMEWORKS")
    if text is None:
        return None
    names = [n for n in text.replace(",", " ").split() if n]
    if names in (["none"], []):
        return set()
    if names == ["all"]:
        return set(FRAMEWORKS)
    unknown = sorted(set(names) - set(FRAMEWORKS))
    if unknown:
        raise RuntimeError(
            "PDEXT_FRAMEWORKS names %s; the known frameworks are %s (or all, none)"
            % (", ".join(unknown), ", ".join(sorted(FRAMEWORKS)))
        )
    return set(names)


def require_framework(name):
    """The framework's main module (torch, jax, onnxruntime, paddle, mindspore), imported;
    skips the calling test module when this run leaves the framework out."""
    import importlib

    modules = FRAMEWORKS[name]
    wanted = frameworks_wanted()
    if wanted is not None and name not in wanted:
        pytest.skip(
            "%s is left out of this run (PDEXT_FRAMEWORKS=%s)" % (name, os.environ["PDEXT_FRAMEWORKS"]),
            allow_module_level=True,
        )
    try:
        imported = [importlib.import_module(m) for m in modules]
    except ImportError as e:
        if wanted is None:
            pytest.skip(
                "%s is not installed in this Python (%s); ./setup.sh test installs it in the "
                "framework venv" % (name, e),
                allow_module_level=True,
            )
        raise
    return imported[0]


# --- the pdext command ------------------------------------------------------------------------


def pdext_command():
    """The `pdext` command of the pdext under test: PDEXT_COMMAND (ctest sets it to the build
    tree's), else the one an installed package carries (<lib_dir>/../bin/pdext), else `pdext`
    in PATH."""
    import shutil

    cmd = os.environ.get("PDEXT_COMMAND")
    if cmd:
        return cmd
    import pdext as module

    beside = os.path.join(module.lib_dir(), os.pardir, "bin", "pdext")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return os.path.normpath(beside)
    found = shutil.which("pdext")
    if found is None:
        raise RuntimeError("no pdext command: set PDEXT_COMMAND, or install pdext with its command")
    return found
