/*
 * jit_tools.c - finding what a build needs without running anything: compilers, ninja and
 * nvcc by environment variable and PATH; the SDK headers; and the identities that join the
 * cache key. A compiler's identity is its resolved path plus the size and mtime of the
 * binary (an upgrade changes them), so the warm path never has to run `cc --version`. The
 * CPU's identity (vendor, model, feature bits) matters when code is generated for the host
 * (-march=native): a cache shared between machines must not serve one CPU's code to another.
 */
#include "jit_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#ifndef PDEXT_INSTALL_INCLUDE_DIR
#define PDEXT_INSTALL_INCLUDE_DIR ""
#endif
#ifndef PDEXT_SOURCE_INCLUDE_DIR
#define PDEXT_SOURCE_INCLUDE_DIR ""
#endif

/* True when `path` names an executable regular file. */
static bool is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* `word` searched in PATH (or taken as a path when it has a '/'), made absolute (Ninja runs
 * in the build directory); malloc'd or NULL. Symlinks are kept: a ccache symlink named gcc
 * must still be called gcc. */
static char *which(const char *word)
{
    pd__sb cand = {0};
    if (strchr(word, '/')) {
        if (word[0] != '/') {
            char cwd[4096];
            if (getcwd(cwd, sizeof cwd) == NULL)
                return NULL;
            pd__sb_addf(&cand, "%s/", cwd);
        }
        pd__sb_add(&cand, word);
        if (!cand.oom && is_executable(cand.s))
            return cand.s;
        pd__sb_free(&cand);
        return NULL;
    }
    const char *path = getenv("PATH");
    if (path == NULL || *path == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        cand.len = 0;
        if (n == 0 || p[0] != '/') /* relative PATH entries would depend on the cwd */
            goto next;
        pd__sb_addn(&cand, p, n);
        pd__sb_add(&cand, "/");
        pd__sb_add(&cand, word);
        if (!cand.oom && is_executable(cand.s))
            return cand.s;
    next:
        if (end == NULL)
            break;
        p = end + 1;
    }
    pd__sb_free(&cand);
    return NULL;
}

void pd__tool_free(pd__tool *t)
{
    free(t->path);
    free(t->spec);
    pd__strv_free(&t->extra);
    memset(t, 0, sizeof *t);
}

void pd__tool_find(pd__tool *t, const char *spec)
{
    memset(t, 0, sizeof *t);
    t->spec = strdup(spec);
    char *words = strdup(spec);
    if (words == NULL || t->spec == NULL) {
        free(words);
        return;
    }
    char *save = NULL;
    bool first = true;
    for (char *w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (first) {
            t->path = which(w);
            if (t->path && !pd__stat_file(t->path, &t->id))
                memset(&t->id, 0, sizeof t->id);
            first = false;
        } else {
            pd__strv_add(&t->extra, w);
        }
    }
    free(words);
}

void pd__nvcc_find(pd__tool *t)
{
    const char *env = getenv("NVCC");
    if (env && *env) {
        pd__tool_find(t, env);
        return;
    }
    const char *home = getenv("CUDA_HOME");
    if (home == NULL || *home == '\0')
        home = getenv("CUDA_PATH");
    if (home && *home) {
        pd__sb p = {0};
        pd__sb_addf(&p, "%s/bin/nvcc", home);
        pd__tool_find(t, pd__sb_str(&p));
        pd__sb_free(&p);
        if (t->path)
            return;
        pd__tool_free(t);
    }
    pd__tool_find(t, "nvcc");
    if (t->path)
        return;
    pd__tool_free(t);
    pd__tool_find(t, "/usr/local/cuda/bin/nvcc");
    if (t->path == NULL) {
        free(t->spec);
        t->spec = strdup("nvcc");
    }
}

static bool has_sdk_headers(const char *dir)
{
    if (dir == NULL || *dir == '\0')
        return false;
    pd__sb p = {0};
    pd__sb_addf(&p, "%s/extension.h", dir);
    struct stat st;
    bool ok = !p.oom && stat(p.s, &st) == 0;
    pd__sb_free(&p);
    return ok;
}

