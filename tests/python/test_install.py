"""The installed package: `cmake --install` of this build into a staging prefix puts pdext
in <prefix>/lib/python3.X/dist-packages (the directory Debian's python3 reads for
/usr/local), complete, finding the installed libraries by its relative RPATH; a fresh
python3 imports it from there and loads, calls, checks and runs an AOT kernel. The python is the
one this build's package is for (PDEXT_SYSTEM_PYTHON: Debian's), whichever runs the suite."""

import os
import pathlib
import subprocess
import textwrap

from conftest import RELU, ROOT


def test_installed_package_works_from_its_prefix(tmp_path):
    build = pathlib.Path(os.environ["PDEXT_BUILD_DIR"])
    python = os.environ["PDEXT_SYSTEM_PYTHON"]
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)], check=True,
                   capture_output=True)
    version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    site = prefix / "lib" / ("python" + version) / "dist-packages"
    names = sorted(p.name for p in (site / "pdext").iterdir())
    assert {"__init__.py", "aot_op.py", "torch.py", "workbench.py"} <= set(names), names
    assert any(n.startswith("_pdext.") and n.endswith(".so") for n in names), names
    code = textwrap.dedent(
        """
        import numpy as np, pdext
        assert pdext.__file__.startswith(%r), pdext.__file__
        ops = pdext.load("relu", [%r])
        x = np.array([-1.0, 2.0])
        print(ops.custom_relu(x).tolist(), bool(pdext.gradcheck(ops.custom_relu, (x,))))
        add = pdext.aot("%s:CustomAdd", n_inputs=2)
        print(add(np.ones(2, np.float32), np.ones(2, np.float32)).tolist())
        """
        % (str(site), str(RELU), ROOT / "tests" / "ops" / "aot_kernels.cc")
    )
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["PYTHONPATH"] = str(site)
    env["PDEXT_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split("\n")[:2] == ["[0.0, 2.0] True", "[2.0, 2.0]"]
