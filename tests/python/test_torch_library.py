"""pdext.torch.register: pdext ops as torch.library operators, checked with torch's own tools
(torch.library.opcheck, gradcheck / gradgradcheck, torch.compile(fullgraph=True) with and
without dynamic shapes, torch._dynamo.explain, torch.export) against torch's own ops as the
reference. Runs in the framework venv (torch 2 from PyPI); skipped, saying why, without it."""

import pytest
from conftest import ROOT, require_framework

torch = require_framework("torch")
from torch.library import opcheck  # noqa: E402

PADDLE_RELU = ROOT / "examples" / "paddle" / "custom_relu_op.cc"
PADDLE_CONCAT = ROOT / "examples" / "paddle" / "custom_concat_op.cc"
TRAIN_OPS = ROOT / "examples" / "train" / "train_ops.c"
AOT_KERNELS = ROOT / "tests" / "ops" / "aot_kernels.cc"


@pytest.fixture(scope="module")
def pt(pdext):
    import pdext.torch

    return pdext.torch


@pytest.fixture(scope="module")
def reg(pt, relu, concat, pyops, tape):
    """The test modules, each in a namespace of its own."""
    return {
        "relu": pt.register(relu, namespace="pd_relu"),
        "concat": pt.register(concat, namespace="pd_concat"),
        "pyops": pt.register(pyops, namespace="pd_pyops"),
        "tape": pt.register(tape, namespace="pd_tape"),
    }


def schema(qual):
    ns, name = qual.split("::")
    return str(getattr(getattr(torch.ops, ns), name).default._schema)


def f64(*shape, grad=False):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=grad)


# --- schemas --------------------------------------------------------------------------------


def test_schemas_follow_the_declarations(reg):
    assert schema("pd_relu::custom_relu") == "pd_relu::custom_relu(Tensor X) -> Tensor"
    assert schema("pd_relu::custom_relu_grad") == (
        "pd_relu::custom_relu_grad(Tensor X, Tensor Out, Tensor Out_GRAD) -> Tensor"
    )
    assert schema("pd_concat::custom_concat") == (
        "pd_concat::custom_concat(Tensor[] X, int axis) -> Tensor"
    )
    assert schema("pd_concat::custom_concat_grad").endswith("-> Tensor[]")
    # every attr type, with the declared defaults
    assert schema("pd_pyops::py_attrs") == (
        "pd_pyops::py_attrs(Tensor X, bool b, int i=7, float f=0.5, float d=-2.25, *, int i64, "
        'str s="abc", int[] ints=[1, 2], float[] floats=[0.5], int[] i64s=[], str[]? strs=None) '
        "-> Tensor"
    )
    # (a required attr after one with a default is keyword-only: torch's schemas take no
    # positional argument without a default after one with a default; str[] defaults are not
    # expressible, so None stands for the declared one)
    assert schema("pd_pyops::py_opt") == "pd_pyops::py_opt(Tensor X, Tensor? Y=None) -> Tensor"
    assert schema("pd_pyops::py_pair") == "pd_pyops::py_pair(Tensor A, Tensor B) -> (Tensor, Tensor)"
    assert schema("pd_pyops::py_split") == "pd_pyops::py_split(Tensor X, int parts) -> Tensor[]"
    # an input written in place is mutable, and the op returns no alias of it
    assert schema("pd_pyops::py_inplace") == "pd_pyops::py_inplace(Tensor(a!) X) -> ()"


def test_registered_ops_are_torch_ops(reg):
    assert reg["relu"].custom_relu is torch.ops.pd_relu.custom_relu
    assert reg["relu"].qualnames["custom_relu"] == "pd_relu::custom_relu"


# --- eager calls against torch's own ops ------------------------------------------------------


def test_eager_calls_equal_torch(reg):
    x = torch.randn(3, 4)
    assert torch.equal(torch.ops.pd_relu.custom_relu(x), torch.relu(x))
    a, b = torch.randn(2, 3), torch.randn(2, 5)
    assert torch.equal(torch.ops.pd_concat.custom_concat([a, b], 1), torch.cat([a, b], 1))
    assert torch.equal(torch.ops.pd_concat.custom_concat([a, b], axis=-1), torch.cat([a, b], 1))
    p, q = f64(4), f64(4)
    s, d = torch.ops.pd_pyops.py_pair(p, q)
    assert torch.equal(s, p + q) and torch.equal(d, p - q)
    parts = torch.ops.pd_pyops.py_split(torch.arange(6.0, dtype=torch.float64), 3)
    assert [t.tolist() for t in parts] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def test_inplace_op_writes_its_input(reg):
    t = torch.arange(4, dtype=torch.float64)
    assert torch.ops.pd_pyops.py_inplace(t) is None
    assert t.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_strided_inputs(reg):
    x = torch.arange(-6.0, 6.0).reshape(3, 4)
    for view in (x.t(), x[:, ::2], x.flip(0)):
        assert torch.equal(torch.ops.pd_relu.custom_relu(view), view.clamp(min=0))


