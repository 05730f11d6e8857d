/*
 * runner_test.c - pd_op_run / pd_run: binding inputs by position and by name, vector and
 * optional inputs, several and vector outputs, attrs of every type, inference and the output
 * checks, inplace outputs, handles and names, grad and double grad ops, nested op calls, and
 * every binding error named. The ops are in tests/ops/runner_ops.c, plus two linked into this
 * program for the nested calls.
 */
#include "extension.h"
#include "runner_helpers.h"

static pd_registry *runner_registry(void) { return rt_registry1("rt_runner_ops"); }

/* --- Binding by position and by name --------------------------------------------------------- */

PD_TEST(Runner, BindsInputsAndOutputsByPosition)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor in[2] = {rt_vec_f64(3, (double[]){1, 2, 3}), rt_vec_f64(3, (double[]){10, 20, 30})};
    pd_tensor sum = PD_TENSOR_UNDEFINED, diff = PD_TENSOR_UNDEFINED;
    pd_arg inputs[2] = {pd_arg_of(&in[0]), pd_arg_of(&in[1])};
    pd_arg outputs[2] = {pd_arg_of(&sum), pd_arg_of(&diff)};
    PD_ASSERT_OK(pd_run(reg, "rt_multi", inputs, 2, NULL, 0, outputs, 2));
    PD_EXPECT_EQ(outputs[0].count, 1);
    PD_EXPECT_EQ(outputs[1].count, 1);
    PD_EXPECT_EQ(pd_dtype(&sum), PD_FLOAT64);
    PD_EXPECT_EQ(pd_ndim(&sum), 1);
    PD_EXPECT_EQ(pd_dim(&sum, 0), 3);
    for (int i = 0; i < 3; ++i) {
        PD_EXPECT_NEAR(rt_at(&sum, i), 11.0 * (i + 1), 0);
        PD_EXPECT_NEAR(rt_at(&diff, i), -9.0 * (i + 1), 0);
    }
    PD_EXPECT_EQ(pd_tensor_use_count(&sum), 1);
    pd_tensor_release(&sum);
    pd_tensor_release(&diff);
    rt_release_all(in, 2);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, BindsInputsAndOutputsByNameInAnyOrder)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor a = rt_vec_f64(2, (double[]){5, 7}), b = rt_vec_f64(2, (double[]){1, 2});
    pd_tensor sum = PD_TENSOR_UNDEFINED, diff = PD_TENSOR_UNDEFINED;
    pd_arg inputs[2] = {pd_arg_named("B", &b, 1), pd_arg_named("A", &a, 1)};
    pd_arg outputs[2] = {pd_arg_named("Diff", &diff, 1), pd_arg_named("Sum", &sum, 1)};
    PD_ASSERT_OK(pd_run(reg, "rt_multi", inputs, 2, NULL, 0, outputs, 2));
    PD_EXPECT_NEAR(rt_at(&diff, 0), 4, 0);
    PD_EXPECT_NEAR(rt_at(&diff, 1), 5, 0);
    PD_EXPECT_NEAR(rt_at(&sum, 1), 9, 0);
    pd_tensor_release(&sum);
    pd_tensor_release(&diff);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, WritesOnlyTheOutputsAskedFor)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor in[2] = {rt_vec_f64(1, (double[]){3}), rt_vec_f64(1, (double[]){1})};
    pd_arg inputs[2] = {pd_arg_of(&in[0]), pd_arg_of(&in[1])};
    pd_tensor diff = PD_TENSOR_UNDEFINED;
    pd_arg only = pd_arg_named("Diff", &diff, 1);
    PD_ASSERT_OK(pd_run(reg, "rt_multi", inputs, 2, NULL, 0, &only, 1));
    PD_EXPECT_NEAR(rt_at(&diff, 0), 2, 0);
    pd_tensor_release(&diff);
    /* No outputs at all: the results are made, checked and dropped. */
    PD_EXPECT_OK(pd_run(reg, "rt_multi", inputs, 2, NULL, 0, NULL, 0));
    rt_release_all(in, 2);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, RejectsWrongInputCountNamingTheOp)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor in[3] = {rt_vec_f64(1, (double[]){1}), rt_vec_f64(1, (double[]){2}),
                       rt_vec_f64(1, (double[]){3})};
    pd_arg inputs[3] = {pd_arg_of(&in[0]), pd_arg_of(&in[1]), pd_arg_of(&in[2])};
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", inputs, 1, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: input 'B' is missing; it takes exactly one defined tensor");
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", inputs, 3, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: 3 inputs given, but the op declares 2 (A, B)");
    pd_arg two_for_a = pd_arg_named("A", in, 2);
    pd_arg b = pd_arg_named("B", &in[2], 1);
    pd_arg args[2] = {two_for_a, b};
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", args, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: input 'A' takes exactly one tensor, but 2 were given");
    rt_release_all(in, 3);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, RejectsBadInputBindingsNamingTheInput)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(1, (double[]){1});
    pd_tensor undefined = PD_TENSOR_UNDEFINED;
    pd_arg unknown[2] = {pd_arg_named("A", &x, 1), pd_arg_named("C", &x, 1)};
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", unknown, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: the op has no input named 'C' (declared: A, B)");
    pd_arg twice[2] = {pd_arg_named("A", &x, 1), pd_arg_of(&x)}; /* position 1 is B: fine */
    PD_EXPECT_OK(pd_run(reg, "rt_multi", twice, 2, NULL, 0, NULL, 0));
    pd_arg twice_a[2] = {pd_arg_of(&x), pd_arg_named("A", &x, 1)};
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", twice_a, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: input 'A' is bound twice");
    pd_arg undef[2] = {pd_arg_of(&x), pd_arg_of(&undefined)};
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", undef, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: input 'B' is an undefined tensor; it takes a defined one");
    pd_arg null_tensors[2] = {pd_arg_of(&x), pd_arg_named("B", NULL, 1)};
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", null_tensors, 2, NULL, 0, NULL, 0),
                    PD_ERR_INVALID_ARGUMENT, "rt_multi: input 'B' has count 1 and tensors NULL");
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", NULL, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: inputs is NULL with n_inputs 2");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, RejectsBadOutputBindingsNamingTheOutput)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor in[2] = {rt_vec_f64(1, (double[]){3}), rt_vec_f64(1, (double[]){1})};
    pd_arg inputs[2] = {pd_arg_of(&in[0]), pd_arg_of(&in[1])};
    pd_tensor out[3] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_arg unknown = pd_arg_named("Product", out, 1);
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", inputs, 2, NULL, 0, &unknown, 1),
                    PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: the op has no output named 'Product' (declared: Sum, Diff)");
    pd_arg twice[2] = {pd_arg_of(&out[0]), pd_arg_named("Sum", &out[1], 1)};
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", inputs, 2, NULL, 0, twice, 2), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: output 'Sum' is asked for twice");
    pd_arg three[3] = {pd_arg_of(&out[0]), pd_arg_of(&out[1]), pd_arg_of(&out[2])};
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", inputs, 2, NULL, 0, three, 3), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: 3 outputs asked for, but the op declares 2 (Sum, Diff)");
    pd_arg no_room = pd_arg_named("Sum", out, 0);
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", inputs, 2, NULL, 0, &no_room, 1),
                    PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: output 'Sum' has 1 tensor, but its pd_arg has room for 0");
    for (int i = 0; i < 3; ++i)
        PD_EXPECT(!pd_defined(&out[i]));
    rt_release_all(in, 2);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, RejectsMalformedInputTensorsNamingTheInput)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor good = rt_vec_f64(2, (double[]){1, 2});
    pd_tensor bad = good; /* host-built structs with one field wrong each (no reference taken) */
    pd_arg in[2] = {pd_arg_of(&good), pd_arg_of(&bad)};
    bad.dtype = (pd_data_type)42;
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", in, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: input 'B' has dtype 42, which is not a data type");
    bad = good;
    bad.ndim = PD_MAX_DIMS + 1;
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", in, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: input 'B' has ndim 9; expected 0..8");
    bad = good;
    bad.shape[0] = -2;
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", in, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: input 'B' has shape[0] = -2; dims must be >= 0");
    bad = good;
    bad.data = NULL;
    PD_EXPECT_ERROR(pd_run(reg, "rt_multi", in, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_multi: input 'B' has shape [2] but no data (NULL)");
    pd_tensor xs[2] = {good, good};
    xs[1].ndim = -1;
    pd_arg vec = pd_arg_named("X", xs, 2);
    PD_EXPECT_ERROR(pd_run(reg, "rt_vec", &vec, 1, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_vec: item 1 of input 'X' has ndim -1; expected 0..8");
    /* No data is fine for a tensor without elements. */
    pd_tensor empty = PD_TENSOR_UNDEFINED;
    empty.dtype = PD_FLOAT64;
    empty.ndim = 1;
    empty.place = pd_place_cpu();
    pd_tensor sum = PD_TENSOR_UNDEFINED;
    pd_arg two_empty[2] = {pd_arg_of(&empty), pd_arg_of(&empty)}, o = pd_arg_of(&sum);
    PD_EXPECT_OK(pd_run(reg, "rt_multi", two_empty, 2, NULL, 0, &o, 1));
    PD_EXPECT_EQ(pd_numel(&sum), 0);
    pd_tensor_release(&sum);
    pd_tensor_release(&good);
    pd_registry_destroy(reg);
}

/* --- Vector and optional inputs ----------------------------------------------------------------
 */

PD_TEST(Runner, VectorInputTakesAnyNumberOfTensorsAndAbsentOptionalIsNull)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[3] = {rt_vec_f64(2, (double[]){1, 2}), rt_vec_f64(1, (double[]){3}),
                       rt_tensor(PD_FLOAT64, 2, (int64_t[]){2, 2}, (double[]){4, 5, 6, 7})};
    for (int n = 1; n <= 3; ++n) {
        pd_tensor outs[3] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
        pd_tensor seen = PD_TENSOR_UNDEFINED;
        pd_arg in = pd_arg_named("X", xs, n);
        pd_arg out[2] = {pd_arg_named("Out", outs, 3), pd_arg_named("Seen", &seen, 1)};
        PD_ASSERT_OK(pd_run(reg, "rt_vec", &in, 1, NULL, 0, out, 2));
        PD_EXPECT_EQ(out[0].count, n);
        for (int k = 0; k < n; ++k) {
            PD_EXPECT(pd_same_shape(&outs[k], &xs[k]));
            for (int64_t i = 0; i < pd_numel(&xs[k]); ++i)
                PD_EXPECT_NEAR(rt_at(&outs[k], i), rt_at(&xs[k], i), 0);
        }
        /* infer_shape saw pd_input(ctx, 1) == NULL for the absent Bias. */
        PD_EXPECT_EQ(pd_dim(&seen, 0), 0);
        rt_release_all(outs, 3);
        pd_tensor_release(&seen);
    }
    rt_release_all(xs, 3);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, OptionalInputIsSeenWhenGivenAndAbsentWhenUndefined)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[2] = {rt_vec_f64(2, (double[]){1, 2}), rt_vec_f64(1, (double[]){3})};
    pd_tensor bias = rt_tensor(PD_FLOAT64, 0, NULL, (double[]){0.5});
    pd_tensor outs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_tensor seen = PD_TENSOR_UNDEFINED;
    pd_arg in[2] = {pd_arg_of(NULL), pd_arg_of(&bias)};
    in[0] = pd_arg_named(NULL, xs, 2); /* a vector by position */
    pd_arg out[2] = {pd_arg_named("Out", outs, 2), pd_arg_named("Seen", &seen, 1)};
    PD_ASSERT_OK(pd_run(reg, "rt_vec", in, 2, NULL, 0, out, 2));
    PD_EXPECT_EQ(pd_dim(&seen, 0), 1);
    PD_EXPECT_NEAR(rt_at(&outs[0], 1), 2.5, 0);
    PD_EXPECT_NEAR(rt_at(&outs[1], 0), 3.5, 0);
    rt_release_all(outs, 2);
    pd_tensor_release(&seen);

    /* An undefined tensor bound to an optional input means "absent". */
    pd_tensor undefined = PD_TENSOR_UNDEFINED;
    pd_arg in2[2] = {pd_arg_named("X", xs, 2), pd_arg_named("Bias", &undefined, 1)};
    PD_ASSERT_OK(pd_run(reg, "rt_vec", in2, 2, NULL, 0, out, 2));
    PD_EXPECT_EQ(pd_dim(&seen, 0), 0);
    PD_EXPECT_NEAR(rt_at(&outs[0], 1), 2, 0);
    rt_release_all(outs, 2);
    pd_tensor_release(&seen);

    pd_arg two_biases[2] = {pd_arg_named("X", xs, 2), pd_arg_named("Bias", xs, 2)};
    PD_EXPECT_ERROR(pd_run(reg, "rt_vec", two_biases, 2, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_vec: input 'Bias' takes at most one tensor, but 2 were given");
    pd_tensor_release(&bias);
    rt_release_all(xs, 2);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, RejectsEmptyOrUndefinedItemsOfAVectorInput)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[2] = {rt_vec_f64(1, (double[]){1}), PD_TENSOR_UNDEFINED};
    pd_arg none = pd_arg_named("X@VECTOR", xs, 0);
    PD_EXPECT_ERROR(pd_run(reg, "rt_vec", &none, 1, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_vec: vector input 'X' takes at least one tensor, but none was given");
    PD_EXPECT_ERROR(pd_run(reg, "rt_vec", NULL, 0, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_vec: vector input 'X' takes at least one tensor");
    pd_arg undef = pd_arg_named("X", xs, 2);
    PD_EXPECT_ERROR(pd_run(reg, "rt_vec", &undef, 1, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_vec: item 1 of vector input 'X' is an undefined tensor");
    pd_tensor_release(&xs[0]);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, OptionalVectorInputTakesZeroOrMoreTensors)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[2] = {rt_vec_f64(1, (double[]){1}), rt_vec_f64(1, (double[]){2})};
    for (int n = 0; n <= 2; ++n) {
        pd_tensor count = PD_TENSOR_UNDEFINED;
        pd_arg in = pd_arg_named("X", xs, n);
        pd_arg out = pd_arg_of(&count);
        PD_ASSERT_OK(pd_run(reg, "rt_optvec", &in, 1, NULL, 0, &out, 1));
        PD_EXPECT_NEAR(rt_at(&count, 0), n, 0);
        pd_tensor_release(&count);
    }
    rt_release_all(xs, 2);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, VectorOutputNeedsRoomForEveryItemAndWritesNothingOtherwise)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[3] = {rt_vec_f64(1, (double[]){1}), rt_vec_f64(1, (double[]){2}),
                       rt_vec_f64(1, (double[]){3})};
    pd_tensor outs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_tensor seen = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_named("X", xs, 3);
    pd_arg out[2] = {pd_arg_named("Seen", &seen, 1), pd_arg_named("Out", outs, 2)};
    PD_EXPECT_ERROR(pd_run(reg, "rt_vec", &in, 1, NULL, 0, out, 2), PD_ERR_INVALID_ARGUMENT,
                    "rt_vec: output 'Out' has 3 tensors, but its pd_arg has room for 2");
    /* All or nothing: Seen, which came first and was fine, was not written either. */
    PD_EXPECT(!pd_defined(&seen));
    PD_EXPECT_EQ(out[0].count, 1);
    PD_EXPECT_EQ(out[1].count, 2);
    rt_release_all(xs, 3);
    pd_registry_destroy(reg);
}

/* --- Outputs -----------------------------------------------------------------------------------
 */

PD_TEST(Runner, VectorOutputCountIsWhatTheKernelSets)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    for (int n = 0; n <= 12; n += 3) { /* 12 is more items than the context keeps inline */
        pd_tensor outs[12];
        pd_attr attrs[2] = {pd_attr_of_int("n", n), pd_attr_of_bool("skip", false)};
        pd_arg out = pd_arg_named("Out", outs, 12);
        PD_ASSERT_OK(pd_run(reg, "rt_vec_out", NULL, 0, attrs, 2, &out, 1));
        PD_ASSERT_EQ(out.count, n);
        for (int k = 0; k < n; ++k) {
            PD_EXPECT_EQ(pd_dtype(&outs[k]), PD_INT32);
            PD_EXPECT_EQ(pd_dim(&outs[k], 0), k);
            for (int i = 0; i < k; ++i)
                PD_EXPECT_NEAR(rt_at(&outs[k], i), k, 0);
        }
        rt_release_all(outs, n);
    }
    pd_tensor outs[3] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_attr skip[2] = {pd_attr_of_int("n", 3), pd_attr_of_bool("skip", true)};
    pd_arg out = pd_arg_named("Out", outs, 3);
    PD_EXPECT_ERROR(pd_run(reg, "rt_vec_out", NULL, 0, skip, 2, &out, 1), PD_ERR_OP_FAILED,
                    "rt_vec_out: item 1 of output 'Out' was not set by the kernel");
    PD_EXPECT(!pd_defined(&outs[0]));
    pd_registry_destroy(reg);
}

PD_TEST(Runner, OptionalOutputMayStayUnset)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2});
    pd_arg in = pd_arg_of(&x);
    for (int extra = 0; extra <= 1; ++extra) {
        pd_tensor out = PD_TENSOR_UNDEFINED, ex = PD_TENSOR_UNDEFINED;
        pd_arg outs[2] = {pd_arg_of(&out), pd_arg_named("Extra", &ex, 1)};
        pd_attr a = pd_attr_of_bool("extra", extra);
        PD_ASSERT_OK(pd_run(reg, "rt_opt_out", &in, 1, &a, 1, outs, 2));
        PD_EXPECT_EQ(outs[1].count, extra);
        PD_EXPECT_EQ(pd_defined(&ex), extra);
        PD_EXPECT(pd_data(&out) == pd_data(&x)); /* set_output of an input shares it */
        pd_tensor_release(&out);
        pd_tensor_release(&ex);
    }
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, OutputsWithoutInferenceAreWhatTheKernelSets)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor a = rt_vec_f64(2, (double[]){1, 2}), b = rt_vec_f64(3, (double[]){3, 4, 5});
    pd_arg in[2] = {pd_arg_of(&a), pd_arg_of(&b)};
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg o = pd_arg_of(&out);
    pd_attr eager = pd_attr_of_bool("lazy", false);
    PD_ASSERT_OK(pd_run(reg, "rt_free_out", in, 2, &eager, 1, &o, 1));
    PD_ASSERT_EQ(pd_dim(&out, 0), 5);
    for (int i = 0; i < 5; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), i + 1, 0);
    pd_tensor_release(&out);
    pd_attr lazy = pd_attr_of_bool("lazy", true);
    PD_EXPECT_ERROR(pd_run(reg, "rt_free_out", in, 2, &lazy, 1, &o, 1), PD_ERR_OP_FAILED,
                    "rt_free_out: pd_output: output 'Out' item 0 has no inferred shape");
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_registry_destroy(reg);
}

