/*
 * module_test.c - loading op libraries built like an author builds them (tests/modules/,
 * tests/module.cmake): what gets registered and under which names, ABI checks, every
 * refusal with the offending string in the message and the registry left exactly as before,
 * unloading, and lookups racing with loads.
 */
#include "pd_test.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static const char *module_path(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s.so", name);
    return pd_test_path(rel);
}

/* A registry with tm_good_ops loaded (5 ops). */
static pd_registry *registry_with_good_ops(pd_module **good)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return NULL;
    if (pd_module_load(reg, module_path("tm_good_ops"), good) != PD_OK) {
        pd_test_fail(__FILE__, __LINE__, "loading tm_good_ops: %s", pd_last_error());
        pd_registry_destroy(reg);
        return NULL;
    }
    return reg;
}

/* --- A good module ------------------------------------------------------------------------ */

PD_TEST(Module, LoadsEveryOpOfAGoodModule)
{
    pd_module *m = NULL;
    pd_registry *reg = registry_with_good_ops(&m);
    PD_ASSERT(reg != NULL);
    PD_EXPECT_STREQ(pd_module_path(m), module_path("tm_good_ops"));
    PD_ASSERT_EQ(pd_module_op_count(m), 5);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    /* Source order (the compiler emits a unit's definitions in reverse; the loader sorts). */
    const char *expected[] = {"tm_every_attr", "tm_every_attr_grad", "tm_every_attr_grad_grad",
                              "tm_aliases", "tm_inplace"};
    for (int32_t i = 0; i < 5; ++i)
        PD_EXPECT_STREQ(pd_op_name(pd_module_op(m, i)), expected[i]);
    PD_EXPECT(pd_module_op(m, 5) == NULL);
    PD_EXPECT(pd_module_op(m, -1) == NULL);
    for (int32_t i = 0; i < 5; ++i)
        PD_EXPECT(pd_op_module(pd_module_op(m, i)) == m);
    pd_registry_destroy(reg);
}

PD_TEST(Module, ListsOpsSortedByName)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    const char *expected[] = {"tm_aliases", "tm_every_attr", "tm_every_attr_grad",
                              "tm_every_attr_grad_grad", "tm_inplace"};
    PD_ASSERT_EQ(pd_registry_op_count(reg), 5);
    for (int32_t i = 0; i < 5; ++i)
        PD_EXPECT_STREQ(pd_op_name(pd_registry_op_at(reg, i)), expected[i]);
    PD_EXPECT(pd_registry_op_at(reg, 5) == NULL);
    PD_EXPECT_CONTAINS(pd_last_error(), "index 5 is out of range; the registry has 5 ops");
    pd_registry_destroy(reg);
}

PD_TEST(Module, FindsForwardGradAndDoubleGradByTheirRegisteredNames)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    const pd_op *fwd = pd_op_find(reg, "tm_every_attr");
    const pd_op *grad = pd_op_find(reg, "tm_every_attr_grad");
    const pd_op *grad2 = pd_op_find(reg, "tm_every_attr_grad_grad");
    PD_ASSERT(fwd && grad && grad2);
    PD_EXPECT_EQ(pd_op_get_kind(fwd), PD_OP_FORWARD);
    PD_EXPECT_EQ(pd_op_get_kind(grad), PD_OP_GRAD);
    PD_EXPECT_EQ(pd_op_get_kind(grad2), PD_OP_DOUBLE_GRAD);
    PD_EXPECT(pd_op_grad(fwd) == grad);
    PD_EXPECT(pd_op_grad(grad) == grad2);
    PD_EXPECT(pd_op_grad(grad2) == NULL);
    PD_EXPECT(pd_op_grad(pd_op_find(reg, "tm_aliases")) == NULL);
    /* All three definitions carry the forward op's name. */
    PD_EXPECT_STREQ(pd_op_definition(grad2)->name, "tm_every_attr");
    PD_EXPECT_EQ(pd_op_definition(grad)->kind, PD_OP_GRAD);
    pd_registry_destroy(reg);
}

