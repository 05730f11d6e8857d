"""A compile farm through an existing engine (issue 22, item 11): the JIT's compiler launcher
(PDEXT_COMPILER_LAUNCHER) runs the compiles on distcc. A distccd on 127.0.0.1 (a TCP host, so
distcc sends the job over the network rather than running it as "localhost") compiles the
module; its own log shows the compile ran there, the client may not fall back to a local
compile (DISTCC_FALLBACK=0), and the objects are the bytes of a local build's. Skipped, saying
so, where distcc is not installed (setup.sh's test packages would need `distcc`).

icecream works the same way: PDEXT_COMPILER_LAUNCHER=icecc with an iceccd joined to a
scheduler (docs/jit.md); it is not started here."""

import os
import pathlib
import re
import shlex
import shutil
import socket
import subprocess
import textwrap
import time

import numpy as np
import pytest

SRC = textwrap.dedent(
    """
    #include "extension.h"
    static void k(pd_kernel_ctx *ctx) {
        const pd_tensor *x = pd_input(ctx, 0);
        pd_tensor *o = pd_empty_like(ctx, x);
        const double *a = pd_data(x);
        double *b = pd_data(o);
        for (int64_t i = 0; i < pd_numel(x); ++i) b[i] = 3.0 * a[i];
        pd_set_output(ctx, 0, o);
    }
    PD_BUILD_OP(farm_triple, .inputs = {"X"}, .outputs = {"Out"}, .kernel = k);
    """
)

DISTCC, DISTCCD = shutil.which("distcc"), shutil.which("distccd")
pytestmark = pytest.mark.skipif(
    DISTCC is None or DISTCCD is None,
    reason="distcc is not installed (no distcc/distccd on PATH; setup.sh's test packages would "
    "need `distcc`): the compile farm is not tested",
)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def distccd(tmp_path):
    port, log = free_port(), tmp_path / "distccd.log"
    # The log goes to distccd's stderr, which this process opens: run as root, distccd drops
    # to its own user, which cannot write into pytest's private temporary folder.
    with open(log, "wb") as log_file:
        proc = subprocess.Popen(
            [DISTCCD, "--no-detach", "--daemon", "--listen", "127.0.0.1", "--port", str(port),
             "--allow", "127.0.0.1", "--log-stderr", "--log-level", "info", "--jobs", "2"],
            stdout=subprocess.DEVNULL, stderr=log_file,
        )
    end = time.monotonic() + 30
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("distccd did not listen on 127.0.0.1:%d" % port)
    yield port, log
    proc.terminate()
    proc.wait(timeout=30)


def objects(build):
    return {p.name: p.read_bytes() for p in sorted(pathlib.Path(build).glob("obj/*.o"))}


def test_a_module_compiles_on_distcc_and_matches_a_local_build(pdext, tmp_path, distccd,
                                                               monkeypatch):
    port, log = distccd
    # distcc runs a -march=native compile locally (only this CPU knows what it means): the
    # portable flags are what a farm compiles, here and for the local build compared with it.
    monkeypatch.setenv("PDEXT_JIT_PORTABLE", "1")
    src = tmp_path / "farm.c"
    src.write_text(SRC)
    local = pdext.load("farm", [str(src)], build_directory=tmp_path / "local")

    monkeypatch.setenv("PDEXT_COMPILER_LAUNCHER", DISTCC)
    monkeypatch.setenv("DISTCC_HOSTS", "127.0.0.1:%d/2" % port)
    monkeypatch.setenv("DISTCC_FALLBACK", "0")  # a failed remote compile must fail the build
    # distcc keeps its locks and state here; it makes the folder's children, not the folder
    state = tmp_path / "distcc-state"
    state.mkdir()
    monkeypatch.setenv("DISTCC_DIR", str(state))
    farmed = pdext.load("farm", [str(src)], build_directory=tmp_path / "farmed")

    text = log.read_text()
    assert "farm.c" in text and "COMPILE_OK" in text, text  # distccd's own record of the job
    np.testing.assert_array_equal(farmed.farm_triple(np.array([1.0, -2.0])), [3.0, -6.0])
    # The farmed object is the bytes the same compile gives on this machine (the JIT compiles
    # and links a one-source module in one run when there is no launcher, so the reference
    # object is made here, with the farmed build's own compiler and flags).
    farmed_objs = objects(tmp_path / "farmed")
    assert len(farmed_objs) == 1, farmed_objs.keys()
    ninja = (tmp_path / "farmed" / "build.ninja").read_text()
    cc = re.search(r"^cc = (.*)$", ninja, re.M).group(1)
    cflags = re.search(r"^cflags = (.*)$", ninja, re.M).group(1)
    ref = tmp_path / "ref.o"
    subprocess.run([cc, "-pipe", *shlex.split(cflags), "-c", str(src), "-o", str(ref)],
                   check=True)
    assert list(farmed_objs.values())[0] == ref.read_bytes()
    assert local.farm_triple(np.array([2.0]))[0] == 6.0
