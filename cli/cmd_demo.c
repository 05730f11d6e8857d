/*
 * cmd_demo.c - `pdext demo`, the job behind `./setup.sh demo`: JIT-builds the two reference
 * ops from their sources (examples/relu, examples/concat), runs each forward and backward on
 * built-in inputs, checks every result against values computed here independently, and shows
 * the results with the cold load time (first load, in a fresh temporary cache) and the warm
 * one (loading the unchanged module again: no compiler, no Ninja). Exit 1 if any check fails.
 *
 * The examples are found at $PDEXT_EXAMPLES_DIR, else <prefix>/share/pdext/examples beside
 * the installed binary (<prefix>/bin/pdext), else in the source tree this binary was built
 * from (PDEXT_SOURCE_EXAMPLES_DIR, defined by cli/cmd.cmake).
 */
#include "pdext_cmd.h"

#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct demo {
    char examples[PATH_MAX];
    char cache[PATH_MAX];
    bool verbose;
    int failures;
} demo;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static bool has_examples(const char *dir)
{
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/relu/relu.c", dir);
    return access(probe, R_OK) == 0;
}

static bool find_examples(char *out, size_t cap)
{
    const char *env = getenv("PDEXT_EXAMPLES_DIR");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return has_examples(out);
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0'; /* <prefix>/bin */
            int len = snprintf(out, cap, "%s/../share/pdext/examples", exe);
            if (len > 0 && (size_t)len < cap && has_examples(out))
                return true;
        }
    }
#ifdef PDEXT_SOURCE_EXAMPLES_DIR
    snprintf(out, cap, "%s", PDEXT_SOURCE_EXAMPLES_DIR);
    return has_examples(out);
#else
    return false;
#endif
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* A new CPU float32 tensor with these values. */
static pd_tensor make(int32_t ndim, const int64_t *shape, const float *values)
{
    pd_tensor t;
    if (pd_tensor_empty(&t, PD_FLOAT32, pd_place_cpu(), ndim, shape) != PD_OK) {
        pd_cmd_fail("demo");
        exit(PD_CMD_FAILED);
    }
    memcpy(t.data, values, pd_nbytes(&t));
    return t;
}

/* Prints one tensor and, for a result, whether it matches `expected`. */
static void show(demo *d, const char *name, const pd_tensor *t, int32_t ndim, const int64_t *shape,
                 const float *expected)
{
    char sh[64];
    printf("    %-10s %-7s ", name, pd_cmd_shape_str(t, sh, sizeof sh));
    pd_cmd_print_values(stdout, t, 12);
    if (expected == NULL) {
        printf("\n");
        return;
    }
    bool ok = t->dtype == PD_FLOAT32 && t->ndim == ndim &&
              memcmp(t->shape, shape, sizeof(int64_t) * (size_t)ndim) == 0;
    for (int64_t i = 0; ok && i < pd_numel(t); ++i)
        ok = fabsf(((const float *)t->data)[i] - expected[i]) <= 1e-6f;
    printf("   %s\n", ok ? "ok" : "WRONG");
    if (!ok)
        d->failures++;
}

/* Loads examples/<name>/<name>.c cold (fresh cache) and warm; returns the warm registry. */
static pd_registry *load_example(demo *d, const char *name)
{
    char src[PATH_MAX + 64], build[PATH_MAX + 64];
    snprintf(src, sizeof src, "%s/%s/%s.c", d->examples, name, name);
    snprintf(build, sizeof build, "%s/%s", d->cache, name);
    const char *sources[1] = {src};
    pd_cmd_progress progress;
    pd_cmd_progress_init(&progress, d->verbose);
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = name;
    o.sources = sources;
    o.n_sources = 1;
    o.build_dir = build;
    o.verbose = d->verbose;
    o.log = pd_cmd_progress_log;
    o.log_user = &progress;
    pd_registry *cold = NULL, *warm = NULL;
    pd_module *module;
    double t0 = now_ms(), t1 = 0, t2 = 0;
    pd_status st = pd_registry_create(&cold);
    if (st == PD_OK && (st = pd_jit_load(cold, &o, &module)) == PD_OK) {
        t1 = now_ms();
        if ((st = pd_registry_create(&warm)) == PD_OK)
            st = pd_jit_load(warm, &o, &module);
        t2 = now_ms();
    }
    pd_cmd_progress_end(&progress);
    pd_registry_destroy(cold);
    if (st != PD_OK) {
        pd_cmd_fail("demo");
        pd_registry_destroy(warm);
        d->failures++;
        return NULL;
    }
    printf("%s  (%s)\n  cold load %.1f ms (compiled), warm load %.3f ms (cached)\n", name, src,
           t1 - t0, t2 - t1);
    return warm;
}

