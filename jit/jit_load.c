/*
 * jit_load.c - pd_jit_load and pd_jit_build_dir: sources in, a loaded module out, through a
 * cache that is cheap when warm and safe when cold (pd_jit_build, in jit_build.c, shares it
 * through pd__jit_ensure_built).
 *
 * Warm path: check the cache directory's ownership, read the manifest, stat the inputs; if
 * all is unchanged, load the recorded library. No subprocess, no lock.
 *
 * Cold path: take an flock on <build dir>/.lock (the kernel drops it when its holders die),
 * look again (another process may have just built it), write build.ninja, run Ninja, rename
 * the linked library to a content-addressed name (lib<name>-<hash of its bytes>.so), and
 * write the manifest last. A SIGKILL at any point leaves either the previous manifest or the
 * new one, each naming a complete library. A second lock (.busy) is inherited by Ninja and
 * the compilers; a loader that finds it still held after taking the first knows that a
 * loader was killed mid-build and kills its orphaned compilers, rather than waiting for them
 * or racing them on the same object files (jit_lock.c). A failure in a directory holding an
 * earlier build's files is retried once from a clean directory ("starting clean" below).
 *
 * Nothing in the build directory is used unchecked: the manifest and the library must be
 * regular files owned by the user and writable by nobody else, and the library must be the
 * very file that was published (jit_manifest.c); otherwise the module is rebuilt, and the
 * log says why.
 *
 * Reload: a changed module has a new library path, so dlopen maps the new code; its ops
 * replace those of the module loaded earlier from the same build directory in the same
 * registry (found by its library path, so the JIT keeps no global state). Loading an
 * unchanged module again into the same registry returns the module already loaded.
 *
 * Compiler check: C++ and CUDA modules share C++ runtime types with nothing in libpdext, but
 * op authors may mix them with C++ host code, and libstdc++'s ABI follows the compiler's
 * major version; so, like Paddle's GCC check, a C++ compiler whose family or major version
 * differs from the one that built libpdext gets a warning. C modules need none: the C ABI
 * and the pdext function table do not depend on the compiler version. So only C++ and CUDA
 * builds run `--version`; a C build records its compiler's identity as the cache key knows
 * it (resolved path, size and mtime of the binary), which costs a stat, not a process.
 *
 * The cold path's own cost is kept to what the build needs: one Ninja process, a shell that
 * execs each command, one compiler run for a single-source module (compile and link
 * together), no `--version` run for C, and publication by rename (no copy).
 */
#include "jit_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PDEXT_BUILT_CXX_ID
#define PDEXT_BUILT_CXX_ID "gcc"
#endif
#ifndef PDEXT_BUILT_CXX_MAJOR
#define PDEXT_BUILT_CXX_MAJOR 0
#endif

#define MAX_BUILD_OUTPUT (256 * 1024)

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What a directory failure's message adds: which directory it is, where its path came from
 * and what to do. */
static void dir_origin_hint(const pd__plan *p, pd__sb *why)
{
    if (!p->default_dir) {
        pd__sb_addf(why,
                    "the build directory '%s' was passed as build_dir (pdext "
                    "--build-dir): pass a writable one, or leave it unset to use the cache "
                    "directory (PDEXT_CACHE_DIR)",
                    p->build_dir);
        return;
    }
    pd__sb_addf(why,
                "the JIT cache directory '%s' comes from %s: set PDEXT_CACHE_DIR to a "
                "writable directory, or pass a build directory (build_dir / pdext "
                "--build-dir)",
                p->cache_root, p->dir_origin);
}

/* $HOME itself is never created (as root, mkdir would succeed and leave a stray home
 * directory behind): only the directories below it. */
