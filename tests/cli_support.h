/*
 * cli_support.h - what the tests of the `pdext` command share (pdext_cli_test.c,
 * aot_cli_test.c): a private working directory per test with its own JIT cache, running the
 * built command as a subprocess with its stdout and stderr captured, and .npy inputs and
 * outputs of float32. Each including file needs PDEXT_CMD and PDEXT_EXAMPLES defined (by
 * its area file under tests/) and calls done() at the end of every test.
 */
#ifndef PD_CLI_SUPPORT_H
#define PD_CLI_SUPPORT_H

#include "pd_test.h"
#include "pdext_npy.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256]; /* this test's working directory */
static char out_buf[1 << 16], err_buf[1 << 16];
static const char *out_text = out_buf; /* stdout of the last command */
static const char *err_text = err_buf; /* stderr of the last command */

static inline const char *in_dir(const char *name)
{
    static char buf[4][512];
    static int slot;
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/pdext_cli_test.XXXXXX");
        if (mkdtemp(dir) == NULL)
            abort();
    }
    char *p = buf[slot++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static inline int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static inline void done(void)
{
    if (dir[0])
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    dir[0] = '\0';
}

static inline void slurp(const char *path, char *buf, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(buf, 1, cap - 1, fp) : 0;
    buf[n] = '\0';
    if (fp)
        fclose(fp);
}

/* Runs `pdext ARGS` in the test directory with its own cache; returns the exit status and
 * leaves the output in out_text / err_text. */
static inline int pdext(const char *fmt, ...) PD_PRINTF(1, 2);
static inline int pdext(const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    const char *work = in_dir("");
    snprintf(cmd, sizeof cmd,
             "cd %s && PDEXT_CACHE_DIR=%s/cache PDEXT_EXAMPLES_DIR=%s '%s' %s >%s/.stdout "
             "2>%s/.stderr </dev/null",
             work, dir, PDEXT_EXAMPLES, PDEXT_CMD, args, dir, dir);
    int status = system(cmd);
    slurp(in_dir(".stdout"), out_buf, sizeof out_buf);
    slurp(in_dir(".stderr"), err_buf, sizeof err_buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Runs and expects exit status `want`; shows the output otherwise. */
#define EXPECT_PDEXT(want, ...)                                     \
    do {                                                            \
        int pd__rc = pdext(__VA_ARGS__);                            \
        PD__TEST_CHECK((void)0, pd__rc == (want),                   \
                       "pdext exited %d, expected %d\nstdout: %s\n" \
                       "stderr: %s",                                \
                       pd__rc, (want), out_text, err_text);         \
    } while (0)

static inline void save_floats(const char *name, int32_t ndim, const int64_t *shape, const float *v)
{
    pd_tensor t;
    if (pd_tensor_empty(&t, PD_FLOAT32, pd_place_cpu(), ndim, shape) != PD_OK)
        abort();
    memcpy(t.data, v, pd_nbytes(&t));
    if (pd_npy_save(in_dir(name), &t) != PD_OK)
        abort();
    pd_tensor_release(&t);
}

/* Loads an output and compares it with `want`. */
static inline void expect_floats(const char *name, int32_t ndim, const int64_t *shape,
                                 const float *want)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_npy_load(in_dir(name), &t));
    PD_EXPECT_EQ(t.dtype, PD_FLOAT32);
    PD_EXPECT_EQ(t.ndim, ndim);
    bool same_shape = t.ndim == ndim && memcmp(t.shape, shape, sizeof(int64_t) * (size_t)ndim) == 0;
    PD_EXPECT(same_shape);
    for (int64_t i = 0; same_shape && i < pd_numel(&t); ++i)
        PD_EXPECT_NEAR(((float *)t.data)[i], want[i], 0);
    pd_tensor_release(&t);
}

#endif /* PD_CLI_SUPPORT_H */
