/*
 * cmd_signal.c - Ctrl-C (and SIGTERM, SIGHUP) while the command builds. The JIT runs Ninja
 * in a session of its own, which a terminal's signal does not reach: dying at once would
 * leave the compilers running on. So the command's handler asks the JIT to stop its builds
 * (pd_jit_interrupt, async-signal-safe); the build fails with "interrupted", publishes
 * nothing, and when the command has reported that, it dies of the same signal, so that
 * its caller sees what a signal gives (a shell: status 128 + N, 130 for Ctrl-C). With no
 * build running the signal acts as it always does; a second one, too.
 */
#include "pdext_cmd.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    if (stop_signal == 0 && pd_jit_interrupt() > 0) {
        stop_signal = sig;
        return;
    }
    /* Nothing to stop (or asked twice): the default action, once this handler returns. */
    signal(sig, SIG_DFL);
    raise(sig);
}

void pd_cmd_signals_install(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
        struct sigaction old;
        /* A signal the caller ignores (nohup, a background job) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(sigs[i], &sa, NULL);
    }
}

int pd_cmd_signals_finish(int code)
{
    int sig = stop_signal;
    if (sig != 0) {
        fflush(stdout);
        fflush(stderr);
        signal(sig, SIG_DFL);
        raise(sig);
    }
    return code;
}
