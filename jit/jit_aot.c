/*
 * jit_aot.c - the JIT front of the MindSpore AOT adapter (pd_jit_aot_build): a spec
 * "file.cc:F" becomes "<built library>:F" for pd_aot_load, which only loads libraries. The
 * compile lives here, not in libpdext_aot, so that the adapter (and every program that runs
 * AOT ops from a bundle) needs libpdext alone: no JIT, no zlib.
 */
#include "jit_internal.h"
#include "pdext_aot.h"

#include <stdlib.h>
#include <string.h>

#define WHO "pd_jit_aot_build"

static bool is_source(const char *path, size_t n)
{
    static const char *const exts[] = {".cc", ".cpp", ".cxx", ".c", ".cu"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; ++i) {
        size_t e = strlen(exts[i]);
        if (n > e && strncmp(path + n - e, exts[i], e) == 0)
            return true;
    }
    return false;
}

/* The module name of a source: "aot-" and its base name up to the first '.', other
 * characters than letters, digits and '-' made '_' (the JIT's names are identifiers). */
static void module_name(const char *file, char *name, size_t cap)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t n = (size_t)snprintf(name, cap, "aot-");
    for (const char *c = base; *c && *c != '.' && n + 1 < cap; ++c)
        name[n++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                                   (*c >= '0' && *c <= '9') || *c == '-'
                               ? *c
                               : '_');
    name[n] = '\0';
}

/* Builds `file` as MindSpore builds AOT sources and returns the library's path in *path. */
static pd_status build(const char *spec, const char *file, const pd_aot_options *o, char **path)
{
    char name[128];
    module_name(file, name, sizeof name);
    const char **cxxflags = malloc(sizeof(char *) * (size_t)(1 + o->n_compile_flags));
    if (cxxflags == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    cxxflags[0] = "-std=c++17";
    for (int32_t i = 0; i < o->n_compile_flags; ++i)
        cxxflags[1 + i] = o->compile_flags[i];
    const char *sources[] = {file};
    pd_jit_options j;
    memset(&j, 0, sizeof j);
    j.struct_size = sizeof j;
    j.name = name;
    j.sources = sources;
    j.n_sources = 1;
    j.cxxflags = cxxflags;
    j.n_cxxflags = 1 + o->n_compile_flags;
    j.cflags = o->compile_flags;
    j.n_cflags = o->n_compile_flags;
    j.cuda_flags = o->compile_flags;
    j.n_cuda_flags = o->n_compile_flags;
    j.build_dir = o->build_dir;
    j.default_visibility = true; /* F and its companions are found by name */
    pd_status s = pd_jit_build_library(&j, path);
    free(cxxflags);
    return s == PD_OK ? PD_OK : pd__fail_prefix(WHO ": %s: ", spec);
}

pd_status pd_jit_aot_build(const char *spec, const struct pd_aot_options *opts, char **library_spec)
{
    if (library_spec == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, WHO ": library_spec is NULL");
    *library_spec = NULL;
    size_t file_len;
    const char *func;
    if (!pd_aot_spec_split(spec, &file_len, &func))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": '%s' names no function; write FILE:FUNCTION (add.cc:CustomAdd)",
                        spec ? spec : "(null)");
    pd_aot_options o;
    pd_status read = pd__options_read(WHO, spec, "pd_aot_options", &o, sizeof o, opts);
    if (read != PD_OK)
        return read;
    if (o.n_compile_flags < 0 || (o.n_compile_flags > 0 && o.compile_flags == NULL))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": %s: n_compile_flags is %d%s; expected >= 0 flags", spec,
                        (int)o.n_compile_flags, o.compile_flags ? "" : " with compile_flags NULL");
    if (!is_source(spec, file_len)) { /* a library already: nothing to build */
        *library_spec = strdup(spec);
        return *library_spec ? PD_OK : pd__fail(PD_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    }
    char *file = strndup(spec, file_len), *path = NULL;
    if (file == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    pd_status s = build(spec, file, &o, &path);
    free(file);
    if (s != PD_OK)
        return s;
    pd__sb out = {0};
    pd__sb_addf(&out, "%s:%s", path, func);
    free(path);
    if (out.oom) {
        pd__sb_free(&out);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    }
    *library_spec = out.s;
    return PD_OK;
}
