/*
 * bundle_test.c - `pdext bundle` and static registration, end to end: the command builds
 * static and shared bundles from tests/bundle/ fixtures; test programs (tests/bundle/prog_*.c)
 * are linked against them and this build tree's static libpdext with each of the link flags a
 * deployer may use, then run; the inference example is built and run with no compiler on
 * PATH and no cache directory. Also pd_bundle_register's own contract, in process.
 *
 * The bundles every test needs are built once per build tree (bundle_work/, guarded by a
 * lock and a stamp of the command and fixture sources), because ctest runs each test in its
 * own process, possibly in parallel. Each test links its programs in a directory of its own.
 */
#include "pd_test.h"
#include "pdext_bundle.h"
#include "pdext_jit.h"
#include "pdext_npy.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PD_BUNDLE_PDEXT
#define PD_BUNDLE_PDEXT "/nonexistent/pdext (the pdext command target was not configured)"
#endif

#define SRC PD_TEST_SOURCE_DIR
#define FIX SRC "/tests/bundle"
#define WORK PD_TEST_BINARY_DIR "/bundle_work"

/* What a program linked against libpdext.a needs besides it (see pdext.pc). */
#define PDEXT_LIBS PD_BUNDLE_LIBPDEXT_JIT_A " " PD_BUNDLE_LIBPDEXT_A " -ldl -lpthread -lz -lm"

/* --- running commands ------------------------------------------------------------------- */

/* Runs `sh -c CMD` with stderr merged into stdout; returns the exit status (-1 if it could
 * not run) and, when `out` is not NULL, the output (malloc'd). */
static int sh(char **out, const char *fmt, ...) PD_PRINTF(2, 3);
static int sh(char **out, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    /* The bundles are built in the JIT's cache: a private one, not the user's. */
    setenv("PDEXT_CACHE_DIR", WORK "/cache", 0);
    char full[8300];
    snprintf(full, sizeof full, "( %s ) 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (p == NULL)
        return -1;
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 1024) {
            char *bigger = realloc(buf, cap *= 2);
            if (bigger == NULL)
                break;
            buf = bigger;
        }
    }
    if (buf)
        buf[len] = '\0';
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* --- the shared bundles ------------------------------------------------------------------- */

/* The command, the JIT library that does its work, and the sources. */
static const char *const FIXTURE_INPUTS[] = {PD_BUNDLE_PDEXT,
                                             PD_BUNDLE_LIBPDEXT_JIT_A,
                                             FIX "/ops_scale.c",
                                             FIX "/ops_neg.cc",
                                             FIX "/ops_triple.c",
                                             FIX "/ops_dup.c",
                                             SRC "/examples/relu/relu.c",
                                             SRC "/examples/concat/concat.c"};

/* A line that changes whenever the command or a fixture source changes. */
static void fixture_stamp(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof FIXTURE_INPUTS / sizeof FIXTURE_INPUTS[0]; ++i) {
        struct stat st;
        memset(&st, 0, sizeof st);
        stat(FIXTURE_INPUTS[i], &st);
        len += (size_t)snprintf(buf + len, cap - len, "%lld.%ld:%lld ",
                                (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                                (long long)st.st_size);
    }
}

/* Builds (once per build tree) the bundles of the fixtures into WORK:
 *   libalpha.a (ops_scale.c + ops_neg.cc), libbeta.a and libbeta.so (ops_triple.c),
 *   libgamma.a (ops_dup.c), libinferops.a (examples relu + concat). */
static bool fixture(void)
{
    mkdir(WORK, 0755);
    int lock = open(WORK "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0 || flock(lock, LOCK_EX) != 0) {
        pd_test_fail(__FILE__, __LINE__, "cannot lock %s/.lock: %s", WORK, strerror(errno));
        if (lock >= 0)
            close(lock);
        return false;
    }
    char want[2048], have[2048] = "";
    fixture_stamp(want, sizeof want);
    FILE *f = fopen(WORK "/.stamp", "r");
    if (f) {
        if (fgets(have, sizeof have, f) == NULL)
            have[0] = '\0';
        fclose(f);
    }
    bool ok = strcmp(want, have) == 0;
    if (!ok) {
        static const char *const builds[] = {
            "-o " WORK "/libalpha.a " FIX "/ops_scale.c " FIX "/ops_neg.cc",
            "-o " WORK "/libbeta.a " FIX "/ops_triple.c",
            "--shared -o " WORK "/libbeta.so " FIX "/ops_triple.c",
            "-o " WORK "/libgamma.a " FIX "/ops_dup.c",
            "-o " WORK "/libinferops.a " SRC "/examples/relu/relu.c " SRC
            "/examples/concat/concat.c",
        };
        unlink(WORK "/.stamp");
        ok = true;
        for (size_t i = 0; i < sizeof builds / sizeof builds[0] && ok; ++i) {
            char *out = NULL;
            int rc = sh(&out, "%s bundle %s", PD_BUNDLE_PDEXT, builds[i]);
            if (rc != 0) {
                pd_test_fail(__FILE__, __LINE__, "pdext bundle %s: exit %d\n%s", builds[i], rc,
                             out ? out : "");
                ok = false;
            }
            free(out);
        }
        if (ok && (f = fopen(WORK "/.stamp", "w")) != NULL) {
            fputs(want, f);
            fclose(f);
        }
    }
    flock(lock, LOCK_UN);
    close(lock);
    return ok;
}

