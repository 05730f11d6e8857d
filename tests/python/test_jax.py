"""pdext.jax: pdext ops as XLA FFI custom calls, checked against JAX itself: jax's own ops
compute the references, jax.jit is compared with eager calls, and gradients are checked by
jax.test_util.check_grads (numerical differences against the custom_vjp built from the grad
op)."""

import pytest

from conftest import CONCAT, PY_OPS, RELU, ROOT, TAPE_OPS, require_framework

jax = require_framework("jax")
jax.config.update("jax_enable_x64", True)  # float64 ops (py_ops, check_grads at order 2)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

# An op whose output size depends on its data (the positive elements of X): no infer
# function can size it, so pd_op_infer refuses it under a trace.
POSITIVE = r"""
#include "extension.h"
static void positive(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    const double *a = pd_data(x);
    int64_t n = 0;
    for (int64_t i = 0; i < pd_numel(x); ++i)
        n += a[i] > 0;
    pd_tensor *out = pd_empty(ctx, PD_FLOAT64, pd_place_cpu(), 1, &n);
    double *o = pd_data(out);
    for (int64_t i = 0, k = 0; i < pd_numel(x); ++i)
        if (a[i] > 0)
            o[k++] = a[i];
    pd_set_output(ctx, 0, out);
}
static void positive_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_FLOAT64); }
/* Y is there so that Out mirrors no input by the runner's default inference. */
PD_BUILD_OP(jx_positive, .inputs = {"X", "Y"}, .outputs = {"Out"}, .kernel = positive,
            .infer_dtype = positive_dtype);

/* Out = X, or a kernel error when asked for one. */
static void check(pd_kernel_ctx *ctx)
{
    PD_CHECK(!pd_attr_bool(ctx, 0), "asked to fail, code %d", 42);
    pd_set_output(ctx, 0, pd_input(ctx, 0));
}
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
static void opt_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, pd_dtype(pd_input(ctx, 0)));
}
PD_BUILD_OP(jx_opt, .inputs = {"X", PD_OPTIONAL("Y")}, .outputs = {"Out"}, .kernel = opt,
            .infer_shape = opt_shape, .infer_dtype = opt_dtype);

PD_BUILD_OP(jx_check, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"fail: bool = false"},
            .kernel = check);

/* Out (int64, 2 items): the address of Out's own memory as the kernel got it (pd_output), and
 * that of X: zero-copy shows as the addresses of the jax arrays' buffers. */
static void where(pd_kernel_ctx *ctx)
{
    int64_t *o = pd_data(pd_output(ctx, 0));
    o[0] = (int64_t)(intptr_t)o;
    o[1] = (int64_t)(intptr_t)pd_data(pd_input(ctx, 0));
}
static void where_shape(pd_kernel_ctx *ctx)
{
    int64_t two = 2;
    pd_set_output_shape(ctx, 0, 1, &two);
}
static void where_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_INT64); }
PD_BUILD_OP(jx_where, .inputs = {"X"}, .outputs = {"Out"}, .kernel = where,
            .infer_shape = where_shape, .infer_dtype = where_dtype);
"""


@pytest.fixture(scope="module")
def pj(pdext):
    import pdext.jax

    return pdext.jax


@pytest.fixture(scope="module")
def jrelu(pdext, pj):
    return pj.register(pdext.load("relu", [str(RELU)]))


@pytest.fixture(scope="module")
def jconcat(pdext, pj):
    return pj.register(pdext.load("concat", [str(CONCAT)]))


@pytest.fixture(scope="module")
def jpy(pdext, pj):
    return pj.register(pdext.load("py_ops", [str(PY_OPS)]))


@pytest.fixture(scope="module")
def jinline(pdext, pj):
    return pj.register(pdext.load_inline("jx_ops", POSITIVE))


@pytest.fixture(scope="module")
def jtape(pdext, pj):
    return pj.register(pdext.load("tape_ops", [str(TAPE_OPS)]))


