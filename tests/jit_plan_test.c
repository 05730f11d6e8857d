/*
 * jit_plan_test.c - what the JIT's plan decides (jit/jit_plan.c, jit/jit_ninja.c): sources
 * given as text, compiler launchers (outside the cache key), portable code generation, the
 * libraries linked by default, paths that Ninja must escape or cannot take, and the static
 * bundle kind of pd_jit_build (header, .pc, only the registration symbol global).
 *
 * As in jit_test.c, "warm" is "no Ninja ran" (the counting wrapper of jit_support.h).
 */
#include "jit_support.h"

#define SCALE_TEXT(factor)                                                       \
    "#include \"extension.h\"\n"                                                 \
    "static void k(pd_kernel_ctx *ctx) {\n"                                      \
    "    const pd_tensor *x = pd_input(ctx, 0);\n"                               \
    "    pd_tensor *out = pd_output(ctx, 0);\n"                                  \
    "    const float *in = (const float *)pd_data(x);\n"                         \
    "    float *o = (float *)pd_data(out);\n"                                    \
    "    for (int64_t i = 0; i < pd_numel(x); ++i) o[i] = in[i] * " factor ";\n" \
    "}\n"                                                                        \
    "PD_BUILD_OP(inline_scale, .inputs = {\"X\"}, .outputs = {\"Out\"}, .kernel = k);\n"

/* Loads the inline source `text` as module `name` and returns inline_scale at X = 2. */
static double load_inline_text(const char *name, const char *text)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return -1e30;
    pd_jit_source src = {"scale.c", text};
    pd_jit_options o = options(name, NULL, 0);
    o.inline_sources = &src;
    o.n_inline_sources = 1;
    pd_module *m = NULL;
    double v = -1e30;
    if (pd_jit_load(reg, &o, &m) == PD_OK)
        v = run_at_2(reg, "inline_scale");
    else
        fprintf(stderr, "pd_jit_load(%s): %s\n", name, pd_last_error());
    pd_registry_destroy(reg);
    return v;
}

/* --- sources as text ------------------------------------------------------------------------ */

PD_TEST(JitPlan, InlineSourceIsCachedByItsContent)
{
    jit_setup();
    PD_EXPECT_NEAR(load_inline_text("inl", SCALE_TEXT("3.0f")), 6.0, 0);
    PD_EXPECT_NEAR(load_inline_text("inl", SCALE_TEXT("3.0f")), 6.0, 0); /* same text: warm */
    PD_EXPECT_EQ(ninja_runs(), 1);
    PD_EXPECT_NEAR(load_inline_text("inl", SCALE_TEXT("5.0f")), 10.0, 0); /* changed: rebuilt */
    PD_EXPECT_EQ(ninja_runs(), 2);
    PD_EXPECT_NEAR(load_inline_text("inl", SCALE_TEXT("3.0f")), 6.0, 0); /* back: the old text */
    PD_EXPECT_NEAR(load_inline_text("inl", SCALE_TEXT("3.0f")), 6.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 3);
    /* Only the current text's file stays in the build directory. */
    PD_EXPECT_EQ(system("test $(ls \"$PDEXT_CACHE_DIR/inl/src\" | wc -l) -eq 1"), 0);
    jit_teardown();
}

PD_TEST(JitPlan, InlineAndFileSourcesMixInOneModule)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *files[] = {fixture("scale.c")};
    pd_jit_source src = {"twice.c", SCALE_TEXT("2.0f")};
    pd_jit_options o = options("mixed", files, 1);
    o.inline_sources = &src;
    o.n_inline_sources = 1;
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_EQ(pd_module_op_count(m), 2);
    PD_EXPECT_NEAR(run_at_2(reg, "inline_scale"), 4.0, 0);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_scale"), 4.0, 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitPlan, InlineSourceNeedsAPlainFileNameWithAKnownExtension)
{
    jit_setup();
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    pd_jit_source bad[] = {{"dir/x.c", "int x;"}, {"x.txt", "int x;"}, {"x.c", NULL}};
    const char *expect[] = {"inline_sources[0] of module 'badinl' needs a file name without '/'",
                            "inline source 'x.txt' of module 'badinl' has an unknown extension",
                            "got name 'x.c' and no text"};
    for (int i = 0; i < 3; ++i) {
        pd_jit_options o = options("badinl", NULL, 0);
        o.inline_sources = &bad[i];
        o.n_inline_sources = 1;
        PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, expect[i]);
    }
    PD_EXPECT_EQ(ninja_runs(), 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

/* --- compiler launchers --------------------------------------------------------------------- */

/* bin/<name>: a launcher that logs its compiler's name and runs it. */
static void write_launcher(const char *name, const char *log)
{
    char script[1024];
    snprintf(script, sizeof script, "#!/bin/sh\necho \"$1\" >> '%s'\nexec \"$@\"\n", tmp_path(log));
    char rel[64];
    snprintf(rel, sizeof rel, "bin/%s", name);
    write_script(tmp_path(rel), script);
}

PD_TEST(JitPlan, LauncherDoesNotChangeTheCacheKey)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    PD_EXPECT_NEAR(load_and_run("lkey", srcs, 1, "jit_scale"), 4.0, 0);
    write_launcher("ccache", "launched");
    setenv("PDEXT_COMPILER_LAUNCHER", tmp_path("bin/ccache"), 1);
    PD_EXPECT_NEAR(load_and_run("lkey", srcs, 1, "jit_scale"), 4.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 1); /* warm: the launcher is not part of the key */
    PD_EXPECT(read_text(tmp_path("launched")) == NULL);
    jit_teardown();
}

