/*
 * py_build.c - loads that may compile (pd_jit_load, pd_aot_load of a source) run on a worker
 * thread while the calling thread waits with the GIL released, waking every 50 ms to let
 * Python handle signals. On Ctrl-C (KeyboardInterrupt) it stops the build: the JIT starts
 * Ninja in a session of its own (so that an orphaned build can be told and killed by the next
 * loader), where a terminal's SIGINT does not reach it, so the waiting thread calls
 * pd_jit_interrupt, which stops every build of this process in progress (Ninja and its
 * compilers get SIGTERM, what is left after 0.5 s SIGKILL; jit_interrupt.c). Ninja removes
 * the outputs of the commands it stops, the JIT publishes nothing from an interrupted build
 * and releases its lock, so the cache stays usable: the next load builds afresh. The load
 * ends within about a second, and KeyboardInterrupt is raised then.
 *
 * The worker copies pd_last_error() (a per-thread message) before it ends, for the caller.
 */
#include "pdext_jit.h"
#include "py_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

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

int pdext_run_build(pdext_load_fn fn, const void *arg, const char *who, pd_registry **reg,
                    pd_module **module)
{
    job j = {.fn = fn, .arg = arg};
    pd_status st = pd_registry_create(&j.reg);
    if (st != PD_OK) {
        pdext_raise_status(st, who);
        return -1;
    }
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.cv, NULL);
    pthread_t thread;
    if (pthread_create(&thread, NULL, job_main, &j) != 0) {
        pthread_cond_destroy(&j.cv);
        pthread_mutex_destroy(&j.mu);
        pd_registry_destroy(j.reg);
        PyErr_Format(PyExc_RuntimeError, "%s: cannot start a thread for the build",
                     who ? who : "pdext.load");
        return -1;
    }
    bool interrupted = false;
    while (!job_wait(&j, 50)) {
        if (!interrupted && PyErr_CheckSignals() < 0) {
            interrupted = true; /* the exception stays set; the build is stopped */
            pd_jit_interrupt();
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
        return -1;
    }
    *reg = j.reg;
    *module = j.module;
    return 0;
}

PyObject *pdext_build_library(pdext_load_fn fn, const void *arg, const char *who)
{
    pd_registry *reg = NULL;
    pd_module *module = NULL;
    if (pdext_run_build(fn, arg, who, &reg, &module) < 0)
        return NULL;
    return pdext_library_make(reg, module);
}
