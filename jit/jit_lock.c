/*
 * jit_lock.c - the two locks of a build directory, each an flock that the kernel drops when
 * its holders die:
 *
 *   .lock  serializes loaders; only the loader holds it (close-on-exec). A loader that
 *          waits for it says so through the log callback after 1 s ("pdext: waiting for pid
 *          N building <name>", the pid read from /proc/locks) and gives up after the lock
 *          timeout (pd_jit_options.lock_timeout_s, else PDEXT_LOCK_TIMEOUT, else 600 s) with
 *          an error naming the pid: a hung build elsewhere must not hang this host forever.
 *   .busy  is held by a running build: the loader takes it before starting Ninja, and Ninja
 *          and every compiler inherit it. Ninja starts in a session of its own (jit_spawn.c)
 *          and writes that session's id into .busy. Whoever holds .lock and still finds .busy
 *          taken knows that a loader died mid-build: it kills the holders that are in the
 *          recorded session (orphaned compilers, which would keep writing the object files
 *          it is about to rebuild) and spares the others: a compiler-cache server that a
 *          compiler wrapper started inherits the descriptor too, but a daemon leaves the
 *          session (setsid), and it is not ours to end. Requiring both the descriptor and
 *          the session keeps a reused session id from naming unrelated processes. Then a
 *          new .busy replaces the old one, since a surviving daemon may hold the old one
 *          for as long as it lives.
 *
 * Both files are opened with O_NOFOLLOW: a symbolic link in their place is refused with an
 * error that names it, rather than followed to wherever it points.
 */
#include "jit_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_LOCK_TIMEOUT_S 600.0
#define REPORT_AFTER_NS 1000000000LL
#define MAX_POLL_NS 50000000LL

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

pd_status pd__lock_timeout(const pd__plan *p, double *seconds)
{
    if (p->opts->struct_size > offsetof(pd_jit_options, lock_timeout_s) &&
        p->opts->lock_timeout_s != 0) {
        *seconds = p->opts->lock_timeout_s < 0 ? -1.0 : (double)p->opts->lock_timeout_s;
        return PD_OK;
    }
    const char *env = getenv("PDEXT_LOCK_TIMEOUT");
    *seconds = DEFAULT_LOCK_TIMEOUT_S;
    if (env == NULL || *env == '\0')
        return PD_OK;
    char *end;
    errno = 0;
    double v = strtod(env, &end);
    if (errno != 0 || *end != '\0' || end == env || !(v > 0) || v > 1e9)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: PDEXT_LOCK_TIMEOUT='%s' is not a number of seconds greater than "
                        "0 (how long to wait for another process building module '%s')",
                        p->who, env, p->name);
    *seconds = v;
    return PD_OK;
}

/* Opens (creating) <build_dir>/<file> without following a symbolic link. */
static int open_lock_file(const pd__plan *p, const char *file, int extra_flags)
{
    pd__sb path = {0};
    pd__sb_addf(&path, "%s/%s", p->build_dir, file);
    int fd = path.oom ? -1
                      : open(path.s, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | extra_flags, 0600);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
        errno = EINVAL;
    }
    if (fd < 0 && errno == ELOOP)
        pd__fail(PD_ERR_IO,
                 "%s: the lock '%s' is a symbolic link, which pdext never follows; "
                 "remove it (`rm '%s'`) and load again",
                 p->who, pd__sb_str(&path), pd__sb_str(&path));
    else if (fd < 0)
        pd__fail(PD_ERR_IO, "%s: cannot open the lock '%s': %s", p->who, pd__sb_str(&path),
                 errno == EINVAL ? "not a regular file" : strerror(errno));
    pd__sb_free(&path);
    return fd;
}

/* The pid that holds the flock on `fd`'s file, from /proc/locks (pids there are those of
 * our pid namespace); 0 when unknown. */
static long lock_holder(int fd)
{
    struct stat st;
    char *text = fstat(fd, &st) == 0 ? pd__read_file("/proc/locks", NULL) : NULL;
    long found = 0;
    char *save = NULL;
    for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line && !found;
         line = strtok_r(NULL, "\n", &save)) {
        long pid;
        unsigned maj, min;
        unsigned long long ino;
        if (strstr(line, "->") != NULL || strstr(line, "FLOCK") == NULL)
            continue; /* a waiter, or a lock of another kind */
        if (sscanf(line, "%*d: %*s %*s %*s %ld %x:%x:%llu", &pid, &maj, &min, &ino) == 4 &&
            maj == major(st.st_dev) && min == minor(st.st_dev) && ino == st.st_ino && pid > 0)
            found = pid;
    }
    free(text);
    return found;
}

/* Takes the flock on `fd`, polling; reports the holder after 1 s and gives up after the
 * plan's lock timeout. */
