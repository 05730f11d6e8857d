/*
 * runtime_dir.c - the one answer to "where was libpdext loaded from": the directory its plug-ins
 * (libpdext_cuda.so, libpdext_aot.so.0) are looked for in first, because the build and the
 * install put them there and a search by name could find another installation's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "pd_internal.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

bool pd_runtime_dir(char *dir, size_t size)
{
    Dl_info info;
    if (dir == NULL || size == 0 || !dladdr((void *)(uintptr_t)&pd_runtime_dir, &info) ||
        info.dli_fname == NULL)
        return false;
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash == NULL || (size_t)(slash - info.dli_fname) >= size)
        return false;
    memcpy(dir, info.dli_fname, (size_t)(slash - info.dli_fname));
    dir[slash - info.dli_fname] = '\0';
    return true;
}