static pd_status run_fixed(pd_registry *reg, int32_t mode, pd_tensor *out)
{
    pd_tensor x = rt_vec_f64(1, (double[]){1});
    pd_arg in = pd_arg_of(&x);
    pd_attr a = pd_attr_of_int("mode", mode);
    pd_arg o = pd_arg_of(out);
    pd_status s = pd_run(reg, "rt_fixed", &in, 1, &a, 1, &o, 1);
    pd_tensor_release(&x);
    return s;
}

PD_TEST(Runner, RejectsOutputShapeMismatchNamingBothShapes)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(run_fixed(reg, 0, &out), PD_ERR_OP_FAILED,
                    "rt_fixed: output 'Out' has shape [2, 3] but infer_shape said [3, 2]");
    PD_EXPECT(!pd_defined(&out));
    pd_registry_destroy(reg);
}

PD_TEST(Runner, RejectsOutputDtypeMismatch)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(run_fixed(reg, 1, &out), PD_ERR_OP_FAILED,
                    "rt_fixed: output 'Out' has dtype float64 but infer_dtype said float32");
    PD_EXPECT(!pd_defined(&out));
    pd_registry_destroy(reg);
}

PD_TEST(Runner, RejectsOutputTheKernelDidNotSet)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(run_fixed(reg, 2, &out), PD_ERR_OP_FAILED,
                    "rt_fixed: output 'Out' was not set by the kernel");
    PD_EXPECT_OK(run_fixed(reg, 3, &out));
    PD_EXPECT_EQ(pd_dim(&out, 0), 3);
    PD_EXPECT_EQ(pd_dtype(&out), PD_FLOAT32);
    pd_tensor_release(&out);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, OutputsAreCheckedAgainstTheDefaultInferenceToo)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(3, (double[]){1, 2, 3});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    pd_attr a = pd_attr_of_int("mode", 0);
    PD_ASSERT_OK(pd_run(reg, "rt_mirror", &in, 1, &a, 1, &o, 1));
    pd_tensor_release(&out);
    a = pd_attr_of_int("mode", 1);
    PD_EXPECT_ERROR(pd_run(reg, "rt_mirror", &in, 1, &a, 1, &o, 1), PD_ERR_OP_FAILED,
                    "rt_mirror: output 'Out' has shape [1] but the default inference from input "
                    "'X' said [3]");
    a = pd_attr_of_int("mode", 2);
    PD_EXPECT_ERROR(pd_run(reg, "rt_mirror", &in, 1, &a, 1, &o, 1), PD_ERR_OP_FAILED,
                    "rt_mirror: output 'Out' has dtype float32 but the default inference from "
                    "input 'X' said float64");
    PD_EXPECT(!pd_defined(&out));
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* --- Inplace ------------------------------------------------------------------------------------
 */

