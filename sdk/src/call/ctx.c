/*
 * ctx.c - the kernel context as op code sees it through the function table: inputs, attrs,
 * outputs, and the setters infer functions use for output counts, shapes and dtypes.
 *
 * Op code is not trusted to pass good indices: every function checks its arguments and, when
 * they are wrong, ends the call with a message naming the function, the op and what was
 * wrong (pd_api.h: table functions never return failure). The runner prefixes the op name.
 */
#include "call/kernel_ctx.h"

#include <string.h>

/* Op code broke a rule of the table: the call ends with PD_ERR_OP_FAILED. */
#define OP_BUG(...) pd__ctx_throw(PD_ERR_OP_FAILED, __VA_ARGS__)

static const char *plural(int32_t n) { return n == 1 ? "" : "s"; }

static void check_input_index(pd_kernel_ctx *ctx, const char *who, int32_t index)
{
    if (index < 0 || index >= ctx->n_inputs)
        OP_BUG("%s: input index %d is out of range; the op declares %d input%s", who, (int)index,
               (int)ctx->n_inputs, plural(ctx->n_inputs));
}

static inline pd__out_slot *checked_output(pd_kernel_ctx *ctx, const char *who, int32_t index)
{
    if (index < 0 || index >= ctx->n_outputs)
        OP_BUG("%s: output index %d is out of range; the op declares %d output%s", who, (int)index,
               (int)ctx->n_outputs, plural(ctx->n_outputs));
    return &ctx->out[index];
}

static inline pd__out_item *checked_item(pd_kernel_ctx *ctx, const char *who, int32_t index,
                                         int32_t item)
{
    pd__out_slot *slot = checked_output(ctx, who, index);
    if (item < 0 || item >= slot->count)
        OP_BUG("%s: item %d of output '%s' is out of range; it has %d item%s", who, (int)item,
               ctx->op->outputs[index].base, (int)slot->count, plural(slot->count));
    return &slot->items[item];
}

bool pd__ctx_dest_fits(const pd_kernel_ctx *ctx, int32_t o, int32_t k, const pd_tensor *d,
                       pd_data_type dtype, int32_t ndim, const int64_t *shape, pd_place place,
                       char *why, size_t size)
{
    bool same = d->dtype == dtype && d->ndim == ndim && pd_place_equal(d->place, place) &&
                (ndim == 0 || memcmp(d->shape, shape, sizeof(int64_t) * (size_t)ndim) == 0);
    const char *fault = "";
    if (same && d->layout != PD_LAYOUT_DENSE)
        fault = "; the tensor written into must be dense (C order), not strided";
    else if (same && d->data == NULL && pd_numel(d) > 0)
        fault = "; its data is NULL";
    else if (same)
        return true;
    char item[PD__NAME_MAX + 32], got[256], want[256];
    const char *name = ctx->op->outputs[o].base;
    if (ctx->op->outputs[o].is_vector)
        snprintf(item, sizeof item, "item %d of output '%s'", (int)k, name);
    else
        snprintf(item, sizeof item, "output '%s'", name);
    snprintf(why, size,
             "%s is to be written into the host's tensor of %s %s on %s:%d, but the call makes "
             "%s %s on %s:%d%s; give a tensor of that dtype, shape and place (or an undefined "
             "one, for the call to make it)",
             item, pd_dtype_name(d->dtype), pd__dims_text(d->ndim, d->shape, got, sizeof got),
             pd_place_type_name(&d->place), (int)d->place.device_id, pd_dtype_name(dtype),
             pd__dims_text(ndim, shape, want, sizeof want), pd_place_type_name(&place),
             (int)place.device_id, fault);
    return false;
}

/* pd_output's tensor for an item with a destination: a borrowed view of the host's tensor
 * (no storage, so nothing to release), once it is what the call makes. */
static __attribute__((noinline)) void make_output_in_dest(pd_kernel_ctx *ctx, int32_t o,
                                                          pd__out_item *it, const pd_tensor *d)
{
    const pd_place *place = pd__ctx_first_input_place(ctx);
    int32_t k = (int32_t)(it - ctx->out[o].items);
    char why[1024];
    if (!pd__ctx_dest_fits(ctx, o, k, d, it->dtype, it->ndim, it->shape, *place, why, sizeof why))
        pd__ctx_throw(PD_ERR_INVALID_ARGUMENT, "%s", why);
    *it->t = *d;
    it->t->storage = NULL;
}