/* Any object of libpdext, for dladdr (ISO C has no function-to-object pointer cast). */
static const char anchor;

/* The directory of the shared libpdext_jit running this code (realpath, malloc'd), or NULL when
 * it is linked statically: then dladdr names the host's executable, and files found beside
 * that would give the same sources another -I (another cache key) than in a host that links it
 * shared, so both fall through to the same directories. An install and a wheel keep the
 * headers in <lib>/../include/pdext and the static archives in <lib>. */
static char *own_lib_dir(void)
{
    Dl_info info;
    const char *base = dladdr(&anchor, &info) && info.dli_fname ? strrchr(info.dli_fname, '/')
                                                                : NULL;
    if (base == NULL || strncmp(base + 1, "libpdext", 8) != 0)
        return NULL;
    char *dir = realpath(info.dli_fname, NULL);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = '\0';
    return dir;
}

/* Where the headers are, or NULL: a set PDEXT_INCLUDE_DIR is the only place looked at (a
 * wrong one must fail, not silently compile against other headers). */
static char *find_sdk_include_dir(void)
{
    /* An explicit override wins; then the headers that belong to the libpdext_jit.so
     * actually running (an install is <prefix>/lib/libpdext_jit.so beside
     * <prefix>/include/pdext); then the source tree when running from the build tree; then
     * the configured install dir. */
    const char *env = getenv("PDEXT_INCLUDE_DIR");
    if (env && *env)
        return has_sdk_headers(env) ? realpath(env, NULL) : NULL;
    char *lib = own_lib_dir(); /* NULL when linked statically (see there) */
    if (lib) {
        pd__sb p = {0};
        pd__sb_addf(&p, "%s/../include/pdext", lib);
        free(lib);
        char *found = has_sdk_headers(pd__sb_str(&p)) ? realpath(p.s, NULL) : NULL;
        pd__sb_free(&p);
        if (found)
            return found;
    }
    if (has_sdk_headers(PDEXT_SOURCE_INCLUDE_DIR))
        return realpath(PDEXT_SOURCE_INCLUDE_DIR, NULL);
    if (has_sdk_headers(PDEXT_INSTALL_INCLUDE_DIR))
        return realpath(PDEXT_INSTALL_INCLUDE_DIR, NULL);
    return NULL;
}

pd_status pd__sdk_include_dir(const char *who, char **dir)
{
    *dir = find_sdk_include_dir();
    if (*dir)
        return PD_OK;
    const char *env = getenv("PDEXT_INCLUDE_DIR");
    if (env && *env)
        return pd__fail(PD_ERR_NOT_FOUND,
                        "%s: PDEXT_INCLUDE_DIR is '%s', which holds no extension.h; point it "
                        "at the SDK's include directory (<prefix>/include/pdext) or unset it",
                        who, env);
    return pd__fail(PD_ERR_NOT_FOUND,
                    "%s: cannot find the pdext SDK headers (extension.h) next to libpdext "
                    "or in '%s'; set PDEXT_INCLUDE_DIR to the directory holding them",
                    who, PDEXT_INSTALL_INCLUDE_DIR);
}

/* The archives an ONNX Runtime library links, in link order. */
static const char *const ort_archive_names[] = {"libpdext_onnxruntime.a", "libpdext.a"};

static bool has_ort_archives(const char *dir)
{
    bool all = dir != NULL && *dir != '\0';
    for (size_t i = 0; all && i < 2; ++i) {
        pd__sb p = {0};
        pd__sb_addf(&p, "%s/%s", dir, ort_archive_names[i]);
        struct stat st;
        all = !p.oom && stat(p.s, &st) == 0 && S_ISREG(st.st_mode);
        pd__sb_free(&p);
    }
    return all;
}

