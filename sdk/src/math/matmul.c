/*
 * matmul.c - pd_matmul (the table's `matmul`): numpy's matmul over operands of any layout,
 * with batch dims broadcast, into a new dense tensor in host memory.
 *
 * Each operand's matrix is read through two strides (row, column), so a transposed operand
 * (transpose_a / transpose_b, or a pd_transpose view) costs nothing: its strides are swapped.
 * The kernel runs i-p-j: for each result row it adds x[i, p] * y[p, :] into a row of
 * accumulators, so the inner loop walks y's row (unit stride for a dense y) and vectorizes.
 * Accumulators: float for float32 and the halves, double for float64, uint64_t for integers
 * (wrapping), a pair of doubles for complex. This is a plain loop, not a tuned BLAS: it is
 * for the small products custom ops compose.
 */
#include "math/math_internal.h"

/* The matrix product of one batch item: o (m x n, dense) = x (m x k) @ y (k x n), x[i, p] at
 * x[i * rsx + p * csx], y[p, j] at y[p * rsy + j * csy]; `row` holds n accumulators. */
typedef void (*mm_fn)(char *o, const char *x, int64_t rsx, int64_t csx, const char *y, int64_t rsy,
                      int64_t csy, int64_t m, int64_t n, int64_t k, void *row);

#define SAME(v) (v)
#define CAST(v) ((out_t)(v))
#define TO_U64(v) ((uint64_t)(v))

#define MM_FN(SUF, T, ACC, LOAD, STORE)                                                        \
    static void mm_##SUF(char *o, const char *x, int64_t rsx, int64_t csx, const char *y,      \
                         int64_t rsy, int64_t csy, int64_t m, int64_t n, int64_t k, void *row) \
    {                                                                                          \
        typedef T out_t;                                                                       \
        ACC *acc = (ACC *)row;                                                                 \
        const T *px = (const T *)x, *py = (const T *)y;                                        \
        out_t *po = (out_t *)o;                                                                \
        for (int64_t i = 0; i < m; ++i) {                                                      \
            for (int64_t j = 0; j < n; ++j)                                                    \
                acc[j] = 0;                                                                    \
            for (int64_t p = 0; p < k; ++p) {                                                  \
                ACC v = LOAD(px[i * rsx + p * csx]);                                           \
                const T *yr = py + p * rsy;                                                    \
                for (int64_t j = 0; j < n; ++j)                                                \
                    acc[j] += v * LOAD(yr[j * csy]);                                           \
            }                                                                                  \
            for (int64_t j = 0; j < n; ++j)                                                    \
                po[i * n + j] = STORE(acc[j]);                                                 \
        }                                                                                      \
    }
MM_FN(i8, int8_t, uint64_t, TO_U64, CAST)
MM_FN(u8, uint8_t, uint64_t, TO_U64, CAST)
MM_FN(i16, int16_t, uint64_t, TO_U64, CAST)
MM_FN(u16, uint16_t, uint64_t, TO_U64, CAST)
MM_FN(i32, int32_t, uint64_t, TO_U64, CAST)
MM_FN(u32, uint32_t, uint64_t, TO_U64, CAST)
MM_FN(i64, int64_t, uint64_t, TO_U64, CAST)
MM_FN(u64, uint64_t, uint64_t, TO_U64, CAST)
MM_FN(f16, pd_float16, float, pd_float16_to_float, pd_float16_from_float)
MM_FN(bf16, pd_bfloat16, float, pd_bfloat16_to_float, pd_bfloat16_from_float)
MM_FN(f32, float, float, SAME, SAME)
MM_FN(f64, double, double, SAME, SAME)

#define MM_COMPLEX_FN(SUF, T, PART)                                                            \
    static void mm_##SUF(char *o, const char *x, int64_t rsx, int64_t csx, const char *y,      \
                         int64_t rsy, int64_t csy, int64_t m, int64_t n, int64_t k, void *row) \
    {                                                                                          \
        pd_complex128 *acc = (pd_complex128 *)row;                                             \
        const T *px = (const T *)x, *py = (const T *)y;                                        \
        T *po = (T *)o;                                                                        \
        for (int64_t i = 0; i < m; ++i) {                                                      \
            for (int64_t j = 0; j < n; ++j)                                                    \
                acc[j].re = acc[j].im = 0;                                                     \
            for (int64_t p = 0; p < k; ++p) {                                                  \
                T v = px[i * rsx + p * csx];                                                   \
                const T *yr = py + p * rsy;                                                    \
                for (int64_t j = 0; j < n; ++j) {                                              \
                    T w = yr[j * csy];                                                         \
                    acc[j].re += (double)v.re * w.re - (double)v.im * w.im;                    \
                    acc[j].im += (double)v.re * w.im + (double)v.im * w.re;                    \
                }                                                                              \
            }                                                                                  \
            for (int64_t j = 0; j < n; ++j) {                                                  \
                po[i * n + j].re = (PART)acc[j].re;                                            \
                po[i * n + j].im = (PART)acc[j].im;                                            \
            }                                                                                  \
        }                                                                                      \
    }
MM_COMPLEX_FN(c64, pd_complex64, float)
MM_COMPLEX_FN(c128, pd_complex128, double)

