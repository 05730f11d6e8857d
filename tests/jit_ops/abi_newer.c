/* abi_newer.c - JIT test fixture: a module that claims to need ABI minor PD_ABI_MINOR + 1,
 * as one built against a newer SDK would. It writes its own entry point instead of the one
 * extension.h emits. */
#define PDEXT_NO_MODULE_ENTRY 1
#include "extension.h"

__attribute__((visibility("hidden"))) const pd_api *pd__api = NULL;

static void newer_forward(pd_kernel_ctx *ctx) { (void)ctx; }

PD_BUILD_OP(jit_newer,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = newer_forward);

__attribute__((visibility("default"))) const pd_module_info *pdext_module_info(void);
__attribute__((visibility("default"))) const pd_module_info *pdext_module_info(void)
{
    static const pd_module_info info = {sizeof(pd_module_info),
                                        PD_ABI_MAJOR,
                                        PD_ABI_MINOR + 1,
                                        __start_pd_ops,
                                        __stop_pd_ops,
                                        &pd__api,
                                        "99.0.0",
                                        PD__COMPILER_ID,
                                        NULL};
    return &info;
}
