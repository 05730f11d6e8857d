/*
 * bind.c - the binder's general path: the host's inputs, attrs and outputs matched to the
 * op's declarations by name or position, with every check and every message. runner.c's
 * always-inline steps bind the usual call (positional, plain declarations, well-formed
 * tensors) themselves and come here only at the first argument they do not accept, from
 * where on this file binds the rest; nothing is bound twice. Attrs always come here (an op
 * without attrs skips them).
 *
 * Long because the messages of every way a call's arguments can be wrong live beside the
 * check that finds them.
 */
#include "call/bind.h"

#include <stdio.h>
#include <string.h>

/* "an int", "a std::string": the article Paddle's spellings need. */
static const char *attr_article(pd_attr_type t)
{
    return (t == PD_ATTR_INT || t == PD_ATTR_INT64 || t == PD_ATTR_UNDEFINED) ? "an" : "a";
}

/* Holds no elements (so it needs no data). */
static inline bool has_zero_dim(const pd_tensor *t)
{
    for (int32_t i = 0; i < t->ndim; ++i)
        if (t->shape[i] == 0)
            return true;
    return false;
}

_Thread_local bool pd__binding_meta __attribute__((tls_model("initial-exec")));

/* A bound tensor the runtime and kernels can read safely: a known dtype, a rank within
 * PD_MAX_DIMS, no negative dim, and data unless it holds no elements. Hosts build tensor
 * structs themselves, so a garbage field must be an error here, not a crash in a kernel. */
static pd_status check_input_tensor(const pd_op *op, const pd__arg_decl *d, int32_t k,
                                    const pd_tensor *t)
{
    char what[PD__NAME_MAX + 48];
    if (d->is_vector)
        snprintf(what, sizeof what, "item %d of input '%s'", (int)k, d->base);
    else
        snprintf(what, sizeof what, "input '%s'", d->base);
    if ((unsigned)t->dtype >= PD_NUM_DTYPES)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s has dtype %d, which is not a data type",
                        op->name, what, (int)t->dtype);
    if (t->ndim < 0 || t->ndim > PD_MAX_DIMS)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s has ndim %d; expected 0..%d", op->name,
                        what, (int)t->ndim, PD_MAX_DIMS);
    for (int32_t i = 0; i < t->ndim; ++i)
        if (t->shape[i] < 0)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: %s has shape[%d] = %lld; dims must be "
                            ">= 0",
                            op->name, what, (int)i, (long long)t->shape[i]);
    if (t->data == NULL && !has_zero_dim(t) && !pd__binding_meta) {
        char shape[256];
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s has shape %s but no data (NULL)", op->name,
                        what, pd__dims_text(t->ndim, t->shape, shape, sizeof shape));
    }
    return PD_OK;
}

/* check_input_tensor's verdict without a message: what the fast case tests. */
static inline bool input_tensor_ok(const pd_tensor *t)
{
    if ((unsigned)t->dtype - 1u >= PD_NUM_DTYPES - 1u || (unsigned)t->ndim > PD_MAX_DIMS)
        return false;
    for (int32_t i = 0; i < t->ndim; ++i)
        if (t->shape[i] < 0)
            return false;
    return t->data != NULL || has_zero_dim(t);
}

/* The checks of input i once the host's arguments are bound (count 0 if it bound none), with
 * every message: how many tensors the declaration takes, and that each is well formed. */
static pd_status check_input(pd_kernel_ctx *ctx, int32_t i)
{
    const pd_op *op = ctx->op;
    const pd__arg_decl *d = &op->inputs[i];
    pd__in_slot *in = &ctx->in[i];
    if (!d->is_vector) {
        if (in->count == 1 && pd_defined(&in->tensors[0])) {
            if (!input_tensor_ok(&in->tensors[0]))
                return check_input_tensor(op, d, 0, &in->tensors[0]);
            return PD_OK;
        }
        if (d->is_optional && in->count <= 1) {
            in->count = 0; /* an undefined tensor for an optional input: absent */
            return PD_OK;
        }
        if (in->count == 0)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: input '%s' is missing; it takes exactly one defined tensor",
                            op->name, d->base);
        if (in->count > 1)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: input '%s' takes %s one tensor, but %d were given", op->name,
                            d->base, d->is_optional ? "at most" : "exactly", (int)in->count);
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: input '%s' is an undefined tensor; it takes a defined one", op->name,
                        d->base);
    }
    if (in->count == 0 && !d->is_optional)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: vector input '%s' takes at least one tensor, but none was given",
                        op->name, d->base);
    for (int32_t k = 0; k < in->count; ++k) {
        if (!pd_defined(&in->tensors[k]))
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: item %d of vector input '%s' is an undefined tensor", op->name,
                            (int)k, d->base);
        if (!input_tensor_ok(&in->tensors[k]))
            return check_input_tensor(op, d, k, &in->tensors[k]);
    }
    return PD_OK;
}