PD_TEST(Runner, InplaceOutputIsTheInputTensorItself)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(3, (double[]){1, -2, 3});
    void *data = pd_data(&x);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "rt_inplace", &in, 1, NULL, 0, &o, 1));
    PD_EXPECT(pd_data(&out) == data);
    PD_EXPECT(out.storage == x.storage);
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 2);
    PD_EXPECT_NEAR(rt_at(&x, 0), 2, 0);
    PD_EXPECT_NEAR(rt_at(&x, 1), -4, 0);
    PD_EXPECT_NEAR(rt_at(&out, 2), 6, 0);
    pd_tensor_release(&out);
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 1);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, InplaceVectorOutputsAreTheInputTensors)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[2] = {rt_vec_f64(2, (double[]){1, 2}), rt_vec_f64(1, (double[]){5})};
    pd_tensor y = rt_vec_f64(1, (double[]){9});
    pd_tensor outs[2], yout;
    pd_arg in[2] = {pd_arg_named("X", xs, 2), pd_arg_named("Y", &y, 1)};
    pd_arg o[2] = {pd_arg_named("Out", outs, 2), pd_arg_named("YOut", &yout, 1)};
    PD_ASSERT_OK(pd_run(reg, "rt_inplace_vec", in, 2, NULL, 0, o, 2));
    PD_ASSERT_EQ(o[0].count, 2);
    for (int k = 0; k < 2; ++k)
        PD_EXPECT(pd_data(&outs[k]) == pd_data(&xs[k]));
    PD_EXPECT_NEAR(rt_at(&xs[0], 1), 3, 0);
    PD_EXPECT_NEAR(rt_at(&xs[1], 0), 6, 0);
    PD_EXPECT(pd_data(&yout) == pd_data(&y));
    rt_release_all(outs, 2);
    rt_release_all(xs, 2);
    pd_tensor_release(&yout);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
}

