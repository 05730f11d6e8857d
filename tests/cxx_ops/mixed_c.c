/*
 * mixed_c.c - the C half of the mixed C/C++ test modules (tests/cxx_errors.cmake links it
 * with mixed_cxx.cc, once in each order, so either unit's weak info block may be the one the
 * linker keeps). Its C ops fail the C way, with a jump that crosses the C++ invoke hook's
 * frame (which holds nothing to destroy); the same misuse as a C++ op gives the same message.
 */
#include "extension.h"

static void c_check_kernel(pd_kernel_ctx *ctx)
{
    PD_CHECK(pd_numel(pd_input(ctx, 0)) < 0); /* @line:c_check */
}

static void c_table_misuse_kernel(pd_kernel_ctx *ctx) { (void)pd_output(ctx, 5); }

static void c_table_oom_kernel(pd_kernel_ctx *ctx) { (void)pd_scratch(ctx, SIZE_MAX); }

PD_BUILD_OP(mixed_c_check, .inputs = {"X"}, .outputs = {"Out"}, .kernel = c_check_kernel);
PD_BUILD_OP(mixed_c_table_misuse, .inputs = {"X"}, .outputs = {"Out"},
            .kernel = c_table_misuse_kernel);
PD_BUILD_OP(mixed_c_table_oom, .inputs = {"X"}, .outputs = {"Out"},
            .kernel = c_table_oom_kernel);
