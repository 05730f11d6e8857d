/*
 * train_ops.c - the layers of examples/train as pdext ops, each with its grad op, float32 and
 * float64 on the CPU (relu comes from examples/relu):
 *
 *   train_linear     Out[N, K] = X[N, D] W[D, K] + B[K]
 *                    X@GRAD = G W^T, W@GRAD = X^T G, B@GRAD = column sums of G
 *   train_softmax_xent
 *                    Loss[1] = mean over rows n of -log softmax(Logits[n])[Label[n]]
 *                    (Label: int64 class indices); Logits@GRAD = (softmax - onehot) g / N
 *
 * Build: cc -O2 -shared -fPIC -I<prefix>/include/pdext train_ops.c -o train_ops.so -lm
 */
#include "extension.h"

#include <math.h>

static void linear_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *w = pd_input(ctx, 1), *b = pd_input(ctx, 2);
    PD_CHECK(pd_ndim(x) == 2 && pd_ndim(w) == 2 && pd_ndim(b) == 1,
             "X must be [N, D], W [D, K] and B [K]; got %d-d, %d-d and %d-d", pd_ndim(x),
             pd_ndim(w), pd_ndim(b));
    PD_CHECK(pd_dim(x, 1) == pd_dim(w, 0) && pd_dim(w, 1) == pd_dim(b, 0),
             "X [N, D], W [D, K] and B [K] disagree: D %lld vs %lld, K %lld vs %lld",
             (long long)pd_dim(x, 1), (long long)pd_dim(w, 0), (long long)pd_dim(w, 1),
             (long long)pd_dim(b, 0));
    int64_t shape[2] = {pd_dim(x, 0), pd_dim(w, 1)};
    pd_set_output_shape(ctx, 0, 2, shape);
}

static void linear_dtype(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == pd_dtype(pd_input(ctx, 1)) && pd_dtype(x) == pd_dtype(pd_input(ctx, 2)),
             "X, W and B must have one dtype");
    pd_set_output_dtype(ctx, 0, pd_dtype(x));
}

static void linear_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *w = pd_input(ctx, 1), *b = pd_input(ctx, 2);
    int64_t n = pd_dim(x, 0), d = pd_dim(x, 1), k = pd_dim(w, 1);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "train_linear", {
        const data_t *px = (const data_t *)pd_data(x), *pw = (const data_t *)pd_data(w);
        const data_t *pb = (const data_t *)pd_data(b);
        data_t *po = (data_t *)pd_data(pd_output(ctx, 0));
        for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < k; ++c) {
                data_t s = pb[c];
                for (int64_t j = 0; j < d; ++j)
                    s += px[r * d + j] * pw[j * k + c];
                po[r * k + c] = s;
            }
    });
}

/* inputs X, W, B, Out@GRAD; outputs X@GRAD, W@GRAD, B@GRAD (shapes of X, W, B) */
static void linear_backward(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0), *w = pd_input(ctx, 1), *g = pd_input(ctx, 3);
    int64_t n = pd_dim(x, 0), d = pd_dim(x, 1), k = pd_dim(w, 1);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "train_linear_grad", {
        const data_t *px = (const data_t *)pd_data(x), *pw = (const data_t *)pd_data(w);
        const data_t *pg = (const data_t *)pd_data(g);
        data_t *gx = (data_t *)pd_data(pd_output(ctx, 0));
        data_t *gw = (data_t *)pd_data(pd_output(ctx, 1));
        data_t *gb = (data_t *)pd_data(pd_output(ctx, 2));
        for (int64_t r = 0; r < n; ++r)
            for (int64_t j = 0; j < d; ++j) {
                data_t s = 0;
                for (int64_t c = 0; c < k; ++c)
                    s += pg[r * k + c] * pw[j * k + c];
                gx[r * d + j] = s;
            }
        for (int64_t j = 0; j < d; ++j)
            for (int64_t c = 0; c < k; ++c) {
                data_t s = 0;
                for (int64_t r = 0; r < n; ++r)
                    s += px[r * d + j] * pg[r * k + c];
                gw[j * k + c] = s;
            }
        for (int64_t c = 0; c < k; ++c) {
            data_t s = 0;
            for (int64_t r = 0; r < n; ++r)
                s += pg[r * k + c];
            gb[c] = s;
        }
    });
}

