/*
 * runner.c - pd_op_run and pd_run: one op call from the host's arguments to its results.
 *
 * A call goes: bind the host's input tensors to the declared inputs (by name or position)
 * and check them; prepare them for the kernel; match attrs by name to the declarations and
 * check their types, filling in declared defaults; note which host output slot receives each
 * declared output; then, under an error frame, apply the default inference, run infer_shape /
 * infer_dtype and the kernel; check that every required output was made and matches what
 * inference said; and finally hand the outputs to the host, all of them or, on any error,
 * none.
 *
 * One binder serves every call. Per-op facts computed at registration (ops/pd_registry_internal.h:
 * which inputs are plain, which attrs are required, whether outputs need setting up) let it take
 * the usual case (a positional pd_arg holding one good tensor for a plain input; a plain
 * output made as inferred) with a few compares and no second pass; anything else, in the same
 * loops, goes to the per-declaration checks, which give every message. The fast cases are
 * counted (pd__runner_stats) so that a test can tell that they ran.
 *
 * The context lives on this function's stack (kernel_ctx.h says why that is cheap). Binding
 * by position does no string work at all; names are compared only when the host uses them.
 * Nothing here takes a lock: the op is immutable once registered and the context is the
 * calling thread's own, so any number of threads may run ops at once.
 *
 * The general binder and its messages are bind.c, the outputs' checks and messages
 * hand_over.c (bind.h); this file keeps the steps every call takes, inlined into the entry
 * points, and the executor's step entry points over the same steps (runner_steps.h).
 */
#include "call/bind.h"
#include "call/runner_steps.h"
#include "call/strided_inputs.h"
#include "ops/pd_registry_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps of every call, inlined into both entry points (the compiler would outline them). */
#define CALL_STEP static inline __attribute__((always_inline))

_Thread_local pd__runner_stats_t pd__runner_stats __attribute__((tls_model("initial-exec")));

/* --- Setting up the context ------------------------------------------------------------------ */

CALL_STEP void ctx_init(pd_kernel_ctx *ctx, const pd_op *op)
{
    ctx->op = op;
    ctx->phase = PD__PHASE_INFER;
    ctx->n_inputs = op->n_inputs;
    ctx->n_attrs = op->n_attrs;
    ctx->arena = false;      /* set up by its first use (ctx_arena.c) */
    ctx->err_message = NULL; /* (outer is set on entering the call) */
    ctx->err_set = false;
    ctx->inputs_ready = false;
    ctx->n_outputs = 0; /* no output slot to release until bind_outputs sets them up */
    ctx->has_dest = false;
    ctx->workspace_made = false;
}

/* Releases the output tensors the call still holds: after a successful hand_over (`handed`)
 * those of the outputs the host did not ask for or gave destinations for (the others belong
 * to the host: their items still show the moved tensors, and are skipped), else all. A tensor
 * made in the host's own (pd__out_item_direct) is released too, which leaves it undefined, as
 * the host gave it; a view of a destination holds no reference. */
static __attribute__((noinline)) void release_outputs(pd_kernel_ctx *ctx, bool handed)
{
    for (int32_t o = 0; o < ctx->n_outputs; ++o) {
        pd__out_slot *slot = &ctx->out[o];
        if (handed && slot->host_arg != PD__UNBOUND && slot->dest == NULL)
            continue;
        for (int32_t k = 0; k < slot->count; ++k) {
            pd_tensor *t = slot->items[k].t;
            if (t->storage != NULL || t->dtype != PD_UNDEFINED)
                pd_tensor_release(t);
        }
    }
}

/* Releases what the call still holds. The usual call, whose outputs all went to the host,
 * has no output left to look at. */
CALL_STEP void ctx_release(pd_kernel_ctx *ctx, bool handed)
{
    if (!handed || ctx->n_unbound != 0 || ctx->has_dest)
        release_outputs(ctx, handed);
    if (ctx->arena)
        pd__ctx_arena_release(ctx);
    if (ctx->err_message) /* an error C++ op code caught, and its hook then reported none */
        free(ctx->err_message);
}

/* --- Binding inputs ------------------------------------------------------------------------ */

