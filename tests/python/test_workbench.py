"""pdext.gradcheck and pdext.check: pd_gradcheck on an op bound as a call binds it, and the
rows of `pdext check` from Python. Wrong backward kernels (tests/tape_ops.c) are caught."""

import numpy as np
import pytest
from conftest import require_framework


def x64(*v):
    return np.array(v, np.float64)


def test_gradcheck_passes_on_the_examples(pdext, relu, concat):
    r = pdext.gradcheck(relu.custom_relu, (np.array([-1.5, 0.7, 2.0, -0.3], np.float32),))
    assert r and r.passed and r.dtype == "float64"  # cast up: relu runs in float64
    assert r.inputs_checked == 1 and r.elements == 4
    assert r.worst.op == "custom_relu" and r.worst.input == "X"
    a, b = np.ones((2, 3), np.float32), np.ones((2, 2), np.float32)
    r = pdext.gradcheck(concat.custom_concat, ([a, b],), axis=1)
    assert r.passed and r.elements == 10
    assert "passed" in str(r)


def test_a_single_array_is_the_one_input(pdext, relu):
    assert pdext.gradcheck(relu.custom_relu, x64(1.0, -2.0))


def test_wrong_backward_is_caught_with_the_worst_element(pdext, tape):
    x = x64(0.5, -1.0, 2.0)
    r = pdext.gradcheck(tape.tp_bad_square, (x,))
    assert not r and not r.passed
    # analytic X*g against numeric 2*X*g: the largest |x| is the worst.
    assert r.worst.index == 2
    assert r.worst.analytic == pytest.approx(r.worst.numeric / 2, rel=1e-6)
    assert "FAILED" in str(r)
    np.testing.assert_array_equal(x, [0.5, -1.0, 2.0])  # inputs are not modified


def test_wrong_double_grad_is_caught(pdext, tape):
    x = x64(0.5, -1.0, 2.0)
    good = pdext.gradcheck(tape.tp_square, (x,))
    assert good.passed and good.double_grad_checked and good.double_grad_passed
    bad = pdext.gradcheck(tape.tp_bad_dd, (x,))
    assert not bad.passed and bad.double_grad_checked and not bad.double_grad_passed
    assert bad.double_worst.op == "tp_bad_dd_grad"
    skipped = pdext.gradcheck(tape.tp_bad_dd, (x,), double_grad=False)
    assert skipped.passed and not skipped.double_grad_checked and skipped.double_worst is None


def test_raise_exception(pdext, tape):
    with pytest.raises(pdext.GradcheckError, match="tp_bad_square: gradcheck FAILED"):
        pdext.gradcheck(tape.tp_bad_square, (x64(1.0, 2.0),), raise_exception=True)
    assert issubclass(pdext.GradcheckError, pdext.Error)


def test_attrs_and_options(pdext, tape):
    x = x64(1.0, -2.0)
    r = pdext.gradcheck(tape.tp_scale, (x,), scale=3.0, eps=1e-4, atol=1e-4, rtol=1e-4)
    assert r.passed and r.eps == 1e-4 and r.atol == 1e-4 and r.rtol == 1e-4
    r = pdext.gradcheck(tape.tp_scale, (x,), attrs={"scale": 0.5})
    assert r.passed


def test_keep_dtype_and_max_elements(pdext, tape):
    x = np.linspace(-1, 1, 40).astype(np.float32)
    r = pdext.gradcheck(tape.tp_square, (x,), keep_dtype=True, max_elements=5)
    assert r.dtype == "float32" and r.passed
    assert r.elements < 40


def test_integer_inputs_are_skipped_and_named(pdext, tape):
    r = pdext.gradcheck(tape.tp_shift, (x64(1.0, 2.0), np.array([1, 2], np.int32)))
    assert r.passed and r.inputs_checked == 1
    assert any("N" in s for s in r.skipped)


def test_vector_inputs(pdext, tape):
    r = pdext.gradcheck(tape.tp_addn, ([x64(1, 2), x64(3, 4), x64(5, 6)],))
    assert r.passed and r.elements == 6


