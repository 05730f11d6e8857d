/*
 * aot_test.c - the MindSpore AOT adapter (pdext_aot.h): AOT functions registered as ops run
 * through the runner with MindSpore's calling convention, attrs read through AotExtra with
 * MindSpore's coercions in both libstdc++ string ABIs, Init once per shape signature,
 * workspaces rounded to 512 bytes, infer functions, and every failure named. Kernels:
 * tests/ops/aot_kernels.cc, built as aot_kernels_old.so (-D_GLIBCXX_USE_CXX11_ABI=0) and
 * aot_kernels_new.so. Expected values are computed here.
 */
#include "pd_test.h"
#include "pdext_aot.h"
#include "pdext_jit.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ABIS[] = {"old", "new"};

/* "<build>/tests/aot_kernels_<abi>.so:<fn>" (a few buffers, reused in turn). */
static const char *spec_of(const char *abi, const char *fn)
{
    static char bufs[4][1024];
    static int next;
    char *b = bufs[next++ % 4];
    char rel[64];
    snprintf(rel, sizeof rel, "aot_kernels_%s.so", abi);
    snprintf(b, sizeof bufs[0], "%s:%s", pd_test_path(rel), fn);
    return b;
}

static pd_aot_options options(int32_t n_inputs)
{
    pd_aot_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.n_inputs = n_inputs;
    return o;
}

static pd_tensor vec_f32(const float *v, int64_t n)
{
    pd_tensor t;
    (void)pd_tensor_empty(&t, PD_FLOAT32, pd_place_cpu(), 1, &n);
    memcpy(t.data, v, sizeof(float) * (size_t)n);
    return t;
}

PD_TEST(Aot, AddRunsThroughTheRunnerInBothAbis)
{
    for (int a = 0; a < 2; ++a) {
        pd_registry *reg;
        PD_ASSERT_OK(pd_registry_create(&reg));
        pd_aot_options o = options(2);
        PD_ASSERT_OK(pd_aot_load(reg, spec_of(ABIS[a], "CustomAdd"), &o, NULL));
        float av[5], bv[5];
        for (int i = 0; i < 5; ++i) {
            av[i] = (float)i * 1.5f;
            bv[i] = 10.0f - (float)i;
        }
        pd_tensor x = vec_f32(av, 5), y = vec_f32(bv, 5), out;
        pd_arg in[2] = {pd_arg_of(&x), pd_arg_of(&y)};
        pd_arg outs[1] = {pd_arg_of(&out)};
        PD_ASSERT_OK(pd_run(reg, "CustomAdd", in, 2, NULL, 0, outs, 1));
        PD_EXPECT_EQ(out.ndim, 1);
        PD_EXPECT_EQ(out.shape[0], 5);
        PD_EXPECT_EQ(out.dtype, PD_FLOAT32);
        for (int i = 0; i < 5; ++i)
            PD_EXPECT_NEAR(((float *)out.data)[i], av[i] + bv[i], 0);
        pd_tensor_release(&out);
        pd_tensor_release(&x);
        pd_tensor_release(&y);
        pd_registry_destroy(reg);
    }
}

PD_TEST(Aot, AbiIsDetectedPerLibrary)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    o.name = "affine_old";
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("old", "CustomAffine"), &o, NULL));
    o.name = "affine_new";
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomAffine"), &o, NULL));
    pd_aot_info old_info, new_info;
    PD_ASSERT_OK(pd_aot_op_info(pd_op_find(reg, "affine_old"), &old_info));
    PD_ASSERT_OK(pd_aot_op_info(pd_op_find(reg, "affine_new"), &new_info));
    PD_EXPECT(!old_info.cxx11_abi);
    PD_EXPECT(new_info.cxx11_abi);
    PD_EXPECT_STREQ(new_info.function, "CustomAffine");
    PD_EXPECT(!new_info.has_init);
    pd_registry_destroy(reg);
}

/* CustomAffine reads a float, an int64 and a string attr: the string compares right only when
 * the AotExtra has the library's string ABI. */
