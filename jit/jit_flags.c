/*
 * jit_flags.c - the complete flag lists of a build plan: the JIT's defaults (the table in
 * docs/jit.md and pdext_jit.h), the SDK and user include directories, the user's flags after
 * the defaults (so they win), what a static bundle needs last (-fno-lto), the CUDA
 * architectures and runtime, and the libraries linked by default (-lm). Also the libraries a
 * program linking a static bundle needs, for its header and .pc.
 *
 * CUDA architectures: PDEXT_CUDA_ARCH when set (a list: "80;90", "sm_86", "native", "all");
 * else `-arch=native` when a GPU is visible to this process and the build is not portable,
 * so the code is made for the GPUs that will run it; else PD__DEFAULT_CUDA_ARCH, real code
 * for each plus PTX of the newest, which the driver compiles for GPUs newer than the list.
 * With `-arch=native` the visible GPUs' compute capabilities join the cache key (p->cuda_gpus),
 * so a cache shared between machines never serves one GPU's code to another.
 *
 * Why these defaults: -O3 -march=native (measured: a plain relu loop at -O2 runs at 0.14x
 * memcpy bandwidth, at -O3 -march=native 0.97x); -fPIC; -fvisibility=hidden, so that a
 * module exports only pdext_module_info and a bundle's kernels cannot clash with a
 * program's. `portable` (static bundles, PDEXT_JIT_PORTABLE=1) drops -march=native.
 */
#include "jit_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PD__DEFAULT_CUDA_ARCH "75;80;86;89;90"

/* The CUDA driver API's few calls used here (cuda.h is not needed to build pdext). */
typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_count_fn)(int *count);
typedef int (*cu_get_fn)(int *device, int ordinal);
typedef int (*cu_attr_fn)(int *value, int attribute, int device);
#define CU_ATTR_CC_MAJOR 75 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define CU_ATTR_CC_MINOR 76 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */

static char visible_gpus_list[128];
static pthread_once_t visible_gpus_once = PTHREAD_ONCE_INIT;

/* ISO C has no cast from an object pointer to a function pointer; POSIX guarantees the
 * representation is the same, so copy the bytes. */
static void driver_symbol(void *lib, const char *name, void *slot, size_t size)
{
    void *sym = dlsym(lib, name);
    memcpy(slot, &sym, size);
}

static void visible_gpus_probe(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        return; /* no driver: no GPU is visible */
    cu_init_fn init = NULL;
    cu_count_fn count = NULL;
    cu_get_fn get = NULL;
    cu_attr_fn attr = NULL;
    driver_symbol(lib, "cuInit", &init, sizeof init);
    driver_symbol(lib, "cuDeviceGetCount", &count, sizeof count);
    driver_symbol(lib, "cuDeviceGet", &get, sizeof get);
    driver_symbol(lib, "cuDeviceGetAttribute", &attr, sizeof attr);
    int n = 0;
    if (init && count && get && attr && init(0) == 0 && count(&n) == 0) {
        size_t len = 0;
        for (int i = 0; i < n; ++i) {
            int dev = 0, major = 0, minor = 0;
            if (get(&dev, i) != 0 || attr(&major, CU_ATTR_CC_MAJOR, dev) != 0 ||
                attr(&minor, CU_ATTR_CC_MINOR, dev) != 0)
                continue;
            int w = snprintf(visible_gpus_list + len, sizeof visible_gpus_list - len, "%ssm_%d%d",
                             len ? ";" : "", major, minor);
            if (w < 0 || (size_t)w >= sizeof visible_gpus_list - len) {
                visible_gpus_list[len] = '\0';
                break;
            }
            len += (size_t)w;
        }
    }
    /* The driver stays loaded: unloading it after cuInit is not supported. */
}

const char *pd__cuda_visible_gpus(void)
{
    pthread_once(&visible_gpus_once, visible_gpus_probe);
    return visible_gpus_list;
}

static void add_list(pd__strv *dst, const char *const *v, int32_t n)
{
    for (int32_t i = 0; v && i < n; ++i)
        if (v[i])
            pd__strv_add(dst, v[i]);
}