/* A fresh directory for one test's programs: WORK/<name>. */
static const char *test_dir(const char *name)
{
    char *dir = (char *)pd_test_path("bundle_work/");
    char path[1024];
    snprintf(path, sizeof path, "%s%s", dir, name);
    sh(NULL, "rm -rf '%s' && mkdir -p '%s'", path, path);
    char rel[256];
    snprintf(rel, sizeof rel, "bundle_work/%s", name);
    return pd_test_path(rel);
}

/* Compiles tests/bundle/<prog>.c and links it with `objects` (archives, libraries) and
 * `flags` into dir/<prog>; returns true on success (a failure is recorded). */
static bool link_prog(const char *dir, const char *prog, const char *flags, const char *objects)
{
    char *out = NULL;
    int rc = sh(&out,
                "%s %s %s -I" WORK " -I" SRC "/sdk/include -I" FIX " " FIX "/%s.c %s -o %s/%s",
                PD_BUNDLE_CC, PD_BUNDLE_SANITIZE_FLAGS, flags, prog, objects, dir, prog);
    if (rc != 0)
        pd_test_fail(__FILE__, __LINE__, "linking %s with '%s' failed (exit %d):\n%s", prog, flags,
                     rc, out ? out : "");
    free(out);
    return rc == 0;
}

/* Runs dir/<prog> <args>; expects exit 0 and "ok" on its output. */
static void expect_prog_ok(const char *dir, const char *prog, const char *args)
{
    char *out = NULL;
    int rc = sh(&out, "%s/%s %s", dir, prog, args);
    PD_EXPECT_EQ(rc, 0);
    if (rc != 0 || !pd_test_contains(out, ": ok"))
        pd_test_fail(__FILE__, __LINE__, "%s %s:\n%s", prog, args, out ? out : "");
    free(out);
}

/* Links prog_single with `flags` (and the archives in the given order) and runs it. */
static void check_single(const char *name, const char *flags, bool reversed)
{
    PD_ASSERT(fixture());
    const char *dir = test_dir(name);
    const char *objects = reversed ? PD_BUNDLE_LIBPDEXT_A " " WORK "/libalpha.a -ldl -lpthread -lz "
                                                          "-lstdc++ -lm"
                                   : WORK "/libalpha.a " PDEXT_LIBS " -lstdc++";
    if (link_prog(dir, "prog_single", flags, objects))
        expect_prog_ok(dir, "prog_single", "");
}

/* --- building bundles ------------------------------------------------------------------- */

PD_TEST(Bundle, StaticBundleComesWithHeaderAndPkgConfigFile)
{
    PD_ASSERT(fixture());
    PD_EXPECT(file_exists(WORK "/libalpha.a"));
    char *out = NULL;
    PD_EXPECT_EQ(sh(&out, "cat " WORK "/alpha.h"), 0);
    PD_EXPECT_CONTAINS(out, "static inline pd_status pd_bundle_register_alpha(pd_registry *reg, "
                            "pd_module **out)");
    PD_EXPECT_CONTAINS(out, "Ops: bundle_neg, bundle_scale, bundle_scale_grad\n");
    free(out);
    PD_EXPECT_EQ(sh(&out, "cat " WORK "/alpha.pc"), 0);
    PD_EXPECT_CONTAINS(out, "Requires: pdext");
    PD_EXPECT_CONTAINS(out, "Libs: ${bundledir}/libalpha.a -lstdc++ -lm"); /* a C++ source */
    free(out);
}

PD_TEST(Bundle, PkgConfigFileGivesTheArchiveAndHeaderDirectory)
{
    PD_ASSERT(fixture());
    const char *dir = test_dir("pkgconfig");
    /* The bundle requires pdext; this build's pdext.pc is not installed, so a stand-in
     * provides it. */
    char *out = NULL;
    int rc = sh(&out,
                "printf 'Name: pdext\\nDescription: stand-in\\nVersion: 0\\nCflags: "
                "-I/sdk\\nLibs: -lpdext\\n' > %s/pdext.pc && PKG_CONFIG_PATH=" WORK
                ":%s pkg-config --static --cflags --libs alpha",
                dir, dir);
    PD_EXPECT_EQ(rc, 0);
    PD_EXPECT_CONTAINS(out, "-I" WORK);
    PD_EXPECT_CONTAINS(out, WORK "/libalpha.a");
    PD_EXPECT_CONTAINS(out, "-lpdext");
    free(out);
}

