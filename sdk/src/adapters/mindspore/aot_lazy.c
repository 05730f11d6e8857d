/*
 * aot_lazy.c - loads the MindSpore AOT adapter on first use (aot_lazy.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "aot_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define AOT_SONAME "libpdext_aot.so.0"

static pd_aot_lazy entries;
static const pd_aot_lazy *found;
static char why_buf[2048];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Takes the entry points from an opened adapter; false (message in why_buf) if one lacks. */
static bool take_entries(void *lib, const char *path)
{
    void *load = dlsym(lib, "pd_aot_load"), *info = dlsym(lib, "pd_aot_op_info");
    if (load == NULL || info == NULL) {
        snprintf(why_buf, sizeof why_buf, "%.900s has no pd_aot_load / pd_aot_op_info: %.900s",
                 path, dlerror());
        return false;
    }
    memcpy(&entries.load, &load, sizeof load); /* object to function pointer, as POSIX allows */
    memcpy(&entries.op_info, &info, sizeof info);
    return true;
}

/* The adapter already in the process (a bundle linked it), so that there is one copy whose
 * ops all answer pd_aot_op_info; else the one built and installed with this libpdext, in its
 * directory: by its name alone, the loader could find another installation's (ld.so.cache,
 * /usr/local/lib), built against another pdext. Only when libpdext's directory cannot be
 * known is the name searched. */
static void load_once(void)
{
    char dir[768], path[1024];
    snprintf(path, sizeof path, AOT_SONAME);
    void *lib = dlopen(AOT_SONAME, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL && pd_runtime_dir(dir, sizeof dir))
        snprintf(path, sizeof path, "%.700s/" AOT_SONAME, dir);
    if (lib == NULL)
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(why_buf, sizeof why_buf,
                 "the MindSpore AOT adapter cannot be loaded: %.1500s; it is built and installed "
                 "next to libpdext (reinstall pdext)",
                 dlerror());
        return;
    }
    if (take_entries(lib, path))
        found = &entries;
}

const pd_aot_lazy *pd_aot_lazy_get(const char **why)
{
    pthread_once(&once, load_once);
    if (found == NULL && why != NULL)
        *why = why_buf;
    return found;
}

const pd_aot_lazy *pd_aot_lazy_loaded(void)
{
    void *lib = dlopen(AOT_SONAME, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL)
        return NULL;
    dlclose(lib); /* RTLD_NOLOAD took a reference; the library stays loaded by its other one */
    return pd_aot_lazy_get(NULL);
}
