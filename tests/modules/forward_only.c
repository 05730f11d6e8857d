/* forward_only.c - forward op tm_split alone (its grad op is in grad_only.c). */
#include "extension.h"

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }

PD_BUILD_OP(tm_split,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"axis: int64_t", "keep: bool"},
    .kernel = noop);
