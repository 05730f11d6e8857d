/*
 * prog_own.c - a program with an op of its own (in its "pd_ops" section, registered with
 * pd_register_linked_ops) that also links the static bundle "alpha": the two tables stay
 * apart, because a bundle's table lives in a section of the bundle's own name. Each call
 * registers exactly its own ops, and the program's helper_factor() (a name alpha uses too)
 * is the program's.
 */
#include "extension.h"

#include "alpha.h"
#include "prog_util.h"

float helper_factor(void);
float helper_factor(void) { return 5.0f; }

static void own_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    const float *in = (const float *)pd_data(x);
    float *o = (float *)pd_data(out);
    for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
        o[i] = helper_factor() * in[i];
}

PD_BUILD_OP(program_own_op,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = own_kernel);

int main(void)
{
    pd_registry *reg = NULL;
    pd_module *own = NULL, *alpha = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return 2;
    PROG_CHECK(pd_register_linked_ops(reg, &own) == PD_OK, "own ops: %s", pd_last_error());
    PROG_CHECK(pd_module_op_count(own) == 1, "the program's table has %d ops, expected 1",
               pd_module_op_count(own));
    PROG_CHECK(pd_bundle_register_alpha(reg, &alpha) == PD_OK, "alpha: %s", pd_last_error());
    PROG_CHECK(pd_module_op_count(alpha) == 3, "alpha has %d ops, expected 3",
               pd_module_op_count(alpha));
    prog_check_op(reg, "program_own_op", 5.0f, 0);
    prog_check_op(reg, "bundle_scale", 2.0f, 0);
    pd_registry_destroy(reg);
    return prog_finish("prog_own");
}
