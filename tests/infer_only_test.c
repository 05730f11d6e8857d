/*
 * infer_only_test.c - pd_op_infer: output dtypes and shapes from infer functions and from the
 * runner's default inference on inputs that have no data, vector and optional outputs, in-place
 * outputs, attr defaults and checks worded as a call's, and the refusal of an output only the
 * kernel can size. Each description is checked against what a real pd_op_run makes on real
 * data of the same shapes. The ops are tests/ops/runner_ops.c and the two examples.
 */
#include "extension.h"
#include "runner_helpers.h"

#include <string.h>

/* The description matches a tensor the op really made. */
static int same_meta(const pd_tensor *described, const pd_tensor *made)
{
    return described->data == NULL && described->storage == NULL &&
           described->dtype == made->dtype && described->ndim == made->ndim &&
           memcmp(described->shape, made->shape, sizeof(int64_t) * (size_t)made->ndim) == 0 &&
           pd_place_equal(described->place, made->place);
}

PD_TEST(OpInfer, DescribesOutputsOfInferFunctionsAsTheCallMakesThem)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "rt_multi");
    PD_ASSERT(op != NULL);
    int64_t shape[2] = {2, 3};
    pd_tensor m[2] = {rt_dense_over(NULL, PD_FLOAT64, 2, shape),
                      rt_dense_over(NULL, PD_FLOAT64, 2, shape)};
    pd_tensor sum = PD_TENSOR_UNDEFINED, diff = PD_TENSOR_UNDEFINED;
    pd_arg in[2] = {pd_arg_of(&m[0]), pd_arg_of(&m[1])};
    pd_arg out[2] = {pd_arg_of(&sum), pd_arg_of(&diff)};
    PD_ASSERT_OK(pd_op_infer(op, in, 2, NULL, 0, out, 2));
    PD_EXPECT_EQ(out[0].count, 1);
    PD_EXPECT_EQ(out[1].count, 1);

    pd_tensor real[2] = {rt_random(PD_FLOAT64, 2, shape), rt_random(PD_FLOAT64, 2, shape)};
    pd_tensor rsum = PD_TENSOR_UNDEFINED, rdiff = PD_TENSOR_UNDEFINED;
    pd_arg rin[2] = {pd_arg_of(&real[0]), pd_arg_of(&real[1])};
    pd_arg rout[2] = {pd_arg_of(&rsum), pd_arg_of(&rdiff)};
    PD_ASSERT_OK(pd_op_run(op, rin, 2, NULL, 0, rout, 2));
    PD_EXPECT(same_meta(&sum, &rsum));
    PD_EXPECT(same_meta(&diff, &rdiff));
    PD_EXPECT_EQ(sum.strides[0], 3);
    PD_EXPECT_EQ(sum.strides[1], 1);
    pd_tensor_release(&rsum);
    pd_tensor_release(&rdiff);
    rt_release_all(real, 2);
    pd_registry_destroy(reg);
}

PD_TEST(OpInfer, TheDefaultInferenceMirrorsTheInput)
{
    pd_registry *reg = rt_registry1("rt_example_relu");
    PD_ASSERT(reg != NULL);
    int64_t shape[3] = {4, 1, 5};
    pd_tensor x = rt_dense_over(NULL, PD_FLOAT32, 3, shape), out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_op_infer(pd_op_find(reg, "custom_relu"), &in, 1, NULL, 0, &o, 1));
    PD_EXPECT_EQ(out.dtype, PD_FLOAT32);
    PD_EXPECT_EQ(out.ndim, 3);
    PD_EXPECT_EQ(out.shape[0], 4);
    PD_EXPECT_EQ(out.shape[2], 5);
    PD_EXPECT(out.data == NULL);
    pd_registry_destroy(reg);
}

PD_TEST(OpInfer, VectorInputsAttrsAndTheirDefaultsAsInACall)
{
    pd_registry *reg = rt_registry1("rt_example_concat");
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "custom_concat");
    PD_ASSERT(op != NULL);
    int64_t a[2] = {2, 2}, b[2] = {2, 3};
    pd_tensor xs[2] = {rt_dense_over(NULL, PD_FLOAT64, 2, a),
                       rt_dense_over(NULL, PD_FLOAT64, 2, b)};
    pd_arg in = pd_arg_named("X", xs, 2);
    pd_attr axis = pd_attr_of_int64("axis", 1);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_op_infer(op, &in, 1, &axis, 1, &o, 1));
    PD_EXPECT_EQ(out.ndim, 2);
    PD_EXPECT_EQ(out.shape[0], 2);
    PD_EXPECT_EQ(out.shape[1], 5);
    /* The checks of the op's own infer function, worded as a call's. */
    pd_attr bad = pd_attr_of_int64("axis", 7);
    PD_EXPECT_EQ(pd_op_infer(op, &in, 1, &bad, 1, &o, 1), PD_ERR_OP_FAILED);
    PD_EXPECT(strstr(pd_last_error(), "custom_concat") != NULL);
    pd_registry_destroy(reg);
}