static void xent_shape(pd_kernel_ctx *ctx)
{
    const pd_tensor *logits = pd_input(ctx, 0), *label = pd_input(ctx, 1);
    PD_CHECK(pd_ndim(logits) == 2 && pd_ndim(label) == 1 && pd_dim(label, 0) == pd_dim(logits, 0),
             "Logits must be [N, K] and Label [N]");
    PD_CHECK(pd_dtype(label) == PD_INT64, "Label must be int64 class indices, got %s",
             pd_dtype_name(pd_dtype(label)));
    int64_t one = 1;
    pd_set_output_shape(ctx, 0, 1, &one);
}

static void xent_dtype(pd_kernel_ctx *ctx)
{
    pd_set_output_dtype(ctx, 0, pd_dtype(pd_input(ctx, 0)));
}

/* Row r's softmax into p (k entries), computed in double and shifted by the row's max. */
#define SOFTMAX_ROW(data_t, pl, r, k, p)                                                \
    do {                                                                                \
        double m_ = (double)(pl)[(r) * (k)], z_ = 0;                                    \
        for (int64_t c_ = 1; c_ < (k); ++c_)                                            \
            m_ = (double)(pl)[(r) * (k) + c_] > m_ ? (double)(pl)[(r) * (k) + c_] : m_; \
        for (int64_t c_ = 0; c_ < (k); ++c_)                                            \
            z_ += (p)[c_] = exp((double)(pl)[(r) * (k) + c_] - m_);                     \
        for (int64_t c_ = 0; c_ < (k); ++c_)                                            \
            (p)[c_] /= z_;                                                              \
    } while (0)

static void xent_forward(pd_kernel_ctx *ctx)
{
    const pd_tensor *logits = pd_input(ctx, 0), *label = pd_input(ctx, 1);
    int64_t n = pd_dim(logits, 0), k = pd_dim(logits, 1);
    const int64_t *pl = (const int64_t *)pd_data(label);
    double *p = (double *)pd_scratch(ctx, sizeof(double) * (size_t)(k > 0 ? k : 1));
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(logits), "train_softmax_xent", {
        const data_t *px = (const data_t *)pd_data(logits);
        double loss = 0;
        for (int64_t r = 0; r < n; ++r) {
            PD_CHECK(pl[r] >= 0 && pl[r] < k, "Label[%lld] = %lld is not a class in [0, %lld)",
                     (long long)r, (long long)pl[r], (long long)k);
            SOFTMAX_ROW(data_t, px, r, k, p);
            loss -= log(p[pl[r]]);
        }
        ((data_t *)pd_data(pd_output(ctx, 0)))[0] = (data_t)(n > 0 ? loss / (double)n : 0);
    });
}

/* inputs Logits, Label, Loss@GRAD; output Logits@GRAD */
static void xent_backward(pd_kernel_ctx *ctx)
{
    const pd_tensor *logits = pd_input(ctx, 0), *label = pd_input(ctx, 1), *g = pd_input(ctx, 2);
    int64_t n = pd_dim(logits, 0), k = pd_dim(logits, 1);
    const int64_t *pl = (const int64_t *)pd_data(label);
    double *p = (double *)pd_scratch(ctx, sizeof(double) * (size_t)(k > 0 ? k : 1));
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(logits), "train_softmax_xent_grad", {
        const data_t *px = (const data_t *)pd_data(logits);
        double scale = (double)((const data_t *)pd_data(g))[0] / (double)(n > 0 ? n : 1);
        data_t *gx = (data_t *)pd_data(pd_output(ctx, 0));
        for (int64_t r = 0; r < n; ++r) {
            SOFTMAX_ROW(data_t, px, r, k, p);
            for (int64_t c = 0; c < k; ++c)
                gx[r * k + c] = (data_t)((p[c] - (c == pl[r] ? 1.0 : 0.0)) * scale);
        }
    });
}

PD_BUILD_OP(train_linear,
    .inputs = {"X", "W", "B"},
    .outputs = {"Out"},
    .kernel = linear_forward,
    .infer_shape = linear_shape,
    .infer_dtype = linear_dtype);

PD_BUILD_GRAD_OP(train_linear,
    .inputs = {"X", "W", "B", PD_GRAD("Out")},
    .outputs = {PD_GRAD("X"), PD_GRAD("W"), PD_GRAD("B")},
    .kernel = linear_backward);

PD_BUILD_OP(train_softmax_xent,
    .inputs = {"Logits", "Label"},
    .outputs = {"Loss"},
    .kernel = xent_forward,
    .infer_shape = xent_shape,
    .infer_dtype = xent_dtype);

PD_BUILD_GRAD_OP(train_softmax_xent,
    .inputs = {"Logits", "Label", PD_GRAD("Loss")},
    .outputs = {PD_GRAD("Logits")},
    .kernel = xent_backward);
