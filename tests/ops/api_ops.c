/*
 * api_ops.c - an op that reports what its module sees of the function table the runtime
 * handed it (tests/api_table_test.c): api_info(X) -> Info, int64 {struct_size, abi_major,
 * abi_minor, PD_API_HAS(parallel_for), the last member's slot is filled, extension blocks of
 * type 1 found}.
 */
#include "extension.h"

static void api_info_kernel(pd_kernel_ctx *ctx)
{
    (void)pd_input(ctx, 0);
    pd_tensor *info = pd_empty(ctx, PD_INT64, pd_place_cpu(), 1, (const int64_t[]){6});
    int64_t *v = (int64_t *)pd_data(info);
    v[0] = pd__api->struct_size;
    v[1] = pd__api->abi_major;
    v[2] = pd__api->abi_minor;
    v[3] = PD_API_HAS(pd__api, parallel_for);
    v[4] = pd__api->parallel_for != NULL && pd__api->cxx->parallel_for != NULL;
    v[5] = pd_api_ext_find(pd__api, 1) != NULL;
    pd_set_output(ctx, 0, info);
}

PD_BUILD_OP(api_info,
    .inputs = {"X"},
    .outputs = {"Info"},
    .kernel = api_info_kernel);
