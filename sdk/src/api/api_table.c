/*
 * api_table.c - the one `const pd_api` table the runtime hands to every module it loads,
 * generated from the table's list (pd_api_list.h): each member holds the C implementation
 * its list line names.
 *
 * It is a constant: modules of any number of registries and threads share it, and it holds
 * no state of its own. This runtime defines no extension blocks, so `ext` is NULL.
 */
#include "call/kernel_ctx.h"

#define C_ENTRY(ret, member, params, args, failed, c_fn, cxx_fn) .member = c_fn,
#define C_ENTRY_VOID(member, params, args, c_fn, cxx_fn) .member = c_fn,
#define SHARED_ENTRY(ret, member, params, attrs, fn) .member = fn,

static const pd_api runtime_api = {.struct_size = sizeof(pd_api),
                                   .abi_major = PD_ABI_MAJOR,
                                   .abi_minor = PD_ABI_MINOR,
                                   .reserved = 0,
                                   .ext = NULL,
                                   .cxx = &pd__cxx_api,
                                   PD_API_LIST(C_ENTRY, C_ENTRY_VOID, SHARED_ENTRY)};

const pd_api *pd__runtime_api(void) { return &runtime_api; }

const pd_api *pd_runtime_api(void) { return &runtime_api; }
