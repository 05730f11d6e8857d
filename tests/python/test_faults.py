"""Defects a fault probe found in the Python front and the executor under it (issue 22, N1-N11):
each test is the probe's reproducer, asserting the behaviour the fix gives. Those whose bug
crashed or hung the interpreter run their reproducer in a child process, so that the bug
fails the test instead of ending the whole run."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

FAULT_SOURCE = r"""
#include "extension.h"
#include <time.h>
/* Out = X + 1, after sleeping `ms` milliseconds: a call that stays in flight for a while. */
static void sleep_kernel(pd_kernel_ctx *ctx)
{
    int64_t ms = pd_attr_int64(ctx, 0);
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    const float *in = pd_data(pd_input(ctx, 0));
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(pd_input(ctx, 0)); i < n; ++i)
        out[i] = in[i] + 1;
}
PD_BUILD_OP(flt_sleep, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"ms: int64_t"},
            .kernel = sleep_kernel);

/* Always fails, its output never written. */
static void fail_kernel(pd_kernel_ctx *ctx)
{
    (void)ctx;
    PD_THROW("flt_fail always fails");
}
PD_BUILD_OP(flt_fail, .inputs = {"X"}, .outputs = {"Out"}, .kernel = fail_kernel);
"""


@pytest.fixture(scope="module")
def faults(pdext):
    return pdext.load_inline("py_faults", FAULT_SOURCE)


def run_child(code, timeout=120):
    """Runs `code` in a fresh interpreter with this run's environment (the same pdext, the
    same build cache); returns (returncode, stdout + stderr)."""
    src = "import numpy as np, pdext\nFAULT_SOURCE = %r\n" % FAULT_SOURCE + textwrap.dedent(code)
    p = subprocess.run(
        [sys.executable, "-c", src],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )
    return p.returncode, p.stdout


def test_n1_a_pending_call_keeps_its_library_loaded(faults):
    # The library is the only reference to its module; dropping it while its call sleeps on
    # the worker must not unload the code the worker runs (a use after free, then SIGSEGV).
    rc, out = run_child(
        """
        import gc
        x = pdext.from_dlpack(np.arange(4, dtype=np.float32))
        with pdext.Executor(inline_bytes=-1) as ex:
            lib = pdext.load_inline("py_faults", FAULT_SOURCE)
            y = lib.flt_sleep(x, ms=300)
            assert ex.pending(y)
            del lib  # its last reference: the library is unloaded here (or waits for y)
            gc.collect()
            print("result", y.numpy().tolist())
        """
    )
    assert rc == 0, out
    assert "result [1.0, 2.0, 3.0, 4.0]" in out, out


def test_n2_a_poisoned_tensor_is_refused_by_a_synchronous_call(pdext, faults, relu):
    x = pdext.from_dlpack(np.ones(4, np.float32))
    with pdext.Executor(inline_bytes=-1) as ex:
        y = faults.flt_fail(x)  # accepted; fails on the worker
        with pytest.raises(pdext.OpError, match="flt_fail always fails"):
            ex.synchronize()
    # Outside any executor: the synchronous runner must see the poison, not read the
    # failed call's unwritten output as data.
    with pytest.raises(pdext.OpError, match="flt_fail always fails"):
        relu.custom_relu(y)
    with pytest.raises(pdext.OpError, match="flt_fail always fails"):
        y.numpy()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_n3_the_parents_executor_is_refused_in_a_forked_child(faults):
    # In the child the parent's workers do not exist: a call, a wait on a tensor the parent
    # left pending, and leaving the block must each fail at once with a clear error, where
    # they hung for ever.
    rc, out = run_child(
        """
        import os
        x = pdext.from_dlpack(np.arange(4, dtype=np.float32))
        lib = pdext.load_inline("py_faults", FAULT_SOURCE)
        with pdext.Executor(inline_bytes=-1) as ex:
            y = lib.flt_sleep(x, ms=2000)  # still pending when the child starts
            pid = os.fork()
            if pid == 0:
                import signal
                signal.alarm(20)  # a hang must not outlive the test
                code = 0
                for what, f in (("call", lambda: lib.flt_sleep(x, ms=0)),
                                ("wait", lambda: y.numpy()),
                                ("sync", lambda: ex.synchronize())):
                    try:
                        f()
                        print(what, "returned")
                        code = 1
                    except (ValueError, pdext.Error) as e:
                        print(what, "refused:", e)
                os._exit(code)
            _, status = os.waitpid(pid, 0)
            print("child exit", os.waitstatus_to_exitcode(status))
            print("parent", y.numpy().tolist())
        """,
        timeout=60,
    )
    assert rc == 0, out
    assert "child exit 0" in out, out
    for what in ("call", "wait", "sync"):
        assert "%s refused:" % what in out and "forked" in out.split("%s refused:" % what)[1], out
    assert "parent [1.0, 2.0, 3.0, 4.0]" in out, out


def test_n6_a_string_attr_with_a_nul_is_refused(pyops):
    x = np.zeros(1)
    # The kernel reads strlen(s): without the check it saw "ab" and answered 2.
    assert pyops.py_attrs(x, b=True, i64=0, s="ab")[5] == 2
    with pytest.raises(ValueError, match=r"py_attrs\(\): attr 's' .*NUL.* at byte 2"):
        pyops.py_attrs(x, b=True, i64=0, s="ab\0cd")
    with pytest.raises(ValueError, match=r"py_attrs\(\): attr 'strs': item 1 .*NUL.* at byte 0"):
        pyops.py_attrs(x, b=True, i64=0, strs=["ok", "\0x"])


def dlpack_capsule(shape, keep):
    """A DLPack capsule (no deleter) of a float32 tensor of `shape` over a small buffer, built
    by hand as a hostile or buggy producer could; `keep` holds the ctypes objects alive."""
    import ctypes

    class Device(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class DType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class DLTensor(ctypes.Structure):
        _fields_ = [
            ("data", ctypes.c_void_p),
            ("device", Device),
            ("ndim", ctypes.c_int32),
            ("dtype", DType),
            ("shape", ctypes.POINTER(ctypes.c_int64)),
            ("strides", ctypes.POINTER(ctypes.c_int64)),
            ("byte_offset", ctypes.c_uint64),
        ]

    class Managed(ctypes.Structure):
        _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                    ("deleter", ctypes.c_void_p)]

    buf = (ctypes.c_float * 16)()
    dims = (ctypes.c_int64 * len(shape))(*shape)
    m = Managed()
    m.dl_tensor.data = ctypes.cast(buf, ctypes.c_void_p)
    m.dl_tensor.device = Device(1, 0)  # kDLCPU
    m.dl_tensor.ndim = len(shape)
    m.dl_tensor.dtype = DType(2, 32, 1)  # float32
    m.dl_tensor.shape = dims
    keep.extend([buf, dims, m])
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(m), b"dltensor", None)


def test_n11_a_dlpack_shape_whose_element_count_overflows_is_refused(relu):
    keep = []
    with pytest.raises(ValueError, match=r"DLPack shape \[4611686018427387904, 4\].*more elements"):
        relu.custom_relu(dlpack_capsule([2**62, 4], keep))
    with pytest.raises(ValueError, match=r"DLPack shape \[3, -2\].*negative dim"):
        relu.custom_relu(dlpack_capsule([3, -2], keep))
    # A sane capsule over the same kind of memory still works.
    np.testing.assert_array_equal(np.asarray(relu.custom_relu(dlpack_capsule([4, 4], keep))),
                                  np.zeros((4, 4), np.float32))


def test_n10_ctrl_c_interrupts_a_wait_for_a_pending_tensor():
    # A real SIGINT while .numpy() waits for a 3 s kernel: KeyboardInterrupt must arrive while
    # the call is still running (the tensor still pending), not once the kernel ends.
    rc, out = run_child(
        """
        import os, signal, threading
        x = pdext.from_dlpack(np.arange(4, dtype=np.float32))
        lib = pdext.load_inline("py_faults", FAULT_SOURCE)
        with pdext.Executor(inline_bytes=-1) as ex:
            y = lib.flt_sleep(x, ms=3000)
            threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
            try:
                y.numpy()
                print("not interrupted")
            except KeyboardInterrupt:
                print("interrupted, still pending:", ex.pending(y))
        print("after", y.numpy().tolist())
        """
    )
    assert rc == 0, out
    assert "interrupted, still pending: True" in out, out
    assert "after [1.0, 2.0, 3.0, 4.0]" in out, out
