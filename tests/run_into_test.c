/*
 * run_into_test.c - pd_op_run_into: results written into memory the host owns (the way XLA,
 * ONNX Runtime and frameworks with preallocated tensors call), checked against what pd_op_run
 * makes on the same inputs: outputs made by pd_output land in the host's memory itself,
 * outputs the kernel sets another way (pd_set_output, inplace, vector items) are copied in,
 * undefined output tensors are made as pd_op_run makes them, and a destination that does not
 * fit is refused naming the output, what was given and what the call makes, with its memory
 * untouched. The ops are tests/ops/runner_ops.c.
 */
#include "extension.h"
#include "runner_helpers.h"

#include <string.h>

/* A hand-made dense CPU tensor over `buf` (no storage: the host owns the memory). */
static int same_values(const pd_tensor *a, const pd_tensor *b)
{
    if (a->dtype != b->dtype || pd_numel(a) != pd_numel(b))
        return 0;
    for (int64_t i = 0, n = pd_numel(a); i < n; ++i)
        if (rt_at(a, i) != rt_at(b, i))
            return 0;
    return 1;
}

PD_TEST(RunInto, OutputsMadeByTheKernelLandInTheHostsMemory)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "rt_multi");
    int64_t shape[2] = {2, 3};
    pd_tensor x[2] = {rt_random(PD_FLOAT64, 2, shape), rt_random(PD_FLOAT64, 2, shape)};
    pd_arg in[2] = {pd_arg_of(&x[0]), pd_arg_of(&x[1])};

    double sum_buf[6], diff_buf[6];
    pd_tensor sum = rt_dense_over(sum_buf, PD_FLOAT64, 2, shape),
              diff = rt_dense_over(diff_buf, PD_FLOAT64, 2, shape);
    pd_tensor sum_given = sum;
    pd_arg out[2] = {pd_arg_of(&sum), pd_arg_of(&diff)};
    PD_ASSERT_OK(pd_op_run_into(op, in, 2, NULL, 0, out, 2));
    PD_EXPECT_EQ(out[0].count, 1);
    PD_EXPECT_EQ(out[1].count, 1);
    /* The host's tensors are as given: same memory, no storage taken. */
    PD_EXPECT(memcmp(&sum, &sum_given, sizeof sum) == 0);
    PD_EXPECT(diff.data == diff_buf && diff.storage == NULL);

    pd_tensor rsum = PD_TENSOR_UNDEFINED, rdiff = PD_TENSOR_UNDEFINED;
    pd_arg rout[2] = {pd_arg_of(&rsum), pd_arg_of(&rdiff)};
    PD_ASSERT_OK(pd_op_run(op, in, 2, NULL, 0, rout, 2));
    PD_EXPECT(same_values(&sum, &rsum));
    PD_EXPECT(same_values(&diff, &rdiff));
    pd_tensor_release(&rsum);
    pd_tensor_release(&rdiff);
    rt_release_all(x, 2);
    pd_registry_destroy(reg);
}

PD_TEST(RunInto, AnUndefinedOutputIsMadeAsPdOpRunMakesIt)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "rt_multi");
    int64_t shape[1] = {4};
    pd_tensor x[2] = {rt_random(PD_FLOAT64, 1, shape), rt_random(PD_FLOAT64, 1, shape)};
    pd_arg in[2] = {pd_arg_of(&x[0]), pd_arg_of(&x[1])};
    /* The destination holds its own reference (a tensor the host made with pdext). */
    pd_tensor sum = rt_tensor(PD_FLOAT64, 1, shape, NULL), diff = PD_TENSOR_UNDEFINED;
    pd_storage *kept = sum.storage;
    pd_arg out[2] = {pd_arg_of(&sum), pd_arg_of(&diff)};
    PD_ASSERT_OK(pd_op_run_into(op, in, 2, NULL, 0, out, 2));
    PD_EXPECT(sum.storage == kept);
    PD_EXPECT(diff.storage != NULL && diff.data != NULL); /* made by the call */
    for (int64_t i = 0; i < 4; ++i) {
        PD_EXPECT_NEAR(rt_at(&sum, i), rt_at(&x[0], i) + rt_at(&x[1], i), 0.0);
        PD_EXPECT_NEAR(rt_at(&diff, i), rt_at(&x[0], i) - rt_at(&x[1], i), 0.0);
    }
    pd_tensor_release(&sum);
    pd_tensor_release(&diff);
    rt_release_all(x, 2);
    pd_registry_destroy(reg);
}