def rand(shape, dtype=np.float32, seed=0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


# --- calls, eager and jitted ------------------------------------------------------------------


def test_relu_eager_and_jit_match_jax_nn_relu(jrelu):
    x = rand((3, 5))
    ref = jax.nn.relu(x)
    np.testing.assert_array_equal(jrelu.custom_relu(x), ref)
    np.testing.assert_array_equal(jax.jit(jrelu.custom_relu)(x), ref)


def test_relu_inside_a_jitted_computation(jrelu):
    f = jax.jit(lambda x: jnp.sin(jrelu.custom_relu(x * 2.0)) + 1.0)
    x = rand((64,), np.float64)
    np.testing.assert_allclose(f(x), jnp.sin(jax.nn.relu(x * 2.0)) + 1.0, rtol=1e-12)


def test_relu_float64_and_empty(jrelu):
    x = rand((4, 0, 3), np.float64)
    assert jax.jit(jrelu.custom_relu)(x).shape == (4, 0, 3)
    y = rand((7,), np.float64)
    np.testing.assert_array_equal(jrelu.custom_relu(y), jax.nn.relu(y))


def test_concat_vector_input_and_attr(jconcat):
    a, b, c = rand((2, 3), seed=1), rand((2, 4), seed=2), rand((2, 1), seed=3)
    ref = jnp.concatenate([a, b, c], axis=1)
    np.testing.assert_array_equal(jconcat.custom_concat([a, b, c], axis=1), ref)
    f = jax.jit(lambda xs: jconcat.custom_concat(xs, axis=-1))
    np.testing.assert_array_equal(f([a, b, c]), ref)
    np.testing.assert_array_equal(
        jconcat.custom_concat([a, a], axis=0), jnp.concatenate([a, a], axis=0)
    )


def test_several_outputs_come_back_as_a_tuple(jtape):
    x = rand((5,), np.float64, 1)
    a, b = jax.jit(jtape.tp_split)(x)
    np.testing.assert_array_equal(a, x)
    np.testing.assert_allclose(b, 3 * x)


def test_vector_output_is_a_list(jpy):
    x = jnp.arange(12, dtype=jnp.float64)
    parts = jax.jit(lambda x: jpy.py_split(x, parts=3))(x)
    assert isinstance(parts, list) and len(parts) == 3
    for got, want in zip(parts, jnp.split(x, 3)):
        np.testing.assert_array_equal(got, want)


def test_optional_input(jinline):
    x, y = rand((4,), np.float64, 1), rand((4,), np.float64, 2)
    np.testing.assert_allclose(jax.jit(jinline.jx_opt)(x, y), x + y)
    np.testing.assert_allclose(jax.jit(jinline.jx_opt)(x), x + 100.0)
    np.testing.assert_allclose(jinline.jx_opt(X=x, Y=y), x + y)


def test_attrs_typed_from_the_declaration_with_defaults(jpy):
    x = jnp.zeros((1,))
    out = jax.jit(lambda x: jpy.py_attrs(x, b=True, i64=1 << 40, s="hello", ints=[3, 4, 5]))(x)
    want = [1, 7, 0.5, -2.25, float(1 << 40), 5, 12, 0.5, 0, 0]
    np.testing.assert_array_equal(out, np.array(want))
    out = jpy.py_attrs(x, b=False, i=-3, f=1.25, d=3.5, i64=2, floats=[0.25, 0.5], i64s=[10, 20],
                       strs=["four", "", "x"])
    np.testing.assert_array_equal(out, np.array([0, -3, 1.25, 3.5, 2, 3, 3, 0.75, 30, 3 + 4]))


# --- shapes at trace time -----------------------------------------------------------------------


def test_kernel_reads_and_writes_xlas_own_buffers(jinline):
    # zero-copy both ways: the kernel's input is the operand's buffer, and its output (pd_output)
    # is XLA's result buffer itself, not memory copied into it afterwards
    x = jnp.arange(4.0)
    out = jinline.jx_where(x)
    assert int(out[0]) == out.unsafe_buffer_pointer()
    assert int(out[1]) == x.unsafe_buffer_pointer()


def test_result_shapes_come_from_the_ops_inference(jconcat):
    a, b = jax.ShapeDtypeStruct((2, 3), jnp.float32), jax.ShapeDtypeStruct((2, 5), jnp.float32)
    out = jax.eval_shape(lambda a, b: jconcat.custom_concat([a, b], axis=1), a, b)
    assert out.shape == (2, 8) and out.dtype == jnp.float32


def test_data_dependent_output_refused_under_jit_eager_too(jinline, jpy):
    x = jnp.array([1.0, -2.0, 3.0])
    with pytest.raises(ValueError, match="jx_positive: output 'Out' has no shape.*depends on"):
        jax.jit(jinline.jx_positive)(x, x)
    with pytest.raises(ValueError, match="depends on the data"):
        jinline.jx_positive(x, x)
    # two inputs, no infer function: the runner cannot tell which one Sum mirrors
    with pytest.raises(ValueError, match="py_pair: output 'Sum' has no shape"):
        jax.jit(jpy.py_pair)(x, x)


# --- errors -------------------------------------------------------------------------------------


def test_kernel_error_raised_by_jax_with_pdext_message(jinline):
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(jax.jit(jinline.jx_check)(x), x)
    f = jax.jit(lambda x: jinline.jx_check(x, fail=True))
    with pytest.raises(Exception, match=r"jx_check: asked to fail, code 42 \[.*jx_ops.*:\d+\]"):
        jax.block_until_ready(f(x))
    with pytest.raises(Exception, match=r"jx_check: asked to fail, code 42"):
        jax.block_until_ready(jinline.jx_check(x, fail=True))


def test_dtype_outside_the_dispatch_is_an_error_naming_the_op(jrelu):
    x = jnp.array([1, -2, 3], dtype=jnp.int32)
    with pytest.raises(Exception, match="relu_forward.*int32"):
        jax.block_until_ready(jax.jit(jrelu.custom_relu)(x))


def test_unknown_and_wrongly_typed_attrs_are_type_errors(jconcat, jpy):
    a = jnp.zeros((2, 2))
    with pytest.raises(TypeError, match=r"unknown attr 'axes'.*'axis'"):
        jconcat.custom_concat([a, a], axes=1)
    with pytest.raises(TypeError, match=r"attr 'axis' is declared 'axis: int64_t'.*float"):
        jconcat.custom_concat([a, a], axis=1.5)
    jconcat.custom_concat([a, a], axis=1)  # cached eager call: 1.0 == 1 must not hit it
    with pytest.raises(TypeError, match=r"attr 'axis' is declared 'axis: int64_t'.*float"):
        jconcat.custom_concat([a, a], axis=1.0)
    with pytest.raises(ValueError, match=r"attr 'axis' \(int64_t\) is missing"):
        jconcat.custom_concat([a, a])
    with pytest.raises(TypeError, match=r"attr 'strs' is declared .*std::string> = \{\}', got int"):
        jpy.py_attrs(a, b=True, i64=1, strs=[1])


def test_input_on_another_device_is_refused(jrelu, pj):
    others = [d for d in jax.devices() if d.platform not in pj._platforms()]
    if not others:
        pytest.skip("no device of a platform pdext.jax does not run on: this jax has %s"
                    % ", ".join(sorted({d.platform for d in jax.devices()})))
    x = jax.device_put(jnp.ones(3), others[0])
    with pytest.raises(ValueError, match="custom_relu\\(\\): input 'X' is on .*CPU"):
        jrelu.custom_relu(x)


def test_input_on_a_platform_the_front_does_not_run_on_is_refused(jrelu, pj, monkeypatch):
    # The check itself, on this CPU-only machine: a front that ran on GPUs only refuses a
    # CPU array eagerly, naming the op, the input, the array's platform and the supported ones.
    monkeypatch.setattr(pj, "_platforms", lambda: ("gpu",))
    message = r"custom_relu\(\): input 'X' is on cpu; pdext.jax runs ops on GPU"
    with pytest.raises(ValueError, match=message):
        jrelu.custom_relu(jnp.ones(3))
    with pytest.raises(ValueError, match=r"input 'X' is on cpu"):
        jax.grad(lambda v: jrelu.custom_relu(v).sum())(jnp.ones(3))


def test_relu_on_a_cuda_gpu_runs_on_xlas_stream(pdext, pj):
    # The handler's CUDA entry, with jaxlib's GPU plug-in on a machine with a GPU: relu.c with
    # its CUDA launchers, eagerly, jitted and differentiated, against jax.nn.relu on the GPU.
    if not pj._gpu_present():
        pytest.skip("no CUDA GPU in this jax (needs jaxlib's CUDA plug-in and a GPU; this jax "
                    "has %s)" % ", ".join(sorted({d.platform for d in jax.devices()})))
    ops = pdext.load("relu_gpu", [str(RELU), str(RELU.parent / "relu_cuda.cu")])
    jg = pj.register(ops)
    gpu = jax.devices("cuda")[0]
    x = jax.device_put(rand((1000, 33)), gpu)
    y = jg.custom_relu(x)
    assert {d.platform for d in y.devices()} == {"gpu"}
    np.testing.assert_array_equal(y, jax.nn.relu(x))
    np.testing.assert_array_equal(jax.jit(lambda v: jg.custom_relu(v) * 2)(x), 2 * jax.nn.relu(x))
    g = jax.grad(lambda v: jg.custom_relu(v).sum())(x)
    np.testing.assert_array_equal(g, (x > 0).astype(np.float32))


def test_op_without_grad_op_under_grad_names_it(jtape):
    with pytest.raises(TypeError, match="tp_nograd has no grad op"):
        jax.grad(lambda x: jtape.tp_nograd(x).sum())(jnp.ones(3))


def test_older_jaxlib_ffi_api_refused_naming_both(pdext, pj, monkeypatch):
    built = pj._built_version(pj._load_handler()[0])
    assert built == pj.ffi_api_version()  # built against the jaxlib in use
    older = (built[0], built[1] - 1) if built[1] > 0 else (built[0] - 1, 99)
    # a jaxlib whose c_api.h says an older version than the handler's: register refuses it
    monkeypatch.setattr(pj, "_handler", None)
    monkeypatch.setattr(pj, "ffi_api_version", lambda include_dir=None: older)
    message = r"XLA FFI API is %d\.%d, older than %d\.%d" % (older + built)
    with pytest.raises(RuntimeError, match=message):
        pj.register(pdext.load("relu", [str(RELU)]))


# --- gradients ----------------------------------------------------------------------------------


def test_relu_grad_check_grads(jrelu):
    x = jnp.asarray([-1.5, -0.3, 0.4, 2.0, 3.1], dtype=jnp.float64)  # away from the kink
    check_grads(jrelu.custom_relu, (x,), order=1, modes=["rev"])
    g = jax.grad(lambda x: jrelu.custom_relu(x).sum())(x)
    np.testing.assert_array_equal(g, jax.grad(lambda x: jax.nn.relu(x).sum())(x))


def test_relu_grad_under_jit(jrelu):
    x = rand((10,), np.float32)
    g = jax.jit(jax.grad(lambda x: (jrelu.custom_relu(x) ** 2).sum()))(x)
    np.testing.assert_allclose(g, 2 * jax.nn.relu(x), rtol=1e-6)


def test_concat_check_grads(jconcat):
    a, b = rand((2, 3), np.float64, 1), rand((2, 2), np.float64, 2)
    check_grads(lambda a, b: jconcat.custom_concat([a, b], axis=1), (a, b), order=1, modes=["rev"])
    check_grads(
        jax.jit(lambda a, b: jconcat.custom_concat([a, b], axis=0)),
        (a, rand((4, 3), np.float64, 3)),
        order=1,
        modes=["rev"],
    )


def test_double_grad_op_check_grads_order_2(jtape):
    x = rand((6,), np.float64)
    check_grads(jtape.tp_square, (x,), order=2, modes=["rev"])
    check_grads(lambda x: jtape.tp_scale(x, scale=3.0), (x,), order=2, modes=["rev"])


def test_check_grads_catches_a_wrong_grad_op(jtape):
    x = rand((6,), np.float64)
    with pytest.raises(AssertionError):
        check_grads(jtape.tp_bad_square, (x,), order=1, modes=["rev"])


def test_vjp_of_two_outputs_and_vector_inputs(jtape):
    x = rand((4,), np.float64)
    check_grads(jtape.tp_split, (x,), order=1, modes=["rev"])
    xs = [rand((3,), np.float64, k) for k in range(3)]
    check_grads(lambda a, b, c: jtape.tp_addn([a, b, c]), tuple(xs), order=1, modes=["rev"])


# --- vmap ---------------------------------------------------------------------------------------


def test_vmap_sequential_relu_and_concat(jrelu, jconcat):
    x = rand((4, 3, 2))
    np.testing.assert_array_equal(jax.vmap(jrelu.custom_relu)(x), jax.nn.relu(x))
    a, b = rand((5, 2, 3), seed=1), rand((5, 2, 1), seed=2)
    got = jax.jit(jax.vmap(lambda a, b: jconcat.custom_concat([a, b], axis=1)))(a, b)
    np.testing.assert_array_equal(got, jnp.concatenate([a, b], axis=2))


def test_vmap_of_grad(jrelu):
    x = rand((3, 4), np.float64)
    g = jax.vmap(jax.grad(lambda v: jrelu.custom_relu(v).sum()))(x)
    np.testing.assert_array_equal(g, (x > 0).astype(np.float64))


def custom_calls(f, *args):
    """How many custom calls the jitted f lowers to, and whether they sit in a loop."""
    text = jax.jit(f).lower(*args).as_text()
    return text.count("stablehlo.custom_call"), "while" in text


# Two ops that declare PD_OP_LEADING_BATCH: an elementwise add of two inputs of one shape (no
# broadcasting of its own), and one declaring it without any input, which the runtime refuses.
BATCHED = r"""
#include "extension.h"
static void add(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *y = pd_input(ctx, 1);
    PD_CHECK(pd_numel(x) == pd_numel(y), "X and Y differ in size");
    const float *a = pd_data(x), *b = pd_data(y);
    float *o = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0; i < pd_numel(x); ++i)
        o[i] = a[i] + b[i];
}
PD_BUILD_OP(jb_add, .inputs = {"X", "Y"}, .outputs = {"Out"}, .kernel = add,
            .flags = PD_OP_OUTPUTS_LIKE_INPUT0 | PD_OP_LEADING_BATCH);
"""
NO_INPUT_BATCH = r"""
#include "extension.h"
static void none(pd_kernel_ctx *ctx) { (void)ctx; }
PD_BUILD_OP(jb_none, .outputs = {"Out"}, .kernel = none,
            .flags = PD_OP_LEADING_BATCH);
"""


def test_vmap_follows_the_declared_leading_batch(pdext, pj, jrelu, jconcat):
    # relu.c declares PD_OP_LEADING_BATCH on relu and its grad op: one call per batch
    x = rand((6, 5))
    np.testing.assert_array_equal(jax.vmap(jrelu.custom_relu)(x), jax.nn.relu(x))
    assert custom_calls(jax.vmap(jrelu.custom_relu), x) == (1, False)
    grad = jax.vmap(jax.grad(lambda v: jrelu.custom_relu(v).sum()))
    np.testing.assert_array_equal(grad(x), (x > 0).astype(np.float32))
    assert custom_calls(grad, x) == (2, False)  # forward and grad op, each once
    # concat declares nothing (its axis attr counts from the front): one call per element
    a, b = rand((5, 2, 3), seed=1), rand((5, 2, 1), seed=2)
    cat = jax.vmap(lambda a, b: jconcat.custom_concat([a, b], axis=1))
    assert custom_calls(cat, a, b) == (1, True)


def test_declared_batch_broadcasts_an_unbatched_input(pdext, pj):
    jb = pj.register(pdext.load_inline("jb_ops", BATCHED))
    x, y = rand((4, 3), seed=1), rand((3,), seed=2)
    f = jax.vmap(jb.jb_add, in_axes=(0, None))
    np.testing.assert_allclose(f(x, y), x + y, rtol=1e-6)
    assert custom_calls(f, x, y) == (1, False)
    g = jax.vmap(jax.vmap(jb.jb_add), in_axes=(None, 0))  # nested, the other input batched
    ys = rand((2, 4, 3), seed=3)
    np.testing.assert_allclose(g(x, ys), x[None] + ys, rtol=1e-6)


def test_declared_batch_without_inputs_is_refused(pdext):
    with pytest.raises(Exception, match="jb_none.*PD_OP_LEADING_BATCH but declares no inputs"):
        pdext.load_inline("jb_none_ops", NO_INPUT_BATCH)


def test_vmap_keyword_overrides_the_declaration(pdext, pj):
    ops = pdext.load("relu", [str(RELU)])
    x = rand((6, 5))
    looped = pj.register(ops, vmap={"custom_relu": "sequential"})
    np.testing.assert_array_equal(jax.vmap(looped.custom_relu)(x), jax.nn.relu(x))
    assert custom_calls(jax.vmap(looped.custom_relu), x) == (1, True)
    expand = pj.register(ops, vmap={"custom_relu": "expand_dims"})
    np.testing.assert_array_equal(jax.vmap(expand.custom_relu)(x), jax.nn.relu(x))
    assert custom_calls(jax.vmap(expand.custom_relu), x) == (1, False)
    with pytest.raises(ValueError, match="vmap method 'elementwise' of custom_relu is none of"):
        pj.register(ops, vmap={"custom_relu": "elementwise"})
    with pytest.raises(ValueError, match="vmap names 'nope', which is no op of relu"):
        pj.register(ops, vmap={"nope": "expand_dims"})


# --- ops from the other ways in: the Paddle front, MindSpore AOT, the training example ----------


def test_paddle_front_relu_jit_and_grad(pdext, pj):
    ops = pdext.load("paddle_relu", [str(ROOT / "examples" / "paddle" / "custom_relu_op.cc")])
    jops = pj.register(ops)
    x = jnp.asarray([-1.5, -0.25, 0.5, 2.0], dtype=jnp.float64)
    np.testing.assert_array_equal(jax.jit(jops.custom_relu)(x), jax.nn.relu(x))
    check_grads(jops.custom_relu, (x,), order=1, modes=["rev"])
    xs = jnp.stack([x, -x, 2 * x])  # vmap: declared nothing, so one call per row
    np.testing.assert_array_equal(jax.vmap(jops.custom_relu)(xs), jax.nn.relu(xs))


def test_aot_add(pdext, pj):
    spec = "%s:CustomAdd" % (ROOT / "tests" / "ops" / "aot_kernels.cc")
    add = pdext.aot(spec, out_shape=[4], out_dtype=np.float32, n_inputs=2)
    jadd = pj.register(add)
    a, b = rand((4,), seed=1), rand((4,), seed=2)
    fn = getattr(jadd, add.op.__name__)
    np.testing.assert_array_equal(jax.jit(fn)(a, b), a + b)
    rows = rand((3, 4), seed=3)  # vmap over the first input, b shared
    np.testing.assert_array_equal(jax.vmap(fn, in_axes=(0, None))(rows, b), rows + b)
    with pytest.raises(TypeError, match="has no op yet: pass n_inputs="):
        pj.register(pdext.aot(spec, out_shape=[4], out_dtype=np.float32))


def test_training_step_with_pdext_ops_matches_jax(pdext, pj):
    train = pj.register(pdext.load("train_ops", [str(ROOT / "examples" / "train" / "train_ops.c")]))
    relu = pj.register(pdext.load("relu", [str(RELU)]))
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((8, 5)))
    label = jnp.asarray(rng.integers(0, 3, 8), dtype=jnp.int64)
    params = (jnp.asarray(rng.standard_normal((5, 3))), jnp.zeros(3))

    def loss_pdext(p):
        h = relu.custom_relu(train.train_linear(x, p[0], p[1]))
        return train.train_softmax_xent(h, label)[0]

    def loss_jax(p):
        h = jax.nn.relu(x @ p[0] + p[1])
        return -jnp.mean(jax.nn.log_softmax(h)[jnp.arange(8), label])

    def training_step(loss):
        def step(p):
            value, g = jax.value_and_grad(loss)(p)
            return value, jax.tree_util.tree_map(lambda w, d: w - 0.5 * d, p, g)

        return jax.jit(step)

    step_pd, step_jx = training_step(loss_pdext), training_step(loss_jax)
    p_pd = p_jx = params
    for _ in range(5):
        (v_pd, p_pd), (v_jx, p_jx) = step_pd(p_pd), step_jx(p_jx)
        np.testing.assert_allclose(v_pd, v_jx, rtol=1e-10)
    for a, b in zip(p_pd, p_jx):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    check_grads(loss_pdext, (params,), order=1, modes=["rev"])
    # vmap of the training ops over a batch of weight sets, against JAX's own layer
    ws = jnp.asarray(rng.standard_normal((4, 5, 3)))
    got = jax.vmap(lambda w: relu.custom_relu(train.train_linear(x, w, params[1])))(ws)
    np.testing.assert_allclose(got, jax.nn.relu(jnp.einsum("nk,bkm->bnm", x, ws)), rtol=1e-12)
    # the integer Label gets no gradient (float0 zeros), asked for or not
    loss = lambda logits, lab: train.train_softmax_xent(logits, lab)[0]  # noqa: E731
    g_label = jax.grad(loss, argnums=1, allow_int=True)(jnp.ones((8, 3)), label)
    assert g_label.dtype == jax.dtypes.float0 and g_label.shape == (8,)