PD_TEST(Aot, AttrsReachTheKernelInBothAbis)
{
    for (int a = 0; a < 2; ++a) {
        pd_registry *reg;
        PD_ASSERT_OK(pd_registry_create(&reg));
        pd_aot_options o = options(1);
        const char *attrs[] = {"scale: float", "offset: int64_t", "mode: std::string"};
        o.attrs = attrs;
        o.n_attrs = 3;
        PD_ASSERT_OK(pd_aot_load(reg, spec_of(ABIS[a], "CustomAffine"), &o, NULL));
        float xv[4] = {1, -2, 3.5f, 0};
        pd_tensor x = vec_f32(xv, 4), out;
        pd_arg in[1] = {pd_arg_of(&x)};
        pd_arg outs[1] = {pd_arg_of(&out)};
        pd_attr at[3] = {pd_attr_of_float("scale", 2.0f), pd_attr_of_int64("offset", 3),
                         pd_attr_of_string("mode", "neg")};
        PD_ASSERT_OK(pd_run(reg, "CustomAffine", in, 1, at, 3, outs, 1));
        for (int i = 0; i < 4; ++i)
            PD_EXPECT_NEAR(((float *)out.data)[i], -(xv[i] * 2.0f + 3.0f), 0);
        pd_tensor_release(&out);
        at[2] = pd_attr_of_string("mode", "plain");
        PD_ASSERT_OK(pd_run(reg, "CustomAffine", in, 1, at, 3, outs, 1));
        for (int i = 0; i < 4; ++i)
            PD_EXPECT_NEAR(((float *)out.data)[i], xv[i] * 2.0f + 3.0f, 0);
        pd_tensor_release(&out);
        pd_tensor_release(&x);
        pd_registry_destroy(reg);
    }
}

/* Numbers convert between bool, int64 and float; lists to vectors; a bracketed string to a
 * 2-D vector. */
PD_TEST(Aot, AttrsAreCoercedAsMindSporeDoes)
{
    for (int a = 0; a < 2; ++a) {
        pd_registry *reg;
        PD_ASSERT_OK(pd_registry_create(&reg));
        pd_aot_options o = options(1);
        const char *attrs[] = {"b: float",
                               "i: float",
                               "f: int64_t",
                               "iv: std::vector<float>",
                               "fv: std::vector<int64_t>",
                               "im: std::string",
                               "fm: std::string",
                               "str: std::string"};
        o.attrs = attrs;
        o.n_attrs = 8;
        pd_aot_output out_decl = {NULL, PD_FLOAT64, 1, {8}};
        o.outputs = &out_decl;
        PD_ASSERT_OK(pd_aot_load(reg, spec_of(ABIS[a], "CustomAttrs"), &o, NULL));
        float one = 1;
        pd_tensor x = vec_f32(&one, 1), out;
        pd_arg in[1] = {pd_arg_of(&x)};
        pd_arg outs[1] = {pd_arg_of(&out)};
        const float fv[3] = {1.5f, 2.5f, -1};
        const int64_t iv[2] = {4, 6};
        pd_attr at[8] = {pd_attr_of_float("b", 2.0f),
                         pd_attr_of_float("i", 7.9f),
                         pd_attr_of_int64("f", 5),
                         pd_attr_of_floats("iv", fv, 3),
                         pd_attr_of_int64s("fv", iv, 2),
                         pd_attr_of_string("im", "[[1, 2], [3]]"),
                         pd_attr_of_string("fm", "[[0.5], [0.25, 1]]"),
                         pd_attr_of_string("str", "hello")};
        PD_ASSERT_OK(pd_run(reg, "CustomAttrs", in, 1, at, 8, outs, 1));
        PD_EXPECT_EQ(out.dtype, PD_FLOAT64);
        PD_EXPECT_EQ(out.shape[0], 8);
        const double *r = out.data;
        PD_EXPECT_NEAR(r[0], 1, 0);         /* 2.0 as bool */
        PD_EXPECT_NEAR(r[1], 7, 0);         /* 7.9 as int64 truncates */
        PD_EXPECT_NEAR(r[2], 5, 0);         /* int64 as float */
        PD_EXPECT_NEAR(r[3], 1 + 2 - 1, 0); /* floats as int64s truncate: 1, 2, -1 */
        PD_EXPECT_NEAR(r[4], 10, 0);
        PD_EXPECT_NEAR(r[5], 6, 0);
        PD_EXPECT_NEAR(r[6], 1.75, 0);
        PD_EXPECT_NEAR(r[7], 5, 0);
        pd_tensor_release(&out);
        pd_tensor_release(&x);
        pd_registry_destroy(reg);
    }
}