static pd_status check_home(const pd__plan *p, const char *why)
{
    struct stat st;
    if (p->home == NULL)
        return PD_OK;
    bool exists = stat(p->home, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return PD_OK;
    return pd__fail(PD_ERR_IO, "%s: cannot create directory '%s': HOME '%s' %s; %s", p->who,
                    p->cache_root, p->home, exists ? "is not a directory" : "does not exist", why);
}

/* Creates the build directory and refuses unsafe ones (the cache root too). */
static pd_status prepare_dirs(const pd__plan *p)
{
    pd__sb why = {0};
    dir_origin_hint(p, &why);
    pd_status s = PD_OK;
    if (p->default_dir) {
        s = check_home(p, pd__sb_str(&why));
        if (s == PD_OK)
            s = pd__mkdirs(p->who, p->cache_root, pd__sb_str(&why));
        if (s == PD_OK)
            s = pd__check_private_dir(p->who, p->cache_root);
    }
    if (s == PD_OK)
        s = pd__mkdirs(p->who, p->build_dir, pd__sb_str(&why));
    pd__sb_free(&why);
    if (s == PD_OK)
        s = pd__check_private_dir(p->who, p->build_dir);
    return s;
}

/* Tells the log why a cache entry is rebuilt rather than used, when the reason is a fault of
 * a file (not the ordinary "an input changed"). */
static void log_untrusted(const pd__plan *p, const char *what, const char *file, const char *why)
{
    if (why != NULL)
        pd__jit_log(p,
                    "pdext: rebuilding module '%s': its %s '%s/%s' %s (the cache uses only "
                    "regular files that are yours alone and intact)",
                    p->name, what, p->build_dir, file, why);
}

/* Reads the plan's manifest into `m`; false (m empty) when there is none, it is unreadable
 * or untrusted (logged when `log` is set). */
static bool read_manifest(const pd__plan *p, pd__manifest *m, bool log)
{
    char *path = pd__manifest_path(p);
    const char *why = NULL;
    bool ok = path && pd__manifest_read(path, m, &why);
    if (log && path)
        log_untrusted(p, "manifest", strrchr(path, '/') + 1, why);
    free(path);
    return ok;
}

/* --- running Ninja ------------------------------------------------------------------------ */

typedef struct build_output {
    const pd__plan *p;
    pd__sb text;      /* everything but progress lines, for the error message */
    bool ninja_error; /* Ninja itself failed ("ninja: error: ..."), not a command it ran */
} build_output;

static bool is_progress(const char *line)
{
    return line[0] == '[' && strchr(line, '/') && strchr(line, ']');
}

static void on_ninja_line(void *user, const char *line)
{
    build_output *o = user;
    bool progress = is_progress(line);
    if (strncmp(line, "ninja: error:", 13) == 0)
        o->ninja_error = true;
    if (o->p->opts->log && (progress || o->p->opts->verbose))
        o->p->opts->log(o->p->opts->log_user, line);
    if (!progress && o->text.len < MAX_BUILD_OUTPUT) {
        pd__sb_add(&o->text, line);
        pd__sb_add(&o->text, "\n");
    }
}

/* First line of `tool --version` (nvcc: its "release" line); malloc'd or NULL. */
typedef struct first_line {
    char *line;
    bool nvcc;
} first_line;

static void on_version_line(void *user, const char *line)
{
    first_line *f = user;
    if (f->line && !(f->nvcc && strstr(line, "release")))
        return;
    free(f->line);
    f->line = strdup(line);
}

static char *tool_version(const pd__plan *p, const pd__tool *t, bool nvcc)
{
    char *argv[64];
    int n = 0;
    argv[n++] = t->path;
    for (int32_t i = 0; i < t->extra.n && n < 61; ++i)
        argv[n++] = t->extra.v[i];
    argv[n++] = (char *)"--version";
    argv[n] = NULL;
    first_line f = {NULL, nvcc};
    int code = 0;
    if (pd__spawn(p->who, argv, NULL, -1, p->interrupt_gen, on_version_line, &f, &code) != PD_OK ||
        code != 0) {
        free(f.line);
        return NULL;
    }
    return f.line;
}

/* "c <path> (<size> bytes, mtime <ns>)": what the key knows of a C compiler. */
static void record_identity(const char *lang, const pd__tool *t, pd__manifest *m)
{
    pd__sb line = {0};
    pd__sb_addf(&line, "%s %s (%lld bytes, mtime %lld)", lang, t->path ? t->path : "(missing)",
                (long long)t->id.size, (long long)t->id.mtime_ns);
    pd__strv_add(&m->versions, pd__sb_str(&line));
    pd__sb_free(&line);
}

/* Records compiler identities in the manifest and warns about a C++ compiler unlike ours. */
static void check_compilers(const pd__plan *p, pd__manifest *m)
{
    struct {
        bool used;
        const char *lang;
        const pd__tool *tool;
        bool nvcc;
    } tools[] = {{p->uses[PD__LANG_C], "c", &p->cc, false},
                 {p->uses[PD__LANG_CXX] || p->uses[PD__LANG_CUDA], "c++", &p->cxx, false},
                 {p->uses[PD__LANG_CUDA], "cuda", &p->nvcc, true}};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; ++i) {
        if (!tools[i].used)
            continue;
        if (strcmp(tools[i].lang, "c") == 0) { /* no ABI check for C: no process to run */
            record_identity(tools[i].lang, tools[i].tool, m);
            continue;
        }
        char *v = tool_version(p, tools[i].tool, tools[i].nvcc);
        pd__sb line = {0};
        pd__sb_addf(&line, "%s %s", tools[i].lang, v ? v : "(unknown)");
        pd__strv_add(&m->versions, pd__sb_str(&line));
        pd__sb_free(&line);
        const char *family;
        int major = v ? pd__compiler_major(v, &family) : -1;
        if (strcmp(tools[i].lang, "c++") == 0 && major > 0 && PDEXT_BUILT_CXX_MAJOR > 0 &&
            (major != PDEXT_BUILT_CXX_MAJOR || strcmp(family, PDEXT_BUILT_CXX_ID) != 0)) {
            pd__sb w = {0};
            pd__sb_addf(&w,
                        "pdext: warning: module '%s' is compiled with %s (%s), but libpdext "
                        "was built with %s %d; C++ and CUDA modules should use the same "
                        "compiler family and major version (the C++ standard library ABI may "
                        "differ): set CXX to a matching compiler",
                        p->name, tools[i].tool->path, v, PDEXT_BUILT_CXX_ID, PDEXT_BUILT_CXX_MAJOR);
            pd__strv_add(&m->warnings, pd__sb_str(&w));
            pd__sb_free(&w);
        }
        free(v);
    }
}

