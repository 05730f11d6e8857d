/*
 * bundle_util.c - helpers of `pdext bundle`: string lists, running programs, PATH lookup,
 * templates. See bundle_util.h.
 *
 * The command runs the compiler, ld, objcopy and ar as plain child processes with the
 * terminal inherited: a bundle is built once, ahead of time, so there is no cache or Ninja
 * here, and the user sees each tool's own diagnostics unchanged.
 */
#include "bundle_util.h"

#include "pdext.h"

#include <dirent.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (q == NULL) {
        fprintf(stderr, "pdext bundle: out of memory\n");
        exit(1);
    }
    return q;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

static char *vfmt(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = xrealloc(NULL, (size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

/* Takes ownership of s. */
static void list_push(bu_list *l, char *s)
{
    if (l->n + 2 > l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
    l->v[l->n] = NULL;
}

void bu_add(bu_list *l, const char *s) { list_push(l, xstrdup(s)); }

void bu_addf(bu_list *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    list_push(l, vfmt(fmt, ap));
    va_end(ap);
}

void bu_add_words(bu_list *l, const char *s)
{
    while (s && *s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            ++s;
        size_t n = strcspn(s, " \t\n");
        if (n == 0)
            break;
        char *w = xrealloc(NULL, n + 1);
        memcpy(w, s, n);
        w[n] = '\0';
        list_push(l, w);
        s += n;
    }
}

void bu_add_all(bu_list *l, const bu_list *from)
{
    for (int i = 0; i < from->n; ++i)
        bu_add(l, from->v[i]);
}

void bu_free(bu_list *l)
{
    for (int i = 0; i < l->n; ++i)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

char *bu_fmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vfmt(fmt, ap);
    va_end(ap);
    return s;
}

int bu_run(char *const argv[], bool verbose)
{
    if (verbose) {
        for (int i = 0; argv[i]; ++i)
            fprintf(stderr, "%s%s", i ? " " : "", argv[i]);
        fputc('\n', stderr);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (err != 0) {
        fprintf(stderr, "pdext bundle: cannot run %s: %s\n", argv[0], strerror(err));
        return 127;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 127;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 127;
}

static bool is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *bu_which(const char *word)
{
    if (word == NULL || *word == '\0')
        return NULL;
    if (strchr(word, '/'))
        return is_executable(word) ? xstrdup(word) : NULL;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        char *cand = bu_fmt("%.*s/%s", (int)n, n ? p : ".", word);
        if (is_executable(cand))
            return cand;
        free(cand);
        p += n;
        if (*p == ':')
            ++p;
    }
    return NULL;
}

char *bu_fill(const char *tpl, const char *const *keys, const char *const *values, int n)
{
    size_t cap = strlen(tpl) + 1, len = 0;
    for (int i = 0; i < n; ++i)
        cap += 16 * strlen(values[i]); /* a generous bound; grown below if needed */
    char *out = xrealloc(NULL, cap);
    for (const char *p = tpl; *p;) {
        const char *value = NULL;
        size_t skip = 1;
        if (*p == '@')
            for (int i = 0; i < n && value == NULL; ++i) {
                size_t k = strlen(keys[i]);
                if (strncmp(p + 1, keys[i], k) == 0 && p[1 + k] == '@') {
                    value = values[i];
                    skip = k + 2;
                }
            }
        size_t add = value ? strlen(value) : 1;
        if (len + add + 1 > cap) {
            cap = 2 * (len + add + 1);
            out = xrealloc(out, cap);
        }
        memcpy(out + len, value ? value : p, add);
        len += add;
        p += skip;
    }
    out[len] = '\0';
    return out;
}

bool bu_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    int saved = errno;
    if (fclose(f) != 0)
        ok = false;
    else if (!ok)
        errno = saved;
    return ok;
}

void bu_remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *p = bu_fmt("%s/%s", dir, e->d_name);
            unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}
