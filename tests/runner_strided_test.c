/*
 * runner_strided_test.c - the runner and ABI 2.0: a strided input reaches a dense op as a
 * contiguous copy and an op that accepts strided inputs as is (proved by ops that record
 * pd_is_contiguous, tests/ops/strided_ops.c), per-input declarations, hand-made dense structs,
 * inplace inputs, the storage-bounds check, views and custom places in op code, malformed
 * declarations, and the refusal of modules built against ABI 1.
 */
#include "runner_helpers.h"

static pd_registry *strided_registry(void) { return rt_registry1("st_strided_ops"); }

/* A [2, 3] float32 tensor holding 0 .. 5. */
static pd_tensor iota23(void)
{
    const int64_t shape[2] = {2, 3};
    return rt_tensor(PD_FLOAT32, 2, shape, (double[]){0, 1, 2, 3, 4, 5});
}

/* Runs a probe op on x; *contig gets what the kernel saw, out its values. */
static pd_status run_probe(pd_registry *reg, const char *op, pd_tensor *x, pd_tensor *out,
                           int32_t *contig)
{
    pd_tensor outs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_arg in = pd_arg_of(x), o[2] = {pd_arg_of(&outs[0]), pd_arg_of(&outs[1])};
    pd_status st = pd_run(reg, op, &in, 1, NULL, 0, o, 2);
    if (st == PD_OK) {
        *contig = ((int32_t *)outs[1].data)[0];
        *out = outs[0];
        pd_tensor_release(&outs[1]);
    }
    return st;
}

/* out holds x^T of iota23 in C order: [3, 2] = 0 3 1 4 2 5. */
static void expect_transposed_values(const pd_tensor *out)
{
    static const float want[6] = {0, 3, 1, 4, 2, 5};
    PD_EXPECT_EQ(out->shape[0], 3);
    PD_EXPECT_EQ(out->shape[1], 2);
    for (int i = 0; i < 6; ++i)
        PD_EXPECT_EQ(((const float *)out->data)[i], want[i]);
}

PD_TEST(RunnerStrided, MakesATransposedInputContiguousForADenseOp)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota23(), xt, out;
    PD_ASSERT_OK(pd_tensor_transpose(&xt, &x, 0, 1));
    int32_t contig = -1;
    PD_ASSERT_OK(run_probe(reg, "st_dense_probe", &xt, &out, &contig));
    PD_EXPECT_EQ(contig, 1);
    expect_transposed_values(&out);
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 2); /* the call's copy is gone; x and xt remain */
    pd_tensor_release(&out);
    pd_tensor_release(&xt);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, PassesATransposedInputAsIsToAnOpThatAcceptsStridedInputs)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota23(), xt, out;
    PD_ASSERT_OK(pd_tensor_transpose(&xt, &x, 0, 1));
    int32_t contig = -1;
    PD_ASSERT_OK(run_probe(reg, "st_strided_probe", &xt, &out, &contig));
    PD_EXPECT_EQ(contig, 0);
    expect_transposed_values(&out);
    pd_tensor_release(&out);
    pd_tensor_release(&xt);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, PerInputDeclarationKeepsOnlyThatInputStrided)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota23(), a, b, seen = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_transpose(&a, &x, 0, 1));
    PD_ASSERT_OK(pd_tensor_transpose(&b, &x, 1, 0));
    pd_arg in[2] = {pd_arg_of(&a), pd_arg_of(&b)}, o = pd_arg_of(&seen);
    PD_ASSERT_OK(pd_run(reg, "st_mixed", in, 2, NULL, 0, &o, 1));
    PD_EXPECT_EQ(((int32_t *)seen.data)[0], 1); /* A: made contiguous */
    PD_EXPECT_EQ(((int32_t *)seen.data)[1], 0); /* B: declared strided, passed as is */
    rt_release_all((pd_tensor[]){seen, a, b, x}, 4);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, HandMadeDenseStructReachesAStridedOpWithItsStridesFilled)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    float buf[6] = {0, 1, 2, 3, 4, 5};
    pd_tensor x = PD_TENSOR_UNDEFINED; /* as a 0.1 host fills it: no storage, strides 0 */
    x.data = buf;
    x.dtype = PD_FLOAT32;
    x.ndim = 2;
    x.shape[0] = 3;
    x.shape[1] = 2;
    x.place = pd_place_cpu();
    pd_tensor out;
    int32_t contig = -1;
    PD_ASSERT_OK(run_probe(reg, "st_strided_probe", &x, &out, &contig)); /* reads x->strides */
    PD_EXPECT_EQ(contig, 1);
    for (int i = 0; i < 6; ++i)
        PD_EXPECT_EQ(((float *)out.data)[i], (float)i);
    PD_EXPECT_EQ(x.strides[0], 0); /* the host's struct is left as it was */
    pd_tensor_release(&out);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, RefusesAStridedInputThatADenseOpWritesInPlace)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota23(), xt;
    PD_ASSERT_OK(pd_tensor_transpose(&xt, &x, 0, 1));
    pd_arg in = pd_arg_of(&xt);
    PD_EXPECT_ERROR(pd_run(reg, "st_add_one", &in, 1, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "st_add_one: input 'X' is a strided view and the op writes it in place");
    PD_EXPECT_EQ(((float *)x.data)[1], 1.0f); /* untouched */
    pd_arg dense = pd_arg_of(&x);
    PD_EXPECT_OK(pd_run(reg, "st_add_one", &dense, 1, NULL, 0, NULL, 0));
    PD_EXPECT_EQ(((float *)x.data)[1], 2.0f);
    pd_tensor_release(&xt);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* --- Storage bounds ----------------------------------------------------------------------------
 */

PD_TEST(RunnerStrided, RefusesAnInputWhoseShapeExceedsItsStorage)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota23(), out;
    pd_tensor bad = x; /* a host's edited copy (no reference) */
    bad.shape[0] = 100;
    int32_t contig;
    PD_EXPECT_ERROR(run_probe(reg, "st_dense_probe", &bad, &out, &contig), PD_ERR_INVALID_ARGUMENT,
                    "st_dense_probe: input 'X' reaches bytes [0, 1200) of its storage, which "
                    "holds 24 bytes (shape [100, 3], strides [3, 1], data at byte 0)");
    PD_EXPECT_CONTAINS(pd_last_error(), "expected a shape, strides and offset that stay inside");
    bad = x;
    bad.data = (float *)x.data + 4; /* data moved past the start: 2 of 6 elements left */
    PD_EXPECT_ERROR(run_probe(reg, "st_dense_probe", &bad, &out, &contig), PD_ERR_INVALID_ARGUMENT,
                    "input 'X' reaches bytes [16, 40)");
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 1);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, RefusesAStridedInputWhoseStridesExceedItsStorage)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota23(), xt, out;
    PD_ASSERT_OK(pd_tensor_transpose(&xt, &x, 0, 1));
    pd_tensor bad = xt;
    bad.strides[1] = 5; /* [3, 2] with strides [1, 5]: element [2, 1] is 7 */
    int32_t contig;
    PD_EXPECT_ERROR(run_probe(reg, "st_strided_probe", &bad, &out, &contig),
                    PD_ERR_INVALID_ARGUMENT,
                    "st_strided_probe: input 'X' reaches bytes [0, 32) of its storage, which "
                    "holds 24 bytes (shape [3, 2], strides [1, 5]");
    PD_EXPECT_ERROR(run_probe(reg, "st_dense_probe", &bad, &out, &contig), PD_ERR_INVALID_ARGUMENT,
                    "st_dense_probe: input 'X' reaches bytes [0, 32)");
    pd_tensor_release(&xt);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* --- Op code -----------------------------------------------------------------------------------
 */