pd_status pd__ort_archives(const char *who, pd__strv *out)
{
    /* As for the headers: beside the running libpdext_jit.so (an install or a wheel keeps
     * libpdext.a in the same lib directory), then the build tree, then the configured
     * install. */
    char *dir = own_lib_dir();
    if (dir != NULL && !has_ort_archives(dir)) {
        free(dir);
        dir = NULL;
    }
    if (dir == NULL && has_ort_archives(PDEXT_BUILD_LIB_DIR))
        dir = realpath(PDEXT_BUILD_LIB_DIR, NULL);
    if (dir == NULL && has_ort_archives(PDEXT_INSTALL_LIB_DIR))
        dir = realpath(PDEXT_INSTALL_LIB_DIR, NULL);
    if (dir == NULL)
        return pd__fail(PD_ERR_NOT_FOUND,
                        "%s: an ONNX Runtime library links libpdext_onnxruntime.a and libpdext.a, "
                        "but they are neither beside libpdext_jit nor in '%s'; install pdext "
                        "with its static libraries",
                        who, PDEXT_INSTALL_LIB_DIR);
    for (size_t i = 0; i < 2; ++i) {
        pd__sb p = {0};
        pd__sb_addf(&p, "%s/%s", dir, ort_archive_names[i]);
        pd__strv_add(out, pd__sb_str(&p));
        pd__sb_free(&p);
    }
    free(dir);
    return out->oom ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who) : PD_OK;
}

char *pd_jit_sdk_include_dir(void)
{
    char *dir = NULL;
    return pd__sdk_include_dir("pd_jit_sdk_include_dir", &dir) == PD_OK ? dir : NULL;
}

#if defined(__x86_64__) || defined(__i386__)
uint64_t pd__cpu_identity(void)
{
    /* Vendor, family/model/stepping and the feature words that -march=native looks at. */
    unsigned int regs[4 * 6] = {0};
    unsigned int *r = regs;
    __cpuid(0, r[0], r[1], r[2], r[3]);
    unsigned int max_leaf = r[0];
    r += 4;
    __cpuid(1, r[0], r[1], r[2], r[3]);
    r[1] &= 0x00ffffffu; /* drop the APIC id: it differs per core */
    r += 4;
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, r[0], r[1], r[2], r[3]);
        r += 4;
        __cpuid_count(7, 1, r[0], r[1], r[2], r[3]);
    }
    r += 4;
    unsigned int ext[4] = {0};
    __cpuid(0x80000000u, ext[0], ext[1], ext[2], ext[3]);
    if (ext[0] >= 0x80000001u)
        __cpuid(0x80000001u, r[0], r[1], r[2], r[3]);
    r += 4;
    if (max_leaf >= 0xd)
        __cpuid_count(0xd, 1, r[0], r[1], r[2], r[3]);
    return pd__hash64(regs, sizeof regs, PD__HASH_SEED);
}
#else
uint64_t pd__cpu_identity(void)
{
    /* Other architectures: the model and feature lines of /proc/cpuinfo (first CPU). */
    char *info = pd__read_file("/proc/cpuinfo", NULL);
    uint64_t h = PD__HASH_SEED;
    if (info == NULL)
        return h;
    static const char *const keys[] = {"model name", "Features",    "flags", "CPU implementer",
                                       "CPU part",   "CPU variant", "isa",   "uarch",
                                       "cpu model"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
        const char *line = strstr(info, keys[k]);
        if (line == NULL)
            continue;
        const char *end = strchr(line, '\n');
        h = pd__hash64(line, end ? (size_t)(end - line) : strlen(line), h);
    }
    free(info);
    return h;
}
#endif

int pd__compiler_major(const char *line, const char **family)
{
    *family = strstr(line, "clang") ? "clang" : (strstr(line, "nvcc") ? "nvcc" : "gcc");
    /* The first word that starts with a digit and has a dot: "12.2.0", "16.0.6". */
    for (const char *p = line; *p; ++p) {
        bool word_start = p == line || p[-1] == ' ' || p[-1] == '(';
        if (word_start && *p >= '0' && *p <= '9') {
            const char *q = p;
            while (*q >= '0' && *q <= '9')
                ++q;
            if (*q == '.')
                return atoi(p);
        }
    }
    return -1;
}
