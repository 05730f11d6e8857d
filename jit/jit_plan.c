/*
 * jit_plan.c - from pd_jit_options and the environment to a build plan: the module's build
 * directory, the absolute sources (files, and the files inline sources will be written to),
 * the tools and compiler launchers, the complete flag lists and the cache key. One plan
 * serves both kinds of output: a shared module and a static bundle differ only in their
 * flags and in the last steps of build.ninja (jit_ninja.c), never in how sources, compilers
 * or flags are found.
 *
 * The flag lists themselves are jit_flags.c's.
 *
 * A compiler launcher (ccache, distcc) is not part of the key: it must not change what is
 * built, only how fast.
 *
 * A little over 500 lines: the key must see every input the plan reads, so the reading and
 * the hashing stay side by side in one file.
 */
#include "jit_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PD__JIT_NAME_MAX 200

static bool name_is_safe(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > PD__JIT_NAME_MAX || name[0] == '.')
        return false;
    for (const char *c = name; *c; ++c) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.';
        if (!ok)
            return false;
    }
    return true;
}

/* A carriage return or newline would end a line of build.ninja or of the manifest. */
static pd_status refuse_line_break(const char *who, const char *what, const char *value)
{
    if (strpbrk(value, "\r\n") == NULL)
        return PD_OK;
    return pd__fail(PD_ERR_INVALID_ARGUMENT,
                    "%s: %s '%s' contains a %s; rename it or pass it without one", who, what, value,
                    strchr(value, '\r') ? "carriage return" : "newline");
}

char *pd__plan_absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == NULL)
        return NULL;
    pd__sb sb = {0};
    pd__sb_addf(&sb, "%s/%s", cwd, path);
    return sb.oom ? NULL : sb.s;
}

/* Computes build_dir (and the cache root when it is the default). */
static pd_status plan_dirs(pd__plan *p, const char *who, const pd_jit_options *opts)
{
    if (opts->build_dir && *opts->build_dir == '\0')
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: build_dir is an empty string; pass a directory, or NULL for the "
                        "cache directory",
                        who);
    if (opts->build_dir) {
        pd_status s = refuse_line_break(who, "build_dir", opts->build_dir);
        if (s != PD_OK)
            return s;
        p->dir_origin = "build_dir";
        p->build_dir = pd__plan_absolute(opts->build_dir);
        return p->build_dir
                   ? PD_OK
                   : pd__fail(PD_ERR_IO, "%s: cannot resolve build_dir '%s'", who, opts->build_dir);
    }
    pd__sb root = {0};
    const char *env = getenv("PDEXT_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (env && *env) {
        pd__sb_add(&root, env);
        p->dir_origin = "PDEXT_CACHE_DIR";
    } else if (xdg && *xdg == '/') {
        pd__sb_addf(&root, "%s/pdext", xdg);
        p->dir_origin = "XDG_CACHE_HOME";
    } else if (home && *home) {
        pd__sb_addf(&root, "%s/.cache/pdext", home);
        p->dir_origin = "HOME";
        if ((p->home = pd__plan_absolute(home)) == NULL)
            root.oom = true;
    } else {
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: no cache directory: set PDEXT_CACHE_DIR to a writable directory "
                        "(or XDG_CACHE_HOME or HOME), or pass a build directory (build_dir / "
                        "pdext --build-dir)",
                        who);
    }
    while (root.len > 1 && root.s[root.len - 1] == '/')
        root.s[--root.len] = '\0';
    p->cache_root = root.oom ? NULL : pd__plan_absolute(root.s);
    pd__sb_free(&root);
    if (p->cache_root == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    pd_status s = refuse_line_break(who, "the cache directory", p->cache_root);
    if (s != PD_OK)
        return s;
    pd__sb dir = {0};
    pd__sb_addf(&dir, "%s/%s", p->cache_root, p->name);
    p->build_dir = dir.s;
    p->default_dir = true;
    return dir.oom ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who) : PD_OK;
}

