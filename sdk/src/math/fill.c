/*
 * fill.c - pd_fill (the table's `fill`): every element of a tensor of any layout in host
 * memory set to one value, converted once to the tensor's dtype with pd_tensor_cast's rules.
 */
#include "math/math_internal.h"

#include <string.h>

void pd__ctx_fill(pd_kernel_ctx *ctx, pd_tensor *t, double value)
{
    (void)ctx;
    pd__math_operand("pd_fill", "t", t);
    unsigned char elem[sizeof(pd_complex128)];
    pd__cast_elements(elem, t->dtype, &value, PD_FLOAT64, 1);
    size_t es = pd_dtype_size(t->dtype);
    pd__walk w;
    pd__walk_init(&w, 1, t->ndim, t->shape);
    for (int32_t d = 0; d < t->ndim; ++d)
        w.strides[0][d] = pd_stride(t, d);
    pd__walk_merge(&w);
    int64_t idx[PD_MAX_DIMS] = {0}, off[1] = {0};
    int32_t in = w.nd - 1;
    for (int64_t r = 0; r < w.rows; ++r) {
        char *p = (char *)t->data + off[0] * (int64_t)es;
        for (int64_t i = 0; i < w.shape[in]; ++i)
            memcpy(p + i * w.strides[0][in] * (int64_t)es, elem, es);
        pd__walk_next(&w, idx, off);
    }
}
