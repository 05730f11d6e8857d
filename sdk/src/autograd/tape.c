/*
 * tape.c - the autograd tape (pdext_tape.h): pd_tape_run records op calls made through the one
 * runner (pd_op_run), pd_tape_backward walks them newest first and runs each one's grad op.
 *
 * A recorded call keeps, per declared input and output position, references to the tensors it
 * got and made, and a deep copy of its attrs (the host's attr arrays need not outlive the
 * call). Backward is three passes over the records: forward from the wrt tensors to mark the
 * calls they flow into (a call none of them reaches is never differentiated, so a
 * preprocessing op needs no grad op), then backward from the outputs, running the grad op of
 * each marked call that some gradient reached, and last the read-out of the wrt gradients.
 * Gradients live in a small list keyed by tensor identity (pd__tensor_same); tapes are short
 * enough that a linear search beats any hashing of a 200-byte key.
 */
#include "autograd/autograd.h"

#include <stdlib.h>

/* --- records ----------------------------------------------------------------------------- */

static void attr_free(pd_attr *a)
{
    free((void *)a->name);
    switch (a->type) {
    case PD_ATTR_STRING: free((void *)a->v.s); break;
    case PD_ATTR_INTS: free((void *)a->v.ints); break;
    case PD_ATTR_FLOATS: free((void *)a->v.floats); break;
    case PD_ATTR_INT64S: free((void *)a->v.int64s); break;
    case PD_ATTR_STRINGS:
        for (int32_t i = 0; a->v.strings && i < a->count; ++i)
            free((void *)a->v.strings[i]);
        free((void *)a->v.strings);
        break;
    default: break;
    }
}

static char *str_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static void *mem_dup(const void *p, size_t bytes)
{
    void *d = malloc(bytes ? bytes : 1);
    if (d && bytes)
        memcpy(d, p, bytes);
    return d;
}

/* *dst becomes a copy of *src that owns everything it points at. */
static bool attr_copy(pd_attr *dst, const pd_attr *src)
{
    *dst = *src;
    dst->name = NULL;
    bool ok = true;
    size_t n = src->count > 0 ? (size_t)src->count : 0;
    switch (src->type) {
    case PD_ATTR_STRING:
        dst->v.s = src->v.s ? str_dup(src->v.s) : NULL;
        ok = !src->v.s || dst->v.s;
        break;
    case PD_ATTR_INTS:
        ok = (dst->v.ints = mem_dup(src->v.ints, n * sizeof(int32_t))) != NULL;
        break;
    case PD_ATTR_FLOATS:
        ok = (dst->v.floats = mem_dup(src->v.floats, n * sizeof(float))) != NULL;
        break;
    case PD_ATTR_INT64S:
        ok = (dst->v.int64s = mem_dup(src->v.int64s, n * sizeof(int64_t))) != NULL;
        break;
    case PD_ATTR_STRINGS: {
        const char **s = calloc(n ? n : 1, sizeof *s);
        dst->v.strings = s;
        ok = s != NULL;
        for (size_t i = 0; ok && i < n; ++i)
            ok = (s[i] = str_dup(src->v.strings[i])) != NULL;
        if (!ok && s)
            dst->count = (int32_t)n; /* attr_free walks what was made */
        break;
    }
    default: break;
    }
    if (ok)
        ok = (dst->name = str_dup(src->name ? src->name : "")) != NULL;
    return ok;
}

static void record_free(tape_record *r)
{
    for (int32_t i = 0; i < PD_MAX_INPUTS; ++i) {
        for (int32_t k = 0; k < r->in[i].count; ++k)
            pd_tensor_release(&r->in[i].tensors[k]);
        free(r->in[i].tensors);
    }
    for (int32_t i = 0; i < PD_MAX_OUTPUTS; ++i) {
        for (int32_t k = 0; k < r->out[i].count; ++k)
            pd_tensor_release(&r->out[i].tensors[k]);
        free(r->out[i].tensors);
    }
    for (int32_t i = 0; i < r->n_attrs; ++i)
        attr_free(&r->attrs[i]);
    free(r->attrs);
    memset(r, 0, sizeof *r);
}

