/*
 * paddle_linked.cc - a Paddle-style op linked into paddle_front_test itself: its pd_op_def is
 * filled by a static initializer, which runs before main, so pd_register_linked_ops finds it
 * complete.
 */
#include "paddle/extension.h"

std::vector<paddle::Tensor> TwiceForward(const paddle::Tensor &x) { return {x * 2.0}; }

PD_BUILD_OP(pp_linked_twice).Inputs({"X"}).Outputs({"Out"}).SetKernelFn(PD_KERNEL(TwiceForward));
