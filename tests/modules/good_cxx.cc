/* good_cxx.cc - a module written in C++: PD_BUILD_OP and PD_BUILD_GRAD_OP in C++20. */
#include "extension.h"

#include <vector>

static void scale_kernel(pd_kernel_ctx *ctx)
{
    std::vector<int> unused(1); // any C++ is fine in a kernel
    (void)unused;
    (void)ctx;
}

PD_BUILD_OP(tm_cxx_scale,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"factor: double", "tags: std::vector<std::string>"},
    .kernel = scale_kernel);

PD_BUILD_GRAD_OP(tm_cxx_scale,
    .inputs = {PD_GRAD("Out")},
    .outputs = {PD_GRAD("X")},
    .attrs = {"factor: double"},
    .kernel = scale_kernel);
