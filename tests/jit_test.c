/*
 * jit_test.c - the JIT loader (pdext_jit.h): cold build, warm load without Ninja, rebuilds
 * after source / header / flag changes, reload in the same process, concurrent processes, a
 * build killed mid-way, logging, compilers, static archives and an end-to-end relu. Errors
 * are in jit_errors_test.c, CUDA in jit_cuda_test.cc.
 *
 * Each test gets a private temporary directory (jit_support.h): PDEXT_CACHE_DIR points into
 * it, the fixture sources (tests/jit_ops/) are copied into it so they can be edited, and its
 * bin/ holds a `ninja` wrapper, first in PATH, that counts Ninja runs, so "warm" is checked
 * as "no Ninja ran", not by timing.
 */
#include "jit_support.h"

#include <dirent.h>
#include <pthread.h>

/* --- cold, warm, rebuilds ----------------------------------------------------------------- */

PD_TEST(Jit, ColdBuildThenWarmLoadRunsNoNinja)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("shift.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("two", srcs, 2);
    pd_module *m = NULL;
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_EQ(pd_module_op_count(m), 2);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_scale"), 4.0, 0);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_shift"), 12.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 1);
    PD_EXPECT(pd_test_contains(pd_module_path(m), tmp_path("cache/two/libtwo-")));
    pd_registry_destroy(reg);

    /* A new registry has nothing in memory: like a new process, it reads the manifest. */
    PD_EXPECT_NEAR(load_and_run("two", srcs, 2, "jit_shift"), 12.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 1);
    jit_teardown();
}

PD_TEST(Jit, WarmLoadInANewProcessRunsNoNinja)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    PD_EXPECT_NEAR(load_and_run("proc", srcs, 1, "jit_scale"), 4.0, 0);
    pid_t pid = fork();
    if (pid == 0)
        _exit(load_and_run("proc", srcs, 1, "jit_scale") == 4.0 ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
    PD_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    PD_EXPECT_EQ(ninja_runs(), 1);
    jit_teardown();
}

PD_TEST(Jit, TouchedSourceWithSameContentStaysWarm)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    PD_EXPECT_NEAR(load_and_run("touch", srcs, 1, "jit_scale"), 4.0, 0);
    struct timespec later[2] = {{time(NULL) + 100, 0}, {time(NULL) + 100, 0}};
    PD_EXPECT_EQ(utimensat(AT_FDCWD, srcs[0], later, 0), 0);
    PD_EXPECT_NEAR(load_and_run("touch", srcs, 1, "jit_scale"), 4.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 1);
    jit_teardown();
}

PD_TEST(Jit, RebuildsAfterSourceEdit)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("shift.c")};
    PD_EXPECT_NEAR(load_and_run("edit", srcs, 2, "jit_shift"), 12.0, 0);
    edit(srcs[1], "#define SHIFT 10.0f", "#define SHIFT 20.0f");
    PD_EXPECT_NEAR(load_and_run("edit", srcs, 2, "jit_shift"), 22.0, 0);
    PD_EXPECT_NEAR(load_and_run("edit", srcs, 2, "jit_scale"), 4.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    jit_teardown();
}

/* Number of lib<name>-*.so files in the module's cache directory. */
static int libraries_in(const char *name)
{
    char dir[512], prefix[128];
    snprintf(dir, sizeof dir, "%s/%s", tmp_path("cache"), name);
    snprintf(prefix, sizeof prefix, "lib%s-", name);
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

PD_TEST(Jit, RebuildsKeepOnlyTheCurrentAndThePreviousLibrary)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_EXPECT_NEAR(load_and_run("keep", srcs, 1, "jit_shift"), 12.0, 0);
    edit(srcs[0], "#define SHIFT 10.0f", "#define SHIFT 20.0f");
    PD_EXPECT_NEAR(load_and_run("keep", srcs, 1, "jit_shift"), 22.0, 0);
    PD_EXPECT_EQ(libraries_in("keep"), 2);
    edit(srcs[0], "#define SHIFT 20.0f", "#define SHIFT 40.0f");
    PD_EXPECT_NEAR(load_and_run("keep", srcs, 1, "jit_shift"), 42.0, 0);
    PD_EXPECT_EQ(libraries_in("keep"), 2);
    jit_teardown();
}

