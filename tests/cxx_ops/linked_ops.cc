/* linked_ops.cc - a C++ op linked into cxx_errors_test itself: pd_register_linked_ops (pdext.h)
 * must hand the program's C++ invoke hook to the runtime too. */
#include "extension.h"

#include <stdexcept>
#include <vector>

static void linked_throw_kernel(pd_kernel_ctx *ctx)
{
    std::vector<int> held(16, 1);
    (void)ctx;
    throw std::runtime_error("thrown by an op linked into the program");
}

PD_BUILD_OP(cxx_linked_throw, .inputs = {"X"}, .outputs = {"Out"}, .kernel = linked_throw_kernel);
