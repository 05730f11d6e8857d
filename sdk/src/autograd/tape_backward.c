/*
 * tape_backward.c - pd_tape_backward: runs the grad ops of the recorded calls newest first.
 *
 * Which calls run: those a wrt tensor flows into (marked by one forward sweep) and some
 * gradient reached (an output of theirs has one when their turn comes). A call outside that
 * set is skipped without looking at its op, so an op without a grad op is an error only where
 * its gradient is needed, and the message names it.
 *
 * How a grad op is bound is the naming rule of pdext_tape.h. Gradients are kept in a list
 * keyed by tensor identity; a second gradient for the same tensor is added to the first
 * (pd__grad_add), which is how a tensor used twice gets the sum of both uses.
 */
#include "autograd/autograd.h"

#include <stdlib.h>

#define WHO "pd_tape_backward"

/* Tensors by identity (non-owning keys), each with an owned gradient (undefined for a bare
 * key list). */
typedef struct grad_entry {
    pd_tensor key;
    pd_tensor grad;
} grad_entry;

typedef struct grad_map {
    grad_entry *e;
    int32_t n, cap;
    pd_tape *record; /* record the grad op calls here (pd_tape_backward_ex), or NULL */
} grad_map;

static grad_entry *map_find(const grad_map *m, const pd_tensor *key)
{
    for (int32_t i = 0; i < m->n; ++i)
        if (pd__tensor_same(&m->e[i].key, key))
            return &m->e[i];
    return NULL;
}

static void map_free(grad_map *m)
{
    for (int32_t i = 0; i < m->n; ++i)
        pd_tensor_release(&m->e[i].grad);
    free(m->e);
    memset(m, 0, sizeof *m);
}

/* Adds key (if new) with *g as its gradient, or adds *g to the gradient it has. Takes *g
 * (undefined for a bare key), which is undefined afterwards, whatever the outcome. */
static pd_status map_put(grad_map *m, const char *who, const pd_tensor *key, pd_tensor *g)
{
    grad_entry *e = map_find(m, key);
    if (e && !pd_defined(g))
        return PD_OK;
    if (e && m->record && pd_defined(&e->grad)) {
        pd_tensor_release(g);
        return pd__fail(PD_ERR_UNAVAILABLE,
                        "%s: %s gives a second gradient to a tensor that already has one; a "
                        "recorded backward pass cannot add them (the sum would not be on the "
                        "tape), so record_on needs each tensor used once on the path",
                        WHO, who);
    }
    if (e) {
        pd_status st = pd_defined(&e->grad) ? pd__grad_add(who, &e->grad, g) : PD_OK;
        if (!pd_defined(&e->grad)) {
            e->grad = *g;
            memset(g, 0, sizeof *g);
        }
        pd_tensor_release(g);
        return st;
    }
    if (m->n == m->cap) {
        int32_t cap = m->cap ? m->cap * 2 : 32;
        grad_entry *grown = realloc(m->e, (size_t)cap * sizeof *grown);
        if (!grown) {
            pd_tensor_release(g);
            return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", WHO);
        }
        m->e = grown;
        m->cap = cap;
    }
    m->e[m->n].key = *key;
    m->e[m->n].grad = *g;
    memset(g, 0, sizeof *g);
    m->n++;
    return PD_OK;
}

/* What one grad op call needs, released in one place. */
typedef struct grad_call {
    pd_arg in[PD_MAX_INPUTS], out[PD_MAX_OUTPUTS];
    int32_t base_of_out[PD_MAX_OUTPUTS]; /* forward input position of each grad output */
    pd_attr attrs[PD_MAX_ATTRS];
    int32_t n_in, n_out, n_attrs;
} grad_call;

static void grad_call_free(grad_call *c)
{
    for (int32_t i = 0; i < c->n_in; ++i) {
        for (int32_t k = 0; k < c->in[i].count; ++k)
            pd_tensor_release(&c->in[i].tensors[k]);
        free(c->in[i].tensors);
    }
    for (int32_t i = 0; i < c->n_out; ++i) {
        for (int32_t k = 0; k < c->out[i].count; ++k)
            pd_tensor_release(&c->out[i].tensors[k]);
        free(c->out[i].tensors);
    }
}