/* Marks the language of `src` as used; false for an unknown extension. */
static bool note_language(pd__plan *p, const char *src)
{
    const char *dot = strrchr(src, '.');
    const char *ext = dot ? dot + 1 : "";
    if (strcmp(ext, "c") == 0)
        p->uses[PD__LANG_C] = true;
    else if (!strcmp(ext, "cc") || !strcmp(ext, "cpp") || !strcmp(ext, "cxx"))
        p->uses[PD__LANG_CXX] = true;
    else if (strcmp(ext, "cu") == 0)
        p->uses[PD__LANG_CUDA] = true;
    else
        return false;
    return true;
}

static pd_status unknown_extension(const pd__plan *p, const char *what, const char *src)
{
    return pd__fail(PD_ERR_INVALID_ARGUMENT,
                    "%s: %s '%s' of module '%s' has an unknown extension; expected .c, .cc, "
                    ".cpp, .cxx or .cu",
                    p->who, what, src, p->name);
}

/* Inline source i is compiled from build_dir/src/<hash of its text>-<name>: a changed text
 * is a new file (so Ninja cannot mistake it for the old one by its time stamp) and the same
 * text the same file (a warm load). */
static pd_status plan_inline_source(pd__plan *p, const pd_jit_source *src, int32_t i)
{
    const char *name = src->name;
    if (name == NULL || *name == '\0' || strchr(name, '/') || name[0] == '.' || src->text == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: inline_sources[%d] of module '%s' needs a file name without '/' "
                        "(e.g. \"relu.c\") and a text; got name '%s'%s",
                        p->who, (int)i, p->name, name ? name : "(null)",
                        src->text ? "" : " and no text");
    pd_status s = refuse_line_break(p->who, "inline source name", name);
    if (s != PD_OK)
        return s;
    if (!note_language(p, name))
        return unknown_extension(p, "inline source", name);
    pd__sb path = {0};
    pd__sb_addf(&path, "%s/src/%016llx-%s", p->build_dir,
                (unsigned long long)pd__hash64(src->text, strlen(src->text), PD__HASH_SEED), name);
    pd__strv_add(&p->sources, pd__sb_str(&path));
    if (path.oom)
        p->sources.oom = true;
    pd__sb_free(&path);
    return PD_OK;
}

static pd_status plan_sources(pd__plan *p, const char *who, const pd_jit_options *opts)
{
    int32_t n_files = opts->sources ? opts->n_sources : 0;
    int32_t n_inline = opts->inline_sources ? opts->n_inline_sources : 0;
    if (n_files <= 0 && n_inline <= 0)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: module '%s' has no sources", who, p->name);
    for (int32_t i = 0; i < n_files; ++i) {
        const char *src = opts->sources[i];
        if (src == NULL || *src == '\0')
            return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: sources[%d] of module '%s' is empty", who,
                            (int)i, p->name);
        pd_status s = refuse_line_break(who, "source path", src);
        if (s != PD_OK)
            return s;
        if (!note_language(p, src))
            return unknown_extension(p, "source", src);
        char *abs = pd__abspath(src);
        if (abs == NULL)
            return pd__fail(errno == ENOENT ? PD_ERR_NOT_FOUND : PD_ERR_IO,
                            "%s: source file '%s' of module '%s': %s", who, src, p->name,
                            strerror(errno));
        pd__strv_add(&p->sources, abs);
        free(abs);
    }
    p->n_file_sources = p->sources.n;
    for (int32_t i = 0; i < n_inline; ++i) {
        pd_status s = plan_inline_source(p, &opts->inline_sources[i], i);
        if (s != PD_OK)
            return s;
    }
    return PD_OK;
}

static void key_tool(pd__sb *k, const char *what, const pd__tool *t)
{
    pd__sb_addf(k, "%s %s %lld %lld", what, t->path ? t->path : "(missing)", (long long)t->id.size,
                (long long)t->id.mtime_ns);
    for (int32_t i = 0; i < t->extra.n; ++i)
        pd__sb_addf(k, " %s", t->extra.v[i]);
    pd__sb_add(k, "\n");
}

static void key_list(pd__sb *k, const char *what, const pd__strv *v)
{
    pd__sb_add(k, what);
    for (int32_t i = 0; i < v->n; ++i)
        pd__sb_addf(k, " %s", v->v[i]);
    pd__sb_add(k, "\n");
}

/* Everything that decides the bytes of the result, hashed. Input contents are checked
 * separately (the manifest), so that headers found by depfiles count too. */
