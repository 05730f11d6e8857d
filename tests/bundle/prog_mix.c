/*
 * prog_mix.c - one process, three ways to get ops: the static bundle "alpha" linked in, the
 * shared bundle libbeta.so (argv[1]) through pd_module_load, and ops_jit.c (argv[2]) through
 * the JIT (pd_jit_load, build directory argv[3]). All three serve the same registry.
 */
#include "alpha.h"
#include "pdext_jit.h"
#include "prog_util.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: prog_mix LIBBETA.so OPS_JIT.c BUILD_DIR\n");
        return 2;
    }
    pd_registry *reg = NULL;
    pd_module *a = NULL, *b = NULL, *j = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return 2;
    PROG_CHECK(pd_bundle_register_alpha(reg, &a) == PD_OK, "alpha: %s", pd_last_error());
    PROG_CHECK(pd_module_load(reg, argv[1], &b) == PD_OK, "shared bundle: %s", pd_last_error());

    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = "bundle_mix_jit";
    const char *srcs[1] = {argv[2]};
    o.sources = srcs;
    o.n_sources = 1;
    o.build_dir = argv[3];
    PROG_CHECK(pd_jit_load(reg, &o, &j) == PD_OK, "jit: %s", pd_last_error());

    PROG_CHECK(pd_registry_op_count(reg) == 5, "%d ops, expected 5 (3 + 1 + 1)",
               pd_registry_op_count(reg));
    prog_check_op(reg, "bundle_scale", 2.0f, 0);
    prog_check_op(reg, "bundle_neg", -1.0f, 0);
    prog_check_op(reg, "bundle_triple", 3.0f, 0);
    prog_check_op(reg, "bundle_square", 0.0f, 1);
    pd_registry_destroy(reg);
    return prog_finish("prog_mix");
}