PD_TEST(Bundle, StaticBundleExportsOnlyItsRegistrationSymbol)
{
    PD_ASSERT(fixture());
    char *out = NULL;
    PD_ASSERT_EQ(sh(&out, "nm -g --defined-only " WORK "/libalpha.a | grep ' [A-Za-z] '"), 0);
    PD_EXPECT_CONTAINS(out, " T pd_bundle_info_alpha\n");
    int lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')) != NULL; ++p)
        ++lines;
    PD_EXPECT_EQ(lines, 1); /* kernels, helpers, pd__api, pdext_module_info: all local */
    if (lines != 1)
        pd_test_fail(__FILE__, __LINE__, "global symbols of libalpha.a:\n%s", out);
    free(out);
}

PD_TEST(Bundle, SharedBundleLoadsThroughTheModuleLoader)
{
    PD_ASSERT(fixture());
    pd_registry *reg = NULL;
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_OK(pd_module_load(reg, WORK "/libbeta.so", &m));
    PD_EXPECT_EQ(pd_module_op_count(m), 1);
    float xs[3] = {1.0f, -2.0f, 0.25f};
    pd_tensor x, out = {0};
    PD_ASSERT_OK(
        pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){3}, NULL, NULL));
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    PD_EXPECT_OK(pd_run(reg, "bundle_triple", &in, 1, NULL, 0, &o, 1));
    if (out.data)
        for (int i = 0; i < 3; ++i)
            PD_EXPECT_NEAR(((float *)out.data)[i], 3.0f * xs[i], 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* --- linking a static bundle ---------------------------------------------------------- */

PD_TEST(Bundle, PlainLinkRegistersEveryOp) { check_single("plain", "-O2", false); }

PD_TEST(Bundle, GcSectionsLinkRegistersEveryOp)
{
    check_single("gc_sections", "-O2 -ffunction-sections -fdata-sections -Wl,--gc-sections", false);
}

PD_TEST(Bundle, LtoLinkRegistersEveryOp) { check_single("lto", "-O2 -flto", false); }

PD_TEST(Bundle, ArchivesInReversedOrderLink) { check_single("reversed", "-O2", true); }

PD_TEST(Bundle, LldWithGcSectionsRegistersEveryOp)
{
    /* lld drops sections that only __start_/__stop_ refer to; bundles do not rely on them. */
    if (sh(NULL, "command -v ld.lld") != 0) {
        printf("ld.lld is not installed: nothing to check\n");
        return;
    }
    check_single("lld", "-O2 -fuse-ld=lld -Wl,--gc-sections", false);
}

PD_TEST(Bundle, FullyStaticLinkRegistersEveryOp)
{
    if (PD_BUNDLE_SANITIZE_FLAGS[0] != '\0') {
        printf("sanitizer build: the sanitizer runtimes cannot be linked -static; the plain "
               "build runs this test\n");
        return;
    }
    if (sh(NULL, "test -e \"$(%s -print-file-name=libc.a)\"", PD_BUNDLE_CC) != 0) {
        printf("no static libc (libc.a) on this machine: nothing to check\n");
        return;
    }
    check_single("static", "-O2 -static -Wl,--gc-sections", false);
}

PD_TEST(Bundle, KernelHelpersAreNotExportedFromTheProgram)
{
    PD_ASSERT(fixture());
    const char *dir = test_dir("exports");
    PD_ASSERT(
        link_prog(dir, "prog_single", "-O2 -rdynamic", WORK "/libalpha.a " PDEXT_LIBS " -lstdc++"));
    char *out = NULL;
    /* Even -rdynamic (export every global) exports nothing of the bundle but its info. */
    sh(&out, "nm -D --defined-only %s/prog_single; nm -g --defined-only %s/prog_single", dir, dir);
    PD_EXPECT(!pd_test_contains(out, "helper_factor"));
    PD_EXPECT(!pd_test_contains(out, "scale_kernel"));
    PD_EXPECT(!pd_test_contains(out, "neg_kernel"));
    PD_EXPECT(!pd_test_contains(out, "pdext_module_info"));
    PD_EXPECT(!pd_test_contains(out, "pd__api"));
    PD_EXPECT_CONTAINS(out, "pd_bundle_info_alpha");
    free(out);
}

PD_TEST(Bundle, ProgramsOwnOpsStaySeparateFromTheBundle)
{
    PD_ASSERT(fixture());
    const char *dir = test_dir("own");
    if (link_prog(dir, "prog_own", "-O2 -Wl,--gc-sections",
                  WORK "/libalpha.a " PDEXT_LIBS " -lstdc++"))
        expect_prog_ok(dir, "prog_own", "");
}

PD_TEST(Bundle, TwoBundlesWithClashingHelperNamesRegisterSeparately)
{
    PD_ASSERT(fixture());
    const char *dir = test_dir("two");
    /* alpha and beta both define helper_factor() and scale_kernel(); gamma is needed by the
     * program's other mode. */
    if (link_prog(dir, "prog_multi", "-O2",
                  WORK "/libalpha.a " WORK "/libbeta.a " WORK "/libgamma.a " PDEXT_LIBS
                       " -lstdc++"))
        expect_prog_ok(dir, "prog_multi", "two");
}

PD_TEST(Bundle, SameOpInTwoBundlesIsAnErrorNamingTheOpAndBothBundles)
{
    PD_ASSERT(fixture());
    const char *dir = test_dir("dup");
    PD_ASSERT(link_prog(dir, "prog_multi", "-O2",
                        WORK "/libgamma.a " WORK "/libbeta.a " WORK "/libalpha.a " PDEXT_LIBS
                             " -lstdc++"));
    char *out = NULL;
    PD_EXPECT_EQ(sh(&out, "%s/prog_multi dup", dir), 0);
    PD_EXPECT_CONTAINS(out, "dup: ok");
    PD_EXPECT_CONTAINS(out, "'bundle_scale'");
    PD_EXPECT_CONTAINS(out, "bundle 'gamma' (libgamma.a)");
    PD_EXPECT_CONTAINS(out, "bundle 'alpha' (libalpha.a)");
    free(out);
}

PD_TEST(Bundle, StaticSharedAndJitModulesMixInOneProcess)
{
    PD_ASSERT(fixture());
    const char *dir = test_dir("mix");
    PD_ASSERT(link_prog(dir, "prog_mix", "-O2", WORK "/libalpha.a " PDEXT_LIBS " -lstdc++"));
    char *out = NULL;
    int rc = sh(&out, "%s/prog_mix " WORK "/libbeta.so " FIX "/ops_jit.c %s/jit", dir, dir);
    PD_EXPECT_EQ(rc, 0);
    if (rc != 0 || !pd_test_contains(out, "prog_mix: ok"))
        pd_test_fail(__FILE__, __LINE__, "prog_mix:\n%s", out ? out : "");
    free(out);
}

PD_TEST(BundleJit, StaticAndSharedHostsCompileAgainstTheSameSdkHeaders)
{
    /* A program linking libpdext_jit.a, placed where a decoy include/pdext sits beside its
     * bin/: it must not take those headers (a shared host would not), or the two kinds of
     * host would build the same sources with different -I, into different cache entries. */
    const char *dir = test_dir("sdkdir");
    char *out = NULL;
    char src[1024];
    snprintf(src, sizeof src, "%s/sdk.c", dir);
    FILE *fp = fopen(src, "w");
    PD_ASSERT(fp != NULL);
    fputs("#include \"pdext_jit.h\"\n#include <stdio.h>\n#include <stdlib.h>\n"
          "int main(void) { char *d = pd_jit_sdk_include_dir(); puts(d ? d : \"(none)\"); "
          "free(d); return 0; }\n",
          fp);
    fclose(fp);
    int rc = sh(&out,
                "mkdir -p %s/bin %s/include/pdext && touch %s/include/pdext/extension.h && "
                "%s %s -I" SRC "/sdk/include %s " PDEXT_LIBS " -o %s/bin/sdk && "
                "env -u PDEXT_INCLUDE_DIR %s/bin/sdk",
                dir, dir, dir, PD_BUNDLE_CC, PD_BUNDLE_SANITIZE_FLAGS, src, dir, dir);
    PD_EXPECT_EQ(rc, 0);
    char *saved = getenv("PDEXT_INCLUDE_DIR") ? strdup(getenv("PDEXT_INCLUDE_DIR")) : NULL;
    unsetenv("PDEXT_INCLUDE_DIR");
    char *here = pd_jit_sdk_include_dir(); /* this test links libpdext_jit.so */
    if (saved) {
        setenv("PDEXT_INCLUDE_DIR", saved, 1);
        free(saved);
    }
    PD_ASSERT(here != NULL);
    char want[1100];
    snprintf(want, sizeof want, "%s\n", here);
    PD_EXPECT_STREQ(out, want);
    free(here);
    free(out);
}

/* --- pd_bundle_register, in process --------------------------------------------------------- */

/* The info block of the fixture module (ops_scale.c as a shared library): a real op table
 * to register with pd_bundle_register. Keeps the library open (handle in *h). */
static const pd_module_info *fixture_info(void **h)
{
    *h = dlopen(PD_BUNDLE_FIXTURE_MODULE, RTLD_NOW | RTLD_LOCAL);
    if (*h == NULL) {
        pd_test_fail(__FILE__, __LINE__, "dlopen: %s", dlerror());
        return NULL;
    }
    pd_module_entry_fn entry;
    *(void **)&entry = dlsym(*h, PD_MODULE_ENTRY);
    return entry ? entry() : NULL;
}

PD_TEST(BundleRegister, SecondCallIsANoOpReturningTheSameModule)
{
    void *h;
    const pd_module_info *info = fixture_info(&h);
    PD_ASSERT(info != NULL);
    pd_registry *reg = NULL;
    pd_module *first = NULL, *second = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_OK(pd_bundle_register(reg, info, "bundle 'fixture'", &first));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 2);
    PD_EXPECT_OK(pd_bundle_register(reg, info, "bundle 'fixture'", &second));
    PD_EXPECT(first != NULL && first == second);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 2);
    PD_EXPECT_OK(pd_bundle_register(reg, info, "another origin string", NULL));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 2);
    PD_EXPECT_STREQ(pd_module_path(first), "bundle 'fixture'");
    pd_registry_destroy(reg);
    dlclose(h);
}

