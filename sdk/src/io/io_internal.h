/*
 * io_internal.h - the io layer's interface: files replaced whole (atomic_file.c) and the
 * .npy format (npy.c), which libpdext_jit's .npz code and the JIT's cache use too.
 */
#ifndef PD_IO_INTERNAL_H
#define PD_IO_INTERNAL_H

#include "tensor/tensor_internal.h"

#include <stdio.h>
#include <sys/types.h>

/* Longest .npy preamble + header dict pdext writes (8 dims of 20 digits fit easily). */
#define PD__NPY_HEADER_MAX 512

/* --- io/atomic_file.c: files replaced whole (temporary file + rename) ------------------------ */

/* A file being written under a temporary name next to `path`, renamed over it on commit. */
typedef struct pd__atomic_file {
    FILE *fp;
    char *tmp;        /* malloc'd temporary path */
    const char *path; /* the target (borrowed) */
} pd__atomic_file;

/* Creates the temporary file with `mode` (less the umask), e.g. 0666 for data files, 0600
 * for private cache files. */
PD__SIBLING_API pd_status pd__atomic_open(const char *who, const char *path, mode_t mode,
                                          pd__atomic_file *f);
/* Flushes, syncs and renames; on failure removes the temporary file. Either way f is done. */
PD__SIBLING_API pd_status pd__atomic_commit(const char *who, pd__atomic_file *f);
/* Closes and removes the temporary file. */
PD__SIBLING_API void pd__atomic_abort(pd__atomic_file *f);
/* Writes `data` to `path` atomically (open, write, commit); PD_ERR_IO naming `who` and the
 * path on failure. */
PD__SIBLING_API pd_status pd__write_atomic(const char *who, const char *path, const void *data,
                                           size_t len, mode_t mode);
/* Fails, naming `who`, unless t is a defined host tensor of a dtype numpy has. */
PD__SIBLING_API pd_status pd__npy_check_savable(const char *who, const pd_tensor *t);
/* Writes t's .npy preamble and header (64-byte aligned total) into buf; returns its length,
 * 0 if it does not fit. t must have passed pd__npy_check_savable. */
PD__SIBLING_API size_t pd__npy_header_format(const pd_tensor *t, char *buf, size_t cap);
/* Parses a whole .npy image in memory into a new CPU tensor; messages name who and origin. */
PD__SIBLING_API pd_status pd__npy_parse(const char *who, const char *origin, const void *data,
                                        size_t size, pd_tensor *out);

#endif /* PD_IO_INTERNAL_H */