/* Binds grad op input `gi` from record r (see pdext_tape.h); the slot owns references. */
static pd_status bind_input(const tape_record *r, int32_t index, const pd_op *g, int32_t gi,
                            const grad_map *map, pd_arg *slot)
{
    pd_arg_info info;
    pd_status st = pd_op_input_info(g, gi, &info);
    if (st != PD_OK)
        return st;
    const char *fwd = pd_op_name(r->op);
    int32_t p;
    pd_grad_source from = pd_op_grad_input_source(g, gi, &p);
    bool is_grad = from == PD_GRAD_FROM_OUTPUT_GRAD;
    const tape_slot *src = from == PD_GRAD_FROM_INPUT  ? &r->in[p]
                           : from != PD_GRAD_FROM_NONE ? &r->out[p]
                                                       : NULL;
    if (!src)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: grad op '%s' declares input '%s', which is neither an input nor "
                        "an output of '%s' nor the gradient (@GRAD) of one of its outputs",
                        WHO, pd_op_name(g), info.decl, fwd);
    slot->name = NULL;
    slot->count = 0;
    slot->tensors = NULL;
    if (src->count == 0) {
        if (info.is_optional)
            return PD_OK;
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: grad op '%s' needs '%s', but call %d of '%s' on the tape did not "
                        "keep that tensor (pass an output slot for every output when recording)",
                        WHO, pd_op_name(g), info.decl, index, fwd);
    }
    slot->tensors = calloc((size_t)src->count, sizeof *slot->tensors);
    if (!slot->tensors)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", WHO);
    slot->count = src->count;
    for (int32_t k = 0; k < src->count; ++k) {
        const pd_tensor *t = &src->tensors[k];
        const grad_entry *e = is_grad ? map_find(map, t) : NULL;
        if (!is_grad)
            pd_tensor_retain(&slot->tensors[k], t);
        else if (e && pd_defined(&e->grad))
            pd_tensor_retain(&slot->tensors[k], &e->grad);
        else if ((st = pd_tensor_zeros(&slot->tensors[k], t->dtype, t->place, t->ndim, t->shape)) !=
                 PD_OK)
            return st;
    }
    return PD_OK;
}

/* Prepares grad output `go` of g: its capacity is the forward input's tensor count. */
static pd_status bind_output(const tape_record *r, const pd_op *g, int32_t go, grad_call *c)
{
    pd_arg_info info;
    pd_status st = pd_op_output_info(g, go, &info);
    if (st != PD_OK)
        return st;
    int32_t p = pd_op_grad_output_target(g, go);
    if (p < 0)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: grad op '%s' declares output '%s', which is not the gradient "
                        "(@GRAD) of an input of '%s'",
                        WHO, pd_op_name(g), info.decl, pd_op_name(r->op));
    int32_t cap = r->in[p].count > 0 ? r->in[p].count : 1;
    c->out[go].name = NULL;
    c->out[go].tensors = calloc((size_t)cap, sizeof(pd_tensor));
    if (!c->out[go].tensors)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", WHO);
    c->out[go].count = cap;
    c->base_of_out[go] = p;
    return PD_OK;
}

/* The attr of the recorded call named `name`: as the call passed it, else the forward op's
 * declared default (which a call that left the attr out ran with). false if neither. */
static bool recorded_attr(const tape_record *r, const char *name, pd_attr *out)
{
    for (int32_t a = 0; a < r->n_attrs; ++a)
        if (strcmp(r->attrs[a].name, name) == 0) {
            *out = r->attrs[a];
            return true;
        }
    for (int32_t k = 0, n = pd_op_attr_count(r->op); k < n; ++k) {
        pd_attr_info info;
        if (pd_op_attr_info(r->op, k, &info) == PD_OK && info.has_default &&
            strcmp(info.name, name) == 0) {
            *out = info.default_value;
            return true;
        }
    }
    return false;
}

/* The attrs of the recorded call that g declares (g refuses attrs it does not know). */
static void pick_attrs(const tape_record *r, const pd_op *g, grad_call *c)
{
    for (int32_t k = 0, n = pd_op_attr_count(g); k < n && c->n_attrs < PD_MAX_ATTRS; ++k) {
        const char *name = pd_op_attr_name(g, k);
        if (name && recorded_attr(r, name, &c->attrs[c->n_attrs]))
            c->n_attrs++;
    }
}

/* Takes the gradients grad output `go` produced into the map, under the forward inputs. */
static pd_status take_outputs(const tape_record *r, const pd_op *g, int32_t go, grad_call *c,
                              grad_map *map)
{
    const tape_slot *in = &r->in[c->base_of_out[go]];
    pd_arg *slot = &c->out[go];
    char sk[96], sg[96];
    for (int32_t k = 0; k < slot->count && k < in->count; ++k) {
        pd_tensor *t = &slot->tensors[k];
        const pd_tensor *key = &in->tensors[k];
        if (!pd_defined(t) || !pd_defined(key))
            continue;
        if (!pd_same_shape(t, key) || t->dtype != key->dtype) {
            pd_arg_info info;
            pd_op_output_info(g, go, &info);
            return pd__fail(PD_ERR_OP_FAILED,
                            "%s: grad op '%s' returned %s of %s %s for an input of %s %s", WHO,
                            pd_op_name(g), info.name, pd_dtype_name(t->dtype),
                            pd__shape_text(t, sg, sizeof sg), pd_dtype_name(key->dtype),
                            pd__shape_text(key, sk, sizeof sk));
        }
        pd_status st = map_put(map, pd_op_name(g), key, t);
        if (st != PD_OK)
            return st;
    }
    return PD_OK;
}

