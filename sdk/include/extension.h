/*
 * extension.h - the op author's single include.
 *
 * Pulls in data types (pd_dtype.h), places (pd_place.h), tensors (pd_tensor.h), op
 * definitions (pd_op.h), the runtime's function table with PD_CHECK / PD_THROW and the kernel
 * context wrappers (pd_api.h), the PD_DISPATCH_* macros (pd_dispatch.h) and the module info
 * format (pd_module.h). Compiles as C11, C++ (11 to 20) and CUDA C++, warning-free under
 * -Wall -Wextra -Werror.
 *
 * Including it also emits, once per library thanks to weak linkage:
 *   - `pd__api`, the hidden slot where the runtime stores its function table;
 *   - `pdext_module_info()`, the exported entry point the loader looks up;
 *   - in C++ translation units compiled with exceptions, `pd__cxx_invoke`, the hook through
 *     which the runtime calls the module's kernels: it turns C++ exceptions into op errors
 *     (pd_api.h, "Errors"). Every unit's info block names it through a weak reference, so a
 *     library with any C++ unit gets it whichever unit's block the linker keeps, and a
 *     C-only library reads NULL there.
 * So a library built with plain `cc -shared -fPIC -I<sdk>/include op.c` is a complete module:
 * no stub file, no -lpdext.
 *
 * A host program embeds the runtime through pdext.h instead (it may include both).
 */
#if defined(PDEXT_PADDLE_EXTENSION_H) && !defined(PD__PADDLE_FRONT)
#error \
    "extension.h and paddle/extension.h cannot be included in one translation unit: their PD_BUILD_OP, PD_CHECK, PD_THROW and PD_DISPATCH_* macros have the same names (include one of them)"
#endif
#ifndef PDEXT_EXTENSION_H
#define PDEXT_EXTENSION_H

#include "pd_api.h"
#include "pd_base.h"
#include "pd_dispatch.h"
#include "pd_dtype.h"
#include "pd_module.h"
#include "pd_op.h"
#include "pd_place.h"
#include "pd_tensor.h"

#ifndef PDEXT_NO_MODULE_ENTRY /* defined by libpdext's own sources, which are no module */
PD_EXTERN_C_BEGIN

__attribute__((weak, visibility("hidden"))) const pd_api *pd__api = NULL;

__attribute__((weak, visibility("default"))) const pd_module_info *pdext_module_info(void);
__attribute__((weak, visibility("default"))) const pd_module_info *pdext_module_info(void)
{
    static const pd_module_info info = {sizeof(pd_module_info), PD_ABI_MAJOR,    PD_ABI_MINOR,
                                        __start_pd_ops,         __stop_pd_ops,   &pd__api,
                                        PD_VERSION_STRING,      PD__COMPILER_ID, pd__cxx_invoke};
    return &info;
}

#ifdef PD__CXX_EXCEPTIONS
/* Runs op code, catching what it throws: the error is reported, and the exception object gone,
 * before the runtime's C frames get control back. */
__attribute__((weak, visibility("hidden"))) int pd__cxx_invoke(pd_kernel_fn fn,
                                                               pd_kernel_ctx *ctx) noexcept
{
    try {
        fn(ctx);
        return 0;
    } catch (...) {
        pd__cxx_report_current(ctx);
    }
    return 1;
}
#endif

PD_EXTERN_C_END
#endif

#endif /* PDEXT_EXTENSION_H */
