/*
 * strided_bad.c - a module whose op declares strided inputs wrongly, to test that the loader
 * refuses it: with BAD_FLAGS a flag bit no runtime knows, otherwise a strided_inputs bit past
 * the op's inputs.
 */
#include "extension.h"

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }

#ifdef BAD_FLAGS
PD_BUILD_OP(sb_op, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop, .flags = 0x10u);
#else
PD_BUILD_OP(sb_op, .inputs = {"X", "Y"}, .outputs = {"Out"}, .kernel = noop,
            .strided_inputs = PD_INPUT_BIT(0) | PD_INPUT_BIT(3));
#endif
