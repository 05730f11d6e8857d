/*
 * jit_test.c - the JIT loader (pdext_jit.h): cold build, warm load without Ninja, rebuilds
 * after source / header / flag changes, reload in the same process, concurrent processes, a
 * build killed mid-way, every error path, static archives and an end-to-end relu.
 *
 * Each test gets a private temporary directory: PDEXT_CACHE_DIR points into it, the fixture
 * sources (tests/jit_ops/) are copied into it so they can be edited, and its bin/ holds a
 * `ninja` wrapper, first in PATH, that counts Ninja runs, so "warm" is checked as "no
 * Ninja ran", not by timing.
 */
#include "pd_test.h"
#include "pdext_jit.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- fixture helpers ---------------------------------------------------------------------- */

static char tmp_root[256];

static const char *tmp_path(const char *rel)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", tmp_root, rel);
    return b;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Copies tests/jit_ops/<name> into <tmp>/src/<name>. */
static const char *fixture(const char *name)
{
    char from[512];
    snprintf(from, sizeof from, "%s/tests/jit_ops/%s", PD_TEST_SOURCE_DIR, name);
    char *text = read_text(from);
    const char *to = tmp_path("src/");
    static char path[8][512];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s%s", to, name);
    if (text)
        write_text(p, text);
    return p;
}

/* Replaces the first `from` in the file with `to`. */
static void edit(const char *path, const char *from, const char *to)
{
    char *text = read_text(path);
    char *at = text ? strstr(text, from) : NULL;
    if (at == NULL)
        return;
    char out[1 << 16];
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    write_text(path, out);
}

static void write_script(const char *path, const char *body)
{
    write_text(path, body);
    chmod(path, 0755);
}

/* A fresh temporary world: cache, sources, and the Ninja-counting wrapper. */
static void jit_setup(void)
{
    snprintf(tmp_root, sizeof tmp_root, "/tmp/pdext-jit-test-XXXXXX");
    if (mkdtemp(tmp_root) == NULL)
        abort();
    mkdir(tmp_path("src"), 0700);
    mkdir(tmp_path("bin"), 0700);
    /* Tests change PATH; each starts again from the one the suite was started with. */
    static char *original_path;
    if (original_path == NULL && getenv("PATH"))
        original_path = strdup(getenv("PATH"));
    char *real_ninja = NULL;
    const char *path = original_path;
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char cand[1024];
        snprintf(cand, sizeof cand, "%s/ninja", d);
        if (access(cand, X_OK) == 0) {
            real_ninja = strdup(cand);
            break;
        }
    }
    char script[2048];
    snprintf(script, sizeof script, "#!/bin/sh\necho run >> '%s'\nexec '%s' \"$@\"\n",
             tmp_path("ninja.runs"), real_ninja ? real_ninja : "/usr/bin/ninja");
    free(real_ninja);
    write_script(tmp_path("bin/ninja"), script);
    char new_path[8192];
    snprintf(new_path, sizeof new_path, "%s:%s", tmp_path("bin"), path ? path : "/usr/bin:/bin");
    setenv("PATH", new_path, 1);
    setenv("PDEXT_CACHE_DIR", tmp_path("cache"), 1);
    setenv("PDEXT_INCLUDE_DIR", PD_TEST_SOURCE_DIR "/sdk/include", 1);
    unsetenv("CC");
    unsetenv("CXX");
    unsetenv("PDEXT_COMPILER_LAUNCHER");
    unsetenv("NVCC");
}

static void jit_teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
}

static int ninja_runs(void)
{
    char *text = read_text(tmp_path("ninja.runs"));
    int n = 0;
    for (const char *c = text; c && (c = strstr(c, "run")) != NULL; c += 3)
        ++n;
    return n;
}

static pd_jit_options options(const char *name, const char *const *sources, int32_t n)
{
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = name;
    o.sources = sources;
    o.n_sources = n;
    return o;
}

