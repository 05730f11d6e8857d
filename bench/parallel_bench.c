/*
 * parallel_bench.c - parallel_for_softmax: how an exp-heavy kernel that splits its rows with
 * pd_parallel_for scales from one thread to two.
 *
 * The op (bench_softmax, the source below, JIT-built with the JIT's default flags) computes a
 * row-wise softmax of a float32 [rows, 1024] tensor, one expf per element, the rows split by
 * pd_parallel_for. The pool's size is fixed when the runtime first uses it (PDEXT_NUM_THREADS),
 * so each sample is a new process (this program re-run as `--child-softmax`) started with
 * PDEXT_NUM_THREADS=1 or =2; the child loads the module from the warm cache, warms up, and
 * prints the median wall time of a few calls. Runs of the two sizes alternate. The figure is
 * elements per second on 2 threads against 1 thread; target ratio >= 1.8.
 *
 * Built only when the SDK declares pd_parallel_for (PDEXT_BENCH_HAVE_PARALLEL_FOR, probed by
 * bench/CMakeLists.txt); otherwise the row says it was skipped and why.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_NAME "parallel_for_softmax"
#define ROW_UNIT "Melem/s"
#define ROW_TARGET "ratio >= 1.8"
#define COLS 1024

#ifdef PDEXT_BENCH_HAVE_PARALLEL_FOR

static const char softmax_source[] =
    "/* bench_softmax: row-wise softmax of a float32 [rows, cols] tensor, rows split by\n"
    " * pd_parallel_for (written by bench/parallel_bench.c). */\n"
    "#include \"extension.h\"\n"
    "#include <math.h>\n"
    "\n"
    "typedef struct job { const float *x; float *y; int64_t cols; } job;\n"
    "\n"
    "static void rows(void *arg, int64_t begin, int64_t end)\n"
    "{\n"
    "    const job *j = (const job *)arg;\n"
    "    for (int64_t r = begin; r < end; ++r) {\n"
    "        const float *x = j->x + r * j->cols;\n"
    "        float *y = j->y + r * j->cols;\n"
    "        float m = x[0], s = 0;\n"
    "        for (int64_t c = 1; c < j->cols; ++c)\n"
    "            m = x[c] > m ? x[c] : m;\n"
    "        for (int64_t c = 0; c < j->cols; ++c) {\n"
    "            y[c] = expf(x[c] - m);\n"
    "            s += y[c];\n"
    "        }\n"
    "        for (int64_t c = 0; c < j->cols; ++c)\n"
    "            y[c] /= s;\n"
    "    }\n"
    "}\n"
    "\n"
    "static void softmax_kernel(pd_kernel_ctx *ctx)\n"
    "{\n"
    "    const pd_tensor *x = pd_input(ctx, 0);\n"
    "    PD_CHECK(pd_dtype(x) == PD_FLOAT32 && pd_ndim(x) == 2 && pd_shape(x)[1] > 0,\n"
    "             \"X must be a float32 [rows, cols] tensor with cols > 0.\");\n"
    "    pd_tensor *out = pd_output(ctx, 0);\n"
    "    job j = {(const float *)pd_data(x), (float *)pd_data(out), pd_shape(x)[1]};\n"
    "    pd_parallel_for(ctx, pd_shape(x)[0], 8, rows, &j);\n"
    "}\n"
    "\n"
    "PD_BUILD_OP(bench_softmax, .inputs = {\"X\"}, .outputs = {\"Out\"},\n"
    "            .kernel = softmax_kernel);\n";

static int64_t softmax_rows(void) { return bench_smoke ? 16 : 8192; }

/* Loads bench_softmax from `path` (building it on the first call) into `reg`. */
static const pd_op *load_softmax(pd_registry *reg, const char *path)
{
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = "bench_softmax";
    const char *sources[] = {path};
    const char *ldflags[] = {"-lm"};
    o.sources = sources;
    o.n_sources = 1;
    o.ldflags = ldflags;
    o.n_ldflags = 1;
    pd_module *mod = NULL;
    pd_status st = pd_jit_load(reg, &o, &mod);
    if (st != PD_OK) {
        bench_report_error("bench_softmax", st);
        return NULL;
    }
    return pd_op_find(reg, "bench_softmax");
}

