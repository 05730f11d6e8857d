/*
 * prog_cuda.c - links the static bundle "cudaops" (ops_cuda.cu, compiled by nvcc) and checks
 * that its op registers. Running the kernel needs a GPU, so it is left to GPU machines.
 */
#include "cudaops.h"
#include "prog_util.h"

int main(void)
{
    pd_registry *reg = NULL;
    pd_module *m = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return 2;
    PROG_CHECK(pd_bundle_register_cudaops(reg, &m) == PD_OK, "cudaops: %s", pd_last_error());
    PROG_CHECK(pd_op_find(reg, "bundle_cuda_scale") != NULL, "bundle_cuda_scale missing");
    PROG_CHECK(pd_module_op_count(m) == 1, "%d ops, expected 1", pd_module_op_count(m));
    pd_registry_destroy(reg);
    return prog_finish("prog_cuda");
}
