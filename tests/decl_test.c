/*
 * decl_test.c - op declarations as the runtime parses them: attr defaults of every type
 * (parsed at registration, taken by a call that leaves the attr out, refused with a message
 * naming op, attr and type when they are not a value of it), by-name access from kernels, and
 * pd_op_input_info / pd_op_output_info / pd_op_attr_info, which the `pdext` command reads.
 */
#include "runner_helpers.h"

#include <string.h>

static pd_registry *decl_registry(void) { return rt_registry1("td_decl_ops"); }

/* Runs td_echo with `attrs` and copies its 16 values into v. */
static pd_status run_echo(pd_registry *reg, const pd_attr *attrs, int32_t n, double *v)
{
    pd_tensor x = PD_TENSOR_UNDEFINED, out = PD_TENSOR_UNDEFINED;
    if (pd_tensor_zeros(&x, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){1}) != PD_OK)
        return pd_last_status();
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&out);
    pd_status s = pd_run(reg, "td_echo", &in, 1, attrs, n, &oa, 1);
    if (s == PD_OK)
        memcpy(v, out.data, 16 * sizeof *v);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    return s;
}

PD_TEST(Decl, MissingAttrsTakeTheirDefaultsOfEveryType)
{
    pd_registry *reg = decl_registry();
    PD_ASSERT(reg != NULL);
    pd_attr need = pd_attr_of_int("need", 9);
    double v[16];
    PD_ASSERT_OK(run_echo(reg, &need, 1, v));
    PD_EXPECT_NEAR(v[0], 1.0, 0);          /* flag: bool = true */
    PD_EXPECT_NEAR(v[1], -1.0, 0);         /* axis: int = -1 */
    PD_EXPECT_NEAR(v[2], 0.5, 0);          /* scale: float = 0.5f */
    PD_EXPECT_NEAR(v[3], 1e-5, 1e-18);     /* eps:double=1e-5 */
    PD_EXPECT_NEAR(v[4], 4294967296.0, 0); /* big: int64_t = 4294967296 */
    PD_EXPECT_NEAR(v[5], 5.0, 0);          /* mode = "a\"b,c": 5 characters */
    PD_EXPECT_NEAR(v[6], (double)'"', 0);
    PD_EXPECT_NEAR(v[7], 3.0, 0); /* dims = {1, 2, 3} */
    PD_EXPECT_NEAR(v[8], 3.0, 0);
    PD_EXPECT_NEAR(v[9], 2.0, 0); /* scales = { 0.5, -1.25f } */
    PD_EXPECT_NEAR(v[10], -1.25, 0);
    PD_EXPECT_NEAR(v[11], 0.0, 0); /* offsets = {} */
    PD_EXPECT_NEAR(v[12], 2.0, 0); /* tags = {"a", "b,c"} */
    PD_EXPECT_NEAR(v[13], 3.0, 0);
    PD_EXPECT_NEAR(v[14], 9.0, 0);   /* need: given */
    PD_EXPECT_NEAR(v[15], 700.0, 0); /* n: int64 = 7; X and Out at index 0 */
    pd_registry_destroy(reg);
}

PD_TEST(Decl, GivenAttrsOverrideTheirDefaults)
{
    pd_registry *reg = decl_registry();
    PD_ASSERT(reg != NULL);
    const int32_t dims[2] = {5, 6};
    pd_attr attrs[] = {pd_attr_of_int("need", 1), pd_attr_of_int("axis", 2),
                       pd_attr_of_ints("dims", dims, 2), pd_attr_of_string("mode", "xyz")};
    double v[16];
    PD_ASSERT_OK(run_echo(reg, attrs, 4, v));
    PD_EXPECT_NEAR(v[1], 2.0, 0);
    PD_EXPECT_NEAR(v[5], 3.0, 0);
    PD_EXPECT_NEAR(v[6], (double)'y', 0);
    PD_EXPECT_NEAR(v[7], 2.0, 0);
    PD_EXPECT_NEAR(v[8], 6.0, 0);
    PD_EXPECT_NEAR(v[2], 0.5, 0); /* the others keep their defaults */
    pd_registry_destroy(reg);
}

