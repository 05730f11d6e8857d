/*
 * jit_build.c - pd_jit_build and pd_jit_build_load: the JIT's plan run ahead of time into a
 * named file (what `pdext build` and `pdext bundle` are thin fronts of).
 *
 * The cache builds the result as for pd_jit_load (jit_load.c). Before anything is written
 * at the output, what was built is loaded: the shared library itself, or for a static
 * bundle the check library Ninja linked from the same objects (under a content-addressed
 * name, as the JIT's modules are, so that a rebuilt bundle is never the stale code of a
 * check library this process loaded before). So a result the runtime
 * would refuse (no ops, a malformed declaration, an unresolved symbol) fails here with the
 * loader's message, and leaves no file behind. Then the outputs are written atomically; a
 * static bundle gets NAME.h and NAME.pc beside its archive (templates/bundle_header.h.in,
 * bundle.pc.in), naming its ops and every library a program linking it needs.
 */
#include "jit_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Refuses an output whose directory is missing or cannot take new files, or which is a
 * directory; checked before building, so the user waits for nothing. */
static pd_status check_output(const char *who, const char *output)
{
    const char *slash = strrchr(output, '/');
    pd__sb dir = {0};
    if (slash == NULL)
        pd__sb_add(&dir, ".");
    else if (slash == output)
        pd__sb_add(&dir, "/");
    else
        pd__sb_addn(&dir, output, (size_t)(slash - output));
    if (dir.oom)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    struct stat st;
    pd_status s = PD_OK;
    if (stat(dir.s, &st) != 0)
        s = errno == ENOENT
                ? pd__fail(PD_ERR_NOT_FOUND,
                           "%s: cannot write '%s': output directory '%s' does not exist; "
                           "create it or choose another output path",
                           who, output, dir.s)
                : pd__fail(PD_ERR_IO, "%s: cannot write '%s': output directory '%s': %s", who,
                           output, dir.s, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        s = pd__fail(PD_ERR_INVALID_ARGUMENT,
                     "%s: cannot write '%s': output directory '%s' is not a directory", who, output,
                     dir.s);
    else if (slash && slash[1] == '\0')
        s = pd__fail(PD_ERR_INVALID_ARGUMENT,
                     "%s: cannot write '%s': the output must name a file, not a directory", who,
                     output);
    else if (stat(output, &st) == 0 && S_ISDIR(st.st_mode))
        s = pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: cannot write '%s': it is a directory", who,
                     output);
    if (s == PD_OK) {
        /* access(W_OK) says yes to root even on /proc: try the real thing. */
        pd__sb probe = {0};
        pd__sb_addf(&probe, "%s/.pdext-probe-%ld", dir.s, (long)getpid());
        int fd = probe.oom ? -1 : open(probe.s, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
            close(fd);
            unlink(probe.s);
        } else if (probe.oom || errno != EEXIST) {
            s = pd__fail(PD_ERR_IO,
                         "%s: cannot write '%s': cannot create files in '%s' (%s); "
                         "choose another output path",
                         who, output, dir.s, probe.oom ? "out of memory" : strerror(errno));
        }
        pd__sb_free(&probe);
    }
    pd__sb_free(&dir);
    return s;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What the header and .pc templates of a bundle are filled with. */
typedef struct bundle_fill {
    const pd__plan *p;
    const char *archive; /* file name of the output */
    pd__sb ops;          /* "a, b, c" */
    pd__sb libs;         /* " -lstdc++ -lm" */
} bundle_fill;

static bool bundle_placeholder(pd__sb *sb, const void *user, const char *key, size_t n)
{
    const bundle_fill *f = user;
#define IS(name) (n == strlen(name) && strncmp(key, name, n) == 0)
    if (IS("NAME"))
        pd__sb_add(sb, f->p->name);
    else if (IS("VERSION"))
        pd__sb_add(sb, PD_VERSION_STRING);
    else if (IS("ARCHIVE"))
        pd__sb_add(sb, f->archive);
    else if (IS("OPS"))
        pd__sb_add(sb, pd__sb_str(&f->ops));
    else if (IS("EXTRA_LIBS"))
        pd__sb_add(sb, pd__sb_str(&f->libs));
    else
        return false;
    return true;
#undef IS
}

/* Writes <output dir>/<name>.h and <name>.pc for the bundle whose ops `m` holds. */
static pd_status write_bundle_files(const pd__plan *p, const char *output, const pd_module *m)
{
    const char *slash = strrchr(output, '/');
    bundle_fill f = {p, slash ? slash + 1 : output, {0}, {0}};
    int32_t n = pd_module_op_count(m);
    const char **names = calloc((size_t)(n > 0 ? n : 1), sizeof *names);
    if (names == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who);
    for (int32_t i = 0; i < n; ++i)
        names[i] = pd_op_name(pd_module_op(m, i));
    qsort(names, (size_t)n, sizeof *names, compare_names);
    for (int32_t i = 0; i < n; ++i)
        pd__sb_addf(&f.ops, "%s%s", i ? ", " : "", names[i]);
    free(names);
    pd__plan_bundle_libs(p, &f.libs);
    pd_status s = PD_OK;
    static const char *const ext[2] = {"h", "pc"};
    const char *const tpl[2] = {pd__tpl_bundle_header, pd__tpl_bundle_pc};
    for (int k = 0; k < 2 && s == PD_OK; ++k) {
        pd__sb text = {0}, path = {0};
        pd__template_fill(&text, tpl[k], bundle_placeholder, &f);
        pd__sb_addf(&path, "%.*s%s%s.%s", slash ? (int)(slash - output) : 0, output,
                    slash ? "/" : "", p->name, ext[k]);
        s = text.oom || path.oom || f.ops.oom || f.libs.oom
                ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who)
                : pd__write_atomic(p->who, path.s, text.s, text.len, 0644);
        pd__sb_free(&text);
        pd__sb_free(&path);
    }
    pd__sb_free(&f.ops);
    pd__sb_free(&f.libs);
    return s;
}