# --- torch.library.opcheck ----------------------------------------------------------------------


def test_opcheck_relu_and_its_grad_op(reg):
    x = f64(3, 5, grad=True)
    opcheck(torch.ops.pd_relu.custom_relu.default, (x,))
    opcheck(torch.ops.pd_relu.custom_relu.default, (torch.randn(7),))
    out = torch.relu(x.detach())
    opcheck(torch.ops.pd_relu.custom_relu_grad.default, (x.detach(), out, torch.randn_like(out)))


def test_opcheck_concat(reg):
    a, b = f64(2, 3, grad=True), f64(2, 2, grad=True)
    opcheck(torch.ops.pd_concat.custom_concat.default, ([a, b], 1))
    opcheck(torch.ops.pd_concat.custom_concat.default, ([a.detach(), f64(4, 3)], 0))


def test_opcheck_test_ops(reg):
    opcheck(torch.ops.pd_pyops.py_split.default, (f64(6), 2))
    opcheck(torch.ops.pd_pyops.py_attrs.default, (f64(2),), {"b": True, "i64": 3, "s": "x"})
    opcheck(torch.ops.pd_pyops.py_inplace.default, (f64(4),))
    for name in ("tp_square", "tp_mul", "tp_scale"):
        op = getattr(torch.ops.pd_tape, name).default
        args = (f64(3, grad=True),) if name != "tp_mul" else (f64(3, grad=True), f64(3, grad=True))
        opcheck(op, args)
    opcheck(torch.ops.pd_tape.tp_addn.default, ([f64(2, grad=True), f64(2, grad=True)],))


def test_attrs_reach_the_kernel(reg):
    """py_attrs writes what it got into its 10 outputs (tests/python/ops/py_ops.c): b, i, f, d,
    i64, strlen(s), sum(ints), sum(floats), sum(i64s), len(strs) + len(strs[0])."""
    x = f64(2)
    out = torch.ops.pd_pyops.py_attrs(x, True, i64=3)  # the declared defaults
    assert out.tolist() == [1, 7, 0.5, -2.25, 3, 3, 3, 0.5, 0, 0]
    out = torch.ops.pd_pyops.py_attrs(x, False, 2, 1.5, 4.0, i64=-5, s="hello", ints=[4, 5],
                                      floats=[1.0, 2.0], i64s=[7], strs=["ab", "c"])
    assert out.tolist() == [0, 2, 1.5, 4.0, -5, 5, 9, 3.0, 7, 4]


def test_output_only_the_kernel_can_size_is_refused_under_tracing(reg):
    """py_pair has no infer function and mirrors no input: eager calls work, the fake kernel
    (what compile and export trace with) refuses, naming the op and the output."""
    p, q = f64(3), f64(3)
    s, d = torch.ops.pd_pyops.py_pair(p, q)
    assert torch.equal(s, p + q)
    with pytest.raises(Exception, match=r"py_pair.*output 'Sum' has no shape or dtype"):
        opcheck(torch.ops.pd_pyops.py_pair.default, (p, q))


def test_opcheck_paddle_front_examples(pdext, pt):
    relu = pt.register(pdext.load("paddle_relu", [str(PADDLE_RELU)]), namespace="pd_paddle_relu")
    cat = pt.register(pdext.load("paddle_concat", [str(PADDLE_CONCAT)]), namespace="pd_paddle_cat")
    x = f64(4, 3, grad=True)
    (name,) = [n for n in relu.qualnames if not n.endswith("grad")]
    op = getattr(relu, name)
    assert torch.equal(op(x), torch.relu(x))
    opcheck(op.default, (x,))
    (cname,) = [n for n in cat.qualnames if not n.endswith("grad")]
    cop = getattr(cat, cname)
    a, b = f64(2, 3, grad=True), f64(2, 4, grad=True)
    assert torch.equal(cop([a, b], 1), torch.cat([a, b], 1))
    opcheck(cop.default, ([a, b], 1))


