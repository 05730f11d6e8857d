/*
 * grad_binding_split.c - a forward op and its grad op in different modules, for
 * grad_binding_test.c: the binding follows the forward op the grad op is linked to, also when
 * that op's module is unloaded and another version loaded. Built three times (GB_PART):
 *   1  gb_split_fwd_v1: gbs with inputs X, Y
 *   2  gb_split_fwd_v2: gbs with inputs Y, X (the same names, the other order)
 *   3  gb_split_grad:   gbs_grad with inputs Y, Out@GRAD and output Y@GRAD
 * The kernels exist for their declarations only.
 */
#include "extension.h"

static void not_run(pd_kernel_ctx *ctx)
{
    (void)ctx;
    PD_THROW("this op exists for its declaration only");
}

#if GB_PART == 1
PD_BUILD_OP(gbs, .inputs = {"X", "Y"}, .outputs = {"Out"}, .kernel = not_run,
            .flags = PD_OP_OUTPUTS_LIKE_INPUT0);
#elif GB_PART == 2
PD_BUILD_OP(gbs, .inputs = {"Y", "X"}, .outputs = {"Out"}, .kernel = not_run,
            .flags = PD_OP_OUTPUTS_LIKE_INPUT0);
#else
PD_BUILD_GRAD_OP(gbs, .inputs = {"Y", PD_GRAD("Out")}, .outputs = {PD_GRAD("Y")},
                 .kernel = not_run);
#endif
