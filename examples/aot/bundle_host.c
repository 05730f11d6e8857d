/*
 * bundle_host.c - a C host of the static bundle "aotops" that carries the ScaleCumsum kernel
 * of scale_cumsum.cc (built with `pdext bundle ... scale_cumsum.cc:ScaleCumsum --inputs 1
 * --attr 'scale: float' --attr 'bias: float'`, or CMake's pdext_add_bundle(aotops AOT ...)):
 * the bundle's header registers the kernel as op "ScaleCumsum" with no compiler and no dlopen,
 * and it runs like any op.
 *
 *   ./bundle_host        # prints 2.5 4.5 6.5 8.5
 */
#include "aotops.h"

#include <stdio.h>

int main(void)
{
    pd_registry *reg = NULL;
    pd_tensor x = PD_TENSOR_UNDEFINED, out = PD_TENSOR_UNDEFINED;
    int64_t n = 4;
    int rc = 1;
    if (pd_registry_create(&reg) != PD_OK || pd_bundle_register_aotops(reg, NULL) != PD_OK ||
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
        fprintf(stderr, "bundle_host: %s\n", pd_last_error());
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    return rc;
}
