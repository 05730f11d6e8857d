/*
 * opdef_test.c - validation of single op definitions, fed to the loader as in-memory op
 * tables through pd_module_load_info: attr spellings and white space, name lists, inplace
 * maps, struct sizes, and malformed info blocks. (tests/module_test.c covers the same
 * refusals as real libraries.)
 */
#include "pd_test.h"

#include <stddef.h>
#include <stdio.h>

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }

static const pd_api *test_slot; /* the "module's" function-table slot */

/* An info block describing `n` definitions. */
static pd_module_info info_of(const pd_op_def *const *defs, int n)
{
    pd_module_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.abi_major = PD_ABI_MAJOR;
    info.abi_minor = PD_ABI_MINOR;
    info.ops_begin = defs;
    info.ops_end = defs + n;
    info.api_slot = &test_slot;
    info.sdk_version = PD_VERSION_STRING;
    info.compiler = "test";
    return info;
}

/* A forward op "t" with input X, output Out and kernel noop. */
static pd_op_def plain_def(const char *name)
{
    pd_op_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.kind = PD_OP_FORWARD;
    d.name = name;
    d.file = "opdef_test.c";
    d.line = 1;
    d.inputs[0] = "X";
    d.outputs[0] = "Out";
    d.kernel = noop;
    return d;
}

/* Loads the single definition `d` into a fresh registry; returns the status and leaves the
 * registry's op count in *count (0 expected on failure). */
static pd_status load_one(const pd_op_def *d, int32_t *count)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return PD_ERR_INTERNAL;
    const pd_op_def *table[1] = {d};
    pd_module_info info = info_of(table, 1);
    pd_status s = pd_module_load_info(reg, &info, "opdef_test", NULL);
    *count = pd_registry_op_count(reg);
    pd_registry_destroy(reg); /* sets no error: the load's message stays */
    return s;
}

/* The type an attr declaration parses to, through a real load; UNDEFINED when refused. */
static pd_attr_type attr_type_of(const char *decl)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return PD_ATTR_UNDEFINED;
    pd_op_def d = plain_def("t");
    d.attrs[0] = decl;
    const pd_op_def *table[1] = {&d};
    pd_module_info info = info_of(table, 1);
    pd_attr_type t = PD_ATTR_UNDEFINED;
    if (pd_module_load_info(reg, &info, "opdef_test", NULL) == PD_OK)
        t = pd_op_attr_type(pd_op_find(reg, "t"), 0);
    pd_registry_destroy(reg);
    return t;
}

/* Loads `d` and expects it refused with PD_ERR_INVALID_MODULE and `needle` in the message. */
static void expect_def_refused(const pd_op_def *d, const char *needle)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    const pd_op_def *table[1] = {d};
    pd_module_info info = info_of(table, 1);
    test_slot = NULL;
    PD_EXPECT_ERROR(pd_module_load_info(reg, &info, "opdef_test", NULL), PD_ERR_INVALID_MODULE,
                    needle);
    PD_EXPECT_CONTAINS(pd_last_error(), "pd_module_load_info: opdef_test: ");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    PD_EXPECT(test_slot == NULL); /* a refused module is not handed the table */
    pd_registry_destroy(reg);
}

/* --- Attr declarations -------------------------------------------------------------------- */

PD_TEST(OpDef, AcceptsEveryPaddleAttrSpelling)
{
    PD_EXPECT_EQ(attr_type_of("a: bool"), PD_ATTR_BOOL);
    PD_EXPECT_EQ(attr_type_of("a: int"), PD_ATTR_INT);
    PD_EXPECT_EQ(attr_type_of("a: float"), PD_ATTR_FLOAT);
    PD_EXPECT_EQ(attr_type_of("a: double"), PD_ATTR_DOUBLE);
    PD_EXPECT_EQ(attr_type_of("a: int64_t"), PD_ATTR_INT64);
    PD_EXPECT_EQ(attr_type_of("a: std::string"), PD_ATTR_STRING);
    PD_EXPECT_EQ(attr_type_of("a: std::vector<int>"), PD_ATTR_INTS);
    PD_EXPECT_EQ(attr_type_of("a: std::vector<float>"), PD_ATTR_FLOATS);
    PD_EXPECT_EQ(attr_type_of("a: std::vector<int64_t>"), PD_ATTR_INT64S);
    PD_EXPECT_EQ(attr_type_of("a: std::vector<std::string>"), PD_ATTR_STRINGS);
}

