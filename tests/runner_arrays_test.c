/*
 * runner_arrays_test.c - output pd_args the host leaves unsized (tensors NULL, count 0): the
 * runner makes an array of exactly the items the output has, whatever their number (no
 * guessed room that could fail after the kernel ran), the host frees it with pd_arg_release,
 * and a failed call allocates nothing. The op is tests/ops/runner_ops.c's rt_vec
 * (Out[k] = X[k] + Bias); the values are checked against the inputs element by element.
 */
#include "extension.h"
#include "runner_helpers.h"

#include <stdlib.h>
#include <string.h>

/* n inputs of float64, item k of shape [1 + k % 3] holding k * 10 + i. */
static void make_inputs(pd_tensor *xs, int32_t n)
{
    for (int32_t k = 0; k < n; ++k) {
        int64_t len = 1 + k % 3;
        xs[k] = rt_tensor(PD_FLOAT64, 1, &len, NULL);
        for (int64_t i = 0; i < len; ++i)
            rt_set(&xs[k], i, (double)k * 10 + (double)i);
    }
}

/* Runs rt_vec on n inputs with Bias b and an unsized Out; checks every item's values. */
static void run_unsized(int32_t n)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor *xs = calloc((size_t)n, sizeof *xs);
    PD_ASSERT(xs != NULL);
    make_inputs(xs, n);
    pd_tensor bias = rt_vec_f64(1, (double[]){0.5}), seen = PD_TENSOR_UNDEFINED;
    pd_arg in[2] = {pd_arg_named("X", xs, n), pd_arg_named("Bias", &bias, 1)};
    pd_arg out[2] = {pd_arg_named(NULL, NULL, 0), pd_arg_of(&seen)};
    PD_ASSERT_OK(pd_op_run(pd_op_find(reg, "rt_vec"), in, 2, NULL, 0, out, 2));
    PD_ASSERT_EQ(out[0].count, n);
    PD_ASSERT(out[0].tensors != NULL);
    for (int32_t k = 0; k < n; ++k) {
        const pd_tensor *o = &out[0].tensors[k];
        PD_EXPECT_EQ(o->dtype, PD_FLOAT64);
        PD_EXPECT_EQ(o->shape[0], xs[k].shape[0]);
        for (int64_t i = 0; i < xs[k].shape[0]; ++i)
            PD_EXPECT_EQ(rt_at(o, i), rt_at(&xs[k], i) + 0.5);
    }
    pd_arg_release(&out[0]);
    PD_EXPECT(out[0].tensors == NULL);
    PD_EXPECT_EQ(out[0].count, 0);
    pd_tensor_release(&seen);
    pd_tensor_release(&bias);
    rt_release_all(xs, n);
    free(xs);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerArrays, AnUnsizedVectorOutputGetsAnArrayOfExactlyItsItems) { run_unsized(3); }

PD_TEST(RunnerArrays, MoreItemsThanAnyGuessedRoomNeedNoSecondCall)
{
    run_unsized(300); /* the fronts once guessed 16, 64 or 256 */
}

PD_TEST(RunnerArrays, AFailedCallAllocatesNothing)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor xs[2];
    make_inputs(xs, 2);
    int64_t one = 1;
    pd_tensor bad_bias = rt_tensor(PD_FLOAT32, 1, &one, NULL), seen = PD_TENSOR_UNDEFINED;
    rt_set(&bad_bias, 0, 1.0);
    pd_arg in[2] = {pd_arg_named("X", xs, 2), pd_arg_named("Bias", &bad_bias, 1)};
    /* Bias is float32: the kernel reads it as a double only after PD_CHECKs that pass, so
     * make the call fail at binding instead: an attr the op does not declare. */
    pd_attr stray = pd_attr_of_int("no_such_attr", 1);
    pd_arg out[2] = {pd_arg_named(NULL, NULL, 0), pd_arg_of(&seen)};
    PD_EXPECT_EQ(pd_op_run(pd_op_find(reg, "rt_vec"), in, 2, &stray, 1, out, 2),
                 PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT(strstr(pd_last_error(), "no_such_attr") != NULL);
    PD_EXPECT(out[0].tensors == NULL);
    PD_EXPECT_EQ(out[0].count, 0);
    pd_arg_release(&out[0]); /* harmless on a pd_arg the runner filled nothing into */
    pd_arg_release(NULL);
    pd_tensor_release(&bad_bias);
    rt_release_all(xs, 2);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerArrays, AnUnsizedOutputByNameWorksAsByPosition)
{
    pd_registry *reg = rt_registry1("rt_runner_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor xs[4];
    make_inputs(xs, 4);
    pd_arg in = pd_arg_named("X", xs, 4);
    pd_arg out = pd_arg_named("Out", NULL, 0); /* Seen not asked for */
    PD_ASSERT_OK(pd_op_run(pd_op_find(reg, "rt_vec"), &in, 1, NULL, 0, &out, 1));
    PD_ASSERT_EQ(out.count, 4);
    for (int32_t k = 0; k < 4; ++k)
        PD_EXPECT_EQ(rt_at(&out.tensors[k], 0), rt_at(&xs[k], 0));
    pd_arg_release(&out);
    rt_release_all(xs, 4);
    pd_registry_destroy(reg);
}