/* --- Attrs --------------------------------------------------------------------------------------
 */

static const int32_t ints[] = {1, 2, 3};
static const float floats[] = {0.5f, 0.25f};
static const int64_t int64s[] = {10000000000LL, 1};
static const char *const strings[] = {"ab", "cde", ""};

static void every_attr(pd_attr *a)
{
    a[0] = pd_attr_of_bool("b", true);
    a[1] = pd_attr_of_int("i", -7);
    a[2] = pd_attr_of_float("f", 1.5f);
    a[3] = pd_attr_of_double("d", 2.25);
    a[4] = pd_attr_of_int64("i64", 1LL << 40);
    a[5] = pd_attr_of_string("s", "hello");
    a[6] = pd_attr_of_ints("ints", ints, 3);
    a[7] = pd_attr_of_floats("floats", floats, 2);
    a[8] = pd_attr_of_int64s("int64s", int64s, 2);
    a[9] = pd_attr_of_strings("strings", strings, 3);
}

static void expect_every_attr(const pd_tensor *out)
{
    const double want[10] = {1, -7, 1.5, 2.25, (double)(1LL << 40), 5, 6, 0.75, 10000000001.0, 5};
    PD_ASSERT_EQ(pd_numel(out), 10);
    for (int i = 0; i < 10; ++i)
        PD_EXPECT_NEAR(rt_at(out, i), want[i], 0);
}

