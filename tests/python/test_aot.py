"""pdext.aot: MindSpore AOT kernels (tests/ops/aot_kernels.cc, examples/aot/scale_cumsum.cc)
called from Python with MindSpore's keywords, compiled from source through the JIT's cache or
loaded prebuilt, with attrs, infer functions, several outputs and every failure named."""

import numpy as np
import pytest

from conftest import require_framework, ROOT

KERNELS = ROOT / "tests" / "ops" / "aot_kernels.cc"
SCALE_CUMSUM = ROOT / "examples" / "aot" / "scale_cumsum.cc"


def spec(fn, path=KERNELS):
    return "%s:%s" % (path, fn)


def test_add_from_source_returns_a_callable(pdext):
    add = pdext.aot(spec("CustomAdd"), out_shape=[4], out_dtype=np.float32)
    a = np.arange(4, dtype=np.float32)
    b = np.full(4, 10, np.float32)
    out = add(a, b)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, a + b)
    assert add.__name__ == "CustomAdd"


def test_out_shape_and_dtype_default_to_the_first_input(pdext):
    add = pdext.aot(spec("CustomAdd"))
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(add(x, x), np.full((2, 3), 2, np.float32))


def test_out_shape_as_a_function_of_the_input_shapes(pdext):
    add = pdext.aot(spec("CustomAdd"), out_shape=lambda x, _: x, out_dtype="float32")
    for n in (3, 5):
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(add(x, x), 2 * x)


def test_attr_values_are_defaults_a_call_may_override(pdext):
    affine = pdext.aot(spec("CustomAffine"), scale=2.0, offset=1, mode="pos")
    x = np.array([1.0, -2.0], np.float32)
    np.testing.assert_array_equal(affine(x), [3.0, -3.0])
    np.testing.assert_array_equal(affine(x, scale=3.0, mode="neg"), [-4.0, 5.0])


def test_infer_functions_give_shape_and_dtype(pdext):
    cat = pdext.aot(spec("CustomConcat"))
    out = cat(np.array([1, 2], np.int64), np.array([3], np.int64))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [1, 2, 3])


def test_several_outputs_come_back_as_a_tuple(pdext):
    split = pdext.aot(spec("CustomSplit"), n_outputs=2)
    x = np.array([[1.5, 2.0], [3.0, 4.5]], np.float32)
    sums, ints = split(x)
    np.testing.assert_array_equal(sums, [3.5, 7.5])
    assert ints.dtype == np.int64
    np.testing.assert_array_equal(ints, [[1, 2], [3, 4]])


def test_example_kernel_with_init_and_workspace(pdext):
    op = pdext.aot(spec("ScaleCumsum", SCALE_CUMSUM), n_inputs=1, scale=2.0, bias=0.5,
                   reverse=False)
    x = np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(op(x), 2 * np.cumsum(x) + 0.5)
    np.testing.assert_array_equal(op(x, reverse=True), 2 * np.cumsum(x[::-1])[::-1] + 0.5)


def test_prebuilt_library(pdext):
    import glob
    import os

    pdext.aot(spec("CustomAdd"), n_inputs=2)
    # The library compiled for the source spec serves as a prebuilt library.
    libs = glob.glob(os.path.join(os.environ["PDEXT_CACHE_DIR"], "**", "*aot_kernels*.so"),
                     recursive=True)
    assert libs, "the source spec left no library in the cache"
    add2 = pdext.aot("%s:CustomAdd" % libs[0], n_inputs=2)
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(add2(x, x), [2, 2, 2])


def test_torch_tensors_in_and_out(pdext):
    torch = require_framework("torch")
    add = pdext.aot(spec("CustomAdd"))
    out = add(torch.ones(3), torch.ones(3))
    assert isinstance(out, torch.Tensor) and out.tolist() == [2.0, 2.0, 2.0]


def test_kernel_error_code_is_an_op_error_naming_the_function(pdext):
    add = pdext.aot(spec("CustomAdd"))
    with pytest.raises(pdext.OpError, match="CustomAdd"):
        add(np.ones(2, np.float64), np.ones(2, np.float64))  # returns 2: wrong dtype


