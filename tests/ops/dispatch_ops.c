/* dispatch_ops.c - the dispatch test op compiled as C (see dispatch_ops.h). */
#define LANG "c"
#include "dispatch_ops.h"

PD_BUILD_OP(dispatch_c,
    .inputs = {"X"},
    .outputs = {"Tag"},
    .attrs = {"macro: int"},
    .kernel = dispatch_kernel,
    .infer_shape = dispatch_infer_shape,
    .infer_dtype = dispatch_infer_dtype);

PD_BUILD_OP(sum_c,
    .inputs = {"X"},
    .outputs = {"Sum", "AccTag"},
    .attrs = {"macro: int"},
    .kernel = sum_kernel,
    .infer_shape = sum_infer_shape,
    .infer_dtype = sum_infer_dtype);