/* input_tensor_ok, and what the runner's input step (strided_inputs.h) would check too: dense
 * and inside its storage. One pass over the dims for both, so that the usual call pays for the
 * storage-bounds check no second loop; a tensor this refuses goes through the general binder
 * and the input step, which say what is wrong with it. The byte size it works out goes to
 * *bytes (-1 past PTRDIFF_MAX), for the outputs that mirror the tensor (bind_outputs). */
CALL_STEP bool input_ready(const pd_tensor *t, int64_t *bytes)
{
    if ((unsigned)t->dtype - 1u >= PD_NUM_DTYPES - 1u || (unsigned)t->ndim > PD_MAX_DIMS ||
        t->layout != PD_LAYOUT_DENSE)
        return false;
    uint64_t n = pd_dtype_size(t->dtype);
    for (int32_t d = 0; d < t->ndim; ++d)
        if (t->shape[d] < 0 || __builtin_mul_overflow(n, (uint64_t)t->shape[d], &n))
            return false;
    *bytes = n <= (uint64_t)PTRDIFF_MAX ? (int64_t)n : -1;
    if (n == 0)
        return true; /* a zero dim: no element, any data pointer */
    if (t->data == NULL)
        return false;
    if (t->storage == NULL)
        return true;
    uint64_t at = (uint64_t)((uintptr_t)t->data - (uintptr_t)t->storage->ptr);
    return at <= t->storage->bytes && n <= t->storage->bytes - at;
}

/* Binds and checks the host's inputs. The usual call gives every input by position, each a
 * plain declaration (pd_op.plain_inputs) with one well-formed tensor: that is all this loop
 * accepts, with a few compares per input. At the first pd_arg it does not accept, binding goes
 * on from there in bind_inputs_from, which has every rule and message; nothing is done twice. */
CALL_STEP pd_status bind_inputs(pd_kernel_ctx *ctx, const pd_arg *args, int32_t n)
{
    const pd_op *op = ctx->op;
    int32_t j = 0;
    if (n == op->n_inputs && args != NULL) {
        bool one_place = true; /* every input on the first one's place (the input step's rule) */
        for (; j < n; ++j) {
            const pd_arg *a = &args[j];
            if (a->name != NULL || a->count != 1 || a->tensors == NULL ||
                !(op->plain_inputs >> j & 1u) || !input_ready(a->tensors, &ctx->in[j].bytes))
                break;
            ctx->in[j].tensors = a->tensors;
            ctx->in[j].count = 1;
            if (j > 0)
                one_place = one_place && pd_place_equal(a->tensors->place, args[0].tensors->place);
        }
        pd__runner_stats.fast_inputs += (uint64_t)j;
        ctx->inputs_ready = j == n && op->strided_inputs == 0 && one_place;
    }
    if (j < n || n != op->n_inputs)
        return pd__bind_inputs_from(ctx, args, n, j);
    return PD_OK;
}

/* --- Binding outputs ------------------------------------------------------------------------ */

/* The host's output pd_arg o (positional, with room, like every one before it) shares its
 * first tensor with an earlier one: two outputs must not be made in the same tensor. */
static bool host_tensor_shared(const pd_arg *args, int32_t o)
{
    const pd_tensor *t = args[o].tensors;
    for (int32_t p = 0; p < o; ++p)
        if (t >= args[p].tensors && t < args[p].tensors + args[p].count)
            return true;
    return false;
}

/* Sets up every declared output slot (one undefined item) and notes which host pd_arg
 * receives it, in one pass. The usual call asks for outputs by position, each with room; the
 * first pd_arg that is named or has none hands the rest to bind_outputs_named. A plain output
 * whose host tensor is free (pd__out_tensor_free) is made right there; under pd_op_run_into
 * (`into`), an output whose host tensor is defined gets it as its destination.
 *
 * The usual op (pd_op.plain_infer: no infer functions, nothing to set up: every output one
 * item mirroring at most one input's first tensor) gets its inference here too, one copy per
 * mirroring output from an input bound just before: its inputs cannot change shape or dtype
 * on the way to the kernel (the input step makes copies of the same shape and dtype). */
