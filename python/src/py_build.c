/*
 * py_build.c - loads that may compile (pd_jit_load, pd_aot_load of a source) run on a worker
 * thread while the calling thread waits with the GIL released, waking every 50 ms to let
 * Python handle signals. On Ctrl-C (KeyboardInterrupt) it stops the build: the JIT starts
 * Ninja in a session of its own (so that an orphaned build can be told and killed by the next
 * loader), where a terminal's SIGINT does not reach it, so the waiting thread sends SIGTERM to
 * the sessions this process started since the load began (Ninja and its compilers). Ninja
 * removes the outputs of the commands it stops, the JIT publishes nothing from a failed
 * build and releases its lock, so the cache stays usable: the next load builds afresh.
 *
 * The worker copies pd_last_error() (a per-thread message) before it ends, for the caller.
 */
#include "py_internal.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct job {
    pdext_load_fn fn;
    const void *arg;
    pd_registry *reg;
    pd_module *module;
    pd_status status;
    char *message; /* pd_last_error() of the worker, malloc'd, when status != PD_OK */
    bool done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} job;

static void *job_main(void *p)
{
    job *j = p;
    pd_status st = j->fn(j->reg, j->arg, &j->module);
    char *message = st != PD_OK ? strdup(pd_last_error()) : NULL;
    pthread_mutex_lock(&j->mu);
    j->status = st;
    j->message = message;
    j->done = true;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* Waits for the job up to `ms` milliseconds (without the GIL); true when it is done. */
static bool job_wait(job *j, long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    PyThreadState *ts = PyEval_SaveThread();
    pthread_mutex_lock(&j->mu);
    while (!j->done && pthread_cond_timedwait(&j->cv, &j->mu, &until) == 0) {
    }
    bool done = j->done;
    pthread_mutex_unlock(&j->mu);
    PyEval_RestoreThread(ts);
    return done;
}

/* Start time of a process in clock ticks since boot, and its parent and session (from
 * /proc/<pid>/stat); false when it cannot be read. */
static bool proc_stat(const char *pid, long *ppid, long *sid, unsigned long long *start)
{
    char path[300], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parens */
    return p != NULL &&
           sscanf(p + 1,
                  " %*c %ld %*d %ld %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                  "%*d %llu",
                  ppid, sid, start) == 3;
}

/* SIGTERM to every session led by a child of this process that started at or after
 * `since` (ticks since boot): the builds the interrupted load started. */
static void stop_builds(unsigned long long since)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return;
    long self = (long)getpid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        long ppid = 0, sid = 0;
        unsigned long long start = 0;
        long pid = strtol(e->d_name, NULL, 10);
        if (proc_stat(e->d_name, &ppid, &sid, &start) && ppid == self && sid == pid &&
            start >= since)
            kill(-(pid_t)pid, SIGTERM);
    }
    closedir(d);
}

/* This process's age-independent clock: ticks since boot now (as /proc stat start times). */
static unsigned long long ticks_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_BOOTTIME, &t);
    long hz = sysconf(_SC_CLK_TCK);
    return (unsigned long long)t.tv_sec * (unsigned long long)hz +
           (unsigned long long)t.tv_nsec / (1000000000ULL / (unsigned long long)hz);
}

PyObject *pdext_build_library(pdext_load_fn fn, const void *arg, const char *who)
{
    job j = {.fn = fn, .arg = arg};
    pd_status st = pd_registry_create(&j.reg);
    if (st != PD_OK)
        return pdext_raise_status(st, who);
    /* One tick of slack: a child started within the tick of this call still counts. */
    unsigned long long since = ticks_now();
    since = since > 0 ? since - 1 : 0;
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.cv, NULL);
    pthread_t thread;
    if (pthread_create(&thread, NULL, job_main, &j) != 0) {
        pthread_cond_destroy(&j.cv);
        pthread_mutex_destroy(&j.mu);
        pd_registry_destroy(j.reg);
        PyErr_Format(PyExc_RuntimeError, "%s: cannot start a thread for the build",
                     who ? who : "pdext.load");
        return NULL;
    }
    bool interrupted = false;
    while (!job_wait(&j, 50)) {
        if (!interrupted && PyErr_CheckSignals() < 0) {
            interrupted = true; /* the exception stays set; the build is stopped */
            stop_builds(since);
        }
    }
    pthread_join(thread, NULL);
    pthread_cond_destroy(&j.cv);
    pthread_mutex_destroy(&j.mu);
    /* A signal handled while the build ended still counts. */
    if (!interrupted && PyErr_CheckSignals() < 0)
        interrupted = true;
    st = j.status;
    if (st != PD_OK && !interrupted)
        pdext_raise_text(st, who, j.message);
    free(j.message);
    if (st != PD_OK || interrupted) {
        /* Failed, or built but the caller asked to stop: the result is dropped. */
        pd_registry_destroy(j.reg);
        return NULL;
    }
    return pdext_library_make(j.reg, j.module);
}
