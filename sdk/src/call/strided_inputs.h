/*
 * strided_inputs.h - the runner's input step (strided_inputs.c) as the runner calls it: an
 * inline test for the usual case (an op without strided inputs, every input dense and inside
 * its storage), which costs a few compares per input, and the out-of-line step for the rest.
 */
#ifndef PD_STRIDED_INPUTS_H
#define PD_STRIDED_INPUTS_H

#include "call/kernel_ctx.h"

/* A dense tensor lies inside its storage (or has none to check against). Shapes are >= 0
 * (the binder checked them); an overflowing byte size is not inside. */
static inline bool pd__dense_input_fits(const pd_tensor *t)
{
    if (t->storage == NULL)
        return true;
    uint64_t n = pd_dtype_size(t->dtype);
    for (int32_t d = 0; d < t->ndim; ++d)
        if (__builtin_mul_overflow(n, (uint64_t)t->shape[d], &n))
            return false;
    uint64_t at = (uint64_t)((uintptr_t)t->data - (uintptr_t)t->storage->ptr);
    uint64_t bytes = t->storage->bytes;
    return n == 0 || (at <= bytes && n <= bytes - at);
}

/* Nothing for pd__ctx_prepare_inputs to do: the op takes no strided inputs, and every input
 * is dense, inside its storage and on the first input's place (anything else goes to the
 * out-of-line step, which refuses inputs on two devices). */
static inline bool pd__ctx_inputs_ready(const pd_kernel_ctx *ctx)
{
    if (ctx->op->strided_inputs != 0)
        return false;
    const pd_place *first = NULL;
    for (int32_t i = 0; i < ctx->n_inputs; ++i)
        for (int32_t k = 0; k < ctx->in[i].count; ++k) {
            const pd_tensor *t = &ctx->in[i].tensors[k];
            if (t->layout != PD_LAYOUT_DENSE || !pd__dense_input_fits(t))
                return false;
            if (first == NULL)
                first = &t->place;
            else if (t->place.type != first->type || t->place.device_id != first->device_id)
                return false;
        }
    return true;
}

#endif /* PD_STRIDED_INPUTS_H */
