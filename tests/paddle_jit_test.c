/*
 * paddle_jit_test.c - a Paddle-style source whose GPU half lives in a .cu that the build does
 * not compile (tests/paddle_ops/paddle_missing_cu.cc, as Paddle's relu test source is): the
 * JIT links stubs for the functions nothing defines (jit/jit_stubs.c), so the module loads
 * and its CPU path runs; calling a missing function is an op error naming it, never a crash;
 * a rebuild from the cache stays a cache hit; a module that misses nothing gets no stubs;
 * the source is compiled once, the relink with stubs reusing its object; paddle/extension.h
 * is precompiled in the background once per compiler and flags into the cache
 * (jit/jit_pch.c) by the first build, which does not wait for it, and loaded by the next
 * (asserted from the compile commands); a build in another process meanwhile neither waits
 * nor makes it again; a header that fails to precompile is said in its log only and not
 * tried again; a module the precompiled header does not fit (or a broken one) still builds;
 * with PDEXT_JIT_PCH=0 nothing is precompiled.
 */
#include "jit_support.h"
#include "runner_helpers.h"

#include <dirent.h>
#include <sys/wait.h>

/* A module of tests/paddle_ops/<file> built by the JIT into the test's private cache. */
static pd_status jit_paddle(pd_registry *reg, const char *name, const char *file, pd_module **m)
{
    char src[512];
    snprintf(src, sizeof src, "%s/tests/paddle_ops/%s", PD_TEST_SOURCE_DIR, file);
    const char *sources[1] = {src};
    pd_jit_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.name = name;
    opts.sources = sources;
    opts.n_sources = 1;
    return pd_jit_load(reg, &opts, m);
}

/* Runs `op` on one input X; the output goes to *out. */
static pd_status run1(pd_registry *reg, const char *op, pd_tensor *x, pd_tensor *out)
{
    pd_arg in = pd_arg_named("X", x, 1), o = pd_arg_of(out);
    return pd_run(reg, op, &in, 1, NULL, 0, &o, 1);
}

PD_TEST(PaddleJit, ASourceWhoseCuHalfIsNotBuiltLoadsAndRunsOnTheCpu)
{
    jit_setup();
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(jit_paddle(reg, "pp_missing_cu", "paddle_missing_cu.cc", &m));
    PD_EXPECT_EQ(ninja_runs(), 2); /* the link, and the link with the stubs */
    int64_t n = 3;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, (double[]){1, -2, 3}), out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pp_scale", &x, &out));
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_EQ(rt_at(&out, i), 2 * rt_at(&x, i));
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    /* The stubs are in the build directory, for whoever wonders what was linked. */
    char *stubs = read_text(tmp_path("cache/pp_missing_cu/missing/pd_missing.cc"));
    PD_EXPECT(stubs != NULL);
    PD_EXPECT_CONTAINS(stubs, "_Z18scale_cuda_forwardRKN6paddle6TensorE");
    /* Loaded again: a cache hit, no build. */
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_ASSERT_OK(jit_paddle(reg, "pp_missing_cu", "paddle_missing_cu.cc", &m));
    PD_EXPECT_EQ(ninja_runs(), 2);
    pd_registry_destroy(reg);
    jit_teardown();
}

/* The precompiled headers in the test's cache (cache/pch/<key>/). */
static int pch_dirs(void)
{
    DIR *d = opendir(tmp_path("cache/pch"));
    int n = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* Installs a c++ that logs each of its runs into cxx.runs. */
static void log_cxx_runs(void)
{
    char script[1024];
    snprintf(script, sizeof script, "#!/bin/sh\necho \"$*\" >> '%s'\nexec c++ \"$@\"\n",
             tmp_path("cxx.runs"));
    write_script(tmp_path("bin/logcxx"), script);
    setenv("CXX", tmp_path("bin/logcxx"), 1);
}

/* Lines of the file `rel` (under the test's directory) that contain `needle`. */
static int lines_with(const char *rel, const char *needle)
{
    char *text = read_text(tmp_path(rel));
    int n = 0;
    for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL; l;
         l = strtok_r(NULL, "\n", &save))
        n += pd_test_contains(l, needle);
    return n; /* read_text's buffer is static */
}