static uint64_t plan_key(const pd__plan *p)
{
    pd__sb k = {0};
    pd__sb_addf(&k, "pdext-jit 1\nsdk %s abi %d.%d\nname %s\n", PD_VERSION_STRING, PD_ABI_MAJOR,
                PD_ABI_MINOR, p->name);
    key_list(&k, "sources", &p->sources);
    pd__sb_addf(&k, "kind %d\n", (int)p->kind);
    /* The build rules are part of what decides the result. */
    pd__sb_addf(&k, "ninja template %016llx\n",
                (unsigned long long)pd__hash64(pd__tpl_ninja, strlen(pd__tpl_ninja),
                                               PD__HASH_SEED));
    if (p->uses[PD__LANG_C] || p->kind != PD_JIT_SHARED) {
        key_tool(&k, "cc", &p->cc);
        key_list(&k, "cflags", &p->cflags);
    }
    if (p->uses[PD__LANG_CXX] || p->uses[PD__LANG_CUDA]) {
        key_tool(&k, "cxx", &p->cxx);
        key_list(&k, "cxxflags", &p->cxxflags);
    }
    if (p->uses[PD__LANG_CUDA]) {
        key_tool(&k, "nvcc", &p->nvcc);
        key_list(&k, "cuda_flags", &p->cuda_flags);
        pd__sb_addf(&k, "gpus %s\n", p->cuda_gpus); /* what -arch=native compiled for */
    }
    key_list(&k, "ldflags", &p->ldflags);
    if (p->kind == PD_JIT_STATIC) {
        key_tool(&k, "ar", &p->ar);
        key_tool(&k, "ld", &p->ld);
        key_tool(&k, "objcopy", &p->objcopy);
        /* The registration source and link script come from templates built into us. */
        pd__sb_addf(&k, "bundle templates %016llx\n",
                    (unsigned long long)
                        pd__hash64(pd__tpl_bundle_register, strlen(pd__tpl_bundle_register),
                                   pd__hash64(pd__tpl_bundle_link, strlen(pd__tpl_bundle_link),
                                              PD__HASH_SEED)));
    }
    if (p->kind == PD_JIT_ONNXRUNTIME) {
        /* the entry point and version script come from templates; the archives are linked in */
        pd__sb_addf(&k, "onnxruntime domain %s templates %016llx\n", p->ort_domain,
                    (unsigned long long)pd__hash64(pd__tpl_bundle_ort, strlen(pd__tpl_bundle_ort),
                                                   pd__hash64(pd__tpl_bundle_ort_map,
                                                              strlen(pd__tpl_bundle_ort_map),
                                                              PD__HASH_SEED)));
        for (int32_t i = 0; i < p->ort_archives.n; ++i)
            pd__sb_addf(&k, "archive %s %lld %lld\n", p->ort_archives.v[i],
                        (long long)p->ort_archive_id[i].size,
                        (long long)p->ort_archive_id[i].mtime_ns);
    }
    if (p->native)
        pd__sb_addf(&k, "cpu %016llx\n", (unsigned long long)pd__cpu_identity());
    uint64_t h = pd__hash64(pd__sb_str(&k), k.len, PD__HASH_SEED);
    pd__sb_free(&k);
    return h;
}

/* PD_JIT_ONNXRUNTIME: the domain (checked: it is written into the entry point's source) and
 * the archives to link. */
static pd_status plan_onnxruntime(pd__plan *p, const char *who, const pd_jit_options *opts)
{
    p->ort_domain = "pdext";
    if (opts->struct_size > offsetof(pd_jit_options, onnxruntime_domain) &&
        opts->onnxruntime_domain != NULL)
        p->ort_domain = opts->onnxruntime_domain;
    const char *d = p->ort_domain;
    bool ok = *d != '\0';
    for (; *d && ok; ++d)
        ok = (*d >= 'a' && *d <= 'z') || (*d >= 'A' && *d <= 'Z') || (*d >= '0' && *d <= '9') ||
             *d == '_' || *d == '.' || *d == '-';
    if (!ok)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the ONNX Runtime domain '%s' of module '%s' is not a name of "
                        "letters, digits, '_', '.' and '-' (e.g. com.example.ops)",
                        who, p->ort_domain, p->name);
    pd_status s = pd__ort_archives(who, &p->ort_archives);
    for (int32_t i = 0; s == PD_OK && i < p->ort_archives.n && i < 2; ++i)
        pd__stat_file(p->ort_archives.v[i], &p->ort_archive_id[i]);
    return s;
}

