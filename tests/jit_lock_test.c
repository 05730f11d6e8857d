/*
 * jit_lock_test.c - the build directory's locks: a symbolic link in place of .lock or .busy
 * is refused, never followed; a loader waiting for another process says which one (the
 * library through its log, the `pdext` command on stderr) and gives up after the lock
 * timeout, or when pd_jit_interrupt stops it (Ctrl-C); a daemon that a compiler wrapper
 * started survives the next build, while the orphans of a killed build are still ended
 * (tests/jit_test.c, BuildKilledMidway...).
 */
#include "jit_support.h"

#include <sys/file.h>

/* --- symbolic links ----------------------------------------------------------------------- */

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

PD_TEST(JitLock, LockFileThatIsASymlinkIsRefusedNamingIt) { expect_lock_symlink_refused(".lock"); }

PD_TEST(JitLock, BusyFileThatIsASymlinkIsRefusedNamingIt) { expect_lock_symlink_refused(".busy"); }

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

PD_TEST(JitLock, LoaderWaitingOnALiveHolderReportsItsPidAndGivesUp)
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

/* What pd_jit_interrupt returned when the log said the load waits (-1: not called yet). */
static int interrupted_builds = -1;

/* A log callback that interrupts the builds as soon as the load reports waiting for the
 * lock: Ctrl-C while another process builds the module. */
static void interrupt_on_wait(void *user, const char *line)
{
    (void)user;
    if (interrupted_builds < 0 && strstr(line, "pdext: waiting for") != NULL)
        interrupted_builds = pd_jit_interrupt();
}

PD_TEST(JitLock, InterruptStopsALoaderWaitingForTheLockAndLaterLoadsRun)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    pid_t holder = hold_lock("stopped");
    PD_ASSERT(holder > 0);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("stopped", srcs, 1);
    o.lock_timeout_s = 120; /* far beyond the wait the interrupt ends */
    o.log = interrupt_on_wait;
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_BUILD,
                    "building module 'stopped' was "
                    "interrupted");
    PD_EXPECT_CONTAINS(pd_last_error(), "nothing was published");
    PD_EXPECT_EQ(interrupted_builds, 1); /* the waiting load was in progress */
    PD_EXPECT_EQ(pd_jit_interrupt(), 0); /* and nothing is now */
    PD_EXPECT_EQ(ninja_runs(), 0);
    release_lock(holder);
    /* A load that starts after the interrupts builds as usual. */
    o.log = NULL;
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    PD_EXPECT_NEAR(run_at_2(reg, "jit_shift"), 12.0, 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitLock, LockTimeoutComesFromTheEnvironment)
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
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "PDEXT_LOCK_TIMEOUT='soon'");
    unsetenv("PDEXT_LOCK_TIMEOUT");
    release_lock(holder);
    pd_registry_destroy(reg);
    jit_teardown();
}

#ifdef PDEXT_CMD
PD_TEST(JitLock, CommandSaysWhichPidItWaitsFor)
{
    jit_setup();
    const char *src = fixture("shift.c");
    pid_t holder = hold_lock("cmdwait");
    PD_ASSERT(holder > 0);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "PDEXT_LOCK_TIMEOUT=2 '%s' list --name cmdwait '%s' 2> '%s' > /dev/null", PDEXT_CMD,
             src, tmp_path("stderr"));
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
PD_TEST(JitLock, DaemonStartedByACompilerWrapperSurvivesTheNextBuild)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    char script[1024];
    snprintf(script, sizeof script,
             "#!/bin/sh\ncase \"$*\" in *--version*) exec cc \"$@\";; esac\n"
             "setsid sleep 120 < /dev/null > /dev/null 2>&1 &\necho $! >> '%s'\n"
             "exec cc \"$@\"\n",
             tmp_path("daemons"));
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
