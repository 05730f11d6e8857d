/*
 * jit_warm_bench.c - figure 2, jit_warm_load: loading an unchanged module from the cache in a
 * new process.
 *
 * jit_warm_load: a fresh process (this program re-run as `--child-warm-load`) times the whole
 * pd_jit_load of the two-source module relu.c + concat.c (cache check, dlopen, op
 * registration), against a fresh process timing a bare dlopen + dlsym + dlclose of the very
 * library the JIT built. Target: <= 1 ms absolute.
 *
 * jit_warm_process: the wall time of a whole `pdext list relu.c concat.c` process (spawn to
 * reaped exit), against a trivial process (/bin/true). Target: <= 20 ms absolute.
 *
 * jit_warm_load_integrity: the same new-process warm load with the cache's integrity check of
 * the library (on by default) against the same with it turned off (PDEXT_JIT_VERIFY=0 in the
 * child's environment), alternating. Target ratio <= 1.10. Measured only when pdext_jit.h
 * documents that switch (PDEXT_BENCH_HAVE_JIT_VERIFY, probed by bench/CMakeLists.txt);
 * otherwise the row says it was skipped and why.
 *
 * The cache is warmed once first; pdext and baseline runs alternate.
 */
#include "bench_util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const two_sources[] = {BENCH_RELU_SOURCE, BENCH_CONCAT_SOURCE};

/* Child: prints "<ns> <library path>" for one warm pd_jit_load. */
static int child_warm_load(void)
{
    pd_registry *reg = NULL;
    pd_module *mod = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return 1;
    uint64_t t0 = bench_now_ns();
    pd_status st = bench_jit_load(reg, "bench_two", two_sources, 2, NULL, &mod);
    uint64_t t1 = bench_now_ns();
    if (st == PD_OK)
        printf("%llu %s\n", (unsigned long long)(t1 - t0), pd_module_path(mod));
    pd_registry_destroy(reg);
    return st == PD_OK ? 0 : 1;
}

/* Child: prints "<ns>" for dlopen + dlsym + dlclose of `path`. */
static int child_dlopen(const char *path)
{
    uint64_t t0 = bench_now_ns();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *sym = h ? dlsym(h, PD_MODULE_ENTRY) : NULL;
    if (h)
        dlclose(h);
    uint64_t t1 = bench_now_ns();
    if (!sym) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return 1;
    }
    printf("%llu\n", (unsigned long long)(t1 - t0));
    return 0;
}

/* Runs this program in a child mode; returns the ns it printed (and the path after it, if
 * `path` is given), or -1. */
static double run_child(char *const argv[], char *path, size_t cap)
{
    char out[4200];
    if (bench_spawn(argv, out, sizeof out) < 0)
        return -1;
    unsigned long long ns = 0;
    int used = 0;
    if (sscanf(out, "%llu %n", &ns, &used) < 1)
        return -1;
    if (path) {
        snprintf(path, cap, "%s", out + used);
        path[strcspn(path, "\n")] = '\0';
    }
    return (double)ns;
}

static void warm_load_figure(int reps)
{
    static const char *target = "<= 1000 us";
    char lib[4096];
    char *load_argv[] = {(char *)bench_self(), "--child-warm-load", NULL};
    /* The first load builds the module; the second is the first warm one. */
    if (run_child(load_argv, NULL, 0) < 0 || run_child(load_argv, lib, sizeof lib) < 0) {
        bench_emit_missing("jit_warm_load", "us", target, true, "pd_jit_load failed (see stderr)");
        return;
    }
    char *dl_argv[] = {(char *)bench_self(), "--child-dlopen", lib, NULL};
    double *p = calloc(reps, sizeof *p), *b = calloc(reps, sizeof *b);
    int n = 0;
    for (; p && b && n < reps; ++n) {
        p[n] = run_child(load_argv, NULL, 0) / 1e3;
        b[n] = run_child(dl_argv, NULL, 0) / 1e3;
        if (p[n] < 0 || b[n] < 0)
            break;
    }
    if (n == reps) {
        bench_row r = {"jit_warm_load",
                       "us",
                       bench_stats_of(p, n),
                       bench_stats_of(b, n),
                       true,
                       true,
                       target,
                       BENCH_VALUE_AT_MOST,
                       1000,
                       "new process: pd_jit_load of relu.c+concat.c from the cache vs "
                       "dlopen+dlsym+dlclose of the same library"};
        bench_emit(&r);
    } else {
        bench_emit_missing("jit_warm_load", "us", target, true, "a child run failed (see stderr)");
    }
    free(p);
    free(b);
}

