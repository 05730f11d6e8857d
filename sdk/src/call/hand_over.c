/*
 * hand_over.c - the outputs' checks with every message, for the runner's hand-over (runner.c)
 * and the executor's (pd__runner_check_outputs): each required item made, each as inference
 * said, room in the host's slot, destinations that fit (pd_op_run_into); and the copies into
 * destinations of the items the kernel did not make there. The usual output (one item, made
 * as inferred) is decided in runner.c with a few compares and never comes here.
 */
#include "call/bind.h"
#include "call/runner_steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *plural(int32_t n) { return n == 1 ? "" : "s"; }

/* How many of the slot's items the host receives: all, or 0 for an output that may stay unset
 * and was; -1 (message set) if a required one is missing. */
static int32_t defined_count(const pd_kernel_ctx *ctx, int32_t o)
{
    const pd__out_slot *slot = &ctx->out[o];
    int32_t defined = 0, first_missing = -1;
    for (int32_t k = 0; k < slot->count; ++k) {
        if (slot->items[k].t->dtype != PD_UNDEFINED)
            ++defined;
        else if (first_missing < 0)
            first_missing = k;
    }
    if (first_missing < 0 || (defined == 0 && slot->may_stay_unset))
        return defined;
    const char *name = ctx->op->outputs[o].base;
    if (ctx->op->outputs[o].is_vector)
        pd__fail(PD_ERR_OP_FAILED,
                 "%s: item %d of output '%s' was not set by the kernel; the kernel must make "
                 "it with pd_output_at(ctx, %d, %d) or give one with pd_set_output_at",
                 ctx->op->name, (int)first_missing, name, (int)o, (int)first_missing);
    else
        pd__fail(PD_ERR_OP_FAILED,
                 "%s: output '%s' was not set by the kernel; the kernel must make it with "
                 "pd_output(ctx, %d) or give one with pd_set_output",
                 ctx->op->name, name, (int)o);
    return -1;
}

/* "output 'Out'" or "item 2 of output 'Out'", for messages. */
static const char *output_text(const pd_kernel_ctx *ctx, int32_t o, int32_t k, char *buf,
                               size_t size)
{
    if (ctx->op->outputs[o].is_vector)
        snprintf(buf, size, "item %d of output '%s'", (int)k, ctx->op->outputs[o].base);
    else
        snprintf(buf, size, "output '%s'", ctx->op->outputs[o].base);
    return buf;
}

/* Who decided what output `o` should be: "infer_shape" / "infer_dtype", or for the runner's
 * defaults "the default inference from input 'X'". */
static const char *inferred_by(const pd_kernel_ctx *ctx, pd_kernel_fn fn, const char *fn_name,
                               int32_t source, char *buf, size_t size)
{
    if (fn != NULL || source < 0)
        return fn_name;
    snprintf(buf, size, "the default inference from input '%s'", ctx->op->inputs[source].base);
    return buf;
}

/* The message for an item that is not as inferred. */
static __attribute__((noinline)) pd_status item_mismatch(const pd_kernel_ctx *ctx, int32_t o,
                                                         int32_t k, int32_t source)
{
    const pd__out_item *it = &ctx->out[o].items[k];
    const pd_tensor *t = it->t;
    char what[PD__NAME_MAX + 32], who[PD__NAME_MAX + 64];
    if (it->ndim >= 0 &&
        (t->ndim != it->ndim || memcmp(t->shape, it->shape, sizeof(int64_t) * (size_t)t->ndim))) {
        char got[256], want[256];
        return pd__fail(PD_ERR_OP_FAILED, "%s: %s has shape %s but %s said %s", ctx->op->name,
                        output_text(ctx, o, k, what, sizeof what),
                        pd__dims_text(t->ndim, t->shape, got, sizeof got),
                        inferred_by(ctx, ctx->op->infer_shape, "infer_shape", source, who,
                                    sizeof who),
                        pd__dims_text(it->ndim, it->shape, want, sizeof want));
    }
    if (it->dtype != PD_UNDEFINED && t->dtype != it->dtype)
        return pd__fail(PD_ERR_OP_FAILED, "%s: %s has dtype %s but %s said %s", ctx->op->name,
                        output_text(ctx, o, k, what, sizeof what), pd_dtype_name(t->dtype),
                        inferred_by(ctx, ctx->op->infer_dtype, "infer_dtype", source, who,
                                    sizeof who),
                        pd_dtype_name(it->dtype));
    return PD_OK;
}

