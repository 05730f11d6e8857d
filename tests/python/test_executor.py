"""pdext.Executor: op calls inside `with pdext.Executor():` return pending pdext.Tensors at
once; a chain of calls never waits between them; .numpy(), np.asarray (__array__, the buffer
protocol) and __dlpack__ wait; errors surface where the result is read and when the block
ends. A "gate" op, whose kernel waits until the test sets a flag, holds calls in flight, so
"still pending" is a fact rather than a race."""

import numpy as np
import pytest

GATE_SOURCE = r"""
#include "extension.h"
#include <time.h>
/* Out = X + 1 once G (an int32 tensor) holds 1; X first, so the default inference mirrors it
 * (infer functions below for the two-input op). */
static void gate_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *g = pd_input(ctx, 1);
    int32_t *flag = pd_data(g);
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    const float *in = pd_data(x);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = in[i] + 1;
}
static void like_x_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
}
static void like_x_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, pd_input(ctx, 0)->dtype); }
PD_BUILD_OP(py_gated_add1, .inputs = {"X", "G"}, .outputs = {"Out"}, .kernel = gate_kernel,
            .infer_shape = like_x_shape, .infer_dtype = like_x_dtype);
"""


@pytest.fixture(scope="module")
def gate_ops(pdext):
    return pdext.load_inline("py_executor_gate", GATE_SOURCE)


def relu_ref(x):
    return np.where(x > 0, x, 0).astype(x.dtype)


def test_a_chain_returns_pending_tensors_and_numpy_waits(pdext, relu, gate_ops):
    x = pdext.from_dlpack(np.linspace(-2, 2, 64).astype(np.float32))
    flag = np.zeros((), np.int32)
    gate = pdext.from_dlpack(flag)
    with pdext.Executor(inline_bytes=-1) as ex:  # every call on the worker (the gate holds it)
        y = gate_ops.py_gated_add1(x, gate)  # held until the flag is set
        for _ in range(50):
            y = relu.custom_relu(y)
        assert isinstance(y, pdext.Tensor)
        assert y.shape == (64,) and y.dtype == "float32"
        # All 51 calls were submitted while the first one is still held: none waited.
        assert ex.stats()["submitted"] == 51
        assert ex.pending(y)
        flag[()] = 1
        want = relu_ref(np.linspace(-2, 2, 64).astype(np.float32) + 1)
        np.testing.assert_array_equal(y.numpy(), want)
        assert not ex.pending(y)
    assert ex.stats()["done"] == 51


def test_array_buffer_and_dlpack_reads_wait(pdext, relu, gate_ops):
    base = np.arange(-3, 5, dtype=np.float32)
    flag = np.zeros((), np.int32)
    with pdext.Executor(inline_bytes=-1) as ex:
        y = gate_ops.py_gated_add1(pdext.from_dlpack(base), pdext.from_dlpack(flag))
        assert ex.pending(y)
        flag[()] = 1
        np.testing.assert_array_equal(np.asarray(y), base + 1)
    with pdext.Executor(streams=2) as ex:
        ex.stream = 1
        z = relu.custom_relu(y)
        np.testing.assert_array_equal(np.from_dlpack(z), relu_ref(base + 1))
        np.testing.assert_array_equal(np.array(memoryview(relu.custom_relu(z))), relu_ref(base + 1))


def test_a_numpy_input_is_used_before_the_call_returns(pdext, relu):
    x = np.array([-1, 2, -3], np.float32)
    with pdext.Executor() as ex:
        y = relu.custom_relu(x)  # numpy memory is borrowed: this call waits for its launch
        x[:] = 100
        assert not ex.pending(y)
        np.testing.assert_array_equal(y.numpy(), [0, 2, 0])


