/*
 * reduce.c - pd_sum (the table's `sum`): the sum of a tensor of any layout over some axes,
 * into a new dense tensor in host memory.
 *
 * The input is walked once in its own order (walk.c) with a second operand that steps
 * through the result's accumulators: stride 0 along summed axes. Accumulators are wider than
 * the elements: uint64_t for integers (wrapping, as Paddle's integer sums), double for reals,
 * a pair of doubles for complex; the result is converted once at the end. A requested dtype
 * other than x's casts x first (pd_cast's rules), as Paddle's sum(x, dtype) does.
 */
#include "math/math_internal.h"

typedef void (*acc_fn)(void *acc, int64_t sa, const char *x, int64_t sx, int64_t n);
typedef void (*store_fn)(char *out, const void *acc, int64_t n);

#define SAME(v) (v)
#define CAST(v) ((out_t)(v))
#define TO_U64(v) ((uint64_t)(v))
#define TRUTH(v) ((uint64_t)((v) != 0))
#define TO_DOUBLE(v) ((double)(v))
#define F16_DOUBLE(v) ((double)pd_float16_to_float(v))
#define BF16_DOUBLE(v) ((double)pd_bfloat16_to_float(v))
#define DOUBLE_F16(v) pd_float16_from_float((float)(v))
#define DOUBLE_BF16(v) pd_bfloat16_from_float((float)(v))

/* acc[i * sa] += LOAD(x[i * sx]) and out[i] = STORE(acc[i]) for one element type. */
#define SUM_FNS(SUF, T, ACC, LOAD, STORE)                                              \
    static void acc_##SUF(void *acc, int64_t sa, const char *x, int64_t sx, int64_t n) \
    {                                                                                  \
        ACC *pa = (ACC *)acc;                                                          \
        const T *px = (const T *)x;                                                    \
        for (int64_t i = 0; i < n; ++i)                                                \
            pa[i * sa] += LOAD(px[i * sx]);                                            \
    }                                                                                  \
    static void store_##SUF(char *out, const void *acc, int64_t n)                     \
    {                                                                                  \
        typedef T out_t;                                                               \
        out_t *po = (out_t *)out;                                                      \
        const ACC *pa = (const ACC *)acc;                                              \
        for (int64_t i = 0; i < n; ++i)                                                \
            po[i] = STORE(pa[i]);                                                      \
    }
SUM_FNS(bool, uint8_t, uint64_t, TRUTH, TRUTH)
SUM_FNS(i8, int8_t, uint64_t, TO_U64, CAST)
SUM_FNS(u8, uint8_t, uint64_t, TO_U64, CAST)
SUM_FNS(i16, int16_t, uint64_t, TO_U64, CAST)
SUM_FNS(u16, uint16_t, uint64_t, TO_U64, CAST)
SUM_FNS(i32, int32_t, uint64_t, TO_U64, CAST)
SUM_FNS(u32, uint32_t, uint64_t, TO_U64, CAST)
SUM_FNS(i64, int64_t, uint64_t, TO_U64, CAST)
SUM_FNS(u64, uint64_t, uint64_t, TO_U64, CAST)
SUM_FNS(f16, pd_float16, double, F16_DOUBLE, DOUBLE_F16)
SUM_FNS(bf16, pd_bfloat16, double, BF16_DOUBLE, DOUBLE_BF16)
SUM_FNS(f32, float, double, TO_DOUBLE, CAST)
SUM_FNS(f64, double, double, SAME, SAME)

#define COMPLEX_SUM_FNS(SUF, T, PART)                                                  \
    static void acc_##SUF(void *acc, int64_t sa, const char *x, int64_t sx, int64_t n) \
    {                                                                                  \
        pd_complex128 *pa = (pd_complex128 *)acc;                                      \
        const T *px = (const T *)x;                                                    \
        for (int64_t i = 0; i < n; ++i) {                                              \
            pa[i * sa].re += px[i * sx].re;                                            \
            pa[i * sa].im += px[i * sx].im;                                            \
        }                                                                              \
    }                                                                                  \
    static void store_##SUF(char *out, const void *acc, int64_t n)                     \
    {                                                                                  \
        T *po = (T *)out;                                                              \
        const pd_complex128 *pa = (const pd_complex128 *)acc;                          \
        for (int64_t i = 0; i < n; ++i) {                                              \
            po[i].re = (PART)pa[i].re;                                                 \
            po[i].im = (PART)pa[i].im;                                                 \
        }                                                                              \
    }
COMPLEX_SUM_FNS(c64, pd_complex64, float)
COMPLEX_SUM_FNS(c128, pd_complex128, double)

