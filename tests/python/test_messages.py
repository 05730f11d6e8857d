"""Messages a new user met that named the wrong thing or left out what to do (issue 22, item
10): each test provokes the error and checks the message says what the user can act on."""

import numpy as np
import pytest

TWO_INPUTS_SOURCE = r"""
#include "extension.h"
/* Two inputs, no infer function and no PD_OP_OUTPUTS_LIKE_INPUT0: the runner cannot tell
 * which input the output follows. */
static void add_kernel(pd_kernel_ctx *ctx)
{
    const float *a = pd_data(pd_input(ctx, 0)), *b = pd_data(pd_input(ctx, 1));
    float *out = pd_data(pd_output(ctx, 0));
    for (int64_t i = 0, n = pd_numel(pd_input(ctx, 0)); i < n; ++i)
        out[i] = a[i] + b[i];
}
PD_BUILD_OP(msg_add, .inputs = {"A", "B"}, .outputs = {"Out"}, .kernel = add_kernel);
"""


def test_an_unknown_op_lists_the_modules_ops(relu):
    with pytest.raises(AttributeError, match=r"no op 'custom_relo'; did you mean 'custom_relu'\?"):
        relu.custom_relo
    with pytest.raises(AttributeError, match=r"its ops: custom_relu, custom_relu_grad"):
        relu.nothing_like_it
    assert not hasattr(relu, "__wrapped__")  # dunder probes stay plain AttributeErrors


def test_a_strided_inplace_input_is_told_the_python_way_to_make_it_contiguous(pyops):
    base = np.arange(8, dtype=np.float64)
    with pytest.raises(Exception, match=r"numpy\.ascontiguousarray"):
        pyops.py_inplace(base[::2])


def test_two_inputs_without_inference_name_the_flag_that_gives_it(pdext):
    lib = pdext.load_inline("py_messages_two_inputs", TWO_INPUTS_SOURCE)
    a = np.ones(3, np.float32)
    with pytest.raises(pdext.OpError, match=r"msg_add: .*PD_OP_OUTPUTS_LIKE_INPUT0"):
        lib.msg_add(a, a)


def test_a_wrong_dtype_names_the_op_the_input_and_the_dtypes_it_takes(relu):
    # PD_DISPATCH_FLOATING_TYPES refuses int32: the message names the op (the runner's
    # prefix), the input that has the dtype (the runner finds it) and the dtypes the dispatch
    # takes (the macro's list).
    with pytest.raises(Exception) as info:
        relu.custom_relu(np.ones(3, np.int32))
    text = str(info.value)
    assert text.startswith("custom_relu: function relu_forward is not implemented for data type "
                           "`int32` (input 'X'); it takes float32, float64 ["), text