PD_TEST(Module, CountsVectorAndOptionalInputsAndOutputs)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "tm_every_attr");
    PD_ASSERT(op != NULL);
    PD_EXPECT_EQ(pd_op_input_count(op), 3);
    PD_EXPECT_EQ(pd_op_output_count(op), 2);
    PD_EXPECT_STREQ(pd_op_definition(op)->inputs[1], "Ys@VECTOR");
    PD_EXPECT_STREQ(pd_op_definition(op)->inputs[2], "Bias@OPTIONAL");
    const pd_op *grad = pd_op_find(reg, "tm_every_attr_grad");
    PD_EXPECT_EQ(pd_op_input_count(grad), 3);
    PD_EXPECT_STREQ(pd_op_definition(grad)->outputs[1], "Ys@VECTOR@GRAD");
    pd_registry_destroy(reg);
}

PD_TEST(Module, ParsesEveryPaddleAttrSpelling)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "tm_every_attr");
    PD_ASSERT(op != NULL);
    const char *names[] = {"flag", "count", "scale",   "eps",   "axis",
                           "mode", "dims",  "weights", "shape", "names"};
    pd_attr_type types[] = {PD_ATTR_BOOL,   PD_ATTR_INT,    PD_ATTR_FLOAT, PD_ATTR_DOUBLE,
                            PD_ATTR_INT64,  PD_ATTR_STRING, PD_ATTR_INTS,  PD_ATTR_FLOATS,
                            PD_ATTR_INT64S, PD_ATTR_STRINGS};
    PD_ASSERT_EQ(pd_op_attr_count(op), 10);
    for (int32_t i = 0; i < 10; ++i) {
        PD_EXPECT_STREQ(pd_op_attr_name(op, i), names[i]);
        PD_EXPECT_EQ(pd_op_attr_type(op, i), types[i]);
    }
    PD_EXPECT(pd_op_attr_name(op, 10) == NULL);
    PD_EXPECT_EQ(pd_op_attr_type(op, -1), PD_ATTR_UNDEFINED);
    pd_registry_destroy(reg);
}

PD_TEST(Module, ParsesCAliasesWithLooseWhiteSpace)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "tm_aliases");
    PD_ASSERT(op != NULL);
    const char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
    pd_attr_type types[] = {PD_ATTR_INT,     PD_ATTR_INT64,   PD_ATTR_STRING,
                            PD_ATTR_INTS,    PD_ATTR_FLOATS,  PD_ATTR_INT64S,
                            PD_ATTR_STRINGS, PD_ATTR_STRINGS, PD_ATTR_INT64S};
    PD_ASSERT_EQ(pd_op_attr_count(op), 9);
    for (int32_t i = 0; i < 9; ++i) {
        PD_EXPECT_STREQ(pd_op_attr_name(op, i), names[i]);
        PD_EXPECT_EQ(pd_op_attr_type(op, i), types[i]);
    }
    pd_registry_destroy(reg);
}

PD_TEST(Module, LoadsAModuleWrittenInCxx)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_good_cxx"), &m));
    PD_EXPECT_EQ(pd_module_op_count(m), 2);
    const pd_op *op = pd_op_find(reg, "tm_cxx_scale");
    PD_ASSERT(op != NULL);
    PD_EXPECT_EQ(pd_op_attr_type(op, 0), PD_ATTR_DOUBLE);
    PD_EXPECT_EQ(pd_op_attr_type(op, 1), PD_ATTR_STRINGS);
    PD_EXPECT(pd_op_grad(op) == pd_op_find(reg, "tm_cxx_scale_grad"));
    PD_EXPECT(pd_module_get_info(m)->compiler != NULL);
    pd_registry_destroy(reg);
}

PD_TEST(Module, HandsTheModuleTheRuntimeFunctionTable)
{
    pd_module *m = NULL;
    pd_registry *reg = registry_with_good_ops(&m);
    PD_ASSERT(reg != NULL);
    void *handle = dlopen(module_path("tm_good_ops"), RTLD_NOW | RTLD_NOLOAD);
    PD_ASSERT(handle != NULL);
    const void *(*api_of)(void);
    *(void **)&api_of = dlsym(handle, "good_ops_api");
    PD_ASSERT(api_of != NULL);
    PD_EXPECT(api_of() != NULL);
    PD_EXPECT(api_of() == (const void *)pd_runtime_api());
    dlclose(handle);
    pd_registry_destroy(reg);
}

PD_TEST(Module, ExposesItsInfoBlock)
{
    pd_module *m = NULL;
    pd_registry *reg = registry_with_good_ops(&m);
    PD_ASSERT(reg != NULL);
    const pd_module_info *info = pd_module_get_info(m);
    PD_ASSERT(info != NULL);
    PD_EXPECT_EQ(info->abi_major, PD_ABI_MAJOR);
    PD_EXPECT_EQ(info->abi_minor, PD_ABI_MINOR);
    PD_EXPECT_STREQ(info->sdk_version, PD_VERSION_STRING);
    PD_EXPECT_EQ(info->ops_end - info->ops_begin, 5);
    pd_registry_destroy(reg);
}