static pd_status run_ninja(const pd__plan *p, int busy_fd, bool *ninja_error)
{
    pd_status s = pd__plan_write_files(p);
    if (s != PD_OK)
        return s;

    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char jobs[32], target[512];
    snprintf(jobs, sizeof jobs, "-j%ld", cpus > 0 ? cpus : 1);
    snprintf(target, sizeof target, "out/lib%s.%s", p->name, pd__plan_output_ext(p));
    char *argv[64];
    int n = 0;
    argv[n++] = p->ninja.path;
    for (int32_t i = 0; i < p->ninja.extra.n && n < 58; ++i)
        argv[n++] = p->ninja.extra.v[i];
    argv[n++] = jobs;
    if (p->opts->verbose)
        argv[n++] = (char *)"-v";
    argv[n++] = target;
    argv[n] = NULL;

    build_output out = {p, {0}, false};
    int code = 0;
    s = pd__spawn(p->who, argv, p->build_dir, busy_fd, p->interrupt_gen, on_ninja_line, &out,
                  &code);
    *ninja_error = out.ninja_error;
    if (pd__interrupted(p->interrupt_gen))
        s = pd__interrupt_fail(p);
    else if (s == PD_OK && code != 0)
        s = pd__fail(PD_ERR_BUILD, "%s: building module '%s' failed (build directory %s):\n%s",
                     p->who, p->name, p->build_dir, pd__sb_str(&out.text));
    pd__sb_free(&out.text);
    return s;
}

/* Runs Ninja, and once more from a clean directory when that may help (jit_publish.c). */
/* p is not const: a build sets the plan's own build state (link_stubs, the precompiled
 * header's) as it goes. */
static pd_status build_in_dir(pd__plan *p, int busy_fd)
{
    bool ninja_error = false;
    pd_status s = run_ninja(p, busy_fd, &ninja_error);
    if (s == PD_ERR_BUILD && !pd__interrupted(p->interrupt_gen) &&
        pd__builddir_clean_helps(p, ninja_error)) {
        pd__jit_log(p,
                    "pdext: building module '%s' failed in a build directory holding an "
                    "earlier build's files; building it again from a clean directory",
                    p->name);
        pd__builddir_clean(p);
        s = run_ninja(p, busy_fd, &ninja_error);
    }
    bool stubs = false; /* functions declared but not built: link stubs (jit_stubs.c) */
    if (s == PD_OK && !p->link_stubs)
        s = pd__stubs_write(p, &stubs);
    if (s == PD_OK && stubs) {
        p->link_stubs = true;
        s = run_ninja(p, busy_fd, &ninja_error);
    }
    if (s == PD_OK)
        pd__builddir_unmark(p);
    return s;
}

