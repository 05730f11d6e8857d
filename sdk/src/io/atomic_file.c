/*
 * atomic_file.c - writing a file so that readers see either the old content or the new one,
 * never a part: the data goes to a temporary file next to the target (same directory, so
 * the same file system), is flushed and synced, and is renamed over the target. Used by the
 * .npy / .npz writers and, through PD__SIBLING_API, by libpdext_jit for its manifests,
 * build files and published outputs.
 *
 * The temporary name is created with O_EXCL rather than mkstemp so that the file gets
 * `mode & ~umask` like any new file (mkstemp forces 0600); a name taken by another writer is
 * simply skipped. A writer killed before its rename leaves "<target>.tmp.<pid>.<n>" behind,
 * which the next writer does not reuse (the JIT's publisher removes such leftovers).
 */
#include "io/io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pd_status io_error(const char *who, const char *what, const char *path, int e)
{
    return pd__fail(e == ENOENT ? PD_ERR_NOT_FOUND : PD_ERR_IO, "%s: cannot %s '%s': %s", who, what,
                    path, strerror(e));
}

pd_status pd__atomic_open(const char *who, const char *path, mode_t mode, pd__atomic_file *f)
{
    memset(f, 0, sizeof f[0]);
    size_t n = strlen(path) + 48;
    f->tmp = malloc(n);
    if (f->tmp == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    int e = EEXIST;
    for (unsigned attempt = 0; attempt < 100; ++attempt) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        snprintf(f->tmp, n, "%s.tmp.%ld.%lx", path, (long)getpid(),
                 (unsigned long)(ts.tv_nsec ^ (attempt * 2654435761u)));
        int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        e = errno;
        if (fd < 0 && e == EEXIST)
            continue;
        if (fd < 0)
            break;
        f->fp = fdopen(fd, "wb");
        if (f->fp == NULL) {
            e = errno;
            close(fd);
            unlink(f->tmp);
            break;
        }
        f->path = path;
        return PD_OK;
    }
    pd_status st = io_error(who, "create a file next to", path, e);
    free(f->tmp);
    f->tmp = NULL;
    return st;
}

pd_status pd__atomic_commit(const char *who, pd__atomic_file *f)
{
    bool ok = fflush(f->fp) == 0 && fsync(fileno(f->fp)) == 0;
    int e = errno;
    if (fclose(f->fp) != 0 && ok) {
        ok = false;
        e = errno;
    }
    f->fp = NULL;
    if (ok && rename(f->tmp, f->path) != 0) {
        ok = false;
        e = errno;
    }
    if (ok) {
        free(f->tmp);
        f->tmp = NULL;
        return PD_OK;
    }
    pd_status st = io_error(who, "write", f->path, e);
    pd__atomic_abort(f);
    return st;
}

void pd__atomic_abort(pd__atomic_file *f)
{
    if (f->fp)
        fclose(f->fp);
    if (f->tmp)
        unlink(f->tmp);
    free(f->tmp);
    f->fp = NULL;
    f->tmp = NULL;
}

pd_status pd__write_atomic(const char *who, const char *path, const void *data, size_t len,
                           mode_t mode)
{
    pd__atomic_file f;
    pd_status st = pd__atomic_open(who, path, mode, &f);
    if (st != PD_OK)
        return st;
    if (len > 0 && fwrite(data, 1, len, f.fp) != len) {
        st = io_error(who, "write", path, errno);
        pd__atomic_abort(&f);
        return st;
    }
    return pd__atomic_commit(who, &f);
}