PD_TEST(BundleRegister, EachRegistryGetsItsOwnRegistration)
{
    void *h;
    const pd_module_info *info = fixture_info(&h);
    PD_ASSERT(info != NULL);
    pd_registry *a = NULL, *b = NULL;
    pd_module *ma = NULL, *mb = NULL;
    PD_ASSERT_OK(pd_registry_create(&a));
    PD_ASSERT_OK(pd_registry_create(&b));
    PD_EXPECT_OK(pd_bundle_register(a, info, "bundle 'fixture'", &ma));
    PD_EXPECT_OK(pd_bundle_register(b, info, "bundle 'fixture'", &mb));
    PD_EXPECT(ma != NULL && mb != NULL && ma != mb);
    PD_EXPECT(pd_op_find(b, "bundle_scale") != NULL);
    pd_registry_destroy(a);
    pd_registry_destroy(b);
    dlclose(h);
}

PD_TEST(BundleRegister, RegistersAgainAfterItsModuleWasUnloaded)
{
    void *h;
    const pd_module_info *info = fixture_info(&h);
    PD_ASSERT(info != NULL);
    pd_registry *reg = NULL;
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_ASSERT_OK(pd_bundle_register(reg, info, "bundle 'fixture'", &m));
    PD_EXPECT_OK(pd_module_unload(m));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    PD_EXPECT_OK(pd_bundle_register(reg, info, "bundle 'fixture'", &m));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 2);
    pd_registry_destroy(reg);
    dlclose(h);
}

