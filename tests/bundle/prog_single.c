/*
 * prog_single.c - links the static bundle "alpha" (ops_scale.c + ops_neg.cc) and checks that
 * the one registration call registers every op, that they compute the right numbers, and
 * that a second call is a no-op returning the same module. bundle_test.c links it plain,
 * with --gc-sections, -static, -flto, lld, and with the archives in reversed order.
 */
#include "alpha.h"
#include "prog_util.h"

int main(void)
{
    pd_registry *reg = NULL;
    pd_module *m = NULL, *again = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return 2;
    pd_status s = pd_bundle_register_alpha(reg, &m);
    PROG_CHECK(s == PD_OK, "pd_bundle_register_alpha: %s", pd_last_error());
    PROG_CHECK(pd_registry_op_count(reg) == 3, "%d ops registered, expected 3",
               pd_registry_op_count(reg));
    PROG_CHECK(pd_op_find(reg, "bundle_scale") && pd_op_find(reg, "bundle_scale_grad") &&
                   pd_op_find(reg, "bundle_neg"),
               "missing op: %s", pd_last_error());
    PROG_CHECK(strcmp(pd_module_path(m), "bundle 'alpha' (libalpha.a)") == 0,
               "module origin is '%s'", pd_module_path(m));
    prog_check_op(reg, "bundle_scale", 2.0f, 0);
    prog_check_op(reg, "bundle_neg", -1.0f, 0);

    /* Registering again: nothing twice, the same module back. */
    s = pd_bundle_register_alpha(reg, &again);
    PROG_CHECK(s == PD_OK && again == m, "second registration: status %d, module %p vs %p: %s",
               (int)s, (void *)again, (void *)m, pd_last_error());
    PROG_CHECK(pd_registry_op_count(reg) == 3, "%d ops after the second call, expected 3",
               pd_registry_op_count(reg));
    pd_registry_destroy(reg);
    return prog_finish("prog_single");
}
