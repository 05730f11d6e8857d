/*
 * memory_bench.c - figure 5, peak_memory: the peak resident memory of a process that runs
 * relu on N = 16M float32 elements, against the 2 * N * 4 bytes its input and output hold.
 * Target: <= 1.1 x that + 8 MiB.
 *
 * Each measurement is a fresh process (this program re-run as `--child-peak N`), so nothing
 * the parent allocated counts: it JIT-loads relu from the (warmed) cache, fills the input,
 * runs custom_relu once through the runner, and reports its VmHWM (peak RSS) from
 * /proc/self/status, and the VmHWM it had before making the input (the process's own base:
 * libraries, the JIT, the registry).
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* VmHWM of this process in KiB, or -1. */
static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

/* Child: prints "<peak KiB> <base KiB>". */
static int child_peak(int64_t n)
{
    pd_registry *reg = NULL;
    pd_module *mod = NULL;
    pd_tensor x = PD_TENSOR_UNDEFINED, out = PD_TENSOR_UNDEFINED;
    const char *src[] = {BENCH_RELU_SOURCE};
    int rc = 1;
    if (pd_registry_create(&reg) != PD_OK || bench_jit_load(reg, "bench_relu", src, 1, NULL, &mod))
        goto done;
    long base = peak_rss_kib();
    if (pd_tensor_empty(&x, PD_FLOAT32, pd_place_cpu(), 1, &n) != PD_OK) {
        bench_report_error("pd_tensor_empty", pd_last_status());
        goto done;
    }
    bench_fill_random_signs(pd_data(&x), n);
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&out);
    pd_status st = pd_run(reg, "custom_relu", &in, 1, NULL, 0, &oa, 1);
    if (st != PD_OK) {
        bench_report_error("custom_relu", st);
        goto done;
    }
    bench_escape(pd_data(&out));
    printf("%ld %ld\n", peak_rss_kib(), base);
    rc = 0;
done:
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    return rc;
}

static int run(int64_t n, int reps)
{
    char arg[32];
    snprintf(arg, sizeof arg, "%lld", (long long)n);
    char *argv[] = {(char *)bench_self(), "--child-peak", arg, NULL};
    char out[128];
    double *p = calloc(reps, sizeof *p), *base = calloc(reps, sizeof *base);
    int k = 0;
    /* The first child builds relu into the cache; it is not measured. */
    bool ok = p && base && bench_spawn(argv, out, sizeof out) >= 0;
    for (; ok && k < reps; ++k) {
        long peak = -1, b = -1;
        if (bench_spawn(argv, out, sizeof out) < 0 || sscanf(out, "%ld %ld", &peak, &b) != 2 ||
            peak < 0)
            break;
        p[k] = peak / 1024.0;
        base[k] = b / 1024.0;
    }
    int rc = 1;
    if (k == reps) {
        double data_mib = 2.0 * (double)n * 4 / (1024.0 * 1024.0);
        bench_stats ps = bench_stats_of(p, k), bs = bench_stats_of(base, k);
        bench_stats ds = {data_mib, data_mib, data_mib, 1};
        static char note[200];
        snprintf(note, sizeof note,
                 "peak RSS of a process running relu on %lld float32 vs 2*N*4 bytes; its base "
                 "before the tensors: %.1f MiB; limit %.1f MiB",
                 (long long)n, bs.median, 1.1 * data_mib + 8);
        bench_row r =
            {"peak_memory",      "MiB", ps, ds, true, true, "<= 1.1x + 8 MiB", BENCH_VALUE_AT_MOST,
             1.1 * data_mib + 8, note};
        bench_emit(&r);
        rc = 0;
    }
    free(p);
    free(base);
    return rc;
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    if (argc > 2 && strcmp(argv[1], "--child-peak") == 0)
        return child_peak(strtoll(argv[2], NULL, 10));
    int64_t n = bench_smoke ? 1024 : (int64_t)16 << 20;
    if (run(n, bench_smoke ? 1 : 5) != 0)
        bench_emit_missing("peak_memory", "MiB", "<= 1.1x + 8 MiB", true,
                           "a child run failed (see stderr)");
    return bench_finish();
}
