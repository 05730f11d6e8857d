/*
 * jit_cache_test.c - a cache the JIT can trust: a damaged, replaced or untrusted library or
 * manifest is rebuilt, never loaded; a corrupt build-directory file costs one clean build,
 * not every future one. (The locks are tested in jit_lock_test.c.)
 */
#include "jit_support.h"

/* --- helpers ------------------------------------------------------------------------------ */

/* The published library of module `name` in the cache <tmp>/<cache>, as its manifest names
 * it. */
static const char *library_in(const char *cache, const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/%s/manifest-shared", cache, name);
    const char *text = read_text(tmp_path(rel));
    const char *line = text ? strstr(text, "\nlibrary ") : NULL;
    if (line == NULL)
        return "";
    line += 9;
    snprintf(rel, sizeof rel, "%s/%s/%.*s", cache, name, (int)strcspn(line, "\n"), line);
    return tmp_path(rel);
}

static const char *library_of(const char *name) { return library_in("cache", name); }

/* Loads shift.c as `name` in a child process and returns what jit_shift gave at X = 2, or
 * -1000 - signal when the child died of a signal (a SIGBUS from a damaged library). */
static double load_in_child(const char *name, const char *const *srcs)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1e30;
    pid_t pid = fork();
    if (pid == 0) {
        double v = load_and_run(name, srcs, 1, "jit_shift");
        ssize_t w = write(fds[1], &v, sizeof v);
        _exit(w == (ssize_t)sizeof v ? 0 : 1);
    }
    close(fds[1]);
    double v = -1e30;
    ssize_t r = read(fds[0], &v, sizeof v);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        return -1000 - WTERMSIG(status);
    return r == (ssize_t)sizeof v ? v : -1e30;
}

static off_t size_of(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? st.st_size : -1;
}

/* --- a damaged or replaced library -------------------------------------------------------- */

PD_TEST(JitCache, HalfTruncatedLibraryIsRebuiltNeverLoaded)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_in_child("trunc", srcs), 12.0, 0);
    const char *lib = library_of("trunc");
    off_t size = size_of(lib);
    PD_ASSERT(size > 0);
    PD_ASSERT_EQ(truncate(lib, size / 2), 0);
    PD_EXPECT_NEAR(load_in_child("trunc", srcs), 12.0, 0); /* no SIGBUS: rebuilt */
    PD_EXPECT_EQ(ninja_runs(), 2);
    PD_EXPECT_EQ(size_of(library_of("trunc")), size);
    PD_EXPECT_NEAR(load_in_child("trunc", srcs), 12.0, 0); /* warm again */
    PD_EXPECT_EQ(ninja_runs(), 2);
    jit_teardown();
}

PD_TEST(JitCache, EmptiedLibraryIsRebuiltNeverLoaded)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_in_child("empty", srcs), 12.0, 0);
    PD_ASSERT_EQ(truncate(library_of("empty"), 0), 0);
    PD_EXPECT_NEAR(load_in_child("empty", srcs), 12.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    jit_teardown();
}

/* Another valid library of the same size written over the published one in place (same
 * inode), with its mtime set back to the original: only ctime tells, and it is enough. */
