"""pdext ops registered with Paddle (pdext.paddle.register) in Paddle's static graph and in Paddle
Inference, on the CPU: a model using them goes through paddle.jit.to_static (forward and
backward), paddle.jit.save, paddle.jit.load and paddle.inference.create_predictor, in this
process and in a fresh one that registers the same module before loading the model, with the
dygraph results. Bad input at program-building time (an attr of the wrong type, a shape the
op's infer function refuses) is an exception carrying pdext's message."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import require_framework, ROOT

paddle = require_framework("paddle")

RELU = str(ROOT / "examples" / "paddle" / "custom_relu_op.cc")
CONCAT = str(ROOT / "examples" / "paddle" / "custom_concat_op.cc")

SCALE_SOURCE = r"""
#include "extension.h"
/* Out = X * scale; refuses X of rank > 2 in its infer function. */
static void scale_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    float scale = pd_attr_float(ctx, 0);
    const float *in = pd_data(x);
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        out[i] = in[i] * scale;
}
static void scale_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(x->ndim <= 2, "ps_scale takes X of rank <= 2, got rank %d", (int)x->ndim);
    pd_set_output_shape(ctx, 0, x->ndim, x->shape);
}
PD_BUILD_OP(ps_scale, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"scale: float"},
            .kernel = scale_kernel, .infer_shape = scale_shape);

/* Fails when run (its infer functions are the default ones and succeed). */
static void fail_kernel(pd_kernel_ctx *ctx)
{
    (void)ctx;
    PD_THROW("ps_fail always fails");
}
PD_BUILD_OP(ps_fail, .inputs = {"X"}, .outputs = {"Out"}, .kernel = fail_kernel);
"""


@pytest.fixture(scope="module", autouse=True)
def private_to_static_dir(tmp_path_factory):
    """paddle.jit.to_static writes the code it transforms under ~/.cache/paddle/to_static_tmp;
    this run's go to a directory of its own."""
    from paddle.jit.dy2static import utils

    d = str(tmp_path_factory.mktemp("to_static_tmp"))
    saved = utils.get_temp_dir
    utils.get_temp_dir = lambda: d
    yield
    utils.get_temp_dir = saved


@pytest.fixture(scope="module")
def pops(pdext):
    import pdext.paddle

    return pdext.paddle.register(pdext.load("paddle_static_ops", [RELU, CONCAT]))


@pytest.fixture(scope="module")
def sops(pdext):
    import pdext.paddle

    return pdext.paddle.register(pdext.load_inline("paddle_static_scale", SCALE_SOURCE),
                                 namespace="pstatic")


class Net(paddle.nn.Layer):
    """Linear -> custom_relu -> custom_concat with itself along axis 1."""

    def __init__(self, pops):
        super().__init__()
        self.lin = paddle.nn.Linear(4, 3)
        self.pops = pops

    def forward(self, x):
        h = self.pops.custom_relu(self.lin(x))
        return self.pops.custom_concat([h, h * 2.0], 1)


@pytest.fixture(scope="module")
def net(pops):
    paddle.seed(26)
    return Net(pops)


@pytest.fixture(scope="module")
def x():
    return paddle.to_tensor(np.random.default_rng(3).standard_normal((5, 4)).astype("float32"))


def spec():
    return [paddle.static.InputSpec([None, 4], "float32", name="x")]


class ReluNet(paddle.nn.Layer):
    """Linear -> custom_relu -> Linear, for training through the static program. (Paddle's
    static backward takes no custom op whose grad op has a vector output, as custom_concat's
    has: its own build of the same source is refused the same way.)"""

    def __init__(self, pops):
        super().__init__()
        self.lin = paddle.nn.Linear(4, 3)
        self.out = paddle.nn.Linear(3, 2)
        self.pops = pops

    def forward(self, x):
        return self.out(self.pops.custom_relu(self.lin(x)))


def test_to_static_gives_the_dygraph_results(pops, net, x):
    static = paddle.jit.to_static(Net(pops), input_spec=spec(), full_graph=True)
    static.set_state_dict(net.state_dict())
    static.eval()
    out = static(x)
    np.testing.assert_allclose(out.numpy(), net(x).numpy(), rtol=1e-6)
    assert not np.all(out.numpy() == 0)


def test_to_static_training_gives_the_dygraph_grads(pops, x):
    paddle.seed(7)
    eager = ReluNet(pops)
    static = paddle.jit.to_static(ReluNet(pops), input_spec=spec(), full_graph=True)
    static.set_state_dict(eager.state_dict())
    out = static(x)
    np.testing.assert_allclose(out.numpy(), eager(x).numpy(), rtol=1e-6)
    # Backward through the static program: the grad op as a Paddle operator there too.
    (out ** 2).sum().backward()
    (eager(x) ** 2).sum().backward()
    for a, b in ((static.lin.weight, eager.lin.weight), (static.out.weight, eager.out.weight)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5)
    assert not np.all(static.lin.weight.grad.numpy() == 0)


@pytest.fixture(scope="module")
def saved(pops, net, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("jit") / "net")
    static = paddle.jit.to_static(Net(pops), input_spec=spec(), full_graph=True)
    static.set_state_dict(net.state_dict())
    static.eval()
    paddle.jit.save(static, path)
    return path


def model_files(path):
    for ext in (".json", ".pdmodel"):
        if os.path.exists(path + ext):
            return path + ext, path + ".pdiparams"
    raise AssertionError("paddle.jit.save wrote no model file for %s: %s"
                         % (path, os.listdir(os.path.dirname(path))))