/* pd_output's tensor for item `it`, whose dtype and shape inference set (and checked): on the
 * place of the op's first bound input, or in the host's destination when it gave one. The
 * byte size and the place (a host's tensor struct may carry any place) are still checked; a
 * refusal throws the usual message. */
static inline void make_output(pd_kernel_ctx *ctx, int32_t o, pd__out_item *it)
{
    const pd__out_slot *slot = &ctx->out[o];
    if (slot->dest != NULL) {
        int32_t k = (int32_t)(it - slot->items);
        if (k < slot->n_dest && slot->dest[k].dtype != PD_UNDEFINED) {
            make_output_in_dest(ctx, o, it, &slot->dest[k]);
            return;
        }
    }
    const pd_place *place = pd__ctx_first_input_place(ctx);
    size_t bytes = (size_t)it->bytes; /* known for the plain inference of a sized input */
    pd_storage *storage;
    if ((it->bytes < 0 && !pd__shape_bytes(it->dtype, it->ndim, it->shape, &bytes)) ||
        !pd__place_ok(place) || (storage = pd__storage_alloc(place, bytes)) == NULL) {
        /* Refused: the checked constructor finds the same fault and throws its message. */
        pd__ctx_make_tensor("pd_output", it->t, it->dtype, *place, it->ndim, it->shape);
        return;
    }
    pd__out_item_make(it, storage, place);
}

static int32_t find_named(const char *who, const char *what, const pd__arg_decl *decls, int32_t n,
                          const char *name)
{
    int32_t i = name ? pd__decl_find(decls, n, name) : -1;
    if (i < 0) {
        char names[512];
        OP_BUG("%s: the op has no %s named '%s' (declared: %s)", who, what, name ? name : "(null)",
               pd__decl_names(decls, n, names, sizeof names));
    }
    return i;
}

const char *pd__ctx_op_name(pd_kernel_ctx *ctx) { return ctx->op->name; }

int32_t pd__ctx_input_count(pd_kernel_ctx *ctx, int32_t index)
{
    check_input_index(ctx, "pd_input_count", index);
    return ctx->in[index].count;
}

/* pd_input with a bad index or a negative item: throws naming which. */
static __attribute__((noinline, noreturn)) void input_refused(pd_kernel_ctx *ctx, int32_t index,
                                                              int32_t item)
{
    check_input_index(ctx, "pd_input", index);
    OP_BUG("pd_input_at: item %d of input '%s' is negative", (int)item,
           ctx->op->inputs[index].base);
}

/* Every kernel calls this for every input: the accepted case is all there is here, so it
 * compiles to a leaf function; the messages live in input_refused. */
const pd_tensor *pd__ctx_input(pd_kernel_ctx *ctx, int32_t index, int32_t item)
{
    if ((uint32_t)index >= (uint32_t)ctx->n_inputs || item < 0)
        input_refused(ctx, index, item);
    const pd__in_slot *slot = &ctx->in[index];
    return item < slot->count ? &slot->tensors[item] : NULL;
}

int32_t pd__ctx_input_index(pd_kernel_ctx *ctx, const char *name)
{
    return find_named("pd_input_named", "input", ctx->op->inputs, ctx->n_inputs, name);
}

int32_t pd__ctx_output_index(pd_kernel_ctx *ctx, const char *name)
{
    return find_named("pd_output_index", "output", ctx->op->outputs, ctx->n_outputs, name);
}

const pd_attr *pd__ctx_attr(pd_kernel_ctx *ctx, int32_t index)
{
    if (index < 0 || index >= ctx->n_attrs)
        OP_BUG("pd_attr: attr index %d is out of range; the op declares %d attr%s", (int)index,
               (int)ctx->n_attrs, plural(ctx->n_attrs));
    return &ctx->attrs[index];
}

