/*
 * cmd_args.c - the command's small helpers: error messages on stderr, string lists and
 * option matching (--long VALUE, --long=VALUE, -s VALUE, -sVALUE).
 */
#include "pdext_cmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void pd_cmd_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pdext%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int pd_cmd_fail(const char *what)
{
    fprintf(stderr, "pdext %s: %s\n", what, pd_last_error());
    return PD_CMD_FAILED;
}

int pd_cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pdext %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see pdext %s --help)\n", cmd);
    va_end(ap);
    return PD_CMD_USAGE;
}

void *pd_cmd_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        pd_cmd_error(NULL, "out of memory");
        exit(PD_CMD_FAILED);
    }
    return p;
}

char *pd_cmd_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(pd_cmd_xmalloc(n), s, n);
}

void pd_cmd_strv_add(pd_cmd_strv *sv, const char *s)
{
    if (sv->n == sv->cap) {
        sv->cap = sv->cap ? sv->cap * 2 : 8;
        char **grown = realloc(sv->v, sizeof *grown * (size_t)sv->cap);
        if (grown == NULL) {
            pd_cmd_error(NULL, "out of memory");
            exit(PD_CMD_FAILED);
        }
        sv->v = grown;
    }
    sv->v[sv->n++] = pd_cmd_xstrdup(s);
}

void pd_cmd_strv_add_words(pd_cmd_strv *sv, const char *s)
{
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        size_t n = strcspn(s, " \t\n");
        if (n == 0)
            break;
        char *word = pd_cmd_xmalloc(n + 1);
        memcpy(word, s, n);
        word[n] = '\0';
        pd_cmd_strv_add(sv, word);
        free(word);
        s += n;
    }
}

void pd_cmd_strv_free(pd_cmd_strv *sv)
{
    for (int32_t i = 0; i < sv->n; ++i)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

const char *pd_cmd_option(const char *cmd, int argc, char **argv, int *i, const char *lng,
                          const char *shrt, bool *bad)
{
    const char *arg = argv[*i];
    size_t ln = strlen(lng);
    if (strcmp(arg, lng) == 0 || (shrt && strcmp(arg, shrt) == 0)) {
        if (*i + 1 >= argc) {
            pd_cmd_usage_error(cmd, "option %s needs a value", arg);
            *bad = true;
            return NULL;
        }
        *i += 1;
        return argv[*i];
    }
    if (strncmp(arg, lng, ln) == 0 && arg[ln] == '=')
        return arg + ln + 1;
    if (shrt && strncmp(arg, shrt, strlen(shrt)) == 0 && arg[strlen(shrt)] != '\0')
        return arg + strlen(shrt);
    return NULL;
}

bool pd_cmd_help(const char *arg, const char *usage)
{
    if (strcmp(arg, "-h") != 0 && strcmp(arg, "--help") != 0)
        return false;
    fputs(usage, stdout);
    return true;
}

bool pd_cmd_parse_dims(const char *text, size_t len, int32_t *ndim, int64_t *shape)
{
    const char *p = text, *end = text + len;
    *ndim = 0;
    while (p < end) {
        char *after;
        errno = 0;
        long long d = strtoll(p, &after, 10);
        if (after == p || after > end || errno != 0 || d < 0 || *ndim == PD_MAX_DIMS ||
            (after != end && *after != ','))
            return false;
        shape[(*ndim)++] = d;
        p = after == end ? after : after + 1;
    }
    return true;
}

bool pd_cmd_make_dirs(const char *dir)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1;; ++p) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return false;
            *p = c;
        }
        if (c == '\0')
            return true;
    }
}
