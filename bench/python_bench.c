/*
 * python_bench.c - the Python front's figures: pdext called from Debian's /usr/bin/python3 on
 * the package of this build (python/), each against a same-run baseline. The timing inside
 * Python is bench/python_bench.py's (it prints medians; see its comment); this program runs
 * it, measures the process and C sides itself, and prints the rows.
 *
 * python_call_overhead: ops.custom_relu(x) on a 1-element float32 numpy array, ns per call
 * (thread CPU time), against numpy's own relu np.maximum(x, zero) on it. Target <= 350 ns.
 *
 * python_call_vs_torch_op: the same call against a PyTorch custom op (a
 * torch.utils.cpp_extension PYBIND11 relu built -O2, in <build>/bench/torch_ext) on a
 * 1-element torch tensor. Target ratio <= 0.6. The note gives ops.custom_relu on the torch
 * tensor too (DLPack both ways). Not applicable without python3-torch, or when the extension
 * does not build (no compiler, no headers): the row says why.
 *
 * python_warm_load_process: the whole `python3 -c "import pdext; pdext.load('relu',
 * ['relu.c'])"` process with a warm cache against `python3 -c pass`, ms of wall time,
 * alternating. Target <= 1.3x the baseline + 5 ms.
 *
 * python_relu_bandwidth: ops.custom_relu on a 64 MiB float32 numpy array (each output
 * dropped), bytes read + written per second, against the same op on a 64 MiB tensor called
 * from C (pd_op_run) in this program; wall time, both sides alternating by rounds. Target
 * ratio >= 0.9.
 *
 * Without the Python front in this build (no python3-dev / python3-numpy), the rows say so.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PDEXT_PYTHON_EXECUTABLE
#define PDEXT_PYTHON_EXECUTABLE "/usr/bin/python3"
#endif
#define BENCH_PY_SCRIPT PDEXT_SOURCE_DIR "/bench/python_bench.py"

/* The figures need the Python front of this build (PDEXT_PYTHON_DIR, set by python/). */
#ifdef PDEXT_PYTHON_DIR

/* One "<key> <median> <p10> <p90> <n>" line of the script's output into *s; or the reason of a
 * "<key> skip <reason>" line into skip (when given). false if the key is absent. */
static bool parse_figure(const char *out, const char *key, bench_stats *s, char *skip, size_t cap)
{
    size_t len = strlen(key);
    for (const char *line = out; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, key, len) != 0 || line[len] != ' ')
            continue;
        const char *rest = line + len + 1;
        if (strncmp(rest, "skip ", 5) == 0) {
            if (skip) {
                snprintf(skip, cap, "%s", rest + 5);
                skip[strcspn(skip, "\n")] = '\0';
            }
            return false;
        }
        return sscanf(rest, "%lf %lf %lf %d", &s->median, &s->p10, &s->p90, &s->n) == 4;
    }
    return false;
}

/* Runs python_bench.py (argv) with its stdout in out. */
static double run_script(char *const argv[], char *out, size_t cap)
{
    return bench_spawn(argv, out, cap);
}