PD_TEST(Module, UnloadRemovesItsOps)
{
    pd_module *m = NULL;
    pd_registry *reg = registry_with_good_ops(&m);
    PD_ASSERT(reg != NULL);
    pd_module *cxx = NULL;
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_good_cxx"), &cxx));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 7);
    PD_EXPECT_OK(pd_module_unload(m));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 2);
    PD_EXPECT(pd_op_find(reg, "tm_every_attr") == NULL);
    PD_EXPECT_EQ(pd_last_status(), PD_ERR_NOT_FOUND);
    PD_EXPECT(pd_op_find(reg, "tm_every_attr_grad_grad") == NULL);
    PD_EXPECT(pd_op_find(reg, "tm_cxx_scale") != NULL);
    /* The same library loads again after an unload. */
    PD_EXPECT_OK(pd_module_load(reg, module_path("tm_good_ops"), &m));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 7);
    PD_EXPECT_OK(pd_module_unload(NULL));
    pd_registry_destroy(reg);
}

PD_TEST(Module, LoadsTheSameLibraryIntoTwoRegistries)
{
    pd_registry *a = registry_with_good_ops(NULL);
    pd_registry *b = registry_with_good_ops(NULL);
    PD_ASSERT(a && b);
    PD_EXPECT(pd_op_find(a, "tm_inplace") != pd_op_find(b, "tm_inplace"));
    pd_registry_destroy(a);
    PD_EXPECT(pd_op_find(b, "tm_inplace") != NULL);
    pd_registry_destroy(b);
}

/* --- Grad ops across modules -------------------------------------------------------------- */

PD_TEST(Module, AcceptsAGradOpWhoseForwardOpIsAlreadyRegistered)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *fwd = NULL, *grad = NULL;
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_forward_only"), &fwd));
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_grad_only"), &grad));
    const pd_op *split = pd_op_find(reg, "tm_split");
    PD_EXPECT(pd_op_grad(split) == pd_op_find(reg, "tm_split_grad"));
    PD_EXPECT(pd_op_grad(split) != NULL);
    /* Unloading the grad module drops the link from the forward op. */
    PD_EXPECT_OK(pd_module_unload(grad));
    PD_EXPECT(pd_op_grad(split) == NULL);
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_grad_only"), &grad));
    PD_EXPECT(pd_op_grad(split) == pd_op_find(reg, "tm_split_grad"));
    pd_registry_destroy(reg);
}

PD_TEST(Module, RefusesAGradOpWhoseForwardOpComesInALaterModule)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_ERROR(pd_module_load(reg, module_path("tm_grad_only"), NULL), PD_ERR_INVALID_MODULE,
                    "has no forward op 'tm_split'");
    PD_EXPECT_CONTAINS(pd_last_error(), "op 'tm_split_grad'");
    PD_EXPECT_CONTAINS(pd_last_error(), module_path("tm_grad_only"));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

/* --- ABI ---------------------------------------------------------------------------------- */

PD_TEST(Module, RefusesANewerMinorAbiNamingBothVersions)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    char module_abi[64], runtime_abi[64];
    snprintf(module_abi, sizeof module_abi, "ABI %d.%d (SDK 9.9.9)", PD_ABI_MAJOR,
             PD_ABI_MINOR + 1);
    snprintf(runtime_abi, sizeof runtime_abi, "provides ABI %d.%d", PD_ABI_MAJOR, PD_ABI_MINOR);
    PD_EXPECT_ERROR(pd_module_load(reg, module_path("tm_abi_newer_minor"), NULL),
                    PD_ERR_ABI_MISMATCH, module_abi);
    PD_EXPECT_CONTAINS(pd_last_error(), runtime_abi);
    PD_EXPECT_CONTAINS(pd_last_error(), "upgrade pdext");
    PD_EXPECT_CONTAINS(pd_last_error(), "rebuild the module against this SDK");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    PD_EXPECT(pd_op_find(reg, "tm_abi_variant") == NULL);
    pd_registry_destroy(reg);
}