PD_TEST(OpDef, AcceptsTheCAliases)
{
    PD_EXPECT_EQ(attr_type_of("a: int32"), PD_ATTR_INT);
    PD_EXPECT_EQ(attr_type_of("a: int64"), PD_ATTR_INT64);
    PD_EXPECT_EQ(attr_type_of("a: string"), PD_ATTR_STRING);
    PD_EXPECT_EQ(attr_type_of("a: int[]"), PD_ATTR_INTS);
    PD_EXPECT_EQ(attr_type_of("a: float[]"), PD_ATTR_FLOATS);
    PD_EXPECT_EQ(attr_type_of("a: int64[]"), PD_ATTR_INT64S);
    PD_EXPECT_EQ(attr_type_of("a: string[]"), PD_ATTR_STRINGS);
}

PD_TEST(OpDef, AcceptsWhiteSpaceAroundNameTypeAndPunctuation)
{
    PD_EXPECT_EQ(attr_type_of("a:int"), PD_ATTR_INT);
    PD_EXPECT_EQ(attr_type_of("  a  :  int64_t  "), PD_ATTR_INT64);
    PD_EXPECT_EQ(attr_type_of("a:\tdouble\n"), PD_ATTR_DOUBLE);
    PD_EXPECT_EQ(attr_type_of("a: std :: vector < int64_t >"), PD_ATTR_INT64S);
    PD_EXPECT_EQ(attr_type_of("a: std::vector<std :: string >"), PD_ATTR_STRINGS);
    PD_EXPECT_EQ(attr_type_of("a: float [ ]"), PD_ATTR_FLOATS);
}

PD_TEST(OpDef, NamesTheAttrWithoutItsType)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_op_def d = plain_def("t");
    d.attrs[0] = " axis :int64_t";
    d.attrs[1] = "keep_dim: bool";
    const pd_op_def *table[1] = {&d};
    pd_module_info info = info_of(table, 1);
    PD_ASSERT_OK(pd_module_load_info(reg, &info, "opdef_test", NULL));
    const pd_op *op = pd_op_find(reg, "t");
    PD_EXPECT_EQ(pd_op_attr_count(op), 2);
    PD_EXPECT_STREQ(pd_op_attr_name(op, 0), "axis");
    PD_EXPECT_STREQ(pd_op_attr_name(op, 1), "keep_dim");
    pd_registry_destroy(reg);
}

PD_TEST(OpDef, RefusesMalformedAttrDeclarationsQuotingThem)
{
    static const struct {
        const char *decl, *needle;
    } cases[] = {
        {"", "attr 0 is an empty string \"\""},
        {"axis", "attr \"axis\" is malformed: expected \"name: type\""},
        {": int", "attr \": int\" is malformed: expected \"name: type\" with a non-empty name"},
        {"axis:", "attr \"axis:\" is malformed: unknown type \"\""},
        {"axis: ", "attr \"axis: \" is malformed: unknown type \"\""},
        {"axis: long", "unknown type \"long\""},
        {"axis: std::vector<double>", "unknown type \"std::vector<double>\""},
        {"axis: vector<int>", "unknown type \"vector<int>\""},
        {"axis: int 64", "unknown type \"int 64\""},
        {"axis: Int", "unknown type \"Int\""},
        {"my axis: int", "its name \"my axis\" is not an identifier"},
        {"a-b: int", "its name \"a-b\" is not an identifier"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pd_op_def d = plain_def("t");
        d.attrs[0] = cases[i].decl;
        expect_def_refused(&d, cases[i].needle);
        PD_EXPECT_CONTAINS(pd_last_error(), "op 't' (opdef_test.c:1): ");
    }
}

/* --- Names and lists ---------------------------------------------------------------------- */

PD_TEST(OpDef, CountsListsUpToTheFirstNull)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_op_def d = plain_def("t");
    d.inputs[1] = PD_VEC("Ys");
    d.inputs[2] = PD_OPTIONAL("Z");
    d.outputs[1] = PD_VEC("Outs");
    const pd_op_def *table[1] = {&d};
    pd_module_info info = info_of(table, 1);
    PD_ASSERT_OK(pd_module_load_info(reg, &info, "opdef_test", NULL));
    const pd_op *op = pd_op_find(reg, "t");
    PD_EXPECT_EQ(pd_op_input_count(op), 3);
    PD_EXPECT_EQ(pd_op_output_count(op), 2);
    PD_EXPECT_EQ(pd_op_attr_count(op), 0);
    PD_EXPECT(pd_op_definition(op) == &d);
    pd_registry_destroy(reg);
}

PD_TEST(OpDef, AcceptsFullLists)
{
    static char names[PD_MAX_INPUTS][16];
    pd_op_def d = plain_def("t");
    for (int i = 0; i < PD_MAX_INPUTS; ++i) {
        snprintf(names[i], sizeof names[i], "X%d", i);
        d.inputs[i] = names[i];
    }
    int32_t count = -1;
    PD_EXPECT_OK(load_one(&d, &count));
    PD_EXPECT_EQ(count, 1);
}

