"""pdext.mindspore.register: pdext ops as MindSpore ops.Custom AOT primitives, checked against
the real MindSpore running them: results and gradients (mindspore.grad / value_and_grad) in
PyNative, under mindspore.jit and in GRAPH_MODE are compared with MindSpore's own ops (relu,
concat, matmul, log_softmax) on the same tensors and with numpy; bad input gets a clear
exception naming the op."""

import os
import re

import numpy as np
import pytest

from conftest import CONCAT, PY_OPS, RELU, ROOT, require_framework

ms = require_framework("mindspore")

from mindspore import nn, ops  # noqa: E402

import pdext  # noqa: E402
import pdext.mindspore as pms  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _mindspore_numpy_init():
    """MindSpore 2.10's wheel is built against numpy 1: the first Tensor operator that reaches
    its numpy bridge fails once with 'Numpy init failed' under numpy 2 (upstream, with or
    without pdext); later ones work. Take that first failure here."""
    try:
        (t(np.ones(1, np.float32)) * t(np.ones(1, np.float32))).asnumpy()
    except (SystemError, ImportError):
        pass


@pytest.fixture(scope="module", autouse=True)
def _private_cwd(tmp_path_factory):
    """MindSpore writes next to the working directory (rank_0/ with analyze_fail.ir for a
    graph that fails to compile, custom_kernel_meta/ for the AOT sources it compiles)."""
    old = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("mindspore_cwd"))
    yield
    os.chdir(old)


@pytest.fixture(scope="module")
def mrelu():
    return pms.register(pdext.load("relu", [str(RELU)]))


@pytest.fixture(scope="module")
def mconcat():
    return pms.register(pdext.load("concat", [str(CONCAT)]))


@pytest.fixture(scope="module")
def mpy():
    return pms.register(pdext.load("py_ops", [str(PY_OPS)]))


@pytest.fixture
def graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        yield
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def t(a):
    return ms.Tensor(a)


# --- relu --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_pynative_matches_mindspore_and_numpy(mrelu, dtype):
    x = rand((4, 5), dtype)
    y = mrelu.custom_relu(t(x))
    assert isinstance(y, ms.Tensor) and y.dtype == t(x).dtype and y.shape == (4, 5)
    np.testing.assert_array_equal(y.asnumpy(), np.maximum(x, 0))
    np.testing.assert_array_equal(y.asnumpy(), ops.relu(t(x)).asnumpy())
    g = ms.grad(lambda v: (mrelu.custom_relu(v) * v).sum())(t(x))
    ref = ms.grad(lambda v: (ops.relu(v) * v).sum())(t(x))
    np.testing.assert_allclose(g.asnumpy(), ref.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(g.asnumpy(), np.where(x > 0, 2 * x, 0), rtol=1e-6)


def test_relu_under_jit_value_and_grad(mrelu):
    x = rand((3, 7), seed=1)

    @ms.jit
    def f(v):
        return (mrelu.custom_relu(v) * v).sum()

    @ms.jit
    def ref(v):
        return (ops.relu(v) * v).sum()

    value, g = ms.value_and_grad(f)(t(x))
    rvalue, rg = ms.value_and_grad(ref)(t(x))
    np.testing.assert_allclose(value.asnumpy(), rvalue.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(g.asnumpy(), rg.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(value.asnumpy(), (np.maximum(x, 0) * x).sum(), rtol=1e-5)


class _ReluNet(nn.Cell):
    def __init__(self, mrelu):
        super().__init__()
        self.mrelu = mrelu
        self.w = ms.Parameter(t(rand((5,), seed=3)), name="w")

    def construct(self, x):
        return self.mrelu.custom_relu(x * self.w).sum()


def test_relu_in_graph_mode_cell_with_parameter_grads(mrelu, graph_mode):
    net = _ReluNet(mrelu)
    x = rand((4, 5), seed=2)
    w = net.w.asnumpy()
    value = net(t(x))
    np.testing.assert_allclose(value.asnumpy(), np.maximum(x * w, 0).sum(), rtol=1e-5)
    grads = ms.grad(net, grad_position=None, weights=net.trainable_params())(t(x))
    np.testing.assert_allclose(grads[0].asnumpy(), ((x * w > 0) * x).sum(0), rtol=1e-5)


# --- concat: a vector input and an attr ---------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_pynative_matches_mindspore(mconcat, axis):
    a, b = rand((2, 3), seed=4), rand((2, 3), seed=5)
    c = rand((2, 3), seed=6)
    out = mconcat.custom_concat([t(a), t(b), t(c)], axis=axis)
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate([a, b, c], axis))
    np.testing.assert_array_equal(out.asnumpy(), ops.concat([t(a), t(b), t(c)], axis).asnumpy())
    w = t(rand(out.shape, seed=7))
    g = ms.grad(lambda p, q: (mconcat.custom_concat([p, q, t(c)], axis=axis) * w).sum(),
                grad_position=(0, 1))(t(a), t(b))
    rg = ms.grad(lambda p, q: (ops.concat([p, q, t(c)], axis) * w).sum(),
                 grad_position=(0, 1))(t(a), t(b))
    for x, y in zip(g, rg):
        np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())


def test_concat_under_jit_with_attr_and_grads(mconcat):
    a, b = rand((2, 3), seed=8), rand((2, 4), seed=9)
    w = t(rand((2, 7), seed=10))

    @ms.jit
    def f(p, q):
        return (mconcat.custom_concat([p, q], axis=1) * w).sum()

    @ms.jit
    def ref(p, q):
        return (ops.concat([p, q], 1) * w).sum()

    (v, g), (rv, rg) = (ms.value_and_grad(fn, grad_position=(0, 1))(t(a), t(b))
                        for fn in (f, ref))
    np.testing.assert_allclose(v.asnumpy(), rv.asnumpy(), rtol=1e-6)
    for x, y in zip(g, rg):
        np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())