def test_the_saved_program_names_the_pdext_op_types(saved):
    model, _ = model_files(saved)
    with open(model, "rb") as fh:
        text = fh.read()
    assert b"pdext_custom_relu" in text and b"pdext_custom_concat" in text


def test_jit_load_runs_the_saved_program(saved, net, x):
    loaded = paddle.jit.load(saved)
    loaded.eval()
    np.testing.assert_allclose(loaded(x).numpy(), net(x).numpy(), rtol=1e-6)


def run_predictor(model, params, x):
    config = paddle.inference.Config(model, params)
    config.disable_gpu()
    predictor = paddle.inference.create_predictor(config)
    h = predictor.get_input_handle(predictor.get_input_names()[0])
    h.reshape(list(x.shape))
    h.copy_from_cpu(x)
    predictor.run()
    return predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()


def test_paddle_inference_runs_the_saved_program(saved, net, x):
    model, params = model_files(saved)
    got = run_predictor(model, params, x.numpy())
    np.testing.assert_allclose(got, net(x).numpy(), rtol=1e-6)
    # Another batch size than the one traced (InputSpec's None).
    x7 = np.random.default_rng(4).standard_normal((7, 4)).astype("float32")
    np.testing.assert_allclose(run_predictor(model, params, x7),
                               net(paddle.to_tensor(x7)).numpy(), rtol=1e-6)


def test_a_fresh_process_registers_the_module_then_runs_the_model(saved, net, x, tmp_path):
    """Deployment: the model file names pdext_custom_relu and pdext_custom_concat; a process
    that registers the same module under the same namespace runs it in Paddle Inference."""
    model, params = model_files(saved)
    np.save(tmp_path / "x.npy", x.numpy())
    code = textwrap.dedent("""
        import sys, numpy as np, paddle, pdext, pdext.paddle
        pdext.paddle.register(pdext.load("paddle_static_ops", [%r, %r]))
        config = paddle.inference.Config(%r, %r)
        config.disable_gpu()
        p = paddle.inference.create_predictor(config)
        x = np.load(%r)
        h = p.get_input_handle(p.get_input_names()[0])
        h.reshape(list(x.shape))
        h.copy_from_cpu(x)
        p.run()
        np.save(%r, p.get_output_handle(p.get_output_names()[0]).copy_to_cpu())
    """ % (RELU, CONCAT, model, params, str(tmp_path / "x.npy"), str(tmp_path / "y.npy")))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), net(x).numpy(), rtol=1e-6)


def test_an_attr_of_the_wrong_type_in_a_static_program_names_op_and_attr(sops):
    def f(t):
        return sops.ps_scale(t, "twice")

    static = paddle.jit.to_static(f, input_spec=[paddle.static.InputSpec([2, 2], "float32")],
                                  full_graph=True)
    with pytest.raises(Exception, match=r"ps_scale\(\): attr 'scale' takes a float, got 'twice'"):
        static(paddle.ones([2, 2]))


def test_a_shape_the_infer_function_refuses_is_paddles_error_with_pdexts_message(sops):
    def f(t):
        return sops.ps_scale(t, 2.0)

    static = paddle.jit.to_static(f, input_spec=[paddle.static.InputSpec([2, 2, 2], "float32")],
                                  full_graph=True)
    with pytest.raises(Exception, match=r"ps_scale takes X of rank <= 2, got rank 3"):
        static(paddle.ones([2, 2, 2]))
    # A rank it takes still builds and runs.
    ok = paddle.jit.to_static(f, input_spec=[paddle.static.InputSpec([None, 3], "float32")],
                              full_graph=True)
    np.testing.assert_allclose(ok(paddle.ones([2, 3])).numpy(), np.full((2, 3), 2.0))


def test_a_kernel_failing_in_a_static_program_is_an_exception_not_an_abort(sops):
    def failing(t):
        return sops.ps_fail(t) * 2.0

    def scaling(t):
        return sops.ps_scale(t, 3.0)

    static = paddle.jit.to_static(failing, input_spec=[paddle.static.InputSpec([2], "float32")],
                                  full_graph=True)
    with pytest.raises(Exception, match="ps_fail always fails"):
        static(paddle.ones([2]))
    # The process lives on, and runs the next program.
    ok = paddle.jit.to_static(scaling, input_spec=[paddle.static.InputSpec([2], "float32")],
                              full_graph=True)
    np.testing.assert_allclose(ok(paddle.ones([2])).numpy(), [3.0, 3.0])


def test_attrs_of_every_type_in_a_static_program_as_in_dygraph(pdext):
    """tests/paddle_conformance/attrs_op.cc (all ten attr types, infer functions reading them
    by Paddle's rule) in to_static: Paddle hands the infer functions every attr but the int64
    vectors, the kernel all of them; the results are dygraph's."""
    import pdext.paddle

    cops = pdext.paddle.register(
        pdext.load("paddle_static_attrs", [str(ROOT / "tests" / "paddle_conformance" / "attrs_op.cc")]),
        namespace="pattrs")
    attrs = (True, 10, 3.5, 10000000000, "StrAttr", [10, 10, 10], [3.25, 0.5], [7, 8, 9],
             ["ab", "cde"])

    def f(t):
        return cops.conf_attrs(t, *attrs)

    x = paddle.to_tensor(np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3))
    want = f(x)
    static = paddle.jit.to_static(f, input_spec=[paddle.static.InputSpec([2, 3], "float32")],
                                  full_graph=True)
    got = static(x)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g.numpy(), w.numpy())