PD_TEST(OpDef, RefusesBadInputAndOutputNamesQuotingThem)
{
    static const struct {
        const char *input, *needle;
    } cases[] = {
        {"", "input 1 is an empty string \"\""},
        {"@VECTOR", "input \"@VECTOR\" has an empty name before '@'"},
        {"Y@", "input \"Y@\" has an empty '@' suffix"},
        {"Y@@GRAD", "input \"Y@@GRAD\" has an empty '@' suffix"},
        {"Y Z", "input \"Y Z\" contains white space"},
        {"X@OPTIONAL", "input \"X\" is declared twice (as \"X\" and \"X@OPTIONAL\")"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pd_op_def d = plain_def("t");
        d.inputs[1] = cases[i].input;
        expect_def_refused(&d, cases[i].needle);
    }
    pd_op_def d = plain_def("t");
    d.outputs[1] = PD_VEC("Out");
    expect_def_refused(&d, "output \"Out\" is declared twice (as \"Out\" and \"Out@VECTOR\")");
}

PD_TEST(OpDef, TellsAGradOfAVectorFromTheVector)
{
    /* "X@VECTOR@GRAD" binds as "X@GRAD", a different name from "X". */
    pd_op_def d = plain_def("t");
    d.inputs[0] = PD_VEC("X");
    d.inputs[1] = PD_GRAD(PD_VEC("X"));
    int32_t count = -1;
    PD_EXPECT_OK(load_one(&d, &count));
    PD_EXPECT_EQ(count, 1);
}

PD_TEST(OpDef, RefusesAnOpWithoutOutputs)
{
    pd_op_def d = plain_def("t");
    d.outputs[0] = NULL;
    expect_def_refused(&d, "op 't' (opdef_test.c:1) declares no outputs");
}

PD_TEST(OpDef, RefusesOutputsLikeInput0WithoutInputs)
{
    pd_op_def d = plain_def("t");
    d.inputs[0] = NULL;
    d.flags = PD_OP_OUTPUTS_LIKE_INPUT0;
    expect_def_refused(&d, "op 't' (opdef_test.c:1) has flag PD_OP_OUTPUTS_LIKE_INPUT0 but "
                           "declares no inputs");
}

PD_TEST(OpDef, RefusesAnOpNameThatIsNoIdentifierOrTooLong)
{
    pd_op_def d = plain_def("my op");
    expect_def_refused(&d, "has name \"my op\"; an op name must be a C identifier");
    d = plain_def(NULL);
    expect_def_refused(&d, "has name \"(null)\"");
    d = plain_def("9lives");
    expect_def_refused(&d, "has name \"9lives\"");
    static char long_name[200];
    memset(long_name, 'a', sizeof long_name - 1);
    d = plain_def(long_name);
    expect_def_refused(&d, "is too long");
}

PD_TEST(OpDef, RefusesANullTableEntry)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_op_def d = plain_def("t");
    const pd_op_def *table[2] = {&d, NULL};
    pd_module_info info = info_of(table, 2);
    PD_EXPECT_ERROR(pd_module_load_info(reg, &info, "opdef_test", NULL), PD_ERR_INVALID_MODULE,
                    "op table entry 1 is NULL");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

/* --- Struct sizes ------------------------------------------------------------------------- */

PD_TEST(OpDef, ReadsAnOlderDefinitionOnlyUpToItsStructSize)
{
    /* A definition from an SDK whose pd_op_def ended after `kernel`: infer_shape and
     * infer_dtype lie past its struct_size and must read as absent. The op still loads. */
    pd_op_def d = plain_def("t");
    d.struct_size = (uint32_t)(offsetof(pd_op_def, kernel) + sizeof(pd_kernel_fn));
    d.infer_shape = noop; /* garbage from the reader's point of view */
    int32_t count = -1;
    PD_EXPECT_OK(load_one(&d, &count));
    PD_EXPECT_EQ(count, 1);
}

PD_TEST(OpDef, RefusesAStructSizeThatCannotHoldTheKernel)
{
    pd_op_def d = plain_def("t");
    d.struct_size = (uint32_t)offsetof(pd_op_def, kernel);
    expect_def_refused(&d, "op table entry 0 has struct_size");
    d.struct_size = 1u << 20;
    expect_def_refused(&d, "op table entry 0 has struct_size 1048576");
}

/* --- Inplace maps ------------------------------------------------------------------------- */

PD_TEST(OpDef, AcceptsInplacePairsByDeclaredOrBaseName)
{
    pd_op_def d = plain_def("t");
    d.inputs[1] = PD_VEC("Xs");
    d.outputs[1] = PD_VEC("Outs");
    d.inplace[0][0] = "X";
    d.inplace[0][1] = "Out";
    d.inplace[1][0] = "Xs"; /* the base name of "Xs@VECTOR" */
    d.inplace[1][1] = PD_VEC("Outs");
    int32_t count = -1;
    PD_EXPECT_OK(load_one(&d, &count));
    PD_EXPECT_EQ(count, 1);
}

PD_TEST(OpDef, RefusesBadInplaceMaps)
{
    pd_op_def d = plain_def("t");
    d.inplace[0][0] = "X";
    expect_def_refused(&d, "inplace pair 0 {\"X\", \"(null)\"} is incomplete");

    d = plain_def("t");
    d.inputs[1] = PD_VEC("Xs");
    d.inplace[0][0] = PD_VEC("Xs");
    d.inplace[0][1] = "Out";
    expect_def_refused(&d, "inplace pair {\"Xs@VECTOR\", \"Out\"} maps a vector to a single "
                           "tensor");

    d = plain_def("t");
    d.inputs[1] = "Y";
    d.inplace[0][0] = "X";
    d.inplace[0][1] = "Out";
    d.inplace[1][0] = "Y";
    d.inplace[1][1] = "Out";
    expect_def_refused(&d, "inplace map names output \"Out\" twice");

    d = plain_def("t");
    d.outputs[1] = "Out2";
    d.inplace[0][0] = "X";
    d.inplace[0][1] = "Out";
    d.inplace[1][0] = "X";
    d.inplace[1][1] = "Out2";
    expect_def_refused(&d, "inplace map names input \"X\" twice");

    d = plain_def("t");
    d.inplace[0][0] = "Out";
    d.inplace[0][1] = "Out";
    expect_def_refused(&d, "inplace map names input \"Out\", which is not a declared input");
}

/* --- Info blocks -------------------------------------------------------------------------- */

PD_TEST(OpDef, HandsTheTableOnlyOnSuccess)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_op_def d = plain_def("t");
    const pd_op_def *table[1] = {&d};
    pd_module_info info = info_of(table, 1);
    test_slot = NULL;
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_module_load_info(reg, &info, "my bundle", &m));
    PD_EXPECT(test_slot == pd_runtime_api());
    PD_EXPECT_STREQ(pd_module_path(m), "my bundle");
    /* The module keeps its own copy: the caller's block may be a temporary. */
    memset(&info, 0, sizeof info);
    PD_EXPECT_EQ(pd_module_get_info(m)->abi_major, PD_ABI_MAJOR);
    PD_EXPECT(pd_module_get_info(m)->ops_begin == table);
    pd_registry_destroy(reg);
}