def test_opcheck_training_ops(pdext, pt):
    train = pt.register(pdext.load("train_ops", [str(TRAIN_OPS)]), namespace="pd_train")
    x, w, b = torch.randn(4, 3), torch.randn(3, 2, requires_grad=True), torch.randn(2, requires_grad=True)
    out = train.train_linear(x, w, b)
    assert torch.allclose(out, x @ w + b, atol=1e-6)
    opcheck(train.train_linear.default, (x, w, b))


def test_opcheck_aot_add(pdext, pt):
    add = pdext.aot("%s:CustomAdd" % AOT_KERNELS, n_inputs=2)
    tadd = pt.register(add, namespace="pd_aot")
    a, b = torch.randn(5), torch.randn(5)
    (name,) = tadd.qualnames
    assert torch.equal(getattr(tadd, name)(a, b), a + b)
    opcheck(getattr(tadd, name).default, (a, b))


# --- autograd -----------------------------------------------------------------------------------


def test_gradcheck(reg):
    assert torch.autograd.gradcheck(torch.ops.pd_relu.custom_relu, (f64(6, grad=True),))
    a, b = f64(2, 3, grad=True), f64(2, 2, grad=True)
    assert torch.autograd.gradcheck(lambda a, b: torch.ops.pd_concat.custom_concat([a, b], 1), (a, b))
    assert torch.autograd.gradcheck(torch.ops.pd_tape.tp_mul, (f64(4, grad=True), f64(4, grad=True)))
    assert torch.autograd.gradcheck(lambda x: torch.ops.pd_tape.tp_scale(x, 3.0), (f64(4, grad=True),))
    xs = [f64(3, grad=True), f64(3, grad=True)]
    assert torch.autograd.gradcheck(lambda p, q: torch.ops.pd_tape.tp_addn([p, q]), tuple(xs))


def test_double_grad_through_the_double_grad_op(reg):
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.ops.pd_tape.tp_square(x).sum(), x, create_graph=True)
    assert torch.equal(g, 2 * x)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [2.0, 2.0, 2.0]
    assert torch.autograd.gradgradcheck(torch.ops.pd_tape.tp_square, (x,))
    assert torch.autograd.gradgradcheck(lambda t: torch.ops.pd_tape.tp_scale(t, 1.5), (x,))


def test_wrong_double_grad_op_fails_gradgradcheck(reg):
    x = f64(3, grad=True)
    assert torch.autograd.gradcheck(torch.ops.pd_tape.tp_bad_dd, (x,))
    assert not torch.autograd.gradgradcheck(torch.ops.pd_tape.tp_bad_dd, (x,), raise_exception=False)


def test_op_without_grad_op_is_not_differentiable(reg):
    x = f64(3, grad=True)
    y = torch.ops.pd_tape.tp_nograd(x)
    assert not y.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()
    # a backward that only passes by goes on
    ((x * 2).sum() + y.sum()).backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_grads_equal_torch(reg):
    x = f64(5, grad=True)
    torch.ops.pd_relu.custom_relu(x).pow(2).sum().backward()
    y = x.detach().clone().requires_grad_()
    torch.relu(y).pow(2).sum().backward()
    assert torch.equal(x.grad, y.grad)


# --- torch.compile and torch.export -------------------------------------------------------------


def _explain(fn, *args):
    torch._dynamo.reset()
    return torch._dynamo.explain(fn)(*args)


def test_compile_fullgraph_without_graph_breaks(reg):
    def f(x, a):
        y = torch.ops.pd_relu.custom_relu(x * 2 - 1)
        return torch.ops.pd_concat.custom_concat([y, a], 0).sum(0) + 1

    x, a = torch.randn(3, 4), torch.randn(2, 4)
    ex = _explain(f, x, a)
    assert ex.graph_break_count == 0 and ex.graph_count == 1
    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    assert torch.allclose(compiled(x, a), f(x, a))


def test_compile_dynamic_shapes(reg):
    torch._dynamo.reset()

    def f(x, a):
        return torch.ops.pd_concat.custom_concat([torch.ops.pd_relu.custom_relu(x), a], 1) * 3

    compiled = torch.compile(f, fullgraph=True, dynamic=True)
    for n in (3, 5, 8):
        x, a = torch.randn(2, n), torch.randn(2, n + 1)
        assert torch.equal(compiled(x, a), torch.cat([x.relu(), a], 1) * 3)