CALL_STEP pd_status bind_outputs(pd_kernel_ctx *ctx, const pd_arg *args, int32_t n,
                                 const int32_t *source, bool into)
{
    const pd_op *op = ctx->op;
    ctx->n_outputs = op->n_outputs; /* from here on ctx_release reads the slots */
    bool list_ok = (uint32_t)n <= (uint32_t)op->n_outputs && (n == 0 || args != NULL);
    int32_t from = list_ok ? n : 0; /* the first pd_arg bind_outputs_named must see */
    for (int32_t o = 0; o < op->n_outputs; ++o) {
        pd__out_slot *slot = &ctx->out[o];
        const pd__arg_decl *d = &op->outputs[o];
        slot->items = &slot->one;
        slot->count = 1;
        slot->capacity = 1;
        slot->host_arg = PD__UNBOUND;
        slot->may_stay_unset = d->is_optional;
        slot->dest = NULL;
        pd__out_item *it = &slot->one;
        bool direct = false;
        if (o < from) {
            const pd_arg *a = &args[o];
            if (a->name == NULL && a->count >= 1 && a->tensors != NULL) {
                slot->host_arg = o;
                if (!d->is_vector && pd__out_tensor_free(a->tensors) &&
                    (o == 0 || !host_tensor_shared(args, o))) {
                    pd__out_item_direct(it, a->tensors);
                    direct = true;
                } else if (into && a->tensors[0].dtype != PD_UNDEFINED) {
                    pd__bind_set_dest(ctx, slot, a);
                }
            } else {
                from = o;
            }
        }
        if (!direct)
            pd__out_item_reset(it);
        if (op->plain_infer && source[o] >= 0) {
            const pd__in_slot *in = &ctx->in[source[o]];
            const pd_tensor *t = &in->tensors[0];
            it->ndim = t->ndim;
            memcpy(it->shape, t->shape, sizeof it->shape); /* as in default_infer */
            it->dtype = t->dtype;
            it->bytes = in->bytes;
        }
    }
    /* outputs past `from` are bound by name, if at all, in bind_outputs_named */
    ctx->n_unbound = op->n_outputs - from;
    if (!list_ok)
        return pd__bind_refuse_outputs(ctx, args, n);
    if (from < n)
        return pd__bind_outputs_named(ctx, args, n, from, into);
    return PD_OK;
}

/* --- Inference and the kernel ---------------------------------------------------------------- */

/* Output item counts (vector outputs mirror their source) and inplace tensors; only for ops
 * whose registration found some output that needs it (pd_op.setup_outputs). */
static void setup_outputs(pd_kernel_ctx *ctx, const int32_t *source)
{
    const pd_op *op = ctx->op;
    for (int32_t o = 0; o < op->n_outputs; ++o) {
        int32_t s = source[o];
        if (s < 0)
            continue;
        const pd__in_slot *in = &ctx->in[s];
        if (in->count == 0)
            ctx->out[o].may_stay_unset = true; /* e.g. the gradient of an absent optional */
        if (op->outputs[o].is_vector && (op->infer_shape == NULL || op->inplace_input[o] >= 0))
            pd__ctx_resize_output(ctx, o, in->count);
        if (op->inplace_input[o] >= 0) {
            pd__out_slot *slot = &ctx->out[o];
            for (int32_t k = 0; k < slot->count && k < in->count; ++k)
                pd_tensor_retain(slot->items[k].t, &in->tensors[k]);
        }
    }
}

/* The runner's default inference: each output that mirrors an input takes its items' shapes
 * (with `shapes`) or dtypes (with `dtypes`), for whichever the op has no infer function. */
static inline void default_infer(pd_kernel_ctx *ctx, const int32_t *source, bool shapes,
                                 bool dtypes)
{
    for (int32_t o = 0; o < ctx->n_outputs; ++o) {
        if (source[o] < 0)
            continue;
        const pd__in_slot *in = &ctx->in[source[o]];
        pd__out_slot *slot = &ctx->out[o];
        int32_t n = slot->count < in->count ? slot->count : in->count;
        for (int32_t k = 0; k < n; ++k) {
            const pd_tensor *t = &in->tensors[k];
            pd__out_item *it = &slot->items[k];
            if (shapes) { /* all of it, a fixed-size copy: entries past ndim are never read */
                it->ndim = t->ndim;
                memcpy(it->shape, t->shape, sizeof it->shape);
            }
            if (dtypes)
                it->dtype = t->dtype;
        }
    }
}