PD_TEST(JitPlan, CMakeStyleLauncherVariablesApplyPerLanguage)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("twice.cc")};
    write_launcher("clauncher", "c.launched");
    write_launcher("cxxlauncher", "cxx.launched");
    setenv("CMAKE_C_COMPILER_LAUNCHER", tmp_path("bin/clauncher"), 1);
    char list[600]; /* a CMake list: the launcher and no further words */
    snprintf(list, sizeof list, "%s;", tmp_path("bin/cxxlauncher"));
    setenv("CMAKE_CXX_COMPILER_LAUNCHER", list, 1);
    PD_EXPECT_NEAR(load_and_run("cmakel", srcs, 2, "jit_twice"), 4.0, 0);
    char *c = read_text(tmp_path("c.launched"));
    PD_EXPECT(c != NULL && strstr(c, "cc") != NULL && strstr(c, "c++") == NULL);
    char *cxx = read_text(tmp_path("cxx.launched"));
    PD_EXPECT(cxx != NULL && strstr(cxx, "c++") != NULL);
    char *ninja = read_text(tmp_path("cache/cmakel/build.ninja"));
    PD_ASSERT(ninja != NULL);
    PD_EXPECT_CONTAINS(ninja, "bin/clauncher $cc");
    PD_EXPECT_CONTAINS(ninja, "bin/cxxlauncher $cxx");
    PD_EXPECT(!pd_test_contains(ninja, "launcher $linker")); /* links are not launched */
    jit_teardown();
}

PD_TEST(JitPlan, LauncherThatIsNotExecutableIsAnErrorNamingIt)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    write_text(tmp_path("bin/notexec"), "#!/bin/sh\nexec \"$@\"\n"); /* mode 0644 */
    chmod(tmp_path("bin/notexec"), 0644);
    setenv("PDEXT_COMPILER_LAUNCHER", tmp_path("bin/notexec"), 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("nolaunch", srcs, 1);
    pd_module *m = NULL;
    char expected[600];
    snprintf(expected, sizeof expected,
             "compiler launcher '%s' (from PDEXT_COMPILER_LAUNCHER) is not an executable program",
             tmp_path("bin/notexec"));
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE, expected);
    setenv("PDEXT_COMPILER_LAUNCHER", "no-such-launcher-xyz", 1);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE,
                    "'no-such-launcher-xyz' (from PDEXT_COMPILER_LAUNCHER) was not found");
    unsetenv("PDEXT_COMPILER_LAUNCHER");
    setenv("CMAKE_C_COMPILER_LAUNCHER", tmp_path("bin/notexec"), 1);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE,
                    "(from CMAKE_C_COMPILER_LAUNCHER) is not an executable program");
    PD_EXPECT_EQ(ninja_runs(), 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

/* --- flags and libraries -------------------------------------------------------------------- */

PD_TEST(JitPlan, PortableBuildLeavesOutMarchNativeAndIsCachedApart)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    PD_EXPECT_NEAR(load_and_run("port", srcs, 1, "jit_scale"), 4.0, 0);
    char *ninja = read_text(tmp_path("cache/port/build.ninja"));
    PD_EXPECT(ninja != NULL && strstr(ninja, "-march=native") != NULL);
    setenv("PDEXT_JIT_PORTABLE", "1", 1);
    PD_EXPECT_NEAR(load_and_run("port", srcs, 1, "jit_scale"), 4.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2); /* other flags: another key */
    ninja = read_text(tmp_path("cache/port/build.ninja"));
    PD_EXPECT(ninja != NULL && strstr(ninja, "-march=native") == NULL);
    PD_EXPECT_NEAR(load_and_run("port", srcs, 1, "jit_scale"), 4.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    /* The option does the same as the variable. */
    unsetenv("PDEXT_JIT_PORTABLE");
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("port", srcs, 1);
    o.portable = true;
    pd_module *m = NULL;
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_EQ(ninja_runs(), 2);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitPlan, ModulesLinkLibmByDefault)
{
    jit_setup();
    /* lgammaf is no compiler builtin: the module needs libm itself. */
    pd_jit_source src = {"lgamma.c",
                         "#include \"extension.h\"\n#include <math.h>\n"
                         "static void k(pd_kernel_ctx *ctx) {\n"
                         "    const pd_tensor *x = pd_input(ctx, 0);\n"
                         "    pd_tensor *out = pd_output(ctx, 0);\n"
                         "    const float *in = (const float *)pd_data(x);\n"
                         "    float *o = (float *)pd_data(out);\n"
                         "    for (int64_t i = 0; i < pd_numel(x); ++i) o[i] = lgammaf(in[i]);\n"
                         "}\n"
                         "PD_BUILD_OP(jit_lgamma, .inputs = {\"X\"}, .outputs = {\"Out\"}, "
                         ".kernel = k);\n"};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("libm", NULL, 0);
    o.inline_sources = &src;
    o.n_inline_sources = 1;
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_NEAR(run_at_2(reg, "jit_lgamma"), 0.0, 1e-6); /* lgamma(2) = log(1! ) = 0 */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "readelf -d '%s' > '%s'", pd_module_path(m), tmp_path("dyn.txt"));
    PD_ASSERT_EQ(system(cmd), 0);
    PD_EXPECT_CONTAINS(read_text(tmp_path("dyn.txt")), "[libm.so");
    pd_registry_destroy(reg);
    jit_teardown();
}