typedef struct register_race {
    pd_registry *reg;
    const pd_module_info *info;
    pd_status status;
    pd_module *module;
} register_race;

static void *register_thread(void *arg)
{
    register_race *r = arg;
    r->status = pd_bundle_register(r->reg, r->info, "bundle 'fixture'", &r->module);
    return NULL;
}

PD_TEST(BundleRegister, ConcurrentCallsRegisterTheBundleOnce)
{
    void *h;
    const pd_module_info *info = fixture_info(&h);
    PD_ASSERT(info != NULL);
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    enum { N = 8 };
    register_race races[N];
    pthread_t threads[N];
    for (int i = 0; i < N; ++i) {
        races[i] = (register_race){reg, info, PD_ERR_INTERNAL, NULL};
        PD_ASSERT_EQ(pthread_create(&threads[i], NULL, register_thread, &races[i]), 0);
    }
    for (int i = 0; i < N; ++i)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < N; ++i) {
        PD_EXPECT_EQ(races[i].status, PD_OK);
        PD_EXPECT(races[i].module != NULL && races[i].module == races[0].module);
    }
    PD_EXPECT_EQ(pd_registry_op_count(reg), 2);
    pd_registry_destroy(reg);
    dlclose(h);
}

PD_TEST(BundleRegister, RejectsNullArguments)
{
    void *h;
    const pd_module_info *info = fixture_info(&h);
    PD_ASSERT(info != NULL);
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_ERROR(pd_bundle_register(NULL, info, "x", NULL), PD_ERR_INVALID_ARGUMENT,
                    "pd_bundle_register: reg is NULL");
    PD_EXPECT_ERROR(pd_bundle_register(reg, NULL, "x", NULL), PD_ERR_INVALID_ARGUMENT,
                    "pd_bundle_register: info is NULL");
    pd_registry_destroy(reg);
    dlclose(h);
}