pd_status pd__plan_dir(pd__plan *p, const char *who, const pd_jit_options *opts)
{
    memset(p, 0, sizeof *p);
    p->who = who;
    p->opts = &p->options;
    if (opts == NULL || opts->struct_size < sizeof(uint32_t) * 2)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: opts is NULL or its struct_size is unset",
                        who);
    /* Fields past the caller's struct_size (an older SDK) read as zero. */
    memcpy(&p->options, opts,
           opts->struct_size < sizeof p->options ? opts->struct_size : sizeof p->options);
    opts = p->opts;
    if (opts->name == NULL || !name_is_safe(opts->name))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: module name '%s' is not a safe file name: use 1 to %d letters, "
                        "digits, '_', '-' or '.', not starting with '.'",
                        who, opts->name ? opts->name : "(null)", PD__JIT_NAME_MAX);
    p->name = strdup(opts->name);
    if (p->name == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    return plan_dirs(p, who, opts);
}

/* PDEXT_COMPILER_LAUNCHER for every language, else CMake's per-language variable. */
static pd_status plan_launchers(pd__plan *p)
{
    static const char *const cmake_vars[3] = {"CMAKE_C_COMPILER_LAUNCHER",
                                              "CMAKE_CXX_COMPILER_LAUNCHER",
                                              "CMAKE_CUDA_COMPILER_LAUNCHER"};
    const char *all = getenv("PDEXT_COMPILER_LAUNCHER");
    for (int l = 0; l < 3; ++l) {
        const char *origin = "PDEXT_COMPILER_LAUNCHER";
        const char *v = all;
        if (v == NULL || *v == '\0') {
            origin = cmake_vars[l];
            v = getenv(origin);
        }
        if (v == NULL || *v == '\0')
            continue;
        if ((p->launcher[l] = strdup(v)) == NULL)
            return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who);
        if (v != all) /* CMake's variables are lists: "ccache;--flag" */
            for (char *c = p->launcher[l]; *c; ++c)
                if (*c == ';')
                    *c = ' ';
        p->launcher_origin[l] = origin;
    }
    return PD_OK;
}

static bool env_is_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

pd_status pd__plan_init(pd__plan *p, const char *who, const pd_jit_options *opts,
                        pd_jit_output_kind kind)
{
    pd_status s = pd__plan_dir(p, who, opts);
    if (s != PD_OK)
        return s;
    p->kind = kind;
    opts = p->opts;
    if (kind == PD_JIT_STATIC && !pd_name_is_identifier(p->name))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the name '%s' of a static bundle is not a C identifier (letters, "
                        "digits and '_', not starting with a digit): it names the "
                        "registration function pd_bundle_register_<name>",
                        who, p->name);
    s = plan_sources(p, who, opts);
    if (s == PD_OK && kind == PD_JIT_ONNXRUNTIME)
        s = plan_onnxruntime(p, who, opts);
    if (s != PD_OK)
        return s;
    p->portable = opts->portable || kind != PD_JIT_SHARED || env_is_set("PDEXT_JIT_PORTABLE");
    p->default_visibility = opts->default_visibility;
    const char *cc = getenv("CC"), *cxx = getenv("CXX"), *ar = getenv("AR");
    const char *ld = getenv("LD"), *objcopy = getenv("OBJCOPY");
    if (p->uses[PD__LANG_C] || kind != PD_JIT_SHARED) /* a bundle's registration is C */
        pd__tool_find(&p->cc, cc && *cc ? cc : "cc");
    if (p->uses[PD__LANG_CXX] || p->uses[PD__LANG_CUDA])
        pd__tool_find(&p->cxx, cxx && *cxx ? cxx : "c++");
    if (p->uses[PD__LANG_CUDA])
        pd__nvcc_find(&p->nvcc);
    if (kind == PD_JIT_STATIC) {
        pd__tool_find(&p->ar, ar && *ar ? ar : "ar");
        pd__tool_find(&p->ld, ld && *ld ? ld : "ld");
        pd__tool_find(&p->objcopy, objcopy && *objcopy ? objcopy : "objcopy");
    }
    s = plan_launchers(p);
    if (s == PD_OK)
        s = pd__sdk_include_dir(who, &p->sdk_include);
    if (s != PD_OK)
        return s;
    pd__plan_flags(p, opts);
    if (p->sources.oom || p->cflags.oom || p->cxxflags.oom || p->cuda_flags.oom || p->ldflags.oom)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    pd__strv *lists[4] = {&p->cflags, &p->cxxflags, &p->cuda_flags, &p->ldflags};
    for (int l = 0; l < 4; ++l)
        for (int32_t i = 0; i < lists[l]->n; ++i)
            if ((s = refuse_line_break(who, "flag", lists[l]->v[i])) != PD_OK)
                return s;
    p->key = plan_key(p);
    return PD_OK;
}

