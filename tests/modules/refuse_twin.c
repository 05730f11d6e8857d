/* refuse_twin.c - a second translation unit defining tm_twice, linked with refuse.c built
 * with REFUSE_DUP_WITHIN: one library, the same op twice. */
#include "extension.h"

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }

PD_BUILD_OP(tm_twice, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop);