/* --- paths ----------------------------------------------------------------------------------- */

PD_TEST(JitPlan, SourcePathWithNinjaSpecialCharactersBuilds)
{
    jit_setup();
    PD_ASSERT_EQ(mkdir(tmp_path("src/a|b $c:d"), 0700), 0);
    char path[600];
    snprintf(path, sizeof path, "%s", tmp_path("src/a|b $c:d/pipe|scale.c"));
    write_text(path, SCALE_TEXT("3.0f"));
    struct timespec past[2] = {{time(NULL) - 10, 0}, {time(NULL) - 10, 0}};
    utimensat(AT_FDCWD, path, past, 0);
    const char *srcs[] = {path};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("pipes", srcs, 1);
    o.cflags = (const char *const[]){"-DUNUSED_FLAG=1"};
    o.n_cflags = 1;
    pd_module *m = NULL;
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_NEAR(run_at_2(reg, "inline_scale"), 6.0, 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitPlan, LineBreaksInPathsAreRefusedNamingThem)
{
    jit_setup();
    char path[600];
    snprintf(path, sizeof path, "%s", tmp_path("src/cr\rname.c"));
    write_text(path, SCALE_TEXT("3.0f"));
    const char *srcs[] = {path};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("crlf", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT,
                    "contains a carriage return; rename it or pass it without one");
    snprintf(path, sizeof path, "%s", tmp_path("src/nl\nname.c"));
    write_text(path, SCALE_TEXT("3.0f"));
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "contains a newline");
    o = options("crlf", (const char *const[]){fixture("scale.c")}, 1);
    o.build_dir = tmp_path("out\rdir");
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "build_dir '");
    o.build_dir = NULL;
    o.cflags = (const char *const[]){"-DX=1\r"};
    o.n_cflags = 1;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT,
                    "flag '-DX=1\r' contains a carriage return");
    PD_EXPECT_EQ(ninja_runs(), 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitPlan, EmptyBuildDirIsRefused)
{
    jit_setup();
    const char *srcs[] = {fixture("scale.c")};
    pd_jit_options o = options("emptydir", srcs, 1);
    o.build_dir = "";
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT,
                    "pd_jit_load: build_dir is an empty string; pass a directory, or NULL");
    pd_registry_destroy(reg);
    jit_teardown();
}

/* --- ahead of time: checked, and the static bundle kind ------------------------------------- */

PD_TEST(JitPlan, BuildOfSourcesWithoutOpsFailsWithTheLoadersMessageAndWritesNothing)
{
    jit_setup();
    const char *srcs[] = {fixture("no_ops.c")};
    pd_jit_options o = options("aotnoops", srcs, 1);
    o.output = tmp_path("libaotnoops.so");
    PD_EXPECT_ERROR(pd_jit_build(&o), PD_ERR_INVALID_MODULE, "contains no ops");
    PD_EXPECT_CONTAINS(pd_last_error(), "was built but does not load, so nothing was written");
    PD_EXPECT(access(tmp_path("libaotnoops.so"), F_OK) != 0);
    jit_teardown();
}

