/*
 * walk.c - the row walk of the tensor functions (math_internal.h) and their operand checks.
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
}
