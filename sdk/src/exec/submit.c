/*
 * submit.c - one call through the executor's stages (pdext_executor.h): the caller's stage
 * (bind, capture, infer, allocate the outputs, hand them over pending, enqueue) and the
 * launch stage on the stream's worker (wait for inputs of other streams, workspace, kernel,
 * outputs settled, completion finished).
 *
 * Both stages are the runner's steps (call/runner_steps.h) on a context kept on the heap, so
 * that every check and every message is pd_op_run's. What the executor adds is capture:
 * the host's input tensors are retained and its attr values copied, since the host may
 * release or reuse them as soon as pd_run_async returns.
 */
#include "call/runner_steps.h"
#include "exec/executor_internal.h"
#include "ops/pd_registry_internal.h"

#include <stdlib.h>
#include <string.h>

/* --- Capture --------------------------------------------------------------------------------- */

/* Bytes of an attr value's out-of-line data (strings and arrays), to copy. */
static size_t attr_extra(const pd_attr *a)
{
    size_t n = 0;
    switch (a->type) {
    case PD_ATTR_STRING: return strlen(a->v.s) + 1;
    case PD_ATTR_INTS: return (size_t)a->count * sizeof(int32_t);
    case PD_ATTR_FLOATS: return (size_t)a->count * sizeof(float);
    case PD_ATTR_INT64S: return (size_t)a->count * sizeof(int64_t);
    case PD_ATTR_STRINGS:
        n = (size_t)a->count * sizeof(char *);
        for (int32_t k = 0; k < a->count; ++k)
            n += strlen(a->v.strings[k]) + 1;
        return n;
    default: return 0;
    }
}

