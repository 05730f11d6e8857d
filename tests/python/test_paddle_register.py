"""pdext.paddle.register in dygraph, against real Paddle: the same Paddle sources
(examples/paddle/custom_relu_op.cc, custom_concat_op.cc) are built by Paddle's own
paddle.utils.cpp_extension.load (into a private directory) and by pdext.load, and every result,
gradient and double gradient of the registered ops is compared with Paddle's build. Also: the
tensors cross without a copy, pdext's errors come back as Python exceptions (the process lives
on), and bad input is refused naming the op. Paddle's one build of the two sources takes most
of the file's time (about two minutes on two shared cores)."""

import numpy as np
import pytest

from conftest import require_framework, ROOT

paddle = require_framework("paddle")

RELU = str(ROOT / "examples" / "paddle" / "custom_relu_op.cc")
CONCAT = str(ROOT / "examples" / "paddle" / "custom_concat_op.cc")

# Ops of pdext's C API for what Paddle's build cannot show: where the data lives, attrs of
# every kind with defaults, a kernel that fails, an infer function that refuses.
TEST_SOURCE = r"""
#include "extension.h"
#include <string.h>

/* Out = X (a copy); Addr = {address of X's data, address of Out's data}. */
static void addr_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    memcpy(pd_data(out), pd_data(x), (size_t)pd_numel(x) * sizeof(float));
    int64_t *addr = pd_data(pd_output(ctx, 1));
    addr[0] = (int64_t)(intptr_t)pd_data(x);
    addr[1] = (int64_t)(intptr_t)pd_data(out);
}
static void addr_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t two = 2;
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
    pd_set_output_shape(ctx, 1, 1, &two);
}
static void addr_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, PD_FLOAT32);
    pd_set_output_dtype(ctx, 1, PD_INT64);
}
PD_BUILD_OP(pp_addr, .inputs = {"X"}, .outputs = {"Out", "Addr"}, .kernel = addr_kernel,
            .infer_shape = addr_shape, .infer_dtype = addr_dtype);

/* Out = X * scale + shift (mode "add" adds 1 more); refuses X of rank > 2 in its infer. */
static void scale_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    float scale = pd_attr_float(ctx, 0);
    double shift = pd_attr_double(ctx, 1);
    const char *mode = pd_attr_string(ctx, 2);
    float extra = strcmp(mode, "add") == 0 ? 1.0f : 0.0f;
    const float *in = pd_data(x);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = in[i] * scale + (float)shift + extra;
}
static void scale_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(x->ndim <= 2, "pp_scale takes X of rank <= 2, got rank %d", (int)x->ndim);
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
}
PD_BUILD_OP(pp_scale, .inputs = {"X"}, .outputs = {"Out"},
            .attrs = {"scale: float", "shift: double = 0.5", "mode: std::string = \"mul\""},
            .kernel = scale_kernel, .infer_shape = scale_shape);

/* Always fails. */
static void fail_kernel(pd_kernel_ctx *ctx)
{
    (void)ctx;
    PD_THROW("pp_fail always fails");
}
PD_BUILD_OP(pp_fail, .inputs = {"X"}, .outputs = {"Out"}, .kernel = fail_kernel);
"""


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    from paddle.utils.cpp_extension import load

    return load(name="pdext_register_real", sources=[RELU, CONCAT],
                build_directory=str(tmp_path_factory.mktemp("paddle_build")))


@pytest.fixture(scope="module")
def pmod(pdext):
    return pdext.load("paddle_register_ops", [RELU, CONCAT])


@pytest.fixture(scope="module")
def pops(pdext, pmod):
    import pdext.paddle

    return pdext.paddle.register(pmod)


@pytest.fixture(scope="module")
def tmod(pdext):
    return pdext.load_inline("paddle_register_test", TEST_SOURCE)


@pytest.fixture(scope="module")
def tops(pdext, tmod):
    import pdext.paddle

    return pdext.paddle.register(tmod, namespace="pdtest")


def leaf(a, dtype="float32"):
    t = paddle.to_tensor(np.asarray(a, dtype=dtype))
    t.stop_gradient = False
    return t