PD_TEST(Aot, MissingAttrFailsTheCallNamingIt)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    const char *attrs[] = {"scale: float"};
    o.attrs = attrs;
    o.n_attrs = 1;
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomAffine"), &o, NULL));
    float xv[2] = {1, 2};
    pd_tensor x = vec_f32(xv, 2), out = PD_TENSOR_UNDEFINED;
    pd_arg in[1] = {pd_arg_of(&x)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    pd_attr at[1] = {pd_attr_of_float("scale", 2.0f)};
    PD_EXPECT_ERROR(pd_run(reg, "CustomAffine", in, 1, at, 1, outs, 1), PD_ERR_OP_FAILED,
                    "attr 'offset'");
    PD_EXPECT_CONTAINS(pd_last_error(), "CustomAffine: function 'CustomAffine' in '");
    PD_EXPECT_CONTAINS(pd_last_error(), "threw");
    PD_EXPECT_EQ(out.data, NULL);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, AttrOfAnUncoercibleTypeFailsNamingIt)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    const char *attrs[] = {"scale: std::string", "offset: int64_t"};
    o.attrs = attrs;
    o.n_attrs = 2;
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("old", "CustomAffine"), &o, NULL));
    float xv[1] = {1};
    pd_tensor x = vec_f32(xv, 1), out;
    pd_arg in[1] = {pd_arg_of(&x)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    pd_attr at[2] = {pd_attr_of_string("scale", "big"), pd_attr_of_int64("offset", 1)};
    PD_EXPECT_ERROR(pd_run(reg, "CustomAffine", in, 1, at, 2, outs, 1), PD_ERR_OP_FAILED,
                    "attr 'scale' holds a string, which cannot be read as float");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* Init runs once per input-shape signature; its kernel data lives until the op is unloaded
 * and is destroyed then; the workspace Init asks for (n * 4 - 4 bytes) is rounded up to 512,
 * so the kernel's write of n floats stays inside it (the sanitizer build checks). */
PD_TEST(Aot, InitRunsOncePerShapeSignatureAndWorkspacesAreRounded)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", pd_test_path("aot_kernels_new.so"));
    void *h = dlopen(path, RTLD_NOW);
    PD_ASSERT(h != NULL);
    int64_t (*destroyed)(void);
    *(void **)&destroyed = dlsym(h, "CustomCumsumDestroyed");
    PD_ASSERT(destroyed != NULL);
    int64_t destroyed_before = destroyed();

    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    pd_module *m;
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomCumsum"), &o, &m));
    const pd_op *op = pd_op_find(reg, "CustomCumsum");
    float v3[3] = {1, 2, 3}, v5[5] = {1, 1, 1, 1, 1};
    pd_tensor a = vec_f32(v3, 3), b = vec_f32(v5, 5), out;
    pd_arg outs[1] = {pd_arg_of(&out)};
    pd_arg in_a[1] = {pd_arg_of(&a)}, in_b[1] = {pd_arg_of(&b)};
    PD_ASSERT_OK(pd_op_run(op, in_a, 1, NULL, 0, outs, 1));
    PD_EXPECT_NEAR(((float *)out.data)[2], 6, 0);
    pd_tensor_release(&out);
    PD_EXPECT_EQ(pd_aot_init_count(op), 1);
    PD_ASSERT_OK(pd_op_run(op, in_a, 1, NULL, 0, outs, 1));
    pd_tensor_release(&out);
    PD_EXPECT_EQ(pd_aot_init_count(op), 1);
    PD_ASSERT_OK(pd_op_run(op, in_b, 1, NULL, 0, outs, 1));
    PD_EXPECT_NEAR(((float *)out.data)[4], 5, 0);
    pd_tensor_release(&out);
    PD_EXPECT_EQ(pd_aot_init_count(op), 2);
    PD_ASSERT_OK(pd_op_run(op, in_a, 1, NULL, 0, outs, 1));
    pd_tensor_release(&out);
    PD_EXPECT_EQ(pd_aot_init_count(op), 2);
    PD_EXPECT_EQ(destroyed() - destroyed_before, 0);
    PD_ASSERT_OK(pd_module_unload(m));
    PD_EXPECT_EQ(destroyed() - destroyed_before, 2);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_registry_destroy(reg);
    dlclose(h);
}