static pd_status run_grad(const tape_record *r, int32_t index, grad_map *map)
{
    const char *fwd = pd_op_name(r->op);
    const pd_op *g = pd_op_grad(r->op);
    if (!g)
        return pd__fail(PD_ERR_NOT_FOUND,
                        "%s: op '%s' (call %d on the tape) lies on the path from the inputs to "
                        "the outputs but has no grad op; define one with PD_BUILD_GRAD_OP(%s, ...)",
                        WHO, fwd, index, fwd);
    grad_call c;
    memset(&c, 0, sizeof c);
    int32_t gn_in = pd_op_input_count(g), gn_out = pd_op_output_count(g);
    pd_status st = PD_OK;
    for (int32_t i = 0; st == PD_OK && i < gn_in; ++i) {
        c.n_in = i + 1;
        st = bind_input(r, index, g, i, map, &c.in[i]);
    }
    for (int32_t i = 0; st == PD_OK && i < gn_out; ++i) {
        c.n_out = i + 1;
        st = bind_output(r, g, i, &c);
    }
    if (st == PD_OK) {
        pick_attrs(r, g, &c);
        st = map->record
                 ? pd_tape_run(map->record, g, c.in, gn_in, c.attrs, c.n_attrs, c.out, gn_out)
                 : pd_op_run(g, c.in, gn_in, c.attrs, c.n_attrs, c.out, gn_out);
        if (st != PD_OK) {
            for (int32_t i = 0; i < gn_out; ++i)
                c.out[i].count = 0; /* nothing was written */
            pd__fail_prefix("%s: backward of '%s' (call %d on the tape): ", WHO, fwd, index);
        }
    }
    for (int32_t i = 0; st == PD_OK && i < gn_out; ++i)
        st = take_outputs(r, g, i, &c, map);
    grad_call_free(&c);
    return st;
}

/* The record and output slot that made `t`, or false. */
static bool recorded_output(const pd_tape *tape, const pd_tensor *t)
{
    for (int32_t i = tape->count - 1; i >= 0; --i)
        for (int32_t o = 0; o < tape->records[i].n_out && o < PD_MAX_OUTPUTS; ++o)
            for (int32_t k = 0; k < tape->records[i].out[o].count; ++k)
                if (pd__tensor_same(&tape->records[i].out[o].tensors[k], t))
                    return true;
    return false;
}

static pd_status check_args(const pd_tape *tape, const pd_tensor *outputs, const pd_tensor *grads,
                            int32_t n_outputs, const pd_tensor *wrt, int32_t n_wrt,
                            const pd_tensor *input_grads)
{
    char so[96], sg[96];
    if (!tape)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: tape is NULL", WHO);
    if (n_outputs < 1 || !outputs)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: needs at least one output (n_outputs = %d, outputs %s)", WHO,
                        n_outputs, outputs ? "given" : "NULL");
    if (n_wrt < 0 || (n_wrt > 0 && (!wrt || !input_grads)))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: n_wrt = %d needs wrt and input_grads arrays of that length", WHO,
                        n_wrt);
    for (int32_t j = 0; j < n_wrt; ++j)
        if (!pd_defined(&wrt[j]))
            return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: wrt[%d] is an undefined tensor", WHO, j);
    for (int32_t i = 0; i < n_outputs; ++i) {
        if (!pd_defined(&outputs[i]) || !recorded_output(tape, &outputs[i]))
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: outputs[%d] is not a tensor made by a call recorded on this tape "
                            "(run the op with pd_tape_run)",
                            WHO, i);
        if (grads && (!pd_same_shape(&grads[i], &outputs[i]) || grads[i].dtype != outputs[i].dtype))
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: grads[%d] is %s %s but outputs[%d] is %s %s", WHO, i,
                            pd_dtype_name(grads[i].dtype), pd__shape_text(&grads[i], sg, sizeof sg),
                            i, pd_dtype_name(outputs[i].dtype),
                            pd__shape_text(&outputs[i], so, sizeof so));
        if (!pd__dtype_differentiable(outputs[i].dtype))
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: outputs[%d] is %s, which has no gradient; gradients are taken "
                            "in float16, bfloat16, float32 and float64",
                            WHO, i, pd_dtype_name(outputs[i].dtype));
    }
    return PD_OK;
}

