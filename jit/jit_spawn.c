/*
 * jit_spawn.c - runs ninja (or a compiler's --version) with its output captured line by
 * line. The child dies with the thread that started it (PR_SET_PDEATHSIG), so a killed
 * loader does not leave Ninja running on. The build's ".busy" lock descriptor is kept open in
 * the child on purpose: Ninja's compilers inherit it, so it stays held until the last
 * process of the build exits, which tells the next loader that orphans are still running
 * (see jit_lock.c). Ninja then starts in a session of its own, whose id it writes into that
 * lock: the compilers it runs stay in that session, a daemon they start leaves it. While
 * the child runs, the parent polls for pd_jit_interrupt (jit_interrupt.c) and stops the
 * session when it comes.
 *
 * pd__spawn_detached starts a job that outlives the call and may outlive the host (the
 * background precompiled header, jit_pch.c): a grandchild, so that init reaps it and the host
 * never holds a zombie; in a session of its own, so that neither a terminal's Ctrl-C nor
 * pd_jit_interrupt (which stops this process's builds, not the cache's shared work) reaches
 * it; at the lowest priority (nice 19), so that it takes no CPU the host's own compiles want;
 * its output to a log file, its only descriptor besides the lock it holds.
 */
#include "jit_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The environment of the child: ours, with Ninja's progress format fixed to "[3/5] ...",
 * which is how progress lines are told from compiler output. NULL when out of memory. */
static char **child_environment(void)
{
    size_t n = 0;
    while (environ && environ[n])
        ++n;
    char **env = malloc((n + 2) * sizeof *env);
    if (env == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        if (strncmp(environ[i], "NINJA_STATUS=", 13) != 0)
            env[k++] = environ[i];
    env[k++] = (char *)"NINJA_STATUS=[%f/%t] ";
    env[k] = NULL;
    return env;
}

/* errno as words, for the child (strerror is not async-signal-safe): the errors a full,
 * read-only or missing file system and a missing tool give. */
static const char *child_errno_text(int e)
{
    switch (e) {
    case ENOSPC: return "no space left on device";
    case EDQUOT: return "disk quota exceeded";
    case EFBIG: return "file too large";
    case EROFS: return "read-only file system";
    case EIO: return "input/output error";
    case EACCES: return "permission denied";
    case ENOENT: return "no such file or directory";
    case ENOEXEC: return "not an executable";
    default: return "system error";
    }
}

/* Says on the child's output (the build's error text) why it gives up, then exits 127: an
 * empty message after a failed build told the user nothing (a full disk showed no error). */
static void child_fail(const char *what, const char *path, int e)
{
    const char *parts[] = {"pdext: ",           what, " '", path ? path : "", "': ",
                           child_errno_text(e), "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
        size_t n = strlen(parts[i]);
        if (n > 0 && write(2, parts[i], n) < 0)
            break;
    }
    _exit(127);
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child_exec(char *const argv[], char **env, const char *dir, int out_fd, int keep_fd,
                       pid_t parent)
{
    /* The host's handlers of the stop signals (which would run here until exec), its signal
     * mask and an ignored SIGPIPE would survive fork or exec. Signals are blocked until
     * then (pd__spawn). */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    static const int reset[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; ++i)
        sigaction(reset[i], &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the parent died before prctl took effect */
        _exit(127);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0 && null_fd != 0) {
        dup2(null_fd, 0);
        close(null_fd);
    }
    dup2(out_fd, 1);
    dup2(out_fd, 2);
    if (keep_fd >= 0) {
        int flags = fcntl(keep_fd, F_GETFD);
        fcntl(keep_fd, F_SETFD, flags & ~FD_CLOEXEC);
        /* A session of our own, recorded in the lock: what tells the compilers of this build
         * from a daemon that inherits the descriptor but leaves the session (jit_lock.c). */
        pid_t sid = setsid();
        char digits[24], text[24];
        int n = 0, len = 0;
        for (unsigned long v = sid > 0 ? (unsigned long)sid : 0; n == 0 || v > 0; v /= 10)
            digits[n++] = (char)('0' + v % 10);
        while (n > 0)
            text[len++] = digits[--n];
        text[len++] = '\n';
        errno = 0;
        if (sid > 0 && (ftruncate(keep_fd, 0) != 0 || pwrite(keep_fd, text, (size_t)len, 0) != len))
            child_fail("cannot record the build's session in the lock file .busy of", dir,
                       errno == 0 ? ENOSPC : errno); /* a short write: the disk filled */
    }
    if (dir && chdir(dir) != 0)
        child_fail("cannot enter the build directory", dir, errno);
    execve(argv[0], argv, env);
    child_fail("cannot run", argv[0], errno);
}

/* Splits buffered output into lines and hands each to on_line; keeps the unfinished tail. */
static void emit_lines(pd__sb *buf, pd__line_fn on_line, void *user, bool flush)
{
    size_t start = 0;
    for (size_t i = 0; i < buf->len; ++i) {
        if (buf->s[i] != '\n')
            continue;
        buf->s[i] = '\0';
        if (on_line)
            on_line(user, buf->s + start);
        start = i + 1;
    }
    if (flush && start < buf->len) {
        if (on_line)
            on_line(user, buf->s + start);
        start = buf->len;
    }
    if (start > 0) {
        memmove(buf->s, buf->s + start, buf->len - start);
        buf->len -= start;
        buf->s[buf->len] = '\0';
    }
}

/* Monotonic milliseconds. */
static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

pd_status pd__spawn(const char *who, char *const argv[], const char *dir, int keep_fd,
                    unsigned long gen, pd__line_fn on_line, void *user, int *exit_code)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return pd__fail(PD_ERR_IO, "%s: cannot create a pipe for '%s': %s", who, argv[0],
                        strerror(errno));
    if (pd__interrupted(gen)) {
        close(fds[0]);
        close(fds[1]);
        return pd__fail(PD_ERR_BUILD, "%s: '%s' was not started: the build was interrupted", who,
                        argv[0]);
    }
    char **env = child_environment();
    pid_t parent = getpid();
    /* The slot is taken before fork and checked after: an interrupt between the two finds
     * the slot empty, but the loop below sees its generation. Signals are blocked across
     * fork so that the child runs none of the host's handlers before it resets them. */
    int slot = pd__interrupt_slot_take();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = env ? fork() : -1;
    if (pid != 0)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        int e = env ? errno : ENOMEM;
        pd__interrupt_slot_free(slot);
        free(env);
        close(fds[0]);
        close(fds[1]);
        return pd__fail(PD_ERR_IO, "%s: cannot start '%s': %s", who, argv[0], strerror(e));
    }
    if (pid == 0)
        child_exec(argv, env, dir, fds[1], keep_fd, parent);
    bool session = keep_fd >= 0; /* the child leads a session (and group) of its own */
    pd__interrupt_slot_set(slot, pid, session);
    free(env);
    close(fds[1]);

    pd__sb buf = {0};
    char chunk[4096];
    int64_t stop_at = -1; /* when the child was told to stop (ms), or -1 */
    bool swept = false;   /* what was left of its session was killed */
    for (;;) {
        if (stop_at < 0 && pd__interrupted(gen)) {
            if (session)
                kill(-pid, SIGTERM);
            kill(pid, SIGTERM);
            stop_at = now_ms();
        }
        if (stop_at >= 0 && now_ms() - stop_at >= 500) {
            /* Ninja had its chance to stop its compilers: end what is left of the session
             * (the child is not reaped yet, so its pid still names it). */
            if (session)
                pd__session_kill(pid);
            kill(pid, SIGKILL);
            swept = true;
            break;
        }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int ready = poll(&pfd, 1, 50);
        if (ready == 0 || (ready < 0 && errno == EINTR))
            continue;
        ssize_t r = ready < 0 ? -1 : read(fds[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        pd__sb_addn(&buf, chunk, (size_t)r);
        if (!buf.oom)
            emit_lines(&buf, on_line, user, false);
    }
    if (!buf.oom)
        emit_lines(&buf, on_line, user, true);
    bool oom = buf.oom;
    pd__sb_free(&buf);
    close(fds[0]);
    /* Stopped (or interrupted as the output ended): a process of the session that closed its
     * output may still run; the child, not reaped yet, still names the session. */
    if (!swept && pd__interrupted(gen) && session)
        pd__session_kill(pid);

    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            pd__interrupt_slot_free(slot);
            return pd__fail(PD_ERR_IO, "%s: waiting for '%s' failed: %s", who, argv[0],
                            strerror(errno));
        }
    }
    pd__interrupt_slot_free(slot);
    if (stop_at >= 0 || pd__interrupted(gen))
        return pd__fail(PD_ERR_BUILD, "%s: '%s' was stopped: the build was interrupted", who,
                        argv[0]);
    if (oom)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory reading the output of '%s'", who,
                        argv[0]);
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return PD_OK;
}

