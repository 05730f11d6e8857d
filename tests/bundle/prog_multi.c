/*
 * prog_multi.c - two bundles in one program, and a third that clashes.
 *   prog_multi two: "alpha" and "beta" (whose kernel and helper names equal alpha's) register
 *                   separately, and each op uses its own bundle's helper (2x vs 3x).
 *   prog_multi dup: "gamma" defines bundle_scale like "alpha": registering it after alpha
 *                   fails with PD_ERR_ALREADY_EXISTS naming the op and both bundles, and
 *                   registers nothing of gamma. The message is printed for the test to read.
 */
#include "alpha.h"
#include "beta.h"
#include "gamma.h"
#include "prog_util.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "two";
    pd_registry *reg = NULL;
    pd_module *a = NULL, *b = NULL, *g = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return 2;
    PROG_CHECK(pd_bundle_register_alpha(reg, &a) == PD_OK, "alpha: %s", pd_last_error());
    if (strcmp(mode, "two") == 0) {
        PROG_CHECK(pd_bundle_register_beta(reg, &b) == PD_OK, "beta: %s", pd_last_error());
        PROG_CHECK(a != b && pd_module_op_count(a) == 3 && pd_module_op_count(b) == 1,
                   "modules: alpha %d ops, beta %d ops", pd_module_op_count(a),
                   pd_module_op_count(b));
        PROG_CHECK(pd_op_module(pd_op_find(reg, "bundle_triple")) == b,
                   "bundle_triple is not beta's");
        prog_check_op(reg, "bundle_scale", 2.0f, 0);
        prog_check_op(reg, "bundle_triple", 3.0f, 0);
        PROG_CHECK(pd_module_unload(b) == PD_OK, "unload beta: %s", pd_last_error());
        PROG_CHECK(pd_op_find(reg, "bundle_triple") == NULL, "beta's op outlived its unload");
        PROG_CHECK(pd_bundle_register_beta(reg, &b) == PD_OK, "beta again: %s", pd_last_error());
        prog_check_op(reg, "bundle_triple", 3.0f, 0);
    } else {
        pd_status s = pd_bundle_register_gamma(reg, &g);
        PROG_CHECK(s == PD_ERR_ALREADY_EXISTS, "gamma: status %d, expected PD_ERR_ALREADY_EXISTS",
                   (int)s);
        printf("message: %s\n", pd_last_error());
        PROG_CHECK(g == NULL, "gamma's module was written on failure");
        PROG_CHECK(pd_registry_op_count(reg) == 3, "%d ops after the refused bundle, expected 3",
                   pd_registry_op_count(reg));
        prog_check_op(reg, "bundle_scale", 2.0f, 0); /* still alpha's */
    }
    pd_registry_destroy(reg);
    return prog_finish(mode);
}