PD_TEST(OpInfer, AVectorOutputComesBackWithItsCountAndNeedsRoom)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "rt_vec");
    PD_ASSERT(op != NULL);
    int64_t s1 = 2, s2 = 5;
    pd_tensor xs[2] = {rt_dense_over(NULL, PD_FLOAT64, 1, &s1),
                       rt_dense_over(NULL, PD_FLOAT64, 1, &s2)};
    pd_arg in = pd_arg_named("X", xs, 2);
    pd_tensor outs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED}, seen = PD_TENSOR_UNDEFINED;
    pd_arg o[2] = {pd_arg_named(NULL, outs, 2), pd_arg_of(&seen)};
    PD_ASSERT_OK(pd_op_infer(op, &in, 1, NULL, 0, o, 2));
    PD_EXPECT_EQ(o[0].count, 2);
    PD_EXPECT_EQ(outs[1].shape[0], 5);
    PD_EXPECT_EQ(seen.dtype, PD_INT64);
    PD_EXPECT_EQ(seen.shape[0], 0); /* no Bias: its infer function says [0] */
    /* Room for one item only: refused, naming the output; nothing written, and the slot says
     * how much room a second call needs, which then succeeds. */
    pd_tensor one[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_arg small[1] = {pd_arg_named(NULL, one, 1)};
    PD_EXPECT_EQ(pd_op_infer(op, &in, 1, NULL, 0, small, 1), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT(strstr(pd_last_error(), "'Out' has 2 tensors") != NULL);
    PD_EXPECT_EQ(one[0].dtype, PD_UNDEFINED);
    PD_EXPECT_EQ(small[0].count, 2);
    PD_ASSERT_OK(pd_op_infer(op, &in, 1, NULL, 0, small, 1));
    PD_EXPECT_EQ(one[1].shape[0], 5);
    pd_registry_destroy(reg);
}

PD_TEST(OpInfer, RefusesAnOutputOnlyTheKernelCanSizeNamingIt)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    int64_t n = 3;
    pd_tensor m[2] = {rt_dense_over(NULL, PD_FLOAT64, 1, &n),
                      rt_dense_over(NULL, PD_FLOAT64, 1, &n)};
    pd_arg in[2] = {pd_arg_of(&m[0]), pd_arg_of(&m[1])};
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg o = pd_arg_of(&out);
    pd_attr lazy = pd_attr_of_bool("lazy", false);
    PD_EXPECT_EQ(pd_op_infer(pd_op_find(reg, "rt_free_out"), in, 2, &lazy, 1, &o, 1),
                 PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT(strstr(pd_last_error(), "rt_free_out: output 'Out'") != NULL);
    PD_EXPECT(strstr(pd_last_error(), "depends on the data") != NULL);
    pd_registry_destroy(reg);
}

PD_TEST(OpInfer, BindingErrorsAreTheCallsOwn)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "rt_multi");
    int64_t n = 3;
    pd_tensor m = rt_dense_over(NULL, PD_FLOAT64, 1, &n), out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&m), o = pd_arg_of(&out);
    pd_tensor rm = rt_vec_f64(3, (double[]){1, 2, 3});
    pd_arg rin = pd_arg_of(&rm);
    PD_EXPECT_EQ(pd_op_run(op, &rin, 1, NULL, 0, &o, 1), PD_ERR_INVALID_ARGUMENT);
    char call_message[512];
    snprintf(call_message, sizeof call_message, "%s", pd_last_error());
    PD_EXPECT_EQ(pd_op_infer(op, &in, 1, NULL, 0, &o, 1), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT_STREQ(pd_last_error(), call_message);
    PD_EXPECT_EQ(pd_op_infer(NULL, &in, 1, NULL, 0, &o, 1), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT_EQ(pd_op_infer(op, &in, 1, NULL, 0, NULL, 1), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT(strstr(pd_last_error(), "NULL array") != NULL);
    pd_tensor_release(&rm);
    pd_registry_destroy(reg);
}