PD_TEST(Jit, RebuildsAfterHeaderEdit)
{
    jit_setup();
    const char *header = fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    PD_EXPECT_NEAR(load_and_run("hdr", srcs, 1, "jit_scale"), 4.0, 0);
    edit(header, "2.0f", "3.0f");
    PD_EXPECT_NEAR(load_and_run("hdr", srcs, 1, "jit_scale"), 6.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    jit_teardown();
}

PD_TEST(Jit, RebuildsWhenFlagsChange)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    PD_EXPECT_NEAR(load_and_run("flags", srcs, 1, "jit_scale"), 4.0, 0);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    const char *cflags[] = {"-DSCALE_BIAS=100"};
    pd_jit_options o = options("flags", srcs, 1);
    o.cflags = cflags;
    o.n_cflags = 1;
    pd_module *m;
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_NEAR(run_at_2(reg, "jit_scale"), 104.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    pd_registry_destroy(reg);
    jit_teardown();
}

/* --- reload in the same process ----------------------------------------------------------- */

PD_TEST(Jit, RelativeSourcesAndIncludeDirsResolveAgainstTheCallersDirectory)
{
    /* Ninja runs the compiler in the build directory, so relative paths must be made
     * absolute against the directory the host called from. */
    jit_setup();
    PD_ASSERT(mkdir(tmp_path("rel"), 0700) == 0 && mkdir(tmp_path("rel/inc"), 0700) == 0 &&
              mkdir(tmp_path("rel/src"), 0700) == 0);
    write_text(tmp_path("rel/inc/rel_factor.h"), "#define REL_FACTOR 5.0f\n");
    write_text(tmp_path("rel/src/rel.c"),
               "#include \"extension.h\"\n#include <rel_factor.h>\n"
               "static void k(pd_kernel_ctx *ctx) {\n"
               "    const pd_tensor *x = pd_input(ctx, 0);\n"
               "    float *o = (float *)pd_data(pd_output(ctx, 0));\n"
               "    for (int64_t i = 0; i < pd_numel(x); ++i)\n"
               "        o[i] = ((const float *)pd_data(x))[i] * REL_FACTOR;\n"
               "}\n"
               "PD_BUILD_OP(jit_rel, .inputs = {\"X\"}, .outputs = {\"Out\"}, .kernel = k);\n");
    char here[4096];
    PD_ASSERT(getcwd(here, sizeof here) != NULL);
    PD_ASSERT(chdir(tmp_path("rel")) == 0);
    const char *srcs[] = {"src/rel.c"};
    const char *incs[] = {"inc"};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("rel", srcs, 1);
    o.include_dirs = incs;
    o.n_include_dirs = 1;
    pd_module *m = NULL;
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT(chdir(here) == 0);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_rel"), 10.0, 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(Jit, ReloadInSameProcessRunsNewCodeAndReplacesOldOps)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("shift.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("reload", srcs, 2);
    pd_module *first = NULL, *second = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &first));
    char first_path[1024];
    snprintf(first_path, sizeof first_path, "%s", pd_module_path(first));
    PD_EXPECT_NEAR(run_at_2(reg, "jit_shift"), 12.0, 0);

    edit(srcs[1], "#define SHIFT 10.0f", "#define SHIFT 30.0f");
    PD_ASSERT_OK(pd_jit_load(reg, &o, &second));
    PD_EXPECT(strcmp(first_path, pd_module_path(second)) != 0);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_shift"), 32.0, 0);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_scale"), 4.0, 0);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 2);
    PD_EXPECT(pd_op_module(pd_op_find(reg, "jit_scale")) == second);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(Jit, LoadingAnUnchangedModuleAgainReturnsTheLoadedOne)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("same", srcs, 1);
    pd_module *a = NULL, *b = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &a));
    PD_ASSERT_OK(pd_jit_load(reg, &o, &b));
    PD_EXPECT(a == b);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 1);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_scale"), 4.0, 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