PD_TEST(PaddleJit, TheSourceIsCompiledOnceThoughItsModuleIsLinkedAgainWithStubs)
{
    jit_setup();
    log_cxx_runs(); /* compiles and links alike */
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(jit_paddle(reg, "pp_missing_cu", "paddle_missing_cu.cc", &m));
    PD_EXPECT_EQ(ninja_runs(), 2); /* the link, and the link with the stubs */
    /* The source: one compile (-c), never compiled and linked in one run; the stubs: one
     * compile of their own; and two links. */
    PD_EXPECT_EQ(lines_with("cxx.runs", "paddle_ops/paddle_missing_cu.cc"), 1);
    PD_EXPECT_EQ(lines_with("cxx.runs", "-c "), 2);
    PD_EXPECT_EQ(lines_with("cxx.runs", "missing/pd_missing.cc"), 1);
    PD_EXPECT_EQ(lines_with("cxx.runs", "-shared"), 2);
    PD_EXPECT_EQ(lines_with("cxx.runs", "c++-header"), 0); /* PDEXT_JIT_PCH=0 (jit_setup) */
    PD_EXPECT_EQ(pch_dirs(), 0);
    int64_t n = 2;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, (double[]){1, -2}), out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pp_scale", &x, &out));
    PD_EXPECT_EQ(rt_at(&out, 1), -4);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    jit_teardown();
}

/* Installs a c++ that logs each of its runs into cxx.runs and, when compiling a header,
 * first runs `header_step` (shell text: wait for a gate, fail, ...). */
static void log_cxx_runs_with(const char *header_step)
{
    char script[2048];
    snprintf(script, sizeof script,
             "#!/bin/sh\necho \"$*\" >> '%s'\n"
             "case \"$*\" in *c++-header*) %s ;; esac\nexec c++ \"$@\"\n",
             tmp_path("cxx.runs"), header_step);
    write_script(tmp_path("bin/logcxx"), script);
    setenv("CXX", tmp_path("bin/logcxx"), 1);
}

/* The line of cxx.runs that compiles tests/paddle_ops/<file> (-c), or "" (a static buffer). */
static const char *compile_line(const char *file)
{
    static char line[4096];
    line[0] = '\0';
    char *text = read_text(tmp_path("cxx.runs"));
    for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL; l;
         l = strtok_r(NULL, "\n", &save))
        if (pd_test_contains(l, file) && pd_test_contains(l, "-c "))
            snprintf(line, sizeof line, "%s", l);
    return line;
}

/* A file of the one precompiled header directory of the test's cache, read ("" if none). */
static const char *pch_file(const char *name)
{
    static char rel[256];
    DIR *d = opendir(tmp_path("cache/pch"));
    rel[0] = '\0';
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
        if (e->d_name[0] != '.')
            snprintf(rel, sizeof rel, "cache/pch/%.64s/%s", e->d_name, name);
    if (d)
        closedir(d);
    char *text = rel[0] ? read_text(tmp_path(rel)) : NULL;
    return text ? text : "";
}