/* Runs op code: directly, or through the module's C++ invoke hook, which catches what the code
 * throws and reports it (report_error) before it returns, so no jump ever crosses C++ frames.
 * False when the code failed without a jump: the context holds the message. */
static inline bool call_op_code(pd_kernel_ctx *ctx, pd_kernel_fn fn)
{
    pd_invoke_fn invoke = ctx->op->invoke;
    if (invoke == NULL) {
        fn(ctx);
        return true;
    }
    int rc = invoke(fn, ctx);
    if (rc != 0 && !ctx->err_set)
        pd__ctx_report_error(ctx, PD_ERR_INTERNAL, NULL, 0,
                             "the module's C++ invoke hook failed (%d) but reported no error", rc);
    return !ctx->err_set; /* also when the code caught a table function's error */
}

/* Inference for every op but the usual kind: outputs set up from their inputs, infer functions,
 * and the default inference for whatever they leave out. False when op code failed without a
 * jump. */
static __attribute__((noinline)) bool run_inference(pd_kernel_ctx *ctx, const int32_t *source)
{
    const pd_op *op = ctx->op;
    if (op->setup_outputs)
        setup_outputs(ctx, source);
    if (op->infer_shape) {
        if (!call_op_code(ctx, op->infer_shape))
            return false;
    } else {
        default_infer(ctx, source, true, false);
    }
    if (op->infer_dtype) {
        if (!call_op_code(ctx, op->infer_dtype))
            return false;
    } else {
        default_infer(ctx, source, false, true);
    }
    return true;
}

/* The input step (strided_inputs.h) for a call whose binder could not see to it. */
static __attribute__((noinline)) void prepare_inputs(pd_kernel_ctx *ctx)
{
    if (!pd__ctx_inputs_ready(ctx))
        pd__ctx_prepare_inputs(ctx);
}

/* Inference and the kernel; false when op code failed without a jump. Not inlined into
 * run_protected: code in a function that calls sigsetjmp keeps its locals in memory, for the
 * jump's sake, which here would cost more than the call. The usual op (pd_op.plain_infer) had
 * its inference in bind_outputs; other ops go through run_inference, kept out of line, like
 * the input step, so that this function stays small. */
static __attribute__((noinline)) bool run_steps(pd_kernel_ctx *ctx, const int32_t *source)
{
    /* storage bounds, strided inputs, unless the binder saw to both */
    if (ctx->inputs_ready)
        ++pd__runner_stats.ready_inputs;
    else
        prepare_inputs(ctx);
    const pd_op *op = ctx->op;
    if (op->plain_infer)
        ++pd__runner_stats.plain_infers;
    else if (!run_inference(ctx, source))
        return false;
    ctx->phase = PD__PHASE_KERNEL;
    return call_op_code(ctx, op->kernel);
}

/* Inference and kernel under the error frame; false when op code threw or failed (the context
 * holds the message). The frame is armed here, in a function of its own that is never inlined,
 * so that the only locals living across the jump are `ctx` and `source`, which never change
 * after sigsetjmp (C11 7.13.2.1: other non-volatile locals would be indeterminate after the
 * jump). Everything the call changes lives in *ctx, in the caller's frame. */
static __attribute__((noinline)) bool run_protected(pd_kernel_ctx *ctx, const int32_t *source)
{
    pd__ctx_enter(ctx);
    if (PD__FRAME_ARM(ctx->frame) != 0) {
        pd__ctx_leave(ctx);
        return false;
    }
    bool ok = run_steps(ctx, source);
    pd__ctx_leave(ctx);
    return ok;
}

/* --- Checking and handing over the outputs ------------------------------------------------- */

/* Every check before anything is written, then the outputs' references moved into the host's
 * slots: all of them, or none. The fast case, an output of one item that was made as
 * inferred and fits the host's slot, is decided by a few field compares; any other output goes
 * through check_output. The usual call then has nothing left to write: its outputs were made
 * in the host's tensors (pd__out_item_direct), whose pd_args already say one tensor. An output
 * with destinations is checked against them too, and its items not made there are copied in
 * (a failed copy leaves the earlier outputs written). */