/* Marks the records a wrt tensor flows into (keys only: the map's gradients stay undefined). */
static pd_status mark_active(pd_tape *tape, const pd_tensor *wrt, int32_t n_wrt)
{
    grad_map reach;
    memset(&reach, 0, sizeof reach);
    pd_tensor none = PD_TENSOR_UNDEFINED;
    pd_status st = PD_OK;
    for (int32_t j = 0; st == PD_OK && j < n_wrt; ++j)
        st = map_put(&reach, WHO, &wrt[j], &none);
    for (int32_t i = 0; st == PD_OK && i < tape->count; ++i) {
        tape_record *r = &tape->records[i];
        r->active = false;
        for (int32_t p = 0; !r->active && p < r->n_in && p < PD_MAX_INPUTS; ++p)
            for (int32_t k = 0; !r->active && k < r->in[p].count; ++k)
                r->active = map_find(&reach, &r->in[p].tensors[k]) != NULL;
        for (int32_t p = 0; r->active && st == PD_OK && p < r->n_out && p < PD_MAX_OUTPUTS; ++p)
            for (int32_t k = 0; st == PD_OK && k < r->out[p].count; ++k)
                st = map_put(&reach, WHO, &r->out[p].tensors[k], &none);
    }
    map_free(&reach);
    return st;
}

static bool any_output_reached(const tape_record *r, const grad_map *map)
{
    for (int32_t p = 0; p < r->n_out && p < PD_MAX_OUTPUTS; ++p)
        for (int32_t k = 0; k < r->out[p].count; ++k) {
            const grad_entry *e = map_find(map, &r->out[p].tensors[k]);
            if (e && pd_defined(&e->grad))
                return true;
        }
    return false;
}

pd_status pd_tape_backward(pd_tape *tape, const pd_tensor *outputs, const pd_tensor *grads,
                           int32_t n_outputs, const pd_tensor *wrt, int32_t n_wrt,
                           pd_tensor *input_grads)
{
    return pd_tape_backward_ex(tape, outputs, grads, n_outputs, wrt, n_wrt, input_grads, NULL);
}

pd_status pd_tape_backward_ex(pd_tape *tape, const pd_tensor *outputs, const pd_tensor *grads,
                              int32_t n_outputs, const pd_tensor *wrt, int32_t n_wrt,
                              pd_tensor *input_grads, const pd_tape_backward_options *options)
{
    bool record = options &&
                  options->struct_size >=
                      offsetof(pd_tape_backward_options, record) + sizeof options->record &&
                  options->record;
    pd_status st = check_args(tape, outputs, grads, n_outputs, wrt, n_wrt, input_grads);
    /* Recording appends at most one call per record walked; room for them is made first, so
     * the records being walked never move. */
    if (st == PD_OK && record)
        st = pd__tape_reserve(tape, tape->count * 2);
    int32_t recorded_from = st == PD_OK ? tape->count : 0;
    if (st == PD_OK)
        st = mark_active(tape, wrt, n_wrt);
    if (st != PD_OK)
        return st;
    grad_map map;
    memset(&map, 0, sizeof map);
    map.record = record ? tape : NULL;
    for (int32_t i = 0; st == PD_OK && i < n_outputs; ++i) {
        pd_tensor seed = PD_TENSOR_UNDEFINED;
        const pd_tensor *o = &outputs[i];
        if (grads)
            st = pd_tensor_contiguous(&seed, &grads[i]);
        else
            st = pd_tensor_ones(&seed, o->dtype, o->place, o->ndim, o->shape);
        if (st == PD_OK)
            st = map_put(&map, WHO, o, &seed);
    }
    /* Recorded grad op calls land past the records walked here; they are not walked. */
    for (int32_t i = tape->count - 1; st == PD_OK && i >= 0; --i) {
        const tape_record *r = &tape->records[i];
        if (r->active && any_output_reached(r, &map))
            st = run_grad(r, i, &map);
    }
    pd_tensor *res = calloc(n_wrt > 0 ? (size_t)n_wrt : 1, sizeof *res);
    if (st == PD_OK && !res)
        st = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", WHO);
    for (int32_t j = 0; st == PD_OK && res && j < n_wrt; ++j) {
        const grad_entry *e = map_find(&map, &wrt[j]);
        const pd_tensor *w = &wrt[j];
        if (e && pd_defined(&e->grad))
            pd_tensor_retain(&res[j], &e->grad);
        else
            st = pd_tensor_zeros(&res[j], w->dtype, w->place, w->ndim, w->shape);
    }
    if (st == PD_OK && res) {
        for (int32_t j = 0; j < n_wrt; ++j)
            input_grads[j] = res[j];
    } else {
        for (int32_t j = 0; res && j < n_wrt; ++j)
            pd_tensor_release(&res[j]);
    }
    free(res);
    map_free(&map);
    if (st != PD_OK)
        pd__tape_truncate(tape, recorded_from);
    return st;
}