/* Runs the float32 op `name` on X = {1, 2, 3, 4} and returns Out[1] (NaN on failure). */
static double run_at_2(const pd_registry *reg, const char *name)
{
    float xs[4] = {1, 2, 3, 4};
    pd_tensor x, out;
    memset(&out, 0, sizeof out);
    if (pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){4}, NULL,
                              NULL) != PD_OK)
        return -1e30;
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    double v = -1e30;
    if (pd_run(reg, name, &in, 1, NULL, 0, &outs, 1) == PD_OK) {
        v = ((const float *)out.data)[1];
        pd_tensor_release(&out);
    } else {
        fprintf(stderr, "pd_run(%s): %s\n", name, pd_last_error());
    }
    pd_tensor_release(&x);
    return v;
}

/* Loads `sources` as module `name` into a new registry and returns op `op` at X = 2. */
static double load_and_run(const char *name, const char *const *sources, int32_t n,
                           const char *op)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return -1e30;
    pd_jit_options o = options(name, sources, n);
    pd_module *m = NULL;
    double v = -1e30;
    if (pd_jit_load(reg, &o, &m) == PD_OK)
        v = run_at_2(reg, op);
    else
        fprintf(stderr, "pd_jit_load(%s): %s\n", name, pd_last_error());
    pd_registry_destroy(reg);
    return v;
}

typedef struct log_lines {
    char text[1 << 15];
    int count;
} log_lines;

static void collect(void *user, const char *line)
{
    log_lines *l = user;
    size_t len = strlen(l->text);
    snprintf(l->text + len, sizeof l->text - len, "%s\n", line);
    l->count++;
}

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
             "if [ ! -e '%s' ]; then touch '%s'; sleep 600; fi\nexec cc \"$@\"\n",
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

/* --- errors ------------------------------------------------------------------------------- */

PD_TEST(Jit, CompileErrorShowsFileLineAndBuildDirectory)
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

PD_TEST(Jit, MissingCompilerIsUnavailableNamingToolAndPackage)
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

PD_TEST(Jit, MissingNinjaIsUnavailableNamingThePackage)
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

PD_TEST(Jit, CudaSourceWithoutNvccNamesTheMissingTool)
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

PD_TEST(Jit, MissingSourceIsNotFound)
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

PD_TEST(Jit, RefusesModuleNamesThatAreNotSafeFileNames)
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

PD_TEST(Jit, RefusesCacheDirectoryWritableByOthers)
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

PD_TEST(Jit, RefusesModuleClaimingANewerAbiWithBothVersions)
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

PD_TEST(Jit, RefusesLibraryThatDefinesNoOps)
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

PD_TEST(Jit, RejectsNullArgumentsAndStaticKindForLoad)
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
    const char *srcs[] = {fixture("scale.c"), fixture("shift.c")};
    pd_jit_options o = options("bundle", srcs, 2);
    o.output = tmp_path("libbundle.a");
    o.output_kind = PD_JIT_STATIC;
    PD_ASSERT_OK(pd_jit_build(&o));
    char *text = read_text(tmp_path("libbundle.a"));
    PD_EXPECT(text != NULL && strncmp(text, "!<arch>\n", 8) == 0);
    PD_EXPECT_EQ(ninja_runs(), 1);
    /* The kernels are hidden: linking the archive exports only the module entry point. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "nm -g --defined-only '%s' > '%s'", tmp_path("libbundle.a"),
             tmp_path("nm.txt"));
    if (system(cmd) == 0) {
        text = read_text(tmp_path("nm.txt"));
        PD_EXPECT_CONTAINS(text, "pdext_module_info");
        PD_EXPECT(!pd_test_contains(text, "scale_forward"));
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
    PD_ASSERT_OK(pd_tensor_from_buffer(&x, xs, PD_FLOAT64, pd_place_cpu(), 1, (int64_t[]){N},
                                       NULL, NULL));
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
