/*
 * opdef.c - turns one pd_op_def, as it sits in a module's op table, into a struct pd_op the
 * runner reads: the registered name, the parsed declarations (decl.c does the parsing), the
 * inplace map resolved to indices, and the per-op facts the runner's binder reads.
 *
 * A definition comes from code we did not compile, so nothing in it is trusted: every
 * string is checked, and a failure names the op (with its source line) and the offending
 * string, because that is what the author has to fix. Checks that need other ops (duplicate
 * names, grad ops and their forward ops) live in module.c.
 */
#include "ops/pd_registry_internal.h"

#include <stdio.h>
#include <string.h>

/* The smallest definition we can use: everything up to and including the kernel. Larger than
 * our sizeof is fine (a newer minor of the same major, already refused by the ABI check, or
 * padding); absurd sizes mean the table is not a table of definitions. */
#define DEF_MIN_SIZE (offsetof(pd_op_def, kernel) + sizeof(pd_kernel_fn))
#define DEF_MAX_SIZE (1u << 16)

static const char *kind_word(pd_op_kind kind)
{
    return kind == PD_OP_FORWARD ? "op" : kind == PD_OP_GRAD ? "grad op" : "double grad op";
}

/* Context for messages: "op 'custom_relu_grad' (relu.c:31)". */
typedef struct def_where {
    char where[PD__NAME_MAX + 512];
} def_where;

#define FAIL(w, fmt, ...) pd__fail(PD_ERR_INVALID_MODULE, "%s: " fmt, (w)->where, __VA_ARGS__)

/* Parses one list of input or output names; duplicates are judged by base name, since that is
 * what a host binds by. */
static pd_status parse_args(const def_where *w, const char *list, const char *const *decls,
                            int32_t max, pd__arg_decl *out, int32_t *count)
{
    int32_t n = 0;
    while (n < max && decls[n] != NULL)
        ++n;
    for (int32_t i = 0; i < n; ++i) {
        pd_status s = pd__decl_parse_arg(w->where, list, i, decls[i], &out[i]);
        if (s != PD_OK)
            return s;
        for (int32_t j = 0; j < i; ++j)
            if (strcmp(out[j].base, out[i].base) == 0)
                return FAIL(w, "%s \"%s\" is declared twice (as \"%s\" and \"%s\")", list,
                            out[i].base, out[j].decl, out[i].decl);
    }
    *count = n;
    return PD_OK;
}

static pd_status parse_attrs(const def_where *w, const pd_op_def *def, pd_op *op)
{
    int32_t n = 0;
    while (n < PD_MAX_ATTRS && def->attrs[n] != NULL)
        ++n;
    for (int32_t i = 0; i < n; ++i) {
        pd_status s = pd__decl_parse_attr(w->where, i, def->attrs[i], &op->attrs[i]);
        if (s != PD_OK)
            return s;
        op->n_attrs = i + 1; /* counted as soon as parsed, so that pd__op_free frees it */
        for (int32_t j = 0; j < i; ++j)
            if (strcmp(op->attrs[j].name, op->attrs[i].name) == 0)
                return FAIL(w, "attr \"%s\" is declared twice (\"%s\" and \"%s\")",
                            op->attrs[i].name, def->attrs[j], def->attrs[i]);
    }
    return PD_OK;
}

static pd_status parse_inplace(const def_where *w, const pd_op_def *def, pd_op *op)
{
    bool input_used[PD_MAX_INPUTS] = {false};
    for (int32_t o = 0; o < PD_MAX_OUTPUTS; ++o)
        op->inplace_input[o] = -1;
    for (int32_t p = 0; p < PD_MAX_INPLACE; ++p) {
        const char *in = def->inplace[p][0], *out = def->inplace[p][1];
        if (in == NULL && out == NULL)
            break;
        if (in == NULL || out == NULL)
            return FAIL(w,
                        "inplace pair %d {\"%s\", \"%s\"} is incomplete; expected "
                        "{input, output}",
                        (int)p, in ? in : "(null)", out ? out : "(null)");
        int32_t i = pd__decl_find(op->inputs, op->n_inputs, in);
        if (i < 0)
            return FAIL(w, "inplace map names input \"%s\", which is not a declared input", in);
        int32_t o = pd__decl_find(op->outputs, op->n_outputs, out);
        if (o < 0)
            return FAIL(w, "inplace map names output \"%s\", which is not a declared output", out);
        if (op->inputs[i].is_vector != op->outputs[o].is_vector)
            return FAIL(w,
                        "inplace pair {\"%s\", \"%s\"} maps a %s to a %s; both must be "
                        "vectors or neither",
                        in, out, op->inputs[i].is_vector ? "vector" : "single tensor",
                        op->outputs[o].is_vector ? "vector" : "single tensor");
        if (op->inplace_input[o] >= 0)
            return FAIL(w, "inplace map names output \"%s\" twice", out);
        if (input_used[i])
            return FAIL(w, "inplace map names input \"%s\" twice", in);
        input_used[i] = true;
        op->inplace_input[o] = i;
    }
    return PD_OK;
}