int32_t pd__ctx_attr_index(pd_kernel_ctx *ctx, const char *name)
{
    int32_t i = name ? pd__decl_attr_find(ctx->op->attrs, ctx->n_attrs, name) : -1;
    if (i < 0) {
        char names[512];
        OP_BUG("pd_attr_index: the op has no attr named '%s' (declared: %s)",
               name ? name : "(null)",
               pd__decl_attr_names(ctx->op->attrs, ctx->n_attrs, false, names, sizeof names));
    }
    return i;
}

int32_t pd__ctx_output_count(pd_kernel_ctx *ctx, int32_t index)
{
    return checked_output(ctx, "pd_output_count", index)->count;
}

/* Every kernel calls this once per output. One path: the index checks and the phase and
 * inference checks are compares whose failing side only throws (cold code), so the accepted
 * case costs a few loads and branches. */
pd_tensor *pd__ctx_output(pd_kernel_ctx *ctx, int32_t index, int32_t item)
{
    pd__out_item *it = checked_item(ctx, "pd_output", index, item);
    if (it->t->dtype != PD_UNDEFINED)
        return it->t;
    if (ctx->phase != PD__PHASE_KERNEL)
        OP_BUG("pd_output: output '%s' is made by the kernel; infer functions may only set its "
               "count, shape and dtype",
               ctx->op->outputs[index].base);
    if (it->ndim < 0 || it->dtype == PD_UNDEFINED) {
        /* An op of several inputs gets no default inference unless it says which input its
         * outputs follow: name the flag that says it. */
        bool like0 = ctx->op->n_inputs > 1 && ctx->op->infer_shape == NULL &&
                     ctx->op->infer_dtype == NULL;
        OP_BUG("pd_output: output '%s' item %d has no inferred %s; give the op an infer_shape / "
               "infer_dtype%s, or make the tensor and pass it to pd_set_output",
               ctx->op->outputs[index].base, (int)item, it->ndim < 0 ? "shape" : "dtype",
               like0 ? " (or, when its outputs take input 0's shape and dtype, the flag "
                       "PD_OP_OUTPUTS_LIKE_INPUT0)"
                     : "");
    }
    make_output(ctx, index, it);
    return it->t;
}

void pd__ctx_set_output(pd_kernel_ctx *ctx, int32_t index, int32_t item, const pd_tensor *t)
{
    pd__out_item *it = checked_item(ctx, "pd_set_output", index, item);
    if (ctx->phase != PD__PHASE_KERNEL)
        OP_BUG("pd_set_output: output '%s' is set by the kernel; infer functions may only set its "
               "count, shape and dtype",
               ctx->op->outputs[index].base);
    if (!pd_defined(t))
        OP_BUG("pd_set_output: the tensor given for output '%s' item %d is %s",
               ctx->op->outputs[index].base, (int)item, t == NULL ? "NULL" : "undefined");
    if (t == it->t)
        return;
    /* Take the new reference before dropping the old: they may share storage. */
    pd_tensor next;
    pd_tensor_retain(&next, t);
    pd_tensor_release(it->t);
    *it->t = next;
}

void pd__ctx_resize_output(pd_kernel_ctx *ctx, int32_t index, int32_t count)
{
    pd__out_slot *slot = &ctx->out[index];
    for (int32_t i = count; i < slot->count; ++i) {
        pd_tensor_release(slot->items[i].t);
        pd__out_item_reset(&slot->items[i]);
    }
    if (count > slot->capacity) {
        pd__out_item *grown = pd__ctx_alloc_items(ctx, count);
        memcpy(grown, slot->items, (size_t)slot->count * sizeof *grown);
        for (int32_t i = 0; i < slot->count; ++i) /* own tensors moved with their items */
            if (slot->items[i].t == &slot->items[i].own)
                grown[i].t = &grown[i].own;
        slot->items = grown;
        slot->capacity = count;
    }
    for (int32_t i = slot->count; i < count; ++i)
        pd__out_item_reset(&slot->items[i]);
    slot->count = count;
}