# --- other ways in: the Paddle front, the training example, every attr type ----------------------


def test_paddle_front_relu_pynative_and_jit():
    ops_ = pdext.load("paddle_relu", [str(ROOT / "examples" / "paddle" / "custom_relu_op.cc")])
    mp = pms.register(ops_)
    x = rand((6,), np.float64, seed=11)
    np.testing.assert_array_equal(mp.custom_relu(t(x)).asnumpy(), np.maximum(x, 0))
    @ms.jit
    def f(v):
        return (mp.custom_relu(v) * v).sum()

    value, g = ms.value_and_grad(f)(t(x))
    np.testing.assert_allclose(value.asnumpy(), (np.maximum(x, 0) * x).sum(), rtol=1e-12)
    np.testing.assert_allclose(g.asnumpy(), np.where(x > 0, 2 * x, 0), rtol=1e-12)


def test_training_steps_match_numpy_and_mindspore_ops(mrelu):
    train = pms.register(pdext.load("train_ops", [str(ROOT / "examples" / "train" / "train_ops.c")]))
    rng = np.random.default_rng(0)
    xn, ln = rng.standard_normal((8, 5)), rng.integers(0, 3, 8).astype(np.int64)
    x, label, onehot = t(xn), t(ln), np.eye(3)[ln]

    def loss_pdext(w, b):
        h = mrelu.custom_relu(train.train_linear(x, w, b))
        return train.train_softmax_xent(h, label).sum()

    def loss_ms(w, b):
        h = ops.relu(ops.matmul(x, w) + b)
        return -(ops.log_softmax(h, 1) * t(onehot)).sum() / 8

    def loss_numpy(w, b):
        z = xn @ w + b
        h = np.maximum(z, 0)
        p = np.exp(h - h.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        dz = (p - onehot) / 8 * (z > 0)
        return -np.log(p[np.arange(8), ln]).mean(), (xn.T @ dz, dz.sum(0))

    step_pd = ms.jit(ms.value_and_grad(loss_pdext, grad_position=(0, 1)))
    step_ms = ms.value_and_grad(loss_ms, grad_position=(0, 1))
    w, b = rng.standard_normal((5, 3)), np.zeros(3)
    for _ in range(4):
        value, (gw, gb) = step_pd(t(w), t(b))
        rvalue, (rgw, rgb) = loss_numpy(w, b)
        np.testing.assert_allclose(value.asnumpy(), rvalue, rtol=1e-12)
        np.testing.assert_allclose(gw.asnumpy(), rgw, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(gb.asnumpy(), rgb, rtol=1e-10, atol=1e-14)
        # MindSpore's own float64 CPU ops agree to ~1e-6 only (its matmul)
        mvalue, (mgw, mgb) = step_ms(t(w), t(b))
        np.testing.assert_allclose(value.asnumpy(), mvalue.asnumpy(), rtol=1e-5)
        np.testing.assert_allclose(gw.asnumpy(), mgw.asnumpy(), rtol=1e-4, atol=1e-6)
        w, b = w - 0.5 * gw.asnumpy(), b - 0.5 * gb.asnumpy()


def test_every_attr_type_reaches_the_kernel_through_aot_extra(mpy):
    x = t(np.zeros(1))
    got = mpy.py_attrs(x, b=True, i=-3, f=1.25, d=0.1, i64=2**40 + 1, s="hello",
                       ints=[4, 5, 6], floats=[0.25, 0.5], i64s=[2**33, 1]).asnumpy()
    np.testing.assert_array_equal(
        got, [1, -3, 1.25, 0.1, 2**40 + 1, 5, 15, 0.75, 2**33 + 1, 0])
    # defaults: the runner applies the declared ones to the attrs the primitive leaves out
    got = mpy.py_attrs(x, b=False, i64=0).asnumpy()
    np.testing.assert_array_equal(got, [0, 7, 0.5, -2.25, 0, 3, 3, 0.5, 0, 0])
    @ms.jit
    def f(v):
        return mpy.py_attrs(v, b=True, i64=9, d=0.375, ints=[-1, 2**31 - 1])

    got = f(x).asnumpy()
    assert list(got[[0, 3, 4, 6]]) == [1, 0.375, 9, 2**31 - 2]


PAIR = r"""
#include "extension.h"
/* Sum = A + B, Diff = A - B (float64), shapes from A. */
static void pair(pd_kernel_ctx *ctx)
{
    const pd_tensor *a = pd_input(ctx, 0), *b = pd_input(ctx, 1);
    const double *x = pd_data(a), *y = pd_data(b);
    double *s = pd_data(pd_output(ctx, 0)), *d = pd_data(pd_output(ctx, 1));
    for (int64_t i = 0; i < pd_numel(a); ++i)
        s[i] = x[i] + y[i], d[i] = x[i] - y[i];
}
static void pair_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *a = pd_input(ctx, 0);
    pd_set_output_shape(ctx, 0, a->ndim, a->shape);
    pd_set_output_shape(ctx, 1, a->ndim, a->shape);
}
static void pair_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, PD_FLOAT64);
    pd_set_output_dtype(ctx, 1, PD_FLOAT64);
}
PD_BUILD_OP(ms_pair, .inputs = {"A", "B"}, .outputs = {"Sum", "Diff"}, .kernel = pair,
            .infer_shape = pair_shape, .infer_dtype = pair_dtype);
"""


def test_multiple_outputs():
    mp = pms.register(pdext.load_inline("ms_pair", PAIR))
    a, b = rand((3,), np.float64, seed=12), rand((3,), np.float64, seed=13)
    s, d = mp.ms_pair(t(a), t(b))
    np.testing.assert_array_equal(s.asnumpy(), a + b)
    np.testing.assert_array_equal(d.asnumpy(), a - b)

    @ms.jit
    def f(p, q):
        s, d = mp.ms_pair(p, q)
        return s * d

    np.testing.assert_array_equal(f(t(a), t(b)).asnumpy(), (a + b) * (a - b))


def test_double_grad_and_grad_attrs_from_the_declaration(pdext):
    tape = pms.register(pdext.load("tape_ops", [str(ROOT / "tests" / "tape_ops.c")]))
    x = rand((5,), np.float64, seed=14)

    def f(v):
        return tape.tp_square(v).sum()

    np.testing.assert_allclose(ms.grad(f)(t(x)).asnumpy(), 2 * x, rtol=1e-12)

    def g(v):
        return ms.grad(f)(v).sum()

    np.testing.assert_allclose(ms.grad(g)(t(x)).asnumpy(), np.full(5, 2.0))

    # tp_scale_grad declares 'scale' required; the forward call leaves it to its default 2.0
    @ms.jit
    def h(v):
        return tape.tp_scale(v).sum() + tape.tp_scale(v, scale=np.float32(3)).sum()

    np.testing.assert_allclose(ms.grad(h)(t(x)).asnumpy(), np.full(5, 5.0))
    # two inputs, each with its gradient
    a, b = rand((4,), np.float64, seed=15), rand((4,), np.float64, seed=16)
    ga, gb = ms.grad(lambda p, q: tape.tp_mul(p, q).sum(), grad_position=(0, 1))(t(a), t(b))
    np.testing.assert_allclose(ga.asnumpy(), b, rtol=1e-12)
    np.testing.assert_allclose(gb.asnumpy(), a, rtol=1e-12)


def test_an_op_without_grad_op_says_so_when_differentiated(pdext):
    tape = pms.register(pdext.load("tape_ops", [str(ROOT / "tests" / "tape_ops.c")]))
    x = t(rand((3,), np.float64))
    np.testing.assert_allclose(tape.tp_nograd(x).asnumpy(), x.asnumpy() + 1)

    def f(v):
        return tape.tp_nograd(v).sum()

    with pytest.raises(TypeError, match="tp_nograd has no grad op"):
        ms.grad(f)(x)
    with pytest.raises(TypeError, match="tp_nograd has no grad op"):
        ms.grad(ms.jit(f))(x)


OPT = r"""
#include "extension.h"
/* Out = X + Y, or X + 100 without Y (float64); its shape and dtype are X's. */
static void opt(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *y = pd_input(ctx, 1);
    const double *a = pd_data(x);
    double *o = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0; i < pd_numel(x); ++i)
        o[i] = a[i] + (y ? ((const double *)pd_data(y))[i] : 100.0);
}
static void opt_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
}
static void opt_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_FLOAT64); }
PD_BUILD_OP(ms_opt, .inputs = {"X", PD_OPTIONAL("Y")}, .outputs = {"Out"}, .kernel = opt,
            .infer_shape = opt_shape, .infer_dtype = opt_dtype);
"""


def test_optional_inputs_given_or_left_out():
    mo = pms.register(pdext.load_inline("ms_opt", OPT))
    x, y = rand((3,), np.float64, seed=17), rand((3,), np.float64, seed=18)
    np.testing.assert_array_equal(mo.ms_opt(t(x)).asnumpy(), x + 100)
    np.testing.assert_array_equal(mo.ms_opt(t(x), t(y)).asnumpy(), x + y)

    @ms.jit
    def f(p, q):
        return mo.ms_opt(p) * mo.ms_opt(p, Y=q)

    np.testing.assert_array_equal(f(t(x), t(y)).asnumpy(), (x + 100) * (x + y))


def test_a_data_dependent_output_is_refused_in_a_graph(mpy):
    """py_opt has no infer function and two inputs: no shape before its kernel runs."""
    x = t(rand((3,), np.float64))
    np.testing.assert_array_equal(mpy.py_opt(x, x).asnumpy(), 2 * x.asnumpy())  # PyNative runs

    @ms.jit
    def f(p):
        return mpy.py_opt(p, p)

    with pytest.raises(ValueError, match="py_opt: output 'Out' has no shape"):
        f(x)


def test_same_results_as_mindspores_own_aot_kernel_of_relu(mrelu, tmp_path, monkeypatch):
    """examples/mindspore/relu_aot.cc is examples' relu as a MindSpore AOT kernel: MindSpore
    compiles and runs it itself (ops.Custom aot) beside pdext's op, in one graph; and pdext's
    AOT front runs the same kernel, registered back into MindSpore."""
    import shutil

    monkeypatch.chdir(tmp_path)  # MindSpore compiles "file.cc:Func" into ./custom_kernel_meta
    src = tmp_path / "relu_aot.cc"
    shutil.copy(ROOT / "examples" / "mindspore" / "relu_aot.cc", src)
    theirs = ops.Custom(str(src) + ":CustomRelu", out_shape=lambda s: s,
                        out_dtype=lambda d: d, func_type="aot")
    x = t(rand((4, 5), seed=19))

    @ms.jit
    def f(v):
        return mrelu.custom_relu(v), theirs(v)

    ours, ref = f(x)
    np.testing.assert_array_equal(ours.asnumpy(), ref.asnumpy())
    np.testing.assert_array_equal(mrelu.custom_relu(x).asnumpy(), theirs(x).asnumpy())
    aot = pdext.aot(str(src) + ":CustomRelu", out_shape=[4, 5], out_dtype=np.float32,
                    n_inputs=1)
    back = getattr(pms.register(aot), aot.op.__name__)

    @ms.jit
    def g(v):
        return back(v)

    np.testing.assert_array_equal(g(x).asnumpy(), ref.asnumpy())
    np.testing.assert_array_equal(back(x).asnumpy(), ref.asnumpy())


ODD = r"""
#include "extension.h"
/* ms_kw: Out = in + from, with an input and an attr named like Python keywords. */
static void kw(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    const double *a = pd_data(x);
    double *o = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0; i < pd_numel(x); ++i)
        o[i] = a[i] + (double)pd_attr_int64(ctx, 0);
}
PD_BUILD_OP(ms_kw, .inputs = {"in"}, .outputs = {"Out"}, .attrs = {"from: int64_t"},
            .kernel = kw);
/* ms_const: no input; Out = [7, 7, 7] (float64). */
static void cst(pd_kernel_ctx *ctx)
{
    double *o = pd_data(pd_output(ctx, 0));
    for (int i = 0; i < 3; ++i)
        o[i] = 7;
}
static void cst_shape(pd_kernel_ctx *ctx)
{
    int64_t three = 3;
    pd_set_output_shape(ctx, 0, 1, &three);
}
static void cst_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_FLOAT64); }
PD_BUILD_OP(ms_const, .inputs = {}, .outputs = {"Out"}, .kernel = cst,
            .infer_shape = cst_shape, .infer_dtype = cst_dtype);
"""


def test_keyword_names_and_an_op_without_inputs():
    mo = pms.register(pdext.load_inline("ms_odd", ODD))
    x = rand((3,), np.float64, seed=20)
    np.testing.assert_array_equal(mo.ms_kw(t(x), from_=4).asnumpy(), x + 4)
    np.testing.assert_array_equal(mo.ms_const().asnumpy(), [7, 7, 7])

    @ms.jit
    def f(v):
        return mo.ms_kw(in_=v, from_=2) * mo.ms_const()

    np.testing.assert_array_equal(f(t(x)).asnumpy(), (x + 2) * 7)


# --- bad input ---------------------------------------------------------------------------------


def test_a_shape_the_infer_function_refuses_names_the_op(mconcat):
    a, b = t(rand((2, 3))), t(rand((3, 3)))
    with pytest.raises(pdext.OpError, match="custom_concat"):
        mconcat.custom_concat([a, b], axis=1)

    @ms.jit
    def f(p, q):
        return mconcat.custom_concat([p, q], axis=1)

    with pytest.raises(pdext.OpError, match="custom_concat"):
        f(a, b)


def test_a_shape_refused_in_graph_mode(mconcat, graph_mode):
    class Net(nn.Cell):
        def construct(self, p, q):
            return mconcat.custom_concat([p, q], axis=0)

    with pytest.raises(pdext.OpError, match="custom_concat"):
        Net()(t(rand((2, 3))), t(rand((2, 4))))


def test_wrong_attr_types_name_the_op_and_the_attr(mconcat, mpy):
    a = t(rand((2, 3)))
    with pytest.raises(TypeError, match=r"custom_concat: attr 'axis' is declared int64_t.*float"):
        mconcat.custom_concat([a, a], axis=1.5)
    with pytest.raises(TypeError, match=r"custom_concat: attr 'axis' .*bool"):
        mconcat.custom_concat([a, a], axis=True)
    with pytest.raises(TypeError, match=r"py_attrs: attr 'ints' .*an item 'x'"):
        mpy.py_attrs(t(np.zeros(1)), b=True, i64=1, ints=[1, "x"])
    with pytest.raises(TypeError, match=r"py_attrs: attr 'strs' has type "
                                        r"std::vector<std::string>, which MindSpore's AOT"):
        mpy.py_attrs(t(np.zeros(1)), b=True, i64=1, strs=["a"])
    with pytest.raises(TypeError, match=r"py_attrs: attr 'i' .*out of its range"):
        mpy.py_attrs(t(np.zeros(1)), b=True, i64=1, i=2**31)
    with pytest.raises(TypeError, match="custom_concat.*'axes'"):
        mconcat.custom_concat([a, a], axes=1)

    @ms.jit
    def f(p):
        return mconcat.custom_concat([p, p], axis="1")

    with pytest.raises(TypeError, match=r"custom_concat: attr 'axis' is declared int64_t"):
        f(a)


def test_an_unsupported_dtype_fails_with_pdexts_message(mrelu):
    x = t(np.arange(-3, 3, dtype=np.int32))
    # PyNative without a gradient: the op runs at once through pdext, which raises
    with pytest.raises(pdext.OpError, match=r"custom_relu.*int32"):
        mrelu.custom_relu(x)

    # in a graph the AOT kernel fails: MindSpore raises naming the AOT function and the code,
    # pdext's own message is kept for last_error() (and goes to stderr)
    @ms.jit
    def f(v):
        return mrelu.custom_relu(v)

    with pytest.raises(RuntimeError, match="pdext_ms_aot"):
        f(x).asnumpy()
    assert re.search(r"custom_relu.*int32", pms.last_error())
    # the process goes on: a good call still works
    np.testing.assert_array_equal(f(t(np.ones(2, np.float32))).asnumpy(), [1, 1])


def test_pynative_eager_and_recorded_calls_agree(mrelu, mconcat):
    """The eager path (no gradient recorded) and the AOT primitive give the same tensors."""
    x = rand((4, 5), seed=21)
    eager = mrelu.custom_relu(t(x))
    recorded = []

    def f(v):
        y = mrelu.custom_relu(v)
        recorded.append(y.asnumpy())
        return y.sum()

    ms.grad(f)(t(x))
    np.testing.assert_array_equal(eager.asnumpy(), recorded[0])
    assert type(eager) is type(t(x)) and eager.dtype == ms.float32


def test_register_refuses_what_holds_no_ops():
    with pytest.raises(TypeError, match="holds no pdext ops"):
        pms.register(object())


IMPORT_ORDER = r"""
import sys
import numpy as np
if sys.argv[1] == "paddle":
    import paddle
    import mindspore as ms
else:
    import mindspore as ms
    import paddle
import pdext, pdext.mindspore as pms
m = pms.register(pdext.load("relu", [sys.argv[2]]))
x = ms.Tensor(np.array([-1.0, 2.0], np.float32))
assert m.custom_relu(x).asnumpy().tolist() == [0, 2]
assert ms.grad(lambda v: m.custom_relu(v).sum())(x).asnumpy().tolist() == [0, 1]
assert paddle.nn.functional.relu(paddle.to_tensor([-1.0, 2.0])).numpy().tolist() == [0, 2]
print("both frameworks ran")
"""


def test_import_order_with_paddle_in_one_process(tmp_path):
    """The documented order: MindSpore before Paddle works, pdext.mindspore included. Paddle
    before MindSpore fails inside `import mindspore` (an undefined oneDNN symbol of its CPU
    plugin, upstream): an ImportError before pdext is involved, no crash."""
    import importlib.util
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("paddle") is None:
        pytest.skip("paddle is not installed in this python")
    script = tmp_path / "order.py"
    script.write_text(IMPORT_ORDER)
    env = dict(os.environ)
    run = lambda first: subprocess.run(  # noqa: E731
        [sys.executable, str(script), first, str(RELU)], capture_output=True, text=True,
        env=env, cwd=tmp_path, timeout=600)
    good = run("mindspore")
    assert good.returncode == 0 and "both frameworks ran" in good.stdout, good.stderr[-3000:]
    bad = run("paddle")
    assert bad.returncode == 1, bad.stderr[-3000:]
    assert "ImportError" in bad.stderr and "dnnl" in bad.stderr


def test_example_training_runs_as_printed():
    import os
    import subprocess
    import sys

    script = ROOT / "examples" / "mindspore" / "train_mindspore.py"
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=dict(os.environ), timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    readme = (ROOT / "examples" / "mindspore" / "README.md").read_text()
    for line in out.stdout.splitlines():
        assert "# " + line in readme, line


def test_grad_op_bound_by_its_published_binding(pdext, gbops):
    # gb_mul_grad declares Out, Out@GRAD, Y, X and returns Y@GRAD, X@GRAD: the generated bprop
    # binds them through grad_inputs / grad_outputs. Out = X * X * Y.
    gm = pms.register(gbops)
    a = np.random.default_rng(17).uniform(0.5, 2.0, (4,))
    b = np.random.default_rng(18).uniform(0.5, 2.0, (4,))
    ga, gb = ms.grad(lambda p, q: gm.gb_mul(p, q).sum(), grad_position=(0, 1))(t(a), t(b))
    np.testing.assert_allclose(ga.asnumpy(), 2 * a * b, rtol=1e-12)
    np.testing.assert_allclose(gb.asnumpy(), a * a, rtol=1e-12)
