/*
 * grad_math.c - the little tensor arithmetic autograd needs on the host side: tensor identity,
 * elements read and written as double, and the sum that accumulates the gradients of a tensor
 * used more than once. Gradients are taken in the floating dtypes (float16, bfloat16, float32,
 * float64); reading through double keeps one loop for all four, which is plenty for the sizes
 * a tape's accumulations and gradcheck's probes touch.
 */
#include "autograd/autograd.h"

#include <math.h>
#include <stdio.h>

bool pd__tensor_same(const pd_tensor *a, const pd_tensor *b)
{
    if (a->storage != b->storage || a->data != b->data || a->dtype != b->dtype ||
        a->ndim != b->ndim)
        return false;
    for (int32_t d = 0; d < a->ndim; ++d)
        if (a->shape[d] != b->shape[d] || pd_stride(a, d) != pd_stride(b, d))
            return false;
    return true;
}

bool pd__dtype_differentiable(pd_data_type t)
{
    return t == PD_FLOAT16 || t == PD_BFLOAT16 || t == PD_FLOAT32 || t == PD_FLOAT64;
}

double pd__elem_get(const pd_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case PD_FLOAT16: return pd_float16_to_float(((const pd_float16 *)t->data)[i]);
    case PD_BFLOAT16: return pd_bfloat16_to_float(((const pd_bfloat16 *)t->data)[i]);
    case PD_FLOAT32: return ((const float *)t->data)[i];
    case PD_FLOAT64: return ((const double *)t->data)[i];
    default: return NAN;
    }
}

void pd__elem_set(pd_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case PD_FLOAT16: ((pd_float16 *)t->data)[i] = pd_float16_from_float((float)v); break;
    case PD_BFLOAT16: ((pd_bfloat16 *)t->data)[i] = pd_bfloat16_from_float((float)v); break;
    case PD_FLOAT32: ((float *)t->data)[i] = (float)v; break;
    case PD_FLOAT64: ((double *)t->data)[i] = v; break;
    default: break;
    }
}

pd_status pd__grad_add(const char *who, pd_tensor *acc, const pd_tensor *g)
{
    char sa[96], sg[96];
    if (!pd_same_shape(acc, g) || acc->dtype != g->dtype)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: gradients to add disagree: %s %s and %s %s",
                        who, pd_dtype_name(acc->dtype), pd__shape_text(acc, sa, sizeof sa),
                        pd_dtype_name(g->dtype), pd__shape_text(g, sg, sizeof sg));
    if (!pd__dtype_differentiable(acc->dtype))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: gradients of dtype %s cannot be added; gradients are taken in "
                        "float16, bfloat16, float32 and float64",
                        who, pd_dtype_name(acc->dtype));
    pd_tensor a = PD_TENSOR_UNDEFINED, b = PD_TENSOR_UNDEFINED, sum = PD_TENSOR_UNDEFINED;
    pd_status st = pd_tensor_contiguous(&a, acc);
    if (st == PD_OK)
        st = pd_tensor_contiguous(&b, g);
    if (st == PD_OK)
        st = pd_tensor_empty_like(&sum, &a);
    if (st == PD_OK) {
        for (int64_t i = 0, n = pd_numel(&a); i < n; ++i)
            pd__elem_set(&sum, i, pd__elem_get(&a, i) + pd__elem_get(&b, i));
        pd_tensor_release(acc);
        *acc = sum;
    }
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    return st;
}

const char *pd__shape_text(const pd_tensor *t, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, size, "[");
    for (int32_t d = 0; d < t->ndim && used < size; ++d)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "",
                                 (long long)t->shape[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

/* The declared position an argument slot binds to: by name (declared name or declaration) or,
 * without one, its position in the call. -1 when no declared one matches. */
int32_t pd__arg_position(const pd_op *op, bool input, const pd_arg *arg, int32_t index)
{
    if (!arg->name)
        return index;
    int32_t n = input ? pd_op_input_count(op) : pd_op_output_count(op);
    for (int32_t i = 0; i < n; ++i) {
        pd_arg_info info;
        if ((input ? pd_op_input_info(op, i, &info) : pd_op_output_info(op, i, &info)) != PD_OK)
            continue;
        if (strcmp(arg->name, info.name) == 0 || strcmp(arg->name, info.decl) == 0)
            return i;
    }
    return -1;
}