/* The last -march=/-mcpu= value decides whether the code is host-specific. */
static bool flags_native(const pd__strv *flags)
{
    bool native = false;
    for (int32_t i = 0; i < flags->n; ++i) {
        const char *f = flags->v[i];
        const char *eq = strchr(f, '=');
        if (eq && (!strncmp(f, "-march=", 7) || !strncmp(f, "-mcpu=", 6) ||
                   !strncmp(f, "-Xcompiler=-march=", 18)))
            native = strcmp(eq + 1, "native") == 0 ||
                     (strncmp(f, "-Xcompiler", 10) == 0 && strstr(f, "=native") != NULL);
    }
    return native;
}

static void add_cuda_arch(pd__plan *p)
{
    pd__strv *f = &p->cuda_flags;
    const char *arch = getenv("PDEXT_CUDA_ARCH");
    if ((arch == NULL || *arch == '\0') && !p->portable && *pd__cuda_visible_gpus() != '\0') {
        pd__strv_add(f, "-arch=native");
        snprintf(p->cuda_gpus, sizeof p->cuda_gpus, "%s", pd__cuda_visible_gpus());
        return;
    }
    if (arch == NULL || *arch == '\0')
        arch = PD__DEFAULT_CUDA_ARCH;
    char *list = strdup(arch);
    if (list == NULL) {
        f->oom = true;
        return;
    }
    char *save = NULL, *last = NULL;
    pd__sb g = {0};
    for (char *w = strtok_r(list, ";, ", &save); w; w = strtok_r(NULL, ";, ", &save)) {
        if (!strcmp(w, "native") || !strcmp(w, "all") || !strcmp(w, "all-major")) {
            g.len = 0;
            pd__sb_addf(&g, "-arch=%s", w);
            pd__strv_add(f, pd__sb_str(&g));
            continue;
        }
        if (!strncmp(w, "sm_", 3) || !strncmp(w, "compute_", 8))
            w = strchr(w, '_') + 1;
        char num[32];
        size_t k = 0;
        for (const char *c = w; *c && k + 1 < sizeof num; ++c)
            if (*c != '.')
                num[k++] = *c;
        num[k] = '\0';
        g.len = 0;
        pd__sb_addf(&g, "-gencode=arch=compute_%s,code=sm_%s", num, num);
        pd__strv_add(f, pd__sb_str(&g));
        free(last);
        last = strdup(num);
    }
    if (last) { /* PTX of the newest architecture, for GPUs newer than the list */
        g.len = 0;
        pd__sb_addf(&g, "-gencode=arch=compute_%s,code=compute_%s", last, last);
        pd__strv_add(f, pd__sb_str(&g));
    }
    free(last);
    pd__sb_free(&g);
    free(list);
}

/* The CUDA runtime's library directory next to nvcc (…/bin/nvcc -> …/lib64), or NULL. */
static char *cuda_lib_dir(const pd__tool *nvcc)
{
    if (nvcc->path == NULL)
        return NULL;
    char *root = strdup(nvcc->path);
    if (root == NULL)
        return NULL;
    for (int up = 0; up < 2; ++up) {
        char *slash = strrchr(root, '/');
        if (slash)
            *slash = '\0';
    }
    static const char *const subdirs[] = {"lib64", "lib", "targets/x86_64-linux/lib",
                                          "targets/sbsa-linux/lib"};
    for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; ++i) {
        pd__sb p = {0};
        pd__sb_addf(&p, "%s/%s/libcudart.so", root, subdirs[i]);
        struct stat st;
        if (!p.oom && stat(p.s, &st) == 0) {
            p.len -= strlen("/libcudart.so");
            p.s[p.len] = '\0';
            free(root);
            return p.s;
        }
        pd__sb_free(&p);
    }
    free(root);
    return NULL;
}

