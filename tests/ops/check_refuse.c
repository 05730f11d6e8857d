/*
 * check_refuse.c - ops for `pdext check`'s verdicts on refusals and per-op input shapes
 * (gradcheck_cli_test.c):
 *   ck_topk      the k largest of each row; refuses a row shorter than k (a [1, 1] input with
 *                the default k = 2) with a message naming k: a right refusal, which must
 *                pass the "bad input" row, not fail the shapes row
 *   ck_vague     refuses a one-element input without saying why (PD_THROW with no message):
 *                that stays a failure
 *   ck_matvec    A [m, n] times V [n]: needs inputs of different shapes (--input OP.NAME=...)
 *   ck_axpy_inplace  X += Y in place, X read as a dense array: the strided row keeps X dense
 *                and gives Y a strided view
 */
#include "extension.h"

static void topk_infer_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t k = pd_attr_int64(ctx, 0);
    PD_CHECK(x->ndim == 2, "X must be 2-d, but it has %d dims", x->ndim);
    PD_CHECK(k >= 1 && k <= x->shape[1], "k (%lld) must be in [1, %lld], the length of X's rows",
             (long long)k, (long long)x->shape[1]);
    int64_t shape[2] = {x->shape[0], k};
    pd_set_output_shape(ctx, 0, 2, shape);
}

static void topk_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    int64_t rows = x->shape[0], cols = x->shape[1], k = pd_attr_int64(ctx, 0);
    PD_CHECK(k <= 16, "k (%lld) must be at most 16", (long long)k);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "ck_topk", {
        const data_t *a = (const data_t *)pd_data(x);
        data_t *o = (data_t *)pd_data(out);
        for (int64_t r = 0; r < rows; ++r) {
            int64_t chosen[16];
            for (int64_t j = 0; j < k; ++j) { /* the largest not chosen yet: k is small */
                int64_t best = -1;
                for (int64_t c = 0; c < cols; ++c) {
                    bool taken = false;
                    for (int64_t i = 0; i < j; ++i)
                        taken = taken || chosen[i] == c;
                    if (!taken && (best < 0 || a[r * cols + c] > a[r * cols + best]))
                        best = c;
                }
                chosen[j] = best;
                o[r * k + j] = a[r * cols + best];
            }
        }
    });
}

PD_BUILD_OP(ck_topk, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"k: int64 = 2"},
            .kernel = topk_kernel, .infer_shape = topk_infer_shape);

static void vague_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    if (pd_numel(x) == 1)
        PD_THROW();
    pd_tensor *out = pd_output(ctx, 0);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "ck_vague", {
        const data_t *a = (const data_t *)pd_data(x);
        data_t *o = (data_t *)pd_data(out);
        for (int64_t i = 0; i < pd_numel(x); ++i)
            o[i] = a[i];
    });
}

PD_BUILD_OP(ck_vague, .inputs = {"X"}, .outputs = {"Out"}, .kernel = vague_kernel);

static void matvec_infer_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *a = pd_input(ctx, 0), *v = pd_input(ctx, 1);
    PD_CHECK(a->ndim == 2 && v->ndim == 1 && a->shape[1] == v->shape[0],
             "A must be [m, n] and V [n]; got %d-d A and %d-d V", a->ndim, v->ndim);
    int64_t m = a->shape[0];
    pd_set_output_shape(ctx, 0, 1, &m);
}

static void matvec_infer_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, pd_dtype(pd_input(ctx, 0)));
}

static void matvec_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *a = pd_input(ctx, 0), *v = pd_input(ctx, 1);
    pd_tensor *out = pd_output(ctx, 0);
    int64_t m = a->shape[0], n = a->shape[1];
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(a), "ck_matvec", {
        const data_t *x = (const data_t *)pd_data(a), *y = (const data_t *)pd_data(v);
        data_t *o = (data_t *)pd_data(out);
        for (int64_t i = 0; i < m; ++i) {
            double acc = 0;
            for (int64_t j = 0; j < n; ++j)
                acc += (double)x[i * n + j] * (double)y[j];
            o[i] = (data_t)acc;
        }
    });
}

PD_BUILD_OP(ck_matvec, .inputs = {"A", "V"}, .outputs = {"Out"}, .kernel = matvec_kernel,
            .infer_shape = matvec_infer_shape, .infer_dtype = matvec_infer_dtype);

/* X += Y; X (= Out) is read as a dense array: it is not declared strided. */
static void axpy_kernel(pd_kernel_ctx *ctx)
{
    pd_tensor *out = pd_output(ctx, 0);
    const pd_tensor *y = pd_input(ctx, 1);
    int64_t n = pd_numel(out);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(out), "ck_axpy_inplace", {
        data_t *o = (data_t *)pd_data(out);
        const data_t *b = (const data_t *)pd_data(y);
        for (int64_t i = 0; i < n; ++i)
            o[i] += b[i];
    });
}

PD_BUILD_OP(ck_axpy_inplace, .inputs = {"X", "Y"}, .outputs = {"Out"},
            .inplace = {{"X", "Out"}}, .kernel = axpy_kernel);