def test_an_error_surfaces_when_the_result_is_read_and_when_the_block_ends(pdext, relu):
    bad = pdext.from_dlpack(np.array([1, 2], np.int32))  # relu refuses int32 in its kernel
    with pytest.raises(pdext.OpError, match="custom_relu"):
        with pdext.Executor(inline_bytes=-1) as ex:  # on the worker: the kernel fails later
            y = relu.custom_relu(relu.custom_relu(bad))  # accepted
            with pytest.raises(pdext.OpError, match="not implemented for data type"):
                y.numpy()
    with pdext.Executor() as ex:
        ok = relu.custom_relu(pdext.from_dlpack(np.array([-1.0, 1.0], np.float32)))
    np.testing.assert_array_equal(ok.numpy(), [0, 1])
    ex.close()
    with pytest.raises(ValueError, match="closed"):
        ex.synchronize()


def test_close_inside_its_block_is_refused_and_the_block_still_works(pdext, relu):
    with pdext.Executor() as ex:
        with pytest.raises(RuntimeError, match="pdext.Executor.close: .*`with` block"):
            ex.close()
        y = relu.custom_relu(pdext.from_dlpack(np.array([-2.0, 2.0], np.float32)))
    np.testing.assert_array_equal(y.numpy(), [0, 2])
    ex.close()


def test_calls_outside_a_block_run_synchronously(pdext, relu):
    y = relu.custom_relu(np.array([-1.0, 3.0], np.float32))
    assert isinstance(y, np.ndarray)  # numpy in, numpy out, as without an executor
    np.testing.assert_array_equal(y, [0, 3])


def test_a_small_call_on_an_idle_stream_is_complete_when_it_returns(pdext, relu):
    x = pdext.from_dlpack(np.array([-1.0, 2.0], np.float32))
    with pdext.Executor() as ex:  # default inline_bytes: 16384 (inputs up to 8 KiB)
        y = relu.custom_relu(x)
        assert not ex.pending(y)
        np.testing.assert_array_equal(y.numpy(), [0, 2])
        edge = pdext.from_dlpack(np.full(2048, -1.0, np.float32))  # 8 KiB: still on the caller
        assert not ex.pending(relu.custom_relu(edge))
    big = pdext.from_dlpack(np.full(4096, 5.0, np.float32))  # 16 KiB: inline only if asked
    with pdext.Executor(inline_bytes=65536) as ex:
        z = relu.custom_relu(big)
        assert not ex.pending(z)
        assert z.numpy()[4095] == 5.0
    with pytest.raises(ValueError, match="inline_bytes is -2"):
        pdext.Executor(inline_bytes=-2)


def test_each_thread_leaving_a_shared_executor_gets_back_what_it_had(pdext, relu):
    # Thread A enters first and stays inside while thread B enters and leaves the same
    # Executor: B's calls are synchronous again (numpy results), A's still go through it.
    import threading

    ex = pdext.Executor()
    x = np.array([-1.0, 2.0], np.float32)
    a_inside, b_done = threading.Event(), threading.Event()
    seen = {}

    def a():
        with ex:
            a_inside.set()
            b_done.wait(10)
            seen["a"] = type(relu.custom_relu(x))

    def b():
        a_inside.wait(10)
        with ex:
            seen["b_in"] = type(relu.custom_relu(x))
        seen["b_out"] = type(relu.custom_relu(x))
        b_done.set()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": pdext.Tensor, "b_in": pdext.Tensor, "b_out": np.ndarray}
    ex.close()


def test_nested_blocks_of_two_executors_restore_in_order(pdext, relu):
    x = np.array([-1.0, 2.0], np.float32)
    outer, inner = pdext.Executor(), pdext.Executor()
    with outer:
        with inner:
            with outer:
                assert type(relu.custom_relu(x)) is pdext.Tensor
            assert type(relu.custom_relu(x)) is pdext.Tensor
        assert type(relu.custom_relu(x)) is pdext.Tensor
    assert type(relu.custom_relu(x)) is np.ndarray
    inner.close()
    outer.close()
