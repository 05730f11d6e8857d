/*
 * device_bench.c - device_cache_alloc: a tensor allocated and released on the simulated device
 * (pd_tensor_empty + pd_tensor_release of 4 KiB on sim:0), which the device cache serves
 * without calling the device table, against malloc + free of the same size. Target: <= 100 ns
 * per pair. The sim's allocation counter proves the cache served every pair after the first.
 */
#include "bench_util.h"
#include "pd_sim_device.h"

#include <stdio.h>
#include <stdlib.h>

#define ROW_NAME "device_cache_alloc"
#define ROW_UNIT "ns"
#define ROW_TARGET "<= 100 ns per alloc/free pair"

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    const int samples = bench_smoke ? 1 : 15, reps = bench_smoke ? 10 : 200000;
    const int64_t n = 1024; /* 4 KiB of float32 */
    int32_t type = 0;
    double *p = calloc(samples, sizeof *p), *b = calloc(samples, sizeof *b);
    pd_sim_stats before, after;
    if (p == NULL || b == NULL || pd_sim_device_install(&type) != PD_OK) {
        bench_emit_missing(ROW_NAME, ROW_UNIT, ROW_TARGET, true, "set-up failed");
        return bench_finish();
    }
    pd_place place = pd_place_make(type, 0);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    bool ok = pd_tensor_empty(&t, PD_FLOAT32, place, 1, &n) == PD_OK; /* warms the cache */
    pd_tensor_release(&t);
    pd_sim_stats_get(&before);
    for (int k = 0; ok && k < samples; ++k) {
        uint64_t t0 = bench_cpu_ns();
        for (int r = 0; ok && r < reps; ++r) {
            ok = pd_tensor_empty(&t, PD_FLOAT32, place, 1, &n) == PD_OK;
            bench_escape(t.data);
            pd_tensor_release(&t);
        }
        uint64_t t1 = bench_cpu_ns();
        for (int r = 0; r < reps; ++r) {
            void *m = malloc((size_t)n * sizeof(float));
            bench_escape(m);
            free(m);
        }
        uint64_t t2 = bench_cpu_ns();
        p[k] = (double)(t1 - t0) / reps;
        b[k] = (double)(t2 - t1) / reps;
    }
    pd_sim_stats_get(&after);
    if (!ok || after.allocs != before.allocs) {
        fprintf(stderr, "device_bench: %s\n",
                ok ? "the device table allocated: the cache did not serve every pair"
                   : pd_last_error());
        bench_emit_missing(ROW_NAME, ROW_UNIT, ROW_TARGET, true, "could not run (see stderr)");
    } else {
        bench_row r = {ROW_NAME,
                       ROW_UNIT,
                       bench_stats_of(p, samples),
                       bench_stats_of(b, samples),
                       true,
                       true,
                       ROW_TARGET,
                       BENCH_VALUE_AT_MOST,
                       100,
                       "pd_tensor_empty + pd_tensor_release of 4 KiB on the simulated device, "
                       "served by the device cache (no device allocation: counted); baseline "
                       "malloc + free of 4 KiB"};
        bench_emit(&r);
    }
    pd_device_cache_release(place);
    free(p);
    free(b);
    return bench_finish();
}
