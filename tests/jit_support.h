/*
 * jit_support.h - what the JIT test programs share: a private temporary world per test (cache
 * directory, copies of the fixture sources of tests/jit_ops/ to edit, a `ninja` wrapper first
 * in PATH that counts Ninja runs), and small helpers to load a module and run its ops.
 */
#ifndef PD_JIT_SUPPORT_H
#define PD_JIT_SUPPORT_H

#include "pd_test.h"
#include "pdext_jit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- fixture helpers ---------------------------------------------------------------------- */

static char tmp_root[256] PD_UNUSED;

static inline const char *tmp_path(const char *rel)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", tmp_root, rel);
    return b;
}

static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static inline char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Copies tests/jit_ops/<name> into <tmp>/src/<name>. */
static inline const char *fixture(const char *name)
{
    char from[512];
    snprintf(from, sizeof from, "%s/tests/jit_ops/%s", PD_TEST_SOURCE_DIR, name);
    char *text = read_text(from);
    const char *to = tmp_path("src/");
    static char path[8][512];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s%s", to, name);
    if (text)
        write_text(p, text);
    /* As a user's files are: written a while ago. (A file written within a few ms of a
     * build's start might have changed while the compiler read it, so the loader does not
     * trust its hash and the next load rebuilds once; see jit_load.c, RACY_WINDOW_NS.) */
    struct timespec past[2] = {{time(NULL) - 10, 0}, {time(NULL) - 10, 0}};
    utimensat(AT_FDCWD, p, past, 0);
    return p;
}

/* Replaces the first `from` in the file with `to`. */
static inline void edit(const char *path, const char *from, const char *to)
{
    char *text = read_text(path);
    char *at = text ? strstr(text, from) : NULL;
    if (at == NULL)
        return;
    char out[1 << 16];
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    write_text(path, out);
}

static inline void write_script(const char *path, const char *body)
{
    write_text(path, body);
    chmod(path, 0755);
}

/* A fresh temporary world: cache, sources, and the Ninja-counting wrapper. */
static inline void jit_setup(void)
{
    snprintf(tmp_root, sizeof tmp_root, "/tmp/pdext-jit-test-XXXXXX");
    if (mkdtemp(tmp_root) == NULL)
        abort();
    mkdir(tmp_path("src"), 0700);
    mkdir(tmp_path("bin"), 0700);
    /* Tests change PATH; each starts again from the one the suite was started with. */
    static char *original_path;
    if (original_path == NULL && getenv("PATH"))
        original_path = strdup(getenv("PATH"));
    char *real_ninja = NULL;
    const char *path = original_path;
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char cand[1024];
        snprintf(cand, sizeof cand, "%s/ninja", d);
        if (access(cand, X_OK) == 0) {
            real_ninja = strdup(cand);
            break;
        }
    }
    char script[2048];
    snprintf(script, sizeof script, "#!/bin/sh\necho run >> '%s'\nexec '%s' \"$@\"\n",
             tmp_path("ninja.runs"), real_ninja ? real_ninja : "/usr/bin/ninja");
    free(real_ninja);
    write_script(tmp_path("bin/ninja"), script);
    char new_path[8192];
    snprintf(new_path, sizeof new_path, "%s:%s", tmp_path("bin"), path ? path : "/usr/bin:/bin");
    setenv("PATH", new_path, 1);
    setenv("PDEXT_CACHE_DIR", tmp_path("cache"), 1);
    setenv("PDEXT_INCLUDE_DIR", PD_TEST_SOURCE_DIR "/sdk/include", 1);
    unsetenv("CC");
    unsetenv("CXX");
    unsetenv("PDEXT_COMPILER_LAUNCHER");
    unsetenv("CMAKE_C_COMPILER_LAUNCHER");
    unsetenv("CMAKE_CXX_COMPILER_LAUNCHER");
    unsetenv("CMAKE_CUDA_COMPILER_LAUNCHER");
    unsetenv("PDEXT_JIT_PORTABLE");
    /* The precompiled paddle/extension.h is made by a job that outlives the build (jit_pch.c);
     * tests turn it on where they wait for it. */
    setenv("PDEXT_JIT_PCH", "0", 1);
    unsetenv("NVCC");
}

/* Waits for the background jobs making precompiled headers in the test's cache (each holds
 * its directory's lock until it exits). */
static inline void jit_pch_wait(void)
{
    DIR *d = opendir(tmp_path("cache/pch"));
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        char rel[160];
        snprintf(rel, sizeof rel, "cache/pch/%.64s/lock", e->d_name);
        int fd = e->d_name[0] == '.' ? -1 : open(tmp_path(rel), O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
                ;
            close(fd);
        }
    }
    if (d)
        closedir(d);
}

static inline void jit_teardown(void)
{
    jit_pch_wait();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/bin/rm -rf '%s'", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
}

static inline int ninja_runs(void)
{
    char *text = read_text(tmp_path("ninja.runs"));
    int n = 0;
    for (const char *c = text; c && (c = strstr(c, "run")) != NULL; c += 3)
        ++n;
    return n;
}

static inline pd_jit_options options(const char *name, const char *const *sources, int32_t n)
{
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = name;
    o.sources = sources;
    o.n_sources = n;
    return o;
}

/* Runs the float32 op `name` on X = {1, 2, 3, 4} and returns Out[1] (NaN on failure). */
static inline double run_at_2(const pd_registry *reg, const char *name)
{
    float xs[4] = {1, 2, 3, 4};
    pd_tensor x, out;
    memset(&out, 0, sizeof out);
    if (pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){4}, NULL, NULL) !=
        PD_OK)
        return -1e30;
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    double v = -1e30;
    if (pd_run(reg, name, &in, 1, NULL, 0, &outs, 1) == PD_OK) {
        v = ((const float *)out.data)[1];
        pd_tensor_release(&out);
    } else {
        fprintf(stderr, "pd_run(%s): %s\n", name, pd_last_error());
    }
    pd_tensor_release(&x);
    return v;
}

/* Loads `sources` as module `name` into a new registry and returns op `op` at X = 2. */
static inline double load_and_run(const char *name, const char *const *sources, int32_t n,
                                  const char *op)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return -1e30;
    pd_jit_options o = options(name, sources, n);
    pd_module *m = NULL;
    double v = -1e30;
    if (pd_jit_load(reg, &o, &m) == PD_OK)
        v = run_at_2(reg, op);
    else
        fprintf(stderr, "pd_jit_load(%s): %s\n", name, pd_last_error());
    pd_registry_destroy(reg);
    return v;
}

typedef struct log_lines {
    char text[1 << 15];
    int count;
} log_lines;

static inline void collect(void *user, const char *line)
{
    log_lines *l = user;
    size_t len = strlen(l->text);
    snprintf(l->text + len, sizeof l->text - len, "%s\n", line);
    l->count++;
}

#endif /* PD_JIT_SUPPORT_H */