CALL_STEP pd_status hand_over(pd_kernel_ctx *ctx, const int32_t *source, pd_arg *args)
{
    int32_t counts[PD_MAX_OUTPUTS];
    pd_tensor *made[PD_MAX_OUTPUTS]; /* arrays made for pd_args that left tensors NULL */
    uint32_t made_mask = 0;          /* bit o: made[o] is set (only slow outputs set it) */
    bool writes = false;             /* some host pd_arg needs its tensors or count written */
    for (int32_t o = 0; o < ctx->n_outputs; ++o) {
        const pd__out_slot *slot = &ctx->out[o];
        const pd__out_item *it = &slot->items[0];
        int32_t j = slot->host_arg;
        if (slot->count == 1 && slot->dest == NULL && it->t->dtype != PD_UNDEFINED &&
            pd__item_as_inferred(it) && (j == PD__UNBOUND || args[j].count >= 1)) {
            counts[o] = 1;
            writes = writes ||
                     (j != PD__UNBOUND && (args[j].count != 1 || args[j].tensors != it->t));
            ++pd__runner_stats.fast_outputs;
            continue;
        }
        made[o] = NULL;
        pd_status s = pd__check_output(ctx, source, args, o, &counts[o], &made[o]);
        made_mask |= (uint32_t)(made[o] != NULL) << o;
        if (s == PD_OK && slot->dest != NULL)
            s = pd__check_dest(ctx, o, counts[o]);
        if (s != PD_OK)
            return made_mask ? pd__free_made(ctx, args, made, made_mask, s) : s;
        writes = true;
    }
    if (!writes)
        return PD_OK;
    for (int32_t o = 0; o < ctx->n_outputs; ++o) {
        const pd__out_slot *slot = &ctx->out[o];
        if (slot->host_arg == PD__UNBOUND)
            continue;
        pd_arg *a = &args[slot->host_arg];
        int32_t n = counts[o];
        if (slot->dest != NULL) { /* the host keeps its tensors; their memory has the items */
            pd_status s = pd__fill_dest(ctx, o, n);
            if (s != PD_OK)
                return made_mask ? pd__free_made(ctx, args, made, made_mask, s) : s;
            a->count = n;
            continue;
        }
        a->count = n;
        if (made_mask >> o & 1u)
            a->tensors = made[o];
        for (int32_t k = 0; k < n; ++k)             /* moved: ctx_release skips the slot */
            if (slot->items[k].t != &a->tensors[k]) /* else made in the host's tensor */
                a->tensors[k] = *slot->items[k].t;
    }
    return PD_OK;
}

/* --- Public ----------------------------------------------------------------------------------- */

/* The binding steps of every call (the synchronous runner's and the executor's): the context
 * set up, then inputs, attrs and outputs bound with the binder's messages. */
CALL_STEP pd_status bind_call(pd_kernel_ctx *ctx, const pd_op *op, const pd_arg *inputs,
                              int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs,
                              const pd_arg *outputs, int32_t n_outputs, bool into)
{
    ctx_init(ctx, op);
    pd_status s = bind_inputs(ctx, inputs, n_inputs);
    if (s == PD_OK && (n_attrs != 0 || op->n_attrs != 0))
        s = pd__bind_attrs(ctx, attrs, n_attrs);
    if (s == PD_OK)
        s = bind_outputs(ctx, outputs, n_outputs, op->default_source, into);
    return s;
}

/* One call of a (non-NULL) op. Inlined into the public entry points, so that pd_run reaches
 * it without a second trip through the PLT; `into` is a constant in each, so pd_op_run's copy
 * has no destination code. */
CALL_STEP pd_status run_op(const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                           const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs,
                           int32_t n_outputs, bool into)
{
    pd_kernel_ctx ctx;
    const int32_t *source = op->default_source;
    pd_status s = bind_call(&ctx, op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs, into);
    /* Inputs an executor may still be computing: while calls are in flight, and on a device
     * always (a launched call's work may still be queued on its executor stream). */
    if (s == PD_OK && (atomic_load_explicit(&pd__async_in_flight, memory_order_acquire) != 0 ||
                       !pd_place_is_host(*pd__ctx_first_input_place(&ctx))))
        s = pd__ctx_wait_inputs(&ctx);
    if (s == PD_OK && !run_protected(&ctx, source))
        s = pd__ctx_report(&ctx);
    if (s == PD_OK)
        s = hand_over(&ctx, source, outputs);
    ctx_release(&ctx, s == PD_OK);
    return s;
}

