/*
 * check_bench.c - rows check_relu and check_concat: `pdext check` on examples/relu and
 * examples/concat (a whole process, from an empty build directory, so its figure includes
 * building the module) against the JIT's cold build of the same module (pd_jit_load in a fresh
 * process, into an empty directory), to show what checking costs on top of building. Target:
 * the check finishes in at most 10 s (issue: the workbench's speed); the ratio is in the note.
 * The two runs alternate; each gets a new directory.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PDEXT_CMD_PATH
#define PDEXT_CMD_PATH "pdext"
#endif

/* Child: prints the ns of one pd_jit_load of `source` into `dir`. */
static int child_cold_build(const char *dir, const char *source)
{
    pd_registry *reg = NULL;
    pd_module *mod = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return 1;
    const char *src[] = {source};
    uint64_t t0 = bench_now_ns();
    pd_status st = bench_jit_load(reg, "bench_check_cold", src, 1, dir, &mod);
    uint64_t t1 = bench_now_ns();
    if (st == PD_OK)
        printf("%llu\n", (unsigned long long)(t1 - t0));
    pd_registry_destroy(reg);
    return st == PD_OK ? 0 : 1;
}

/* One figure: `pdext check SOURCE [extra] --build-dir DIR` vs the cold build of SOURCE. */
static void run_row(const char *name, const char *source, const char *extra, int reps)
{
    double *check = calloc((size_t)reps, sizeof *check),
           *build = calloc((size_t)reps, sizeof *build);
    int n = 0;
    for (; check && build && n < reps; ++n) {
        char *dir = bench_make_dir("check"), *dir2 = bench_make_dir("cold");
        if (!dir || !dir2) {
            free(dir);
            free(dir2);
            break;
        }
        char *check_argv[8] = {PDEXT_CMD_PATH, "check", (char *)source, "--build-dir", dir};
        int k = 5;
        if (extra) {
            check_argv[k++] = "--attr";
            check_argv[k++] = (char *)extra;
        }
        check_argv[k] = NULL;
        char out[64];
        char *child_argv[] = {(char *)bench_self(), "--child-cold-build", dir2, (char *)source,
                              NULL};
        double c = bench_spawn(check_argv, NULL, 0);
        double b = bench_spawn(child_argv, out, sizeof out) >= 0 ? strtod(out, NULL) : -1;
        bench_remove_tree(dir);
        bench_remove_tree(dir2);
        free(dir);
        free(dir2);
        if (c < 0 || b <= 0)
            break;
        check[n] = c / 1e6;
        build[n] = b / 1e6;
    }
    if (n == reps) {
        bench_stats cs = bench_stats_of(check, n), bs = bench_stats_of(build, n);
        char note[512];
        snprintf(note, sizeof note,
                 "`pdext check %s%s%s` from an empty build directory (a whole process: it builds "
                 "the module, then runs every check) vs the JIT's cold build of the same module "
                 "(pd_jit_load, new process): checking costs %.2fx the build",
                 strrchr(source, '/') + 1, extra ? " --attr " : "", extra ? extra : "",
                 cs.median / bs.median);
        bench_row r =
            {name,  "ms", cs, bs, true, true, "pdext check <= 10000 ms", BENCH_VALUE_AT_MOST,
             10000, note};
        bench_emit(&r);
    } else {
        bench_emit_missing(name, "ms", "pdext check <= 10000 ms", true,
                           "pdext check or the cold build failed (see stderr)");
    }
    free(check);
    free(build);
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    if (argc > 3 && strcmp(argv[1], "--child-cold-build") == 0)
        return child_cold_build(argv[2], argv[3]);
    int reps = bench_smoke ? 1 : 5;
    run_row("check_relu", BENCH_RELU_SOURCE, NULL, reps);
    run_row("check_concat", BENCH_CONCAT_SOURCE, "axis=1", reps);
    return bench_finish();
}