PD_TEST(Module, RefusesAnotherMajorAbiNamingBothVersions)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    char module_abi[64], runtime_abi[64];
    snprintf(module_abi, sizeof module_abi, "built against pdext ABI %d.0", PD_ABI_MAJOR + 1);
    snprintf(runtime_abi, sizeof runtime_abi, "provides ABI %d.%d", PD_ABI_MAJOR, PD_ABI_MINOR);
    PD_EXPECT_ERROR(pd_module_load(reg, module_path("tm_abi_other_major"), NULL),
                    PD_ERR_ABI_MISMATCH, module_abi);
    PD_EXPECT_CONTAINS(pd_last_error(), runtime_abi);
    PD_EXPECT_CONTAINS(pd_last_error(), "rebuild the module against this SDK");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    PD_EXPECT(pd_op_find(reg, "tm_abi_variant") == NULL);
    pd_registry_destroy(reg);
}

PD_TEST(Module, ReadsAnOlderShorterInfoBlockOnlyUpToItsSize)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_abi_short_info"), &m));
    const pd_module_info *info = pd_module_get_info(m);
    /* The block ends before sdk_version: the fields past it read as NULL, not "9.9.9". */
    PD_EXPECT(info->sdk_version == NULL);
    PD_EXPECT(info->compiler == NULL);
    PD_EXPECT(pd_op_find(reg, "tm_abi_variant") != NULL);
    pd_registry_destroy(reg);
}

/* --- Libraries that are no modules -------------------------------------------------------- */

PD_TEST(Module, RefusesALibraryWithoutOps)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    PD_EXPECT_ERROR(pd_module_load(reg, module_path("tm_no_ops"), NULL), PD_ERR_INVALID_MODULE,
                    "contains no ops");
    PD_EXPECT_CONTAINS(pd_last_error(), module_path("tm_no_ops"));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    pd_registry_destroy(reg);
}

PD_TEST(Module, RefusesALibraryWithoutEntryPoint)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    PD_EXPECT_ERROR(pd_module_load(reg, module_path("tm_no_entry"), NULL), PD_ERR_INVALID_MODULE,
                    "has no entry point pdext_module_info()");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    pd_registry_destroy(reg);
}

PD_TEST(Module, ReportsAMissingFileAsNotFound)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    PD_EXPECT_ERROR(pd_module_load(reg, "/nonexistent/dir/ops.so", NULL), PD_ERR_NOT_FOUND,
                    "pd_module_load: cannot open '/nonexistent/dir/ops.so'");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    pd_registry_destroy(reg);
}

PD_TEST(Module, ReportsTheDynamicLoaderErrorForAFileThatIsNoLibrary)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    const char *path = PD_TEST_SOURCE_DIR "/tests/module_test.c";
    PD_EXPECT_ERROR(pd_module_load(reg, path, NULL), PD_ERR_INVALID_MODULE, "cannot load '");
    /* dlerror()'s own text follows, naming the file. */
    PD_EXPECT_CONTAINS(pd_last_error(), "module_test.c: ");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    pd_registry_destroy(reg);
}

PD_TEST(Module, RejectsNullArguments)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_ERROR(pd_module_load(NULL, "x.so", NULL), PD_ERR_INVALID_ARGUMENT, "reg is NULL");
    PD_EXPECT_ERROR(pd_module_load(reg, NULL, NULL), PD_ERR_INVALID_ARGUMENT, "path is NULL");
    PD_EXPECT_ERROR(pd_module_load_info(reg, NULL, "x", NULL), PD_ERR_INVALID_MODULE,
                    "returned NULL");
    PD_EXPECT(pd_module_path(NULL) == NULL);
    PD_EXPECT_EQ(pd_module_op_count(NULL), 0);
    PD_EXPECT(pd_module_get_info(NULL) == NULL);
    pd_registry_destroy(reg);
    pd_registry_destroy(NULL);
}

/* --- Refused definitions: one module each --------------------------------------------------- */

/* Loads tm_refuse_<name> into a registry holding tm_good_ops and expects it refused with
 * `status` and a message holding `needle`, each of the further strings (up to NULL) and the
 * library's path, leaving the registry as it was: the same ops, none of the refused module's. */
