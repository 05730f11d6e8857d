/*
 * host.c - a C host running the MindSpore AOT kernel of scale_cumsum.cc through pdext: the
 * source is compiled by the JIT (pd_jit_aot_build, through its cache) and the library it gives
 * registered as op "ScaleCumsum" (pd_aot_load), then run like any op with pd_run.
 *
 *   cc host.c $(pkg-config --cflags --libs pdext) -lpdext_aot -lpdext_jit -o host
 *   ./host path/to/scale_cumsum.cc
 */
#include "pdext_aot.h"
#include "pdext_jit.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    char spec[4096];
    snprintf(spec, sizeof spec, "%s:ScaleCumsum", argc > 1 ? argv[1] : "scale_cumsum.cc");
    pd_registry *reg = NULL;
    pd_tensor x = PD_TENSOR_UNDEFINED, out = PD_TENSOR_UNDEFINED;
    const char *attrs_decl[] = {"scale: float", "bias: float"};
    pd_aot_options o = {0};
    o.struct_size = sizeof o;
    o.n_inputs = 1;
    o.attrs = attrs_decl;
    o.n_attrs = 2;
    int64_t n = 4;
    int rc = 1;
    char *lib = NULL; /* "<built library>:ScaleCumsum" */
    if (pd_registry_create(&reg) != PD_OK || pd_jit_aot_build(spec, &o, &lib) != PD_OK ||
        pd_aot_load(reg, lib, &o, NULL) != PD_OK ||
        pd_tensor_full(&x, PD_FLOAT32, pd_place_cpu(), 1, &n, 1.0) != PD_OK)
        goto fail;
    pd_arg in[1] = {pd_arg_of(&x)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    pd_attr attrs[2] = {pd_attr_of_float("scale", 2.0f), pd_attr_of_float("bias", 0.5f)};
    if (pd_run(reg, "ScaleCumsum", in, 1, attrs, 2, outs, 1) != PD_OK)
        goto fail;
    for (int64_t i = 0; i < n; ++i)
        printf("%s%g", i ? " " : "", ((float *)out.data)[i]); /* 2.5 4.5 6.5 8.5 */
    printf("\n");
    rc = 0;
fail:
    if (rc)
        fprintf(stderr, "host: %s\n", pd_last_error());
    free(lib);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    return rc;
}