void pd__ctx_set_output_count(pd_kernel_ctx *ctx, int32_t index, int32_t count)
{
    pd__out_slot *slot = checked_output(ctx, "pd_set_output_count", index);
    const pd__arg_decl *d = &ctx->op->outputs[index];
    if (count < 0)
        OP_BUG("pd_set_output_count: count %d for output '%s' is negative", (int)count, d->base);
    if (!d->is_vector && count != 1)
        OP_BUG("pd_set_output_count: output '%s' is not a vector output; its count is 1, not %d",
               d->base, (int)count);
    if (ctx->op->inplace_input[index] >= 0 && count != slot->count)
        OP_BUG("pd_set_output_count: output '%s' is inplace; its count is its input's (%d), not %d",
               d->base, (int)slot->count, (int)count);
    pd__ctx_resize_output(ctx, index, count);
}

void pd__ctx_set_output_shape(pd_kernel_ctx *ctx, int32_t index, int32_t item, int32_t ndim,
                              const int64_t *shape)
{
    pd__out_item *it = checked_item(ctx, "pd_set_output_shape", index, item);
    const char *name = ctx->op->outputs[index].base;
    if (ndim < 0 || ndim > PD_MAX_DIMS)
        OP_BUG("pd_set_output_shape: ndim %d for output '%s' is outside [0, %d]", (int)ndim, name,
               PD_MAX_DIMS);
    if (ndim > 0 && shape == NULL)
        OP_BUG("pd_set_output_shape: shape for output '%s' is NULL", name);
    for (int32_t d = 0; d < ndim; ++d)
        if (shape[d] < 0)
            OP_BUG("pd_set_output_shape: output '%s' dim %d is %lld; dims must be >= 0", name,
                   (int)d, (long long)shape[d]);
    it->ndim = ndim;
    it->bytes = -1;
    if (ndim > 0)
        memcpy(it->shape, shape, (size_t)ndim * sizeof *shape);
}

void pd__ctx_set_output_dtype(pd_kernel_ctx *ctx, int32_t index, int32_t item, pd_data_type dtype)
{
    pd__out_item *it = checked_item(ctx, "pd_set_output_dtype", index, item);
    if (dtype <= PD_UNDEFINED || dtype >= PD_NUM_DTYPES)
        OP_BUG("pd_set_output_dtype: dtype %d for output '%s' is not a data type", (int)dtype,
               ctx->op->outputs[index].base);
    it->dtype = dtype;
    it->bytes = -1;
}

void *pd__ctx_stream(pd_kernel_ctx *ctx)
{
    pd_place place = *pd__ctx_first_input_place(ctx);
    if (place.type == PD_PLACE_CPU)
        return NULL;
    pd__device *d = pd__device_of("pd_stream", place);
    pd_device_stream handle = NULL;
    if (d == NULL || pd__device_stream_of("pd_stream", d, place, &handle) != PD_OK)
        pd__ctx_throw(pd_last_status(), "%s", pd_last_error());
    return handle;
}

pd_status pd__ctx_wait_inputs(const pd_kernel_ctx *ctx)
{
    /* Device memory pdext allocated (a storage with a device block) another stream used last
     * makes the call's stream (the thread's stream of that device, the call's) wait for that
     * one (pd__device_block_order: nothing while the memory stays on one stream). Borrowed
     * tensors have no storage: their order is the host's, and a place no device serves is
     * left to the kernel's own check. */
    const char *who = ctx->op->name;
    for (int32_t i = 0; i < ctx->n_inputs; ++i)
        for (int32_t k = 0; k < ctx->in[i].count; ++k) {
            const pd_tensor *t = &ctx->in[i].tensors[k];
            pd_status s = pd__tensor_ready(t);
            if (s == PD_OK && t->storage != NULL)
                s = pd__device_order_on_current(who, t->storage);
            if (s != PD_OK)
                return s;
        }
    /* The host's destinations: the kernel writes them on the call's stream. */
    for (int32_t o = 0; ctx->has_dest && o < ctx->n_outputs; ++o)
        for (int32_t k = 0; ctx->out[o].dest != NULL && k < ctx->out[o].n_dest; ++k) {
            pd_status s = pd__device_order_on_current(who, ctx->out[o].dest[k].storage);
            if (s != PD_OK)
                return s;
        }
    return PD_OK;
}