static void call_figures(void)
{
    static const char *t1 = "<= 350 ns", *t2 = "ratio <= 0.6";
    char reps[16], n[16], out[4096];
    snprintf(reps, sizeof reps, "%d", bench_smoke ? 1 : 21);
    snprintf(n, sizeof n, "%d", bench_smoke ? 10 : 20000);
    char *argv[] = {PDEXT_PYTHON_EXECUTABLE, BENCH_PY_SCRIPT, "call", reps, n, NULL};
    bench_stats p, b;
    if (run_script(argv, out, sizeof out) < 0 || !parse_figure(out, "call_pdext", &p, NULL, 0) ||
        !parse_figure(out, "call_numpy", &b, NULL, 0)) {
        bench_emit_missing("python_call_overhead", "ns", t1, true,
                           "python_bench.py call failed (see stderr)");
    } else {
        bench_row r = {"python_call_overhead",
                       "ns",
                       p,
                       b,
                       true,
                       true,
                       t1,
                       BENCH_VALUE_AT_MOST,
                       350,
                       "ops.custom_relu(x), x a 1-element float32 numpy array, per call (thread "
                       "CPU time) vs numpy's np.maximum(x, zero) on it"};
        bench_emit(&r);
    }

    /* The torch extension builds once into the build tree (a minute or more); later runs
     * find it built. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", bench_self());
    char *slash = strrchr(dir, '/');
    snprintf(slash ? slash + 1 : dir, sizeof dir - (size_t)(slash ? slash + 1 - dir : 0),
             "torch_ext");
    char *targv[] = {PDEXT_PYTHON_EXECUTABLE, BENCH_PY_SCRIPT, "torch", reps, n, dir, NULL};
    if (bench_smoke) {
        bench_emit_missing("python_call_vs_torch_op", "ns", t2, false,
                           "skipped in smoke mode (building the torch extension takes minutes)");
        return;
    }
    char skip[512] = "";
    bench_stats t, pt;
    if (run_script(targv, out, sizeof out) < 0) {
        bench_emit_missing("python_call_vs_torch_op", "ns", t2, true,
                           "python_bench.py torch failed (see stderr)");
    } else if (!parse_figure(out, "torch_ext", &t, skip, sizeof skip) ||
               !parse_figure(out, "torch_pdext_numpy", &p, NULL, 0) ||
               !parse_figure(out, "torch_pdext_torch", &pt, NULL, 0)) {
        char reason[600];
        snprintf(reason, sizeof reason, "skipped: %s", skip[0] ? skip : "no figures printed");
        bench_emit_missing("python_call_vs_torch_op", "ns", t2, false, reason);
    } else {
        char note[512];
        snprintf(note, sizeof note,
                 "ops.custom_relu on a 1-element numpy array vs a torch.utils.cpp_extension "
                 "PYBIND11 relu (-O2) on a 1-element torch tensor; ops.custom_relu on that torch "
                 "tensor (DLPack in and out): %.0f ns",
                 pt.median);
        bench_row r = {"python_call_vs_torch_op", "ns", p,   t, true, true, t2,
                       BENCH_RATIO_AT_MOST,       0.6,  note};
        bench_emit(&r);
    }
}

static void process_figure(void)
{
    static const char *target = "<= 1.3x + 5 ms";
    int reps = bench_smoke ? 1 : 15;
    char *load_argv[] = {PDEXT_PYTHON_EXECUTABLE, "-c",
                         "import pdext; pdext.load('relu', ['" BENCH_RELU_SOURCE "'])", NULL};
    char *pass_argv[] = {PDEXT_PYTHON_EXECUTABLE, "-c", "pass", NULL};
    double *p = calloc((size_t)reps, sizeof *p), *b = calloc((size_t)reps, sizeof *b);
    /* Warm-up: the first load builds the module (if the call figures did not). */
    bool ok = p && b && bench_spawn(load_argv, NULL, 0) >= 0;
    int n = 0;
    for (; ok && n < reps; ++n) {
        p[n] = bench_spawn(load_argv, NULL, 0) / 1e6;
        b[n] = bench_spawn(pass_argv, NULL, 0) / 1e6;
        ok = p[n] >= 0 && b[n] >= 0;
    }
    if (ok) {
        bench_stats ps = bench_stats_of(p, n), bs = bench_stats_of(b, n);
        bench_row r = {"python_warm_load_process",
                       "ms",
                       ps,
                       bs,
                       true,
                       true,
                       target,
                       BENCH_VALUE_AT_MOST,
                       1.3 * bs.median + 5.0,
                       "whole `python3 -c \"import pdext; pdext.load('relu', ['relu.c'])\"` "
                       "process, warm cache, vs `python3 -c pass`"};
        bench_emit(&r);
    } else {
        bench_emit_missing("python_warm_load_process", "ms", target, true,
                           "a python3 process failed (see stderr)");
    }
    free(p);
    free(b);
}