#define expect_refused(name, status, ...) expect_refused_(name, status, __VA_ARGS__, NULL)
static void expect_refused_(const char *name, pd_status status, const char *needle, ...)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    const pd_op *before[5];
    for (int32_t i = 0; i < 5; ++i)
        before[i] = pd_registry_op_at(reg, i);
    char module[128];
    snprintf(module, sizeof module, "tm_refuse_%s", name);
    pd_module *m = (pd_module *)&m; /* must stay untouched */
    PD_EXPECT_ERROR(pd_module_load(reg, module_path(module), &m), status, needle);
    PD_EXPECT_CONTAINS(pd_last_error(), "pd_module_load: ");
    PD_EXPECT_CONTAINS(pd_last_error(), module_path(module));
    va_list ap;
    va_start(ap, needle);
    for (const char *more; (more = va_arg(ap, const char *)) != NULL;)
        PD_EXPECT_CONTAINS(pd_last_error(), more);
    va_end(ap);
    PD_EXPECT(m == (pd_module *)&m);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    for (int32_t i = 0; i < 5; ++i)
        PD_EXPECT(pd_registry_op_at(reg, i) == before[i]);
    PD_EXPECT(pd_op_find(reg, "tm_bystander") == NULL);
    PD_EXPECT(pd_op_find(reg, "tm_every_attr") == before[1]);
    pd_registry_destroy(reg);
}

PD_TEST(Module, RefusesAnOpNameThatIsNoIdentifier)
{
    expect_refused("bad_name", PD_ERR_INVALID_MODULE,
                   "has name \"bad-name\"; an op name must be a C identifier");
}

PD_TEST(Module, RefusesADefinitionWithAnInsaneStructSize)
{
    expect_refused("bad_struct_size", PD_ERR_INVALID_MODULE, "has struct_size 4");
}

PD_TEST(Module, RefusesAnUnknownOpKind)
{
    expect_refused("bad_kind", PD_ERR_INVALID_MODULE, "('tm_bad_kind') has kind 7");
}

PD_TEST(Module, RefusesAnOpWithoutKernel)
{
    expect_refused("no_kernel", PD_ERR_INVALID_MODULE, "op 'tm_no_kernel' (",
                   "refuse.c:", ") has no kernel");
}

PD_TEST(Module, RefusesAnEmptyInputName)
{
    expect_refused("empty_input", PD_ERR_INVALID_MODULE, "input 1 is an empty string \"\"",
                   "op 'tm_empty_input'");
}

PD_TEST(Module, RefusesADuplicateInputName)
{
    expect_refused("dup_input", PD_ERR_INVALID_MODULE,
                   "input \"X\" is declared twice (as \"X\" and \"X@VECTOR\")",
                   "op 'tm_dup_input'");
}

PD_TEST(Module, RefusesADuplicateOutputName)
{
    expect_refused("dup_output", PD_ERR_INVALID_MODULE, "output \"Out\" is declared twice",
                   "op 'tm_dup_output'");
}

PD_TEST(Module, RefusesADuplicateAttrName)
{
    expect_refused("dup_attr", PD_ERR_INVALID_MODULE,
                   "attr \"axis\" is declared twice (\"axis: int\" and \"axis: int64_t\")",
                   "op 'tm_dup_attr'");
}

PD_TEST(Module, RefusesAnAttrDeclarationWithoutColon)
{
    expect_refused("attr_no_colon", PD_ERR_INVALID_MODULE,
                   "attr \"axis int64_t\" is malformed: expected \"name: type\"",
                   "op 'tm_attr_no_colon'");
}

PD_TEST(Module, RefusesAnUnknownAttrType)
{
    expect_refused("attr_bad_type", PD_ERR_INVALID_MODULE,
                   "attr \"axis: long\" is malformed: unknown type \"long\"",
                   "op 'tm_attr_bad_type'");
}

PD_TEST(Module, RefusesAnAttrTypeSplitBySpace)
{
    expect_refused("attr_split_type", PD_ERR_INVALID_MODULE,
                   "attr \"axis: int 64_t\" is malformed: unknown type \"int 64_t\"");
}

PD_TEST(Module, RefusesAnAttrNameThatIsNoIdentifier)
{
    expect_refused("attr_bad_name", PD_ERR_INVALID_MODULE,
                   "attr \"2d: int\" is malformed: its name \"2d\" is not an identifier");
}

PD_TEST(Module, RefusesAnInplaceMapNamingAnUnknownInput)
{
    expect_refused("inplace_input", PD_ERR_INVALID_MODULE,
                   "inplace map names input \"Y\", which is not a declared input",
                   "op 'tm_inplace_input'");
}

