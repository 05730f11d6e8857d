"""Loading: load / load_inline / load_library / CustomOpBuilder give modules of callables
with docstrings and signatures; warm loads build nothing; build failures are BuildErrors."""

import inspect
import os
import pydoc
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import RELU


def test_load_gives_one_callable_per_op_including_grad_ops(relu):
    assert callable(relu.custom_relu)
    assert callable(relu.custom_relu_grad)
    assert relu.custom_relu.__name__ == "custom_relu"
    assert relu.__file__.endswith(".so")


def test_signature_and_docstring_come_from_the_declaration(concat, pyops):
    assert str(inspect.signature(concat.custom_concat)) == "(X, axis)"
    assert str(inspect.signature(pyops.py_opt)) == "(X, Y=None)"
    doc = concat.custom_concat.__doc__
    assert 'X: list of arrays (declared "X@VECTOR")' in doc
    assert "axis: int64_t" in doc
    assert "Out: array" in doc
    doc = pyops.py_attrs.__doc__
    assert "i: int, optional" in doc and "strs: std::vector<std::string>, optional" in doc


def test_help_reads_like_a_function(concat):
    text = pydoc.render_doc(concat.custom_concat, renderer=pydoc.plaintext)
    assert "custom_concat(X, axis)" in text
    assert "Attrs:" in text


def test_ops_expose_their_declaration_as_data(relu, concat):
    assert relu.custom_relu_grad.inputs == ("X", "Out", "Out@GRAD")
    assert relu.custom_relu_grad.outputs == ("X@GRAD",)
    assert concat.custom_concat.vector_inputs == (True,)
    assert concat.custom_concat.attrs == ("axis",)


def test_load_inline_builds_from_text(pdext, tmp_path):
    src = textwrap.dedent(
        """
        #include "extension.h"
        static void k(pd_kernel_ctx *ctx) {
            const pd_tensor *x = pd_input(ctx, 0);
            pd_tensor *o = pd_empty_like(ctx, x);
            const float *a = pd_data(x);
            float *b = pd_data(o);
            for (int64_t i = 0; i < pd_numel(x); ++i) b[i] = a[i] * 3.0f;
            pd_set_output(ctx, 0, o);
        }
        PD_BUILD_OP(triple, .inputs = {"X"}, .outputs = {"Out"}, .kernel = k);
        """
    )
    ops = pdext.load_inline("inline_triple", src, build_directory=tmp_path / "b")
    np.testing.assert_array_equal(
        ops.triple(np.array([1, -2], np.float32)), np.array([3, -6], np.float32)
    )


def test_load_library_loads_a_prebuilt_module(pdext, relu):
    ops = pdext.load_library(relu.__file__)
    np.testing.assert_array_equal(
        ops.custom_relu(np.array([-1.0, 5.0], np.float32)), [0.0, 5.0]
    )


def test_custom_op_builder_has_mindspores_signature(pdext):
    ops = pdext.CustomOpBuilder("relu", [str(RELU)], backend="CPU").load()
    np.testing.assert_array_equal(ops.custom_relu(np.array([-3.0, 3.0])), [0.0, 3.0])
    with pytest.raises(ValueError, match="backend"):
        pdext.CustomOpBuilder("relu", [str(RELU)], backend="Ascend")


def test_build_failure_raises_build_error_with_the_compiler_diagnostics(pdext, tmp_path):
    with pytest.raises(pdext.BuildError) as info:
        pdext.load_inline("broken", "int f(void) { return undeclared_name; }",
                          build_directory=tmp_path / "b")
    assert "undeclared_name" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_missing_source_raises(pdext, tmp_path):
    with pytest.raises(Exception, match="nope.c"):
        pdext.load("missing", [str(tmp_path / "nope.c")], build_directory=tmp_path / "b")


def test_sources_must_be_a_list(pdext):
    with pytest.raises(TypeError, match="list of strings"):
        pdext.load("relu", str(RELU))


