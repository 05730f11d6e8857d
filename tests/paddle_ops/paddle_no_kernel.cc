/*
 * paddle_no_kernel.cc - a Paddle-style op whose builder never sets a kernel: the loader
 * refuses the module naming the op.
 */
#include "paddle/extension.h"

PD_BUILD_OP(pp_no_kernel).Inputs({"X"}).Outputs({"Out"});
