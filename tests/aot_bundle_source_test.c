/* aot_bundle_source_test.c - the C source a bundle gets for its MindSpore AOT functions,
 * filled by the JIT from templates/bundle_aot.c.in and bundle_aot_entry.c.in
 * (pd_jit_aot_bundle_source): what each function's descriptor holds, that every placeholder
 * is filled and every string is a safe C literal, and the refusals of bad input. That the
 * source compiles and runs is aot_bundle_test's (through `pdext bundle`). */
#include "pd_test.h"
#include "pdext_aot.h"
#include "pdext_jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pd_aot_options options(int32_t n_inputs)
{
    pd_aot_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.n_inputs = n_inputs;
    return o;
}

/* The text of one function's descriptor: from its comment to the end of its table entry. */
static char *entry_text(const char *source, const char *spec)
{
    char head[256];
    snprintf(head, sizeof head, "/* %s */", spec);
    const char *at = strstr(source, head);
    const char *end = at ? strstr(at, "PD__OP_SECTION") : NULL;
    if (end == NULL)
        return NULL;
    end += strcspn(end, "\n");
    size_t n = (size_t)(end - at);
    char *s = malloc(n + 1);
    memcpy(s, at, n);
    s[n] = '\0';
    return s;
}

PD_TEST(AotBundleSource, EachFunctionGetsADescriptorFromTheTemplate)
{
    const char *attrs[] = {"scale: float", "mode: std::string = \"neg\""};
    const char *inputs[] = {"x", "y"};
    pd_aot_output outs[2];
    memset(outs, 0, sizeof outs);
    outs[0].ndim = 2;
    outs[0].shape[0] = 4;
    outs[0].shape[1] = 5;
    outs[0].dtype = PD_FLOAT32;
    outs[1].ndim = -1;
    outs[1].name = "rest";
    pd_aot_options a = options(2), b = options(1);
    a.name = "affine";
    a.input_names = inputs;
    a.attrs = attrs;
    a.n_attrs = 2;
    a.n_outputs = 2;
    a.outputs = outs;
    const char *specs[] = {"dir/affine.cc:CustomAffine", "k/add.cu:GpuAdd"};
    const pd_aot_options *fns[] = {&a, &b};
    const char *cxxflags[] = {"-O2", "-D_GLIBCXX_USE_CXX11_ABI=0"};
    pd_jit_options j;
    memset(&j, 0, sizeof j);
    j.struct_size = sizeof j;
    j.cxxflags = cxxflags;
    j.n_cxxflags = 2; /* the old ABI for C++ sources; a .cu reads cuda_flags (none: new) */
    char *src = NULL;
    PD_ASSERT_OK(pd_jit_aot_bundle_source(&j, specs, fns, 2, &src));
    PD_EXPECT(strchr(src, '@') == NULL); /* every placeholder filled */
    PD_EXPECT_CONTAINS(src, "#include \"pdext_aot_bundle.h\"");
    PD_EXPECT_CONTAINS(src, "pd_aot_bundle_release(&pd_aot_op_0);\n"
                            "    pd_aot_bundle_release(&pd_aot_op_1);\n}");
    char *e0 = entry_text(src, specs[0]), *e1 = entry_text(src, specs[1]);
    PD_ASSERT(e0 != NULL && e1 != NULL);
    PD_EXPECT_CONTAINS(e0, "static pd_aot_bundle_op pd_aot_op_0 = {");
    PD_EXPECT_CONTAINS(e0, ".name = \"affine\"");
    PD_EXPECT_CONTAINS(e0, ".file = \"dir/affine.cc\"");
    PD_EXPECT_CONTAINS(e0, ".inputs = {\"x\", \"y\"}");
    PD_EXPECT_CONTAINS(e0, ".outputs = {\"out0\", \"rest\"}");
    PD_EXPECT_CONTAINS(e0, ".attrs = {\"scale: float\", \"mode: std::string = \\\"neg\\\"\"}");
    PD_EXPECT_CONTAINS(e0, ".fn = CustomAffine, .init = CustomAffineInit");
    PD_EXPECT_CONTAINS(e0, ".cxx11_abi = 0, .gpu = 0, .n_inputs = 2, .n_outputs = 2");
    PD_EXPECT_CONTAINS(e0, ".out_dtype = {12, 0}"); /* PD_FLOAT32, PD_UNDEFINED */
    PD_EXPECT_EQ(PD_FLOAT32, 12);
    PD_EXPECT_EQ(PD_UNDEFINED, 0);
    PD_EXPECT_CONTAINS(e0, ".out_ndim = {2, -1}");
    PD_EXPECT_CONTAINS(e0, ".out_shape = {{4, 5}, {}}");
    PD_EXPECT_CONTAINS(e0, "pd_aot_ptr_0 = &pd_aot_op_0.def;");
    PD_EXPECT_CONTAINS(e1, ".name = \"GpuAdd\""); /* no name: the function's */
    PD_EXPECT_CONTAINS(e1, ".inputs = {\"in0\"}");
    PD_EXPECT_CONTAINS(e1, ".cxx11_abi = 1, .gpu = 1, .n_inputs = 1, .n_outputs = 1");
    PD_EXPECT_CONTAINS(e1, ".out_ndim = {-1}");
    free(e0);
    free(e1);
    free(src);
}

/* A path that would end the comment or the string is written so that it cannot. */
PD_TEST(AotBundleSource, OddPathsStayInsideTheirLiteralAndComment)
{
    pd_aot_options o = options(1);
    const char *specs[] = {"we\"ird*/dir\\a.cc:F"};
    const pd_aot_options *fns[] = {&o};
    char *src = NULL;
    PD_ASSERT_OK(pd_jit_aot_bundle_source(NULL, specs, fns, 1, &src));
    PD_EXPECT_CONTAINS(src, "/* we\"ird* /dir\\a.cc:F */");
    PD_EXPECT_CONTAINS(src, ".file = \"we\\\"ird*/dir\\\\a.cc\"");
    free(src);
}

PD_TEST(AotBundleSource, BadFunctionsAreRefusedNamingTheSpec)
{
    pd_aot_options o = options(1), many = options(PD_MAX_INPUTS + 1), unsized = options(1);
    unsized.struct_size = 0;
    char *src = (char *)"untouched";
    const char *bad_spec[] = {"add.cc"};
    const pd_aot_options *fns[] = {&o};
    PD_EXPECT_ERROR(pd_jit_aot_bundle_source(NULL, bad_spec, fns, 1, &src), PD_ERR_INVALID_ARGUMENT,
                    "'add.cc' names no function");
    PD_EXPECT(src == NULL);
    const char *spec[] = {"add.cc:F"};
    const pd_aot_options *too_many[] = {&many};
    PD_EXPECT_ERROR(pd_jit_aot_bundle_source(NULL, spec, too_many, 1, &src),
                    PD_ERR_INVALID_ARGUMENT, "add.cc:F: 17 inputs");
    const pd_aot_options *no_size[] = {&unsized};
    PD_EXPECT_ERROR(pd_jit_aot_bundle_source(NULL, spec, no_size, 1, &src), PD_ERR_INVALID_ARGUMENT,
                    "add.cc:F: its options");
    PD_EXPECT_ERROR(pd_jit_aot_bundle_source(NULL, spec, fns, 1, NULL), PD_ERR_INVALID_ARGUMENT,
                    "source is NULL");
}
