"""DistributedDataParallel over gloo with a registered pdext op (examples/torch/ddp_train.py):
2 processes on this machine, started by torch.distributed.run, end with the weights of the same
training in one process; and 8 processes starting at once on a cold cache build the native
kernel once. Runs in the framework venv (torch 2 from PyPI)."""

import os
import socket
import subprocess
import sys

from conftest import ROOT, require_framework

torch = require_framework("torch")

SCRIPT = ROOT / "examples" / "torch" / "ddp_train.py"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args, tmp_path):
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    r = subprocess.run([sys.executable] + args, capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r.stdout


def test_ddp_two_processes_equal_one(tmp_path):
    w2, w1 = tmp_path / "w2.pt", tmp_path / "w1.pt"
    out = run(["-m", "torch.distributed.run", "--nproc_per_node=2", "--master_addr=127.0.0.1",
               "--master_port=%d" % free_port(), str(SCRIPT), "--out", str(w2)], tmp_path)
    assert "rank 0 of 2" in out
    assert "rank 0 of 1" in run([str(SCRIPT), "--out", str(w1)], tmp_path)
    a, b = torch.load(w2), torch.load(w1)
    assert a.keys() == b.keys()
    for k in a:
        assert torch.allclose(a[k], b[k], rtol=1e-10, atol=1e-12), k
    # and the training did something: the weights moved from their initial values
    torch.manual_seed(0)
    init = torch.nn.Linear(4, 16).double().weight
    assert not torch.allclose(a["a.weight"], init)


CHILD = r"""
import sys
import torch
import pdext, pdext.torch
ok, where = pdext.torch.native_kernels()
assert ok, where
ops = pdext.torch.register(pdext.load("relu", [sys.argv[1]]), namespace="eight")
x = torch.tensor([-1.0, 2.0], requires_grad=True)
y = torch.ops.eight.custom_relu(x)
y.sum().backward()
assert y.tolist() == [0.0, 2.0] and x.grad.tolist() == [0.0, 1.0]
print(where)
"""


def test_eight_processes_build_the_native_kernel_once(tmp_path):
    """What 8 DDP ranks starting at once on a cold cache do (on one machine, or on a shared file
    system): every one gets the native kernel library, and it is compiled once (the others wait
    on its lock). The compiler is a wrapper that counts its runs."""
    log = tmp_path / "compiles.log"
    cxx = tmp_path / "cxx"
    cxx.write_text('#!/bin/sh\necho run >> "%s"\nexec "${REAL_CXX:-c++}" "$@"\n' % log)
    cxx.chmod(0o755)
    env = dict(os.environ, CXX=str(cxx), REAL_CXX=os.environ.get("CXX", "c++"),
               PDEXT_CACHE_DIR=str(tmp_path / "cache"), OMP_NUM_THREADS="1")
    env.pop("PDEXT_TORCH_NATIVE", None)
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT / "examples/relu/relu.c")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                              cwd=tmp_path) for _ in range(8)]
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out[-2000:] + err[-3000:]
    libs = {out.strip().splitlines()[-1] for out, _ in outs}
    assert len(libs) == 1 and libs.pop().startswith(str(tmp_path / "cache"))
    assert log.read_text().splitlines() == ["run"]
