/*
 * jit_cache_test.c - a cache the JIT can trust: a damaged, replaced or untrusted library or
 * manifest is rebuilt, never loaded; a corrupt build-directory file costs one clean build,
 * not every future one; lock files are never followed through symbolic links; a loader
 * waiting for another process says which one and gives up after the lock timeout; a daemon
 * that a compiler wrapper started survives the next build.
 */
#include "jit_support.h"

#include <sys/file.h>

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

static const char *library_of(const char *name)
{
    return library_in("cache", name);
}

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

static void expect_lock_symlink_refused(const char *file)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    mkdir(tmp_path("cache"), 0700);
    mkdir(tmp_path("cache/locklink"), 0700);
    char rel[128];
    snprintf(rel, sizeof rel, "cache/locklink/%s", file);
    const char *target = tmp_path("planted");
    PD_ASSERT_EQ(symlink(target, tmp_path(rel)), 0);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("locklink", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_IO, "is a symbolic link");
    PD_EXPECT_CONTAINS(pd_last_error(), tmp_path(rel));
    PD_EXPECT_CONTAINS(pd_last_error(), "remove it");
    PD_EXPECT(access(target, F_OK) != 0); /* not created through the link */
    pd_registry_destroy(reg);
    /* As the message says: removed, the next load works. */
    PD_ASSERT_EQ(unlink(tmp_path(rel)), 0);
    PD_EXPECT_NEAR(load_and_run("locklink", srcs, 1, "jit_shift"), 12.0, 0);
    jit_teardown();
}

PD_TEST(JitCache, LockFileThatIsASymlinkIsRefusedNamingIt)
{
    expect_lock_symlink_refused(".lock");
}

PD_TEST(JitCache, BusyFileThatIsASymlinkIsRefusedNamingIt)
{
    expect_lock_symlink_refused(".busy");
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

/* --- waiting for another process ---------------------------------------------------------- */

/* A child that takes the module's .lock and holds it until killed. */
static pid_t hold_lock(const char *name)
{
    char rel[128];
    mkdir(tmp_path("cache"), 0700);
    snprintf(rel, sizeof rel, "cache/%s", name);
    mkdir(tmp_path(rel), 0700);
    snprintf(rel, sizeof rel, "cache/%s/.lock", name);
    int ready[2];
    if (pipe(ready) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(tmp_path(rel), O_RDWR | O_CREAT, 0600);
        if (fd < 0 || flock(fd, LOCK_EX) != 0)
            _exit(1);
        if (write(ready[1], "y", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c = 0;
    ssize_t r = read(ready[0], &c, 1);
    close(ready[0]);
    return r == 1 ? pid : -1;
}

static void release_lock(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

PD_TEST(JitCache, LoaderWaitingOnALiveHolderReportsItsPidAndGivesUp)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    pid_t holder = hold_lock("waited");
    PD_ASSERT(holder > 0);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("waited", srcs, 1);
    o.lock_timeout_s = 2;
    log_lines log = {{0}, 0};
    o.log = collect;
    o.log_user = &log;
    pd_module *m = NULL;
    char pid_text[64];
    snprintf(pid_text, sizeof pid_text, "pid %ld", (long)holder);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE, pid_text);
    PD_EXPECT_CONTAINS(pd_last_error(), "PDEXT_LOCK_TIMEOUT");
    char waiting[128];
    snprintf(waiting, sizeof waiting, "pdext: waiting for pid %ld building waited", (long)holder);
    PD_EXPECT_CONTAINS(log.text, waiting);
    PD_EXPECT_EQ(ninja_runs(), 0);
    release_lock(holder);
    /* The holder gone, the same load goes through. */
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_NEAR(run_at_2(reg, "jit_shift"), 12.0, 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitCache, LockTimeoutComesFromTheEnvironment)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    pid_t holder = hold_lock("envwait");
    PD_ASSERT(holder > 0);
    setenv("PDEXT_LOCK_TIMEOUT", "1", 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("envwait", srcs, 1);
    pd_module *m = NULL;
    char pid_text[64];
    snprintf(pid_text, sizeof pid_text, "pid %ld", (long)holder);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE, pid_text);
    PD_EXPECT_CONTAINS(pd_last_error(), "after 1 s");
    setenv("PDEXT_LOCK_TIMEOUT", "soon", 1);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT,
                    "PDEXT_LOCK_TIMEOUT='soon'");
    unsetenv("PDEXT_LOCK_TIMEOUT");
    release_lock(holder);
    pd_registry_destroy(reg);
    jit_teardown();
}

#ifdef PDEXT_CMD
PD_TEST(JitCache, CommandSaysWhichPidItWaitsFor)
{
    jit_setup();
    const char *src = fixture("shift.c");
    pid_t holder = hold_lock("cmdwait");
    PD_ASSERT(holder > 0);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "PDEXT_LOCK_TIMEOUT=2 '%s' list --name cmdwait '%s' 2> '%s' > /dev/null",
             PDEXT_CMD, src, tmp_path("stderr"));
    int status = system(cmd);
    PD_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    char waiting[128];
    snprintf(waiting, sizeof waiting, "waiting for pid %ld building cmdwait", (long)holder);
    const char *err = read_text(tmp_path("stderr"));
    PD_ASSERT(err != NULL);
    PD_EXPECT_CONTAINS(err, waiting);
    release_lock(holder);
    jit_teardown();
}
#endif

/* --- processes that inherited .busy -------------------------------------------------------- */

static bool alive(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    const char *text = read_text(path);
    const char *paren = text ? strrchr(text, ')') : NULL;
    return paren != NULL && paren[2] != 'Z';
}

/* A compiler wrapper that starts a daemon (its own session, as a compiler-cache server
 * does) which inherits every descriptor, .busy included: the next build must neither kill
 * it nor wait for it. */
PD_TEST(JitCache, DaemonStartedByACompilerWrapperSurvivesTheNextBuild)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    char script[1024];
    snprintf(script, sizeof script,
             "#!/bin/sh\ncase \"$*\" in *--version*) exec cc \"$@\";; esac\n"
             "setsid sleep 120 < /dev/null > /dev/null 2>&1 &\necho $! >> '%s'\n"
             "exec cc \"$@\"\n", tmp_path("daemons"));
    write_script(tmp_path("bin/wrapcc"), script);
    setenv("CC", tmp_path("bin/wrapcc"), 1);
    PD_ASSERT_NEAR(load_and_run("daemon", srcs, 1, "jit_shift"), 12.0, 0);
    long first = atol(read_text(tmp_path("daemons")));
    PD_ASSERT(first > 0);
    PD_EXPECT(alive((pid_t)first));

    edit(srcs[0], "#define SHIFT 10.0f", "#define SHIFT 40.0f");
    PD_EXPECT_NEAR(load_and_run("daemon", srcs, 1, "jit_shift"), 42.0, 0);
    PD_EXPECT(alive((pid_t)first));
    PD_EXPECT_EQ(ninja_runs(), 2);

    const char *pids = read_text(tmp_path("daemons"));
    for (const char *c = pids; c && *c; c += strcspn(c, "\n") + (c[strcspn(c, "\n")] != '\0'))
        kill((pid_t)atol(c), SIGKILL);
    jit_teardown();
}