def test_relu_keeps_symbolic_sizes(reg):
    """A mirroring op (no infer_shape) carries symbolic sizes through: one graph serves every
    size, no recompile."""
    from torch._dynamo.testing import CompileCounter

    torch._dynamo.reset()
    counter = CompileCounter()
    compiled = torch.compile(lambda x: torch.ops.pd_relu.custom_relu(x) + 1, backend=counter,
                             fullgraph=True, dynamic=True)
    for n in (3, 5, 9, 17):
        x = torch.randn(n)
        assert torch.equal(compiled(x), x.relu() + 1)
    assert counter.frame_count == 1


def test_vector_input_op_under_dynamic_shapes(reg):
    """tp_addn (no infer_shape) mirrors its vector input's first tensor: symbolic sizes pass."""
    torch._dynamo.reset()
    compiled = torch.compile(lambda a, b: torch.ops.pd_tape.tp_addn([a, b]) * 2, fullgraph=True,
                             dynamic=True)
    for n in (3, 6):
        a, b = f64(n), f64(n)
        assert torch.allclose(compiled(a, b), (a + b) * 2)


def test_compile_backward_equals_eager(reg):
    torch._dynamo.reset()

    def loss(x, w):
        return torch.ops.pd_relu.custom_relu(x @ w).pow(2).sum()

    x, w = f64(4, 3), f64(3, 2, grad=True)
    (ge,) = torch.autograd.grad(loss(x, w), w)
    (gc,) = torch.autograd.grad(torch.compile(loss, fullgraph=True)(x, w), w)
    assert torch.allclose(ge, gc)


def test_compile_inplace_op(reg):
    torch._dynamo.reset()

    def f(t):
        u = t + 1
        torch.ops.pd_pyops.py_inplace(u)
        return u

    t = torch.arange(4, dtype=torch.float64)
    assert torch.equal(torch.compile(f, fullgraph=True)(t), (t + 1) * 2)


def test_export_module_and_run(reg):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)

        def forward(self, x, a):
            y = torch.ops.pd_relu.custom_relu(self.lin(x))
            return torch.ops.pd_concat.custom_concat([y, a], 1)

    m = M()
    x, a = torch.randn(2, 4), torch.randn(2, 5)
    ep = torch.export.export(m, (x, a))
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "pd_relu.custom_relu.default" in targets and "pd_concat.custom_concat.default" in targets
    x2, a2 = torch.randn(2, 4), torch.randn(2, 5)
    assert torch.equal(ep.module()(x2, a2), m(x2, a2))


def test_export_keeps_relu_dynamic(reg):
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.ops.pd_relu.custom_relu(x) * 2

    batch = torch.export.Dim("batch")
    ep = torch.export.export(M(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: batch}})
    x = torch.randn(7, 3)
    assert torch.equal(ep.module()(x), x.relu() * 2)


# --- registration and bad input -----------------------------------------------------------------


def test_registering_twice_returns_the_first_registration(pt, relu, reg):
    assert pt.register(relu, namespace="pd_relu") is reg["relu"]


def test_clashing_names_are_refused_or_replaced(pdext, pt):
    first = pdext.load("relu", [str(ROOT / "examples" / "relu" / "relu.c")])
    pt.register(first, namespace="pd_clash")
    other = pdext.load("paddle_relu", [str(PADDLE_RELU)])
    names = [n for n in dir(other) if isinstance(getattr(other, n), pdext._pdext.Op)]
    if "custom_relu" not in names:
        pytest.skip("the Paddle-front relu has another op name: %s" % names)
    with pytest.raises(ValueError, match=r"torch.ops.pd_clash already has op\(s\) custom_relu"):
        pt.register(other, namespace="pd_clash")
    again = pt.register(other, namespace="pd_clash", replace=True)
    x = torch.randn(4)
    assert torch.equal(again.custom_relu(x), torch.relu(x))


def test_bad_namespace_and_non_ops(pt):
    with pytest.raises(ValueError, match="not an identifier"):
        pt.register(object(), namespace="a.b")
    with pytest.raises(TypeError, match="holds no pdext ops"):
        pt.register(object(), namespace="pd_none")


def test_attr_of_the_wrong_type_is_torchs_schema_error(reg):
    with pytest.raises((TypeError, RuntimeError), match="custom_concat"):
        torch.ops.pd_concat.custom_concat([torch.randn(2)], "zero")