def test_warm_load_runs_no_build_tool(relu, tmp_path):
    # A ninja that leaves a mark: the warm load in a fresh process must not run it.
    mark = tmp_path / "ninja-ran"
    fake = tmp_path / "ninja"
    fake.write_text("#!/bin/sh\ntouch %s\nexit 1\n" % mark)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, PDEXT_NINJA=str(fake))
    code = (
        "import numpy as np, pdext\n"
        "ops = pdext.load('relu', [%r])\n"
        "print(ops.custom_relu(np.array([-1.0, 2.0]))[1])\n" % str(RELU)
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2.0"
    assert not mark.exists()


def test_verbose_load_logs_the_compiler_commands_to_stderr(pdext, tmp_path, capfd):
    src = '#include "extension.h"\nstatic void k(pd_kernel_ctx *c) { (void)c; }\n' \
          'PD_BUILD_OP(quiet_op, .inputs = {"X"}, .outputs = {"Out"}, .kernel = k);\n'
    pdext.load_inline("verbose_op", src, build_directory=tmp_path / "b", verbose=True)
    err = capfd.readouterr().err
    assert "verbose_op_0.c" in err and "-fPIC" in err
    # Warm and not verbose: nothing is printed.
    pdext.load_inline("verbose_op", src, build_directory=tmp_path / "b")
    assert capfd.readouterr().err == ""


def test_import_and_warm_load_do_not_import_numpy(relu):
    code = (
        "import sys, pdext\n"
        "ops = pdext.load('relu', [%r])\n"
        "print('numpy' in sys.modules)\n" % str(RELU)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_paddles_load_keywords(pdext, tmp_path, capfd):
    # Paddle's extra_cxx_cflags reach C++ sources only, after extra_cflags (which reach both);
    # extra_library_paths become -L at the link.
    (tmp_path / "twice.c").write_text(textwrap.dedent(
        """
        #include "extension.h"
        #if defined(PD_TEST_CXX_ONLY) || PD_TEST_BOTH != 2
        #error "a C source got a C++ flag, or missed extra_cflags"
        #endif
        static void k(pd_kernel_ctx *ctx) {
            const pd_tensor *x = pd_input(ctx, 0);
            pd_tensor *o = pd_empty_like(ctx, x);
            const float *a = pd_data(x);
            float *b = pd_data(o);
            for (int64_t i = 0; i < pd_numel(x); ++i) b[i] = a[i] * PD_TEST_BOTH;
            pd_set_output(ctx, 0, o);
        }
        PD_BUILD_OP(c_twice, .inputs = {"X"}, .outputs = {"Out"}, .kernel = k);
        """))
    (tmp_path / "thrice.cc").write_text(textwrap.dedent(
        """
        #include "paddle/extension.h"
        #if PD_TEST_CXX_ONLY != 3 || PD_TEST_BOTH != 2
        #error "a C++ source missed extra_cxx_cflags or extra_cflags"
        #endif
        std::vector<paddle::Tensor> Thrice(const paddle::Tensor &x) {
            return {x * static_cast<double>(PD_TEST_CXX_ONLY)};
        }
        PD_BUILD_OP(cxx_thrice).Inputs({"X"}).Outputs({"Out"}).SetKernelFn(PD_KERNEL(Thrice));
        """))
    libs = tmp_path / "libs"
    libs.mkdir()
    ops = pdext.load("paddle_keywords", [str(tmp_path / "twice.c"), str(tmp_path / "thrice.cc")],
                     extra_cflags=["-DPD_TEST_BOTH=2"], extra_cxx_cflags=["-DPD_TEST_CXX_ONLY=3"],
                     extra_library_paths=[str(libs)], build_directory=tmp_path / "b",
                     verbose=True)
    assert "-L" + str(libs) in capfd.readouterr().err
    x = np.array([1, -2], np.float32)
    np.testing.assert_array_equal(ops.c_twice(x), x * 2)
    np.testing.assert_array_equal(ops.cxx_thrice(x), x * 3)
    with pytest.raises(TypeError, match="extra_cxx_cflags must be a list"):
        pdext.load("paddle_keywords", [str(tmp_path / "twice.c")], extra_cxx_cflags="-O2")