PD_TEST(BundleRegister, RefusesAnEmptyTableNamingTheOrigin)
{
    pd_module_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.abi_major = PD_ABI_MAJOR;
    info.abi_minor = PD_ABI_MINOR;
    pd_registry *reg = NULL;
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_ERROR(pd_bundle_register(reg, &info, "bundle 'empty'", &m), PD_ERR_INVALID_MODULE,
                    "bundle 'empty' contains no ops");
    PD_EXPECT(m == NULL);
    pd_registry_destroy(reg);
}

/* --- errors of the command ---------------------------------------------------------------- */

/* Runs `pdext bundle ARGS`; returns the exit status and the output in *out. */
static int bundle_cmd(char **out, const char *args)
{
    return sh(out, "%s bundle %s", PD_BUNDLE_PDEXT, args);
}

PD_TEST(BundleCommand, BundleWithoutOpsIsAnError)
{
    const char *dir = test_dir("cmd_noops");
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "-o %s/libnone.a " FIX "/ops_none.c", dir);
    PD_EXPECT_EQ(bundle_cmd(&out, args), 1);
    PD_EXPECT_CONTAINS(out, "pdext bundle: pd_jit_build_load: module 'none' (sources: "
                            "ops_none.c) was built but does not load, so nothing was written");
    PD_EXPECT_CONTAINS(out, "contains no ops: was it built from sources that use PD_BUILD_OP?");
    free(out);
    char path[1024];
    snprintf(path, sizeof path, "%s/libnone.a", dir);
    PD_EXPECT(!file_exists(path));
    PD_EXPECT_EQ(sh(NULL, "test -z \"$(ls -A %s)\"", dir), 0); /* no temporary left behind */
}

PD_TEST(BundleCommand, CompileErrorShowsTheCompilerDiagnostics)
{
    const char *dir = test_dir("cmd_broken");
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "-o %s/libbroken.a " FIX "/ops_scale.c " FIX "/ops_broken.c", dir);
    PD_EXPECT_EQ(bundle_cmd(&out, args), 1);
    PD_EXPECT_CONTAINS(out, "ops_broken.c:5"); /* the compiler's own file:line */
    PD_EXPECT_CONTAINS(out, "undeclared_name_in_bundle_fixture");
    PD_EXPECT_CONTAINS(out, "pdext bundle: pd_jit_build_load: building module 'broken' failed");
    free(out);
    PD_EXPECT_EQ(sh(NULL, "test -z \"$(ls -A %s)\"", dir), 0);
}

PD_TEST(BundleCommand, OutputInAMissingDirectoryIsAnError)
{
    char *out = NULL;
    PD_EXPECT_EQ(bundle_cmd(&out, "-o /nonexistent/dir/libx.a " FIX "/ops_scale.c"), 1);
    PD_EXPECT_CONTAINS(out, "cannot write '/nonexistent/dir/libx.a': output directory "
                            "'/nonexistent/dir' does not exist");
    free(out);
}

PD_TEST(BundleCommand, OutputInAnUnwritableDirectoryIsAnError)
{
    /* /proc refuses new files even to root, unlike a chmod'ed directory. */
    char *out = NULL;
    PD_EXPECT_EQ(bundle_cmd(&out, "-o /proc/libx.a " FIX "/ops_scale.c"), 1);
    PD_EXPECT_CONTAINS(out, "cannot write '/proc/libx.a': cannot create files in '/proc'");
    free(out);
}

PD_TEST(BundleCommand, OutputThatIsADirectoryIsAnError)
{
    const char *dir = test_dir("cmd_outdir");
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "-o %s " FIX "/ops_scale.c", dir);
    PD_EXPECT_EQ(bundle_cmd(&out, args), 1);
    PD_EXPECT_CONTAINS(out, "it is a directory");
    free(out);
}

PD_TEST(BundleCommand, NameMustBeACIdentifier)
{
    char *out = NULL;
    PD_EXPECT_EQ(bundle_cmd(&out, "-o /tmp/libx.a --name 9lives " FIX "/ops_scale.c"), 1);
    PD_EXPECT_CONTAINS(out, "the name '9lives' of a static bundle is not a C identifier");
    PD_EXPECT_CONTAINS(out, "pd_bundle_register_<name>");
    free(out);
}

