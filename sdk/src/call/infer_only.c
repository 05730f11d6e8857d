/*
 * infer_only.c - pd_op_infer: what a call's outputs will be (count, dtype, shape), from the
 * op's infer functions or the runner's default inference, before any data exists. The hosts
 * that trace or plan a graph ask it: torch's fake kernels, JAX's result shapes at trace time,
 * ONNX Runtime's shape inference. It runs the runner's own bind and infer steps (runner_steps.h),
 * so that it checks, infers and words its errors exactly as a real call would; it stops before
 * the input step and the kernel, so no input's data is read by the runtime.
 */
#include "call/runner_steps.h"

#include <string.h>

/* The item's description: inference's, or the tensor itself for an in-place output (which
 * is its input's tensor). False when neither says the dtype and the shape. */
static bool describe_item(const pd__out_item *it, const pd_place *place, pd_tensor *out)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    bool made = it->t != NULL && it->t->dtype != PD_UNDEFINED;
    t.dtype = it->dtype != PD_UNDEFINED ? it->dtype : made ? it->t->dtype : PD_UNDEFINED;
    if (it->ndim >= 0) {
        t.ndim = it->ndim;
        memcpy(t.shape, it->shape, sizeof t.shape);
    } else if (made) {
        t.ndim = it->t->ndim;
        memcpy(t.shape, it->t->shape, sizeof t.shape);
    } else {
        return false;
    }
    if (t.dtype == PD_UNDEFINED)
        return false;
    t.place = made ? it->t->place : *place;
    t.layout = PD_LAYOUT_DENSE;
    int64_t s = 1;
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
        t.strides[d] = s;
        s *= t.shape[d];
    }
    *out = t;
    return true;
}

/* Writes every output's description into the host's slots (by position), all or none. */
static pd_status describe_outputs(pd_kernel_ctx *ctx, pd_arg *outputs, int32_t n_outputs)
{
    const pd_op *op = ctx->op;
    const pd_place *place = pd__ctx_first_input_place(ctx);
    for (int32_t o = 0; o < n_outputs; ++o)
        if (ctx->out[o].count > outputs[o].count) {
            /* Too little room: every slot learns its item count, for a second call with room
             * enough (a vector output's count is known only once inference ran). */
            pd_status s = pd__fail(PD_ERR_INVALID_ARGUMENT,
                                   "pd_op_infer: %s: output '%s' has %d tensors, but its slot "
                                   "has room for %d; call again with the counts now in the slots",
                                   op->name, op->outputs[o].base, (int)ctx->out[o].count,
                                   (int)outputs[o].count);
            for (int32_t k = 0; k < n_outputs; ++k)
                outputs[k].count = ctx->out[k].count;
            return s;
        }
    for (int32_t o = 0; o < n_outputs; ++o) {
        const pd__out_slot *slot = &ctx->out[o];
        pd_tensor probe;
        for (int32_t k = 0; k < slot->count; ++k)
            if (!describe_item(&slot->items[k], place, &probe) && !slot->may_stay_unset)
                return pd__fail(PD_ERR_INVALID_ARGUMENT,
                                "pd_op_infer: %s: output '%s' has no shape or dtype before its "
                                "kernel runs (the op has no infer function that sets it, and it "
                                "mirrors no input): its shape depends on the data, which a "
                                "trace or a graph cannot know",
                                op->name, op->outputs[o].base);
    }
    for (int32_t o = 0; o < n_outputs; ++o) {
        const pd__out_slot *slot = &ctx->out[o];
        for (int32_t k = 0; k < slot->count; ++k) {
            pd_tensor *t = &outputs[o].tensors[k];
            if (!describe_item(&slot->items[k], place, t))
                *t = (pd_tensor)PD_TENSOR_UNDEFINED;
        }
        outputs[o].count = slot->count;
    }
    return PD_OK;
}

pd_status pd_op_infer(const pd_op *op, const pd_arg *inputs, int32_t n_inputs, const pd_attr *attrs,
                      int32_t n_attrs, pd_arg *outputs, int32_t n_outputs)
{
    if (op == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_op_infer: op is NULL");
    if (n_outputs < 0 || n_outputs > op->n_outputs || (n_outputs > 0 && outputs == NULL))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "pd_op_infer: %s declares %d outputs; got %d output slots%s", op->name,
                        (int)op->n_outputs, (int)n_outputs,
                        n_outputs > 0 && outputs == NULL ? " and a NULL array" : "");
    for (int32_t o = 0; o < n_outputs; ++o)
        if (outputs[o].count > 0 && outputs[o].tensors == NULL)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "pd_op_infer: %s: output slot %d has room for %d tensors but a NULL "
                            "array",
                            op->name, (int)o, (int)outputs[o].count);
    pd_kernel_ctx ctx;
    pd_status s = pd__runner_bind_meta(&ctx, op, inputs, n_inputs, attrs, n_attrs);
    if (s == PD_OK && !pd__runner_protected(&ctx, pd__runner_infer_step, NULL))
        s = pd__ctx_report(&ctx);
    if (s == PD_OK)
        s = describe_outputs(&ctx, outputs, n_outputs);
    pd__runner_release(&ctx, false);
    return s;
}
