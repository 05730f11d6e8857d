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
