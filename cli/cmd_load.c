/*
 * cmd_load.c - how build, list and run reach a module: the JIT options they share, and loading
 * either one prebuilt library (pd_module_load) or sources (pd_jit_load, the cache makes a
 * second run compile nothing).
 *
 * Module names: --name, else the first source's stem plus a short hash of the sources' real
 * paths ("relu-3f2a91c0"), so that two different relu.c files in two projects get two cache
 * directories instead of rebuilding over each other, while one project always finds its own.
 */
#include "pdext_cmd.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pd_cmd_load_option(const char *cmd, pd_cmd_load_args *a, int argc, char **argv, int *i)
{
    bool bad = false;
    const char *v;
    const char *arg = argv[*i];
    if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
        a->verbose = true;
        return 1;
    }
    if ((v = pd_cmd_option(cmd, argc, argv, i, "--include", "-I", &bad)) != NULL) {
        /* Absolute, because the compiler runs in the build directory, not here. */
        char real[PATH_MAX];
        pd_cmd_strv_add(&a->include_dirs, realpath(v, real) ? real : v);
    } else if (!bad && (v = pd_cmd_option(cmd, argc, argv, i, "--cflags", NULL, &bad)) != NULL)
        pd_cmd_strv_add_words(&a->cflags, v);
    else if (!bad && (v = pd_cmd_option(cmd, argc, argv, i, "--cxxflags", NULL, &bad)) != NULL)
        pd_cmd_strv_add_words(&a->cxxflags, v);
    else if (!bad && (v = pd_cmd_option(cmd, argc, argv, i, "--cuda-flags", NULL, &bad)) != NULL)
        pd_cmd_strv_add_words(&a->cuda_flags, v);
    else if (!bad && (v = pd_cmd_option(cmd, argc, argv, i, "--ldflags", NULL, &bad)) != NULL)
        pd_cmd_strv_add_words(&a->ldflags, v);
    else if (!bad && (v = pd_cmd_option(cmd, argc, argv, i, "--name", NULL, &bad)) != NULL)
        a->name = v;
    else if (!bad && (v = pd_cmd_option(cmd, argc, argv, i, "--build-dir", NULL, &bad)) != NULL) {
        if (*v == '\0') {
            pd_cmd_usage_error(cmd, "--build-dir needs a directory, not an empty string (leave "
                                    "it out to build in the cache directory)");
            return -1;
        }
        a->build_dir = v;
    }
    if (a->build_dir == v && v != NULL && v[0] != '/') {
        /* Absolute, so that messages and the build itself never depend on a cwd. */
        char cwd[PATH_MAX], abs[PATH_MAX * 2];
        if (getcwd(cwd, sizeof cwd) != NULL) {
            snprintf(abs, sizeof abs, "%s/%s", cwd, v);
            pd_cmd_strv_add(&a->owned, abs);
            a->build_dir = a->owned.v[a->owned.n - 1];
        }
    }
    if (bad)
        return -1;
    return v != NULL;
}

int pd_cmd_output_and_sources(const char *cmd, const char *usage, pd_cmd_load_args *a, int argc,
                              char **argv, int *i, const char **output)
{
    if (pd_cmd_help(argv[*i], usage))
        return PD_CMD_HELP_SHOWN;
    bool bad = false;
    const char *v = pd_cmd_option(cmd, argc, argv, i, "--output", "-o", &bad);
    if (v != NULL) {
        *output = v;
        return PD_CMD_OK;
    }
    int took = bad ? -1 : pd_cmd_load_option(cmd, a, argc, argv, i);
    if (took < 0)
        return PD_CMD_USAGE;
    if (took == 0 && argv[*i][0] == '-' && argv[*i][1] != '\0')
        return pd_cmd_usage_error(cmd, "unknown option '%s'", argv[*i]);
    if (took == 0)
        pd_cmd_strv_add(&a->inputs, argv[*i]);
    return PD_CMD_OK;
}

void pd_cmd_load_args_free(pd_cmd_load_args *a)
{
    pd_cmd_strv_free(&a->inputs);
    pd_cmd_strv_free(&a->include_dirs);
    pd_cmd_strv_free(&a->cflags);
    pd_cmd_strv_free(&a->cxxflags);
    pd_cmd_strv_free(&a->cuda_flags);
    pd_cmd_strv_free(&a->ldflags);
    pd_cmd_strv_free(&a->owned);
}

bool pd_cmd_is_library(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    return (n > 3 && strcmp(base + n - 3, ".so") == 0) || strstr(base, ".so.") != NULL;
}

/* A static archive (.a, or "!<arch>" magic): a bundle, most likely, which only a program can
 * link; neither dlopen nor the JIT can take it. */