/* --- concurrency and crashes -------------------------------------------------------------- */

typedef struct thread_load {
    pd_registry *reg;
    const char *const *sources;
    pd_module *module;
    pd_status status;
} thread_load;

static void *load_in_thread(void *arg)
{
    thread_load *t = arg;
    pd_jit_options o = options("threads", t->sources, 2);
    t->status = pd_jit_load(t->reg, &o, &t->module);
    return NULL;
}

PD_TEST(Jit, ThreadsLoadingTheSameModuleIntoOneRegistryGetOneModule)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("shift.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    thread_load loads[3];
    pthread_t threads[3];
    for (int i = 0; i < 3; ++i) {
        loads[i] = (thread_load){reg, srcs, NULL, PD_ERR_INTERNAL};
        pthread_create(&threads[i], NULL, load_in_thread, &loads[i]);
    }
    for (int i = 0; i < 3; ++i)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < 3; ++i) {
        PD_EXPECT_EQ(loads[i].status, PD_OK);
        PD_EXPECT(loads[i].module == loads[0].module);
    }
    PD_EXPECT_EQ(pd_registry_op_count(reg), 2);
    PD_EXPECT_EQ(ninja_runs(), 1);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_shift"), 12.0, 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(Jit, ConcurrentProcessesAllSucceedWithOneBuild)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("shift.c")};
    enum { N = 4 };
    pid_t pids[N];
    for (int i = 0; i < N; ++i) {
        pids[i] = fork();
        if (pids[i] == 0)
            _exit(load_and_run("many", srcs, 2, "jit_shift") == 12.0 ? 0 : 1);
    }
    int ok = 0;
    for (int i = 0; i < N; ++i) {
        int status = 0;
        waitpid(pids[i], &status, 0);
        ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    PD_EXPECT_EQ(ok, N);
    PD_EXPECT_EQ(ninja_runs(), 1);
    jit_teardown();
}

PD_TEST(Jit, BuildKilledMidwayLeavesNoLibraryAndNoBlockingLock)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    /* A compiler that announces itself, then hangs: the loader is killed meanwhile. */
    char script[1024];
    snprintf(script, sizeof script,
             "#!/bin/sh\ncase \"$*\" in *--version*) exec cc \"$@\";; esac\n"
             "if [ ! -e '%s' ]; then touch '%s'; sleep 30; fi\nexec cc \"$@\"\n",
             tmp_path("compiling"), tmp_path("compiling"));
    write_script(tmp_path("bin/slowcc"), script);
    setenv("CC", tmp_path("bin/slowcc"), 1);
    pid_t pid = fork();
    if (pid == 0)
        _exit(load_and_run("killed", srcs, 1, "jit_scale") == 4.0 ? 0 : 1);
    for (int i = 0; i < 2000 && access(tmp_path("compiling"), F_OK) != 0; ++i)
        usleep(10000);
    PD_EXPECT_EQ(access(tmp_path("compiling"), F_OK), 0);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    PD_EXPECT(WIFSIGNALED(status));
    /* Nothing a load would accept: no manifest. */
    PD_EXPECT(access(tmp_path("cache/killed/manifest-shared"), F_OK) != 0);

    /* The orphaned compiler still holds the lock; the next load (same compiler, which no
     * longer hangs) must not wait for it. */
    PD_EXPECT_NEAR(load_and_run("killed", srcs, 1, "jit_scale"), 4.0, 0);
    PD_EXPECT_NEAR(load_and_run("killed", srcs, 1, "jit_scale"), 4.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    jit_teardown();
}

/* --- build directory, logging, compilers -------------------------------------------------- */