void pd__plan_flags(pd__plan *p, const pd_jit_options *opts)
{
    bool native = !p->portable;
    pd__strv *cc_lists[2] = {&p->cflags, &p->cxxflags};
    for (int l = 0; l < 2; ++l) {
        pd__strv_add(cc_lists[l], "-O3");
        if (native)
            pd__strv_add(cc_lists[l], "-march=native");
        pd__strv_add(cc_lists[l], "-fPIC");
        if (!p->default_visibility)
            pd__strv_add(cc_lists[l], "-fvisibility=hidden");
    }
    if (!p->default_visibility)
        pd__strv_add(&p->cxxflags, "-fvisibility-inlines-hidden");
    pd__strv_add(&p->cflags, "-std=gnu11");
    pd__strv_add(&p->cxxflags, "-std=c++20");
    static const char *const cuda[] = {"-O3", "-std=c++20", "-Xcompiler=-fPIC",
                                       "-Xcompiler=-fvisibility=hidden", "-Xcompiler=-O3"};
    for (size_t i = 0; i < sizeof cuda / sizeof cuda[0]; ++i)
        if (!p->default_visibility || strcmp(cuda[i], "-Xcompiler=-fvisibility=hidden") != 0)
            pd__strv_add(&p->cuda_flags, cuda[i]);
    if (native)
        pd__strv_add(&p->cuda_flags, "-Xcompiler=-march=native");
    if (p->uses[PD__LANG_CUDA]) {
        const char *cxx_env = getenv("CXX");
        if (cxx_env && *cxx_env && p->cxx.path) { /* nvcc's host compiler follows CXX */
            pd__strv_add(&p->cuda_flags, "-ccbin");
            pd__strv_add(&p->cuda_flags, p->cxx.path);
        }
        add_cuda_arch(p);
    }
    pd__sb inc = {0};
    pd__sb_addf(&inc, "-I%s", p->sdk_include ? p->sdk_include : "");
    pd__strv *lists[3] = {&p->cflags, &p->cxxflags, &p->cuda_flags};
    for (int l = 0; l < 3; ++l) {
        pd__strv_add(lists[l], pd__sb_str(&inc));
        for (int32_t i = 0; opts->include_dirs && i < opts->n_include_dirs; ++i) {
            /* Ninja runs the compiler in the build directory: a relative -I must be made
             * absolute against the caller's directory, as the sources are. */
            char *dir = pd__plan_absolute(opts->include_dirs[i] ? opts->include_dirs[i] : ".");
            pd__sb d = {0};
            pd__sb_addf(&d, "-I%s", dir ? dir : opts->include_dirs[i]);
            pd__strv_add(lists[l], pd__sb_str(&d));
            pd__sb_free(&d);
            free(dir);
        }
    }
    pd__sb_free(&inc);
    add_list(&p->cflags, opts->cflags, opts->n_cflags);
    add_list(&p->cxxflags, opts->cxxflags, opts->n_cxxflags);
    add_list(&p->cuda_flags, opts->cuda_flags, opts->n_cuda_flags);
    if (p->kind == PD_JIT_STATIC) { /* `ld -r` and objcopy need machine code, not LTO IR */
        pd__strv_add(&p->cflags, "-fno-lto");
        pd__strv_add(&p->cxxflags, "-fno-lto");
        pd__strv_add(&p->cuda_flags, "-Xcompiler=-fno-lto");
    }
    add_list(&p->ldflags, opts->ldflags, opts->n_ldflags);
    if (p->uses[PD__LANG_CUDA]) {
        char *lib = cuda_lib_dir(&p->nvcc);
        if (lib) {
            pd__sb d = {0};
            pd__sb_addf(&d, "-L%s", lib);
            pd__strv_add(&p->ldflags, pd__sb_str(&d));
            d.len = 0;
            pd__sb_addf(&d, "-Wl,-rpath,%s", lib);
            pd__strv_add(&p->ldflags, pd__sb_str(&d));
            pd__sb_free(&d);
            free(lib);
        }
        pd__strv_add(&p->ldflags, "-lcudart");
    }
    pd__strv_add(&p->ldflags, "-lm");
    p->native = (p->uses[PD__LANG_C] && flags_native(&p->cflags)) ||
                (p->uses[PD__LANG_CXX] && flags_native(&p->cxxflags)) ||
                (p->uses[PD__LANG_CUDA] && flags_native(&p->cuda_flags));
}

void pd__plan_bundle_libs(const pd__plan *p, pd__sb *out)
{
    if (p->uses[PD__LANG_CXX] || p->uses[PD__LANG_CUDA])
        pd__sb_add(out, " -lstdc++");
    if (p->uses[PD__LANG_CUDA]) {
        char *lib = cuda_lib_dir(&p->nvcc);
        if (lib)
            pd__sb_addf(out, " -L%s -Wl,-rpath,%s", lib, lib);
        free(lib);
        pd__sb_add(out, " -lcudart");
    }
    for (int32_t i = 0; i < p->opts->n_ldflags; ++i) /* libraries the caller links the code to */
        if (!strncmp(p->opts->ldflags[i], "-l", 2) || !strncmp(p->opts->ldflags[i], "-L", 2) ||
            !strncmp(p->opts->ldflags[i], "-Wl,-rpath,", 11))
            pd__sb_addf(out, " %s", p->opts->ldflags[i]);
    pd__sb_add(out, " -lm");
}