static const mm_fn mm_of[] = {
    [PD_INT8] = mm_i8,       [PD_UINT8] = mm_u8,        [PD_INT16] = mm_i16,
    [PD_UINT16] = mm_u16,    [PD_INT32] = mm_i32,       [PD_UINT32] = mm_u32,
    [PD_INT64] = mm_i64,     [PD_UINT64] = mm_u64,      [PD_FLOAT16] = mm_f16,
    [PD_BFLOAT16] = mm_bf16, [PD_FLOAT32] = mm_f32,     [PD_FLOAT64] = mm_f64,
    [PD_COMPLEX64] = mm_c64, [PD_COMPLEX128] = mm_c128,
};

/* One operand's matrix: rows x cols, element [r, c] at r * rs + c * cs. A 1-D operand is a
 * row (the left one) or a column (the right one); `transpose` swaps a 2-D+ operand's last
 * two dims. */
typedef struct matrix {
    int64_t rows, cols, rs, cs;
} matrix;
static matrix matrix_of(const pd_tensor *t, bool left, bool transpose)
{
    matrix mx;
    if (t->ndim == 1) {
        int64_t len = t->shape[0], s = pd_stride(t, 0);
        mx = left ? (matrix){1, len, 0, s} : (matrix){len, 1, s, 0};
        return mx;
    }
    int32_t r = t->ndim - 2, c = t->ndim - 1;
    mx = (matrix){t->shape[r], t->shape[c], pd_stride(t, r), pd_stride(t, c)};
    if (transpose)
        mx = (matrix){mx.cols, mx.rows, mx.cs, mx.rs};
    return mx;
}

pd_tensor *pd__ctx_matmul(pd_kernel_ctx *ctx, const pd_tensor *a, const pd_tensor *b,
                          bool transpose_a, bool transpose_b)
{
    const char *who = "pd_matmul";
    pd__math_operand(who, "a", a);
    pd__math_operand(who, "b", b);
    char sa[96], sb[96];
    if (a->dtype != b->dtype)
        pd__ctx_throw(PD_ERR_OP_FAILED,
                      "%s: a is %s and b is %s; expected one data type (cast one with pd_cast)",
                      who, pd_dtype_name(a->dtype), pd_dtype_name(b->dtype));
    if (a->dtype == PD_BOOL)
        pd__ctx_throw(PD_ERR_OP_FAILED, "%s is not implemented for data type `bool`", who);
    if (a->ndim == 0 || b->ndim == 0)
        pd__ctx_throw(PD_ERR_OP_FAILED, "%s: %s has 0 dims; expected at least 1", who,
                      a->ndim == 0 ? "a" : "b");
    matrix x = matrix_of(a, true, transpose_a), y = matrix_of(b, false, transpose_b);
    if (x.cols != y.rows)
        pd__ctx_throw(PD_ERR_OP_FAILED,
                      "%s: a %s%s and b %s%s do not multiply: a's columns (%lld) must equal "
                      "b's rows (%lld)",
                      who, pd__math_shape(a, sa, sizeof sa), transpose_a ? " (transposed)" : "",
                      pd__math_shape(b, sb, sizeof sb), transpose_b ? " (transposed)" : "",
                      (long long)x.cols, (long long)y.rows);

    /* Batch dims: numpy broadcasting of all but the last two dims. */
    int32_t nba = a->ndim > 2 ? a->ndim - 2 : 0, nbb = b->ndim > 2 ? b->ndim - 2 : 0;
    int64_t shape[PD_MAX_DIMS];
    pd__walk w;
    pd__walk_init(&w, 3, 0, NULL);
    int32_t nb = pd__walk_broadcast(&w, shape, who, "the batch dims of", a, "a", nba, b, "b", nbb);
    int32_t nd = nb;
    if (a->ndim > 1)
        shape[nd++] = x.rows;
    if (b->ndim > 1)
        shape[nd++] = y.cols;
    pd_tensor *out = pd__ctx_empty(ctx, a->dtype, pd_place_cpu(), nd, shape);

    int64_t mn = x.rows * y.cols;
    w.nd = nb;
    int64_t step = 1;
    for (int32_t d = nb - 1; d >= 0; --d) { /* the result's batch strides */
        w.shape[d] = shape[d];
        w.strides[0][d] = step * mn;
        step *= shape[d];
    }
    pd__walk_merge(&w);

    size_t es = pd_dtype_size(a->dtype);
    void *row = pd__math_accumulators(ctx, a->dtype, y.cols);
    mm_fn mm = mm_of[a->dtype];
    int64_t idx[PD_MAX_DIMS] = {0}, off[3] = {0};
    int32_t in = w.nd - 1;
    for (int64_t r = 0; r < w.rows; ++r) {
        for (int64_t t = 0; t < w.shape[in]; ++t)
            mm((char *)out->data + (off[0] + t * w.strides[0][in]) * (int64_t)es,
               (const char *)a->data + (off[1] + t * w.strides[1][in]) * (int64_t)es, x.rs, x.cs,
               (const char *)b->data + (off[2] + t * w.strides[2][in]) * (int64_t)es, y.rs, y.cs,
               x.rows, y.cols, x.cols, row);
        pd__walk_next(&w, idx, off);
    }
    return out;
}