PD_TEST(BundleCommand, NameIsDerivedFromTheOutput)
{
    const char *dir = test_dir("cmd_name");
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "-o %s/libmy-ops.v1.a " FIX "/ops_triple.c", dir);
    PD_EXPECT_EQ(bundle_cmd(&out, args), 0);
    PD_EXPECT_CONTAINS(out, "static bundle 'my_ops'");
    free(out);
    PD_EXPECT_EQ(sh(&out, "cat %s/my_ops.h", dir), 0);
    PD_EXPECT_CONTAINS(out, "pd_bundle_register_my_ops");
    PD_EXPECT_CONTAINS(out, "(libmy-ops.v1.a)");
    free(out);
}

PD_TEST(BundleCommand, UnknownSourceTypeIsAnError)
{
    char *out = NULL;
    PD_EXPECT_EQ(bundle_cmd(&out, "-o /tmp/libx.a " FIX "/prog_util.h"), 1);
    PD_EXPECT_CONTAINS(out, "prog_util.h' of module 'x' has an unknown extension; expected .c, "
                            ".cc, .cpp, .cxx or .cu");
    free(out);
}

PD_TEST(BundleCommand, MissingCompilerNamesTheTool)
{
    const char *dir = test_dir("cmd_nocc");
    char *out = NULL;
    int rc = sh(&out, "CC=/nonexistent/cc %s bundle -o %s/libx.a " FIX "/ops_triple.c",
                PD_BUNDLE_PDEXT, dir);
    PD_EXPECT_EQ(rc, 1);
    PD_EXPECT_CONTAINS(out, "needs the C compiler, but '/nonexistent/cc' was not found (from CC)");
    free(out);
}

PD_TEST(BundleCommand, MissingArgumentsAreUsageErrors)
{
    char *out = NULL;
    PD_EXPECT_EQ(bundle_cmd(&out, FIX "/ops_scale.c"), 2);
    PD_EXPECT_CONTAINS(out, "no output: give -o libNAME.a");
    free(out);
    PD_EXPECT_EQ(bundle_cmd(&out, "-o /tmp/libx.a"), 2);
    PD_EXPECT_CONTAINS(out, "no sources");
    free(out);
    PD_EXPECT_EQ(bundle_cmd(&out, "-o /tmp/libx.a --bogus " FIX "/ops_scale.c"), 2);
    PD_EXPECT_CONTAINS(out, "unknown option '--bogus'");
    free(out);
}

PD_TEST(BundleCommand, HelpDescribesTheCommand)
{
    char *out = NULL;
    PD_EXPECT_EQ(bundle_cmd(&out, "--help"), 0);
    PD_EXPECT_CONTAINS(out, "usage: pdext bundle -o OUTPUT [--shared | --static | --onnxruntime");
    PD_EXPECT_CONTAINS(out, "RegisterCustomOps");
    PD_EXPECT_CONTAINS(out, "pd_bundle_register_NAME");
    free(out);
}

PD_TEST(BundleCommand, CudaSourceBundlesAndRegisters)
{
    if (sh(NULL, "test -n \"$NVCC\" || command -v nvcc || test -x \"$CUDA_HOME/bin/nvcc\" || "
                 "test -x /usr/local/cuda/bin/nvcc") != 0) {
        printf("nvcc is not installed: nothing to check\n");
        return;
    }
    const char *dir = test_dir("cuda");
    char *out = NULL;
    /* One architecture: the test checks the packing, not nvcc's code generation. */
    int rc = sh(&out, "PDEXT_CUDA_ARCH=75 %s bundle -o %s/libcudaops.a " FIX "/ops_cuda.cu",
                PD_BUNDLE_PDEXT, dir);
    PD_EXPECT_EQ(rc, 0);
    if (rc != 0) {
        pd_test_fail(__FILE__, __LINE__, "pdext bundle:\n%s", out ? out : "");
        free(out);
        return;
    }
    PD_EXPECT_CONTAINS(out, "static bundle 'cudaops' with 1 op: bundle_cuda_scale");
    free(out);
    PD_EXPECT_EQ(sh(&out, "nm -g --defined-only %s/libcudaops.a | grep -c ' [A-Z] '", dir), 0);
    PD_EXPECT_CONTAINS(out, "1\n"); /* only pd_bundle_info_cudaops, even with nvcc's objects */
    free(out);
    /* The program links with the extra libraries the .pc file names (C++ and CUDA runtimes). */
    char libs[1024];
    snprintf(libs, sizeof libs,
             "%s/libcudaops.a " PDEXT_LIBS " $(sed -n 's|^Libs: ${bundledir}/libcudaops.a||p' "
             "%s/cudaops.pc)",
             dir, dir);
    char flags[1024];
    snprintf(flags, sizeof flags, "-O2 -I%s", dir);
    if (link_prog(dir, "prog_cuda", flags, libs))
        expect_prog_ok(dir, "prog_cuda", "");
}

