/*
 * check_rows.c - an op whose vector output has as many items as its input has rows, for
 * `pdext check` and `pdext run` (gradcheck_cli_test.c, pdext_cli_test.c): check's [64, 300]
 * shape makes 64 items and run's test 300, more than any room a host could guess (check
 * offered 16, run 256), so both must let the runner size the output (tensors NULL, count 0).
 *   ck_rows      X [m, n] -> Out@VECTOR: m items, item r = row r of X, shape [n]
 */
#include "extension.h"

static void rows_infer_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(x->ndim == 2, "X must be 2-d, but it has %d dims", x->ndim);
    int64_t m = x->shape[0], n = x->shape[1];
    pd_set_output_count(ctx, 0, (int32_t)m);
    for (int64_t r = 0; r < m; ++r)
        pd_set_output_shape_at(ctx, 0, (int32_t)r, 1, &n);
}

static void rows_infer_dtype(pd_kernel_ctx *ctx)
{
    for (int32_t r = 0; r < pd_output_count(ctx, 0); ++r)
        pd_set_output_dtype_at(ctx, 0, r, pd_dtype(pd_input(ctx, 0)));
}

static void rows_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t m = x->shape[0], n = x->shape[1];
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "ck_rows", {
        const data_t *a = (const data_t *)pd_data(x);
        for (int64_t r = 0; r < m; ++r) {
            data_t *o = (data_t *)pd_data(pd_output_at(ctx, 0, (int32_t)r));
            for (int64_t j = 0; j < n; ++j)
                o[j] = a[r * n + j];
        }
    });
}

PD_BUILD_OP(ck_rows, .inputs = {"X"}, .outputs = {"Out@VECTOR"}, .kernel = rows_kernel,
            .infer_shape = rows_infer_shape, .infer_dtype = rows_infer_dtype);