PD_TEST(RunInto, AnOutputTheKernelSetsAnotherWayIsCopiedIn)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    /* rt_free_out sets a tensor it made with pd_empty: Out = A ++ B. */
    int64_t two = 2, three = 3, five = 5;
    pd_tensor a = rt_random(PD_FLOAT64, 1, &two), b = rt_random(PD_FLOAT64, 1, &three);
    pd_arg in[2] = {pd_arg_of(&a), pd_arg_of(&b)};
    double buf[5];
    pd_tensor out = rt_dense_over(buf, PD_FLOAT64, 1, &five);
    pd_arg o = pd_arg_of(&out);
    pd_attr lazy = pd_attr_of_bool("lazy", false);
    PD_ASSERT_OK(pd_op_run_into(pd_op_find(reg, "rt_free_out"), in, 2, &lazy, 1, &o, 1));
    PD_EXPECT(out.data == buf && out.storage == NULL);
    for (int64_t i = 0; i < 5; ++i)
        PD_EXPECT_NEAR(buf[i], i < 2 ? rt_at(&a, i) : rt_at(&b, i - 2), 0.0);

    /* rt_inplace doubles X in place: the destination gets the doubled values too. */
    pd_tensor x = rt_random(PD_FLOAT64, 1, &three), before = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_copy_to(&before, &x, pd_place_cpu()));
    double dbuf[3];
    pd_tensor d = rt_dense_over(dbuf, PD_FLOAT64, 1, &three);
    pd_arg xin = pd_arg_of(&x), dout = pd_arg_of(&d);
    PD_ASSERT_OK(pd_op_run_into(pd_op_find(reg, "rt_inplace"), &xin, 1, NULL, 0, &dout, 1));
    for (int64_t i = 0; i < 3; ++i) {
        PD_EXPECT_NEAR(rt_at(&x, i), 2 * rt_at(&before, i), 0.0);
        PD_EXPECT_NEAR(dbuf[i], 2 * rt_at(&before, i), 0.0);
    }
    pd_tensor_release(&before);
    pd_tensor_release(&x);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_registry_destroy(reg);
}

PD_TEST(RunInto, VectorOutputItemsGoIntoTheirDestinations)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "rt_vec");
    int64_t n0 = 2, n1 = 3, one = 1;
    pd_tensor x[2] = {rt_random(PD_FLOAT64, 1, &n0), rt_random(PD_FLOAT64, 1, &n1)};
    pd_arg in[1] = {pd_arg_named("X", x, 2)};
    double b0[2], b1[3];
    pd_tensor outs[2] = {rt_dense_over(b0, PD_FLOAT64, 1, &n0),
                         rt_dense_over(b1, PD_FLOAT64, 1, &n1)};
    pd_tensor seen = PD_TENSOR_UNDEFINED;
    pd_arg out[2] = {pd_arg_named("Out", outs, 2), pd_arg_named("Seen", &seen, 1)};
    PD_ASSERT_OK(pd_op_run_into(op, in, 1, NULL, 0, out, 2));
    PD_EXPECT_EQ(out[0].count, 2);
    PD_EXPECT(outs[0].data == b0 && outs[1].data == b1);
    for (int64_t i = 0; i < 2; ++i)
        PD_EXPECT_NEAR(b0[i], rt_at(&x[0], i), 0.0);
    for (int64_t i = 0; i < 3; ++i)
        PD_EXPECT_NEAR(b1[i], rt_at(&x[1], i), 0.0);
    pd_tensor_release(&seen);

    /* rt_vec_out sets its items with pd_set_output_at: copied into each destination. */
    int32_t v0[1], v1[1], v2[2];
    int64_t zero = 0, len2 = 2;
    pd_tensor vouts[3] = {rt_dense_over(v0, PD_INT32, 1, &zero),
                          rt_dense_over(v1, PD_INT32, 1, &one),
                          rt_dense_over(v2, PD_INT32, 1, &len2)};
    pd_arg vo = pd_arg_of(vouts);
    vo.count = 3;
    pd_attr attrs[2] = {pd_attr_of_int("n", 3), pd_attr_of_bool("skip", false)};
    PD_ASSERT_OK(pd_op_run_into(pd_op_find(reg, "rt_vec_out"), NULL, 0, attrs, 2, &vo, 1));
    PD_EXPECT_EQ(vo.count, 3);
    PD_EXPECT_EQ(v1[0], 1);
    PD_EXPECT(v2[0] == 2 && v2[1] == 2);
    rt_release_all(x, 2);
    pd_registry_destroy(reg);
}

