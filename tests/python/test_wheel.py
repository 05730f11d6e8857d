"""pdext as pip installs it: the wheel that `./setup.sh test` built from this tree (`pip wheel
.`, PDEXT_WHEEL) goes into a fresh venv of Debian's python3 with numpy 2 from PyPI, and works
there as a user meets it: import, a JIT load and call, the `pdext` command on the venv's PATH,
and the SDK a C or CMake user builds against (tests/install_test.sh, run on the wheel's
folder: pkg-config, find_package(pdext), bundles, the command). The same wheel runs under
Debian's numpy 1.24, and refuses at import a libpdext of another version, and at first use a
numpy older than it was built for, naming both."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
from conftest import RELU, ROOT

WHEEL = os.environ.get("PDEXT_WHEEL")
if not WHEEL:
    pytest.skip(
        "no pdext wheel to test (PDEXT_WHEEL is unset): ./setup.sh test builds one for the "
        "framework venv, which PDEXT_FRAMEWORKS=none leaves out",
        allow_module_level=True,
    )

SYSTEM_PYTHON = "/usr/bin/python3"
PINS = ROOT / "tests" / "python" / "frameworks.txt"


def run(cmd, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert out.returncode == 0, "%s\n%s%s" % (" ".join(map(str, cmd)), out.stdout, out.stderr[-4000:])
    return out.stdout


def make_venv(path, *pip_args, system_site=False):
    run([SYSTEM_PYTHON, "-m", "venv"] + (["--system-site-packages"] if system_site else []) + [path])
    py = path / "bin" / "python"
    run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *pip_args])
    return py


def clean_env(tmp):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PDEXT_CACHE_DIR"] = str(tmp / "cache")
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh venv with the wheel and the pinned numpy 2."""
    root = tmp_path_factory.mktemp("wheel")
    py = make_venv(root / "v", "-c", PINS, WHEEL, "numpy")
    return root, py


RELU_CALL = textwrap.dedent(
    """
    import numpy as np, pdext
    ops = pdext.load("relu", [%r])
    y = ops.custom_relu(np.array([-1.5, 2.0, 0.25], np.float32))
    assert y.tolist() == [0.0, 2.0, 0.25], y
    print(np.__version__, pdext.__version__, pdext.__file__)
    """
) % str(RELU)


def test_loads_and_calls_an_op_under_numpy_2(venv):
    root, py = venv
    out = run([py, "-c", RELU_CALL], env=clean_env(root), cwd=root)
    numpy_version, version, where = out.split()
    assert int(numpy_version.split(".")[0]) >= 2
    assert where.startswith(str(root / "v")), where
    assert version == run([py, "-c", "import importlib.metadata as m; print(m.version('pdext'))"]).strip()


def test_the_command_is_on_the_venv_path_and_runs_the_demo(venv):
    root, py = venv
    pdext = py.parent / "pdext"
    out = run([pdext, "demo"], env=clean_env(root), cwd=root)
    assert "demo passed" in out
    assert run([py, "-m", "pdext", "--version"], env=clean_env(root)).strip() == \
        run([pdext, "--version"], env=clean_env(root)).strip()


def test_the_sdk_in_the_wheel_serves_c_and_cmake_users(venv):
    root, py = venv
    code = "import pdext; print(pdext.include_dir()); print(pdext.lib_dir()); print(pdext.cmake_dir())"
    include, lib, cmake = run([py, "-c", code], env=clean_env(root)).split()
    package = pathlib.Path(lib).parent
    assert pathlib.Path(include, "extension.h").is_file()
    assert pathlib.Path(cmake, "pdextConfig.cmake").is_file()
    # The installed-SDK check of ./setup.sh, on the wheel's folder as the prefix.
    env = clean_env(root)
    env["PREFIX"] = str(package)
    run(["bash", ROOT / "tests" / "install_test.sh"], env=env)


def test_the_same_wheel_runs_under_debians_numpy_1(tmp_path):
    py = make_venv(tmp_path / "v", "--no-deps", WHEEL, system_site=True)
    out = run([py, "-c", RELU_CALL], env=clean_env(tmp_path), cwd=tmp_path)
    assert out.startswith("1."), out


def test_a_libpdext_of_another_version_is_refused_at_import(venv, tmp_path):
    root, py = venv
    fake = tmp_path / "libold.so"
    src = tmp_path / "old.c"
    src.write_text('const char *pd_version(void) { return "0.1.0"; }\n')
    run(["cc", "-shared", "-fPIC", "-o", fake, src])
    env = clean_env(tmp_path)
    env["LD_PRELOAD"] = str(fake)
    out = subprocess.run([str(py), "-c", "import pdext"], capture_output=True, text=True, env=env)
    assert out.returncode != 0
    assert "ImportError" in out.stderr
    assert "is pdext %s" % run([py, "-c", "import importlib.metadata as m; print(m.version('pdext'))"]).strip() in out.stderr
    assert "libold.so, is pdext 0.1.0" in out.stderr, out.stderr


def test_a_numpy_too_old_for_the_build_is_refused_naming_both_versions(venv, tmp_path):
    root, py = venv
    # A numpy 1.19 as the extension meets it: a version, and no C API table it can use.
    fake = tmp_path / "old" / "numpy"
    (fake / "_core").mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "1.19.5"\n')
    (fake / "_core" / "__init__.py").write_text("")
    (fake / "_core" / "_multiarray_umath.py").write_text("")
    code = textwrap.dedent(
        """
        import numpy, pdext
        ops = pdext.load("relu", [%r])
        try:
            ops.custom_relu(pdext.from_dlpack)
        except ImportError as e:
            print(e)
        """
    ) % str(RELU)
    env = clean_env(root)
    env["PYTHONPATH"] = str(fake.parent)
    out = run([py, "-c", code], env=env, cwd=tmp_path)
    assert "needs numpy >= 1.23" in out, out
    assert "numpy 1.19.5 is loaded" in out, out