static void run_or_fail(demo *d, pd_registry *reg, const char *op, pd_arg *in, int32_t n_in,
                        const pd_attr *attrs, int32_t n_attrs, pd_arg *out, int32_t n_out)
{
    if (pd_run(reg, op, in, n_in, attrs, n_attrs, out, n_out) != PD_OK) {
        pd_cmd_fail("demo");
        d->failures++;
        for (int32_t o = 0; o < n_out; ++o)
            out[o].count = 0;
    }
}

static void demo_relu(demo *d)
{
    static const float x[8] = {-2, -1, -0.5f, 0, 0.5f, 1, 1.5f, 3};
    static const float g[8] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f};
    static const int64_t shape[2] = {2, 4};
    float want_out[8], want_gx[8];
    for (int i = 0; i < 8; ++i) { /* Out = max(X, 0); X@GRAD = Out@GRAD where X > 0 */
        want_out[i] = x[i] > 0 ? x[i] : 0;
        want_gx[i] = x[i] > 0 ? g[i] : 0;
    }
    pd_registry *reg = load_example(d, "relu");
    if (reg == NULL)
        return;
    pd_tensor X = make(2, shape, x), G = make(2, shape, g), Out = PD_TENSOR_UNDEFINED,
              GX = PD_TENSOR_UNDEFINED;
    pd_arg fin[1] = {pd_arg_named("X", &X, 1)}, fout[1] = {pd_arg_named("Out", &Out, 1)};
    printf("  custom_relu\n");
    run_or_fail(d, reg, "custom_relu", fin, 1, NULL, 0, fout, 1);
    show(d, "X", &X, 2, shape, NULL);
    if (fout[0].count == 1) {
        show(d, "Out", &Out, 2, shape, want_out);
        pd_arg bin[3] = {pd_arg_named("X", &X, 1), pd_arg_named("Out", &Out, 1),
                         pd_arg_named("Out@GRAD", &G, 1)};
        pd_arg bout[1] = {pd_arg_named("X@GRAD", &GX, 1)};
        printf("  custom_relu_grad\n");
        run_or_fail(d, reg, "custom_relu_grad", bin, 3, NULL, 0, bout, 1);
        show(d, "Out@GRAD", &G, 2, shape, NULL);
        if (bout[0].count == 1)
            show(d, "X@GRAD", &GX, 2, shape, want_gx);
    }
    pd_tensor_release(&X), pd_tensor_release(&G), pd_tensor_release(&Out), pd_tensor_release(&GX);
    pd_registry_destroy(reg);
}

