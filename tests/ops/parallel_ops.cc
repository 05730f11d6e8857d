// parallel_ops.cc - ops that exercise pd_parallel_for from C++ (tests/parallel_test.c): a
// lambda body and a function-pointer body, and errors thrown inside chunks.
//
//   par_cc_cover(X) -> Hits, attr grain: Hits[i] counts the visits of index i (lambda body).
//   par_cc_fail(X), attrs kind, bad: the chunk holding index `bad` fails with PD_CHECK in a
//     lambda (kind 0), a std::runtime_error("boom") (kind 1) or PD_THROW in a function-pointer
//     body (kind 2). `Alive` counts the kernel's live guard objects: their destructors must
//     have run when the error reaches the host.
#include "extension.h"

#include <stdexcept>

namespace {

int alive = 0;

struct guard_object {
    guard_object() { ++alive; }
    ~guard_object() { --alive; }
};

void cover_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t *hits = static_cast<int64_t *>(pd_data(pd_output(ctx, 0)));
    int64_t n = pd_numel(x);
    for (int64_t i = 0; i < n; ++i)
        hits[i] = 0;
    pd_parallel_for(ctx, n, pd_attr_int64(ctx, 0), [hits](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
            __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    });
}

void throwing_chunk(void *arg, int64_t begin, int64_t end)
{
    int64_t bad = *static_cast<const int64_t *>(arg);
    for (int64_t i = begin; i < end; ++i)
        if (i == bad)
            PD_THROW("index %lld is bad", static_cast<long long>(i));
}

void fail_kernel(pd_kernel_ctx *ctx)
{
    guard_object keep;
    const pd_tensor *x = pd_input(ctx, 0);
    int64_t kind = pd_attr_int64(ctx, 0), bad = pd_attr_int64(ctx, 1);
    int64_t n = pd_numel(x);
    if (kind == 0) {
        pd_parallel_for(ctx, n, 1, [bad](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i)
                PD_CHECK(i != bad, "index %lld is bad", static_cast<long long>(i));
        });
    } else if (kind == 1) {
        pd_parallel_for(ctx, n, 1, [bad](int64_t begin, int64_t end) {
            if (bad >= begin && bad < end)
                throw std::runtime_error("boom");
        });
    } else {
        pd_parallel_for(ctx, n, 1, throwing_chunk, &bad);
    }
    PD_THROW("the loop returned although a chunk failed");
}

void alive_kernel(pd_kernel_ctx *ctx)
{
    *static_cast<int64_t *>(pd_data(pd_output(ctx, 0))) = alive;
}
void alive_infer_shape(pd_kernel_ctx *ctx) { pd_set_output_shape(ctx, 0, 0, nullptr); }
void alive_infer_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_INT64); }

} // namespace

PD_BUILD_OP(par_cc_cover,
    .inputs = {"X"},
    .outputs = {"Hits"},
    .attrs = {"grain: int64_t"},
    .kernel = cover_kernel);

PD_BUILD_OP(par_cc_fail,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"kind: int64_t", "bad: int64_t"},
    .kernel = fail_kernel);

PD_BUILD_OP(par_cc_alive,
    .inputs = {"X"},
    .outputs = {"Alive"},
    .kernel = alive_kernel,
    .infer_shape = alive_infer_shape,
    .infer_dtype = alive_infer_dtype);
