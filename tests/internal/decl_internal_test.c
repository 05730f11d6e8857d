/*
 * decl_internal_test.c - the declaration parser (ops/decl.c) on its own: name segments, attr
 * types with white space, default values at the edges of their types, and the registered
 * names of grad ops. Linked against the static library, whose hidden functions it calls.
 */
#include "ops/decl.h"
#include "pd_test.h"

#include <string.h>

static pd_status attr(const char *decl, pd__attr_decl *out)
{
    return pd__decl_parse_attr("op 't' (t.c:1)", 0, decl, out);
}

PD_TEST(DeclParse, SplitsVectorAndOptionalSegmentsAndKeepsTheOthers)
{
    pd__arg_decl d;
    PD_ASSERT_OK(pd__decl_parse_arg("op 't' (t.c:1)", "input", 0, "X@VECTOR@GRAD", &d));
    PD_EXPECT_STREQ(d.base, "X@GRAD");
    PD_EXPECT(d.is_vector && !d.is_optional);
    PD_ASSERT_OK(pd__decl_parse_arg("op 't' (t.c:1)", "input", 0, "Y@OPTIONAL", &d));
    PD_EXPECT_STREQ(d.base, "Y");
    PD_EXPECT(d.is_optional);
    PD_ASSERT_OK(pd__decl_parse_arg("op 't' (t.c:1)", "input", 0, "X@VECTORS", &d));
    PD_EXPECT_STREQ(d.base, "X@VECTORS");
    PD_EXPECT(!d.is_vector);
    PD_EXPECT_ERROR(pd__decl_parse_arg("op 't' (t.c:1)", "output", 2, "X@", &d),
                    PD_ERR_INVALID_MODULE, "op 't' (t.c:1): output \"X@\" has an empty '@' suffix");
}

PD_TEST(DeclParse, FindsByDeclarationFirstThenByName)
{
    pd__arg_decl d[2];
    PD_ASSERT_OK(pd__decl_parse_arg("w", "input", 0, "X@VECTOR", &d[0]));
    PD_ASSERT_OK(pd__decl_parse_arg("w", "input", 1, "Y", &d[1]));
    PD_EXPECT_EQ(pd__decl_find(d, 2, "X"), 0);
    PD_EXPECT_EQ(pd__decl_find(d, 2, "X@VECTOR"), 0);
    PD_EXPECT_EQ(pd__decl_find(d, 2, "Y"), 1);
    PD_EXPECT_EQ(pd__decl_find(d, 2, "Z"), -1);
}

PD_TEST(DeclParse, ReadsDefaultsAtTheEdgesOfTheirTypes)
{
    pd__attr_decl a;
    PD_ASSERT_OK(attr("n : int = -2147483648", &a));
    PD_EXPECT_EQ(a.default_value.v.i, INT32_MIN);
    PD_EXPECT_STREQ(a.default_text, "-2147483648");
    pd__decl_attr_free(&a);
    PD_ASSERT_OK(attr("n: int64_t = 9223372036854775807", &a));
    PD_EXPECT_EQ(a.default_value.v.i64, INT64_MAX);
    pd__decl_attr_free(&a);
    PD_ASSERT_OK(attr("s: std::string = \"\"", &a));
    PD_EXPECT_STREQ(a.default_value.v.s, "");
    pd__decl_attr_free(&a);
    PD_ASSERT_OK(attr("s: string = \"tab\\there\"", &a));
    PD_EXPECT_STREQ(a.default_value.v.s, "tab\there");
    pd__decl_attr_free(&a);
    PD_ASSERT_OK(attr("v: std::vector< int64_t > = { -1 , 2 }", &a));
    PD_EXPECT_EQ(a.type, PD_ATTR_INT64S);
    PD_EXPECT_EQ(a.default_value.count, 2);
    PD_EXPECT_EQ(a.default_value.v.int64s[0], -1);
    PD_EXPECT_STREQ(a.default_text, "{ -1 , 2 }");
    pd__decl_attr_free(&a);
    PD_ASSERT_OK(attr("f: float[] = {}", &a));
    PD_EXPECT_EQ(a.default_value.count, 0);
    pd__decl_attr_free(&a);
    PD_ASSERT_OK(attr("d: double = -2.5e-3", &a));
    PD_EXPECT_NEAR(a.default_value.v.d, -2.5e-3, 0);
    pd__decl_attr_free(&a);
    PD_ASSERT_OK(attr("n: int", &a));
    PD_EXPECT(!a.has_default && a.default_text == NULL && a.default_block == NULL);
}

PD_TEST(DeclParse, RefusesDefaultsThatAreNotValuesOfTheType)
{
    pd__attr_decl a;
    const char *bad[] = {"n: int = 2147483648",
                         "n: int = 1.5",
                         "n: int64_t = 0x10",
                         "b: bool = 1",
                         "f: float = 1e39",
                         "d: double = nan",
                         "s: std::string = \"a",
                         "s: std::string = \"a\\q\"",
                         "v: int[] = {1, 2,}",
                         "v: int[] = {1,, 2}",
                         "v: std::vector<int> = 1",
                         "t: string[] = {\"a\" \"b\"}",
                         "n: int ="};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        PD_EXPECT_ERROR(attr(bad[i], &a), PD_ERR_INVALID_MODULE, "but its default");
        PD_EXPECT(a.default_block == NULL && a.default_text == NULL); /* nothing left */
    }
}

PD_TEST(DeclParse, NamesGradAndForwardOps)
{
    char buf[64];
    PD_ASSERT(pd__op_registered_name("relu", PD_OP_DOUBLE_GRAD, buf, sizeof buf));
    PD_EXPECT_STREQ(buf, "relu_grad_grad");
    PD_ASSERT(pd__op_grad_name("relu_grad", PD_OP_GRAD, buf, sizeof buf));
    PD_EXPECT_STREQ(buf, "relu_grad_grad");
    PD_EXPECT(!pd__op_grad_name("relu_grad_grad", PD_OP_DOUBLE_GRAD, buf, sizeof buf));
    PD_ASSERT(pd__op_forward_name("relu_grad_grad", PD_OP_DOUBLE_GRAD, buf, sizeof buf));
    PD_EXPECT_STREQ(buf, "relu_grad");
    PD_EXPECT(!pd__op_forward_name("relu", PD_OP_FORWARD, buf, sizeof buf));
    pd__arg_decl in[2], grad;
    PD_ASSERT_OK(pd__decl_parse_arg("w", "input", 0, "X", &in[0]));
    PD_ASSERT_OK(pd__decl_parse_arg("w", "input", 1, "Out@GRAD", &in[1]));
    PD_ASSERT_OK(pd__decl_parse_arg("w", "output", 0, "X@GRAD", &grad));
    PD_EXPECT_EQ(pd__decl_grad_source(in, 2, &grad), 0);
    PD_ASSERT_OK(pd__decl_parse_arg("w", "output", 0, "Out@GRAD@GRAD", &grad));
    PD_EXPECT_EQ(pd__decl_grad_source(in, 2, &grad), 1);
}
