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


# --- a real compile made slow: a compiler launcher that sleeps before compiling -------------

C_SRC = SRC.replace("kbd_inc", "slow_inc")


def slow_launcher(tmp_path):
    """A compiler launcher (PDEXT_COMPILER_LAUNCHER) that records its own pid and that of a
    long sleep it waits for, then compiles: a compile that takes two minutes."""
    mark = tmp_path / "launcher.pids"
    launcher = tmp_path / "slow-cc"
    launcher.write_text(
        "#!/bin/sh\nsleep 120 &\necho \"$$ $!\" > %s.tmp && mv %s.tmp %s\nwait $!\nexec \"$@\"\n"
        % (mark, mark, mark)
    )
    launcher.chmod(0o755)
    return launcher, mark


def published(build, name):
    """The libraries the JIT published in a build directory (content-addressed names)."""
    return sorted(p.name for p in pathlib.Path(build).glob("lib%s-*.so" % name))


def interrupt_when_compiling(argv, env, mark):
    """Starts argv in a process group of its own, sends SIGINT to that group (as a terminal
    does) once the slow compile runs; returns (process, stdout, stderr, compile's pids,
    seconds from the signal to the end of the launcher's processes)."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        assert wait_for(mark.exists, 120), "the compile never started"
        pids = list(map(int, mark.read_text().split()))
        started = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        assert wait_for(lambda: all(gone(p) for p in pids), 10), "the compile still runs"
        ended = time.monotonic() - started
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc, out, err, pids, ended


def test_ctrl_c_during_pdext_build_stops_the_compiler_and_publishes_nothing(tmp_path):
    from conftest import pdext_command

    launcher, mark = slow_launcher(tmp_path)
    src = tmp_path / "slow.c"
    src.write_text(C_SRC)
    build, lib = tmp_path / "build", tmp_path / "libslow.so"
    argv = [pdext_command(), "build", "-o", str(lib), "--name", "slow", "--build-dir",
            str(build), str(src)]
    env = dict(os.environ, PDEXT_COMPILER_LAUNCHER=str(launcher))
    proc, out, err, pids, ended = interrupt_when_compiling(argv, env, mark)
    # It dies of the signal, as a shell expects of Ctrl-C (status 130), after saying why.
    assert proc.returncode == -signal.SIGINT, (proc.returncode, out, err)
    assert "interrupted" in err and "nothing was published" in err, err
    print("compile ended %.2f s after SIGINT" % ended)
    assert not lib.exists()
    assert published(build, "slow") == []
    # The next build (no slow launcher) builds and loads.
    env.pop("PDEXT_COMPILER_LAUNCHER")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert lib.exists() and len(published(build, "slow")) == 1


def test_ctrl_c_during_pdext_run_ends_it_and_the_next_run_builds(tmp_path):
    from conftest import pdext_command

    launcher, mark = slow_launcher(tmp_path)
    src = tmp_path / "slow.c"
    src.write_text(C_SRC)
    x = tmp_path / "x.npy"
    np.save(x, np.array([1.0, 2.0]))
    build, outdir = tmp_path / "build", tmp_path / "out"
    argv = [pdext_command(), "run", "--name", "slowrun", "--build-dir", str(build), str(src),
            "--op", "slow_inc", "--input", "X=%s" % x, "--out", str(outdir)]
    env = dict(os.environ, PDEXT_COMPILER_LAUNCHER=str(launcher))
    proc, out, err, pids, ended = interrupt_when_compiling(argv, env, mark)
    assert proc.returncode == -signal.SIGINT, (proc.returncode, out, err)
    assert published(build, "slowrun") == []
    env.pop("PDEXT_COMPILER_LAUNCHER")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(outdir / "Out.npy"), [2.0, 3.0])


def test_ctrl_c_during_a_python_load_with_a_real_compile(pdext, tmp_path):
    # The real ninja and compiler, made slow by the launcher: KeyboardInterrupt comes while
    # the compile would still run for minutes, the compile is ended, nothing is published.
    launcher, mark = slow_launcher(tmp_path)
    build = tmp_path / "build"
    code = textwrap.dedent(
        """
        import sys, pdext
        try:
            pdext.load_inline("slowpy", %r, build_directory=%r)
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
            sys.exit(0)
        print("no interrupt")
        """
        % (C_SRC, str(build))
    )
    env = dict(os.environ, PDEXT_COMPILER_LAUNCHER=str(launcher))
    proc, out, err, pids, ended = interrupt_when_compiling([sys.executable, "-c", code], env,
                                                           mark)
    assert proc.returncode == 0, err
    assert out.strip() == "KeyboardInterrupt", out + err
    assert published(build, "slowpy") == []
    ops = pdext.load_inline("slowpy", C_SRC, build_directory=build)
    np.testing.assert_array_equal(ops.slow_inc(np.array([1.0, 2.0])), [2.0, 3.0])
    assert len(published(build, "slowpy")) == 1


def test_ctrl_c_during_a_library_only_build(pdext, tmp_path):
    # The builds of libraries that are no op module (pdext.jax's XLA handler, MindSpore
    # CustomOpBuilder sources: _pdext.load(..., library_only=True)) stop on Ctrl-C too.
    launcher, mark = slow_launcher(tmp_path)
    src = tmp_path / "plain.c"
    src.write_text("int pdext_test_plain(int x) { return x + 1; }\n")
    build = tmp_path / "build"
    code = textwrap.dedent(
        """
        import sys
        from pdext import _pdext
        try:
            _pdext.load("plainlib", [%r], build_directory=%r, library_only=True)
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
            sys.exit(0)
        print("no interrupt")
        """
        % (str(src), str(build))
    )
    env = dict(os.environ, PDEXT_COMPILER_LAUNCHER=str(launcher))
    proc, out, err, pids, ended = interrupt_when_compiling([sys.executable, "-c", code], env,
                                                           mark)
    assert proc.returncode == 0, err
    assert out.strip() == "KeyboardInterrupt", out + err
    assert published(build, "plainlib") == []
    from pdext import _pdext

    path = _pdext.load("plainlib", [str(src)], build_directory=str(build), library_only=True)
    assert pathlib.Path(path).exists() and published(build, "plainlib") == [pathlib.Path(path).name]