PD_TEST(Decl, AMissingAttrWithoutADefaultIsStillAnError)
{
    pd_registry *reg = decl_registry();
    PD_ASSERT(reg != NULL);
    double v[16];
    PD_EXPECT_ERROR(run_echo(reg, NULL, 0, v), PD_ERR_INVALID_ARGUMENT,
                    "td_echo: attr 'need' (int) is missing; pass it in attrs, e.g. "
                    "pd_attr_of_int(\"need\", ...)");
    pd_registry_destroy(reg);
}

PD_TEST(Decl, AttrInfoGivesTypeDefaultAndItsText)
{
    pd_registry *reg = decl_registry();
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "td_echo");
    PD_ASSERT(op != NULL);
    PD_ASSERT_EQ(pd_op_attr_count(op), 12);
    pd_attr_info a;
    PD_ASSERT_OK(pd_op_attr_info(op, 4, &a));
    PD_EXPECT_STREQ(a.name, "big");
    PD_EXPECT_EQ(a.type, PD_ATTR_INT64);
    PD_EXPECT(a.has_default);
    PD_EXPECT_STREQ(a.default_text, "4294967296");
    PD_EXPECT_EQ(a.default_value.type, PD_ATTR_INT64);
    PD_EXPECT_EQ(a.default_value.v.i64, 4294967296LL);
    PD_EXPECT_STREQ(a.default_value.name, "big");
    PD_ASSERT_OK(pd_op_attr_info(op, 9, &a));
    PD_EXPECT_STREQ(a.decl, "tags: std::vector<std::string> = {\"a\", \"b,c\"}");
    PD_EXPECT_EQ(a.default_value.count, 2);
    PD_EXPECT_STREQ(a.default_value.v.strings[1], "b,c");
    PD_ASSERT_OK(pd_op_attr_info(op, 10, &a));
    PD_EXPECT_STREQ(a.name, "need");
    PD_EXPECT(!a.has_default);
    PD_EXPECT(a.default_text == NULL);
    PD_EXPECT_EQ(a.default_value.type, PD_ATTR_UNDEFINED);
    PD_ASSERT_OK(pd_op_attr_info(op, 11, &a));
    PD_EXPECT_EQ(a.type, PD_ATTR_INT64); /* the C alias int64 */
    PD_EXPECT_EQ(a.default_value.v.i64, 7);
    pd_registry_destroy(reg);
}

PD_TEST(Decl, InfoRefusesBadArgumentsNamingTheOp)
{
    pd_registry *reg = decl_registry();
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "td_echo");
    pd_arg_info arg;
    pd_attr_info attr;
    PD_EXPECT_ERROR(pd_op_input_info(op, 1, &arg), PD_ERR_INVALID_ARGUMENT,
                    "pd_op_input_info: td_echo: input index 1 is out of range; the op declares 1");
    PD_EXPECT_ERROR(pd_op_output_info(op, -1, &arg), PD_ERR_INVALID_ARGUMENT,
                    "pd_op_output_info: td_echo: output index -1 is out of range");
    PD_EXPECT_ERROR(pd_op_attr_info(op, 12, &attr), PD_ERR_INVALID_ARGUMENT,
                    "pd_op_attr_info: td_echo: attr index 12 is out of range; the op declares 12");
    PD_EXPECT_ERROR(pd_op_attr_info(NULL, 0, &attr), PD_ERR_INVALID_ARGUMENT,
                    "pd_op_attr_info: op is NULL");
    PD_EXPECT_ERROR(pd_op_input_info(op, 0, NULL), PD_ERR_INVALID_ARGUMENT,
                    "pd_op_input_info: out is NULL");
    pd_registry_destroy(reg);
}

