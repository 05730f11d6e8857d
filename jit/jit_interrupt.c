/*
 * jit_interrupt.c - pd_jit_interrupt: stopping the builds in progress (Ctrl-C).
 *
 * Ninja runs in a session of its own (jit_spawn.c), which a terminal's SIGINT does not reach,
 * and its compilers each run in a process group of Ninja's making: a host that dies on
 * Ctrl-C left them running on, reparented to init. So a host's signal handler calls
 * pd_jit_interrupt, which is async-signal-safe: it bumps a generation counter and sends
 * SIGTERM to every Ninja session this process has running. Each build remembers the
 * generation it started in; every stage (the lock wait, Ninja, the retry, publication) checks
 * it, so a build started before the interrupt fails with "interrupted" and publishes
 * nothing, while one started after it runs normally. The thread that started Ninja sees the
 * change within 50 ms, gives Ninja 0.5 s to stop its compilers (it forwards SIGTERM to their
 * groups and removes their partial outputs), then kills whatever is left in the session.
 *
 * The state is a counter and a table of running sessions, all lock-free atomics, because a
 * signal handler reads them.
 */
#include "jit_internal.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 64

static atomic_ulong generation;
static atomic_int active; /* calls between pd__interrupt_begin and pd__interrupt_end */
/* Running children: 0 free, -1 taken but not started yet, else the pid (with `session`
 * true, the leader of a session of its own). */
static atomic_int slots[SLOTS];
static atomic_bool slot_session[SLOTS];

int pd_jit_interrupt(void)
{
    int saved = errno; /* a signal handler must leave errno as it found it */
    atomic_fetch_add(&generation, 1);
    for (int i = 0; i < SLOTS; ++i) {
        int pid = atomic_load(&slots[i]);
        if (pid <= 0)
            continue;
        if (atomic_load(&slot_session[i]))
            kill(-(pid_t)pid, SIGTERM);
        kill((pid_t)pid, SIGTERM); /* before its setsid, or not a session leader */
    }
    int n = atomic_load(&active);
    errno = saved;
    return n;
}

unsigned long pd__interrupt_generation(void) { return atomic_load(&generation); }

void pd__interrupt_begin(void) { atomic_fetch_add(&active, 1); }

void pd__interrupt_end(void) { atomic_fetch_sub(&active, 1); }

bool pd__interrupted(unsigned long since) { return atomic_load(&generation) != since; }

pd_status pd__interrupt_fail(const pd__plan *p)
{
    return pd__fail(PD_ERR_BUILD,
                    "%s: building module '%s' was interrupted (Ctrl-C or pd_jit_interrupt): "
                    "the build was stopped and nothing was published; the next load builds it "
                    "again (build directory %s)",
                    p->who, p->name, p->build_dir);
}

int pd__interrupt_slot_take(void)
{
    for (int i = 0; i < SLOTS; ++i) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&slots[i], &expected, -1))
            return i;
    }
    return -1; /* more than SLOTS builds at once: this one is stopped by polling only */
}

void pd__interrupt_slot_set(int slot, pid_t pid, bool session)
{
    if (slot < 0)
        return;
    atomic_store(&slot_session[slot], session);
    atomic_store(&slots[slot], (int)pid);
}

void pd__interrupt_slot_free(int slot)
{
    if (slot >= 0)
        atomic_store(&slots[slot], 0);
}

void pd__session_kill(pid_t sid)
{
    pid_t killed[256];
    int n = 0;
    DIR *proc = opendir("/proc");
    for (struct dirent *e; proc && (e = readdir(proc)) != NULL;) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        bool zombie;
        if (*end != '\0' || pid <= 0 || pd__process_session(pid, &zombie) != (long)sid || zombie)
            continue;
        if (kill((pid_t)pid, SIGKILL) == 0 && n < 256)
            killed[n++] = (pid_t)pid;
    }
    if (proc)
        closedir(proc);
    /* SIGKILL takes effect at the process's next return to user space: wait (up to 0.5 s)
     * so that none of them still writes into the build directory when we return. */
    for (int i = 0, waited_ms = 0; i < n && waited_ms < 500; ++i) {
        bool zombie = false;
        while (pd__process_session(killed[i], &zombie) == (long)sid && !zombie && waited_ms < 500) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            ++waited_ms;
        }
    }
}