PD_TEST(RunInto, ADestinationOfAnotherShapeIsRefusedNamingBothAndLeftUntouched)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "rt_multi");
    int64_t shape[2] = {2, 3}, wrong[2] = {3, 2};
    pd_tensor x[2] = {rt_random(PD_FLOAT64, 2, shape), rt_random(PD_FLOAT64, 2, shape)};
    pd_arg in[2] = {pd_arg_of(&x[0]), pd_arg_of(&x[1])};
    double sum_buf[6], diff_buf[6];
    for (int i = 0; i < 6; ++i)
        sum_buf[i] = diff_buf[i] = 42.0;
    pd_tensor sum = rt_dense_over(sum_buf, PD_FLOAT64, 2, shape),
              diff = rt_dense_over(diff_buf, PD_FLOAT64, 2, wrong);
    pd_arg out[2] = {pd_arg_of(&sum), pd_arg_of(&diff)};
    PD_EXPECT_EQ(pd_op_run_into(op, in, 2, NULL, 0, out, 2), PD_ERR_INVALID_ARGUMENT);
    const char *msg = pd_last_error();
    PD_EXPECT(strstr(msg, "rt_multi: output 'Diff'") != NULL);
    PD_EXPECT(strstr(msg, "float64 [3, 2]") != NULL);
    PD_EXPECT(strstr(msg, "makes float64 [2, 3]") != NULL);
    for (int i = 0; i < 6; ++i)
        PD_EXPECT(diff_buf[i] == 42.0);

    /* Another dtype, and a strided destination. */
    float fbuf[6];
    diff = rt_dense_over(fbuf, PD_FLOAT32, 2, shape);
    PD_EXPECT_EQ(pd_op_run_into(op, in, 2, NULL, 0, out, 2), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT(strstr(pd_last_error(), "float32 [2, 3]") != NULL);
    diff = rt_dense_over(diff_buf, PD_FLOAT64, 2, shape);
    diff.layout = PD_LAYOUT_STRIDED;
    diff.strides[0] = 1;
    diff.strides[1] = 2;
    PD_EXPECT_EQ(pd_op_run_into(op, in, 2, NULL, 0, out, 2), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT(strstr(pd_last_error(), "must be dense") != NULL);
    rt_release_all(x, 2);
    pd_registry_destroy(reg);
}

PD_TEST(RunInto, AKernelSetOutputThatDoesNotFitIsRefusedAfterTheKernel)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    int64_t two = 2, three = 3, four = 4;
    pd_tensor a = rt_random(PD_FLOAT64, 1, &two), b = rt_random(PD_FLOAT64, 1, &three);
    pd_arg in[2] = {pd_arg_of(&a), pd_arg_of(&b)};
    double buf[4] = {7, 7, 7, 7};
    pd_tensor out = rt_dense_over(buf, PD_FLOAT64, 1, &four);
    pd_arg o = pd_arg_of(&out);
    pd_attr lazy = pd_attr_of_bool("lazy", false);
    PD_EXPECT_EQ(pd_op_run_into(pd_op_find(reg, "rt_free_out"), in, 2, &lazy, 1, &o, 1),
                 PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT(strstr(pd_last_error(), "rt_free_out: output 'Out' is to be written into the "
                                      "host's tensor of float64 [4]") != NULL);
    PD_EXPECT(buf[0] == 7 && buf[3] == 7);

    /* A vector output given fewer defined destinations than it has items. */
    int32_t v0[1];
    int64_t zero = 0;
    pd_tensor vouts[3] = {rt_dense_over(v0, PD_INT32, 1, &zero), PD_TENSOR_UNDEFINED,
                          PD_TENSOR_UNDEFINED};
    pd_arg vo = pd_arg_of(vouts);
    vo.count = 3;
    pd_attr attrs[2] = {pd_attr_of_int("n", 3), pd_attr_of_bool("skip", false)};
    PD_EXPECT_EQ(pd_op_run_into(pd_op_find(reg, "rt_vec_out"), NULL, 0, attrs, 2, &vo, 1),
                 PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT(strstr(pd_last_error(), "give every item one, or none") != NULL);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_registry_destroy(reg);
}
