/*
 * walk.c - the row walk of the tensor functions (math_internal.h), the numpy broadcasting that
 * sets its strides, their accumulator scratch and their operand checks.
 */
#include "math/math_internal.h"

#include <string.h>

void pd__walk_init(pd__walk *w, int32_t nops, int32_t ndim, const int64_t *shape)
{
    memset(w, 0, sizeof *w);
    w->nops = nops;
    w->nd = ndim;
    for (int32_t d = 0; d < ndim; ++d)
        w->shape[d] = shape[d];
}

void pd__walk_merge(pd__walk *w)
{
    bool empty = false;
    for (int32_t d = 0; d < w->nd; ++d)
        empty = empty || w->shape[d] == 0;
    int32_t nd = 0;
    for (int32_t d = 0; d < w->nd; ++d) {
        if (w->shape[d] == 1) /* a unit axis moves nothing */
            continue;
        bool even = nd > 0;
        for (int32_t k = 0; even && k < w->nops; ++k)
            even = w->strides[k][nd - 1] == w->strides[k][d] * w->shape[d];
        if (even) { /* the previous kept axis steps over this one exactly: one axis */
            w->shape[nd - 1] *= w->shape[d];
            for (int32_t k = 0; k < w->nops; ++k)
                w->strides[k][nd - 1] = w->strides[k][d];
            continue;
        }
        w->shape[nd] = w->shape[d];
        for (int32_t k = 0; k < w->nops; ++k)
            w->strides[k][nd] = w->strides[k][d];
        ++nd;
    }
    if (nd == 0 || empty) { /* a single element, or none: one row of that length */
        w->shape[0] = empty ? 0 : 1;
        for (int32_t k = 0; k < w->nops; ++k)
            w->strides[k][0] = 0;
        nd = 1;
    }
    w->nd = nd;
    w->rows = 1;
    for (int32_t d = 0; d < nd - 1; ++d)
        w->rows *= w->shape[d];
}

int32_t pd__walk_broadcast(pd__walk *w, int64_t *shape, const char *who, const char *what,
                           const pd_tensor *a, const char *an, int32_t na, const pd_tensor *b,
                           const char *bn, int32_t nb)
{
    int32_t nd = na > nb ? na : nb;
    for (int32_t d = 0; d < nd; ++d) {
        int32_t da = d - (nd - na), db = d - (nd - nb);
        int64_t ea = da >= 0 ? a->shape[da] : 1, eb = db >= 0 ? b->shape[db] : 1;
        if (ea != eb && ea != 1 && eb != 1) {
            char sa[96], sb[96];
            pd__ctx_throw(PD_ERR_OP_FAILED,
                          "%s: %s %s (%s) and %s (%s) do not broadcast: axis %d of the result "
                          "would be %lld and %lld",
                          who, what, pd__math_shape(a, sa, sizeof sa), an,
                          pd__math_shape(b, sb, sizeof sb), bn, (int)d, (long long)ea,
                          (long long)eb);
        }
        shape[d] = ea == 1 ? eb : ea;
        w->strides[1][d] = da >= 0 && ea != 1 ? pd_stride(a, da) : 0;
        w->strides[2][d] = db >= 0 && eb != 1 ? pd_stride(b, db) : 0;
    }
    return nd;
}

void *pd__math_accumulators(pd_kernel_ctx *ctx, pd_data_type dtype, int64_t n)
{
    size_t size = pd_dtype_is_complex(dtype) ? sizeof(pd_complex128) : sizeof(uint64_t);
    size_t bytes = (size_t)(n > 0 ? n : 1) * size;
    void *acc = pd__ctx_scratch(ctx, bytes);
    memset(acc, 0, bytes); /* all-zero bits: 0 and 0.0 alike */
    return acc;
}

const char *pd__math_shape(const pd_tensor *t, char *buf, size_t size)
{
    return pd__dims_text(t->ndim, t->shape, buf, size);
}

void pd__math_operand(const char *who, const char *arg, const pd_tensor *t)
{
    if (!pd_initialized(t))
        pd__ctx_throw(PD_ERR_OP_FAILED, "%s: %s is %s", who, arg,
                      t == NULL ? "NULL" : "undefined or has no memory");
    if (t->dtype < PD_BOOL || t->dtype > PD_COMPLEX128)
        pd__ctx_throw(PD_ERR_OP_FAILED, "%s: %s has data type number %d, which is none", who, arg,
                      (int)t->dtype);
    if (!pd_place_is_host(t->place)) {
        char place[64];
        pd__place_format(t->place, place, sizeof place);
        pd__ctx_throw(PD_ERR_UNAVAILABLE,
                      "%s: %s is on %s; the tensor functions compute in host memory only (no "
                      "device kernels for them in this runtime): copy it to the CPU first",
                      who, arg, place);
    }
    /* A hand-made view must stay inside its storage: the walks read every element it names. */
    if (pd__tensor_check_bounds(who, arg, t) != PD_OK)
        pd__ctx_throw(PD_ERR_OP_FAILED, "%s", pd_last_error());
}
