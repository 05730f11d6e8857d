/*
 * paddle_bad_inplace.cc - a Paddle-style op whose inplace map names an input it does not
 * declare: the loader refuses the module.
 */
#include "paddle/extension.h"

void Scale(paddle::Tensor &x) { (void)x; }

// clang-format off
PD_BUILD_OP(pp_bad_inplace)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetInplaceMap({{"Z", "Out"}})
    .SetKernelFn(PD_KERNEL(Scale));
// clang-format on