PD_TEST(JitCache, LibraryReplacedInPlaceBySameSizedOneIsRebuilt)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_in_child("orig", srcs), 12.0, 0);
    edit(srcs[0], "#define SHIFT 10.0f", "#define SHIFT 20.0f");
    setenv("PDEXT_CACHE_DIR", tmp_path("other"), 1);
    PD_ASSERT_NEAR(load_in_child("orig", srcs), 22.0, 0);
    char other_lib[512];
    snprintf(other_lib, sizeof other_lib, "%s", library_in("other", "orig"));
    setenv("PDEXT_CACHE_DIR", tmp_path("cache"), 1);
    edit(srcs[0], "#define SHIFT 20.0f", "#define SHIFT 10.0f");
    struct timespec past[2] = {{time(NULL) - 10, 0}, {time(NULL) - 10, 0}};
    utimensat(AT_FDCWD, srcs[0], past, 0);

    const char *lib = library_of("orig");
    struct stat before;
    PD_ASSERT_EQ(stat(lib, &before), 0);
    FILE *from = fopen(other_lib, "rb");
    PD_ASSERT(from != NULL);
    static char bytes[1 << 22];
    size_t n = fread(bytes, 1, sizeof bytes, from);
    fclose(from);
    PD_ASSERT(n > 0 && n <= (size_t)before.st_size);
    memset(bytes + n, 0, (size_t)before.st_size - n); /* trailing zeros: still a valid ELF */
    int fd = open(lib, O_WRONLY | O_TRUNC);
    PD_ASSERT(fd >= 0);
    PD_ASSERT_EQ(write(fd, bytes, (size_t)before.st_size), before.st_size);
    close(fd);
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    PD_ASSERT_EQ(utimensat(AT_FDCWD, lib, times, 0), 0);

    int runs = ninja_runs();
    PD_EXPECT_NEAR(load_in_child("orig", srcs), 12.0, 0); /* not the 22 of the impostor */
    PD_EXPECT_EQ(ninja_runs(), runs + 1);
    jit_teardown();
}

PD_TEST(JitCache, LibraryReplacedByRenameIsRebuilt)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_in_child("renamed", srcs), 12.0, 0);
    const char *lib = library_of("renamed");
    off_t size = size_of(lib);
    char *zeros = calloc(1, (size_t)size);
    PD_ASSERT(zeros != NULL);
    const char *tmp = tmp_path("impostor");
    FILE *f = fopen(tmp, "wb");
    PD_ASSERT(f != NULL);
    fwrite(zeros, 1, (size_t)size, f);
    fclose(f);
    free(zeros);
    chmod(tmp, 0700);
    PD_ASSERT_EQ(rename(tmp, lib), 0);
    PD_EXPECT_NEAR(load_in_child("renamed", srcs), 12.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    jit_teardown();
}

/* A stat that moved with the bytes intact (a `cp -p` back, a restore) costs a hash, not a
 * build. */
PD_TEST(JitCache, TouchedLibraryWithTheSameBytesIsStillUsed)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_in_child("touched", srcs), 12.0, 0);
    const char *lib = library_of("touched");
    struct timespec past[2] = {{time(NULL) - 100, 0}, {time(NULL) - 100, 0}};
    PD_ASSERT_EQ(utimensat(AT_FDCWD, lib, past, 0), 0);
    PD_EXPECT_NEAR(load_in_child("touched", srcs), 12.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 1);
    jit_teardown();
}

/* --- untrusted files ---------------------------------------------------------------------- */

PD_TEST(JitCache, GroupWritableManifestIsNotTrustedAndIsReplaced)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_and_run("gw", srcs, 1, "jit_shift"), 12.0, 0);
    const char *manifest = tmp_path("cache/gw/manifest-shared");
    PD_ASSERT_EQ(chmod(manifest, 0620), 0);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("gw", srcs, 1);
    log_lines log = {{0}, 0};
    o.log = collect;
    o.log_user = &log;
    pd_module *m = NULL;
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_NEAR(run_at_2(reg, "jit_shift"), 12.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    PD_EXPECT_CONTAINS(log.text, "manifest-shared' is writable by group or others");
    struct stat st;
    PD_ASSERT_EQ(stat(manifest, &st), 0);
    PD_EXPECT_EQ(st.st_mode & 0777, 0600u);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitCache, GroupWritableLibraryIsNotLoadedAndIsReplaced)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_and_run("gwlib", srcs, 1, "jit_shift"), 12.0, 0);
    PD_ASSERT_EQ(chmod(library_of("gwlib"), 0770), 0);
    PD_EXPECT_NEAR(load_and_run("gwlib", srcs, 1, "jit_shift"), 12.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    struct stat st;
    PD_ASSERT_EQ(stat(library_of("gwlib"), &st), 0);
    PD_EXPECT_EQ(st.st_mode & 0077, 0u);
    jit_teardown();
}

/* Decided: a symbolic link in place of the published library (or the manifest) is rebuilt
 * over, as any other damage is; it is never followed. */