/* The input whose tensors output `o` mirrors when no infer function says otherwise: the
 * aliased input of an inplace output; input "N" for an output "N@GRAD"; the only input of a
 * one-input, one-output op, or input 0 of an op with PD_OP_OUTPUTS_LIKE_INPUT0 in `flags`. -1
 * if none. Fixed by the declarations, so computed once here rather than by the runner on
 * every call. */
static int32_t default_source(const pd_op *op, int32_t o, uint32_t flags)
{
    if (op->inplace_input[o] >= 0)
        return op->inplace_input[o];
    int32_t i = pd__decl_grad_source(op->inputs, op->n_inputs, &op->outputs[o]);
    if (i >= 0)
        return i;
    if ((op->n_inputs == 1 && op->n_outputs == 1) ||
        (op->n_inputs > 0 && (flags & PD_OP_OUTPUTS_LIKE_INPUT0)))
        return 0;
    return -1;
}

/* What the runner's binder reads on every call (struct pd_op, pd_registry_internal.h). */
static void derive_call_facts(pd_op *op, uint32_t flags)
{
    op->plain_inputs = 0;
    for (int32_t i = 0; i < op->n_inputs; ++i)
        if (!op->inputs[i].is_vector && !op->inputs[i].is_optional)
            op->plain_inputs |= 1u << i;
    op->required_attrs = 0;
    for (int32_t i = 0; i < op->n_attrs; ++i)
        if (!op->attrs[i].has_default)
            op->required_attrs |= 1u << i;
    op->setup_outputs = false;
    for (int32_t o = 0; o < PD_MAX_OUTPUTS; ++o) {
        int32_t src = o < op->n_outputs ? default_source(op, o, flags) : -1;
        op->default_source[o] = src;
        if (src >= 0 &&
            (op->outputs[o].is_vector || op->inplace_input[o] >= 0 || op->inputs[src].is_optional))
            op->setup_outputs = true;
    }
    op->plain_infer = !op->setup_outputs && op->infer_shape == NULL && op->infer_dtype == NULL;
}

void pd__op_free(pd_op *op)
{
    for (int32_t i = 0; i < op->n_attrs; ++i)
        pd__decl_attr_free(&op->attrs[i]);
    op->n_attrs = 0;
}