def test_dtype_outside_the_dispatch_names_the_op(reg):
    with pytest.raises(Exception, match="py_pair"):
        torch.ops.pd_pyops.py_pair(torch.randn(3), torch.randn(3))  # float32; it takes float64


def test_device_without_a_kernel_is_refused(reg):
    x = torch.randn(3, device="meta")
    out = torch.ops.pd_relu.custom_relu(x)  # the fake kernel serves the meta device
    assert out.shape == (3,) and out.device.type == "meta"


def test_infer_failure_under_the_fake_kernel_names_the_op(reg):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a, b = torch.empty(2, 3), torch.empty(3, 4)
        with pytest.raises(Exception, match=r"custom_concat.*fake kernel.*infer_shape"):
            torch.ops.pd_concat.custom_concat([a, b], 1)


def test_inplace_op_refuses_a_tensor_that_requires_grad(reg):
    t = torch.ones(3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"py_inplace\(\): input 'X' requires grad"):
        torch.ops.pd_pyops.py_inplace(t)
    assert t.tolist() == [1.0, 1.0, 1.0]
    with torch.no_grad():
        torch.ops.pd_pyops.py_inplace(t)
    assert t.tolist() == [2.0, 2.0, 2.0]


# --- the kernels: native (C++, through the pdext runner) and Python (DLPack) ---------------------


def test_native_kernel_serves_cpu_calls_where_it_builds(pt, reg):
    ok, what = pt.native_kernels()
    if not ok:
        pytest.skip("the native kernel could not be built here: %s" % what)
    assert reg["relu"].native
    # an error from the runner comes back as torch's RuntimeError with pdext's message
    with pytest.raises(RuntimeError, match="py_pair.*float64"):
        torch.ops.pd_pyops.py_pair(torch.randn(3), torch.randn(3))


def test_native_vector_output_of_more_items_than_any_guessed_room(pt, reg):
    # The native kernel lets the runner size a vector output (tensors NULL, count 0;
    # pd_arg_release): 300 pieces of one input, past the 64 it once reserved.
    ok, what = pt.native_kernels()
    if not ok:
        pytest.skip("the native kernel could not be built here: %s" % what)
    assert reg["pyops"].native
    x = torch.arange(600.0, dtype=torch.float64)
    parts = torch.ops.pd_pyops.py_split(x, 300)
    assert len(parts) == 300
    assert [t.tolist() for t in parts] == [[2.0 * k, 2.0 * k + 1] for k in range(300)]
    opcheck(torch.ops.pd_pyops.py_split.default, (x, 100))


def test_python_kernels_pass_the_same_checks(pdext, pt, relu, concat):
    r = pt.register(relu, namespace="pd_py_relu", native=False)
    c = pt.register(concat, namespace="pd_py_concat", native=False)
    assert not r.native and not c.native
    x = f64(3, 4, grad=True)
    assert torch.equal(r.custom_relu(x), torch.relu(x))
    opcheck(r.custom_relu.default, (x,))
    a, b = f64(2, 3, grad=True), f64(2, 2, grad=True)
    opcheck(c.custom_concat.default, ([a, b], 1))
    assert torch.autograd.gradcheck(lambda a, b: c.custom_concat([a, b], 1), (a, b))


def test_native_outputs_own_their_memory(reg):
    """The native kernel's outputs keep pdext's storage alive after every other reference is
    gone, and strided views of the inputs are read through their strides."""
    x = torch.arange(-6.0, 6.0).reshape(3, 4)
    outs = [torch.ops.pd_relu.custom_relu(v) for v in (x.t(), x[:, ::2], x.flip(0))]
    expect = [v.clamp(min=0) for v in (x.t(), x[:, ::2], x.flip(0))]
    del x
    import gc

    gc.collect()
    for o, e in zip(outs, expect):
        assert torch.equal(o, e) and o.is_contiguous()


def test_without_a_compiler_the_python_kernels_serve(pt, relu, monkeypatch, tmp_path):
    import pdext.torch_native as tn

    monkeypatch.setattr(tn, "_native", None)
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    monkeypatch.setenv("PDEXT_CACHE_DIR", str(tmp_path))
    ok, why = pt.native_kernels()
    assert not ok and "no-such-compiler" in why
    with pytest.raises(RuntimeError, match="native kernel cannot be built"):
        pt.register(relu, namespace="pd_need_native", native=True)
    r = pt.register(relu, namespace="pd_no_native")
    assert not r.native
    x = torch.randn(4)
    assert torch.equal(r.custom_relu(x), torch.relu(x))