PD_TEST(Module, RefusesAnInplaceMapNamingAnUnknownOutput)
{
    expect_refused("inplace_output", PD_ERR_INVALID_MODULE,
                   "inplace map names output \"Res\", which is not a declared output",
                   "op 'tm_inplace_output'");
}

PD_TEST(Module, RefusesAGradOpWithoutForwardOp)
{
    expect_refused("grad_no_forward", PD_ERR_INVALID_MODULE, "op 'tm_orphan_grad' (",
                   "has no forward op 'tm_orphan'");
}

PD_TEST(Module, RefusesADoubleGradOpWithoutGradOp)
{
    expect_refused("double_grad_no_grad", PD_ERR_INVALID_MODULE,
                   "has no forward op 'tm_no_grad_grad'", "op 'tm_no_grad_grad_grad'");
}

PD_TEST(Module, RefusesGradAttrsThatAreNoSubsetOfTheForwardOps)
{
    expect_refused("grad_attr_not_subset", PD_ERR_INVALID_MODULE,
                   "attr \"scale: float\" is not an attr of 'tm_subset'", "op 'tm_subset_grad'");
}

PD_TEST(Module, RefusesAGradAttrOfAnotherTypeThanTheForwardOps)
{
    expect_refused("grad_attr_type", PD_ERR_INVALID_MODULE,
                   "attr \"axis: int\" has type int, but 'tm_subset' declares \"axis: int64_t\"",
                   "op 'tm_subset_grad'");
}

PD_TEST(Module, RefusesTheSameOpTwiceInOneModule)
{
    expect_refused("dup_within", PD_ERR_INVALID_MODULE,
                   "op 'tm_twice' is defined twice in this module", "refuse.c:", "refuse_twin.c:");
}

PD_TEST(Module, RefusesAnOpNameRegisteredByAnotherModuleNamingBothLibraries)
{
    expect_refused("dup_across", PD_ERR_ALREADY_EXISTS, "op 'tm_aliases' is already registered by ",
                   module_path("tm_good_ops"), module_path("tm_refuse_dup_across"));
}

/* --- Lookups racing with loads ------------------------------------------------------------ */

typedef struct finder_arg {
    pd_registry *reg;
    int misses;      /* good ops not found, or found under another name */
    int toggled_bad; /* tm_split answered with another op */
} finder_arg;

static void *finder(void *p)
{
    finder_arg *a = p;
    static const char *const names[] = {"tm_every_attr", "tm_every_attr_grad", "tm_aliases",
                                        "tm_inplace", "tm_every_attr_grad_grad"};
    for (int i = 0; i < 20000; ++i) {
        const char *name = names[i % 5];
        const pd_op *op = pd_op_find(a->reg, name);
        if (op == NULL || strcmp(pd_op_name(op), name) != 0)
            ++a->misses;
        /* tm_split comes and goes with the module the main thread loads and unloads: it may
         * or may not be found, but a lookup must never answer with another op (here: one
         * that stays loaded). Only addresses are compared: the op may be freed by an unload
         * as soon as the lookup returns, so reading it here would race with that unload. */
        const pd_op *split = pd_op_find(a->reg, "tm_split");
        if (split != NULL && split == pd_op_find(a->reg, "tm_every_attr"))
            ++a->toggled_bad;
    }
    return NULL;
}

PD_TEST(Module, FindsOpsFromManyThreadsWhileAnotherModuleLoadsAndUnloads)
{
    pd_registry *reg = registry_with_good_ops(NULL);
    PD_ASSERT(reg != NULL);
    enum { THREADS = 4 };
    pthread_t threads[THREADS];
    finder_arg args[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        args[t] = (finder_arg){reg, 0, 0};
        PD_ASSERT_EQ(pthread_create(&threads[t], NULL, finder, &args[t]), 0);
    }
    int load_failures = 0;
    for (int round = 0; round < 40; ++round) {
        pd_module *m = NULL;
        if (pd_module_load(reg, module_path("tm_forward_only"), &m) != PD_OK)
            ++load_failures;
        else if (pd_module_unload(m) != PD_OK)
            ++load_failures;
    }
    for (int t = 0; t < THREADS; ++t) {
        pthread_join(threads[t], NULL);
        PD_EXPECT_EQ(args[t].misses, 0);
        PD_EXPECT_EQ(args[t].toggled_bad, 0);
    }
    PD_EXPECT_EQ(load_failures, 0);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    pd_registry_destroy(reg);
}
