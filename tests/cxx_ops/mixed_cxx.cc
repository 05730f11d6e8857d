/* mixed_cxx.cc - the C++ half of the mixed C/C++ test modules (see mixed_c.c): a kernel that
 * throws a std::exception, caught by the hook whichever unit's info block names it. */
#include "extension.h"

#include <stdexcept>
#include <string>

static void cxx_throw_kernel(pd_kernel_ctx *ctx)
{
    std::string text = "mixed module ";
    text += pd_op_name_of(ctx);
    throw std::invalid_argument(text);
}

PD_BUILD_OP(mixed_cxx_throw, .inputs = {"X"}, .outputs = {"Out"}, .kernel = cxx_throw_kernel);