PD_TEST(Runner, MatchesAttrsOfEveryTypeByNameInAnyOrder)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_attr a[10], reversed[10];
    every_attr(a);
    for (int i = 0; i < 10; ++i)
        reversed[i] = a[9 - i];
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "rt_attrs", NULL, 0, reversed, 10, &o, 1));
    expect_every_attr(&out);
    pd_tensor_release(&out);
    /* Unnamed attrs bind by position. */
    for (int i = 0; i < 10; ++i)
        a[i].name = NULL;
    PD_ASSERT_OK(pd_run(reg, "rt_attrs", NULL, 0, a, 10, &o, 1));
    expect_every_attr(&out);
    pd_tensor_release(&out);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, RejectsMissingUnknownAndWronglyTypedAttrsNamingThem)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_attr a[11];
    every_attr(a);
    pd_attr missing[9];
    memcpy(missing, a, 2 * sizeof *a);
    memcpy(missing + 2, a + 3, 7 * sizeof *a); /* no "f" */
    PD_EXPECT_ERROR(pd_run(reg, "rt_attrs", NULL, 0, missing, 9, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_attrs: attr 'f' (float) is missing; pass it in attrs, e.g. "
                    "pd_attr_of_float(\"f\", ...)");
    a[10] = pd_attr_of_int("q", 1);
    PD_EXPECT_ERROR(pd_run(reg, "rt_attrs", NULL, 0, a, 11, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_attrs: unknown attr 'q' (declared: b: bool, i: int, f: float");
    a[4] = pd_attr_of_int("i64", 3);
    PD_EXPECT_ERROR(pd_run(reg, "rt_attrs", NULL, 0, a, 10, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_attrs: attr 'i64' is declared int64_t, but an int was given");
    every_attr(a);
    a[6] = pd_attr_of_int64s("ints", int64s, 2);
    PD_EXPECT_ERROR(pd_run(reg, "rt_attrs", NULL, 0, a, 10, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_attrs: attr 'ints' is declared std::vector<int>, but a "
                    "std::vector<int64_t> was given");
    every_attr(a);
    a[9] = a[0];
    PD_EXPECT_ERROR(pd_run(reg, "rt_attrs", NULL, 0, a, 10, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_attrs: attr 'b' is given twice");
    every_attr(a);
    a[5] = pd_attr_of_string("s", NULL);
    PD_EXPECT_ERROR(pd_run(reg, "rt_attrs", NULL, 0, a, 10, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_attrs: attr 's' is a NULL string");
    every_attr(a);
    a[6] = pd_attr_of_ints("ints", NULL, 2);
    PD_EXPECT_ERROR(pd_run(reg, "rt_attrs", NULL, 0, a, 10, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_attrs: attr 'ints' has count 2 and NULL elements");
    every_attr(a);
    for (int i = 0; i < 11; ++i)
        a[i].name = NULL;
    PD_EXPECT_ERROR(pd_run(reg, "rt_attrs", NULL, 0, a, 11, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "rt_attrs: 11 attrs given, but the op declares 10");
    pd_registry_destroy(reg);
}

/* --- Handles, names, grad ops -------------------------------------------------------------------
 */

PD_TEST(Runner, RunsByHandleAndByNameAlike)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "rt_square");
    PD_ASSERT(op != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){3, -4});
    pd_tensor by_handle = PD_TENSOR_UNDEFINED, by_name = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o1 = pd_arg_of(&by_handle), o2 = pd_arg_of(&by_name);
    PD_ASSERT_OK(pd_op_run(op, &in, 1, NULL, 0, &o1, 1));
    PD_ASSERT_OK(pd_run(reg, "rt_square", &in, 1, NULL, 0, &o2, 1));
    for (int i = 0; i < 2; ++i) {
        PD_EXPECT_NEAR(rt_at(&by_handle, i), rt_at(&x, i) * rt_at(&x, i), 0);
        PD_EXPECT_NEAR(rt_at(&by_name, i), rt_at(&by_handle, i), 0);
    }
    pd_tensor_release(&by_handle);
    pd_tensor_release(&by_name);
    PD_EXPECT_ERROR(pd_run(reg, "rt_sqare", &in, 1, NULL, 0, NULL, 0), PD_ERR_NOT_FOUND,
                    "rt_sqare");
    PD_EXPECT_ERROR(pd_op_run(NULL, &in, 1, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "pd_op_run: op is NULL");
    PD_EXPECT_ERROR(pd_run(NULL, "rt_square", &in, 1, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "pd_run: registry is NULL");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, GradOpRunsByItsNameWithInputsBoundByDeclaredNames)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(3, (double[]){1, -2, 0.5});
    pd_tensor g = rt_vec_f64(3, (double[]){0.1, 0.2, 0.3});
    pd_tensor gx = PD_TENSOR_UNDEFINED;
    pd_arg in[2] = {pd_arg_named("Out@GRAD", &g, 1), pd_arg_named("X", &x, 1)};
    pd_arg out = pd_arg_named("X@GRAD", &gx, 1);
    PD_ASSERT_OK(pd_run(reg, "rt_square_grad", in, 2, NULL, 0, &out, 1));
    PD_EXPECT(pd_same_shape(&gx, &x)); /* default inference: X@GRAD mirrors X */
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_NEAR(rt_at(&gx, i), 2 * rt_at(&x, i) * rt_at(&g, i), 1e-15);
    pd_tensor_release(&gx);
    pd_tensor_release(&x);
    pd_tensor_release(&g);
    pd_registry_destroy(reg);
}

PD_TEST(Runner, DoubleGradOpRunsByItsName)
{
    pd_registry *reg = runner_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1.5, -2});
    pd_tensor dout = rt_vec_f64(2, (double[]){0.5, 4});
    pd_tensor ddx = rt_vec_f64(2, (double[]){3, 0.25});
    pd_tensor dx = PD_TENSOR_UNDEFINED, ddout = PD_TENSOR_UNDEFINED;
    pd_arg in[3] = {pd_arg_named("X@GRAD@GRAD", &ddx, 1), pd_arg_named("X", &x, 1),
                    pd_arg_named("Out@GRAD", &dout, 1)};
    pd_arg out[2] = {pd_arg_named("Out@GRAD@GRAD", &ddout, 1), pd_arg_named("X@GRAD", &dx, 1)};
    PD_ASSERT_OK(pd_run(reg, "rt_square_grad_grad", in, 3, NULL, 0, out, 2));
    for (int i = 0; i < 2; ++i) {
        PD_EXPECT_NEAR(rt_at(&dx, i), 2 * rt_at(&ddx, i) * rt_at(&dout, i), 1e-15);
        PD_EXPECT_NEAR(rt_at(&ddout, i), 2 * rt_at(&x, i) * rt_at(&ddx, i), 1e-15);
    }
    pd_tensor_release(&dx);
    pd_tensor_release(&ddout);
    pd_tensor_release(&x);
    pd_tensor_release(&dout);
    pd_tensor_release(&ddx);
    pd_registry_destroy(reg);
}

/* --- Nested op calls: ops linked into this program run another op from their kernel ---------- */

static const pd_op *nested_inner_op;

static void nested_inner(pd_kernel_ctx *ctx)
{
    PD_CHECK(!pd_attr_bool(ctx, 0), "inner failure");
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    for (int64_t i = 0; i < pd_numel(x); ++i)
        ((double *)out->data)[i] = 3 * ((const double *)x->data)[i];
}

/* Runs nested_inner on X; when it fails, Out is zeros, or with `rethrow` the call fails with
 * the inner message. */
static void nested_outer(pd_kernel_ctx *ctx)
{
    bool inner_fail = pd_attr_bool(ctx, 0), rethrow = pd_attr_bool(ctx, 1);
    pd_tensor *scratch_owned = pd_empty_like(ctx, pd_input(ctx, 0)); /* freed on both paths */
    (void)scratch_owned;
    pd_arg in = pd_arg_of((pd_tensor *)pd_input(ctx, 0));
    pd_attr fail = pd_attr_of_bool("fail", inner_fail);
    pd_tensor res = PD_TENSOR_UNDEFINED;
    pd_arg out = pd_arg_of(&res);
    if (pd_op_run(nested_inner_op, &in, 1, &fail, 1, &out, 1) != PD_OK) {
        PD_CHECK(!rethrow, "inner said: %s", pd_last_error());
        pd_set_output(ctx, 0,
                      pd_zeros(ctx, PD_FLOAT64, pd_place_cpu(), 1, pd_input(ctx, 0)->shape));
        return;
    }
    pd_set_output(ctx, 0, &res);
    pd_tensor_release(&res);
}

PD_BUILD_OP(nested_inner, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"fail: bool"},
            .kernel = nested_inner);
PD_BUILD_OP(nested_outer, .inputs = {"X"}, .outputs = {"Out"},
            .attrs = {"inner_fail: bool", "rethrow: bool"}, .kernel = nested_outer);

static pd_status run_nested(pd_registry *reg, bool inner_fail, bool rethrow, pd_tensor *out)
{
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2});
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(out);
    pd_attr a[2] = {pd_attr_of_bool("inner_fail", inner_fail), pd_attr_of_bool("rethrow", rethrow)};
    pd_status s = pd_run(reg, "nested_outer", &in, 1, a, 2, &o, 1);
    pd_tensor_release(&x);
    return s;
}

PD_TEST(Runner, NestedOpCallsUnwindToTheInnermostRunner)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_ASSERT_OK(pd_register_linked_ops(reg, NULL));
    nested_inner_op = pd_op_find(reg, "nested_inner");
    PD_ASSERT(nested_inner_op != NULL);
    pd_tensor out = PD_TENSOR_UNDEFINED;

    PD_ASSERT_OK(run_nested(reg, false, false, &out));
    PD_EXPECT_NEAR(rt_at(&out, 1), 6, 0);
    pd_tensor_release(&out);

    /* The inner throw lands in the inner runner; the outer kernel goes on. */
    PD_ASSERT_OK(run_nested(reg, true, false, &out));
    PD_EXPECT_NEAR(rt_at(&out, 1), 0, 0);
    pd_tensor_release(&out);

    /* And the outer kernel's own throw lands in the outer runner. */
    PD_EXPECT_ERROR(run_nested(reg, true, true, &out), PD_ERR_OP_FAILED,
                    "nested_outer: inner said: nested_inner: inner failure [runner_test.c:");
    PD_EXPECT(!pd_defined(&out));

    /* Both frames are gone: plain calls work as before. */
    PD_EXPECT_OK(run_nested(reg, false, false, &out));
    pd_tensor_release(&out);
    pd_registry_destroy(reg);
}
