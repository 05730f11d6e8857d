"""DistributedDataParallel over gloo with a registered pdext op (examples/torch/ddp_train.py):
2 processes on this machine, started by torch.distributed.run, end with the weights of the same
training in one process. Runs in the framework venv (torch 2 from PyPI)."""

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