PD_TEST(Jit, BuildDirectoryFollowsCacheVariables)
{
    const char *srcs[] = {"x.c"};
    pd_jit_options o = options("mod", srcs, 1);
    setenv("PDEXT_CACHE_DIR", "/tmp/somewhere/cache", 1);
    char *dir = pd_jit_build_dir(&o);
    PD_EXPECT_STREQ(dir, "/tmp/somewhere/cache/mod");
    free(dir);
    unsetenv("PDEXT_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
    dir = pd_jit_build_dir(&o);
    PD_EXPECT_STREQ(dir, "/tmp/xdg/pdext/mod");
    free(dir);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/tmp/home", 1);
    dir = pd_jit_build_dir(&o);
    PD_EXPECT_STREQ(dir, "/tmp/home/.cache/pdext/mod");
    free(dir);
    o.build_dir = "/tmp/explicit";
    dir = pd_jit_build_dir(&o);
    PD_EXPECT_STREQ(dir, "/tmp/explicit");
    free(dir);
}

PD_TEST(Jit, ExplicitBuildDirectoryIsUsed)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("explicit", srcs, 1);
    o.build_dir = tmp_path("mybuild/deeper");
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT(pd_test_contains(pd_module_path(m), tmp_path("mybuild/deeper/libexplicit-")));
    PD_EXPECT_EQ(access(tmp_path("mybuild/deeper/build.ninja"), F_OK), 0);
    PD_EXPECT_NEAR(run_at_2(reg, "jit_scale"), 4.0, 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(Jit, ProgressGoesToTheLogAndVerboseAddsCommands)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("shift.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    static log_lines quiet, loud;
    pd_jit_options o = options("logged", srcs, 2);
    o.log = collect;
    o.log_user = &quiet;
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_CONTAINS(quiet.text, "[1/3]");
    PD_EXPECT_CONTAINS(quiet.text, "[3/3]");
    PD_EXPECT(!pd_test_contains(quiet.text, "-O3"));

    const char *cflags[] = {"-DSCALE_BIAS=1"};
    o.cflags = cflags;
    o.n_cflags = 1;
    o.verbose = true;
    o.log_user = &loud;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_CONTAINS(loud.text, "-O3 -march=native");
    PD_EXPECT_CONTAINS(loud.text, "-DSCALE_BIAS=1");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(Jit, CompilerLauncherPrefixesCompileCommands)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    char script[1024];
    snprintf(script, sizeof script, "#!/bin/sh\necho \"$1\" >> '%s'\nexec \"$@\"\n",
             tmp_path("launched"));
    write_script(tmp_path("bin/launcher"), script);
    setenv("PDEXT_COMPILER_LAUNCHER", tmp_path("bin/launcher"), 1);
    PD_EXPECT_NEAR(load_and_run("launch", srcs, 1, "jit_scale"), 4.0, 0);
    char *launched = read_text(tmp_path("launched"));
    PD_EXPECT(launched != NULL && strlen(launched) > 0);
    jit_teardown();
}

PD_TEST(Jit, SingleCSourceIsOneCompilerRunWithNoVersionQuery)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    /* A cc that logs each of its runs: compile and link are one run, as with `cc -shared`,
     * and a C module's compiler identity comes from stat, not from `cc --version`. */
    char script[1024];
    snprintf(script, sizeof script, "#!/bin/sh\necho \"$*\" >> '%s'\nexec cc \"$@\"\n",
             tmp_path("cc.runs"));
    write_script(tmp_path("bin/logcc"), script);
    setenv("CC", tmp_path("bin/logcc"), 1);
    PD_EXPECT_NEAR(load_and_run("onerun", srcs, 1, "jit_scale"), 4.0, 0);
    char *runs = read_text(tmp_path("cc.runs"));
    PD_ASSERT(runs != NULL);
    const char *nl = strchr(runs, '\n');
    PD_EXPECT(nl != NULL && nl[1] == '\0'); /* exactly one line */
    PD_EXPECT_CONTAINS(runs, "-shared");
    PD_EXPECT_CONTAINS(runs, "scale.c");
    PD_EXPECT(!pd_test_contains(runs, "--version"));
    char *manifest = read_text(tmp_path("cache/onerun/manifest-shared"));
    PD_ASSERT(manifest != NULL);
    PD_EXPECT_CONTAINS(manifest, "version c ");
    PD_EXPECT_CONTAINS(manifest, "bin/logcc (");
    /* The headers it includes are still tracked (from the library's depfile). */
    PD_EXPECT_CONTAINS(manifest, "scale_factor.h");
    jit_teardown();
}

PD_TEST(Jit, CompilerWrapperInCcKeepsCompileAndLinkApart)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    /* CC="wrapper cc" (as CC="ccache gcc"): a caching wrapper caches compiles, not links, so
     * even a single source gets a compile of its own. */
    char script[1024];
    snprintf(script, sizeof script, "#!/bin/sh\necho \"$*\" >> '%s'\nexec \"$@\"\n",
             tmp_path("wrapped.runs"));
    write_script(tmp_path("bin/wrapper"), script);
    char cc[1024];
    snprintf(cc, sizeof cc, "%s cc", tmp_path("bin/wrapper"));
    setenv("CC", cc, 1);
    PD_EXPECT_NEAR(load_and_run("wrapped", srcs, 1, "jit_scale"), 4.0, 0);
    char *runs = read_text(tmp_path("wrapped.runs"));
    PD_ASSERT(runs != NULL);
    PD_EXPECT_CONTAINS(runs, " -c ");
    const char *nl = strchr(runs, '\n');
    PD_EXPECT(nl != NULL && strstr(nl + 1, "-shared") != NULL); /* then the link */
    jit_teardown();
}

