/*
 * bind.h - the runner's parts in other files (private to call/): the binder's general path
 * and its messages (bind.c) and the output checks and copies of the hand-over (hand_over.c).
 * The usual call never leaves runner.c, whose always-inline steps take the fast cases and
 * call into these files only at the first argument they do not accept.
 */
#ifndef PD_CALL_BIND_H
#define PD_CALL_BIND_H

#include "call/kernel_ctx.h"

/* Marks a declared output the host has not asked for (pd__out_slot.host_arg). */
#define PD__UNBOUND (-1)

/* Set while pd__runner_bind_meta binds (pd_op_infer): inputs then describe tensors and may
 * have no data. Read only where an input was refused already, so a call pays nothing for it. */
extern _Thread_local bool pd__binding_meta __attribute__((tls_model("initial-exec")));

/* --- bind.c ------------------------------------------------------------------------------- */

/* Binds the host's inputs from pd_arg `from` on (those before it are bound, by position, and
 * checked): names, counts other than one, optional and vector inputs, and every refusal. */
pd_status pd__bind_inputs_from(pd_kernel_ctx *ctx, const pd_arg *args, int32_t n, int32_t from);
/* Matches the host's attrs to the declarations, checks them and fills in defaults. */
pd_status pd__bind_attrs(pd_kernel_ctx *ctx, const pd_attr *attrs, int32_t n);
/* A host output list or pd_arg the binder refuses; every message. */
pd_status pd__bind_refuse_outputs(pd_kernel_ctx *ctx, const pd_arg *args, int32_t n);
/* The host's pd_arg `a` gives output `slot` defined tensors: the results go into them. */
void pd__bind_set_dest(pd_kernel_ctx *ctx, pd__out_slot *slot, const pd_arg *a);
/* Binds outputs from the host's pd_arg `from` on, once one is named or has no room. */
pd_status pd__bind_outputs_named(pd_kernel_ctx *ctx, const pd_arg *args, int32_t n, int32_t from,
                                 bool into);

/* --- hand_over.c -------------------------------------------------------------------------- */

/* The item's tensor is what inference said (where it said anything). A loop, not memcmp: a
 * rank of one or two is the usual case. */
static inline __attribute__((always_inline)) bool pd__item_as_inferred(const pd__out_item *it)
{
    const pd_tensor *t = it->t;
    if (it->ndim >= 0) {
        if (t->ndim != it->ndim)
            return false;
        for (int32_t d = 0; d < t->ndim; ++d)
            if (t->shape[d] != it->shape[d])
                return false;
    }
    return it->dtype == PD_UNDEFINED || t->dtype == it->dtype;
}

/* The checks of output o with every message: required items made, each as inferred, room in
 * the host's slot. Its item count for the host goes to *count; for a host pd_arg that left
 * its tensors NULL (and count 0), *made receives an array for the items (NULL for none),
 * which the host frees with pd_arg_release. */
pd_status pd__check_output(pd_kernel_ctx *ctx, const int32_t *source, const pd_arg *args, int32_t o,
                           int32_t *count, pd_tensor **made);
/* A hand-over that fails after arrays were made (bit o of `mask`: made[o]): frees them (the
 * pd_args that received one are set back to NULL, count 0); returns st. */
pd_status pd__free_made(const pd_kernel_ctx *ctx, pd_arg *args, pd_tensor *const *made,
                        uint32_t mask, pd_status st);
/* Output o has destinations (pd__out_slot.dest): each of its n items has one that fits. */
pd_status pd__check_dest(const pd_kernel_ctx *ctx, int32_t o, int32_t n);
/* Copies the items of output o that the kernel did not make in their destinations into them. */
pd_status pd__fill_dest(const pd_kernel_ctx *ctx, int32_t o, int32_t n);

#endif /* PD_CALL_BIND_H */
