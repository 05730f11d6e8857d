/*
 * aot_bench.c - aot_call_overhead: what running a MindSpore AOT function as a pdext op adds.
 *
 * A one-element float32 add in MindSpore's calling convention (written to the private cache
 * built by the JIT front, pd_jit_aot_build, and loaded with pd_aot_load, as `pdext run
 * add.cc:AotAdd` does), called through
 * pd_op_run with a pre-resolved handle, against the same function called directly with
 * prepared params/ndims/shapes/dtypes arrays plus a malloc/free of its output (the runner
 * allocates the output too). Thread CPU time; the loops take turns. The figure is the added ns
 * per call: pdext's median minus the direct call's.
 */
#include "bench_util.h"
#include "pdext_aot.h"
#include "pdext_jit.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static const char kernel[] =
    "#include <cstdint>\n"
    "extern \"C\" int AotAdd(int nparam, void **params, int *, int64_t **shapes,\n"
    "                        const char **, void *, void *) {\n"
    "    if (nparam != 3) return 1;\n"
    "    const float *a = static_cast<const float *>(params[0]);\n"
    "    const float *b = static_cast<const float *>(params[1]);\n"
    "    float *o = static_cast<float *>(params[2]);\n"
    "    for (int64_t i = 0; i < shapes[0][0]; ++i) o[i] = a[i] + b[i];\n"
    "    return 0;\n"
    "}\n";

typedef int (*aot_fn)(int, void **, int *, int64_t **, const char **, void *, void *);

static double time_direct(aot_fn f, float *a, float *b, int calls)
{
    int64_t shape[1] = {1};
    int ndims[3] = {1, 1, 1};
    int64_t *shapes[3] = {shape, shape, shape};
    const char *dtypes[3] = {"float32", "float32", "float32"};
    uint64_t t0 = bench_cpu_ns();
    for (int i = 0; i < calls; ++i) {
        float *o = malloc(sizeof *o);
        void *params[3] = {a, b, o};
        if (!o || f(3, params, ndims, shapes, dtypes, NULL, NULL) != 0)
            abort();
        bench_escape(o);
        free(o);
    }
    return (double)(bench_cpu_ns() - t0) / calls;
}

static double time_runner(const pd_op *op, pd_tensor *x, pd_tensor *y, int calls)
{
    pd_arg in[2] = {pd_arg_of(x), pd_arg_of(y)};
    uint64_t t0 = bench_cpu_ns();
    for (int i = 0; i < calls; ++i) {
        pd_tensor out = PD_TENSOR_UNDEFINED;
        pd_arg oa = pd_arg_of(&out);
        pd_status st = pd_op_run(op, in, 2, NULL, 0, &oa, 1);
        if (st != PD_OK) {
            bench_report_error("pd_op_run AotAdd", st);
            return -1;
        }
        pd_tensor_release(&out);
    }
    return (double)(bench_cpu_ns() - t0) / calls;
}

static int run(void)
{
    pd_registry *reg = NULL;
    pd_tensor x = PD_TENSOR_UNDEFINED, y = PD_TENSOR_UNDEFINED;
    void *lib = NULL;
    int rc = 1;
    char path[4096], spec[4200];
    snprintf(path, sizeof path, "%s/aot_add.cc", bench_cache_dir());
    FILE *fp = fopen(path, "w");
    if (fp == NULL || fputs(kernel, fp) < 0 || fclose(fp) != 0) {
        fprintf(stderr, "bench_aot: cannot write %s\n", path);
        return 1;
    }
    snprintf(spec, sizeof spec, "%s:AotAdd", path);
    pd_aot_options o = {0};
    o.struct_size = sizeof o;
    o.n_inputs = 2;
    char *built = NULL;
    pd_status s = pd_registry_create(&reg);
    if (s == PD_OK)
        s = pd_jit_aot_build(spec, &o, &built);
    if (s == PD_OK)
        s = pd_aot_load(reg, built, &o, NULL);
    free(built);
    if (s != PD_OK) {
        bench_report_error("pd_aot_load", pd_last_status());
        goto done;
    }
    const pd_op *op = pd_op_find(reg, "AotAdd");
    pd_aot_info info;
    if (op == NULL || pd_aot_op_info(op, &info) != PD_OK ||
        (lib = dlopen(info.library, RTLD_NOW | RTLD_LOCAL)) == NULL)
        goto done;
    aot_fn f;
    *(void **)&f = dlsym(lib, "AotAdd");
    if (f == NULL ||
        pd_tensor_full(&x, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){1}, 1) != PD_OK ||
        pd_tensor_full(&y, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){1}, 2) != PD_OK)
        goto done;

    const int samples = bench_smoke ? 1 : 301, calls = bench_smoke ? 1 : 2000;
    double *p = calloc(samples, sizeof *p), *d = calloc(samples, sizeof *d);
    if (!p || !d)
        goto free_samples;
    if (time_runner(op, &x, &y, calls) < 0) /* warm-up; Init and AotExtra made once here */
        goto free_samples;
    time_direct(f, pd_data(&x), pd_data(&y), calls);
    for (int s = 0; s < samples; ++s) {
        p[s] = time_runner(op, &x, &y, calls);
        d[s] = time_direct(f, pd_data(&x), pd_data(&y), calls);
        if (p[s] < 0)
            goto free_samples;
    }
    bench_stats ps = bench_stats_of(p, samples), ds = bench_stats_of(d, samples);
    char note[256];
    snprintf(note, sizeof note,
             "added %.0f ns/call (pd_op_run, pre-resolved handle); direct call with prepared "
             "arrays + malloc/free of the output %.1f ns; thread CPU time",
             ps.median - ds.median, ds.median);
    bench_row r = {"aot_call_overhead", "ns/call",           ps,  ds,  true, true,
                   "<= 100 ns added",   BENCH_ADDED_AT_MOST, 100, note};
    bench_emit(&r);
    rc = 0;
free_samples:
    free(p);
    free(d);
done:
    if (lib)
        dlclose(lib);
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
    return rc;
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    if (run() != 0)
        bench_emit_missing("aot_call_overhead", "ns/call", "<= 100 ns added", true,
                           "could not run the AOT add (see stderr)");
    return bench_finish();
}