def test_example_training_step_runs_as_printed():
    import os
    import subprocess
    import sys

    script = ROOT / "examples" / "jax" / "train_jax.py"
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=dict(os.environ), timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    readme = (ROOT / "examples" / "jax" / "README.md").read_text()
    for line in out.stdout.splitlines():
        assert "# " + line in readme, line


def test_bench_rows_in_smoke_mode():
    # bench/run.sh reads these rows (bench_util.h's format); --smoke: tiny sizes, no timing
    import os
    import subprocess
    import sys

    script = ROOT / "bench" / "jax_bench.py"
    out = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True,
                         text=True, env=dict(os.environ), timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    assert [r[1] for r in rows] == ["jax_relu_call", "jax_relu_64mib", "jax_relu_64mib_jax"]
    for r in rows:
        assert r[0] == "ROW" and len(r) == 10, r
        pd, base, ratio = (float(v) for v in r[3:6])
        assert pd > 0 and base > 0 and abs(ratio - pd / base) <= 1e-4 * ratio, r
        assert r[7] in ("true", "false", "null"), r


def test_readme_jax_section_runs_as_printed():
    import os
    import subprocess
    import sys

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## JAX", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ), timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    printed = [line.split("# ", 1)[1].strip() for line in code.splitlines() if "print(" in line]
    assert out.stdout.split("\n")[: len(printed)] == printed


