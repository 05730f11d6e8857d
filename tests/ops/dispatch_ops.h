/*
 * dispatch_ops.h - the body of the dispatch test ops, compiled once as C (dispatch_ops.c) and
 * once as C++ (dispatch_ops.cc): one op whose attr `macro` (0..6) picks a PD_DISPATCH_*
 * macro, in the order of pd_dispatch.h. Its scalar int64 output is the dtype the body's
 * data_t really is (found from the C type itself, not from the runtime dtype) times 100 plus
 * sizeof(data_t), so a macro binding the wrong type is caught too.
 *
 * A second op, sum_<LANG>, sums its input in PD_ACC_TYPE (see below).
 *
 * The includer defines LANG ("c" / "cc"); dispatch names are "<LANG>_<list>", e.g.
 * "c_floating_types".
 */
#ifndef DISPATCH_OPS_H
#define DISPATCH_OPS_H

#include "extension.h"

#ifdef __cplusplus
template <class T> struct type_tag;
#define TYPE_TAG_OF(c_type, value)        \
    template <> struct type_tag<c_type> { \
        static constexpr int v = value;   \
    };
TYPE_TAG_OF(float, PD_FLOAT32)
TYPE_TAG_OF(double, PD_FLOAT64)
TYPE_TAG_OF(pd_float16, PD_FLOAT16)
TYPE_TAG_OF(pd_bfloat16, PD_BFLOAT16)
TYPE_TAG_OF(int8_t, PD_INT8)
TYPE_TAG_OF(uint8_t, PD_UINT8)
TYPE_TAG_OF(int16_t, PD_INT16)
TYPE_TAG_OF(int32_t, PD_INT32)
TYPE_TAG_OF(int64_t, PD_INT64)
TYPE_TAG_OF(pd_complex64, PD_COMPLEX64)
TYPE_TAG_OF(pd_complex128, PD_COMPLEX128)
#define TYPE_TAG(T) (type_tag<T>::v)
#else
#define TYPE_TAG(T) \
    _Generic((T *)0, float *: PD_FLOAT32, double *: PD_FLOAT64, pd_float16 *: PD_FLOAT16,    \
             pd_bfloat16 *: PD_BFLOAT16, int8_t *: PD_INT8, uint8_t *: PD_UINT8,             \
             int16_t *: PD_INT16, int32_t *: PD_INT32, int64_t *: PD_INT64,                  \
             pd_complex64 *: PD_COMPLEX64, pd_complex128 *: PD_COMPLEX128)
#endif

#define RECORD_TAG (tag = (int64_t)TYPE_TAG(data_t) * 100 + (int64_t)sizeof(data_t));

static void dispatch_infer_shape(pd_kernel_ctx *ctx) { pd_set_output_shape(ctx, 0, 0, NULL); }
static void dispatch_infer_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_INT64); }

static void dispatch_kernel(pd_kernel_ctx *ctx)
{
    pd_data_type t = pd_dtype(pd_input(ctx, 0));
    int64_t tag = -1;
    switch (pd_attr_int(ctx, 0)) {
    case 0: PD_DISPATCH_FLOATING_TYPES(t, LANG "_floating_types", RECORD_TAG); break;
    case 1:
        PD_DISPATCH_FLOATING_AND_HALF_TYPES(t, LANG "_floating_and_half_types", RECORD_TAG);
        break;
    case 2: PD_DISPATCH_INTEGRAL_TYPES(t, LANG "_integral_types", RECORD_TAG); break;
    case 3: PD_DISPATCH_COMPLEX_TYPES(t, LANG "_complex_types", RECORD_TAG); break;
    case 4:
        PD_DISPATCH_FLOATING_AND_INTEGRAL_TYPES(t, LANG "_floating_and_integral_types", RECORD_TAG);
        break;
    case 5:
        PD_DISPATCH_FLOATING_AND_COMPLEX_TYPES(t, LANG "_floating_and_complex_types", RECORD_TAG);
        break;
    case 6:
        PD_DISPATCH_FLOATING_AND_INTEGRAL_AND_COMPLEX_TYPES(
            t, LANG "_floating_and_integral_and_complex_types", RECORD_TAG);
        break;
    default: PD_THROW("no dispatch macro %d", pd_attr_int(ctx, 0));
    }
    *(int64_t *)pd_data(pd_output(ctx, 0)) = tag;
}

/* sum_<LANG>(X) -> (Sum, AccTag), attr `macro`: 0 for PD_DISPATCH_FLOATING_AND_HALF_TYPES, 1
 * for PD_DISPATCH_INTEGRAL_TYPES. Sum (X's dtype, shape [1]) adds X's elements in
 * PD_ACC_TYPE(data_t) with pd_to_acc / pd_from_acc; AccTag (int64) is the type tag of the
 * accumulation type times 100 plus its size, as RECORD_TAG does for data_t. */
#define SUM_BODY                                                 \
    {                                                            \
        const data_t *in = (const data_t *)pd_data(x);           \
        PD_ACC_TYPE(data_t) acc = 0;                             \
        for (int64_t i = 0; i < n; ++i)                          \
            acc += pd_to_acc(in[i]);                             \
        *(data_t *)pd_data(sum) = pd_from_acc(data_t, acc);      \
        acc_tag = (int64_t)TYPE_TAG(PD_ACC_TYPE(data_t)) * 100 + \
                  (int64_t)sizeof(PD_ACC_TYPE(data_t));          \
    }

static void sum_infer_shape(pd_kernel_ctx *ctx)
{
    const int64_t one[1] = {1};
    pd_set_output_shape(ctx, 0, 1, one);
    pd_set_output_shape(ctx, 1, 1, one);
}
static void sum_infer_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, pd_dtype(pd_input(ctx, 0)));
    pd_set_output_dtype(ctx, 1, PD_INT64);
}

static void sum_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *sum = pd_output(ctx, 0);
    int64_t n = pd_numel(x), acc_tag = -1;
    if (pd_attr_int(ctx, 0) == 0)
        PD_DISPATCH_FLOATING_AND_HALF_TYPES(pd_dtype(x), LANG "_sum", SUM_BODY);
    else
        PD_DISPATCH_INTEGRAL_TYPES(pd_dtype(x), LANG "_sum", SUM_BODY);
    *(int64_t *)pd_data(pd_output(ctx, 1)) = acc_tag;
}

#endif /* DISPATCH_OPS_H */