PD_TEST(JitPlan, StaticBundleComesWithHeaderPkgConfigAndOneGlobalSymbol)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("twice.cc")};
    pd_jit_options o = options("kit", srcs, 2);
    o.output = tmp_path("libkit.a");
    o.output_kind = PD_JIT_STATIC;
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_build_load(reg, &o, &m));
    PD_EXPECT_EQ(pd_module_op_count(m), 2);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_twice"), 4.0, 0); /* the check module runs */
    char *h = read_text(tmp_path("kit.h"));
    PD_ASSERT(h != NULL);
    PD_EXPECT_CONTAINS(h, "Ops: jit_scale, jit_twice\n");
    PD_EXPECT_CONTAINS(h, "pd_bundle_register_kit(pd_registry *reg, pd_module **out)");
    PD_EXPECT_CONTAINS(h, "$(pkg-config --static --libs pdext) -lstdc++ -lm");
    char *pc = read_text(tmp_path("kit.pc"));
    PD_ASSERT(pc != NULL);
    PD_EXPECT_CONTAINS(pc, "Libs: ${bundledir}/libkit.a -lstdc++ -lm");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "nm -g --defined-only '%s' | grep -c ' [A-Za-z] ' > '%s'",
             tmp_path("libkit.a"), tmp_path("nm.txt"));
    PD_EXPECT_EQ(system(cmd), 0);
    PD_EXPECT_STREQ(read_text(tmp_path("nm.txt")), "1\n");
    /* Warm: built again, nothing runs. */
    PD_EXPECT_EQ(ninja_runs(), 1);
    PD_ASSERT_OK(pd_jit_build(&o));
    PD_EXPECT_EQ(ninja_runs(), 1);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitPlan, BuildLoadRejectsNullArguments)
{
    const char *srcs[] = {"x.c"};
    pd_jit_options o = options("x", srcs, 1);
    o.output = "/tmp/libx.so";
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_build_load(NULL, &o, &m), PD_ERR_INVALID_ARGUMENT,
                    "pd_jit_build_load: reg is NULL");
    PD_EXPECT_ERROR(pd_jit_build_load(reg, &o, NULL), PD_ERR_INVALID_ARGUMENT,
                    "pd_jit_build_load: out is NULL");
    PD_EXPECT_ERROR(pd_jit_build_load(reg, NULL, &m), PD_ERR_INVALID_ARGUMENT,
                    "pd_jit_build_load: opts->output (where to place the result) is required");
    o.output_kind = (pd_jit_output_kind)7;
    PD_EXPECT_ERROR(pd_jit_build_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT,
                    "opts->output_kind 7 is not PD_JIT_SHARED, PD_JIT_STATIC or "
                    "PD_JIT_ONNXRUNTIME");
    pd_registry_destroy(reg);
}

PD_TEST(JitPlan, RebuiltBundleIsCheckedWithItsNewCodeInTheSameProcess)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    pd_jit_options o = options("rekit", srcs, 1);
    o.output = tmp_path("librekit.a");
    o.output_kind = PD_JIT_STATIC;
    pd_registry *first, *second;
    PD_ASSERT_OK(pd_registry_create(&first));
    PD_ASSERT_OK(pd_registry_create(&second));
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_build_load(first, &o, &m)); /* stays loaded */
    PD_EXPECT_NEAR(run_at_2(first, "jit_scale"), 4.0, 0);
    edit(srcs[0], "in[i] * SCALE_FACTOR", "in[i] * SCALE_FACTOR * 10.0f");
    PD_ASSERT_OK(pd_jit_build_load(second, &o, &m));
    PD_EXPECT_NEAR(run_at_2(second, "jit_scale"), 40.0, 0);
    PD_EXPECT(strstr(pd_module_path(m), "/out/librekit-") != NULL);
    pd_registry_destroy(first);
    pd_registry_destroy(second);
    jit_teardown();
}

PD_TEST(JitPlan, StaticBundleNameMustBeACIdentifier)
{
    jit_setup();
    const char *srcs[] = {fixture("scale.c")};
    pd_jit_options o = options("my-ops", srcs, 1);
    o.output = tmp_path("libmy-ops.a");
    o.output_kind = PD_JIT_STATIC;
    PD_EXPECT_ERROR(pd_jit_build(&o), PD_ERR_INVALID_ARGUMENT,
                    "the name 'my-ops' of a static bundle is not a C identifier");
    jit_teardown();
}
