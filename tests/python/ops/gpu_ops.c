/*
 * gpu_ops.c - a relu for test_device.py that runs on the CPU and on GPU places when the
 * simulated device serves as the CUDA plug-in (ds_sim_as_cuda): there GPU memory is sim
 * memory, so the kernel launches a host function on the call's stream (what a CUDA kernel
 * does with pd_stream(ctx)) over pd_sim_host_address of the tensors.
 */
#include "../../ops/sim_relu.h"

static void relu_kernel(pd_kernel_ctx *ctx) { sim_relu(ctx, pd_input(ctx, 0), pd_output(ctx, 0)); }

PD_BUILD_OP(custom_relu,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = relu_kernel);

/* Two inputs: Out = X (the runner refuses inputs on two places before the kernel runs). */
static void pair_kernel(pd_kernel_ctx *ctx) { pd_set_output(ctx, 0, pd_input(ctx, 0)); }

PD_BUILD_OP(custom_pair,
    .inputs = {"X", "Y"},
    .outputs = {"Out"},
    .kernel = pair_kernel);