def test_missing_function_names_the_similar_exported_ones(pdext):
    with pytest.raises(FileNotFoundError, match="exports no function 'CustomAd'.*CustomAdd"):
        pdext.aot(spec("CustomAd"), n_inputs=1)


def test_missing_library(pdext, tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.so"):
        pdext.aot("%s:F" % (tmp_path / "nope.so"), n_inputs=1)


def test_source_that_does_not_build_is_a_build_error(pdext, tmp_path):
    src = tmp_path / "broken.cc"
    src.write_text('extern "C" int F( { return 0; }\n')
    with pytest.raises(pdext.BuildError):
        pdext.aot("%s:F" % src, n_inputs=1, build_directory=tmp_path / "b")


@pytest.mark.parametrize(
    "kwargs, exc, text",
    [
        (dict(out_shape=[2, -1]), ValueError, "list of ints >= 0"),
        (dict(out_shape=[1] * 9), ValueError, "at most 8"),
        (dict(out_shape=5), TypeError, "out_shape must be a list"),
        (dict(out_dtype="float128"), ValueError, "'float128', which is not a pdext dtype"),
        (dict(out_shape=[[1], [2]], out_dtype=["float32"] * 3), ValueError, "names 2 outputs"),
        (dict(func_type="pyfunc"), ValueError, "func_type='aot'"),
        (dict(scale=object()), TypeError, "attr 'scale' is a object"),
        (dict(input_names=["a"], n_inputs=2), ValueError, "1 input_names for 2 inputs"),
    ],
)
def test_bad_arguments(pdext, kwargs, exc, text):
    kwargs.setdefault("n_inputs", 2)
    with pytest.raises(exc, match=text):
        pdext.aot(spec("CustomAdd"), **kwargs)


def test_spec_without_a_function(pdext):
    with pytest.raises(ValueError, match="path/lib.so:Func"):
        pdext.aot(str(KERNELS))


def test_wrong_input_count(pdext):
    add = pdext.aot(spec("CustomAdd"), n_inputs=2)
    with pytest.raises(TypeError, match="takes 2 inputs but 1 were given"):
        add(np.ones(2, np.float32))


def test_a_given_out_shape_skips_infer_shape(pdext):
    # As MindSpore: with out_shape given, the kernel's InferShape is not called.
    # CustomConcatInferShape throws on 2-D inputs; CustomConcat copies shape[0] items of each.
    a = np.arange(2, dtype=np.int64).reshape(2, 1)
    b = np.arange(10, 13, dtype=np.int64).reshape(3, 1)
    given = pdext.aot(spec("CustomConcat"), out_shape=[5, 1], out_dtype="int64")
    np.testing.assert_array_equal(given(a, b), np.concatenate([a, b]))
    inferred = pdext.aot(spec("CustomConcat"))
    with pytest.raises(pdext.OpError, match="CustomConcat takes 1-D inputs"):
        inferred(a, b)


def test_out_dtype_functions_answer_with_any_dtype_spelling(pdext):
    # The names of dtypes are remembered between calls: every spelling still names its dtype.
    a = np.arange(4, dtype=np.float32)
    for answer in (np.float32, np.dtype("float32"), "float32", "Float32"):
        add = pdext.aot(spec("CustomAdd"), out_shape=lambda x, _: x, out_dtype=lambda x, _: answer)
        for _ in range(2):
            out = add(a, a)
            assert out.dtype == np.float32
            np.testing.assert_array_equal(out, a + a)


@pytest.mark.parametrize("bad", ["add.cc", ":F", "add.cc:", "add.cc:1F", "add.cc:F-x"])
def test_a_spec_is_read_by_the_c_rule(pdext, bad):
    # pdext.aot reads "FILE:FUNC" with pd_aot_spec_split, as pd_aot_load and the command do:
    # what the C rule refuses is refused here before anything is compiled.
    with pytest.raises(ValueError, match="func must be"):
        pdext.aot(bad)
    assert pdext._pdext.aot_spec_split("d:i/add.cc:CustomAdd") == ("d:i/add.cc", "CustomAdd")
    assert pdext._pdext.aot_spec_split(bad) is None
    assert pdext.aot(spec("CustomAdd")).__name__ == "CustomAdd"