PD_TEST(Jit, SingleSourceStaticAndSharedBuildsShareTheBuildDirectory)
{
    jit_setup();
    const char *header = fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    pd_jit_options o = options("kinds", srcs, 1);
    o.output = tmp_path("libkinds.a");
    o.output_kind = PD_JIT_STATIC;
    PD_ASSERT_OK(pd_jit_build(&o));
    PD_EXPECT_NEAR(load_and_run("kinds", srcs, 1, "jit_scale"), 4.0, 0);
    PD_ASSERT_OK(pd_jit_build(&o)); /* each kind stays warm after the other's build */
    PD_EXPECT_NEAR(load_and_run("kinds", srcs, 1, "jit_scale"), 4.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    /* A header edit rebuilds both: each kind tracks the header through its own depfile. */
    edit(header, "2.0f", "3.0f");
    PD_EXPECT_NEAR(load_and_run("kinds", srcs, 1, "jit_scale"), 6.0, 0);
    PD_ASSERT_OK(pd_jit_build(&o));
    PD_EXPECT_EQ(ninja_runs(), 4);
    char *text = read_text(tmp_path("libkinds.a"));
    PD_EXPECT(text != NULL && strncmp(text, "!<arch>\n", 8) == 0);
    jit_teardown();
}

PD_TEST(Jit, CxxSourcesCompileWithCxx)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("twice.cc"), fixture("scale.c")};
    PD_EXPECT_NEAR(load_and_run("cxx", srcs, 2, "jit_twice"), 4.0, 0);
    PD_EXPECT_NEAR(load_and_run("cxx", srcs, 2, "jit_scale"), 4.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 1);
    jit_teardown();
}