static void demo_concat(demo *d)
{
    static const float a[4] = {1, 2, 3, 4}, b[6] = {5, 6, 7, 8, 9, 10};
    static const int64_t sa[2] = {2, 2}, sb[2] = {2, 3}, so[2] = {2, 5};
    float want[10], g[10], want_ga[4], want_gb[6];
    for (int r = 0; r < 2; ++r) /* along axis 1: each row is a's row then b's row */
        for (int c = 0; c < 5; ++c) {
            want[r * 5 + c] = c < 2 ? a[r * 2 + c] : b[r * 3 + c - 2];
            g[r * 5 + c] = (float)(r * 5 + c) / 10;
            if (c < 2)
                want_ga[r * 2 + c] = g[r * 5 + c];
            else
                want_gb[r * 3 + c - 2] = g[r * 5 + c];
        }
    pd_registry *reg = load_example(d, "concat");
    if (reg == NULL)
        return;
    pd_tensor X[2] = {make(2, sa, a), make(2, sb, b)}, G = make(2, so, g),
              Out = PD_TENSOR_UNDEFINED, GX[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_attr axis = pd_attr_of_int64("axis", 1);
    pd_arg fin[1] = {pd_arg_named("X", X, 2)}, fout[1] = {pd_arg_named("Out", &Out, 1)};
    printf("  custom_concat (axis = 1)\n");
    run_or_fail(d, reg, "custom_concat", fin, 1, &axis, 1, fout, 1);
    show(d, "X[0]", &X[0], 2, sa, NULL);
    show(d, "X[1]", &X[1], 2, sb, NULL);
    if (fout[0].count == 1)
        show(d, "Out", &Out, 2, so, want);
    pd_arg bin[2] = {pd_arg_named("X", X, 2), pd_arg_named("Out@GRAD", &G, 1)};
    pd_arg bout[1] = {pd_arg_named("X@GRAD", GX, 2)};
    printf("  custom_concat_grad\n");
    run_or_fail(d, reg, "custom_concat_grad", bin, 2, &axis, 1, bout, 1);
    show(d, "Out@GRAD", &G, 2, so, NULL);
    if (bout[0].count == 2) {
        show(d, "X@GRAD[0]", &GX[0], 2, sa, want_ga);
        show(d, "X@GRAD[1]", &GX[1], 2, sb, want_gb);
    } else if (bout[0].count != 0) {
        printf("    X@GRAD has %d items, expected 2   WRONG\n", (int)bout[0].count);
        d->failures++;
    }
    for (int k = 0; k < 2; ++k)
        pd_tensor_release(&X[k]), pd_tensor_release(&GX[k]);
    pd_tensor_release(&G), pd_tensor_release(&Out);
    pd_registry_destroy(reg);
}

int pd_cmd_demo(int argc, char **argv)
{
    demo d;
    memset(&d, 0, sizeof d);
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            d.verbose = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts("usage: pdext demo [-v]\n\nJIT-builds examples/relu and examples/concat in a "
                 "fresh temporary cache, runs them\nforward and backward, checks the results and "
                 "shows cold and warm load times.\nExamples: $PDEXT_EXAMPLES_DIR, else "
                 "<prefix>/share/pdext/examples.");
            return PD_CMD_OK;
        } else {
            return pd_cmd_usage_error("demo", "unknown argument '%s'", argv[i]);
        }
    }
    bool found = find_examples(d.examples, sizeof d.examples);
    char real[PATH_MAX];
    if (found && realpath(d.examples, real) != NULL) /* show /usr/share/..., not bin/../share */
        snprintf(d.examples, sizeof d.examples, "%s", real);
    if (!found) {
        pd_cmd_error("demo",
                     "cannot find the examples (relu/relu.c); set PDEXT_EXAMPLES_DIR to "
                     "the examples directory (tried '%s')",
                     d.examples);
        return PD_CMD_FAILED;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(d.cache, sizeof d.cache, "%s/pdext-demo.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(d.cache) == NULL) {
        pd_cmd_error("demo", "cannot create a temporary cache directory in %s", tmp ? tmp : "/tmp");
        return PD_CMD_FAILED;
    }
    printf("pdext %s demo: examples from %s\n", pd_version(), d.examples);
    demo_relu(&d);
    demo_concat(&d);
    nftw(d.cache, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (d.failures) {
        printf("demo FAILED: %d check%s failed\n", d.failures, d.failures == 1 ? "" : "s");
        return PD_CMD_FAILED;
    }
    printf("demo passed: every result matches\n");
    return PD_CMD_OK;
}