PD_TEST(Aot, InferShapeAndInferTypeGiveTheOutput)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(2);
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("old", "CustomConcat"), &o, NULL));
    int64_t n2 = 2, n3 = 3;
    pd_tensor a, b, out;
    PD_ASSERT_OK(pd_tensor_empty(&a, PD_INT64, pd_place_cpu(), 1, &n2));
    PD_ASSERT_OK(pd_tensor_empty(&b, PD_INT64, pd_place_cpu(), 1, &n3));
    for (int i = 0; i < 2; ++i)
        ((int64_t *)a.data)[i] = 100 + i;
    for (int i = 0; i < 3; ++i)
        ((int64_t *)b.data)[i] = 200 + i;
    pd_arg in[2] = {pd_arg_of(&a), pd_arg_of(&b)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    PD_ASSERT_OK(pd_run(reg, "CustomConcat", in, 2, NULL, 0, outs, 1));
    PD_EXPECT_EQ(out.dtype, PD_INT64);
    PD_ASSERT_EQ(out.shape[0], 5);
    const int64_t want[5] = {100, 101, 200, 201, 202};
    for (int i = 0; i < 5; ++i)
        PD_EXPECT_EQ(((int64_t *)out.data)[i], want[i]);
    pd_tensor_release(&out);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, SeveralOutputsInferredWithUnknownDimsResolvedFromTheInput)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    o.n_outputs = 2;
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomSplit"), &o, NULL));
    pd_tensor x, sums, copy;
    int64_t shape[2] = {2, 3};
    PD_ASSERT_OK(pd_tensor_empty(&x, PD_FLOAT32, pd_place_cpu(), 2, shape));
    for (int i = 0; i < 6; ++i)
        ((float *)x.data)[i] = (float)(i * i);
    pd_arg in[1] = {pd_arg_of(&x)};
    pd_arg outs[2] = {pd_arg_named("out0", &sums, 1), pd_arg_named("out1", &copy, 1)};
    PD_ASSERT_OK(pd_run(reg, "CustomSplit", in, 1, NULL, 0, outs, 2));
    PD_EXPECT_EQ(sums.ndim, 1);
    PD_EXPECT_EQ(sums.shape[0], 2);
    PD_EXPECT_NEAR(((float *)sums.data)[0], 0 + 1 + 4, 0);
    PD_EXPECT_NEAR(((float *)sums.data)[1], 9 + 16 + 25, 0);
    PD_EXPECT_EQ(copy.dtype, PD_INT64);
    PD_EXPECT_EQ(copy.ndim, 2);
    PD_EXPECT_EQ(copy.shape[0], 2);
    PD_EXPECT_EQ(copy.shape[1], 3);
    PD_EXPECT_EQ(((int64_t *)copy.data)[5], 25);
    pd_tensor_release(&sums);
    pd_tensor_release(&copy);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, FixedOutputShapeAndDtypeAreUsed)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(2);
    pd_aot_output decl = {"sum", PD_FLOAT32, 2, {2, 2}};
    o.outputs = &decl;
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomAdd"), &o, NULL));
    float av[4] = {1, 2, 3, 4}, bv[4] = {4, 3, 2, 1};
    pd_tensor x = vec_f32(av, 4), y = vec_f32(bv, 4), out;
    pd_arg in[2] = {pd_arg_of(&x), pd_arg_of(&y)};
    pd_arg outs[1] = {pd_arg_named("sum", &out, 1)};
    PD_ASSERT_OK(pd_run(reg, "CustomAdd", in, 2, NULL, 0, outs, 1));
    PD_EXPECT_EQ(out.ndim, 2);
    PD_EXPECT_NEAR(((float *)out.data)[3], 5, 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
}

