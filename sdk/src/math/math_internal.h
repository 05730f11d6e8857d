/*
 * math_internal.h - what the tensor functions (elementwise.c, reduce.c, matmul.c, fill.c)
 * share: operand checks with op-style messages, the row walk over a strided index space, the
 * numpy broadcasting of two operands onto it, and accumulator scratch.
 *
 * The walk. An elementwise function visits an index space (a shape) with up to three
 * operands, each with its own element strides over that space (0 on broadcast axes). Axes
 * that every operand steps through evenly are merged first, so a dense or simply strided
 * operand becomes one long row; the kernels then run a tight loop per row with the innermost
 * strides, and the walk steps the row offsets of the outer axes.
 */
#ifndef PD_MATH_INTERNAL_H
#define PD_MATH_INTERNAL_H

#include "call/kernel_ctx.h"

#define PD__WALK_MAX_OPS 3

typedef struct pd__walk {
    int32_t nd;   /* axes after merging; at least 1 */
    int32_t nops; /* operands */
    int64_t rows; /* product of shape[0..nd-2] */
    int64_t shape[PD_MAX_DIMS];
    int64_t strides[PD__WALK_MAX_OPS][PD_MAX_DIMS]; /* in elements */
} pd__walk;

/* A walk over `shape` (ndim axes) for nops operands whose strides the caller then fills in
 * strides[k][0..ndim-1], before pd__walk_merge. */
void pd__walk_init(pd__walk *w, int32_t nops, int32_t ndim, const int64_t *shape);
/* Drops unit axes and merges axes every operand steps through evenly; sets rows. */
void pd__walk_merge(pd__walk *w);
/* Steps the row offsets off[0..nops-1] (and the outer index idx) to the next row. */
static inline void pd__walk_next(const pd__walk *w, int64_t *idx, int64_t *off)
{
    for (int32_t d = w->nd - 2; d >= 0; --d) {
        if (++idx[d] < w->shape[d]) {
            for (int32_t k = 0; k < w->nops; ++k)
                off[k] += w->strides[k][d];
            return;
        }
        idx[d] = 0;
        for (int32_t k = 0; k < w->nops; ++k)
            off[k] -= w->strides[k][d] * (w->shape[d] - 1);
    }
}

/* numpy broadcasting of a's leading na dims with b's leading nb dims: the result's dims into
 * shape[0..n) and a's and b's strides over them (0 on broadcast axes) into w->strides[1] and
 * w->strides[2]; returns n. Ends the call on dims that do not broadcast: `who` is the function,
 * `an` / `bn` name the operands, `what` the dims ("shapes", "batch dims"). */
int32_t pd__walk_broadcast(pd__walk *w, int64_t *shape, const char *who, const char *what,
                           const pd_tensor *a, const char *an, int32_t na, const pd_tensor *b,
                           const char *bn, int32_t nb);

/* n accumulators for dtype's elements, zeroed, in the call's scratch: 8 bytes each (uint64_t
 * for integers, double or float for reals), 16 for complex (a pair of doubles). */
void *pd__math_accumulators(pd_kernel_ctx *ctx, pd_data_type dtype, int64_t n);

/* Ends the call unless t is an initialized tensor in host memory: `who` is the function
 * ("pd_add"), `arg` the argument ("a"). A device tensor gives PD_ERR_UNAVAILABLE. */
void pd__math_operand(const char *who, const char *arg, const pd_tensor *t);

/* "[2, 3]" of t's shape into buf. */
const char *pd__math_shape(const pd_tensor *t, char *buf, size_t size);

#endif /* PD_MATH_INTERNAL_H */