def test_torch_wrapped_functions_and_tensors(pdext, relu):
    torch = require_framework("torch")
    import pdext.torch

    f = pdext.torch.wrap(relu).custom_relu
    x = torch.tensor([-1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert pdext.gradcheck(f, (x,))


def test_op_without_grad_op(pdext, tape):
    with pytest.raises(FileNotFoundError, match="'tp_nograd' has no grad op"):
        pdext.gradcheck(tape.tp_nograd, (x64(1.0),))


def test_no_floating_input(pdext, relu):
    with pytest.raises(ValueError, match="custom_relu"):
        pdext.gradcheck(relu.custom_relu, (np.array([1, 2], np.int64),))


def test_bad_arguments_are_the_calls_errors(pdext, relu, concat):
    with pytest.raises(TypeError, match=r"custom_relu\(\) takes at most 1 arguments"):
        pdext.gradcheck(relu.custom_relu, (x64(1.0), x64(1.0)))
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        pdext.gradcheck(concat.custom_concat, ([x64(1.0)],), axes=0)
    with pytest.raises(TypeError, match="expected a pdext op"):
        pdext.gradcheck(np.sum, (x64(1.0),))
    with pytest.raises(ValueError, match=">= 0"):
        pdext.gradcheck(relu.custom_relu, (x64(1.0),), eps=-1.0)


def test_gradcheck_leaks_no_references(pdext, relu):
    import sys

    x = x64(1.0, -2.0)
    before = sys.getrefcount(x)
    for _ in range(200):
        pdext.gradcheck(relu.custom_relu, (x,))
        with pytest.raises(TypeError):
            pdext.gradcheck(relu.custom_relu, (x, x))
    assert sys.getrefcount(x) == before


# --- pdext.check ---------------------------------------------------------------------------


def rows_of(report, op):
    return {(r.dtype, r.check): r for r in report.rows if r.op == op}


def test_check_passes_on_the_examples_with_the_commands_rows(pdext, relu, concat):
    r = pdext.check(relu)
    assert r and r.passed and r.failed == 0
    rows = rows_of(r, "custom_relu")
    # the command's rows: bfloat16 is tried too (the check runs in C, not numpy)
    assert rows[("-", "dtypes")].detail == (
        "takes float32 float64; refuses float16 bfloat16 int32 int64")
    for dt in ("float32", "float64"):
        for c in ("shapes+infer", "deterministic", "strided", "gradcheck"):
            assert rows[(dt, c)].status == "ok", rows[(dt, c)]
    assert "custom_relu_grad" not in {row.op for row in r.rows}  # forward ops only
    text = str(r)
    assert text.splitlines()[0].split() == ["op", "dtype", "check", "ok?", "detail"]
    assert text.endswith("9 checks, 0 failed")
    r = pdext.check(concat, attrs={"axis": 1})
    rows = rows_of(r, "custom_concat")
    assert r.passed and rows[("int64", "gradcheck")].status == "skip"
    assert rows[("int64", "gradcheck")].detail == "not differentiable"


def test_check_catches_a_wrong_backward(pdext, tape):
    r = pdext.check(tape, op="tp_bad_square")
    assert not r and r.failed == 2  # float32 and float64
    row = rows_of(r, "tp_bad_square")[("float64", "gradcheck")]
    assert row.status == "FAIL" and row.detail.startswith("WRONG tp_bad_square X[")
    r = pdext.check(tape, op="tp_bad_dd")
    assert rows_of(r, "tp_bad_dd")[("float64", "gradcheck x2")].status == "FAIL"


def test_check_skips_gradcheck_without_a_grad_op(pdext, tape):
    r = pdext.check(tape, op="tp_nograd")
    row = rows_of(r, "tp_nograd")[("float64", "gradcheck")]
    assert row.status == "skip" and row.detail == "no grad op"
    assert r.passed


def test_check_takes_an_op_object(pdext, tape):
    r = pdext.check(tape, op=tape.tp_square)
    assert {row.op for row in r.rows} == {"tp_square"} and r.passed


def test_check_with_given_shapes(pdext, tape):
    r = pdext.check(tape, op="tp_mul", shapes={"X": (2, 5), "Y": ((2, 5), None)})
    assert r.passed
    assert rows_of(r, "tp_mul")[("float32", "shapes+infer")].detail == "the given shapes"


def test_check_an_int_attr_without_default_is_zero_and_noted(pdext, tmp_path):
    src = (
        '#include "extension.h"\n'
        "static void k(pd_kernel_ctx *c) {\n"
        "    const pd_tensor *x = pd_input(c, 0);\n"
        "    pd_tensor *o = pd_empty_like(c, x);\n"
        "    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), \"wb_shift\", {\n"
        "        const data_t *a = pd_data(x); data_t *b = pd_data(o);\n"
        "        for (int64_t i = 0; i < pd_numel(x); ++i) b[i] = a[i] + (data_t)pd_attr_int(c, 0);\n"
        "    });\n"
        "    pd_set_output(c, 0, o);\n"
        "}\n"
        'PD_BUILD_OP(wb_shift, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"n: int",\n'
        '            "tag: std::string"}, .kernel = k);\n'
    )
    ops = pdext.load_inline("wb_shift", src, build_directory=tmp_path / "b")
    with pytest.raises(ValueError, match=r"needs attr 'tag' \(std::string\).*attrs=\{'tag': VALUE\}"):
        pdext.check(ops)
    r = pdext.check(ops, attrs={"tag": "x"})
    assert r.passed
    assert r.notes == ["wb_shift: attr n = 0 (no default; attrs={'n': VALUE} to choose)"]


def test_check_bad_arguments(pdext, relu):
    with pytest.raises(ValueError, match="no forward op 'nope'.*custom_relu"):
        pdext.check(relu, op="nope")
    with pytest.raises(TypeError, match="expected a module from pdext.load"):
        pdext.check(object())


def test_gradcheck_names_a_bad_option_and_its_value(pdext, relu):
    x = (np.array([-1.5, 0.7], np.float32),)
    with pytest.raises(ValueError, match="pdext.gradcheck: atol is -1; expected a number >= 0"):
        pdext.gradcheck(relu.custom_relu, x, atol=-1.0)
    with pytest.raises(ValueError, match="pdext.gradcheck: eps is nan"):
        pdext.gradcheck(relu.custom_relu, x, eps=float("nan"))


# --- pdext.check and `pdext check`: one implementation, the same rows -------------------------


def command_rows(*args):
    """`pdext check --json ARGS`: (exit status, rows as pdext.check's Row tuples, notes)."""
    import json
    import subprocess

    from conftest import pdext_command

    p = subprocess.run([pdext_command(), "check", "--json", *args], capture_output=True, text=True,
                       timeout=900)
    assert p.returncode in (0, 1), p.stderr
    doc = json.loads(p.stdout)
    rows = [(r["op"], r["dtype"], r["check"], "FAIL" if r["status"] == "fail" else r["status"],
             r["detail"]) for r in doc["rows"]]
    return p.returncode, rows, doc["notes"]


def test_check_and_the_command_fail_a_wrong_backward_with_the_same_rows(pdext, tape):
    from conftest import TAPE_OPS

    rc, rows, _ = command_rows(str(TAPE_OPS), "--op", "tp_bad_square")
    r = pdext.check(tape, op="tp_bad_square")
    assert [tuple(row) for row in r.rows] == rows and rc == 1 and not r
    # tp_bad_square's grad op returns X * g for d(X^2) = 2 X g: the analytic gradient is half
    # the numeric one at every element, whatever the random inputs, in both dtypes
    for dt in ("float32", "float64"):
        row = rows_of(r, "tp_bad_square")[(dt, "gradcheck")]
        assert row.status == "FAIL" and row.detail.startswith("WRONG tp_bad_square X[")
        assert "(rel err 0.5)" in row.detail
    assert [row.check for row in r.rows if row.status == "FAIL"] == ["gradcheck", "gradcheck"]


def test_check_and_the_command_pass_a_right_op_with_the_same_rows(pdext, relu):
    from conftest import RELU

    rc, rows, notes = command_rows(str(RELU))
    r = pdext.check(relu)
    assert [tuple(row) for row in r.rows] == rows and rc == 0 and r and notes == r.notes == []
    assert {(row.dtype, row.check) for row in r.rows} >= {
        ("-", "dtypes"), ("float32", "strided"), ("float64", "gradcheck")}


def test_check_and_the_command_take_a_refusal_and_per_op_shapes_alike(pdext, tmp_path):
    from conftest import ROOT

    src = ROOT / "tests" / "ops" / "check_refuse.c"
    ops = pdext.load("check_refuse", [str(src)], build_directory=tmp_path / "b")
    # ck_matvec needs A [m, n] and V [n]: given for that op only, the others keep [3, 4]
    rc, rows, _ = command_rows(str(src), "--input", "ck_matvec.A=3,5",
                               "--input", "ck_matvec.V=5")
    r = pdext.check(ops, shapes={"ck_matvec.A": (3, 5), "ck_matvec.V": [5]})
    assert [tuple(row) for row in r.rows] == rows and rc == 1
    # ck_topk refuses a [1, 1] input with k = 2, naming k: the "bad input" row passes
    topk = rows_of(r, "ck_topk")
    assert topk[("float64", "bad input")].status == "ok"
    assert "one element [1, 1] refused: ck_topk: k (2) must be in [1, 1]" in \
        topk[("float64", "bad input")].detail
    assert rows_of(r, "ck_matvec")[("float64", "shapes+infer")].detail == "the given shapes"
    # ck_vague refuses without a reason: its failures are the only ones, in both
    assert {row.op for row in r.rows if row.status == "FAIL"} == {"ck_vague"}
    with pytest.raises(ValueError, match=r"ck_matvec\.B: op 'ck_matvec' has no input 'B' "
                                         r"\(its inputs: A, V\)"):
        pdext.check(ops, shapes={"ck_matvec.B": (3, 5)})
    with pytest.raises(ValueError, match="ck_matvek.A: no forward op 'ck_matvek'.*ck_matvec"):
        pdext.check(ops, shapes={"ck_matvek.A": (3, 5)})
