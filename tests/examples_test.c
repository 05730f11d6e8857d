/*
 * examples_test.c - the reference ops of examples/relu and examples/concat, built from their
 * sources like an author builds them (tests/runner.cmake), checked against values computed
 * here independently: random inputs, several shapes including empty dimensions, float32 and
 * float64 (concat also integers), concat along axis 0, 1 and -1 of 2 to 4 inputs, both
 * gradients, and the ops' error messages.
 */
#include "runner_helpers.h"

static pd_registry *examples_registry(void)
{
    static const char *const modules[] = {"rt_example_relu", "rt_example_concat"};
    return rt_registry(modules, 2);
}

/* Element i of t, rounded to t's dtype the way the op computes (exact compare works). */
static double relu_ref(double x) { return x > 0 ? x : 0; }

static const int64_t relu_shapes[][4] = {{0}, {1, 7}, {2, 3, 4}, {2, 0, 3}, {3, 1000}};
static const int32_t relu_ndims[] = {0, 1, 3, 3, 2};

/* --- relu ------------------------------------------------------------------------------------ */

PD_TEST(ExampleRelu, ForwardMatchesMaxOfXAndZero)
{
    pd_registry *reg = examples_registry();
    PD_ASSERT(reg != NULL);
    pd_data_type dtypes[2] = {PD_FLOAT32, PD_FLOAT64};
    for (int d = 0; d < 2; ++d)
        for (size_t s = 0; s < sizeof relu_ndims / sizeof relu_ndims[0]; ++s) {
            pd_tensor x = rt_random(dtypes[d], relu_ndims[s], relu_shapes[s]);
            pd_tensor out = PD_TENSOR_UNDEFINED;
            pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
            PD_ASSERT_OK(pd_run(reg, "custom_relu", &in, 1, NULL, 0, &o, 1));
            PD_EXPECT(pd_same_shape(&out, &x));
            PD_EXPECT_EQ(pd_dtype(&out), dtypes[d]);
            for (int64_t i = 0; i < pd_numel(&x); ++i)
                PD_EXPECT_NEAR(rt_at(&out, i), relu_ref(rt_at(&x, i)), 0);
            pd_tensor_release(&out);
            pd_tensor_release(&x);
        }
    pd_registry_destroy(reg);
}

PD_TEST(ExampleRelu, BackwardPassesTheGradientWhereOutIsPositive)
{
    pd_registry *reg = examples_registry();
    PD_ASSERT(reg != NULL);
    pd_data_type dtypes[2] = {PD_FLOAT32, PD_FLOAT64};
    for (int d = 0; d < 2; ++d)
        for (size_t s = 0; s < sizeof relu_ndims / sizeof relu_ndims[0]; ++s) {
            pd_tensor x = rt_random(dtypes[d], relu_ndims[s], relu_shapes[s]);
            pd_tensor out = rt_tensor(dtypes[d], relu_ndims[s], relu_shapes[s], NULL);
            for (int64_t i = 0; i < pd_numel(&x); ++i)
                rt_set(&out, i, relu_ref(rt_at(&x, i)));
            pd_tensor g = rt_random(dtypes[d], relu_ndims[s], relu_shapes[s]);
            pd_tensor gx = PD_TENSOR_UNDEFINED;
            /* Bound by the names the grad op declares, in no particular order. */
            pd_arg in[3] = {pd_arg_named("Out@GRAD", &g, 1), pd_arg_named("X", &x, 1),
                            pd_arg_named("Out", &out, 1)};
            pd_arg o = pd_arg_named("X@GRAD", &gx, 1);
            PD_ASSERT_OK(pd_run(reg, "custom_relu_grad", in, 3, NULL, 0, &o, 1));
            PD_EXPECT(pd_same_shape(&gx, &x));
            PD_EXPECT_EQ(pd_dtype(&gx), dtypes[d]);
            for (int64_t i = 0; i < pd_numel(&x); ++i)
                PD_EXPECT_NEAR(rt_at(&gx, i), rt_at(&x, i) > 0 ? rt_at(&g, i) : 0, 0);
            pd_tensor_release(&gx);
            pd_tensor_release(&g);
            pd_tensor_release(&out);
            pd_tensor_release(&x);
        }
    pd_registry_destroy(reg);
}

