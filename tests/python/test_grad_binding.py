"""A grad op's binding to its forward op, as libpdext computes it once at registration and
publishes it (pd_op_grad_input_source / pd_op_grad_output_target): op.grad_inputs and
op.grad_outputs, which every framework front reads. The expectations are written from the
declarations in tests/grad_binding_ops.c and tests/tape_ops.c."""

import numpy as np
import pytest


def test_a_shuffled_grad_op_binds_by_name(gbops):
    g = gbops.gb_mul_grad
    assert g.inputs == ("Out", "Out@GRAD", "Y", "X")
    assert g.grad_inputs == (("output", 0), ("output_grad", 0), ("input", 1), ("input", 0))
    assert g.outputs == ("Y@GRAD", "X@GRAD")
    assert g.grad_outputs == (1, 0)


def test_names_of_nothing_bind_to_nothing(gbops):
    g = gbops.gb_stray_grad
    assert g.grad_inputs == (("output_grad", 0), None)
    assert g.grad_outputs == (0, None)


def test_vector_inputs_outputs_and_their_gradients(gbops):
    g = gbops.gb_vec_grad
    assert g.vector_inputs == (True, True, False)
    assert g.grad_inputs == (("output_grad", 0), ("input", 1), ("input", 0))
    assert g.grad_outputs == (1, 0)


def test_a_double_grad_op_binds_to_the_grad_op(tape):
    gg = tape.tp_square_grad_grad
    assert gg.inputs == ("X", "Out@GRAD", "X@GRAD@GRAD")
    assert gg.grad_inputs == (("input", 0), ("input", 1), ("output_grad", 0))
    assert gg.grad_outputs == (0, 1)


def test_forward_ops_bind_to_nothing(gbops, relu):
    for op in (gbops.gb_mul, gbops.gb_vec, relu.custom_relu):
        assert op.kind == "forward"
        assert op.grad_inputs is None and op.grad_outputs is None
    assert relu.custom_relu_grad.grad_inputs == (("input", 0), ("output", 0), ("output_grad", 0))


def test_the_docstring_states_the_binding(gbops):
    doc = gbops.gb_mul_grad.__doc__
    assert "Binding to the forward op" in doc
    assert "Out: forward output 0" in doc
    assert "Out_GRAD: the gradient of forward output 0" in doc
    assert "X: forward input 0" in doc
    assert "returns Y@GRAD: the gradient of forward input 1" in doc
    assert "Scale: nothing of the forward op" in gbops.gb_stray_grad.__doc__
    assert "Binding to the forward op" not in gbops.gb_mul.__doc__


def test_the_grad_op_runs_bound_that_way(pdext, gbops):
    # Arguments placed as grad_inputs says give the analytic gradient of Out = X * X * Y, and
    # pdext.gradcheck (the C tape's binding) agrees with finite differences.
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, (2, 3))
    g = rng.standard_normal((2, 3))
    out = gbops.gb_mul(x, y)
    np.testing.assert_allclose(out, x * x * y)
    values = {"input": (x, y), "output": (out,), "output_grad": (g,)}
    args = [values[kind][i] for kind, i in gbops.gb_mul_grad.grad_inputs]
    gy, gx = gbops.gb_mul_grad(*args)
    np.testing.assert_allclose(gx, 2 * g * x * y)
    np.testing.assert_allclose(gy, g * x * x)
    assert pdext.gradcheck(gbops.gb_mul, (x, y))


def test_gradcheck_names_an_input_bound_to_nothing(pdext, gbops):
    with pytest.raises(ValueError, match="grad op 'gb_stray_grad' declares input 'Scale'"):
        pdext.gradcheck(gbops.gb_stray, (np.ones(3),))