PD_TEST(JitCache, PublishedLibraryThatIsASymlinkIsRebuiltNotFollowed)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_and_run("link", srcs, 1, "jit_shift"), 12.0, 0);
    char lib[512];
    snprintf(lib, sizeof lib, "%s", library_of("link"));
    const char *elsewhere = tmp_path("elsewhere.so");
    PD_ASSERT_EQ(rename(lib, elsewhere), 0);
    PD_ASSERT_EQ(symlink(elsewhere, lib), 0);

    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("link", srcs, 1);
    log_lines log = {{0}, 0};
    o.log = collect;
    o.log_user = &log;
    pd_module *m = NULL;
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_NEAR(run_at_2(reg, "jit_shift"), 12.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    PD_EXPECT_CONTAINS(log.text, "is a symbolic link");
    struct stat st;
    PD_ASSERT_EQ(lstat(lib, &st), 0);
    PD_EXPECT(S_ISREG(st.st_mode));
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitCache, ManifestThatIsASymlinkIsNotFollowed)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_and_run("mlink", srcs, 1, "jit_shift"), 12.0, 0);
    const char *manifest = tmp_path("cache/mlink/manifest-shared");
    PD_ASSERT_EQ(rename(manifest, tmp_path("manifest-copy")), 0);
    PD_ASSERT_EQ(symlink(tmp_path("manifest-copy"), manifest), 0);
    PD_EXPECT_NEAR(load_and_run("mlink", srcs, 1, "jit_shift"), 12.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    struct stat st;
    PD_ASSERT_EQ(lstat(manifest, &st), 0);
    PD_EXPECT(S_ISREG(st.st_mode));
    jit_teardown();
}

/* --- corrupt build-directory files -------------------------------------------------------- */

/* Builds `name` from scale.c + shift.c (objects and depfiles in obj/), writes `garbage` over
 * build_dir/<file> (keeping it newer than the sources), changes shift.c, and expects the
 * next load to give the new result and the one after to be warm. */
static void expect_corrupt_file_recovers(const char *file, const char *garbage)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("shift.c")};
    char name[64];
    snprintf(name, sizeof name, "corrupt%zu", strlen(file));
    PD_ASSERT_NEAR(load_and_run(name, srcs, 2, "jit_shift"), 12.0, 0);
    char rel[256];
    if (file[0] == '*') { /* the first file of obj/ whose name ends in file + 1 */
        char dir[512];
        snprintf(dir, sizeof dir, "%s/cache/%s/obj", tmp_root, name);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "ls '%s' | grep 'scale.c.*%s$' | head -1 > '%s'", dir, file + 1,
                 tmp_path("found"));
        PD_ASSERT_EQ(system(cmd), 0);
        const char *found = read_text(tmp_path("found"));
        PD_ASSERT(found != NULL && *found != '\0');
        snprintf(rel, sizeof rel, "cache/%s/obj/%.*s", name, (int)strcspn(found, "\n"), found);
    } else {
        snprintf(rel, sizeof rel, "cache/%s/%s", name, file);
    }
    if (strcmp(file, ".ninja_deps") != 0) /* Ninja keeps none without `deps = gcc` */
        PD_ASSERT_EQ(access(tmp_path(rel), F_OK), 0);
    /* Changed just after the build: newer than every output, so Ninja must see it. */
    struct stat lib;
    PD_ASSERT_EQ(stat(library_of(name), &lib), 0);
    write_text(tmp_path(rel), garbage);
    edit(srcs[1], "#define SHIFT 10.0f", "#define SHIFT 30.0f");
    struct timespec after[2] = {lib.st_mtim, lib.st_mtim};
    after[0].tv_nsec = after[1].tv_nsec = (lib.st_mtim.tv_nsec + 1000000) % 1000000000;
    after[0].tv_sec = after[1].tv_sec = lib.st_mtim.tv_sec + (lib.st_mtim.tv_nsec >= 999000000);
    utimensat(AT_FDCWD, srcs[1], after, 0);
    double v = load_and_run(name, srcs, 2, "jit_shift");
    if (v != 32.0)
        pd_test_fail(__FILE__, __LINE__, "corrupt %s: op gave %g: %s", file, v, pd_last_error());
    /* (One more build may follow: an input changed this close to a build is not trusted.) */
    PD_EXPECT_NEAR(load_and_run(name, srcs, 2, "jit_shift"), 32.0, 0);
    int runs = ninja_runs();
    PD_EXPECT_NEAR(load_and_run(name, srcs, 2, "jit_shift"), 32.0, 0);
    PD_EXPECT_EQ(ninja_runs(), runs);
    jit_teardown();
}