PD_TEST(RunnerStrided, OpCodeTransposesAndMakesContiguousThroughItsContext)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota23(), out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "st_ctx_transpose", &in, 1, NULL, 0, &o, 1));
    expect_transposed_values(&out);
    PD_EXPECT(pd_is_contiguous(&out));
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, OpCodeSlicesBackwardsAndExpands)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(4, (double[]){1, 2, 3, 4}), out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "st_reverse_expand", &in, 1, NULL, 0, &o, 1));
    PD_EXPECT_EQ(out.shape[0], 4);
    PD_EXPECT_EQ(out.shape[1], 3);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j)
            PD_EXPECT_EQ(((double *)out.data)[3 * i + j], 4.0 - i);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, OpCodeLooksUpACustomPlaceThroughTheTable)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    int32_t npu = 0;
    PD_ASSERT_OK(pd_device_type_register("st_npu", &npu));
    pd_tensor x = iota23(), type = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&type);
    PD_ASSERT_OK(pd_run(reg, "st_custom_place", &in, 1, NULL, 0, &o, 1));
    PD_EXPECT_EQ(((int32_t *)type.data)[0], npu);
    pd_tensor_release(&type);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* --- Declarations and ABI ----------------------------------------------------------------------
 */

static const char *module_file(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s.so", name);
    return pd_test_path(rel);
}

PD_TEST(RunnerStrided, ModuleWithAnUnknownOpFlagIsRefused)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_ERROR(pd_module_load(reg, module_file("tm_strided_bad_flags"), NULL),
                    PD_ERR_INVALID_MODULE, "op 'sb_op' (");
    PD_EXPECT_CONTAINS(pd_last_error(), "has flags 0x10 that this runtime does not know");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, ModuleWithAStridedBitPastItsInputsIsRefused)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_ERROR(pd_module_load(reg, module_file("tm_strided_bad_bit"), NULL),
                    PD_ERR_INVALID_MODULE,
                    "has strided_inputs 0x9, which names input 3, but "
                    "the op declares 2 inputs");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, ModuleBuiltAgainstAbi1IsRefusedWithBothVersionsAndTheFix)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    char want[128];
    snprintf(want, sizeof want,
             "was built against pdext ABI 1.1, but this runtime (pdext 0.2.0) provides ABI %d.%d",
             PD_ABI_MAJOR, PD_ABI_MINOR);
    PD_EXPECT_ERROR(pd_module_load(reg, module_file("tm_abi_v1"), NULL), PD_ERR_ABI_MISMATCH, want);
    PD_EXPECT_CONTAINS(pd_last_error(), "rebuild against pdext 2");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

PD_TEST(RunnerStrided, OpCodeTransposeWithAnAxisOutOfRangeFailsNamingIt)
{
    pd_registry *reg = strided_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = iota23(), out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    pd_attr good[2] = {pd_attr_of_int("a", -1), pd_attr_of_int("b", 0)};
    PD_ASSERT_OK(pd_run(reg, "st_transpose_axes", &in, 1, good, 2, &o, 1));
    expect_transposed_values(&out);
    pd_tensor_release(&out);
    pd_attr bad[2] = {pd_attr_of_int("a", 0), pd_attr_of_int("b", 5)};
    PD_EXPECT_ERROR(pd_run(reg, "st_transpose_axes", &in, 1, bad, 2, &o, 1), PD_ERR_OP_FAILED,
                    "st_transpose_axes: pd_tensor_permute: dims entry 5 is out of range for a "
                    "tensor of ndim 2");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}