/* Child: prints the median wall ns of one softmax call on [rows, COLS]. */
static int child_softmax(const char *path)
{
    pd_registry *reg = NULL;
    const pd_op *op = NULL;
    pd_tensor x = PD_TENSOR_UNDEFINED;
    const int64_t shape[2] = {softmax_rows(), COLS};
    const int calls = bench_smoke ? 1 : 7;
    double t[7];
    int rc = 1, n = 0;
    if (pd_registry_create(&reg) != PD_OK || !(op = load_softmax(reg, path)) ||
        pd_tensor_empty(&x, PD_FLOAT32, pd_place_cpu(), 2, shape) != PD_OK)
        goto done;
    bench_fill_random_signs(pd_data(&x), shape[0] * shape[1]);
    pd_arg in = pd_arg_of(&x);
    for (int i = -2; i < calls; ++i) { /* two warm-up calls: the pool starts on first use */
        pd_tensor out = PD_TENSOR_UNDEFINED;
        pd_arg oa = pd_arg_of(&out);
        uint64_t t0 = bench_now_ns();
        pd_status st = pd_op_run(op, &in, 1, NULL, 0, &oa, 1);
        uint64_t t1 = bench_now_ns();
        if (st != PD_OK) {
            bench_report_error("bench_softmax", st);
            goto done;
        }
        bench_escape(pd_data(&out));
        pd_tensor_release(&out);
        if (i >= 0)
            t[n++] = (double)(t1 - t0);
    }
    printf("%.0f\n", bench_stats_of(t, n).median);
    rc = 0;
done:
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    return rc;
}

/* Runs one child on the op source at `path` with PDEXT_NUM_THREADS=threads; Melem/s, or -1. */
static double sample(char *path, int threads)
{
    char value[8], out[64];
    snprintf(value, sizeof value, "%d", threads);
    setenv("PDEXT_NUM_THREADS", value, 1);
    char *argv[] = {(char *)bench_self(), "--child-softmax", path, bench_smoke ? "--smoke" : NULL,
                    NULL};
    double wall = bench_spawn(argv, out, sizeof out);
    unsetenv("PDEXT_NUM_THREADS");
    double ns = wall < 0 ? -1 : strtod(out, NULL);
    return ns > 0 ? (double)(softmax_rows() * COLS) / ns * 1e3 : -1;
}

static void figure(void)
{
    const int reps = bench_smoke ? 1 : 7;
    double p[7], b[7];
    int n = 0;
    char *path = bench_write_source("bench_softmax.c", softmax_source);
    /* The first child builds the module; the cache is warm for the rest. */
    bool ok = path && sample(path, 1) > 0;
    for (; ok && n < reps; ++n) {
        b[n] = sample(path, 1);
        p[n] = sample(path, 2);
        if (b[n] <= 0 || p[n] <= 0)
            ok = false;
    }
    free(path);
    if (!ok) {
        bench_emit_missing(ROW_NAME, ROW_UNIT, ROW_TARGET, true, "a child run failed (see stderr)");
        return;
    }
    static char note[200];
    snprintf(note, sizeof note,
             "softmax over rows of [%lld, %d] float32 (expf per element), rows split by "
             "pd_parallel_for; PDEXT_NUM_THREADS=2 vs =1, new process each",
             (long long)softmax_rows(), COLS);
    bench_row r = {ROW_NAME, ROW_UNIT, bench_stats_of(p, n), bench_stats_of(b, n),
                   true,     true,     ROW_TARGET,           BENCH_RATIO_AT_LEAST,
                   1.8,      note};
    bench_emit(&r);
}

int main(int argc, char **argv)
{
    bool child = argc > 2 && strcmp(argv[1], "--child-softmax") == 0;
    if (child && argc > 3 && strcmp(argv[3], "--smoke") == 0)
        bench_smoke = true;
    bench_init(argc, argv);
    if (child)
        return child_softmax(argv[2]);
    figure();
    return bench_finish();
}

#else /* !PDEXT_BENCH_HAVE_PARALLEL_FOR */

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    bench_emit_missing(ROW_NAME, ROW_UNIT, ROW_TARGET, false,
                       "skipped: pd_parallel_for not available (the SDK headers this was built "
                       "against do not declare it)");
    return bench_finish();
}

#endif
