"""Real-Paddle conformance: sources written against Paddle's custom-op API
(tests/paddle_conformance/: Paddle's attr rules, and the API functions of Paddle's
tensor_compat.h / api.h that pdext's Paddle front implements) are built by real Paddle
(paddle.utils.cpp_extension.load) and by pdext (pdext.load), both run on the same inputs, and
every output of every op is compared. Paddle compiles the two sources into one module, once per
run: the file takes about five minutes on two shared cores, most of it Paddle's build."""

import numpy as np
import pytest

from conftest import require_framework, ROOT

paddle = require_framework("paddle")

SOURCES = [str(ROOT / "tests" / "paddle_conformance" / f)
           for f in ("attrs_op.cc", "api_op.cc")]


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    from paddle.utils.cpp_extension import load

    return load(name="pdext_conformance", sources=SOURCES,
                build_directory=str(tmp_path_factory.mktemp("paddle_build")))


@pytest.fixture(scope="module")
def ours(pdext):
    return pdext.load("paddle_conformance", SOURCES)


def outputs(result):
    """A list of numpy arrays from either side's result."""
    if not isinstance(result, (list, tuple)):
        result = [result]
    return [r.numpy() if hasattr(r, "numpy") else np.asarray(r) for r in result]


def compare(real, ours, op, inputs, attrs=(), exact=False):
    want = outputs(getattr(real, op)(*[paddle.to_tensor(x) for x in inputs], *attrs))
    got = outputs(getattr(ours, op)(*inputs, *attrs))
    assert len(got) == len(want), op
    for i, (g, w) in enumerate(zip(got, want)):
        what = "%s output %d" % (op, i)
        assert g.dtype == w.dtype, "%s: dtype %s, Paddle's %s" % (what, g.dtype, w.dtype)
        assert g.shape == w.shape, "%s: shape %s, Paddle's %s" % (what, g.shape, w.shape)
        if exact or not np.issubdtype(w.dtype, np.floating):
            np.testing.assert_array_equal(g, w, err_msg=what)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, err_msg=what)
    return got


ATTRS = (True, 10, 3.5, 10000000000, "StrAttr", [10, 10, 10], [3.25, 0.5], [7, 8, 9],
         ["ab", "cde"])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attrs_reach_the_kernel_and_the_infer_functions_as_paddle_hands_them(real, ours, dtype):
    x = np.linspace(-1, 1, 6, dtype=dtype).reshape(2, 3)
    out, shaped = compare(real, ours, "conf_attrs", [x], ATTRS, exact=True)
    assert shaped.shape == (10, 3, 2)
    assert out.dtype == dtype


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(26)
    x = rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
    y = rng.uniform(-2.0, 2.0, (3, 4)).astype(np.float32)
    y[0, 0] = 1.75  # not a .5 tie: rounding rules differ there only
    return x, y


@pytest.mark.parametrize("op", ["conf_unary", "conf_unary2", "conf_math", "conf_methods",
                                "conf_methods2"])
def test_math_functions_match_paddles(real, ours, xy, op):
    compare(real, ours, op, list(xy))


@pytest.mark.parametrize("op", ["conf_unary", "conf_math"])
def test_math_functions_in_float64(real, ours, xy, op):
    compare(real, ours, op, [v.astype(np.float64) for v in xy])


@pytest.mark.parametrize("op", ["conf_index", "conf_index2"])
def test_index_functions_match_paddles(real, ours, op):
    rng = np.random.default_rng(7)
    x = rng.permutation(12).astype(np.float32).reshape(3, 4) - 5.5  # distinct: no sort ties
    index = np.array([2, 0, 2], dtype=np.int64)
    compare(real, ours, op, [x, index], exact=True)


def test_an_index_out_of_range_is_an_op_error_naming_the_function(ours, pdext):
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(pdext.OpError, match=r"conf_index: gather: index 3 is out of range"):
        ours.conf_index(x, np.array([3], dtype=np.int64))
