"""Ctrl-C during a cold build: the load raises KeyboardInterrupt promptly, Ninja and its
compilers are stopped (the JIT runs them in a session of their own, which a terminal's SIGINT
does not reach), and the cache stays usable: the next load builds and runs."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np

SRC = textwrap.dedent(
    """
    #include "extension.h"
    static void k(pd_kernel_ctx *ctx) {
        const pd_tensor *x = pd_input(ctx, 0);
        pd_tensor *o = pd_empty_like(ctx, x);
        const double *a = pd_data(x);
        double *b = pd_data(o);
        for (int64_t i = 0; i < pd_numel(x); ++i) b[i] = a[i] + 1.0;
        pd_set_output(ctx, 0, o);
    }
    PD_BUILD_OP(kbd_inc, .inputs = {"X"}, .outputs = {"Out"}, .kernel = k);
    """
)


def gone(pid):
    """The process has ended (or is a zombie nobody reaped yet)."""
    try:
        stat = pathlib.Path("/proc/%d/stat" % pid).read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_ctrl_c_stops_the_build_and_leaves_the_cache_usable(pdext, tmp_path):
    # A "ninja" that stands for a long build: it starts a compiler-like child and waits.
    mark = tmp_path / "pids"
    fake = tmp_path / "ninja"
    fake.write_text(
        "#!/bin/sh\nsleep 120 &\necho \"$$ $!\" > %s.tmp && mv %s.tmp %s\nwait\n"
        % (mark, mark, mark)
    )
    fake.chmod(0o755)
    build = tmp_path / "build"
    code = textwrap.dedent(
        """
        import sys, pdext
        try:
            pdext.load_inline("kbd", %r, build_directory=%r)
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
            sys.exit(0)
        print("no interrupt")
        """
        % (SRC, str(build))
    )
    env = dict(os.environ, PDEXT_NINJA=str(fake))
    # A process group of its own, signalled as a terminal signals its foreground group.
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert wait_for(mark.exists, 60), "the build never started"
        ninja_pid, compiler_pid = map(int, mark.read_text().split())
        started = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.strip() == "KeyboardInterrupt", out + err
    assert time.monotonic() - started < 20  # not the 120 s the build would take
    assert wait_for(lambda: gone(ninja_pid) and gone(compiler_pid), 10)

    # The cache is usable: with the real ninja the same load builds, then loads warm.
    ops = pdext.load_inline("kbd", SRC, build_directory=build)
    np.testing.assert_array_equal(ops.kbd_inc(np.array([1.0, 2.0])), [2.0, 3.0])
    again = pdext.load_inline("kbd", SRC, build_directory=build)
    assert again.__file__ == ops.__file__