X = [[-1.5, 0.25, 2.0], [3.0, -0.75, 0.0]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_forward_and_grad_equal_paddles_build(real, pops, dtype):
    got, want = leaf(X, dtype), leaf(X, dtype)
    y, z = pops.custom_relu(got), real.custom_relu(want)
    assert isinstance(y, paddle.Tensor) and y.dtype == z.dtype and y.shape == z.shape
    np.testing.assert_array_equal(y.numpy(), z.numpy())
    w = paddle.to_tensor(np.arange(6, dtype=dtype).reshape(2, 3))
    (y * w).sum().backward()
    (z * w).sum().backward()
    np.testing.assert_array_equal(got.grad.numpy(), want.grad.numpy())
    assert not np.all(got.grad.numpy() == 0)


def test_relu_double_grad_equals_paddles_build(real, pops):
    """paddle.grad(..., create_graph=True) through the grad op, then the gradient of that
    gradient with respect to the output gradient, which runs the double grad op."""
    res = []
    for f in (pops.custom_relu, real.custom_relu):
        x = leaf(X)
        dy = leaf(np.full((2, 3), 0.5))
        (dx,) = paddle.grad(f(x), x, grad_outputs=dy, create_graph=True)
        ddx = paddle.to_tensor(np.arange(1, 7, dtype="float32").reshape(2, 3))
        (ddy,) = paddle.grad(dx, dy, grad_outputs=ddx)
        res.append((dx.numpy(), ddy.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    np.testing.assert_array_equal(res[0][1], np.where(np.asarray(X) > 0, np.arange(1, 7).reshape(2, 3), 0))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_vector_input_and_attr_equal_paddles_build(real, pops, axis):
    rng = np.random.default_rng(axis + 5)
    a, b = rng.standard_normal((2, 3)).astype("float32"), rng.standard_normal((2, 3)).astype("float32")
    mine, theirs = [leaf(a), leaf(b)], [leaf(a), leaf(b)]
    y, z = pops.custom_concat(mine, axis), real.custom_concat(theirs, axis)
    np.testing.assert_array_equal(y.numpy(), z.numpy())
    np.testing.assert_array_equal(y.numpy(), np.concatenate([a, b], axis=axis))
    w = paddle.to_tensor(rng.standard_normal(y.shape).astype("float32"))
    (y * w).sum().backward()
    (z * w).sum().backward()
    for m, t in zip(mine, theirs):
        np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())


def test_a_training_step_updates_weights_as_paddles_build_does(real, pops):
    """A linear layer + custom_relu + SGD, three steps each, from the same start."""
    weights = []
    for relu in (pops.custom_relu, real.custom_relu):
        paddle.seed(26)
        lin = paddle.nn.Linear(3, 2)
        opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=lin.parameters())
        x = paddle.to_tensor(np.asarray(X, "float32"))
        for _ in range(3):
            loss = (relu(lin(x)) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
        weights.append(lin.weight.numpy())
    np.testing.assert_array_equal(weights[0], weights[1])


def test_tensors_cross_without_a_copy(tops):
    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    out, addr = tops.pp_addr(x)
    np.testing.assert_array_equal(out.numpy(), x.numpy())
    assert int(addr.numpy()[0]) == x.data_ptr()    # the kernel read Paddle's memory
    assert int(addr.numpy()[1]) == out.data_ptr()  # Paddle's output is pdext's memory


def test_attrs_of_each_kind_and_their_defaults(tops):
    x = paddle.to_tensor(np.array([1.0, -2.0], "float32"))
    np.testing.assert_allclose(tops.pp_scale(x, 3.0).numpy(), [3.5, -5.5])
    np.testing.assert_allclose(tops.pp_scale(x, 2, shift=0.0, mode="add").numpy(), [3.0, -3.0])
    np.testing.assert_allclose(tops.pp_scale(x, scale=1.0, mode="mul").numpy(), [1.5, -1.5])


def test_an_attr_of_the_wrong_type_is_refused_naming_op_and_attr(tops):
    x = paddle.to_tensor(np.array([1.0], "float32"))
    with pytest.raises(TypeError, match=r"pp_scale\(\): attr 'mode' takes a std::string, got 3"):
        tops.pp_scale(x, 1.0, 0.0, 3)
    with pytest.raises(TypeError, match=r"pp_scale\(\): attr 'scale' takes a float"):
        tops.pp_scale(x, "big")


def test_a_failing_kernel_is_a_python_exception_with_pdexts_message(tops):
    x = paddle.to_tensor(np.array([1.0], "float32"))
    with pytest.raises(Exception, match="pp_fail always fails"):
        tops.pp_fail(x)
    # The process lives on, and so do the ops.
    np.testing.assert_allclose(tops.pp_scale(x, 2.0).numpy(), [2.5])


def test_an_input_pdext_refuses_is_an_exception_naming_the_op(pops, tops):
    with pytest.raises(Exception, match=r"pp_scale takes X of rank <= 2, got rank 3"):
        tops.pp_scale(paddle.ones([1, 1, 2]), 1.0)
    x = paddle.to_tensor(np.ones((2, 3), "float32"))
    with pytest.raises(Exception, match="custom_concat"):
        pops.custom_concat([x, x], 5)  # axis out of range


def test_a_sparse_tensor_is_refused_naming_op_and_input(pops):
    x = paddle.to_tensor(np.array([[0.0, 1.5], [2.0, 0.0]], "float32")).to_sparse_coo(2)
    with pytest.raises(Exception, match=r"custom_relu\(\): input 'X' is not a dense tensor"):
        pops.custom_relu(x)


def test_registering_twice_gives_the_first_registration_and_clashes_are_refused(pdext, pmod, pops):
    import pdext.paddle

    assert pdext.paddle.register(pmod) is pops
    other = pdext.load("paddle_register_again", [RELU])
    with pytest.raises(ValueError, match="Paddle already has an op 'pdext_custom_relu'"):
        pdext.paddle.register(other)
    # A namespace of its own makes it another Paddle op.
    again = pdext.paddle.register(other, namespace="again")
    assert again.op_types["custom_relu"] == "again_custom_relu"
    x = paddle.to_tensor(np.array([-1.0, 2.0], "float32"))
    np.testing.assert_array_equal(again.custom_relu(x).numpy(), [0.0, 2.0])


def test_paddles_own_op_name_is_refused_as_a_pdext_op_type(pdext, real):
    import pdext.paddle

    with pytest.raises(ValueError, match="Paddle already has an op 'custom_relu'"):
        pdext.paddle.register(pdext.load("paddle_register_bare", [RELU]), namespace="")


@pytest.mark.skipif(not paddle.device.is_compiled_with_cuda()
                    or paddle.device.cuda.device_count() == 0,
                    reason="needs Paddle built with CUDA and a GPU (this run has neither)")
def test_gpu_tensors_run_on_paddles_stream(pdext, real, tmp_path):
    import pdext.paddle

    gpu = pdext.paddle.register(pdext.load("paddle_register_gpu", [RELU, str(ROOT / "examples" / "paddle" / "custom_relu_op.cu")]),
                                namespace="gpu")
    x = paddle.to_tensor(np.asarray(X, "float32"), place=paddle.CUDAPlace(0))
    x.stop_gradient = False
    y = gpu.custom_relu(x)
    assert y.place.is_gpu_place()
    y.sum().backward()
    np.testing.assert_array_equal(y.numpy(), np.maximum(np.asarray(X), 0))
    np.testing.assert_array_equal(x.grad.numpy(), (np.asarray(X) > 0).astype("float32"))


@pytest.fixture(scope="module")
def pyp(pdext, pyops):
    import pdext.paddle

    return pdext.paddle.register(pyops, namespace="pyp")


def test_an_op_writing_its_input_in_place_writes_the_paddle_tensor(pyp):
    x = paddle.to_tensor(np.array([1.0, -2.5, 4.0]))
    ptr = x.data_ptr()
    y = pyp.py_inplace(x)
    np.testing.assert_array_equal(x.numpy(), [2.0, -5.0, 8.0])
    assert y.data_ptr() == ptr  # Paddle's inplace map: the output is the input tensor
    np.testing.assert_array_equal(y.numpy(), [2.0, -5.0, 8.0])


def test_an_optional_input_may_be_left_out(pyp):
    x = paddle.to_tensor(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(pyp.py_opt(x).numpy(), [101.0, 102.0])
    np.testing.assert_array_equal(pyp.py_opt(x, paddle.to_tensor(np.array([0.5, 0.25]))).numpy(),
                                  [1.5, 2.25])


def test_an_output_that_is_its_input_is_a_copy_paddle_owns(pyp):
    x = paddle.to_tensor(np.array([3.0, 4.0]))
    y = pyp.py_alias(x)
    np.testing.assert_array_equal(y.numpy(), [3.0, 4.0])
    assert y.data_ptr() != x.data_ptr()


def test_an_op_sizing_a_vector_output_itself_is_left_out_saying_why(pyp):
    # Paddle's custom ops take vector outputs only as inputs written in place.
    assert "py_split" not in vars(pyp)
    assert "output 'Out' is a vector" in pyp.skipped["py_split"]
    assert set(pyp.op_types) >= {"py_inplace", "py_opt", "py_alias", "py_attrs"}


@pytest.mark.parametrize("attrs", [
    dict(b=True, i64=10000000000),
    dict(b=False, i=-3, f=1.25, d=3.5, i64=-4, s="hello", ints=[4, 5, 6], floats=[0.25, 2.0],
         i64s=[7, 10000000000], strs=["ab", "c"]),
])
def test_attrs_of_every_type_reach_the_kernel_as_pdexts_own_call_passes_them(pyp, pyops, attrs):
    x = np.zeros(1)
    want = pyops.py_attrs(x, **attrs)
    got = pyp.py_attrs(paddle.to_tensor(x), **attrs)
    np.testing.assert_array_equal(got.numpy(), want)


def test_the_bridges_gpu_path_compiles_where_cuda_headers_are(pdext, tmp_path):
    """The GPU half (Paddle's stream of a GPU tensor made pdext's current stream) is compiled
    only against a Paddle built with CUDA; here it is compiled against this wheel's headers with
    CUDA's, so that it cannot rot on CPU-only machines."""
    import os
    import subprocess

    import pdext.paddle as pp

    if not os.path.exists(os.path.join(pp._cuda_home(), "include", "cuda_runtime.h")):
        pytest.skip("no CUDA headers under %s" % pp._cuda_home())
    src = os.path.join(os.path.dirname(os.path.abspath(pp.__file__)), "paddle_native.cpp")
    cmd = pp._build_command(src, str(tmp_path / "bridge_cuda.o"), cuda=True)
    cmd = [c for c in cmd if c not in ("-shared",) and not c.startswith(("-l", "-L", "-Wl"))]
    r = subprocess.run(cmd + ["-c"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.skipif(not paddle.device.is_compiled_with_cuda()
                    or paddle.device.cuda.device_count() == 0,
                    reason="needs Paddle built with CUDA and a GPU (this run has neither)")
def test_a_gpu_tensor_for_an_op_built_without_its_gpu_half_is_refused_naming_it(pops):
    # pmod is custom_relu_op.cc alone: its GPU half is missing, and pdext says so.
    x = paddle.to_tensor(np.asarray(X, "float32"), place=paddle.CUDAPlace(0))
    with pytest.raises(Exception, match="relu_cuda_forward|custom_relu"):
        pops.custom_relu(x)


def test_a_plain_pdext_call_takes_and_gives_paddle_tensors_without_a_copy(tmod):
    """Without register: the op called directly on Paddle tensors (DLPack's C exchange API,
    no Python on the way), the results Paddle tensors over pdext's memory."""
    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    out, addr = tmod.pp_addr(x)
    assert isinstance(out, paddle.Tensor) and isinstance(addr, paddle.Tensor)
    assert out.place.is_cpu_place() and out.dtype == paddle.float32 and out.shape == [2, 3]
    np.testing.assert_array_equal(out.numpy(), x.numpy())
    assert int(addr.numpy()[0]) == x.data_ptr()
    assert int(addr.numpy()[1]) == out.data_ptr()


def test_a_plain_call_on_a_tensor_that_requires_grad_is_refused_saying_what_to_do(tmod):
    x = leaf([1.0, 2.0])
    with pytest.raises(ValueError, match=r"pp_addr\(\): input 'X' is a Paddle tensor that "
                                         r"requires grad.*pdext.paddle.register"):
        tmod.pp_addr(x)
    out, _ = tmod.pp_addr(x.detach())
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])