/* Runs a one-input op of `fn` on a float32 [2] input and expects failure with `needle`. */
static void expect_call_fails(const char *fn, pd_status status, const char *needle)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("old", fn), &o, NULL));
    float xv[2] = {1, 2};
    pd_tensor x = vec_f32(xv, 2), out = PD_TENSOR_UNDEFINED;
    pd_arg in[1] = {pd_arg_of(&x)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    PD_EXPECT_ERROR(pd_run(reg, fn, in, 1, NULL, 0, outs, 1), status, needle);
    PD_EXPECT_EQ(out.data, NULL);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, NonZeroReturnNamesOpFunctionLibraryAndCode)
{
    expect_call_fails("CustomFails", PD_ERR_OP_FAILED, "returned error code 7");
    expect_call_fails("CustomFails", PD_ERR_OP_FAILED, "CustomFails: function 'CustomFails' in '");
    expect_call_fails("CustomFails", PD_ERR_OP_FAILED, "aot_kernels_old.so'");
}

PD_TEST(Aot, ThrownExceptionIsCaughtAndReported)
{
    expect_call_fails("CustomThrows", PD_ERR_OP_FAILED, "threw: kernel exploded");
}

PD_TEST(Aot, InitReturningNonZeroFailsTheCall)
{
    expect_call_fails("CustomBadInit", PD_ERR_OP_FAILED, "function 'CustomBadInitInit' in '");
    expect_call_fails("CustomBadInit", PD_ERR_OP_FAILED, "returned error code 5");
}

PD_TEST(Aot, WorkspacesWhoseTotalOverflowsFailTheCallNamingInit)
{
    expect_call_fails("CustomHugeWorkspace", PD_ERR_OP_FAILED,
                      "function 'CustomHugeWorkspaceInit' in '");
    expect_call_fails("CustomHugeWorkspace", PD_ERR_OP_FAILED, "declared workspace 1 of");
}

PD_TEST(Aot, TypeIdWithoutAPdextDtypeIsRefused)
{
    expect_call_fails("CustomBadType", PD_ERR_OP_FAILED, "TypeId 12");
}

PD_TEST(Aot, UnknownRankFromInferShapeIsRefused)
{
    expect_call_fails("CustomUnknownRank", PD_ERR_OP_FAILED, "[-2] (unknown rank)");
}

PD_TEST(Aot, WrongInputCountIsRefusedByTheRunner)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(2);
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomAdd"), &o, NULL));
    float xv[2] = {1, 2};
    pd_tensor x = vec_f32(xv, 2), out;
    pd_arg in[1] = {pd_arg_of(&x)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    PD_EXPECT_ERROR(pd_run(reg, "CustomAdd", in, 1, NULL, 0, outs, 1), PD_ERR_INVALID_ARGUMENT,
                    "CustomAdd");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, MissingLibraryIsRefusedNamingIt)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    PD_EXPECT_ERROR(pd_aot_load(reg, "/nonexistent/libnothing.so:F", &o, NULL), PD_ERR_NOT_FOUND,
                    "/nonexistent/libnothing.so");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, FileThatIsNotAnElfIsRefused)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    char spec[1024];
    snprintf(spec, sizeof spec, "%s:F", pd_test_path("aot_not_elf.so"));
    PD_EXPECT_ERROR(pd_aot_load(reg, spec, &o, NULL), PD_ERR_INVALID_MODULE,
                    "is not an ELF shared library");
    pd_registry_destroy(reg);
}

PD_TEST(Aot, FunctionNotExportedListsSimilarNames)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(2);
    PD_EXPECT_ERROR(pd_aot_load(reg, spec_of("new", "CustomAd"), &o, NULL), PD_ERR_NOT_FOUND,
                    "exports no function 'CustomAd'");
    PD_EXPECT_CONTAINS(pd_last_error(), "similar exported names: CustomAdd");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, DataSymbolIsRefusedAsAFunction)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(2);
    PD_EXPECT_ERROR(pd_aot_load(reg, spec_of("new", "CustomTable"), &o, NULL),
                    PD_ERR_INVALID_ARGUMENT, "'CustomTable' in ");
    PD_EXPECT_CONTAINS(pd_last_error(), "is a data object, not a function");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, SpecWithoutFunctionIsRefused)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_ERROR(pd_aot_load(reg, "libx.so", NULL, NULL), PD_ERR_INVALID_ARGUMENT,
                    "LIBRARY:FUNCTION");
    pd_registry_destroy(reg);
}