/* The check library of a static bundle under a name that holds its content hash,
 * out/lib<name>-<hash>.check.so (a hard link to the one Ninja made): a rebuilt bundle is a
 * new path, so dlopen cannot hand back the code of a check library loaded earlier in this
 * process. Older ones are removed. */
static pd_status check_library_path(const pd__plan *p, pd__sb *path)
{
    pd__sb built = {0}, dir = {0};
    pd__sb_addf(&built, "%s/", p->build_dir);
    pd__plan_check_library(p, &built);
    pd__sb_addf(&dir, "%s/out", p->build_dir);
    uint64_t h = 0;
    pd_status s = PD_OK;
    if (built.oom || dir.oom)
        s = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who);
    else if (!pd__hash_file(built.s, &h))
        s = pd__fail(PD_ERR_BUILD,
                     "%s: module '%s': the bundle's check library '%s' is "
                     "unreadable: %s",
                     p->who, p->name, built.s, strerror(errno));
    char keep[256];
    snprintf(keep, sizeof keep, "lib%s-%016llx.check.so", p->name, (unsigned long long)h);
    pd__sb_addf(path, "%s/%s", pd__sb_str(&dir), keep);
    if (s == PD_OK && link(built.s, path->s) != 0 && errno != EEXIST)
        s = pd__copy_atomic(p->who, built.s, path->s, 0700);
    DIR *d = s == PD_OK ? opendir(dir.s) : NULL;
    size_t prefix = strlen(p->name) + 4; /* "lib<name>-" */
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        const char *n = e->d_name;
        if (strlen(n) == prefix + 16 + 9 && strncmp(n, keep, prefix) == 0 &&
            strcmp(n + prefix + 16, ".check.so") == 0 && strcmp(n, keep) != 0)
            unlinkat(dirfd(d), n, 0);
    }
    if (d)
        closedir(d);
    pd__sb_free(&built);
    pd__sb_free(&dir);
    return s;
}

/* Builds, loads what was built into `reg` (a registry of its own when NULL), writes the
 * outputs; *out (when not NULL) gets the loaded module. */
static pd_status build_checked(const char *who, pd_registry *reg, const pd_jit_options *opts,
                               pd_module **out)
{
    if (opts == NULL || opts->struct_size <= offsetof(pd_jit_options, output) ||
        opts->output == NULL || *opts->output == '\0')
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: opts->output (where to place the result) is required", who);
    pd_jit_output_kind kind = opts->output_kind;
    if (kind != PD_JIT_SHARED && kind != PD_JIT_STATIC && kind != PD_JIT_ONNXRUNTIME)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: opts->output_kind %d is not PD_JIT_SHARED, PD_JIT_STATIC or "
                        "PD_JIT_ONNXRUNTIME",
                        who, (int)kind);
    pd_status s = check_output(who, opts->output);
    if (s != PD_OK)
        return s;
    pd__plan p;
    pd__manifest m;
    s = pd__jit_ensure_built(&p, who, opts, kind, &m);
    pd__sb built = {0}, check = {0};
    pd_registry *own = NULL;
    pd_module *mod = NULL;
    if (s == PD_OK) {
        pd__sb_addf(&built, "%s/%s", p.build_dir, m.library);
        if (kind != PD_JIT_SHARED) /* a bundle or an ORT library: its objects as a module */
            s = check_library_path(&p, &check);
        else
            pd__sb_addf(&check, "%s/%s", p.build_dir, m.library);
        if (s == PD_OK && (built.oom || check.oom))
            s = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
    if (s == PD_OK && reg == NULL && (s = pd_registry_create(&own)) == PD_OK)
        reg = own;
    if (s == PD_OK && (s = pd_module_load(reg, check.s, &mod)) != PD_OK) {
        pd__sb srcs = {0};
        for (int32_t i = 0; i < p.sources.n; ++i) {
            const char *base = strrchr(p.sources.v[i], '/');
            pd__sb_addf(&srcs, "%s%s", i ? " " : "", base ? base + 1 : p.sources.v[i]);
        }
        pd__fail_prefix("%s: module '%s' (sources: %s) was built but does not load, so nothing "
                        "was written (build directory %s): ",
                        who, p.name, pd__sb_str(&srcs), p.build_dir);
        pd__sb_free(&srcs);
    }
    if (s == PD_OK && kind == PD_JIT_STATIC)
        s = write_bundle_files(&p, opts->output, mod);
    if (s == PD_OK)
        s = pd__copy_atomic(who, built.s, opts->output, kind == PD_JIT_STATIC ? 0644 : 0755);
    if (s != PD_OK && mod != NULL && own == NULL) {
        pd_module_unload(mod);
        mod = NULL;
    }
    if (s == PD_OK && out)
        *out = mod;
    pd_registry_destroy(own);
    pd__sb_free(&built);
    pd__sb_free(&check);
    pd__manifest_free(&m);
    pd__plan_free(&p);
    return s;
}

pd_status pd_jit_build(const pd_jit_options *opts)
{
    return build_checked("pd_jit_build", NULL, opts, NULL);
}

pd_status pd_jit_build_load(pd_registry *reg, const pd_jit_options *opts, pd_module **out)
{
    if (reg == NULL || out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_jit_build_load: %s is NULL",
                        reg == NULL ? "reg" : "out");
    return build_checked("pd_jit_build_load", reg, opts, out);
}