void pd__plan_free(pd__plan *p)
{
    free(p->name);
    free(p->build_dir);
    free(p->home);
    free(p->cache_root);
    pd__strv_free(&p->sources);
    pd__tool_free(&p->cc);
    pd__tool_free(&p->cxx);
    pd__tool_free(&p->nvcc);
    pd__tool_free(&p->ninja);
    pd__tool_free(&p->ar);
    pd__tool_free(&p->ld);
    pd__tool_free(&p->objcopy);
    for (int l = 0; l < 3; ++l)
        free(p->launcher[l]);
    free(p->sdk_include);
    pd__strv_free(&p->cflags);
    pd__strv_free(&p->cxxflags);
    pd__strv_free(&p->cuda_flags);
    pd__strv_free(&p->ldflags);
    pd__strv_free(&p->ort_archives);
    free(p->pch);
    pd__strv_free(&p->pch_sources);
    free(p->pch_todo);
    memset(p, 0, sizeof *p);
}

static pd_status missing_tool(const pd__plan *p, const char *what, const pd__tool *t,
                              const char *env, const char *package)
{
    return pd__fail(PD_ERR_UNAVAILABLE,
                    "%s: module '%s' needs the %s, but '%s' was not found (from %s); install "
                    "it (Debian package %s)%s%s",
                    p->who, p->name, what, t->spec ? t->spec : "?", env, package,
                    strcmp(env, "PATH") ? " or set " : "", strcmp(env, "PATH") ? env : "");
}

pd_status pd__plan_check_tools(pd__plan *p)
{
    const char *ninja = getenv("PDEXT_NINJA");
    pd__tool_find(&p->ninja, ninja && *ninja ? ninja : "ninja");
    if (p->ninja.path == NULL)
        return missing_tool(p, "Ninja build tool", &p->ninja,
                            ninja && *ninja ? "PDEXT_NINJA" : "PATH", "ninja-build");
    const char *cc = getenv("CC"), *cxx = getenv("CXX");
    if (p->uses[PD__LANG_C] && p->cc.path == NULL)
        return missing_tool(p, "C compiler", &p->cc, cc && *cc ? "CC" : "PATH", "gcc");
    if ((p->uses[PD__LANG_CXX] || p->uses[PD__LANG_CUDA]) && p->cxx.path == NULL)
        return missing_tool(p, "C++ compiler", &p->cxx, cxx && *cxx ? "CXX" : "PATH", "g++");
    if (p->uses[PD__LANG_CUDA] && p->nvcc.path == NULL)
        return pd__fail(PD_ERR_UNAVAILABLE,
                        "%s: module '%s' has CUDA sources (.cu) but the CUDA compiler nvcc was "
                        "not found (looked at NVCC, CUDA_HOME/bin, PATH, /usr/local/cuda/bin); "
                        "install the CUDA toolkit (Debian package nvidia-cuda-toolkit) or set "
                        "CUDA_HOME",
                        p->who, p->name);
    if (p->kind == PD_JIT_STATIC) {
        struct {
            const pd__tool *t;
            const char *env;
            const char *what;
        } bin[] = {{&p->ar, "AR", "archiver"},
                   {&p->ld, "LD", "linker ld"},
                   {&p->objcopy, "OBJCOPY", "objcopy tool"}};
        for (size_t i = 0; i < sizeof bin / sizeof bin[0]; ++i) {
            const char *set = getenv(bin[i].env);
            if (bin[i].t->path == NULL)
                return missing_tool(p, bin[i].what, bin[i].t, set && *set ? bin[i].env : "PATH",
                                    "binutils");
        }
    }
    for (int l = 0; l < 3; ++l) {
        if (p->launcher[l] == NULL || !p->uses[l])
            continue;
        pd__tool t;
        pd__tool_find(&t, p->launcher[l]);
        bool found = t.path != NULL;
        char *first = t.spec ? strdup(t.spec) : NULL;
        pd__tool_free(&t);
        if (first)
            first[strcspn(first, " \t")] = '\0';
        struct stat st;
        bool exists = first && strchr(first, '/') && stat(first, &st) == 0;
        pd_status s = PD_OK;
        if (!found)
            s = pd__fail(PD_ERR_UNAVAILABLE,
                         "%s: compiler launcher '%s' (from %s) %s; install it, fix the "
                         "variable or unset it",
                         p->who, p->launcher[l], p->launcher_origin[l],
                         exists ? "is not an executable program" : "was not found");
        free(first);
        if (s != PD_OK)
            return s;
    }
    return PD_OK;
}