static const struct {
    acc_fn acc;
    store_fn store;
} fns_of[] = {
    [PD_BOOL] = {acc_bool, store_bool},       [PD_INT8] = {acc_i8, store_i8},
    [PD_UINT8] = {acc_u8, store_u8},          [PD_INT16] = {acc_i16, store_i16},
    [PD_UINT16] = {acc_u16, store_u16},       [PD_INT32] = {acc_i32, store_i32},
    [PD_UINT32] = {acc_u32, store_u32},       [PD_INT64] = {acc_i64, store_i64},
    [PD_UINT64] = {acc_u64, store_u64},       [PD_FLOAT16] = {acc_f16, store_f16},
    [PD_BFLOAT16] = {acc_bf16, store_bf16},   [PD_FLOAT32] = {acc_f32, store_f32},
    [PD_FLOAT64] = {acc_f64, store_f64},      [PD_COMPLEX64] = {acc_c64, store_c64},
    [PD_COMPLEX128] = {acc_c128, store_c128},
};

/* Which axes of x the sum runs over; ends the call on a bad axis. */
static void summed_axes(const pd_tensor *x, int32_t naxes, const int64_t *axes, bool *reduce)
{
    const char *who = "pd_sum";
    if (naxes < 0 || (naxes > 0 && axes == NULL))
        pd__ctx_throw(PD_ERR_OP_FAILED,
                      "pd_sum: %d axes at %p; expected none, or axes that are "
                      "not NULL",
                      (int)naxes, (const void *)axes);
    for (int32_t d = 0; d < x->ndim; ++d)
        reduce[d] = naxes == 0;
    for (int32_t i = 0; i < naxes; ++i) {
        int64_t a = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        if (a < 0 || a >= x->ndim)
            pd__ctx_throw(PD_ERR_OP_FAILED,
                          "%s: axis %lld is out of range for x of %d dims (expected %d to %d)", who,
                          (long long)axes[i], (int)x->ndim, -(int)x->ndim, (int)x->ndim - 1);
        reduce[a] = true;
    }
}

pd_tensor *pd__ctx_sum(pd_kernel_ctx *ctx, const pd_tensor *x, int32_t naxes, const int64_t *axes,
                       bool keepdim, pd_data_type dtype)
{
    pd__math_operand("pd_sum", "x", x);
    bool reduce[PD_MAX_DIMS];
    summed_axes(x, naxes, axes, reduce);
    if (dtype == PD_UNDEFINED)
        dtype = x->dtype == PD_BOOL || x->dtype == PD_INT32 ? PD_INT64 : x->dtype;
    else if (dtype < PD_BOOL || dtype > PD_COMPLEX128)
        pd__ctx_throw(PD_ERR_OP_FAILED,
                      "pd_sum: dtype is data type number %d, which is none (expected a "
                      "pd_data_type, or PD_UNDEFINED for x's)",
                      (int)dtype);
    if (dtype != x->dtype)
        x = pd__ctx_cast(ctx, x, dtype);

    int64_t shape[PD_MAX_DIMS];
    int32_t ond = 0;
    for (int32_t d = 0; d < x->ndim; ++d)
        if (!reduce[d] || keepdim)
            shape[ond++] = reduce[d] ? 1 : x->shape[d];
    pd_tensor *out = pd__ctx_empty(ctx, dtype, pd_place_cpu(), ond, shape);

    pd__walk w;
    pd__walk_init(&w, 2, x->ndim, x->shape);
    for (int32_t d = 0, o = 0; d < x->ndim; ++d) {
        w.strides[1][d] = pd_stride(x, d);
        w.strides[0][d] = reduce[d] ? 0 : out->strides[o];
        o += !reduce[d] || keepdim;
    }
    pd__walk_merge(&w);

    int64_t n = pd_numel(out);
    size_t acc_size = pd_dtype_is_complex(dtype) ? sizeof(pd_complex128) : sizeof(uint64_t);
    void *acc = pd__math_accumulators(ctx, dtype, n);
    acc_fn add = fns_of[dtype].acc;
    size_t es = pd_dtype_size(dtype);
    int64_t idx[PD_MAX_DIMS] = {0}, off[2] = {0};
    int32_t in = w.nd - 1;
    for (int64_t r = 0; r < w.rows; ++r) {
        add((char *)acc + off[0] * (int64_t)acc_size, w.strides[0][in],
            (const char *)x->data + off[1] * (int64_t)es, w.strides[1][in], w.shape[in]);
        pd__walk_next(&w, idx, off);
    }
    fns_of[dtype].store((char *)out->data, acc, n);
    return out;
}