PD_TEST(ExampleRelu, RejectsOtherPlacesAndOtherDtypesWithTheirMessages)
{
    pd_registry *reg = examples_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_random(PD_FLOAT32, 1, (int64_t[]){4});
    pd_tensor on_gpu = x; /* the same struct claiming another place: the op must refuse it */
    on_gpu.place = pd_place_gpu(0);
    pd_arg in = pd_arg_of(&on_gpu);
    /* Built from relu.c alone (no relu_cuda.cu): its weak launchers are NULL. */
    PD_EXPECT_ERROR(pd_run(reg, "custom_relu", &in, 1, NULL, 0, NULL, 0), PD_ERR_OP_FAILED,
                    "custom_relu: GPU Tensors need relu_cuda.cu, but this module was built "
                    "without it; build relu.c and relu_cuda.cu together (nvcc) to run on a GPU. "
                    "[relu.c:");
    pd_tensor on_custom = x;
    on_custom.place = pd_place_make(PD_PLACE_CUSTOM_FIRST, 0);
    in = pd_arg_of(&on_custom);
    PD_EXPECT_ERROR(pd_run(reg, "custom_relu", &in, 1, NULL, 0, NULL, 0), PD_ERR_OP_FAILED,
                    "custom_relu: x must be a CPU or GPU Tensor. [relu.c:");
    pd_tensor ints = rt_tensor(PD_INT32, 1, (int64_t[]){4}, (double[]){1, -1, 2, -2});
    in = pd_arg_of(&ints);
    PD_EXPECT_ERROR(pd_run(reg, "custom_relu", &in, 1, NULL, 0, NULL, 0), PD_ERR_OP_FAILED,
                    "custom_relu: function relu_forward is not implemented for data type "
                    "`int32` (input 'X'); it takes float32, float64 [relu.c:");
    pd_tensor g64 = rt_random(PD_FLOAT64, 1, (int64_t[]){4});
    pd_arg grad_in[3] = {pd_arg_of(&x), pd_arg_of(&x), pd_arg_of(&g64)};
    PD_EXPECT_ERROR(pd_run(reg, "custom_relu_grad", grad_in, 3, NULL, 0, NULL, 0), PD_ERR_OP_FAILED,
                    "custom_relu_grad: X, Out and Out@GRAD must have the same dtype, got "
                    "float32, float32 and float64. [relu.c:");
    pd_tensor_release(&g64);
    pd_tensor_release(&ints);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* --- concat ----------------------------------------------------------------------------------- */

/* For input k's element e: its flat index in the concatenation along `axis`. */
static int64_t concat_index(const pd_tensor *xs, int n, int k, int axis, int64_t e)
{
    int64_t inner = 1, total = 0, offset = 0;
    for (int d = axis + 1; d < xs[0].ndim; ++d)
        inner *= xs[0].shape[d];
    for (int j = 0; j < n; ++j) {
        if (j < k)
            offset += xs[j].shape[axis];
        total += xs[j].shape[axis];
    }
    int64_t len = xs[k].shape[axis];
    int64_t i = e % inner, a = (e / inner) % len, o = e / inner / len;
    return (o * total + offset + a) * inner + i;
}

typedef struct concat_case {
    int32_t ndim;
    int64_t shape[3]; /* of X[0]; the axis dim of each X[k] is drawn at random from 0..3 */
} concat_case;

static const concat_case concat_cases[] = {
    {1, {4}}, {2, {3, 5}}, {2, {0, 3}}, {3, {2, 3, 4}}, {3, {2, 1, 3}},
};

/* Runs forward and backward for one dtype / case / axis / input count and checks both. */
static void check_concat(pd_registry *reg, pd_data_type dtype, const concat_case *c, int64_t axis,
                         int n)
{
    int ax = (int)(axis < 0 ? axis + c->ndim : axis);
    if (ax < 0 || ax >= c->ndim)
        return;
    pd_tensor xs[4];
    int64_t total = 0;
    for (int k = 0; k < n; ++k) {
        int64_t shape[3];
        memcpy(shape, c->shape, sizeof shape);
        shape[ax] = (int64_t)pd_test_uniform(0, 4); /* 0..3: empty inputs too */
        total += shape[ax];
        xs[k] = rt_random(dtype, c->ndim, shape);
        if (dtype == PD_INT32 || dtype == PD_INT64)
            for (int64_t e = 0; e < pd_numel(&xs[k]); ++e)
                rt_set(&xs[k], e, (double)(int64_t)pd_test_uniform(-1000, 1000));
    }
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_named("X", xs, n), o = pd_arg_of(&out);
    pd_attr a = pd_attr_of_int64("axis", axis);
    PD_ASSERT_OK(pd_run(reg, "custom_concat", &in, 1, &a, 1, &o, 1));
    PD_ASSERT_EQ(pd_ndim(&out), c->ndim);
    PD_EXPECT_EQ(pd_dtype(&out), dtype);
    for (int d = 0; d < c->ndim; ++d)
        PD_EXPECT_EQ(pd_dim(&out, d), d == ax ? total : c->shape[d]);
    for (int k = 0; k < n; ++k)
        for (int64_t e = 0; e < pd_numel(&xs[k]); ++e)
            PD_EXPECT_NEAR(rt_at(&out, concat_index(xs, n, k, ax, e)), rt_at(&xs[k], e), 0);

    /* Backward: Out@GRAD split back into one gradient per input. */
    pd_tensor g = rt_random(dtype, out.ndim, out.shape);
    pd_tensor gx[4];
    pd_arg gin[2] = {pd_arg_named("Out@GRAD", &g, 1), pd_arg_named("X", xs, n)};
    pd_arg go = pd_arg_named("X@GRAD", gx, 4);
    PD_ASSERT_OK(pd_run(reg, "custom_concat_grad", gin, 2, &a, 1, &go, 1));
    PD_ASSERT_EQ(go.count, n);
    for (int k = 0; k < n; ++k) {
        PD_EXPECT(pd_same_shape(&gx[k], &xs[k]));
        PD_EXPECT_EQ(pd_dtype(&gx[k]), dtype);
        for (int64_t e = 0; e < pd_numel(&xs[k]); ++e)
            PD_EXPECT_NEAR(rt_at(&gx[k], e), rt_at(&g, concat_index(xs, n, k, ax, e)), 0);
    }
    rt_release_all(gx, n);
    pd_tensor_release(&g);
    pd_tensor_release(&out);
    rt_release_all(xs, n);
}

PD_TEST(ExampleConcat, ForwardAndBackwardMatchAlongAxis0And1AndMinus1)
{
    pd_registry *reg = examples_registry();
    PD_ASSERT(reg != NULL);
    pd_data_type dtypes[4] = {PD_FLOAT32, PD_FLOAT64, PD_INT32, PD_INT64};
    int64_t axes[3] = {0, 1, -1};
    for (int d = 0; d < 4; ++d)
        for (size_t c = 0; c < sizeof concat_cases / sizeof concat_cases[0]; ++c)
            for (int a = 0; a < 3; ++a)
                for (int n = 2; n <= 4; ++n)
                    check_concat(reg, dtypes[d], &concat_cases[c], axes[a], n);
    pd_registry_destroy(reg);
}

PD_TEST(ExampleConcat, SingleInputIsACopy)
{
    pd_registry *reg = examples_registry();
    PD_ASSERT(reg != NULL);
    check_concat(reg, PD_FLOAT64, &concat_cases[3], -2, 1);
    pd_registry_destroy(reg);
}

PD_TEST(ExampleConcat, ManyInputsForwardAndBackward)
{
    /* More inputs than the kernel's on-stack list and the context's inline output items. */
    enum { N = 70 };
    pd_registry *reg = examples_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[N], gx[N];
    for (int k = 0; k < N; ++k)
        xs[k] = rt_tensor(PD_FLOAT64, 2, (int64_t[]){1, 2}, (double[]){k, -k});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_named("X", xs, N), o = pd_arg_of(&out);
    pd_attr a = pd_attr_of_int64("axis", 0);
    PD_ASSERT_OK(pd_run(reg, "custom_concat", &in, 1, &a, 1, &o, 1));
    PD_ASSERT_EQ(pd_dim(&out, 0), N);
    for (int k = 0; k < N; ++k) {
        PD_EXPECT_NEAR(rt_at(&out, 2 * k), k, 0);
        PD_EXPECT_NEAR(rt_at(&out, 2 * k + 1), -k, 0);
    }
    pd_arg gin[2] = {pd_arg_named("X", xs, N), pd_arg_named("Out@GRAD", &out, 1)};
    pd_arg go = pd_arg_named("X@GRAD", gx, N);
    PD_ASSERT_OK(pd_run(reg, "custom_concat_grad", gin, 2, &a, 1, &go, 1));
    PD_ASSERT_EQ(go.count, N);
    for (int k = 0; k < N; ++k)
        PD_EXPECT_NEAR(rt_at(&gx[k], 1), -k, 0);
    rt_release_all(gx, N);
    pd_tensor_release(&out);
    rt_release_all(xs, N);
    pd_registry_destroy(reg);
}

PD_TEST(ExampleConcat, GpuInputsNeedTheCudaHalfWhenBuiltFromConcatCAlone)
{
    pd_registry *reg = examples_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[2] = {rt_random(PD_FLOAT32, 1, (int64_t[]){2}),
                       rt_random(PD_FLOAT32, 1, (int64_t[]){3})};
    pd_tensor on_gpu[2] = {xs[0], xs[1]}; /* claiming another place: the op must refuse them */
    on_gpu[0].place = on_gpu[1].place = pd_place_gpu(0);
    pd_arg in = pd_arg_named("X", on_gpu, 2);
    pd_attr a = pd_attr_of_int64("axis", 0);
    PD_EXPECT_ERROR(pd_run(reg, "custom_concat", &in, 1, &a, 1, NULL, 0), PD_ERR_OP_FAILED,
                    "custom_concat: GPU Tensors need concat_cuda.cu, but this module was built "
                    "without it; build concat.c and concat_cuda.cu together (nvcc) to run on a "
                    "GPU. [concat.c:");
    on_gpu[0].place = on_gpu[1].place = pd_place_make(PD_PLACE_CUSTOM_FIRST, 0);
    PD_EXPECT_ERROR(pd_run(reg, "custom_concat", &in, 1, &a, 1, NULL, 0), PD_ERR_OP_FAILED,
                    "custom_concat: X[0] must be a CPU or GPU Tensor. [concat.c:");
    rt_release_all(xs, 2);
    pd_registry_destroy(reg);
}

static pd_status run_concat(pd_registry *reg, pd_tensor *xs, int n, const pd_attr *a, int n_attrs)
{
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_named("X", xs, n), o = pd_arg_of(&out);
    pd_status s = pd_run(reg, "custom_concat", &in, 1, a, n_attrs, &o, 1);
    pd_tensor_release(&out);
    return s;
}

PD_TEST(ExampleConcat, RejectsBadAxisRanksDimsDtypesAndAttrsNamingThem)
{
    pd_registry *reg = examples_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[2] = {rt_random(PD_FLOAT32, 2, (int64_t[]){3, 2}),
                       rt_random(PD_FLOAT32, 2, (int64_t[]){3, 5})};
    pd_attr axis2 = pd_attr_of_int64("axis", 2);
    PD_EXPECT_ERROR(run_concat(reg, xs, 2, &axis2, 1), PD_ERR_OP_FAILED,
                    "custom_concat: attr 'axis' is 2, but it must be in [-2, 2) for rank-2 "
                    "inputs. [concat.c:");
    pd_attr axis_m3 = pd_attr_of_int64("axis", -3);
    PD_EXPECT_ERROR(run_concat(reg, xs, 2, &axis_m3, 1), PD_ERR_OP_FAILED,
                    "custom_concat: attr 'axis' is -3");
    pd_attr axis0 = pd_attr_of_int64("axis", 0);
    PD_EXPECT_ERROR(run_concat(reg, xs, 2, &axis0, 1), PD_ERR_OP_FAILED,
                    "custom_concat: input X[1] has size 5 in dim 1, but X[0] has 2; only dim 0 "
                    "(the axis) may differ. [concat.c:");
    pd_attr axis_int = pd_attr_of_int("axis", 1);
    PD_EXPECT_ERROR(run_concat(reg, xs, 2, &axis_int, 1), PD_ERR_INVALID_ARGUMENT,
                    "custom_concat: attr 'axis' is declared int64_t, but an int was given");
    PD_EXPECT_ERROR(run_concat(reg, xs, 2, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "custom_concat: attr 'axis' (int64_t) is missing");
    pd_attr axis1 = pd_attr_of_int64("axis", 1);
    PD_EXPECT_OK(run_concat(reg, xs, 2, &axis1, 1));
    PD_EXPECT_ERROR(run_concat(reg, xs, 0, &axis1, 1), PD_ERR_INVALID_ARGUMENT,
                    "custom_concat: vector input 'X' takes at least one tensor");

    pd_tensor rank3 = rt_random(PD_FLOAT32, 3, (int64_t[]){3, 2, 1});
    pd_tensor mixed[2] = {xs[0], rank3};
    PD_EXPECT_ERROR(run_concat(reg, mixed, 2, &axis1, 1), PD_ERR_OP_FAILED,
                    "custom_concat: input X[1] has rank 3, but X[0] has rank 2. [concat.c:");
    pd_tensor f64 = rt_random(PD_FLOAT64, 2, (int64_t[]){3, 1});
    pd_tensor dtypes[2] = {xs[0], f64};
    PD_EXPECT_ERROR(run_concat(reg, dtypes, 2, &axis1, 1), PD_ERR_OP_FAILED,
                    "custom_concat: input X[1] is float64, but X[0] is float32; all inputs must "
                    "have the same dtype. [concat.c:");
    pd_tensor scalar = rt_tensor(PD_FLOAT32, 0, NULL, (double[]){1});
    PD_EXPECT_ERROR(run_concat(reg, &scalar, 1, &axis0, 1), PD_ERR_OP_FAILED,
                    "custom_concat: inputs must have at least one dimension, got a scalar.");
    pd_tensor_release(&scalar);
    pd_tensor_release(&f64);
    pd_tensor_release(&rank3);
    rt_release_all(xs, 2);
    pd_registry_destroy(reg);
}

PD_TEST(ExampleConcat, GradRejectsAnOutGradOfTheWrongShape)
{
    pd_registry *reg = examples_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor xs[2] = {rt_random(PD_FLOAT64, 2, (int64_t[]){2, 2}),
                       rt_random(PD_FLOAT64, 2, (int64_t[]){2, 3})};
    pd_tensor g = rt_random(PD_FLOAT64, 2, (int64_t[]){2, 4});
    pd_tensor gx[2];
    pd_attr a = pd_attr_of_int64("axis", -1);
    pd_arg in[2] = {pd_arg_named("X", xs, 2), pd_arg_named("Out@GRAD", &g, 1)};
    pd_arg o = pd_arg_named("X@GRAD", gx, 2);
    PD_EXPECT_ERROR(pd_run(reg, "custom_concat_grad", in, 2, &a, 1, &o, 1), PD_ERR_OP_FAILED,
                    "custom_concat_grad: Out@GRAD must have the shape of the concatenated X "
                    "(rank 2, 5 along axis 1). [concat.c:");
    PD_EXPECT_EQ(o.count, 2); /* untouched */
    pd_arg small = pd_arg_named("X@GRAD", gx, 1);
    pd_tensor_release(&g);
    g = rt_random(PD_FLOAT64, 2, (int64_t[]){2, 5});
    PD_EXPECT_ERROR(pd_run(reg, "custom_concat_grad", in, 2, &a, 1, &small, 1),
                    PD_ERR_INVALID_ARGUMENT,
                    "custom_concat_grad: output 'X@GRAD' has 2 tensors, but its pd_arg has room "
                    "for 1");
    pd_tensor_release(&g);
    rt_release_all(xs, 2);
    pd_registry_destroy(reg);
}