/* Builds under the lock; `old` is the manifest the warm check found stale (or empty). */
static pd_status cold_build(pd__plan *p, const pd__manifest *old, bool have_old, pd__manifest *m)
{
    pd_status s = pd__plan_check_tools(p);
    if (s != PD_OK)
        return s;
    pd__manifest pre = {0};
    check_compilers(p, m);
    /* before the build's start time: files written after it count as changed during the
     * build (jit_publish.c), and the precompiled header's own lock keeps it apart from the
     * build directory's */
    pd__pch_prepare(p);
    int64_t start = now_ns();
    s = pd__inputs_hash_before(p, have_old ? old : NULL, &pre);
    for (int32_t i = 0; i < m->warnings.n; ++i)
        pd__jit_log(p, "%s", m->warnings.v[i]);
    int lock_fd = -1, busy_fd = -1;
    if (s == PD_OK && pd__interrupted(p->interrupt_gen))
        s = pd__interrupt_fail(p);
    if (s == PD_OK)
        s = pd__lock_build_dir(p, &lock_fd, &busy_fd);
    if (s == PD_OK) {
        /* Someone may have finished this very build while we waited for the lock. */
        pd__manifest cur = {0};
        bool have_cur = read_manifest(p, &cur, false);
        if (have_cur && pd__manifest_fresh(p, &cur, NULL)) {
            pd__manifest_free(m);
            *m = cur;
        } else {
            /* The manifest now in place (maybe newer than `old`, written while we waited)
             * names the library that readers may be opening right now: keep it. */
            if (have_cur && pd__inputs_went_back(&cur, &pre)) {
                pd__jit_log(p,
                            "pdext: module '%s': an input changed but is older than the "
                            "last build; building from a clean directory",
                            p->name);
                pd__builddir_clean(p);
            }
            s = build_in_dir(p, busy_fd);
            if (s == PD_OK)
                s = pd__inputs_record(p, &pre, start, m);
            /* Stopped after the build but before publication: still nothing is published. */
            if (s == PD_OK && pd__interrupted(p->interrupt_gen))
                s = pd__interrupt_fail(p);
            if (s == PD_OK)
                s = pd__library_publish(p, m, have_cur ? cur.library : NULL);
            pd__manifest_free(&cur);
        }
        close(busy_fd);
        close(lock_fd);
    }
    pd__manifest_free(&pre);
    /* after the build, failed or not (the next attempt wants it): no build waits for the
     * header, and this one's compile does not share the CPU with it */
    pd__pch_after_build(p);
    return s;
}

/* Resolves the plan and makes sure the manifest describes an up-to-date result. */
static pd_status ensure_built(pd__plan *p, const char *who, const pd_jit_options *opts,
                              pd_jit_output_kind kind, pd__manifest *m)
{
    memset(m, 0, sizeof *m);
    /* The generation at the start: an interrupt while planning stops this build too. */
    unsigned long gen = pd__interrupt_generation();
    pd_status s = pd__plan_init(p, who, opts, kind);
    p->interrupt_gen = gen;
    if (s == PD_OK)
        s = prepare_dirs(p);
    if (s != PD_OK)
        return s;
    /* Read once: a fresh manifest is the warm path; a stale one still tells the cold path
     * which inputs it need not hash again. */
    pd__manifest old;
    bool have_old = read_manifest(p, &old, true);
    const char *why = NULL;
    if (have_old && pd__manifest_fresh(p, &old, &why)) {
        *m = old;
        for (int32_t i = 0; i < m->warnings.n; ++i)
            pd__jit_log(p, "%s", m->warnings.v[i]);
        return PD_OK;
    }
    if (have_old)
        log_untrusted(p, "library", old.library, why);
    pd__interrupt_begin();
    s = cold_build(p, &old, have_old, m);
    pd__interrupt_end();
    pd__manifest_free(&old);
    if (s != PD_OK)
        pd__manifest_free(m);
    return s;
}

