/*
 * strided_inputs.c - what the runner does with its input tensors between binding them and
 * running op code: it refuses a tensor that reaches outside its storage (a host may edit a
 * tensor struct by hand; a kernel would then read past the memory), makes strided inputs
 * contiguous for kernels that read pd_data as a dense array, and gives inputs of ops that
 * accept strided tensors filled strides (a host's hand-made dense struct may leave them 0).
 * Which inputs of an op may stay strided is decided at registration (ops/opdef.c,
 * pd__op_parse_strided).
 *
 * Cost: the common case (dense inputs, a dense op) is the inline test of strided_inputs.h,
 * a few compares per input; this file runs only when that test says there is work.
 */
#include "call/strided_inputs.h"

#include <stdio.h>
#include <string.h>

/* "input 'X'" or "item 2 of input 'X'", for messages. */
static const char *input_text(const pd_kernel_ctx *ctx, int32_t i, int32_t k, char *buf,
                              size_t size)
{
    const pd__arg_decl *d = &ctx->op->inputs[i];
    if (d->is_vector)
        snprintf(buf, size, "item %d of input '%s'", (int)k, d->base);
    else
        snprintf(buf, size, "input '%s'", d->base);
    return buf;
}

/* The strides array holds the dense strides (a struct the runtime made), not zeros. */
static bool dense_strides_filled(const pd_tensor *t)
{
    int64_t s = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
        if (t->strides[d] != s)
            return false;
        s *= t->shape[d] > 0 ? t->shape[d] : 1;
    }
    return true;
}

static __attribute__((noinline, noreturn)) void refuse_bounds(pd_kernel_ctx *ctx, int32_t i,
                                                              int32_t k, const pd_tensor *t)
{
    char what[PD__NAME_MAX + 48];
    pd_status st = pd__tensor_check_bounds(NULL, input_text(ctx, i, k, what, sizeof what), t);
    if (st == PD_OK) /* pd__dense_input_fits refused an overflowing size */
        pd__fail(PD_ERR_INVALID_ARGUMENT, "%s has a shape whose byte size overflows", what);
    pd__ctx_throw(PD_ERR_INVALID_ARGUMENT, "%s", pd_last_error());
}

/* Item k of input i is on another device than the call's first input: one op call runs on
 * one device (its outputs and its stream are the first input's), so it is refused, naming
 * both places. Host memory (CPU, GPU-pinned) mixes freely: the CPU reads both. */
static __attribute__((noinline, noreturn)) void refuse_place(pd_kernel_ctx *ctx, int32_t i,
                                                             int32_t k, const pd_tensor *t)
{
    char what[PD__NAME_MAX + 48], here[96], first[96];
    const pd_place *p = pd__ctx_first_input_place(ctx);
    pd__place_format(t->place, here, sizeof here);
    pd__place_format(*p, first, sizeof first);
    pd__ctx_throw(PD_ERR_INVALID_ARGUMENT,
                  "%s is on %s, but the call runs on %s (its first input's place); copy it "
                  "there first (pd_tensor_copy_to)",
                  input_text(ctx, i, k, what, sizeof what), here, first);
}

/* t may join a call on `first`: same place, both host memory, or t is no tensor. */
static inline bool same_device(const pd_tensor *t, const pd_place *first)
{
    return (t->place.type == first->type && t->place.device_id == first->device_id) ||
           t->place.type == PD_PLACE_UNDEFINED ||
           (pd_place_is_host(t->place) && pd_place_is_host(*first));
}

/* Whether input i is written in place (an output aliases it). */
static bool is_inplace_input(const pd_op *op, int32_t i)
{
    for (int32_t o = 0; o < op->n_outputs; ++o)
        if (op->inplace_input[o] == i)
            return true;
    return false;
}

/* Slot i with call-owned replacements for the items that need them. */
static __attribute__((noinline)) void replace_items(pd_kernel_ctx *ctx, int32_t i)
{
    pd__in_slot *in = &ctx->in[i];
    bool strided_ok = (ctx->op->strided_inputs >> i) & 1u;
    pd_tensor *items = pd__ctx_scratch(ctx, (size_t)in->count * sizeof(pd_tensor));
    memcpy(items, in->tensors, (size_t)in->count * sizeof(pd_tensor));
    for (int32_t k = 0; k < in->count; ++k) {
        pd_tensor *t = &items[k];
        if (t->layout == PD_LAYOUT_DENSE) {
            if (strided_ok && !dense_strides_filled(t))
                pd__dense_strides(t->ndim, t->shape, t->strides);
            continue;
        }
        if (strided_ok)
            continue;
        char what[PD__NAME_MAX + 48];
        if (is_inplace_input(ctx->op, i))
            pd__ctx_throw(PD_ERR_INVALID_ARGUMENT,
                          "%s is a strided view and the op writes it in place, so it cannot "
                          "work on a contiguous copy; pass a contiguous tensor (from C: "
                          "pd_tensor_contiguous; from Python: a contiguous array, e.g. "
                          "numpy.ascontiguousarray, written back after the call) or let the op "
                          "accept strided inputs (pd_op_def.strided_inputs)",
                          input_text(ctx, i, k, what, sizeof what));
        /* A dense copy owned by the call, which the arena releases when the call ends. */
        pd_tensor *dense = pd__ctx_empty(ctx, t->dtype, t->place, t->ndim, t->shape);
        if (pd__copy_across("pd_input", dense->data, dense->place, dense->dtype, t) != PD_OK)
            pd__ctx_throw(pd_last_status(), "%s", pd_last_error());
        *t = *dense;
    }
    in->tensors = items;
}

void pd__ctx_prepare_inputs(pd_kernel_ctx *ctx)
{
    const pd_op *op = ctx->op;
    const pd_place *first = pd__ctx_first_input_place(ctx);
    for (int32_t i = 0; i < ctx->n_inputs; ++i) {
        const pd__in_slot *in = &ctx->in[i];
        bool strided_ok = (op->strided_inputs >> i) & 1u;
        bool replace = false;
        for (int32_t k = 0; k < in->count; ++k) {
            const pd_tensor *t = &in->tensors[k];
            bool dense = t->layout == PD_LAYOUT_DENSE;
            if (dense ? !pd__dense_input_fits(t)
                      : t->storage != NULL && pd__tensor_check_bounds(NULL, "", t) != PD_OK)
                refuse_bounds(ctx, i, k, t);
            if (!same_device(t, first))
                refuse_place(ctx, i, k, t);
            replace = replace || (dense ? strided_ok && !dense_strides_filled(t) : !strided_ok);
        }
        if (replace)
            replace_items(ctx, i);
    }
}