PD_TEST(Jit, CxxCompilerOfAnotherMajorVersionGetsAWarning)
{
    jit_setup();
    const char *srcs[] = {fixture("twice.cc")};
    /* A c++ that claims to be version 99 but compiles with the real one. */
    write_script(tmp_path("bin/cxx99"),
                 "#!/bin/sh\ncase \"$*\" in *--version*) echo 'g++ (Fake) 99.1.0'; exit 0;; "
                 "esac\nexec c++ \"$@\"\n");
    setenv("CXX", tmp_path("bin/cxx99"), 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    static log_lines lines;
    pd_jit_options o = options("cxx99", srcs, 1);
    o.log = collect;
    o.log_user = &lines;
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_CONTAINS(lines.text, "warning");
    PD_EXPECT_CONTAINS(lines.text, "99.1.0");
    PD_EXPECT_NEAR(run_at_2(reg, "jit_twice"), 4.0, 0);

    /* A C module gets no such warning: C has a stable ABI. */
    static log_lines c_lines;
    fixture("scale_factor.h");
    const char *c_srcs[] = {fixture("scale.c")};
    pd_jit_options c = options("plain_c", c_srcs, 1);
    c.log = collect;
    c.log_user = &c_lines;
    PD_ASSERT_OK(pd_jit_load(reg, &c, &m));
    PD_EXPECT(!pd_test_contains(c_lines.text, "warning"));
    pd_registry_destroy(reg);
    jit_teardown();
}

/* --- ahead of time: shared and static ----------------------------------------------------- */

PD_TEST(Jit, BuildWritesALoadableSharedLibrary)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    pd_jit_options o = options("aot", srcs, 1);
    o.output = tmp_path("libaot.so");
    PD_ASSERT_OK(pd_jit_build(&o));
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_module_load(reg, tmp_path("libaot.so"), &m));
    PD_EXPECT_NEAR(run_at_2(reg, "jit_scale"), 4.0, 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(Jit, StaticBuildWritesAnArchiveOfHiddenObjects)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("no_ops.c")};
    pd_jit_options o = options("bundle", srcs, 2);
    o.output = tmp_path("libbundle.a");
    o.output_kind = PD_JIT_STATIC;
    PD_ASSERT_OK(pd_jit_build(&o));
    char *text = read_text(tmp_path("libbundle.a"));
    PD_EXPECT(text != NULL && strncmp(text, "!<arch>\n", 8) == 0);
    PD_EXPECT_EQ(ninja_runs(), 1);
    /* Compiled with -fvisibility=hidden and packed as a bundle: a global function of an op
     * source stays inside whatever links the archive; the module entry point is there but
     * local, and only the bundle's registration symbol is global. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "readelf -sW '%s' > '%s'", tmp_path("libbundle.a"),
             tmp_path("syms.txt"));
    if (system(cmd) == 0) {
        text = read_text(tmp_path("syms.txt"));
        const char *helper = strstr(text, " jit_no_ops_helper");
        const char *line = helper;
        while (line && line > text && line[-1] != '\n')
            --line;
        PD_EXPECT(helper != NULL && line != NULL && strstr(line, "HIDDEN") != NULL &&
                  strstr(line, "HIDDEN") < helper);
        PD_EXPECT_CONTAINS(text, "LOCAL  HIDDEN");
        const char *info = strstr(text, " pd_bundle_info_bundle");
        const char *start = info;
        while (start && start > text && start[-1] != '\n')
            --start;
        PD_EXPECT(info != NULL && strstr(start, "GLOBAL DEFAULT") != NULL &&
                  strstr(start, "GLOBAL DEFAULT") < info);
    }
    /* Built again: warm, and the shared kind of the same module still builds. */
    PD_ASSERT_OK(pd_jit_build(&o));
    PD_EXPECT_EQ(ninja_runs(), 1);
    o.output_kind = PD_JIT_SHARED;
    o.output = tmp_path("libbundle.so");
    PD_ASSERT_OK(pd_jit_build(&o));
    PD_EXPECT_EQ(access(tmp_path("libbundle.so"), F_OK), 0);
    jit_teardown();
}

/* --- the reference op, end to end --------------------------------------------------------- */

PD_TEST(Jit, ExampleReluMatchesReference)
{
    jit_setup();
    const char *srcs[] = {PD_TEST_SOURCE_DIR "/examples/relu/relu.c"};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("relu", srcs, 1);
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_EQ(pd_module_op_count(m), 2);
    enum { N = 1000 };
    static double xs[N];
    for (int i = 0; i < N; ++i)
        xs[i] = pd_test_uniform(-1, 1);
    pd_tensor x, out;
    memset(&out, 0, sizeof out);
    PD_ASSERT_OK(
        pd_tensor_from_buffer(&x, xs, PD_FLOAT64, pd_place_cpu(), 1, (int64_t[]){N}, NULL, NULL));
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "custom_relu", &in, 1, NULL, 0, &outs, 1));
    const double *o_data = out.data;
    int wrong = 0;
    for (int i = 0; i < N; ++i)
        wrong += o_data[i] != (xs[i] > 0 ? xs[i] : 0.0);
    PD_EXPECT_EQ(wrong, 0);
    PD_EXPECT(pd_op_grad(pd_op_find(reg, "custom_relu")) != NULL);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    jit_teardown();
}
