/* grad_only.c - the grad op of tm_split, whose forward op lives in forward_only.c: loads
 * only after that module. */
#include "extension.h"

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }

PD_BUILD_GRAD_OP(tm_split,
    .inputs = {PD_GRAD("Out")},
    .outputs = {PD_GRAD("X")},
    .attrs = {"axis: int64_t"},
    .kernel = noop);