def test_handler_refuses_a_call_for_another_op(jrelu, pj):
    name, index = pj._target(jrelu.custom_relu.op)
    call = jax.ffi.ffi_call(name, jax.ShapeDtypeStruct((3,), jnp.float32))
    x = jnp.ones(3, jnp.float32)
    counts = dict(pd_in=np.array([1], np.int32), pd_out=np.array([1], np.int32))
    other = "the call is for op 'custom_concat', but pdext.jax registered 'custom_relu'"
    with pytest.raises(Exception, match=other):
        jax.block_until_ready(call(x, pd_op=np.int64(index), pd_name="custom_concat", **counts))
    with pytest.raises(Exception, match="lacks pdext.jax's attributes"):
        jax.block_until_ready(call(x, pd_op=np.int64(index), **counts))
    with pytest.raises(Exception, match="custom_relu: the call has 1 operands and 1 results"):
        jax.block_until_ready(call(x, pd_op=np.int64(index), pd_name="custom_relu",
                                   pd_in=np.array([2], np.int32), pd_out=np.array([1], np.int32)))


def test_eager_calls_reuse_one_traced_call_per_attrs(jconcat, pj, monkeypatch):
    traces = []
    run = pj._run
    monkeypatch.setattr(pj, "_run", lambda *a, **k: traces.append(1) or run(*a, **k))
    a = rand((2, 2), seed=7)
    for _ in range(3):
        got = jconcat.custom_concat([a, a], axis=0)
        np.testing.assert_array_equal(got, jnp.concatenate([a, a]))
    assert len(traces) == 1
    jconcat.custom_concat([a, a], axis=1)  # other attrs: traced once more
    assert len(traces) == 2


