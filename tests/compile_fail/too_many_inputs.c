/*
 * too_many_inputs.c - PD_BUILD_OP with PD_MAX_INPUTS (16) inputs, or 17 when PD_TEST_17_INPUTS
 * is defined. Compiled as C, C++ and CUDA by tests/compile_fail/expect_compile.cmake (see
 * tests/headers.cmake): 16 must compile warning-free, 17 must fail naming the limit.
 */
#include "extension.h"

static void kernel(pd_kernel_ctx *ctx) { (void)ctx; }

#ifdef PD_TEST_17_INPUTS
#define EXTRA_INPUT , "Q"
#else
#define EXTRA_INPUT
#endif

PD_BUILD_OP(many_inputs,
    .inputs = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O",
               "P" EXTRA_INPUT},
    .outputs = {"Out"},
    .kernel = kernel);