PD_TEST(JitCache, CorruptDepfileStartsCleanInsteadOfFailingForever)
{
    expect_corrupt_file_recovers("*.o.d", "this is not a depfile $$$ \\\n:::\n");
}

PD_TEST(JitCache, CorruptObjectStartsCleanInsteadOfFailingForever)
{
    expect_corrupt_file_recovers("*.o", "\177ELF half an object");
}

PD_TEST(JitCache, CorruptBuildNinjaIsRewritten)
{
    expect_corrupt_file_recovers("build.ninja", "rule\n  bogus = $\nbuild : : :\n");
}

PD_TEST(JitCache, CorruptNinjaLogStartsCleanInsteadOfFailingForever)
{
    expect_corrupt_file_recovers(".ninja_log", "# ninja log v99\n\1\2\3 garbage\n");
}

PD_TEST(JitCache, CorruptNinjaDepsStartsCleanInsteadOfFailingForever)
{
    expect_corrupt_file_recovers(".ninja_deps", "# ninjadeps\n\377\377\377\377garbage");
}

PD_TEST(JitCache, CorruptManifestCostsOneRebuild)
{
    expect_corrupt_file_recovers("manifest-shared", "pdext-jit-manifest 1\nkey zz\n\1\2");
}

/* A source put back with an older mtime (`cp -p`, a checkout of an old revision) is older
 * than the objects, so Ninja alone would relink the stale object; the loader, which saw
 * the content change, starts clean instead. */
PD_TEST(JitCache, SourceChangedWithAnOlderMtimeIsRebuilt)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c"), fixture("shift.c")};
    PD_ASSERT_NEAR(load_and_run("older", srcs, 2, "jit_shift"), 12.0, 0);
    edit(srcs[1], "#define SHIFT 10.0f", "#define SHIFT 50.0f");
    struct timespec past[2] = {{time(NULL) - 5, 0}, {time(NULL) - 5, 0}};
    utimensat(AT_FDCWD, srcs[1], past, 0);
    PD_EXPECT_NEAR(load_and_run("older", srcs, 2, "jit_shift"), 52.0, 0);
    PD_EXPECT_NEAR(load_and_run("older", srcs, 2, "jit_shift"), 52.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 2);
    jit_teardown();
}

/* A source error after a good build: the first failure is retried from a clean directory
 * (it might have been the directory's fault), the next ones are not. */
PD_TEST(JitCache, SourceErrorIsRetriedCleanOnlyOnce)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_and_run("srcerr", srcs, 1, "jit_shift"), 12.0, 0);
    edit(srcs[0], "#define SHIFT 10.0f", "#define SHIFT 10.0f +");
    PD_EXPECT(load_and_run("srcerr", srcs, 1, "jit_shift") < -1e29);
    PD_EXPECT_EQ(ninja_runs(), 3);
    PD_EXPECT(load_and_run("srcerr", srcs, 1, "jit_shift") < -1e29);
    PD_EXPECT_EQ(ninja_runs(), 4);
    edit(srcs[0], "#define SHIFT 10.0f +", "#define SHIFT 11.0f");
    PD_EXPECT_NEAR(load_and_run("srcerr", srcs, 1, "jit_shift"), 13.0, 0);
    PD_EXPECT_EQ(ninja_runs(), 5);
    /* A success ends the clean period: the next failure may be the directory's again. */
    edit(srcs[0], "#define SHIFT 11.0f", "#define SHIFT 11.0f +");
    PD_EXPECT(load_and_run("srcerr", srcs, 1, "jit_shift") < -1e29);
    PD_EXPECT_EQ(ninja_runs(), 7);
    jit_teardown();
}