PD_TEST(PaddleJit, PaddleExtensionIsPrecompiledInTheBackgroundAndUsedByTheNextBuild)
{
    jit_setup();
    log_cxx_runs();
    unsetenv("PDEXT_JIT_PCH"); /* the default */
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(jit_paddle(reg, "pp_missing_cu", "paddle_missing_cu.cc", &m));
    /* The first build compiles without it and starts its job. */
    PD_EXPECT(!pd_test_contains(compile_line("paddle_missing_cu.cc"), "-fpch-deps"));
    PD_EXPECT_EQ(pch_dirs(), 1);
    jit_pch_wait();
    PD_EXPECT_EQ(lines_with("cxx.runs", "c++-header"), 1);
    PD_ASSERT_OK(jit_paddle(reg, "pp_forms", "paddle_forms.cc", &m));
    /* The next loads it, and nothing is made again. */
    PD_EXPECT_CONTAINS(compile_line("paddle_forms.cc"), "/pd_pch.h -fpch-deps");
    jit_pch_wait();
    PD_EXPECT_EQ(pch_dirs(), 1);
    PD_EXPECT_EQ(lines_with("cxx.runs", "c++-header"), 1);
    /* The stubs source does not include paddle/extension.h: compiled without it. */
    PD_EXPECT_EQ(lines_with("cxx.runs", "missing/pd_missing.cc"), 1);
    PD_EXPECT_EQ(lines_with("cxx.runs", "/pd_pch.h -fpch-deps"), 1);
    int64_t n = 3;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, (double[]){1, -2, 3}), out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pp_scale", &x, &out));
    PD_EXPECT_EQ(rt_at(&out, 2), 6);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    /* The module's manifest still lists the headers inside the precompiled one (-fpch-deps):
     * a change to them rebuilds the module. */
    char *manifest = read_text(tmp_path("cache/pp_forms/manifest-shared"));
    PD_ASSERT(manifest != NULL);
    PD_EXPECT_CONTAINS(manifest, "paddle/tensor.h");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(PaddleJit, ABuildInAnotherProcessWhileTheHeaderIsBeingMadeDoesNotMakeItAgain)
{
    jit_setup();
    /* The header's compile waits for a gate file, so the job is surely running meanwhile. */
    char step[600];
    snprintf(step, sizeof step, "while [ ! -e '%s' ]; do sleep 0.05; done", tmp_path("gate"));
    log_cxx_runs_with(step);
    unsetenv("PDEXT_JIT_PCH");
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(jit_paddle(reg, "pp_forms", "paddle_forms.cc", &m));
    pd_registry_destroy(reg);
    pid_t pid = fork();
    if (pid == 0) { /* a second process builds another module meanwhile */
        pd_registry *r2 = NULL;
        pd_module *m2 = NULL;
        _exit(pd_registry_create(&r2) == PD_OK &&
                      jit_paddle(r2, "pp_missing_cu", "paddle_missing_cu.cc", &m2) == PD_OK
                  ? 0
                  : 1);
    }
    int status = -1;
    PD_ASSERT(pid > 0 && waitpid(pid, &status, 0) == pid);
    PD_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    PD_EXPECT(!pd_test_contains(compile_line("paddle_missing_cu.cc"), "-fpch-deps"));
    PD_EXPECT_EQ(lines_with("cxx.runs", "c++-header"), 1);
    write_text(tmp_path("gate"), "open\n");
    jit_pch_wait();
    PD_EXPECT_EQ(lines_with("cxx.runs", "c++-header"), 1);
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_ASSERT_OK(jit_paddle(reg, "pp_forms_again", "paddle_forms.cc", &m));
    PD_EXPECT_EQ(lines_with("cxx.runs", "/pd_pch.h -fpch-deps"), 1);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(PaddleJit, AHeaderThatFailsToPrecompileIsSaidInItsLogAndNotTriedAgain)
{
    jit_setup();
    log_cxx_runs_with("echo 'pch test: refused' >&2; exit 3");
    unsetenv("PDEXT_JIT_PCH");
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(jit_paddle(reg, "pp_forms", "paddle_forms.cc", &m));
    jit_pch_wait();
    PD_EXPECT_CONTAINS(pch_file("build.log"), "pch test: refused");
    PD_EXPECT_CONTAINS(pch_file("build.log"), "precompiling paddle/extension.h failed (exit 3)");
    PD_ASSERT_OK(jit_paddle(reg, "pp_missing_cu", "paddle_missing_cu.cc", &m));
    jit_pch_wait();
    PD_EXPECT_EQ(lines_with("cxx.runs", "c++-header"), 1); /* not tried again */
    PD_EXPECT_EQ(lines_with("cxx.runs", "-fpch-deps"), 0);
    /* nothing half-made is left: no .gch, no temporaries */
    PD_EXPECT_EQ(strlen(pch_file("pd_pch.h.gch")), 0);
    PD_EXPECT_EQ(strlen(pch_file("pd_pch.h.gch.tmp")), 0);
    int64_t n = 2;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, (double[]){1, -2}), out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pp_scale", &x, &out));
    PD_EXPECT_EQ(rt_at(&out, 1), -4);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(PaddleJit, AModuleThePrecompiledHeaderDoesNotFitStillBuilds)
{
    jit_setup();
    log_cxx_runs();
    unsetenv("PDEXT_JIT_PCH");
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(jit_paddle(reg, "pp_forms", "paddle_forms.cc", &m));
    jit_pch_wait();
    PD_ASSERT(pch_dirs() == 1);
    /* Other flags: a precompiled header of their own, the first one untouched. */
    char src[512];
    snprintf(src, sizeof src, "%s/tests/paddle_ops/paddle_missing_cu.cc", PD_TEST_SOURCE_DIR);
    const char *sources[1] = {src};
    const char *flags[1] = {"-DPD_PCH_TEST_OTHER_FLAGS=1"};
    pd_jit_options o = options("pp_missing_cu", sources, 1);
    o.cxxflags = flags;
    o.n_cxxflags = 1;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    jit_pch_wait();
    PD_EXPECT_EQ(pch_dirs(), 2);
    PD_EXPECT_EQ(lines_with("cxx.runs", "c++-header"), 2);
    /* A precompiled header the compiler cannot use (here: not one at all): the compiler reads
     * the header's text instead, silently. */
    DIR *d = opendir(tmp_path("cache/pch"));
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        char rel[160];
        snprintf(rel, sizeof rel, "cache/pch/%.64s/pd_pch.h.gch", e->d_name);
        if (e->d_name[0] != '.')
            write_text(tmp_path(rel), "not a precompiled header\n");
    }
    if (d)
        closedir(d);
    pd_registry_destroy(reg);
    PD_ASSERT_OK(pd_registry_create(&reg));
    o.name = "pp_missing_cu_again";
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    /* compiled with the broken one named, and still built */
    PD_EXPECT_CONTAINS(compile_line("paddle_missing_cu.cc"), "/pd_pch.h -fpch-deps");
    jit_pch_wait();
    PD_EXPECT_EQ(lines_with("cxx.runs", "c++-header"), 2); /* its headers did not change */
    int64_t n = 2;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, (double[]){1, -2}), out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pp_scale", &x, &out));
    PD_EXPECT_EQ(rt_at(&out, 1), -4);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(PaddleJit, CallingTheMissingGpuHalfIsAnOpErrorNamingTheFunction)
{
    jit_setup();
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(jit_paddle(reg, "pp_missing_cu", "paddle_missing_cu.cc", &m));
    int64_t n = 2;
    pd_tensor x = rt_tensor(PD_FLOAT32, 1, &n, (double[]){1, 2}), out = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(run1(reg, "pp_scale_gpu_path", &x, &out), PD_ERR_OP_FAILED,
                    "pp_scale_gpu_path: C++ exception: scale_cuda_forward(paddle::Tensor const&) "
                    "is declared but not built into module 'pp_missing_cu'");
    PD_EXPECT_CONTAINS(pd_last_error(), ".cu source");
    PD_EXPECT(!pd_defined(&out));
    PD_EXPECT_ERROR(run1(reg, "pp_scale_gpu_inplace", &x, &out), PD_ERR_OP_FAILED,
                    "scale_cuda_inplace(paddle::Tensor&, float) is declared but not built");
    /* The module still works after the failed calls. */
    PD_ASSERT_OK(run1(reg, "pp_scale", &x, &out));
    PD_EXPECT_EQ(rt_at(&out, 1), 4);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(PaddleJit, AModuleThatMissesNothingGetsNoStubs)
{
    jit_setup();
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    const char *sources[1] = {fixture("twice.cc")};
    pd_jit_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.name = "twice_cc";
    opts.sources = sources;
    opts.n_sources = 1;
    PD_ASSERT_OK(pd_jit_load(reg, &opts, &m));
    PD_EXPECT_EQ(ninja_runs(), 1);
    PD_EXPECT(access(tmp_path("cache/twice_cc/missing"), F_OK) != 0);
    pd_registry_destroy(reg);
    jit_teardown();
}