static bool slot_fill(tape_slot *slot, const pd_tensor *tensors, int32_t count)
{
    if (count <= 0)
        return true;
    slot->tensors = calloc((size_t)count, sizeof *slot->tensors);
    if (!slot->tensors)
        return false;
    for (int32_t k = 0; k < count; ++k)
        if (pd_defined(&tensors[k]))
            pd_tensor_retain(&slot->tensors[k], &tensors[k]);
    slot->count = count;
    return true;
}

static bool record_fill(tape_record *r, const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                        const pd_attr *attrs, int32_t n_attrs, const pd_arg *outputs,
                        int32_t n_outputs)
{
    r->op = op;
    r->n_in = pd_op_input_count(op);
    r->n_out = pd_op_output_count(op);
    for (int32_t i = 0; i < n_inputs; ++i) {
        int32_t p = pd__arg_position(op, true, &inputs[i], i);
        if (p >= 0 && p < PD_MAX_INPUTS && r->in[p].count == 0 &&
            !slot_fill(&r->in[p], inputs[i].tensors, inputs[i].count))
            return false;
    }
    for (int32_t i = 0; i < n_outputs; ++i) {
        int32_t p = pd__arg_position(op, false, &outputs[i], i);
        if (p >= 0 && p < PD_MAX_OUTPUTS && r->out[p].count == 0 &&
            !slot_fill(&r->out[p], outputs[i].tensors, outputs[i].count))
            return false;
    }
    if (n_attrs > 0) {
        r->attrs = calloc((size_t)n_attrs, sizeof *r->attrs);
        if (!r->attrs)
            return false;
        for (int32_t i = 0; i < n_attrs; ++i) {
            r->n_attrs = i + 1;
            if (!attr_copy(&r->attrs[i], &attrs[i]))
                return false;
        }
    }
    return true;
}

/* --- public: recording ------------------------------------------------------------------- */

pd_status pd_tape_create(pd_tape **out)
{
    if (!out)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_tape_create: out is NULL");
    pd_tape *t = calloc(1, sizeof *t);
    if (!t)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_tape_create: out of memory");
    *out = t;
    return PD_OK;
}

void pd__tape_truncate(pd_tape *tape, int32_t count)
{
    for (int32_t i = count; i < tape->count; ++i)
        record_free(&tape->records[i]);
    if (count < tape->count)
        tape->count = count;
}

void pd_tape_clear(pd_tape *tape)
{
    if (tape)
        pd__tape_truncate(tape, 0);
}

void pd_tape_destroy(pd_tape *tape)
{
    if (!tape)
        return;
    pd_tape_clear(tape);
    free(tape->records);
    free(tape);
}

int32_t pd_tape_size(const pd_tape *tape) { return tape ? tape->count : 0; }

pd_status pd__tape_reserve(pd_tape *tape, int32_t capacity)
{
    if (capacity <= tape->capacity)
        return PD_OK;
    tape_record *grown = realloc(tape->records, (size_t)capacity * sizeof *grown);
    if (!grown)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_tape: out of memory for %d records", capacity);
    tape->records = grown;
    tape->capacity = capacity;
    return PD_OK;
}

pd_status pd_tape_run(pd_tape *tape, const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                      const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs, int32_t n_outputs)
{
    if (!tape)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_tape_run: tape is NULL");
    if (tape->count == tape->capacity &&
        pd__tape_reserve(tape, tape->capacity ? tape->capacity * 2 : 16) != PD_OK)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_tape_run: out of memory");
    pd_status st = pd_op_run(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
    if (st != PD_OK)
        return st;
    tape_record *r = &tape->records[tape->count];
    memset(r, 0, sizeof *r);
    if (!record_fill(r, op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs)) {
        record_free(r);
        for (int32_t i = 0; i < n_outputs; ++i)
            for (int32_t k = 0; k < outputs[i].count; ++k)
                pd_tensor_release(&outputs[i].tensors[k]);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_tape_run: out of memory recording '%s'",
                        pd_op_name(op));
    }
    tape->count++;
    return PD_OK;
}