PD_TEST(Decl, AnUnknownSegmentStaysPartOfTheName)
{
    pd_registry *reg = decl_registry();
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "td_vectors_name");
    PD_ASSERT(op != NULL);
    pd_arg_info info;
    PD_ASSERT_OK(pd_op_input_info(op, 0, &info));
    PD_EXPECT_STREQ(info.name, "X@VECTORS");
    PD_EXPECT_STREQ(info.decl, "X@VECTORS");
    PD_EXPECT(!info.is_vector && !info.is_optional);
    /* The runner binds it by that name, as one tensor. */
    pd_tensor x = PD_TENSOR_UNDEFINED, out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_zeros(&x, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){2}));
    pd_arg in = pd_arg_named("X@VECTORS", &x, 1), oa = pd_arg_of(&out);
    PD_EXPECT_OK(pd_run(reg, "td_vectors_name", &in, 1, NULL, 0, &oa, 1));
    pd_tensor_release(&out);
    in = pd_arg_named("X", &x, 1);
    PD_EXPECT_ERROR(pd_run(reg, "td_vectors_name", &in, 1, NULL, 0, &oa, 1),
                    PD_ERR_INVALID_ARGUMENT,
                    "td_vectors_name: the op has no input named 'X' (declared: X@VECTORS)");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Decl, VectorAndOptionalFlagsComeFromTheDeclaration)
{
    pd_registry *reg = rt_registry1("tm_good_ops");
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "tm_every_attr");
    PD_ASSERT(op != NULL);
    pd_arg_info info;
    PD_ASSERT_OK(pd_op_input_info(op, 1, &info));
    PD_EXPECT_STREQ(info.name, "Ys");
    PD_EXPECT_STREQ(info.decl, "Ys@VECTOR");
    PD_EXPECT(info.is_vector && !info.is_optional);
    PD_ASSERT_OK(pd_op_input_info(op, 2, &info));
    PD_EXPECT_STREQ(info.name, "Bias");
    PD_EXPECT(!info.is_vector && info.is_optional);
    const pd_op *grad = pd_op_find(reg, "tm_every_attr_grad");
    PD_ASSERT_OK(pd_op_output_info(grad, 1, &info));
    PD_EXPECT_STREQ(info.name, "Ys@GRAD");
    PD_EXPECT(info.is_vector);
    pd_registry_destroy(reg);
}

/* Loading td_bad_<which> fails with a message containing `want`. */
static void expect_refused(const char *which, const char *want)
{
    char rel[64];
    snprintf(rel, sizeof rel, "td_bad_%s.so", which);
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_ERROR(pd_module_load(reg, pd_test_path(rel), NULL), PD_ERR_INVALID_MODULE, want);
    PD_EXPECT(strstr(pd_last_error(), "op 'td_bad' (") != NULL);
    PD_EXPECT(strstr(pd_last_error(), "bad_default.c:") != NULL);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}

PD_TEST(Decl, ADefaultOfTheWrongTypeRefusesTheModuleNamingOpAttrAndType)
{
    expect_refused("int64", "attr 'axis' is declared int64_t, but its default \"abc\" is not "
                            "one; expected an int64_t (e.g. -1)");
    expect_refused("int_range", "attr 'axis' is declared int, but its default \"3000000000\" is "
                                "not one; expected an int");
    expect_refused("bool", "attr 'flag' is declared bool, but its default \"yes\" is not one; "
                           "expected true or false");
    expect_refused("string", "attr 'mode' is declared std::string, but its default \"sum\" is "
                             "not one; expected a string literal");
    expect_refused("vector", "attr 'dims' is declared std::vector<int>, but its default \"1, 2\" "
                             "is not one; expected a list of ints in braces (e.g. {1, 2})");
    expect_refused("element", "attr 'dims' is declared std::vector<int64_t>, but its default "
                              "\"{1, x}\" is not one");
    expect_refused("float", "attr 'scale' is declared float, but its default \"1.5x\" is not one");
    expect_refused("strings", "attr 'tags' is declared std::vector<std::string>, but its default");
}

/* The one identifier rule (pd_name_is_identifier): what op and attr names, static bundles,
 * `pdext new` and an AOT spec's function are checked with. */
PD_TEST(Decl, OneIdentifierRule)
{
    static const char *const yes[] = {"a", "_", "_x1", "custom_relu", "Z9_z"};
    static const char *const no[] = {"", "1a", "a-b", "a b", "a.b", "x@GRAD", "\xc3\xa9t\xc3\xa9"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; ++i)
        PD_EXPECT(pd_name_is_identifier(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; ++i)
        PD_EXPECT(!pd_name_is_identifier(no[i]));
    PD_EXPECT(!pd_name_is_identifier(NULL));
}