static bool is_static_archive(const char *path)
{
    size_t n = strlen(path);
    if (n > 2 && strcmp(path + n - 2, ".a") == 0)
        return true;
    char magic[8] = {0};
    FILE *fp = fopen(path, "rb");
    size_t got = fp ? fread(magic, 1, sizeof magic, fp) : 0;
    if (fp)
        fclose(fp);
    return got == sizeof magic && memcmp(magic, "!<arch>\n", sizeof magic) == 0;
}

/* "<stem>-<hash of the sources' real paths>" with unsafe characters made '_'. */
static void derive_name(const pd_cmd_strv *sources, char *buf, size_t cap)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (int32_t i = 0; i < sources->n; ++i) {
        char real[PATH_MAX];
        const char *p = realpath(sources->v[i], real) ? real : sources->v[i];
        for (size_t k = 0; k <= strlen(p); ++k)
            h = (h ^ (unsigned char)p[k]) * 16777619u;
    }
    const char *base = strrchr(sources->v[0], '/');
    base = base ? base + 1 : sources->v[0];
    size_t stem = strcspn(base, ".");
    if (stem > 48)
        stem = 48;
    char clean[64];
    for (size_t k = 0; k < stem; ++k) {
        char c = base[k];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
        clean[k] = ok ? c : '_';
    }
    clean[stem] = '\0';
    snprintf(buf, cap, "%s-%08x", stem ? clean : "module", h);
}

void pd_cmd_jit_options(pd_cmd_load_args *a, pd_jit_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    if (a->name) {
        o->name = a->name; /* as given: the library alone decides what a name may be */
    } else if (a->inputs.n > 0) {
        char name[80];
        derive_name(&a->inputs, name, sizeof name);
        pd_cmd_strv_add(&a->owned, name);
        o->name = a->owned.v[a->owned.n - 1];
    }
    o->sources = (const char *const *)a->inputs.v;
    o->n_sources = a->inputs.n;
    o->cflags = (const char *const *)a->cflags.v;
    o->n_cflags = a->cflags.n;
    o->cxxflags = (const char *const *)a->cxxflags.v;
    o->n_cxxflags = a->cxxflags.n;
    o->cuda_flags = (const char *const *)a->cuda_flags.v;
    o->n_cuda_flags = a->cuda_flags.n;
    o->ldflags = (const char *const *)a->ldflags.v;
    o->n_ldflags = a->ldflags.n;
    o->include_dirs = (const char *const *)a->include_dirs.v;
    o->n_include_dirs = a->include_dirs.n;
    o->build_dir = a->build_dir;
    o->verbose = a->verbose;
}

static int compare_names(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

void pd_cmd_print_op_names(FILE *fp, const pd_module *m)
{
    int32_t n = pd_module_op_count(m);
    const char **names = pd_cmd_xmalloc(sizeof *names * (size_t)(n > 0 ? n : 1));
    for (int32_t i = 0; i < n; ++i)
        names[i] = pd_op_name(pd_module_op(m, i));
    qsort(names, (size_t)n, sizeof *names, compare_names);
    for (int32_t i = 0; i < n; ++i)
        fprintf(fp, "%s%s", i ? ", " : "", names[i]);
    free(names);
}

int pd_cmd_load(const char *cmd, pd_registry *reg, pd_cmd_load_args *a, pd_module **out)
{
    if (a->inputs.n == 0)
        return pd_cmd_usage_error(cmd, "give op sources (.c .cc .cpp .cxx .cu) or one .so");
    int32_t libs = 0;
    for (int32_t i = 0; i < a->inputs.n; ++i) {
        if (is_static_archive(a->inputs.v[i])) {
            pd_cmd_error(cmd,
                         "%s is a static archive (a bundle?): list and run take op "
                         "sources or a shared library (.so); link a bundle into a program "
                         "instead (see pdext bundle --help)",
                         a->inputs.v[i]);
            return PD_CMD_USAGE;
        }
        libs += pd_cmd_is_library(a->inputs.v[i]);
    }
    if (libs > 0 && a->inputs.n > 1)
        return pd_cmd_usage_error(cmd, "give either sources or one shared library, not both");
    if (libs == 1) {
        /* dlopen searches the library path for a name without '/': make it a path. */
        const char *path = a->inputs.v[0];
        char local[PATH_MAX];
        if (strchr(path, '/') == NULL) {
            snprintf(local, sizeof local, "./%s", path);
            path = local;
        }
        if (pd_module_load(reg, path, out) != PD_OK)
            return pd_cmd_fail(cmd);
        return PD_CMD_OK;
    }
    pd_jit_options o;
    pd_cmd_progress progress;
    pd_cmd_jit_options(a, &o);
    pd_cmd_progress_init(&progress, a->verbose);
    o.log = pd_cmd_progress_log;
    o.log_user = &progress;
    pd_status st = pd_jit_load(reg, &o, out);
    pd_cmd_progress_end(&progress);
    return st == PD_OK ? PD_CMD_OK : pd_cmd_fail(cmd);
}