def test_old_torch_is_refused(pt, relu, monkeypatch):
    import pdext.torch_library as tl

    monkeypatch.setattr(tl, "_torch_version", lambda: (2, 3))
    with pytest.raises(RuntimeError, match=r"needs torch >= 2.4"):
        pt.register(relu, namespace="pd_old")


def test_compiled_training_example_equals_eager(pdext, pt):
    """examples/torch/train_compiled.py: the model's forward and backward compiled with
    fullgraph=True (no graph break) train to the weights of the eager loop."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "train_compiled", ROOT / "examples" / "torch" / "train_compiled.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    explain = torch._dynamo.explain(example.Net().double())(f64(2, 4))
    assert explain.graph_break_count == 0 and explain.graph_count == 1
    losses, weights = example.train(compiled=True, steps=10)
    eager_losses, eager_weights = example.train(compiled=False, steps=10)
    assert losses[-1] < losses[0]
    for k in weights:
        assert torch.allclose(weights[k], eager_weights[k], rtol=1e-9, atol=1e-12), k


# --- CUDA (skipped without a GPU) -------------------------------------------------------------

NO_GPU = "no CUDA GPU visible to torch (torch.cuda.is_available() is False): the CUDA half runs where one is"


@pytest.fixture(scope="module")
def cuda_reg(pdext, pt):
    if not torch.cuda.is_available():
        pytest.skip(NO_GPU)
    relu_dir = ROOT / "examples" / "relu"
    ops = pdext.load("relu_gpu", [str(relu_dir / "relu.c"), str(relu_dir / "relu_cuda.cu")])
    return pt.register(ops, namespace="pd_cuda")


def test_cuda_native_kernel_runs_on_torchs_current_stream(pt, cuda_reg):
    assert pt.native_kernels()[0]
    x = torch.randn(1 << 20, device="cuda", requires_grad=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        # queued behind work on the same stream: no synchronization makes it right
        z = x.detach() * 3.0
        y = torch.ops.pd_cuda.custom_relu(z)
        w = y + 1.0
    side.synchronize()
    assert y.device == x.device
    torch.testing.assert_close(w, torch.relu(z) + 1.0)
    y = torch.ops.pd_cuda.custom_relu(x)  # the default stream, with autograd
    y.sum().backward()
    torch.testing.assert_close(x.grad, (x > 0).to(x.dtype))


def test_cuda_opcheck_and_compile(cuda_reg):
    x = torch.randn(64, 33, device="cuda", dtype=torch.float64, requires_grad=True)
    opcheck(torch.ops.pd_cuda.custom_relu.default, (x,))
    f = torch.compile(lambda t: torch.ops.pd_cuda.custom_relu(t) * 2, fullgraph=True)
    torch.testing.assert_close(f(x), torch.relu(x) * 2)


def test_lazily_negated_view_reaches_the_kernel_resolved(reg):
    """torch's Negative / Conjugate fallbacks resolve such views before a custom op's kernel
    runs, so the native kernel, which reads the memory, sees the view's values."""
    neg = torch.tensor([1 + 2j, -3 - 1j], dtype=torch.complex128).conj().imag
    assert neg.is_neg()
    assert torch.equal(torch.ops.pd_relu.custom_relu(neg), torch.relu(neg))


@pytest.mark.parametrize("native", [False, True])
def test_grad_op_bound_by_its_published_binding(pt, gbops, native):
    # gb_mul_grad declares Out, Out@GRAD, Y, X and returns Y@GRAD, X@GRAD: both autograd
    # kernels (Python's and the native C++ one) bind them through grad_inputs / grad_outputs.
    if native and not pt.native_kernels()[0]:
        pytest.skip("the native kernel could not be built here: %s" % pt.native_kernels()[1])
    ns = "pd_gb_native" if native else "pd_gb_py"
    assert pt.register(gbops, namespace=ns, native=native).native == native
    op = getattr(torch.ops, ns).gb_mul.default
    x = torch.rand(3, 2, dtype=torch.float64).add(0.5).requires_grad_()
    y = torch.rand(3, 2, dtype=torch.float64).add(0.5).requires_grad_()
    assert torch.autograd.gradcheck(op, (x, y))
    op(x, y).sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach() * y.detach())
    torch.testing.assert_close(y.grad, x.detach() ** 2)