/* In the grandchild of pd__spawn_detached: only async-signal-safe calls. */
static void detached_exec(char *const argv[], const char *dir, int log_fd, int keep_fd)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    static const int reset[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; ++i)
        sigaction(reset[i], &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    setpriority(PRIO_PROCESS, 0, 19);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0 && null_fd != 0) {
        dup2(null_fd, 0);
        close(null_fd);
    }
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    /* Nothing of the host's but the lock: a descriptor it left inheritable (a pipe, a
     * build's .busy) must not be held open for as long as this job runs. */
    for (int fd = 3; fd < 1024; ++fd)
        if (fd != keep_fd)
            close(fd);
    if (keep_fd >= 0)
        fcntl(keep_fd, F_SETFD, fcntl(keep_fd, F_GETFD) & ~FD_CLOEXEC);
    if (dir && chdir(dir) != 0)
        child_fail("cannot enter the directory", dir, errno);
    execve(argv[0], argv, environ);
    child_fail("cannot run", argv[0], errno);
}

pd_status pd__spawn_detached(const char *who, char *const argv[], const char *dir, int keep_fd,
                             const char *log_path)
{
    int log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (log_fd < 0)
        return pd__fail(PD_ERR_IO, "%s: cannot write '%s': %s", who, log_path, strerror(errno));
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0) {
        pid_t job = fork();
        if (job == 0)
            detached_exec(argv, dir, log_fd, keep_fd);
        _exit(job < 0 ? 127 : 0);
    }
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(log_fd);
    if (pid < 0)
        return pd__fail(PD_ERR_IO, "%s: cannot start '%s': %s", who, argv[0], strerror(e));
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    /* ECHILD: the host ignores SIGCHLD, so the kernel reaped the child itself */
    if (r == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        return pd__fail(PD_ERR_IO, "%s: cannot start '%s' in the background", who, argv[0]);
    return PD_OK;
}