def test_many_independent_calls_in_one_computation(jrelu, jconcat):
    # XLA may run independent custom calls at once: the handler and runner are thread-safe
    xs = [rand((257,), seed=k) for k in range(16)]
    f = jax.jit(
        lambda xs: jconcat.custom_concat(
            [jrelu.custom_relu(x * (k + 1)) for k, x in enumerate(xs)], axis=0
        )
    )
    want = jnp.concatenate([jax.nn.relu(x * (k + 1)) for k, x in enumerate(xs)])
    for _ in range(3):
        np.testing.assert_array_equal(f(xs), want)


def test_attr_text_past_the_handlers_room_is_an_error(jpy):
    x = jnp.zeros((1,))
    ok = jpy.py_attrs(x, b=True, i64=1, s="y" * 1000, strs=["ab"] * 100)
    assert ok[5] == 1000 and ok[9] == 100 + 2
    with pytest.raises(Exception, match="attribute 's': the attrs' names and strings of one call"):
        jax.block_until_ready(jpy.py_attrs(x, b=True, i64=1, s="y" * 5000))


def test_infer_binding_refuses_bad_descriptions(pdext, jconcat, jrelu):
    infer = pdext._pdext.infer
    relu, concat = jrelu.custom_relu.op, jconcat.custom_concat.op
    assert infer(relu, [("float64", (2, 3))]) == ([("float64", (2, 3))], {})
    assert infer(concat, [[("float32", (2, 3)), ("float32", (2, 1))]], {"axis": 1}) == (
        [("float32", (2, 4))],
        {"axis": 1},
    )
    with pytest.raises(TypeError, match="has dtype 'float128', which pdext does not know"):
        infer(relu, [("float128", (2,))])
    with pytest.raises(TypeError, match="input 'X' must be a list"):
        infer(concat, [("float32", (2,))], {"axis": 0})
    with pytest.raises(TypeError, match="2 inputs described, the op declares 1"):
        infer(relu, [None, None])
    with pytest.raises(ValueError, match="input 'X' is missing"):
        infer(relu, [None])
    with pytest.raises(TypeError, match="expected a pdext op"):
        infer(len, [])


def test_grad_op_bound_by_its_published_binding(pdext, pj, gbops):
    # gb_mul_grad declares Out, Out@GRAD, Y, X and returns Y@GRAD, X@GRAD: the custom_vjp binds
    # them through grad_inputs / grad_outputs; check_grads compares with finite differences.
    jg = pj.register(gbops)
    rng = np.random.default_rng(5)
    x, y = (jnp.asarray(rng.uniform(0.5, 2.0, (3, 2))) for _ in range(2))
    check_grads(jg.gb_mul, (x, y), order=1, modes=["rev"])
    gx, gy = jax.grad(lambda a, b: jg.gb_mul(a, b).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 2 * x * y, rtol=1e-12)
    np.testing.assert_allclose(gy, x * x, rtol=1e-12)