static pd_status lock_wait(const pd__plan *p, int fd, double timeout_s)
{
    int64_t start = monotonic_ns(), delay = 1000000;
    long reported = -1;
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return PD_OK;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return pd__fail(PD_ERR_IO, "%s: cannot lock '%s': %s", p->who, p->build_dir,
                            strerror(errno));
        if (pd__interrupted(p->interrupt_gen)) /* Ctrl-C while waiting (jit_interrupt.c) */
            return pd__interrupt_fail(p);
        int64_t waited = monotonic_ns() - start;
        if (waited >= REPORT_AFTER_NS || (timeout_s >= 0 && waited >= timeout_s * 1e9)) {
            long pid = lock_holder(fd);
            char holder[48] = "another process", end_it[48] = "", limit[64] = "no time limit";
            if (pid > 0) {
                snprintf(holder, sizeof holder, "pid %ld", pid);
                snprintf(end_it, sizeof end_it, " (kill %ld)", pid);
            }
            if (timeout_s >= 0)
                snprintf(limit, sizeof limit, "giving up after %g s", timeout_s);
            if (timeout_s >= 0 && waited >= timeout_s * 1e9)
                return pd__fail(PD_ERR_UNAVAILABLE,
                                "%s: module '%s': gave up after %g s waiting for %s, which "
                                "holds the lock of the build directory %s (it is building the "
                                "module); if it hangs, end it%s, or wait longer "
                                "(PDEXT_LOCK_TIMEOUT, lock_timeout_s)",
                                p->who, p->name, timeout_s, holder, p->build_dir, end_it);
            if (pid != reported) {
                pd__jit_log(p,
                            "pdext: waiting for %s building %s (build directory %s; %s, "
                            "PDEXT_LOCK_TIMEOUT)",
                            holder, p->name, p->build_dir, limit);
                reported = pid;
            }
        }
        sleep_ns(delay);
        delay = delay * 2 > MAX_POLL_NS ? MAX_POLL_NS : delay * 2;
    }
}

/* The session id that the build holding .busy recorded in it, or 0. */
static long busy_session(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *end;
    long sid = strtol(buf, &end, 10);
    return (end != buf && (*end == '\n' || *end == '\0') && sid > 1) ? sid : 0;
}

long pd__process_session(long pid, bool *zombie)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    char *text = pd__read_file(path, NULL);
    char *paren = text ? strrchr(text, ')') : NULL;
    char state = 0;
    long sid = 0;
    if (paren == NULL || sscanf(paren + 1, " %c %*d %*d %ld", &state, &sid) != 2)
        sid = 0;
    *zombie = state == 'Z' || state == 'X';
    free(text);
    return sid;
}

static bool holds_file(long pid, const struct stat *target)
{
    char fd_dir[64];
    snprintf(fd_dir, sizeof fd_dir, "/proc/%ld/fd", pid);
    DIR *fds = opendir(fd_dir); /* fails for other users' processes: fine */
    if (fds == NULL)
        return false;
    bool found = false;
    for (struct dirent *f; !found && (f = readdir(fds)) != NULL;) {
        struct stat st;
        found = f->d_name[0] != '.' && fstatat(dirfd(fds), f->d_name, &st, 0) == 0 &&
                st.st_dev == target->st_dev && st.st_ino == target->st_ino;
    }
    closedir(fds);
    return found;
}

/* Kills every process of session `sid` that has `fd`'s file open and waits (up to
 * timeout_s) until they are gone; processes of other sessions are left alone. */
static void kill_orphans(int fd, long sid, double timeout_s)
{
    struct stat target;
    if (fstat(fd, &target) != 0)
        return;
    long killed[64];
    int n_killed = 0;
    DIR *proc = opendir("/proc");
    pid_t self = getpid();
    for (struct dirent *e; proc && (e = readdir(proc)) != NULL;) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        bool zombie;
        if (*end != '\0' || pid <= 0 || pid == (long)self || !holds_file(pid, &target) ||
            pd__process_session(pid, &zombie) != sid)
            continue;
        kill((pid_t)pid, SIGKILL);
        if (n_killed < 64)
            killed[n_killed++] = pid;
    }
    if (proc)
        closedir(proc);
    /* SIGKILL ends a process at its next return to user space; wait for that, so that no
     * write of theirs lands in the build that follows. */
    int64_t start = monotonic_ns();
    for (int i = 0; i < n_killed; ++i) {
        for (;;) {
            bool zombie = false;
            if (pd__process_session(killed[i], &zombie) != sid || zombie)
                break;
            if (timeout_s >= 0 && monotonic_ns() - start > timeout_s * 1e9)
                return;
            sleep_ns(1000000);
        }
    }
}

/* Takes .busy for a new build: an old one still held is cleared of orphans and replaced. */
static pd_status take_busy(const pd__plan *p, double timeout_s, int *busy_fd)
{
    int fd = open_lock_file(p, ".busy", 0);
    if (fd < 0)
        return pd_last_status();
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        long sid = busy_session(fd);
        if (sid > 0)
            kill_orphans(fd, sid, timeout_s);
        close(fd);
        pd__sb path = {0};
        pd__sb_addf(&path, "%s/.busy", p->build_dir);
        if (!path.oom)
            unlink(path.s); /* whoever still holds it keeps the old file, not our lock */
        pd__sb_free(&path);
        fd = open_lock_file(p, ".busy", O_EXCL);
        if (fd < 0)
            return pd_last_status();
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);
            return pd__fail(PD_ERR_IO, "%s: cannot lock '%s/.busy': %s", p->who, p->build_dir,
                            strerror(errno));
        }
    }
    if (ftruncate(fd, 0) != 0) {
        pd_status s = pd__fail(PD_ERR_IO, "%s: cannot reset '%s/.busy': %s", p->who, p->build_dir,
                               strerror(errno));
        close(fd);
        return s;
    }
    *busy_fd = fd;
    return PD_OK;
}

pd_status pd__lock_build_dir(const pd__plan *p, int *lock_fd, int *busy_fd)
{
    double timeout_s;
    pd_status s = pd__lock_timeout(p, &timeout_s);
    if (s != PD_OK)
        return s;
    int fd = open_lock_file(p, ".lock", 0);
    if (fd < 0)
        return pd_last_status();
    s = lock_wait(p, fd, timeout_s);
    if (s == PD_OK)
        s = take_busy(p, timeout_s, busy_fd);
    if (s != PD_OK) {
        close(fd);
        return s;
    }
    *lock_fd = fd;
    return PD_OK;
}