PD_TEST(Aot, SeveralFunctionsOfOneLibraryAndUnloadRemovesThem)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(2);
    pd_module *m1, *m2;
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomAdd"), &o, &m1));
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomConcat"), &o, &m2));
    o.name = "add_again";
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomAdd"), &o, NULL));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 3);
    o.name = NULL;
    PD_EXPECT_ERROR(pd_aot_load(reg, spec_of("new", "CustomAdd"), &o, NULL), PD_ERR_ALREADY_EXISTS,
                    "CustomAdd");
    PD_ASSERT_OK(pd_module_unload(m1));
    PD_EXPECT(pd_op_find(reg, "CustomAdd") == NULL);
    PD_EXPECT(pd_op_find(reg, "CustomConcat") != NULL);
    PD_ASSERT_OK(pd_module_unload(m2));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 1);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, TypeIdsMapToPdextDtypes)
{
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(30), PD_BOOL);
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(34), PD_INT32);
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(35), PD_INT64);
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(42), PD_FLOAT16);
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(43), PD_FLOAT32);
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(44), PD_FLOAT64);
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(45), PD_BFLOAT16);
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(49), PD_COMPLEX128);
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(50), PD_UNDEFINED); /* kNumberTypeInt4 */
    PD_EXPECT_EQ(pd_aot_dtype_of_type_id(12), PD_UNDEFINED); /* kObjectTypeString */
    PD_EXPECT_STREQ(pd_aot_dtype_name(PD_BFLOAT16), "bfloat16");
    PD_EXPECT_STREQ(pd_aot_dtype_name(PD_UINT16), "uint16");
}

/* A source spec is compiled by the JIT front (pd_jit_aot_build: default visibility, so the
 * extern "C" entry points are found) through the JIT's cache: building it again reuses the
 * same library. pd_aot_load itself loads libraries only and refuses a source, saying what to
 * call. */
