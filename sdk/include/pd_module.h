/*
 * pd_module.h - how a module describes itself to the runtime.
 *
 * Every library (or executable) whose sources include extension.h exports one entry point,
 * pdext_module_info(), emitted by extension.h itself as a weak symbol, so all translation
 * units of a library agree on one and `cc -shared -fPIC op.c` needs no stub. It returns a
 * pd_module_info: the ABI version the module was built against, the bounds of its op table
 * (the "pd_ops" section), the slot where the runtime stores its function table, and for a
 * module with C++ code the hook that turns C++ exceptions into op errors.
 */
#ifndef PD_MODULE_H
#define PD_MODULE_H

#include "pd_api.h"
#include "pd_base.h"
#include "pd_op.h"

PD_EXTERN_C_BEGIN

/* A C++ module's invoke hook (extension.h emits it): the runtime calls the module's kernels
 * and infer functions through it. It runs fn(ctx) and returns 0; if fn throws, it catches the
 * exception, reports it with pd_api.report_error and returns nonzero. */
typedef int (*pd_invoke_fn)(pd_kernel_fn fn, pd_kernel_ctx *ctx);

/* Append-only; the runtime reads no field past struct_size. */
typedef struct pd_module_info {
    uint32_t struct_size;              /* sizeof(pd_module_info) where the module was built */
    uint32_t abi_major;                /* PD_ABI_MAJOR the module was built against */
    uint32_t abi_minor;                /* PD_ABI_MINOR the module was built against */
    const pd_op_def *const *ops_begin; /* first entry of the op table (NULL when empty) */
    const pd_op_def *const *ops_end;   /* one past the last entry */
    const pd_api **api_slot;           /* where the runtime stores its table (NULL: no ops) */
    const char *sdk_version;           /* PD_VERSION_STRING of the headers used */
    const char *compiler;              /* the compiler of the unit that emitted this block */
    pd_invoke_fn invoke;               /* C++ invoke hook; NULL: call op code directly */
} pd_module_info;

/* The entry point's name and type, for dlsym. */
#define PD_MODULE_ENTRY "pdext_module_info"
typedef const pd_module_info *(*pd_module_entry_fn)(void);

/* Bounds of the op table of the linking unit (library or executable); provided by the
 * linker when at least one op is linked in, NULL otherwise (hence weak). Hidden, so each
 * library sees its own table. */
extern const pd_op_def *const __start_pd_ops[] __attribute__((weak, visibility("hidden")));
extern const pd_op_def *const __stop_pd_ops[] __attribute__((weak, visibility("hidden")));

/* The C++ invoke hook of the linking unit: defined (weak, hidden) by extension.h in each C++
 * translation unit compiled with exceptions; NULL when none is linked in. */
#ifdef __cplusplus
#define PD__INVOKE_NOEXCEPT noexcept
#else
#define PD__INVOKE_NOEXCEPT
#endif
int pd__cxx_invoke(pd_kernel_fn fn, pd_kernel_ctx *ctx) PD__INVOKE_NOEXCEPT
    __attribute__((weak, visibility("hidden")));

PD_EXTERN_C_END

#endif /* PD_MODULE_H */
