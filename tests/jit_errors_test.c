/*
 * jit_errors_test.c - every way the JIT loader refuses or fails, each a status and a message
 * that says what to do: compile errors (file:line and the build directory), missing tools
 * (which one, and the Debian package), missing or unknown sources, unsafe module names,
 * unsafe cache directories, modules needing a newer ABI, libraries without ops, bad options.
 */
#include "jit_support.h"

PD_TEST(JitErrors, CompileErrorShowsFileLineAndBuildDirectory)
{
    jit_setup();
    const char *srcs[] = {fixture("broken.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("broken", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_BUILD, "broken.c:5:");
    PD_EXPECT_CONTAINS(pd_last_error(), "undeclared_identifier_here");
    PD_EXPECT_CONTAINS(pd_last_error(), tmp_path("cache/broken"));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, MissingCompilerIsUnavailableNamingToolAndPackage)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    setenv("CC", "/nonexistent/bin/cc-missing", 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("nocc", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE, "cc-missing");
    PD_EXPECT_CONTAINS(pd_last_error(), "Debian package gcc");
    PD_EXPECT_CONTAINS(pd_last_error(), "CC");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, MissingNinjaIsUnavailableNamingThePackage)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    setenv("CC", "/usr/bin/cc", 1);
    setenv("PATH", tmp_path("src"), 1); /* no ninja anywhere */
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("noninja", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE, "ninja-build");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, CudaSourceWithoutNvccNamesTheMissingTool)
{
    jit_setup();
    const char *srcs[] = {fixture("cuda_scale.cu")};
    setenv("NVCC", "/nonexistent/bin/nvcc", 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("nonvcc", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE, "nvcc");
    PD_EXPECT_CONTAINS(pd_last_error(), "CUDA toolkit");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, MissingSourceIsNotFound)
{
    jit_setup();
    const char *srcs[] = {tmp_path("src/absent.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("absent", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_NOT_FOUND, "absent.c");
    const char *bad[] = {tmp_path("src/op.f90")};
    o.sources = bad;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "unknown extension");
    o.n_sources = 0;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "no sources");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RefusesModuleNamesThatAreNotSafeFileNames)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    static const char *const names[] = {"../evil", "a/b", ".hidden", "", "sp ace", "semi;colon"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        pd_jit_options o = options(names[i], srcs, 1);
        pd_module *m = NULL;
        PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "safe file name");
        PD_EXPECT(pd_jit_build_dir(&o) == NULL);
    }
    pd_jit_options o = options(NULL, srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "safe file name");
    PD_EXPECT_EQ(access(tmp_path("evil"), F_OK), -1);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RefusesCacheDirectoryWritableByOthers)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    mkdir(tmp_path("cache"), 0700);
    chmod(tmp_path("cache"), 0777);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("unsafe", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "chmod go-w");
    PD_EXPECT_CONTAINS(pd_last_error(), tmp_path("cache"));

    /* The module's own directory is checked too (group-writable this time). */
    chmod(tmp_path("cache"), 0700);
    mkdir(tmp_path("cache/unsafe"), 0700);
    chmod(tmp_path("cache/unsafe"), 0770);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "writable by its group");
    PD_EXPECT_EQ(ninja_runs(), 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RefusesModuleClaimingANewerAbiWithBothVersions)
{
    jit_setup();
    const char *srcs[] = {fixture("abi_newer.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("newer", srcs, 1);
    pd_module *m = NULL;
    char newer[32], ours[32];
    snprintf(newer, sizeof newer, "ABI %d.%d", PD_ABI_MAJOR, PD_ABI_MINOR + 1);
    snprintf(ours, sizeof ours, "ABI %d.%d", PD_ABI_MAJOR, PD_ABI_MINOR);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_ABI_MISMATCH, newer);
    PD_EXPECT_CONTAINS(pd_last_error(), ours);
    PD_EXPECT_CONTAINS(pd_last_error(), "pd_jit_load: module 'newer'");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RefusesLibraryThatDefinesNoOps)
{
    jit_setup();
    const char *srcs[] = {fixture("no_ops.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("noops", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_MODULE, "no ops");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RejectsNullArgumentsAndStaticKindForLoad)
{
    const char *srcs[] = {"x.c"};
    pd_jit_options o = options("x", srcs, 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(NULL, &o, &m), PD_ERR_INVALID_ARGUMENT, "reg");
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, NULL), PD_ERR_INVALID_ARGUMENT, "out");
    PD_EXPECT_ERROR(pd_jit_load(reg, NULL, &m), PD_ERR_INVALID_ARGUMENT, "opts");
    o.output_kind = PD_JIT_STATIC;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "PD_JIT_SHARED");
    o.output_kind = PD_JIT_SHARED;
    PD_EXPECT_ERROR(pd_jit_build(&o), PD_ERR_INVALID_ARGUMENT, "opts->output");
    pd_registry_destroy(reg);
}