/* A host input list the binder cannot walk: NULL with a count, or longer than declared. */
static __attribute__((noinline)) pd_status refuse_input_list(const pd_op *op, const pd_arg *args,
                                                             int32_t n)
{
    char names[512];
    if (n < 0 || (n > 0 && args == NULL))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: inputs is %s with n_inputs %d", op->name,
                        args ? "given" : "NULL", (int)n);
    return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %d inputs given, but the op declares %d (%s)",
                    op->name, (int)n, (int)op->n_inputs,
                    pd__decl_names(op->inputs, op->n_inputs, names, sizeof names));
}

/* The host's pd_arg j, bound to input i (-1: its name is not declared), refused: an unknown
 * name, an input bound twice, or a count that does not match its tensors. */
static __attribute__((noinline)) pd_status refuse_input_arg(const pd_op *op, const pd_arg *a,
                                                            int32_t j, int32_t i, uint32_t bound)
{
    char names[512];
    if (i < 0)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the op has no input named '%s' (declared: %s)", op->name, a->name,
                        pd__decl_names(op->inputs, op->n_inputs, names, sizeof names));
    if (bound & (1u << i))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: input '%s' is bound twice (pd_arg %d)",
                        op->name, op->inputs[i].base, (int)j);
    return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: input '%s' has count %d and tensors %s", op->name,
                    op->inputs[i].base, (int)a->count, a->tensors ? "given" : "NULL");
}

/* bind_inputs from the host's pd_arg `from` on (those before it are bound, by position, and
 * checked): names, counts other than one, optional and vector inputs, and every refusal. In
 * the end inputs the host left out are absent (count 0), which check_input accepts for
 * optional inputs and refuses, by name, otherwise. */
pd_status pd__bind_inputs_from(pd_kernel_ctx *ctx, const pd_arg *args, int32_t n, int32_t from)
{
    const pd_op *op = ctx->op;
    if ((uint32_t)n > (uint32_t)op->n_inputs || (n > 0 && args == NULL))
        return refuse_input_list(op, args, n);
    uint32_t bound = from ? ~0u >> (32 - from) : 0u; /* bit i: input i is bound */
    for (int32_t j = from; j < n; ++j) {
        const pd_arg *a = &args[j];
        int32_t i = a->name ? pd__decl_find(op->inputs, op->n_inputs, a->name) : j;
        if (i < 0 || (bound >> i & 1u) || a->count < 0 || (a->count > 0 && a->tensors == NULL))
            return refuse_input_arg(op, a, j, i, bound);
        bound |= 1u << i;
        ctx->in[i].tensors = a->tensors;
        ctx->in[i].count = a->count;
        ctx->in[i].bytes = -1;
        pd_status s = check_input(ctx, i);
        if (s != PD_OK)
            return s;
    }
    for (int32_t i = 0; i < op->n_inputs; ++i) {
        if (bound >> i & 1u)
            continue;
        ctx->in[i].tensors = NULL;
        ctx->in[i].count = 0;
        ctx->in[i].bytes = -1;
        pd_status s = check_input(ctx, i);
        if (s != PD_OK)
            return s;
    }
    return PD_OK;
}

/* --- Binding attrs ------------------------------------------------------------------------- */

static pd_status check_attr_value(const pd_op *op, const pd_attr *a)
{
    bool is_vector = a->type >= PD_ATTR_INTS && a->type <= PD_ATTR_STRINGS;
    if (is_vector && (a->count < 0 || (a->count > 0 && a->v.ints == NULL)))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: attr '%s' has count %d and %s elements",
                        op->name, a->name, (int)a->count, a->v.ints ? "given" : "NULL");
    if (a->type == PD_ATTR_STRING && a->v.s == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: attr '%s' is a NULL string", op->name,
                        a->name);
    if (a->type == PD_ATTR_STRINGS)
        for (int32_t k = 0; k < a->count; ++k)
            if (a->v.strings[k] == NULL)
                return pd__fail(PD_ERR_INVALID_ARGUMENT,
                                "%s: attr '%s' element %d is a NULL string", op->name, a->name,
                                (int)k);
    return PD_OK;
}

/* The pd_attr_of_* builder (pdext.h) that makes a value of type t, for messages. */
static const char *attr_builder(pd_attr_type t)
{
    static const char *const names[] = {"?",      "bool", "int",    "float",  "double", "int64",
                                        "string", "ints", "floats", "int64s", "strings"};
    return (unsigned)t <= PD_ATTR_STRINGS ? names[t] : "?";
}

/* Matches the host's attrs to the declarations (by name, or by position when unnamed), checks
 * their types and values, and gives every attr left out its declared default; one without a
 * default is missing. Not on the usual call's path: an op without attrs skips it. */