/* --- the inference example ------------------------------------------------------------------ */

/* Links examples/inference/infer.c with libinferops.a into DIR/infer. */
static bool link_infer(const char *dir)
{
    char *out = NULL;
    int rc = sh(&out,
                "%s %s -O2 -I" WORK " -I" SRC "/sdk/include " SRC
                "/examples/inference/infer.c " WORK "/libinferops.a " PDEXT_LIBS " -o %s/infer",
                PD_BUNDLE_CC, PD_BUNDLE_SANITIZE_FLAGS, dir);
    if (rc != 0)
        pd_test_fail(__FILE__, __LINE__, "linking infer:\n%s", out ? out : "");
    free(out);
    return rc == 0;
}

PD_TEST(BundleInference, ExampleRunsWithNoCompilerOnPathAndNoCache)
{
    PD_ASSERT(fixture());
    const char *dir = test_dir("inference");
    char *out = NULL;
    int rc;
    PD_ASSERT(link_infer(dir));

    /* X: 3 x 4 float32 with negatives; expected Y = relu(concat([X, X], axis 0)). */
    float xs[12];
    for (int i = 0; i < 12; ++i)
        xs[i] = (float)pd_test_uniform(-4, 4);
    pd_tensor x, y = {0};
    PD_ASSERT_OK(pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 2, (int64_t[]){3, 4},
                                       NULL, NULL));
    char in_path[1024], out_path[1024];
    snprintf(in_path, sizeof in_path, "%s/x.npy", dir);
    snprintf(out_path, sizeof out_path, "%s/y.npy", dir);
    PD_ASSERT_OK(pd_npy_save(in_path, &x));
    pd_tensor_release(&x);

    rc = sh(&out,
            "mkdir -p %s/home && env -i PATH=/nonexistent HOME=%s/home "
            "XDG_CACHE_HOME=%s/home/.cache %s/infer %s %s",
            dir, dir, dir, dir, in_path, out_path);
    PD_EXPECT_EQ(rc, 0);
    PD_EXPECT_CONTAINS(out, "y.npy: float32 [6 x 4]");
    free(out);
    PD_EXPECT_EQ(sh(NULL, "test -z \"$(ls -A %s/home)\"", dir), 0); /* nothing cached */

    PD_ASSERT_OK(pd_npy_load(out_path, &y));
    PD_EXPECT_EQ(y.ndim, 2);
    PD_EXPECT_EQ(y.shape[0], 6);
    PD_EXPECT_EQ(y.shape[1], 4);
    if (y.dtype == PD_FLOAT32 && y.ndim == 2 && y.shape[0] == 6)
        for (int i = 0; i < 24; ++i) {
            float v = xs[i % 12];
            PD_EXPECT_NEAR(((float *)y.data)[i], v > 0 ? v : 0, 0);
        }
    pd_tensor_release(&y);

    /* `nm`: the binary exports none of the ops' functions. */
    PD_EXPECT_EQ(sh(&out, "nm -g --defined-only %s/infer; nm -D --defined-only %s/infer", dir, dir),
                 0);
    static const char *const kernels[] = {"relu_forward",       "relu_backward",
                                          "concat_forward",     "concat_backward",
                                          "concat_infer_shape", "pdext_module_info"};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; ++i)
        if (pd_test_contains(out, kernels[i]))
            pd_test_fail(__FILE__, __LINE__, "infer exports %s", kernels[i]);
    free(out);
}

PD_TEST(BundleInference, ExampleErrorNamesTheStepAndTheOpOnce)
{
    PD_ASSERT(fixture());
    const char *dir = test_dir("inference_error");
    PD_ASSERT(link_infer(dir));
    /* A 0-d input: custom_concat refuses a scalar. */
    pd_tensor x;
    PD_ASSERT_OK(pd_tensor_empty(&x, PD_FLOAT32, pd_place_cpu(), 0, NULL));
    ((float *)x.data)[0] = 1;
    char in_path[1024];
    snprintf(in_path, sizeof in_path, "%s/scalar.npy", dir);
    PD_ASSERT_OK(pd_npy_save(in_path, &x));
    pd_tensor_release(&x);
    char *out = NULL;
    PD_EXPECT_EQ(sh(&out, "%s/infer %s %s/y.npy", dir, in_path, dir), 1);
    PD_EXPECT_CONTAINS(out, "infer: step 1 (concat): custom_concat: inputs must have at least "
                            "one dimension");
    PD_EXPECT(out != NULL && strstr(out, "custom_concat: custom_concat") == NULL);
    free(out);
    char out_path[1024];
    snprintf(out_path, sizeof out_path, "%s/y.npy", dir);
    PD_EXPECT(!file_exists(out_path));
}