PD_TEST(OpDef, RefusesMalformedInfoBlocks)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_op_def d = plain_def("t");
    const pd_op_def *table[1] = {&d};

    pd_module_info info = info_of(table, 1);
    info.struct_size = 8;
    PD_EXPECT_ERROR(pd_module_load_info(reg, &info, "blk", NULL), PD_ERR_INVALID_MODULE,
                    "pd_module_load_info: blk: its module info block has struct_size 8");
    info = info_of(table, 0);
    PD_EXPECT_ERROR(pd_module_load_info(reg, &info, "blk", NULL), PD_ERR_INVALID_MODULE,
                    "blk contains no ops");
    const pd_op_def *pair[2] = {&d, &d};
    info = info_of(pair + 1, 0);
    info.ops_end = pair; /* before ops_begin */
    PD_EXPECT_ERROR(pd_module_load_info(reg, &info, "blk", NULL), PD_ERR_INVALID_MODULE,
                    "contains no ops");
    info = info_of(table, 1);
    info.api_slot = NULL;
    PD_EXPECT_ERROR(pd_module_load_info(reg, &info, "blk", NULL), PD_ERR_INVALID_MODULE,
                    "blk has ops but no api_slot");
    info = info_of(table, 1);
    info.abi_minor = PD_ABI_MINOR + 1;
    PD_EXPECT_ERROR(pd_module_load_info(reg, &info, "blk", NULL), PD_ERR_ABI_MISMATCH,
                    "blk was built against pdext ABI");
    PD_EXPECT_ERROR(pd_module_load_info(NULL, &info, "blk", NULL), PD_ERR_INVALID_ARGUMENT,
                    "reg is NULL");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

PD_TEST(OpDef, RefusesAWholeTableWhenOneDefinitionIsBad)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_op_def good = plain_def("good_one");
    pd_op_def bad = plain_def("bad_one");
    bad.attrs[0] = "x int";
    const pd_op_def *table[2] = {&good, &bad};
    pd_module_info info = info_of(table, 2);
    PD_EXPECT_ERROR(pd_module_load_info(reg, &info, "blk", NULL), PD_ERR_INVALID_MODULE,
                    "op 'bad_one' (opdef_test.c:1): attr \"x int\" is malformed");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    PD_EXPECT(pd_op_find(reg, "good_one") == NULL);
    pd_registry_destroy(reg);
}