pd_status pd__bind_attrs(pd_kernel_ctx *ctx, const pd_attr *attrs, int32_t n)
{
    const pd_op *op = ctx->op;
    char names[512];
    if (n < 0 || (n > 0 && attrs == NULL))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: attrs is %s with n_attrs %d", op->name,
                        attrs ? "given" : "NULL", (int)n);
    uint32_t bound = 0; /* bit i: attr i is given (PD_MAX_ATTRS <= 32) */
    for (int32_t j = 0; j < n; ++j) {
        const pd_attr *a = &attrs[j];
        int32_t i = a->name ? pd__decl_attr_find(op->attrs, op->n_attrs, a->name)
                            : (j < op->n_attrs ? j : -1);
        if (i < 0) {
            if (a->name)
                return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: unknown attr '%s' (declared: %s)",
                                op->name, a->name,
                                pd__decl_attr_names(op->attrs, op->n_attrs, true, names,
                                                    sizeof names));
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: %d attrs given, but the op declares %d (%s)", op->name, (int)n,
                            (int)op->n_attrs,
                            pd__decl_attr_names(op->attrs, op->n_attrs, true, names, sizeof names));
        }
        const pd__attr_decl *d = &op->attrs[i];
        if (bound >> i & 1u)
            return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: attr '%s' is given twice", op->name,
                            d->name);
        if (a->type != d->type)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: attr '%s' is declared %s, but %s %s was given", op->name, d->name,
                            pd_attr_type_name(d->type), attr_article(a->type),
                            pd_attr_type_name(a->type));
        bound |= 1u << i;
        ctx->attrs[i] = *a;
        ctx->attrs[i].name = d->name; /* kernels see the declared name, also for positional */
        pd_status s = check_attr_value(op, &ctx->attrs[i]);
        if (s != PD_OK)
            return s;
    }
    for (int32_t i = 0; i < op->n_attrs; ++i) {
        if (bound >> i & 1u)
            continue;
        const pd__attr_decl *d = &op->attrs[i];
        if (!d->has_default)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: attr '%s' (%s) is missing; pass it in attrs, e.g. "
                            "pd_attr_of_%s(\"%s\", ...)",
                            op->name, d->name, pd_attr_type_name(d->type), attr_builder(d->type),
                            d->name);
        ctx->attrs[i] = d->default_value;
        ctx->attrs[i].name = d->name;
    }
    return PD_OK;
}

/* --- Binding outputs ------------------------------------------------------------------------ */

/* A host output list or pd_arg the binder refuses; every message. */
pd_status pd__bind_refuse_outputs(pd_kernel_ctx *ctx, const pd_arg *args, int32_t n)
{
    const pd_op *op = ctx->op;
    char names[512];
    if (n < 0 || (n > 0 && args == NULL))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: outputs is %s with n_outputs %d", op->name,
                        args ? "given" : "NULL", (int)n);
    if (n > op->n_outputs)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %d outputs asked for, but the op declares %d (%s)", op->name, (int)n,
                        (int)op->n_outputs,
                        pd__decl_names(op->outputs, op->n_outputs, names, sizeof names));
    for (int32_t o = 0; o < op->n_outputs; ++o)
        ctx->out[o].host_arg = PD__UNBOUND;
    for (int32_t j = 0; j < n; ++j) {
        const pd_arg *a = &args[j];
        int32_t o = a->name ? pd__decl_find(op->outputs, op->n_outputs, a->name) : j;
        if (o < 0)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: the op has no output named '%s' (declared: %s)", op->name, a->name,
                            pd__decl_names(op->outputs, op->n_outputs, names, sizeof names));
        if (ctx->out[o].host_arg != PD__UNBOUND)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: output '%s' is asked for twice (pd_arg %d)", op->name,
                            op->outputs[o].base, (int)j);
        if (a->count < 0 || (a->count > 0 && a->tensors == NULL))
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: output '%s' has capacity %d and tensors %s", op->name,
                            op->outputs[o].base, (int)a->count, a->tensors ? "given" : "NULL");
        ctx->out[o].host_arg = j;
    }
    return pd__fail(PD_ERR_INTERNAL, "%s: pd__bind_refuse_outputs found nothing to refuse",
                    op->name);
}

/* The host's pd_arg `a` gives the output defined tensors: the results go into them. */
void pd__bind_set_dest(pd_kernel_ctx *ctx, pd__out_slot *slot, const pd_arg *a)
{
    slot->dest = a->tensors;
    slot->n_dest = a->count;
    ctx->has_dest = true;
}

/* bind_outputs from the host's pd_arg `from` on, once one is named or has no room (which
 * hand_over may still accept, for an output that stays unset). */
pd_status pd__bind_outputs_named(pd_kernel_ctx *ctx, const pd_arg *args, int32_t n, int32_t from,
                                 bool into)
{
    const pd_op *op = ctx->op;
    for (int32_t j = from; j < n; ++j) {
        const pd_arg *a = &args[j];
        int32_t o = a->name ? pd__decl_find(op->outputs, op->n_outputs, a->name) : j;
        if (o < 0 || ctx->out[o].host_arg != PD__UNBOUND || a->count < 0 ||
            (a->count > 0 && a->tensors == NULL))
            return pd__bind_refuse_outputs(ctx, args, n);
        ctx->out[o].host_arg = j;
        if (into && a->count > 0 && a->tensors[0].dtype != PD_UNDEFINED)
            pd__bind_set_dest(ctx, &ctx->out[o], a);
        --ctx->n_unbound;
    }
    return PD_OK;
}