pd_status pd_op_run(const pd_op *op, const pd_arg *inputs, int32_t n_inputs, const pd_attr *attrs,
                    int32_t n_attrs, pd_arg *outputs, int32_t n_outputs)
{
    if (op == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_op_run: op is NULL");
    return run_op(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs, false);
}

pd_status pd_op_run_into(const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                         const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs, int32_t n_outputs)
{
    if (op == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_op_run_into: op is NULL");
    return run_op(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs, true);
}

pd_status pd__runner_run_counted(const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                                 const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs,
                                 int32_t n_outputs, atomic_uint_fast64_t *count)
{
    pd_status s = run_op(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs, false);
    if (s == PD_OK)
        atomic_store_explicit(count, atomic_load_explicit(count, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    return s;
}

pd_status pd_run(const pd_registry *reg, const char *name, const pd_arg *inputs, int32_t n_inputs,
                 const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs, int32_t n_outputs)
{
    if (reg == NULL || name == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_run: %s is NULL", reg ? "name" : "registry");
    /* The snapshot probe pd_op_find makes, without its wrapper; only a miss goes through
     * pd_op_find, for its message (and its "did you mean"). */
    const pd_op *op = pd__registry_lookup(reg, name);
    if (op == NULL && (op = pd_op_find(reg, name)) == NULL)
        return pd_last_status();
    return run_op(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs, false);
}

/* --- The steps one at a time (runner_steps.h) --------------------------------------------- */

/* The executor (exec/) runs the steps above on different threads. These entry points call
 * the same step functions; pd_op_run does not go through them. */

pd_status pd__runner_bind(pd_kernel_ctx *ctx, const pd_op *op, const pd_arg *inputs,
                          int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs,
                          const pd_arg *outputs, int32_t n_outputs)
{
    return bind_call(ctx, op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs, false);
}

pd_status pd__runner_bind_meta(pd_kernel_ctx *ctx, const pd_op *op, const pd_arg *inputs,
                               int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs)
{
    pd__binding_meta = true;
    pd_status s = bind_call(ctx, op, inputs, n_inputs, attrs, n_attrs, NULL, 0, false);
    pd__binding_meta = false;
    return s;
}

bool pd__runner_protected(pd_kernel_ctx *ctx, pd__runner_stage_fn stage, void *arg)
{
    /* As in run_protected: only ctx, stage and arg live across the jump, never changed. */
    pd__ctx_enter(ctx);
    if (PD__FRAME_ARM(ctx->frame) != 0) {
        pd__ctx_leave(ctx);
        return false;
    }
    bool ok = stage(ctx, arg);
    pd__ctx_leave(ctx);
    return ok;
}

bool pd__runner_input_step(pd_kernel_ctx *ctx, void *unused)
{
    (void)unused;
    if (!ctx->inputs_ready && !pd__ctx_inputs_ready(ctx))
        pd__ctx_prepare_inputs(ctx);
    ctx->inputs_ready = true;
    return true;
}

bool pd__runner_infer_step(pd_kernel_ctx *ctx, void *unused)
{
    (void)unused;
    if (ctx->op->plain_infer) /* bind_outputs did it */
        return true;
    return run_inference(ctx, ctx->op->default_source);
}

bool pd__runner_kernel_step(pd_kernel_ctx *ctx, void *unused)
{
    (void)unused;
    ctx->phase = PD__PHASE_KERNEL;
    return call_op_code(ctx, ctx->op->kernel);
}

pd_status pd__runner_hand_over(pd_kernel_ctx *ctx, pd_arg *outputs)
{
    return hand_over(ctx, ctx->op->default_source, outputs);
}

void pd__runner_release(pd_kernel_ctx *ctx, bool handed) { ctx_release(ctx, handed); }