/* --- facts of the plan that build.ninja and the manifest share ---------------------------- */

void pd__plan_check_library(const pd__plan *p, pd__sb *out)
{
    pd__sb_addf(out, "out/lib%s.check.so", p->name);
}

const char *pd__plan_output_ext(const pd__plan *p)
{
    /* an ONNX Runtime library is no module: its own suffix keeps it apart from a shared
     * module of the same name in the same directory */
    return p->kind == PD_JIT_STATIC ? "a" : (p->kind == PD_JIT_ONNXRUNTIME ? "ort.so" : "so");
}

char *pd__plan_object(const pd__plan *p, int32_t i)
{
    const char *src = p->sources.v[i];
    const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    pd__sb o = {0};
    pd__sb_addf(&o, "obj/%s-%08x.o", base,
                (unsigned)(pd__hash64(src, strlen(src), PD__HASH_SEED) & 0xffffffffu));
    return o.oom ? NULL : o.s;
}

/* True for a compiler that is likely a caching or distributing wrapper: CC="ccache gcc", or a
 * ccache/sccache/distcc masquerade symlink named gcc. Those cache compiles, not links. */
static bool tool_is_wrapper(const pd__tool *t)
{
    if (t->extra.n > 0)
        return true;
    char *real = t->path ? realpath(t->path, NULL) : NULL;
    const char *base = real ? strrchr(real, '/') + 1 : "";
    bool wrapper = strstr(base, "ccache") || strstr(base, "distcc");
    free(real);
    return wrapper;
}

bool pd__plan_links_directly(const pd__plan *p)
{
    /* A launcher (ccache) caches compiles, not links: it keeps the object. nvcc keeps it
     * too (its link goes through the C++ compiler). A bundle needs its objects. So does a
     * C++ source: one that declares functions nothing defines (a Paddle .cc whose .cu half
     * is not built) is linked once more with stubs (jit_stubs.c), and only a kept object
     * spares that second link a second compile of the source (seconds with
     * paddle/extension.h); the separate link costs one more driver run (milliseconds). */
    if (p->kind != PD_JIT_SHARED || p->sources.n != 1 || !p->uses[PD__LANG_C] ||
        p->uses[PD__LANG_CXX] || p->uses[PD__LANG_CUDA] || p->link_stubs)
        return false;
    if (p->launcher[PD__LANG_C] != NULL)
        return false;
    return !tool_is_wrapper(&p->cc);
}

char *pd__plan_depfile(const pd__plan *p, int32_t i)
{
    pd__sb d = {0};
    if (pd__plan_links_directly(p)) {
        pd__sb_addf(&d, "out/lib%s.so.d", p->name);
    } else {
        char *o = pd__plan_object(p, i);
        pd__sb_addf(&d, "%s.d", o ? o : "");
        if (o == NULL)
            d.oom = true;
        free(o);
    }
    if (d.oom) {
        pd__sb_free(&d);
        return NULL;
    }
    return d.s;
}