/* The checks of output o with every message: required items made, each as inferred, and,
 * with the host's pd_args (`args` not NULL), room in its slot or an array made for it. Its
 * item count for the host goes to *count. */
pd_status pd__check_output(pd_kernel_ctx *ctx, const int32_t *source, const pd_arg *args, int32_t o,
                           int32_t *count, pd_tensor **made)
{
    int32_t n = defined_count(ctx, o);
    if (n < 0)
        return PD_ERR_OP_FAILED;
    for (int32_t k = 0; k < n; ++k)
        if (!pd__item_as_inferred(&ctx->out[o].items[k]))
            return item_mismatch(ctx, o, k, source[o]);
    *count = n;
    int32_t j = ctx->out[o].host_arg;
    if (args == NULL || j == PD__UNBOUND)
        return PD_OK;
    if (args[j].tensors == NULL && n > 0) {
        /* the host left the room to the runner: an array of exactly n (pd_arg_release) */
        if ((*made = calloc((size_t)n, sizeof **made)) == NULL)
            return pd__fail(PD_ERR_OUT_OF_MEMORY,
                            "%s: out of memory for the %d items of output '%s'", ctx->op->name,
                            (int)n, ctx->op->outputs[o].base);
    } else if (args[j].count < n) {
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: output '%s' has %d tensor%s, but its pd_arg has room for %d",
                        ctx->op->name, ctx->op->outputs[o].base, (int)n, plural(n),
                        (int)args[j].count);
    }
    return PD_OK;
}

/* Output o has destinations (pd__out_slot.dest): each of its n items has one that fits. */
pd_status pd__check_dest(const pd_kernel_ctx *ctx, int32_t o, int32_t n)
{
    const pd__out_slot *slot = &ctx->out[o];
    char why[1024];
    for (int32_t k = 0; k < n; ++k) {
        const pd_tensor *t = slot->items[k].t;
        if (k >= slot->n_dest || slot->dest[k].dtype == PD_UNDEFINED)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: output '%s' has %d tensor%s, but only %d of the tensors given to "
                            "write it into are defined; give every item one, or none",
                            ctx->op->name, ctx->op->outputs[o].base, (int)n, plural(n), (int)k);
        if (!pd__ctx_dest_fits(ctx, o, k, &slot->dest[k], t->dtype, t->ndim, t->shape, t->place,
                               why, sizeof why))
            return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s", ctx->op->name, why);
    }
    return PD_OK;
}

/* Copies the items of output o that the kernel did not make in their destinations (it set
 * them with pd_set_output, or they are inplace) into them. */
pd_status pd__fill_dest(const pd_kernel_ctx *ctx, int32_t o, int32_t n)
{
    const pd__out_slot *slot = &ctx->out[o];
    for (int32_t k = 0; k < n; ++k) {
        const pd_tensor *t = slot->items[k].t, *d = &slot->dest[k];
        if (t->data == d->data && pd_is_contiguous(t))
            continue; /* made there */
        pd_status s = pd__copy_across(ctx->op->name, d->data, d->place, d->dtype, t);
        if (s != PD_OK)
            return s;
    }
    return PD_OK;
}

/* The executor's check once the kernel ran (the host's pd_args are handed over later, by
 * pd__runner_hand_over): the same checks as the runner's, one output at a time. */
pd_status pd__runner_check_outputs(pd_kernel_ctx *ctx)
{
    for (int32_t o = 0; o < ctx->n_outputs; ++o) {
        int32_t n = 0;
        pd_status s = pd__check_output(ctx, ctx->op->default_source, NULL, o, &n, NULL);
        if (s != PD_OK)
            return s;
    }
    return PD_OK;
}

pd_status pd__free_made(const pd_kernel_ctx *ctx, pd_arg *args, pd_tensor *const *made,
                        uint32_t mask, pd_status st)
{
    for (; mask != 0; mask &= mask - 1) {
        int32_t o = __builtin_ctz(mask);
        pd_arg *a = &args[ctx->out[o].host_arg];
        if (a->tensors == made[o]) { /* handed already: its items go back with the call's */
            a->tensors = NULL;
            a->count = 0;
        }
        free(made[o]);
    }
    return st;
}

void pd_arg_release(pd_arg *a)
{
    if (a == NULL || a->tensors == NULL)
        return;
    for (int32_t k = 0; k < a->count; ++k)
        pd_tensor_release(&a->tensors[k]);
    free(a->tensors);
    a->tensors = NULL;
    a->count = 0;
}
