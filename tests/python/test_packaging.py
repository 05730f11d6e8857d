"""What `pip install .` meets before anything builds: a machine without a C or C++ compiler gets
the Debian package to install, in words (CMake's own check would only say that no
CMAKE_C_COMPILER could be found); and the wheel's version is the CMake project's, which is what
libpdext reports at run time."""

import os
import re
import shutil
import subprocess

from conftest import ROOT


def test_a_missing_compiler_is_named_with_the_package_to_install(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("cmake", "ninja"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX")}
    env["PATH"] = str(bin_dir)
    out = subprocess.run([str(bin_dir / "cmake"), "-S", str(ROOT), "-B", str(tmp_path / "b"),
                          "-G", "Ninja"], capture_output=True, text=True, env=env)
    assert out.returncode != 0
    text = " ".join((out.stdout + out.stderr).split())
    assert "pdext: no working C compiler found" in text, text
    assert "apt-get install build-essential cmake ninja-build" in text, text


def test_the_wheel_takes_its_version_from_the_cmake_project(pdext):
    cmake = (ROOT / "CMakeLists.txt").read_text()
    version = re.search(r"project\(pdext VERSION ([0-9.]+)", cmake).group(1)
    pyproject = (ROOT / "pyproject.toml").read_text()
    regex = re.search(r"regex = '(.*)'", pyproject).group(1)
    assert re.search(regex, cmake).group("value") == version
    assert pdext.__version__ == version


def test_setup_names_the_known_frameworks_for_an_unknown_one():
    env = dict(os.environ, PDEXT_FRAMEWORKS="torch,tensorflow")
    out = subprocess.run(["bash", str(ROOT / "setup.sh"), "test"], capture_output=True, text=True,
                         env=env, stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 1
    assert "PDEXT_FRAMEWORKS names 'tensorflow'; the known frameworks are: jax mindspore " \
        "onnxruntime paddle torch (or all, none)" in out.stderr, out.stderr