static void integrity_figure(int reps)
{
    static const char *name = "jit_warm_load_integrity", *target = "ratio <= 1.10";
#ifdef PDEXT_BENCH_HAVE_JIT_VERIFY
    char *load_argv[] = {(char *)bench_self(), "--child-warm-load", NULL};
    double *p = calloc(reps, sizeof *p), *b = calloc(reps, sizeof *b);
    int n = 0;
    bool ok = p && b && run_child(load_argv, NULL, 0) >= 0; /* builds, if not yet built */
    for (; ok && n < reps; ++n) {
        p[n] = run_child(load_argv, NULL, 0) / 1e3;
        setenv("PDEXT_JIT_VERIFY", "0", 1);
        b[n] = run_child(load_argv, NULL, 0) / 1e3;
        unsetenv("PDEXT_JIT_VERIFY");
        if (p[n] < 0 || b[n] < 0)
            ok = false;
    }
    if (ok) {
        bench_row r = {name,
                       "us",
                       bench_stats_of(p, n),
                       bench_stats_of(b, n),
                       true,
                       true,
                       target,
                       BENCH_RATIO_AT_MOST,
                       1.10,
                       "new process: warm pd_jit_load of relu.c+concat.c with the cache's "
                       "integrity check vs with PDEXT_JIT_VERIFY=0"};
        bench_emit(&r);
    } else {
        bench_emit_missing(name, "us", target, true, "a child run failed (see stderr)");
    }
    free(p);
    free(b);
#else
    (void)reps;
    bench_emit_missing(name, "us", target, false,
                       "skipped: no switch to turn the cache's integrity check off "
                       "(pdext_jit.h does not document PDEXT_JIT_VERIFY)");
#endif
}

static void process_figure(int reps)
{
    static const char *target = "<= 20 ms";
#ifdef PDEXT_CMD_PATH
    char *list_argv[] = {PDEXT_CMD_PATH, "list", BENCH_RELU_SOURCE, BENCH_CONCAT_SOURCE, NULL};
    char *true_argv[] = {"/bin/true", NULL};
    double *p = calloc(reps, sizeof *p), *b = calloc(reps, sizeof *b);
    int n = 0;
    /* Warm-up: the first run builds the module into the cache. */
    bool ok = p && b && bench_spawn(list_argv, NULL, 0) >= 0 &&
              bench_spawn(list_argv, NULL, 0) >= 0;
    for (; ok && n < reps; ++n) {
        p[n] = bench_spawn(list_argv, NULL, 0) / 1e6;
        b[n] = bench_spawn(true_argv, NULL, 0) / 1e6;
        if (p[n] < 0 || b[n] < 0)
            break;
    }
    if (n == reps) {
        bench_row r = {"jit_warm_process",
                       "ms",
                       bench_stats_of(p, n),
                       bench_stats_of(b, n),
                       true,
                       true,
                       target,
                       BENCH_VALUE_AT_MOST,
                       20,
                       "whole `pdext list relu.c concat.c` process (warm cache) vs /bin/true"};
        bench_emit(&r);
    } else {
        bench_emit_missing("jit_warm_process", "ms", target, true,
                           "`pdext list` failed (see stderr)");
    }
    free(p);
    free(b);
#else
    (void)reps;
    bench_emit_missing("jit_warm_process", "ms", target, true, "the pdext command is not built");
#endif
}

int main(int argc, char **argv)
{
    int i = bench_init(argc, argv);
    (void)i;
    if (argc > 1 && strcmp(argv[1], "--child-warm-load") == 0)
        return child_warm_load();
    if (argc > 2 && strcmp(argv[1], "--child-dlopen") == 0)
        return child_dlopen(argv[2]);
    int reps = bench_smoke ? 1 : 41;
    warm_load_figure(reps);
    integrity_figure(reps);
    process_figure(reps);
    return bench_finish();
}