static void bandwidth_figure(void)
{
    static const char *name = "python_relu_bandwidth", *target = "ratio >= 0.9";
    int mib = bench_smoke ? 1 : 64, rounds = bench_smoke ? 1 : 5, per_round = bench_smoke ? 1 : 6;
    int64_t numel = (int64_t)mib * (1 << 20) / 4;
    double bytes = 2.0 * (double)numel * 4; /* read + written */
    pd_registry *reg = NULL;
    pd_module *mod = NULL;
    const char *sources[] = {BENCH_RELU_SOURCE};
    pd_tensor x = PD_TENSOR_UNDEFINED;
    bool ok = pd_registry_create(&reg) == PD_OK &&
              bench_jit_load(reg, "relu", sources, 1, NULL, &mod) == PD_OK &&
              pd_tensor_empty(&x, PD_FLOAT32, pd_place_cpu(), 1, &numel) == PD_OK;
    const pd_op *op = ok ? pd_op_find(reg, "custom_relu") : NULL;
    for (int64_t i = 0; ok && i < numel; ++i)
        ((float *)x.data)[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
    double *p = calloc((size_t)(rounds * per_round), sizeof *p);
    double *b = calloc((size_t)(rounds * per_round), sizeof *b);
    ok = ok && op && p && b && bench_op_once_ns(op, &x) >= 0; /* warm-up */
    char reps[16], size[16], out[1024];
    snprintf(reps, sizeof reps, "%d", per_round);
    snprintf(size, sizeof size, "%d", mib);
    char *argv[] = {PDEXT_PYTHON_EXECUTABLE, BENCH_PY_SCRIPT, "bandwidth", reps, size, NULL};
    int np = 0, nb = 0;
    for (int r = 0; ok && r < rounds; ++r) {
        for (int k = 0; ok && k < per_round; ++k) {
            double ns = bench_op_once_ns(op, &x);
            ok = ns > 0;
            b[nb++] = bytes / ns; /* GB/s */
        }
        const char *line = ok && run_script(argv, out, sizeof out) >= 0
                               ? strstr(out, "bw_pdext_samples ")
                               : NULL;
        ok = line != NULL;
        char *next = ok ? (char *)line + strlen("bw_pdext_samples ") : NULL;
        for (int k = 0; ok && k < per_round; ++k) {
            char *end;
            double ns = strtod(next, &end);
            ok = end != next && ns > 0;
            p[np++] = bytes / ns;
            next = end;
        }
    }
    if (ok) {
        bench_row row =
            {name,
             "GB/s",
             bench_stats_of(p, np),
             bench_stats_of(b, nb),
             true,
             true,
             target,
             BENCH_RATIO_AT_LEAST,
             0.9,
             "ops.custom_relu on a 64 MiB float32 numpy array (python3 runs between "
             "rounds of C calls) vs pd_op_run of custom_relu on a 64 MiB tensor from C; wall time, "
             "bytes read + written"};
        bench_emit(&row);
    } else {
        bench_emit_missing(name, "GB/s", target, true, "a run failed (see stderr)");
    }
    free(p);
    free(b);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

#endif /* PDEXT_PYTHON_DIR */

int main(int argc, char **argv)
{
    bench_init(argc, argv);
#ifdef PDEXT_PYTHON_DIR
    /* The package of this build tree, found by the python3 children. */
    setenv("PYTHONPATH", PDEXT_PYTHON_DIR, 1);
    /* A warm process reads the package's bytecode cache, which the first run writes. */
    unsetenv("PYTHONDONTWRITEBYTECODE");
    call_figures();
    process_figure();
    bandwidth_figure();
#else
    static const char *why = "skipped: the Python front is not built (needs python3-dev and "
                             "python3-numpy)";
    bench_emit_missing("python_call_overhead", "ns", "<= 350 ns", false, why);
    bench_emit_missing("python_call_vs_torch_op", "ns", "ratio <= 0.6", false, why);
    bench_emit_missing("python_warm_load_process", "ms", "<= 1.3x + 5 ms", false, why);
    bench_emit_missing("python_relu_bandwidth", "GB/s", "ratio >= 0.9", false, why);
#endif
    return bench_finish();
}