/* The module of `reg` loaded earlier from this build directory, or NULL. */
static pd_module *previous_module(const pd__plan *p, pd_registry *reg)
{
    pd__sb prefix = {0};
    pd__sb_addf(&prefix, "%s/lib%s-", p->build_dir, p->name);
    pd_module *found = NULL;
    int32_t n = pd_registry_op_count(reg);
    for (int32_t i = 0; i < n && !prefix.oom && found == NULL; ++i) {
        const pd_op *op = pd_registry_op_at(reg, i);
        const pd_module *mod = op ? pd_op_module(op) : NULL;
        const char *path = mod ? pd_module_path(mod) : NULL;
        size_t len = path ? strlen(path) : 0;
        if (path && strncmp(path, prefix.s, prefix.len) == 0 && len == prefix.len + 16 + 3 &&
            strcmp(path + len - 3, ".so") == 0)
            found = (pd_module *)mod;
    }
    pd__sb_free(&prefix);
    return found;
}

/* --- public API --------------------------------------------------------------------------- */

/* One attempt of pd_jit_load; *vanished tells that the library named by the manifest was
 * deleted between reading the manifest and opening it (a concurrent rebuild). */
static pd_status load_once(pd_registry *reg, const pd_jit_options *opts, pd_module **out,
                           bool *vanished)
{
    pd__plan p;
    pd__manifest m;
    pd_status s = ensure_built(&p, "pd_jit_load", opts, PD_JIT_SHARED, &m);
    if (s == PD_OK) {
        pd__sb path = {0};
        pd__sb_addf(&path, "%s/%s", p.build_dir, m.library);
        pd_module *prev = previous_module(&p, reg);
        pd__file_stat st;
        if (path.oom)
            s = pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_jit_load: out of memory");
        else if (prev && strcmp(pd_module_path(prev), path.s) == 0)
            *out = prev; /* unchanged: the module already loaded is the right one */
        else if ((s = pd__module_load_replacing(reg, path.s, prev, out)) != PD_OK) {
            /* Another thread may have loaded this very library into reg meanwhile. */
            pd_module *now = s == PD_ERR_ALREADY_EXISTS ? previous_module(&p, reg) : NULL;
            if (now && strcmp(pd_module_path(now), path.s) == 0) {
                *out = now;
                s = PD_OK;
                goto done;
            }
            *vanished = s == PD_ERR_NOT_FOUND && !pd__stat_file(path.s, &st);
            pd__fail_prefix("pd_jit_load: module '%s' (build directory %s): ", p.name, p.build_dir);
        }
    done:
        pd__sb_free(&path);
    }
    pd__manifest_free(&m);
    pd__plan_free(&p);
    return s;
}

pd_status pd_jit_load(pd_registry *reg, const pd_jit_options *opts, pd_module **out)
{
    if (reg == NULL || out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_jit_load: %s is NULL",
                        reg == NULL ? "reg" : "out");
    if (opts && opts->struct_size > offsetof(pd_jit_options, output_kind) &&
        opts->output_kind != PD_JIT_SHARED)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "pd_jit_load: opts->output_kind must be PD_JIT_SHARED (a static "
                        "archive cannot be loaded; use pd_jit_build)");
    bool vanished = false;
    pd_status s = load_once(reg, opts, out, &vanished);
    if (vanished) /* another process rebuilt it meanwhile: its manifest names the new one */
        s = load_once(reg, opts, out, &vanished);
    return s;
}

pd_status pd__jit_ensure_built(pd__plan *p, const char *who, const pd_jit_options *opts,
                               pd_jit_output_kind kind, pd__manifest *m)
{
    return ensure_built(p, who, opts, kind, m);
}

pd_status pd_jit_build_library(const pd_jit_options *opts, char **path)
{
    if (path == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_jit_build_library: path is NULL");
    pd__plan p;
    pd__manifest m;
    pd_status s = ensure_built(&p, "pd_jit_build_library", opts, PD_JIT_SHARED, &m);
    if (s == PD_OK) {
        pd__sb full = {0};
        pd__sb_addf(&full, "%s/%s", p.build_dir, m.library);
        if (full.oom)
            s = pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_jit_build_library: out of memory");
        else {
            *path = full.s;
            full.s = NULL;
        }
        pd__sb_free(&full);
    }
    pd__manifest_free(&m);
    pd__plan_free(&p);
    return s;
}

char *pd_jit_build_dir(const pd_jit_options *opts)
{
    /* Resolves just the directory: sources need not exist yet. */
    pd__plan p;
    char *dir = NULL;
    if (pd__plan_dir(&p, "pd_jit_build_dir", opts) == PD_OK) {
        dir = p.build_dir;
        p.build_dir = NULL;
    }
    pd__plan_free(&p);
    return dir;
}
