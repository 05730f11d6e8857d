/*
 * cmd_progress.c - what a build shows while it runs. The JIT hands every log line to a
 * callback (the library never prints); here -v passes them all to stderr, and otherwise a
 * terminal gets one status line rewritten in place with '\r' (cleared when the build ends),
 * while a pipe or a log file gets nothing, so that scripts see only results and errors.
 * Warnings from the JIT (lines starting "pdext: warning:", e.g. a C++ compiler unlike the one
 * that built libpdext) and its notes that a load waits for another process ("pdext: waiting
 * for pid N building <name> ...") are the exception: they are always printed on a line of
 * their own, since a user who never passes -v must still see them (a load that seems to hang
 * must say why).
 */
#include "pdext_cmd.h"

#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Columns of the terminal, so that a long line never wraps (a wrapped line cannot be
 * rewritten with '\r'). */
static int terminal_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
        return ws.ws_col;
    return 80;
}

/* The prefixes of the JIT's lines that are always shown: warnings (jit/jit_load.c) and
 * waits for a lock held by another process (jit/jit_lock.c). */
static const char *const always_shown[] = {"pdext: warning:", "pdext: waiting for "};

static bool is_warning(const char *line, size_t n)
{
    for (size_t i = 0; i < sizeof always_shown / sizeof always_shown[0]; ++i) {
        size_t len = strlen(always_shown[i]);
        if (n >= len && strncmp(line, always_shown[i], len) == 0)
            return true;
    }
    return false;
}

void pd_cmd_progress_init(pd_cmd_progress *p, bool verbose)
{
    p->verbose = verbose;
    p->tty = isatty(STDERR_FILENO) != 0;
    p->shown = false;
}

void pd_cmd_progress_log(void *user, const char *line)
{
    pd_cmd_progress *p = user;
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    if (p->verbose) {
        fprintf(stderr, "%.*s\n", (int)n, line);
        return;
    }
    if (is_warning(line, n)) {
        /* Over the status line, which the next log line redraws below the warning. */
        if (p->shown)
            fputs("\r\033[K", stderr);
        fprintf(stderr, "%.*s\n", (int)n, line);
        fflush(stderr);
        p->shown = false;
        return;
    }
    if (!p->tty || n == 0)
        return;
    int width = terminal_width() - 1;
    fprintf(stderr, "\r\033[K%.*s", (int)(n < (size_t)width ? n : (size_t)width), line);
    fflush(stderr);
    p->shown = true;
}

void pd_cmd_progress_end(pd_cmd_progress *p)
{
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->shown = false;
    }
}