/* Copies the bound attr values' data into one block and points the context at it. */
static pd_status copy_attrs(pd__exec_call *call)
{
    pd_kernel_ctx *ctx = &call->ctx;
    size_t total = 0;
    for (int32_t i = 0; i < ctx->n_attrs; ++i)
        total += (attr_extra(&ctx->attrs[i]) + 7) & ~(size_t)7;
    call->attr_copy = NULL;
    if (total == 0)
        return PD_OK;
    char *p = malloc(total);
    if (p == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory copying attrs", ctx->op->name);
    call->attr_copy = p;
    for (int32_t i = 0; i < ctx->n_attrs; ++i) {
        pd_attr *a = &ctx->attrs[i];
        size_t n = attr_extra(a);
        if (n == 0)
            continue;
        if (a->type == PD_ATTR_STRINGS) {
            char **list = (char **)(void *)p;
            char *s = p + (size_t)a->count * sizeof(char *);
            for (int32_t k = 0; k < a->count; ++k) {
                size_t len = strlen(a->v.strings[k]) + 1;
                memcpy(s, a->v.strings[k], len);
                list[k] = s;
                s += len;
            }
            a->v.strings = (const char *const *)list;
        } else {
            memcpy(p, a->type == PD_ATTR_STRING ? (const void *)a->v.s : (const void *)a->v.ints,
                   n);
            a->v.ints = (const int32_t *)(void *)p; /* the union's one pointer */
        }
        p += (n + 7) & ~(size_t)7;
    }
    return PD_OK;
}

/* Retains the bound input tensors into the call (the context then binds the copies) and
 * notes the completions of those still pending (device work included). */
static pd_status capture_inputs(pd__exec_call *call)
{
    pd_kernel_ctx *ctx = &call->ctx;
    int32_t n = 0;
    for (int32_t i = 0; i < ctx->n_inputs; ++i)
        n += ctx->in[i].count;
    if (n == 0)
        return PD_OK;
    if (n <= PD__EXEC_INLINE) { /* the usual call: the call's own arrays */
        call->inputs = call->inline_inputs;
        call->deps = call->inline_deps;
        call->dep_places = call->inline_dep_places;
    } else {
        call->inputs = malloc((size_t)n * sizeof(pd_tensor));
        call->deps = malloc((size_t)n * sizeof(pd__completion *));
        call->dep_places = malloc((size_t)n * sizeof(pd_place));
    }
    if (call->inputs == NULL || call->deps == NULL || call->dep_places == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory capturing inputs", ctx->op->name);
    int32_t j = 0;
    for (int32_t i = 0; i < ctx->n_inputs; ++i) {
        pd__in_slot *in = &ctx->in[i];
        pd_tensor *first = &call->inputs[j];
        for (int32_t k = 0; k < in->count; ++k, ++j) {
            const pd_tensor *t = &in->tensors[k];
            call->inputs[j] = *t;
            if (t->storage != NULL)
                pd__storage_retain(t->storage);
            call->n_inputs = j + 1;
            /* A call that is done may still have device work queued (its event): that is a
             * dependency too, which the launch orders on the device (wait_deps). The event
             * is read only once the done state is seen (it is written before the state). */
            pd__completion *c = pd__storage_pending(t->storage);
            if (c != NULL && (atomic_load_explicit(&c->state, memory_order_acquire) != PD__DONE ||
                              c->event != NULL)) {
                pd__completion_retain(c);
                call->dep_places[call->n_deps] = t->place;
                call->deps[call->n_deps++] = c;
            }
        }
        in->tensors = first;
    }
    return PD_OK;
}

/* --- The caller's stage --------------------------------------------------------------------- */

/* The call's place is a device's (its work goes on that device's stream). */
static bool on_device(const pd_kernel_ctx *ctx)
{
    return !pd_place_is_host(*pd__ctx_first_input_place(ctx));
}

/* A device call runs on its executor stream's own stream of the device, after the work the
 * submitter queued on its own stream of the device before the call (a synchronous call's
 * output, a torch stream's work): an event recorded here when that stream is busy, which
 * the device waits for at the launch. The device cache notes the call's stream on the inputs made
 * on another one, so that it reuses none of them under the call's work once the host drops them. */
static pd_status choose_device_stream(pd_executor *ex, pd__exec_call *call)
{
    pd_kernel_ctx *ctx = &call->ctx;
    if (!on_device(ctx))
        return PD_OK;
    pd_place place = *pd__ctx_first_input_place(ctx);
    pd_stream_t *host = pd_stream_current(place);
    pd_status s = host == NULL ? pd_last_status()
                               : pd__exec_device_stream(&ex->streams[call->stream], place,
                                                        &call->dev_stream);
    bool idle = false; /* nothing queued there: nothing to wait for (the usual case) */
    if (s == PD_OK && host != call->dev_stream &&
        !(pd_stream_query(host, &idle) == PD_OK && idle) &&
        (s = pd_event_create(place, &call->host_event)) == PD_OK)
        s = pd_event_record(call->host_event, host);
    if (s != PD_OK)
        return pd__fail_prefix("%s: ", ctx->op->name);
    /* An input another stream than the submitter's used last (a synchronous call's output on
     * a host's stream the submitter has left since): the call's stream waits for that one
     * too, by an event queued now (pd__device_block_order; inputs of the submitter's stream
     * are the host event's). */
    pd_device_stream dev = pd_stream_handle(call->dev_stream), mine = pd_stream_handle(host);
    for (int32_t j = 0; j < call->n_inputs && s == PD_OK; ++j) {
        pd_storage *in = call->inputs[j].storage;
        if (in == NULL)
            continue;
        pd__device_record_stream(in, dev);
        if (in->dev != NULL && pd__device_block_last(in) != mine)
            s = pd__device_block_order(ctx->op->name, in, dev);
    }
    return s;
}

/* The caller's steps with its thread's stream on the call's device swapped for the call's
 * own (so that the outputs are allocated on the stream their kernel runs on, which may reuse
 * their memory at once once they die); the thread's stream comes back after. */
static bool caller_steps_on(pd__exec_call *call, bool (*steps)(pd_kernel_ctx *, void *), void *arg)
{
    pd_stream_t *mine = NULL;
    pd_place place = *pd__ctx_first_input_place(&call->ctx);
    bool swapped = call->dev_stream != NULL &&
                   (mine = pd__stream_chosen(place)) != call->dev_stream &&
                   pd_stream_set_current(place, call->dev_stream) == PD_OK;
    bool ok = pd__runner_protected(&call->ctx, steps, arg);
    if (swapped)
        (void)pd_stream_set_current(place, mine);
    return ok;
}

/* An op whose infer_shape may size a vector output from input data: its inputs must be
 * computed before it infers. */
static bool infers_from_data(const pd_op *op)
{
    if (op->infer_shape == NULL)
        return false;
    for (int32_t o = 0; o < op->n_outputs; ++o)
        if (op->outputs[o].is_vector)
            return true;
    return false;
}

/* Every output item inference described fully, or made already (inplace). */
static bool outputs_described(const pd_kernel_ctx *ctx)
{
    for (int32_t o = 0; o < ctx->n_outputs; ++o)
        for (int32_t k = 0; k < ctx->out[o].count; ++k) {
            const pd__out_item *it = &ctx->out[o].items[k];
            if (it->t->dtype == PD_UNDEFINED && (it->ndim < 0 || it->dtype == PD_UNDEFINED))
                return false;
            /* an inplace output over a hand-made tensor (no storage) cannot carry a
             * completion: the caller waits for the launch instead */
            if (it->t->dtype != PD_UNDEFINED && it->t->storage == NULL)
                return false;
        }
    return true;
}

/* The binder makes a plain output in the host's own undefined tensor, to spare the hand-over
 * a copy; a pipelined call outlives the host's tensor struct (a stack variable, often), so its
 * outputs are made in the context and copied at the hand-over instead. */
static void own_outputs(pd_kernel_ctx *ctx)
{
    for (int32_t o = 0; o < ctx->n_outputs; ++o)
        for (int32_t k = 0; k < ctx->out[o].count; ++k) {
            pd__out_item *it = &ctx->out[o].items[k];
            if (it->t != &it->own) {
                it->own = *it->t; /* undefined, as the binder found it */
                it->t = &it->own;
            }
        }
}

/* An input is a hand-made tensor over the host's own memory (no storage to retain): the
 * memory is only known to be valid during the call, so the caller waits for the launch. */
static bool borrows_memory(const pd__exec_call *call)
{
    for (int32_t j = 0; j < call->n_inputs; ++j)
        if (call->inputs[j].storage == NULL && pd_numel(&call->inputs[j]) > 0)
            return true;
    return false;
}

/* The allocate step, on the caller: every output item not made yet, as inferred, on the
 * call's place: in a spare (memory this stream's worker touched last) when one fits, else
 * fresh. A host output whose size and place the runner's own checks accept is made here as
 * the runner makes its outputs (call/ctx.c); anything else goes through the checked
 * constructor, which throws the message (out of memory, a refused place). */
static void allocate_outputs(pd_kernel_ctx *ctx, void *arg)
{
    pd__exec_call *call = arg;
    const pd_place *place = pd__ctx_first_input_place(ctx);
    for (int32_t o = 0; o < ctx->n_outputs; ++o)
        for (int32_t k = 0; k < ctx->out[o].count; ++k) {
            pd__out_item *it = &ctx->out[o].items[k];
            if (it->t->dtype != PD_UNDEFINED)
                continue;
            size_t bytes = (size_t)it->bytes;
            pd_storage *storage = NULL;
            if (pd__place_ok(place) &&
                (it->bytes >= 0 || pd__shape_bytes(it->dtype, it->ndim, it->shape, &bytes))) {
                storage = bytes > 0 ? pd__exec_take_spare(call, bytes) : NULL;
                if (storage == NULL)
                    storage = pd__storage_alloc(place, bytes);
            }
            if (storage == NULL) {
                pd__ctx_make_tensor("pd_run_async", it->t, it->dtype, *place, it->ndim, it->shape);
                continue;
            }
            pd__out_item_make(it, storage, place);
        }
}

/* After a successful hand-over: the call keeps its own reference to every output item (the
 * host got the context's), in `outs`, and each output's storage points at the completion. */
static pd_status keep_outputs(pd__exec_call *call)
{
    pd_kernel_ctx *ctx = &call->ctx;
    int32_t n = 0;
    for (int32_t o = 0; o < ctx->n_outputs; ++o)
        n += ctx->out[o].count;
    call->outs = n <= PD__EXEC_INLINE ? call->inline_outs : malloc((size_t)n * sizeof(pd_tensor));
    if (call->outs == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op->name);
    /* One completion reference for each output's storage, made at once: nobody else knows
     * the completion yet. */
    atomic_store_explicit(&call->done->refs, 1 + n, memory_order_relaxed);
    for (int32_t o = 0; o < ctx->n_outputs; ++o) {
        pd__out_slot *slot = &ctx->out[o];
        for (int32_t k = 0; k < slot->count; ++k) {
            pd_tensor *t = slot->items[k].t;
            pd_tensor *kept = &call->outs[call->n_outs++];
            *kept = *t; /* outputs_described saw to it that it has storage */
            /* the call's reference, and the context's when the host got its own (moved) */
            atomic_fetch_add_explicit(&t->storage->refcount, slot->host_arg != -1 ? 2 : 1,
                                      memory_order_relaxed);
            pd__storage_give_pending(t->storage, call->done);
            if (call->dev_stream != NULL) /* allocated on another stream, or an inplace output */
                pd__device_record_stream(t->storage, pd_stream_handle(call->dev_stream));
            call->bytes += pd_nbytes(t);
        }
    }
    return PD_OK;
}

typedef struct caller_step_args {
    pd__exec_call *call;
    bool inputs_computed;
} caller_step_args;

/* The caller's runner steps, under one error frame: the input step when every input is
 * computed, inference, and (unless the caller must wait for the launch) the allocation of
 * the outputs. */
static bool caller_steps(pd_kernel_ctx *ctx, void *arg)
{
    caller_step_args *a = arg;
    if (a->inputs_computed)
        pd__runner_input_step(ctx, NULL);
    if (!pd__runner_infer_step(ctx, NULL))
        return false;
    a->call->wait_launch = !outputs_described(ctx) || borrows_memory(a->call);
    if (!a->call->wait_launch)
        allocate_outputs(ctx, a->call);
    return true;
}

/* Everything the caller does before the call may be enqueued; on failure nothing was
 * handed over. */
static pd_status prepare(pd_executor *ex, pd__exec_call *call, const pd_arg *inputs,
                         int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs,
                         int32_t n_outputs, const pd_op *op)
{
    pd_kernel_ctx *ctx = &call->ctx;
    pd_status s = pd__runner_bind(ctx, op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
    if (s == PD_OK)
        own_outputs(ctx);
    if (s == PD_OK)
        s = capture_inputs(call);
    if (s == PD_OK)
        s = copy_attrs(call);
    if (s == PD_OK)
        s = choose_device_stream(ex, call);
    if (s == PD_OK && call->n_deps > 0 && infers_from_data(op))
        for (int32_t j = 0; j < call->n_deps && s == PD_OK; ++j)
            s = pd__completion_wait(call->deps[j]);
    /* Inputs all computed: the input step runs here, so that an input outside its storage is
     * refused at the call. Otherwise the launch stage runs it. */
    bool ready = true;
    for (int32_t j = 0; j < call->n_deps; ++j)
        ready = ready &&
                atomic_load_explicit(&call->deps[j]->state, memory_order_acquire) == PD__DONE &&
                call->deps[j]->event == NULL;
    caller_step_args a = {call, ready};
    if (s == PD_OK && !caller_steps_on(call, caller_steps, &a))
        s = pd__ctx_report(ctx);
    if (s == PD_OK && (call->done = pd__completion_new(ex->id)) == NULL)
        s = pd_last_status();
    if (s == PD_OK && !call->wait_launch) {
        uint32_t unsized = 0; /* bit o: output o's pd_arg left its array to the runner */
        for (int32_t o = 0; o < ctx->n_outputs; ++o)
            if (ctx->out[o].host_arg != -1 && outputs[ctx->out[o].host_arg].tensors == NULL)
                unsized |= 1u << o;
        s = pd__runner_hand_over(ctx, outputs);
        if (s == PD_OK && keep_outputs(call) != PD_OK) {
            /* Undo the hand-over: the references it moved are still the context's (its items
             * show them), which releases them; the host's slots are cleared, and arrays the
             * runner made for them freed. */
            for (int32_t o = 0; o < ctx->n_outputs; ++o) {
                if (ctx->out[o].host_arg == -1)
                    continue;
                pd_arg *a = &outputs[ctx->out[o].host_arg];
                for (int32_t k = 0; k < a->count; ++k)
                    a->tensors[k] = (pd_tensor)PD_TENSOR_UNDEFINED;
                if (unsized >> o & 1u) {
                    free(a->tensors);
                    a->tensors = NULL;
                    a->count = 0;
                }
            }
            s = pd_last_status();
        }
    }
    return s;
}

/* A queued call keeps its op's module loaded until it retires: its worker reads the op and
 * runs the module's code after the host may have unloaded it (module.c waits for the count). */
static void module_hold(pd_module *m)
{
    if (m != NULL)
        atomic_fetch_add_explicit(&m->in_flight, 1, memory_order_relaxed);
}

static void module_drop(pd_module *m)
{
    if (m != NULL)
        atomic_fetch_sub_explicit(&m->in_flight, 1, memory_order_release);
}

/* pd_op_run_async past its checks, for a call that goes through the pipeline. Kept out of
 * line: the small calls that run inline then pay for none of its frame. */
static __attribute__((noinline)) pd_status submit(pd_executor *ex, int32_t stream, const pd_op *op,
                                                  const pd_arg *inputs, int32_t n_inputs,
                                                  const pd_attr *attrs, int32_t n_attrs,
                                                  pd_arg *outputs, int32_t n_outputs, bool mark)
{
    pd__exec_wait_room(ex, stream);
    pd__exec_call *call = pd__exec_record_new(ex, stream);
    if (call == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", op->name);
    pd_status s = prepare(ex, call, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs, op);
    pd__exec_drop_spares(call); /* the worker owns the record once it is queued */
    call->mark = mark;
    if (s != PD_OK) {
        if (mark) /* the trial ends here: its call will not run */
            pd__exec_mark_done(&ex->streams[stream]);
        pd__runner_release(&call->ctx, false);
        pd__exec_record_free(ex, call);
        return s;
    }
    atomic_fetch_add_explicit(&pd__async_in_flight, 1, memory_order_relaxed);
    module_hold(op->module);
    if (op->may_block) /* before it is queued: no submitter waits for it (where.c) */
        pd__exec_blocking_begins(ex);
    bool wait = call->wait_launch;
    pd__completion *done = call->done;
    if (wait)
        pd__completion_retain(done);
    pd__exec_enqueue(ex, stream, call);
    if (!wait)
        return PD_OK;
    /* Outputs inference could not describe: the launch made them; hand them over here. */
    pd__completion_wait_state(done);
    pd__completion_release(done);
    s = call->status;
    if (s != PD_OK)
        pd__fail(s, "%s", call->message ? call->message : "the op failed");
    else
        s = pd__runner_hand_over(&call->ctx, outputs);
    pd__runner_release(&call->ctx, s == PD_OK);
    pd__exec_record_free(ex, call);
    module_drop(op->module);
    return s;
}

_Thread_local char pd__exec_submitter __attribute__((tls_model("initial-exec")));

/* pd_op_run_async past its leanest case: every check with its message, then the short path
 * for the other calls that run here at once, then the rules. Out of line, so that the
 * leanest case's frame holds only what it needs. */
static __attribute__((noinline)) pd_status
run_async(pd_executor *ex, int32_t stream, const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
          const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs, int32_t n_outputs)
{
    pd_status s = pd__exec_check("pd_run_async", ex, stream);
    if (s == PD_OK && op == NULL)
        s = pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_run_async: op is NULL");
    if (s != PD_OK)
        return s;
    /* The short path: a small call on an idle stream, or any call of a stream whose trial
     * on the submitter runs, is run as pd_op_run runs it, then counted (and timed); a few
     * loads and one walk of the args before it, inlined, so that the executor adds little to
     * a small call's pd_op_run (bench/NOTES.md). */
    pd__exec_stream *st = &ex->streams[stream];
    pd__exec_where_to fast = pd__exec_fast(ex, st, op, inputs, n_inputs, outputs, n_outputs,
                                           atomic_load_explicit(&st->adapt.fast,
                                                                memory_order_relaxed));
    if (fast != PD__EXEC_HAND) {
        s = pd_op_run(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
        if (fast == PD__EXEC_HERE_UNPAID)
            pd__exec_here_done(ex, stream, s == PD_OK);
        else if (s == PD_OK)
            pd__exec_count_here(st, &st->here_owned, &st->here_shared);
        return s;
    }
    bool measured;
    pd__exec_where_to to = pd__exec_where(ex, stream, op, inputs, n_inputs, outputs, n_outputs,
                                          &measured);
    if (to == PD__EXEC_HERE_UNPAID &&
        !pd__exec_settle(ex, stream, inputs, n_inputs, outputs, n_outputs))
        to = PD__EXEC_HAND; /* a failed input (the worker poisons the outputs), or a call
                             * that may block was submitted meanwhile */
    if (to == PD__EXEC_HERE_UNPAID) {
        s = pd_op_run(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
        pd__exec_here_done(ex, stream, s == PD_OK); /* counts it (if it ran) and times it */
        return s;
    }
    if (to == PD__EXEC_HERE) {
        /* its error is the call's, as bad input's is: not counted as a submitted call's */
        s = pd_op_run(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
        if (s == PD_OK) /* one count: as submitted and as done */
            pd__exec_count_here(st, &st->here_owned, &st->here_shared);
    } else {
        s = submit(ex, stream, op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs,
                   to == PD__EXEC_HAND_MARK);
    }
    if (measured)
        pd__exec_measured(ex, stream);
    return s;
}

pd_status pd_op_run_async(pd_executor *ex, int32_t stream, const pd_op *op, const pd_arg *inputs,
                          int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs,
                          int32_t n_outputs)
{
    /* Most calls of a host chaining ops through a stream that runs them here are run as
     * pd_op_run runs them and counted, past a few loads (pd__exec_here_counter): what the
     * executor adds to them is what a host pays for submitting every call through it when
     * handing over does not pay (bench/NOTES.md). The first call of a stream, and each of
     * another thread than its first submitter, take the full path, which counts them. */
    if (pd__exec_live(ex, stream) && op != NULL) {
        atomic_uint_fast64_t *count = pd__exec_here_counter(ex, &ex->streams[stream], op, inputs,
                                                            n_inputs, outputs, n_outputs);
        if (count != NULL)
            return pd__runner_run_counted(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs,
                                          count);
    }
    return run_async(ex, stream, op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
}

pd_status pd_run_async(pd_executor *ex, int32_t stream, const char *name, const pd_arg *inputs,
                       int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs,
                       int32_t n_outputs)
{
    pd_status s = pd__exec_check("pd_run_async", ex, stream);
    if (s == PD_OK && (ex->reg == NULL || name == NULL))
        s = pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_run_async: %s is NULL",
                     name ? "the executor's registry" : "name");
    if (s != PD_OK)
        return s;
    const pd_op *op = pd_op_find(ex->reg, name);
    if (op == NULL)
        return pd_last_status();
    return pd_op_run_async(ex, stream, op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
}

/* --- The launch stage --------------------------------------------------------------------- */

/* Waits for the inputs other calls make; the first failed one's error poisons this call. */
/* Keeps the message of a failed launch step (this thread's last error) for the call's
 * waiters. A device step's message gets the op's name in front, which the runner's own
 * messages (kernel, output checks) carry already. */
static pd_status keep_failure(pd__exec_call *call, pd_status s, bool name_op)
{
    if (name_op)
        pd__fail_prefix("%s: ", call->ctx.op->name);
    free(call->message);
    call->message = strdup(pd_last_error());
    return s;
}

static pd_status wait_deps(pd__exec_call *call)
{
    for (int32_t j = 0; j < call->n_deps; ++j) {
        pd__completion *c = call->deps[j];
        pd__completion_wait_state(c);
        if (atomic_load_explicit(&c->state, memory_order_acquire) == PD__FAILED) {
            free(call->message);
            call->message = c->message ? strdup(c->message) : NULL;
            return c->status;
        }
        if (c->event == NULL || c->event_stream == call->dev_stream)
            continue; /* no device work, or the call's own stream orders it */
        /* A dependency on another stream of the same device is waited for by that device
         * (the call's stream waits for the event); one on another device (or read by a CPU
         * call) on the host. */
        pd_place place = *pd__ctx_first_input_place(&call->ctx);
        pd_status s = call->dev_stream != NULL && pd_place_equal(call->dep_places[j], place)
                          ? pd_event_wait(call->dev_stream, c->event)
                          : pd_event_synchronize(c->event);
        if (s != PD_OK)
            return keep_failure(call, s, true);
    }
    return PD_OK;
}

/* Input step, workspace and kernel, under the runner's frame. */
static bool launch_steps(pd_kernel_ctx *ctx, void *unused)
{
    (void)unused;
    pd__runner_input_step(ctx, NULL);
    ctx->phase = PD__PHASE_KERNEL;
    if (ctx->op->workspace != NULL)
        pd__ctx_workspace(ctx); /* the allocate stage of the workspace */
    return pd__runner_kernel_step(ctx, NULL);
}

/* After the kernel: outputs as inferred, and any output the kernel gave with pd_set_output
 * copied into the memory the host already holds. */
static pd_status settle_outputs(pd__exec_call *call)
{
    pd_kernel_ctx *ctx = &call->ctx;
    pd_status s = pd__runner_check_outputs(ctx);
    int32_t j = 0;
    for (int32_t o = 0; o < ctx->n_outputs && s == PD_OK; ++o)
        for (int32_t k = 0; k < ctx->out[o].count && s == PD_OK; ++k, ++j) {
            const pd_tensor *made = ctx->out[o].items[k].t;
            const pd_tensor *held = &call->outs[j];
            if (made->data != held->data || made->layout != PD_LAYOUT_DENSE)
                s = pd__copy_across(ctx->op->name, held->data, held->place, held->dtype, made);
        }
    return s;
}

void pd__exec_launch(pd_executor *ex, pd__exec_call *call)
{
    pd_kernel_ctx *ctx = &call->ctx;
    pd_module *module = ctx->op->module; /* read before the call retires */
    bool blocks = ctx->op->may_block;
    pd_place place = *pd__ctx_first_input_place(ctx);
    pd_status s = PD_OK;
    /* the worker's stream on the call's device is its executor stream's own */
    if (call->dev_stream != NULL && pd__stream_chosen(place) != call->dev_stream)
        s = pd_stream_set_current(place, call->dev_stream);
    if (s == PD_OK && call->host_event != NULL) { /* the submitter's earlier work */
        s = pd_event_wait(call->dev_stream, call->host_event);
        (void)pd_event_destroy(call->host_event);
        call->host_event = NULL;
    }
    if (s == PD_OK)
        s = wait_deps(call);
    else
        keep_failure(call, s, true);
    if (s == PD_OK) {
        if (!pd__runner_protected(ctx, launch_steps, NULL))
            s = keep_failure(call, pd__ctx_report(ctx), false);
        else if (!call->wait_launch && (s = settle_outputs(call)) != PD_OK)
            keep_failure(call, s, false);
    }
    pd_event_t *event = NULL;
    if (s == PD_OK && call->dev_stream != NULL &&
        (pd_event_create(place, &event) != PD_OK ||
         pd_event_record(event, call->dev_stream) != PD_OK)) {
        s = keep_failure(call, pd_last_status(), true);
        pd_event_destroy(event);
        event = NULL;
    }
    pd__exec_note_done(ex, s, call->message);
    if (blocks)
        atomic_fetch_sub_explicit(&ex->blocking, 1, memory_order_acq_rel);
    if (call->mark)
        pd__exec_mark_done(&ex->streams[call->stream]);
    if (call->wait_launch) {
        call->status = s;
        pd__completion *done = call->done;
        call->done = NULL;
        /* the caller frees the call once woken; nothing here touches it after this */
        pd__completion_finish(done, s, call->message, event, call->dev_stream);
        pd__completion_release(done);
        return;
    }
    pd__completion_finish(call->done, s, call->message, event, call->dev_stream);
    pd__exec_record_retire(ex, call);
    module_drop(module); /* the caller's (submit's) drop ends a wait_launch call */
}
