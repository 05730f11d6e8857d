/*
 * jit_util.c - the JIT's small tools: growable strings and string lists, the 64-bit content
 * hash, whole-file reads, atomic copies (through the core's pd__write_atomic: a reader sees
 * the old file or the new one, never half of one, even if we are killed), directory
 * creation, and the ownership/permission check that keeps strangers from planting code in
 * the cache.
 */
#include "jit_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- strings ------------------------------------------------------------------------------ */

static bool sb_reserve(pd__sb *sb, size_t extra)
{
    if (sb->oom)
        return false;
    if (sb->len + extra + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *s = realloc(sb->s, cap);
    if (s == NULL) {
        sb->oom = true;
        return false;
    }
    sb->s = s;
    sb->cap = cap;
    return true;
}

void pd__sb_addn(pd__sb *sb, const char *s, size_t n)
{
    if (!sb_reserve(sb, n))
        return;
    memcpy(sb->s + sb->len, s, n);
    sb->len += n;
    sb->s[sb->len] = '\0';
}

void pd__sb_add(pd__sb *sb, const char *s) { pd__sb_addn(sb, s, strlen(s)); }

void pd__sb_addf(pd__sb *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n >= 0 && sb_reserve(sb, (size_t)n)) {
        vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
        sb->len += (size_t)n;
    }
    va_end(ap);
}

void pd__sb_add_shell(pd__sb *sb, const char *s)
{
    bool plain = *s != '\0';
    for (const char *c = s; *c; ++c)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%", *c))
            plain = false;
    if (plain) {
        pd__sb_add(sb, s);
        return;
    }
    pd__sb_add(sb, "'");
    for (const char *c = s; *c; ++c) {
        if (*c == '\'')
            pd__sb_add(sb, "'\\''");
        else
            pd__sb_addn(sb, c, 1);
    }
    pd__sb_add(sb, "'");
}

void pd__sb_free(pd__sb *sb)
{
    free(sb->s);
    memset(sb, 0, sizeof *sb);
}

const char *pd__sb_str(const pd__sb *sb) { return sb->s ? sb->s : ""; }

void pd__strv_add(pd__strv *sv, const char *s)
{
    if (sv->oom)
        return;
    if (sv->n == sv->cap) {
        int32_t cap = sv->cap ? sv->cap * 2 : 8;
        char **v = realloc(sv->v, (size_t)cap * sizeof *v);
        if (v == NULL) {
            sv->oom = true;
            return;
        }
        sv->v = v;
        sv->cap = cap;
    }
    char *copy = strdup(s);
    if (copy == NULL) {
        sv->oom = true;
        return;
    }
    sv->v[sv->n++] = copy;
}

void pd__strv_free(pd__strv *sv)
{
    for (int32_t i = 0; i < sv->n; ++i)
        free(sv->v[i]);
    free(sv->v);
    memset(sv, 0, sizeof *sv);
}

bool pd__strv_has(const pd__strv *sv, const char *s)
{
    for (int32_t i = 0; i < sv->n; ++i)
        if (strcmp(sv->v[i], s) == 0)
            return true;
    return false;
}

/* --- hashing and files -------------------------------------------------------------------- */

