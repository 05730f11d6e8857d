/*
 * abi_variant.c - a module with a hand-written entry point, to test the loader's ABI checks.
 * It does not include extension.h (whose weak pdext_module_info it replaces) and declares
 * TEST_ABI_MAJOR / TEST_ABI_MINOR, and with TEST_INFO_SIZE an info block of an older,
 * shorter layout (no sdk_version / compiler fields).
 */
#include "pd_module.h"

const pd_api *pd__api = NULL;

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }

PD_BUILD_OP(tm_abi_variant, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop);

#ifndef TEST_INFO_SIZE
#define TEST_INFO_SIZE sizeof(pd_module_info)
#endif

__attribute__((visibility("default"))) const pd_module_info *pdext_module_info(void)
{
    static const pd_module_info info = {TEST_INFO_SIZE, TEST_ABI_MAJOR, TEST_ABI_MINOR,
                                        __start_pd_ops, __stop_pd_ops,  &pd__api,
                                        "9.9.9",        "test",         NULL};
    return &info;
}