PD_TEST(Aot, SourceIsCompiledThroughTheJitCache)
{
    char spec[1024], dir[1024];
    snprintf(spec, sizeof spec, "%s/tests/ops/aot_kernels.cc:CustomAdd", PD_TEST_SOURCE_DIR);
    snprintf(dir, sizeof dir, "%s", pd_test_path("aot_jit_cache"));
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(2);
    o.build_dir = dir;
    PD_EXPECT_ERROR(pd_aot_load(reg, spec, &o, NULL), PD_ERR_INVALID_ARGUMENT,
                    "build it first with pd_jit_aot_build");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    char *lib = NULL, *again = NULL;
    PD_ASSERT_OK(pd_jit_aot_build(spec, &o, &lib));
    PD_EXPECT_CONTAINS(lib, dir);
    PD_EXPECT_CONTAINS(lib, ".so:CustomAdd");
    pd_module *m = NULL;
    o.origin = spec; /* the module says where it came from: the source, not the cache */
    PD_ASSERT_OK(pd_aot_load(reg, lib, &o, &m));
    PD_EXPECT_STREQ(pd_module_path(m), spec);
    o.origin = NULL;
    pd_aot_info info;
    PD_ASSERT_OK(pd_aot_op_info(pd_op_find(reg, "CustomAdd"), &info));
    PD_EXPECT_CONTAINS(info.library, dir);
    PD_EXPECT(info.cxx11_abi);
    char first[1024];
    snprintf(first, sizeof first, "%s", info.library);
    float av[3] = {1, 2, 3}, bv[3] = {0.5f, 0.25f, 0};
    pd_tensor x = vec_f32(av, 3), y = vec_f32(bv, 3), out;
    pd_arg in[2] = {pd_arg_of(&x), pd_arg_of(&y)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    PD_ASSERT_OK(pd_run(reg, "CustomAdd", in, 2, NULL, 0, outs, 1));
    PD_EXPECT_NEAR(((float *)out.data)[1], 2.25, 0);
    pd_tensor_release(&out);
    o.name = "add2";
    PD_ASSERT_OK(pd_jit_aot_build(spec, &o, &again));
    PD_EXPECT_STREQ(again, lib);
    PD_ASSERT_OK(pd_aot_load(reg, again, &o, NULL));
    PD_ASSERT_OK(pd_aot_op_info(pd_op_find(reg, "add2"), &info));
    PD_EXPECT_STREQ(info.library, first);
    /* a library's spec goes through unchanged, so a caller may pass any spec to it */
    free(lib);
    PD_ASSERT_OK(pd_jit_aot_build(again, NULL, &lib));
    PD_EXPECT_STREQ(lib, again);
    free(lib);
    free(again);
    PD_EXPECT_ERROR(pd_jit_aot_build("add.cc", NULL, &lib), PD_ERR_INVALID_ARGUMENT,
                    "names no function");
    PD_EXPECT(lib == NULL);
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, SourceThatDoesNotCompileFailsWithTheCompilerMessage)
{
    char spec[1024];
    snprintf(spec, sizeof spec, "%s:F", pd_test_path("aot_broken.cc"));
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    o.build_dir = pd_test_path("aot_jit_broken");
    char *lib = NULL;
    PD_EXPECT_ERROR(pd_jit_aot_build(spec, &o, &lib), PD_ERR_BUILD, "aot_broken.cc");
    PD_EXPECT(lib == NULL);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

/* A GPU kernel's library loads without CUDA (RTLD_LAZY: its CUDA calls stay unresolved), and
 * a call fails with a clear error instead of reaching them. */
PD_TEST(Aot, GpuKernelLoadsWithoutCudaAndItsCallsFailClearly)
{
    char spec[1024];
    snprintf(spec, sizeof spec, "%s:GpuZero", pd_test_path("aot_gpu_kernel.so"));
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    PD_ASSERT_OK(pd_aot_load(reg, spec, &o, NULL));
    pd_aot_info info;
    PD_ASSERT_OK(pd_aot_op_info(pd_op_find(reg, "GpuZero"), &info));
    PD_EXPECT(info.gpu);
    float xv[1] = {1};
    pd_tensor x = vec_f32(xv, 1), out = PD_TENSOR_UNDEFINED;
    pd_arg in[1] = {pd_arg_of(&x)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    PD_EXPECT_ERROR(pd_run(reg, "GpuZero", in, 1, NULL, 0, outs, 1), PD_ERR_UNAVAILABLE,
                    "is a GPU AOT kernel");
    PD_EXPECT_EQ(out.data, NULL);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* AOT kernels read dense arrays: a strided input reaches them contiguous. */
PD_TEST(Aot, StridedInputIsMadeContiguousFirst)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(2);
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomAdd"), &o, NULL));
    int64_t shape[2] = {2, 3};
    pd_tensor m, t, zeros, out;
    PD_ASSERT_OK(pd_tensor_empty(&m, PD_FLOAT32, pd_place_cpu(), 2, shape));
    for (int i = 0; i < 6; ++i)
        ((float *)m.data)[i] = (float)i;             /* [[0 1 2] [3 4 5]] */
    PD_ASSERT_OK(pd_tensor_transpose(&t, &m, 0, 1)); /* [[0 3] [1 4] [2 5]], strided */
    PD_ASSERT_OK(pd_tensor_zeros(&zeros, PD_FLOAT32, pd_place_cpu(), 2, t.shape));
    pd_arg in[2] = {pd_arg_of(&t), pd_arg_of(&zeros)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    PD_ASSERT_OK(pd_run(reg, "CustomAdd", in, 2, NULL, 0, outs, 1));
    const float want[6] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; ++i)
        PD_EXPECT_NEAR(((float *)out.data)[i], want[i], 0);
    pd_tensor_release(&out);
    pd_tensor_release(&zeros);
    pd_tensor_release(&t);
    pd_tensor_release(&m);
    pd_registry_destroy(reg);
}

/* An output declared with a shape is not asked of InferShape, as in MindSpore (whose own
 * add.cc InferShape reads out of bounds on rank-1 inputs): CustomConcatInferShape throws on
 * 2-D inputs, and with the shape given the kernel runs anyway; without it, the call fails
 * with InferShape's message. */
PD_TEST(Aot, AGivenOutputShapeSkipsInferShape)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_output out_spec;
    memset(&out_spec, 0, sizeof out_spec);
    out_spec.ndim = 2;
    out_spec.shape[0] = 5;
    out_spec.shape[1] = 1;
    pd_aot_options o = options(2);
    o.n_outputs = 1;
    o.outputs = &out_spec;
    o.name = "concat_given";
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomConcat"), &o, NULL));
    pd_aot_options plain = options(2);
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomConcat"), &plain, NULL));
    int64_t s2[2] = {2, 1}, s3[2] = {3, 1};
    pd_tensor a, b, out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_full(&a, PD_INT64, pd_place_cpu(), 2, s2, 1));
    PD_ASSERT_OK(pd_tensor_full(&b, PD_INT64, pd_place_cpu(), 2, s3, 2));
    pd_arg in[2] = {pd_arg_of(&a), pd_arg_of(&b)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    PD_ASSERT_OK(pd_run(reg, "concat_given", in, 2, NULL, 0, outs, 1));
    PD_EXPECT_EQ(out.ndim, 2);
    PD_EXPECT_EQ(out.shape[0], 5);
    PD_EXPECT_EQ(out.shape[1], 1);
    const int64_t want[5] = {1, 1, 2, 2, 2};
    for (int i = 0; i < 5; ++i)
        PD_EXPECT_EQ(((int64_t *)out.data)[i], want[i]);
    pd_tensor_release(&out);
    /* No shape given: InferShape runs, and refuses the 2-D inputs. */
    PD_EXPECT_ERROR(pd_run(reg, "CustomConcat", in, 2, NULL, 0, outs, 1), PD_ERR_OP_FAILED,
                    "CustomConcat takes 1-D inputs");
    PD_EXPECT(out.data == NULL);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_registry_destroy(reg);
}

PD_TEST(Aot, OutputsWithNoOtherSourceAreThePlainInferenceOfInput0)
{
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(2);
    PD_ASSERT_OK(pd_aot_load(reg, spec_of("new", "CustomAdd"), &o, NULL));
    const pd_op_def *d = pd_op_definition(pd_op_find(reg, "CustomAdd"));
    PD_ASSERT(d != NULL);
    PD_EXPECT(d->infer_shape == NULL && d->infer_dtype == NULL); /* no trampoline per call */
    PD_EXPECT(d->flags & PD_OP_OUTPUTS_LIKE_INPUT0);
    pd_registry_destroy(reg);
}

/* The one reading of "FILE:FUNC" (pd_aot_spec_split), which pd_aot_load, the command and
 * pdext.aot share: the last ':' splits it, FILE is not empty, FUNC is an identifier. */
PD_TEST(Aot, OneReadingOfFileColonFunc)
{
    size_t n = 0;
    const char *func = NULL;
    PD_EXPECT(pd_aot_spec_split("dir:a/add.cc:CustomAdd", &n, &func));
    PD_EXPECT_EQ((int)n, 12);
    PD_EXPECT_STREQ(func, "CustomAdd");
    PD_EXPECT(pd_aot_spec_split("lib.so:_f1", NULL, NULL));
    static const char *const bad[] = {"add.cc",    ":F",         "add.cc:",
                                      "add.cc:1F", "add.cc:F-x", "add.cc:F x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        PD_EXPECT(!pd_aot_spec_split(bad[i], &n, &func));
    PD_EXPECT(!pd_aot_spec_split(NULL, &n, &func));
    /* pd_aot_load refuses what the split refuses, before it looks for any file */
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_aot_options o = options(1);
    PD_EXPECT_EQ(pd_aot_load(reg, "add.cc:1F", &o, NULL), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT_CONTAINS(pd_last_error(), "names no function");
    pd_registry_destroy(reg);
}