pd_status pd__op_parse(const pd_op_def *raw, int32_t index, pd_module *module, pd_op *op)
{
    memset(op, 0, sizeof *op);
    if (raw == NULL)
        return pd__fail(PD_ERR_INVALID_MODULE, "op table entry %d is NULL", (int)index);
    if (raw->struct_size < DEF_MIN_SIZE || raw->struct_size > DEF_MAX_SIZE)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "op table entry %d has struct_size %u; expected %zu to %u bytes "
                        "(is the table corrupt?)",
                        (int)index, (unsigned)raw->struct_size, DEF_MIN_SIZE, DEF_MAX_SIZE);
    /* Fields past the module's struct_size read as zero. */
    pd_op_def def;
    memset(&def, 0, sizeof def);
    memcpy(&def, raw, raw->struct_size < sizeof def ? raw->struct_size : sizeof def);

    if (def.kind < PD_OP_FORWARD || def.kind > PD_OP_DOUBLE_GRAD)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "op table entry %d ('%s') has kind %d; expected 0 (forward), 1 (grad) or "
                        "2 (double grad)",
                        (int)index, pd_name_is_identifier(def.name) ? def.name : "?",
                        (int)def.kind);
    if (!pd_name_is_identifier(def.name))
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "op table entry %d (%s:%d) has name \"%s\"; an op name must be a C "
                        "identifier",
                        (int)index, def.file ? def.file : "?", (int)def.line,
                        def.name ? def.name : "(null)");
    op->def = raw;
    op->kind = (pd_op_kind)def.kind;
    op->module = module;
    if (!pd__op_registered_name(def.name, op->kind, op->name, sizeof op->name))
        return pd__fail(PD_ERR_INVALID_MODULE, "op name \"%s\" is too long (at most %d characters)",
                        def.name, PD__NAME_MAX - 12);
    def_where w;
    snprintf(w.where, sizeof w.where, "%s '%s' (%s:%d)", kind_word(op->kind), op->name,
             def.file ? def.file : "?", (int)def.line);

    pd_status s = parse_args(&w, "input", def.inputs, PD_MAX_INPUTS, op->inputs, &op->n_inputs);
    if (s == PD_OK)
        s = parse_args(&w, "output", def.outputs, PD_MAX_OUTPUTS, op->outputs, &op->n_outputs);
    if (s == PD_OK)
        s = parse_attrs(&w, &def, op);
    if (s == PD_OK)
        s = parse_inplace(&w, &def, op);
    if (s == PD_OK && def.kernel == NULL)
        s = pd__fail(PD_ERR_INVALID_MODULE, "%s has no kernel; set .kernel", w.where);
    if (s == PD_OK && op->n_outputs == 0)
        s = pd__fail(PD_ERR_INVALID_MODULE, "%s declares no outputs", w.where);
    if (s != PD_OK) {
        pd__op_free(op);
        return s;
    }
    op->kernel = def.kernel;
    op->infer_shape = def.infer_shape;
    op->infer_dtype = def.infer_dtype;
    op->workspace = def.workspace;
    s = pd__op_parse_strided(&def, op); /* which inputs may stay strided (below) */
    if (s != PD_OK)
        return s;
    if ((def.flags & PD_OP_OUTPUTS_LIKE_INPUT0) && op->n_inputs == 0) {
        pd__op_free(op);
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s has flag PD_OP_OUTPUTS_LIKE_INPUT0 but declares no inputs; give it "
                        "an input or an infer_shape and infer_dtype",
                        w.where);
    }
    derive_call_facts(op, def.flags); /* after the infer functions: plain_infer reads them */
    return PD_OK;
}

/* pd_op_def.flags and strided_inputs: which inputs may reach the kernel strided (the runner's
 * input step makes the others contiguous, call/strided_inputs.c), and PD_OP_MAY_BLOCK. */
pd_status pd__op_parse_strided(const pd_op_def *def, pd_op *op)
{
    uint32_t all = (uint32_t)((UINT64_C(1) << op->n_inputs) - 1);
    uint32_t unknown = def->flags & ~(PD_OP_STRIDED_INPUTS | PD_OP_OUTPUTS_LIKE_INPUT0 |
                                      PD_OP_MAY_BLOCK | PD_OP_LEADING_BATCH);
    if (unknown != 0)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "op '%s' (%s:%d) has flags 0x%x that this runtime does not know; the "
                        "flags it knows are PD_OP_STRIDED_INPUTS (0x%x), "
                        "PD_OP_OUTPUTS_LIKE_INPUT0 (0x%x), PD_OP_MAY_BLOCK (0x%x) and "
                        "PD_OP_LEADING_BATCH (0x%x)",
                        op->name, def->file ? def->file : "?", (int)def->line, (unsigned)unknown,
                        PD_OP_STRIDED_INPUTS, PD_OP_OUTPUTS_LIKE_INPUT0, PD_OP_MAY_BLOCK,
                        PD_OP_LEADING_BATCH);
    if ((def->flags & PD_OP_LEADING_BATCH) && op->n_inputs == 0)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "op '%s' (%s:%d) has flag PD_OP_LEADING_BATCH but declares no inputs: "
                        "there is no leading dimension to batch",
                        op->name, def->file ? def->file : "?", (int)def->line);
    if ((def->strided_inputs & ~all) != 0)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "op '%s' (%s:%d) has strided_inputs 0x%x, which names input %d, but the "
                        "op declares %d input%s",
                        op->name, def->file ? def->file : "?", (int)def->line,
                        (unsigned)def->strided_inputs, __builtin_ctz(def->strided_inputs & ~all),
                        (int)op->n_inputs, op->n_inputs == 1 ? "" : "s");
    op->strided_inputs = (def->flags & PD_OP_STRIDED_INPUTS) ? all : def->strided_inputs;
    op->may_block = (def->flags & PD_OP_MAY_BLOCK) != 0;
    return PD_OK;
}