uint64_t pd__hash64(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = seed;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

bool pd__stat_file(const char *path, pd__file_stat *st)
{
    struct stat s;
    if (stat(path, &s) != 0 || !S_ISREG(s.st_mode))
        return false;
    st->size = (int64_t)s.st_size;
    st->mtime_ns = (int64_t)s.st_mtim.tv_sec * 1000000000 + s.st_mtim.tv_nsec;
    return true;
}

/* Reads what is left of `fd` into a NUL-terminated buffer; NULL with errno on failure. */
static char *read_fd(int fd, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (n + 1 >= cap) {
            char *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            buf = NULL;
            errno = e;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (buf != NULL) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

/* read_fd of an open descriptor (or NULL for fd < 0, errno as open left it), then closes it
 * keeping read_fd's errno. */
static char *read_and_close(int fd, size_t *len)
{
    if (fd < 0)
        return NULL;
    char *buf = read_fd(fd, len);
    int e = errno;
    close(fd);
    errno = e;
    return buf;
}

char *pd__read_file(const char *path, size_t *len)
{
    return read_and_close(open(path, O_RDONLY | O_CLOEXEC), len);
}

const char *pd__untrusted_reason(const struct stat *st)
{
    if (S_ISLNK(st->st_mode))
        return "is a symbolic link";
    if (!S_ISREG(st->st_mode))
        return "is not a regular file";
    if (st->st_uid != geteuid())
        return "is not owned by you";
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return "is writable by group or others";
    return NULL;
}

int pd__open_trusted(const char *path, struct stat *st, const char **why)
{
    *why = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ELOOP)
            *why = "is a symbolic link";
        return -1;
    }
    if (fstat(fd, st) != 0 || (*why = pd__untrusted_reason(st)) != NULL) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

char *pd__read_trusted_file(const char *path, size_t *len, const char **why)
{
    struct stat st;
    return read_and_close(pd__open_trusted(path, &st, why), len);
}

bool pd__hash_file(const char *path, uint64_t *hash)
{
    size_t n;
    char *data = pd__read_file(path, &n);
    if (data == NULL)
        return false;
    *hash = pd__hash64(data, n, PD__HASH_SEED);
    free(data);
    return true;
}

pd_status pd__copy_atomic(const char *who, const char *src, const char *dst, mode_t mode)
{
    size_t len;
    char *data = pd__read_file(src, &len);
    if (data == NULL)
        return pd__fail(PD_ERR_IO, "%s: cannot read '%s': %s", who, src, strerror(errno));
    pd_status s = pd__write_atomic(who, dst, data, len, mode);
    free(data);
    return s;
}

pd_status pd__mkdirs(const char *who, const char *dir, const char *why)
{
    const char *sep = why && *why ? "; " : "";
    why = why ? why : "";
    struct stat existing;
    if (stat(dir, &existing) == 0 && S_ISDIR(existing.st_mode))
        return PD_OK; /* the warm path: nothing to create */
    char *path = strdup(dir);
    if (path == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    /* Walk the components, creating each missing one; existing ones are left as they are. */
    for (char *p = path + 1;; ++p) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            pd_status s = pd__fail(PD_ERR_IO, "%s: cannot create directory '%s': %s%s%s", who, path,
                                   strerror(errno), sep, why);
            free(path);
            return s;
        }
        *p = saved;
        if (saved == '\0')
            break;
    }
    free(path);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return pd__fail(PD_ERR_IO, "%s: '%s' is not a directory%s%s", who, dir, sep, why);
    return PD_OK;
}

pd_status pd__check_private_dir(const char *who, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return pd__fail(PD_ERR_IO, "%s: cannot read directory '%s': %s", who, dir, strerror(errno));
    if (st.st_uid != geteuid())
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: cache directory '%s' is owned by uid %u, not by you (uid %u): "
                        "anyone who owns it could plant code that this process would load; "
                        "fix with `chown %u '%s'` or choose another directory "
                        "(PDEXT_CACHE_DIR)",
                        who, dir, (unsigned)st.st_uid, (unsigned)geteuid(), (unsigned)geteuid(),
                        dir);
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: cache directory '%s' is writable by %s (mode %03o): anyone who "
                        "can write there could plant code that this process would load; fix "
                        "with `chmod go-w '%s'`",
                        who, dir, (st.st_mode & S_IWOTH) ? "others" : "its group",
                        (unsigned)(st.st_mode & 0777), dir);
    return PD_OK;
}

char *pd__abspath(const char *path)
{
    char *resolved = realpath(path, NULL);
    return resolved;
}

/* --- logging ------------------------------------------------------------------------------ */

void pd__jit_log(const pd__plan *p, const char *fmt, ...)
{
    if (p->opts->log == NULL)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    p->opts->log(p->opts->log_user, line);
}
