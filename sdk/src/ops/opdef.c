/*
 * opdef.c - turns one pd_op_def, as it sits in a module's op table, into a struct pd_op the
 * runner reads: the registered name, parsed input/output names (@VECTOR, @OPTIONAL), typed
 * attr declarations and the inplace map resolved to indices.
 *
 * A definition comes from code we did not compile, so nothing in it is trusted: every
 * string is checked, and a failure names the op (with its source line) and the offending
 * string, because that is what the author has to fix. Checks that need other ops (duplicate
 * names, grad ops and their forward ops) live in module.c.
 */
#include "ops/pd_registry_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The smallest definition we can use: everything up to and including the kernel. Larger than
 * our sizeof is fine (a newer minor of the same major, already refused by the ABI check, or
 * padding); absurd sizes mean the table is not a table of definitions. */
#define DEF_MIN_SIZE (offsetof(pd_op_def, kernel) + sizeof(pd_kernel_fn))
#define DEF_MAX_SIZE (1u << 16)

static bool is_ident_start(char c) { return c == '_' || isalpha((unsigned char)c); }
static bool is_ident_char(char c) { return c == '_' || isalnum((unsigned char)c); }

static bool is_identifier(const char *s)
{
    if (s == NULL || !is_ident_start(*s))
        return false;
    for (++s; *s; ++s)
        if (!is_ident_char(*s))
            return false;
    return true;
}

static const char *kind_word(pd_op_kind kind)
{
    return kind == PD_OP_FORWARD ? "op" : kind == PD_OP_GRAD ? "grad op" : "double grad op";
}

/* Context for messages: "op 'custom_relu_grad' (relu.c:31)". */
typedef struct def_where {
    const char *what; /* "op", "grad op", "double grad op" */
    const char *name; /* registered name */
    const char *file;
    int32_t line;
} def_where;

#define FAIL(w, fmt, ...)                                                                    \
    pd__fail(PD_ERR_INVALID_MODULE, "%s '%s' (%s:%d): " fmt, (w)->what, (w)->name,           \
             (w)->file, (int)(w)->line, __VA_ARGS__)

/* Splits a declared name into its base (Paddle's @VECTOR / @OPTIONAL segments removed, other
 * segments such as @GRAD and @NEW kept) and flags. */
static pd_status parse_arg(const def_where *w, const char *list, int32_t i, const char *decl,
                           pd__arg_decl *out)
{
    memset(out, 0, sizeof *out);
    out->decl = decl;
    if (decl[0] == '\0')
        return FAIL(w, "%s %d is an empty string \"\"; every %s needs a name", list, (int)i,
                    list);
    if (strlen(decl) >= PD__NAME_MAX)
        return FAIL(w, "%s \"%s\" is too long (at most %d characters)", list, decl,
                    PD__NAME_MAX - 1);
    /* decl is below PD__NAME_MAX, so base (a subsequence of it) fits. */
    const char *at = strchr(decl, '@');
    size_t len = at ? (size_t)(at - decl) : strlen(decl);
    if (len == 0)
        return FAIL(w, "%s \"%s\" has an empty name before '@'; expected e.g. \"X\", "
                       "\"X@VECTOR\", \"X@GRAD\"",
                    list, decl);
    memcpy(out->base, decl, len);
    while (at != NULL) {
        const char *seg = at + 1, *next = strchr(seg, '@');
        size_t n = next ? (size_t)(next - seg) : strlen(seg);
        if (n == 6 && memcmp(seg, "VECTOR", 6) == 0) {
            out->is_vector = true;
        } else if (n == 8 && memcmp(seg, "OPTIONAL", 8) == 0) {
            out->is_optional = true;
        } else if (n == 0) {
            return FAIL(w, "%s \"%s\" has an empty '@' suffix", list, decl);
        } else {
            memcpy(out->base + len, at, n + 1);
            len += n + 1;
        }
        at = next;
    }
    out->base[len] = '\0';
    for (const char *c = decl; *c; ++c)
        if (isspace((unsigned char)*c) || !isprint((unsigned char)*c))
            return FAIL(w, "%s \"%s\" contains white space or a non-printable character",
                        list, decl);
    return PD_OK;
}

/* Parses one list of input or output names; duplicates are judged by base name, since that is
 * what a host binds by. */
static pd_status parse_args(const def_where *w, const char *list, const char *const *decls,
                            int32_t max, pd__arg_decl *out, int32_t *count)
{
    int32_t n = 0;
    while (n < max && decls[n] != NULL)
        ++n;
    for (int32_t i = 0; i < n; ++i) {
        pd_status s = parse_arg(w, list, i, decls[i], &out[i]);
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

/* Copies `s` with its white space removed into buf; false when white space separates two word
 * characters ("int 64_t") or the result does not fit. */
static bool squeeze_type(const char *s, char *buf, size_t size)
{
    size_t n = 0;
    char prev = 0;
    bool gap = false;
    for (; *s; ++s) {
        if (isspace((unsigned char)*s)) {
            gap = true;
            continue;
        }
        if (gap && is_ident_char(prev) && is_ident_char(*s))
            return false;
        if (n + 1 >= size)
            return false;
        buf[n++] = *s;
        prev = *s;
        gap = false;
    }
    buf[n] = '\0';
    return true;
}

pd_attr_type pd__attr_type_parse(const char *spelling)
{
    static const struct {
        const char *spelling;
        pd_attr_type type;
    } types[] = {
        {"bool", PD_ATTR_BOOL},
        {"int", PD_ATTR_INT},
        {"int32", PD_ATTR_INT},
        {"float", PD_ATTR_FLOAT},
        {"double", PD_ATTR_DOUBLE},
        {"int64_t", PD_ATTR_INT64},
        {"int64", PD_ATTR_INT64},
        {"std::string", PD_ATTR_STRING},
        {"string", PD_ATTR_STRING},
        {"std::vector<int>", PD_ATTR_INTS},
        {"int[]", PD_ATTR_INTS},
        {"std::vector<float>", PD_ATTR_FLOATS},
        {"float[]", PD_ATTR_FLOATS},
        {"std::vector<int64_t>", PD_ATTR_INT64S},
        {"int64[]", PD_ATTR_INT64S},
        {"std::vector<std::string>", PD_ATTR_STRINGS},
        {"string[]", PD_ATTR_STRINGS},
    };
    char buf[64];
    if (spelling == NULL || !squeeze_type(spelling, buf, sizeof buf))
        return PD_ATTR_UNDEFINED;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strcmp(buf, types[i].spelling) == 0)
            return types[i].type;
    return PD_ATTR_UNDEFINED;
}

/* Parses "name: type" (white space free around both parts). */
static pd_status parse_attr(const def_where *w, int32_t i, const char *decl, pd__attr_decl *out)
{
    if (decl[0] == '\0')
        return FAIL(w, "attr %d is an empty string \"\"; expected \"name: type\"", (int)i);
    const char *colon = strchr(decl, ':');
    if (colon == NULL)
        return FAIL(w, "attr \"%s\" is malformed: expected \"name: type\", e.g. \"axis: int64_t\"",
                    decl);
    const char *b = decl, *e = colon;
    while (b < e && isspace((unsigned char)*b))
        ++b;
    while (e > b && isspace((unsigned char)e[-1]))
        --e;
    size_t n = (size_t)(e - b);
    if (n == 0 || n >= PD__NAME_MAX)
        return FAIL(w, "attr \"%s\" is malformed: expected \"name: type\" with a non-empty name",
                    decl);
    memcpy(out->name, b, n);
    out->name[n] = '\0';
    if (!is_identifier(out->name))
        return FAIL(w, "attr \"%s\" is malformed: its name \"%s\" is not an identifier", decl,
                    out->name);
    out->type = pd__attr_type_parse(colon + 1);
    if (out->type == PD_ATTR_UNDEFINED) {
        const char *t = colon + 1, *te = t + strlen(t);
        while (isspace((unsigned char)*t))
            ++t;
        while (te > t && isspace((unsigned char)te[-1]))
            --te;
        return FAIL(w, "attr \"%s\" is malformed: unknown type \"%.*s\"; expected one of bool, "
                       "int, float, double, int64_t, std::string, std::vector<int>, "
                       "std::vector<float>, std::vector<int64_t>, std::vector<std::string> "
                       "(or int32, int64, string, int[], float[], int64[], string[])",
                    decl, (int)(te - t), t);
    }
    return PD_OK;
}

static pd_status parse_attrs(const def_where *w, const pd_op_def *def, pd_op *op)
{
    int32_t n = 0;
    while (n < PD_MAX_ATTRS && def->attrs[n] != NULL)
        ++n;
    for (int32_t i = 0; i < n; ++i) {
        pd_status s = parse_attr(w, i, def->attrs[i], &op->attrs[i]);
        if (s != PD_OK)
            return s;
        for (int32_t j = 0; j < i; ++j)
            if (strcmp(op->attrs[j].name, op->attrs[i].name) == 0)
                return FAIL(w, "attr \"%s\" is declared twice (\"%s\" and \"%s\")",
                            op->attrs[i].name, def->attrs[j], def->attrs[i]);
    }
    op->n_attrs = n;
    return PD_OK;
}

/* Index of the declared arg named `name` (as declared, or by base name), or -1. */
static int32_t find_arg(const pd__arg_decl *args, int32_t n, const char *name)
{
    for (int32_t i = 0; i < n; ++i)
        if (strcmp(args[i].decl, name) == 0)
            return i;
    for (int32_t i = 0; i < n; ++i)
        if (strcmp(args[i].base, name) == 0)
            return i;
    return -1;
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
            return FAIL(w, "inplace pair %d {\"%s\", \"%s\"} is incomplete; expected "
                           "{input, output}",
                        (int)p, in ? in : "(null)", out ? out : "(null)");
        int32_t i = find_arg(op->inputs, op->n_inputs, in);
        if (i < 0)
            return FAIL(w, "inplace map names input \"%s\", which is not a declared input", in);
        int32_t o = find_arg(op->outputs, op->n_outputs, out);
        if (o < 0)
            return FAIL(w, "inplace map names output \"%s\", which is not a declared output",
                        out);
        if (op->inputs[i].is_vector != op->outputs[o].is_vector)
            return FAIL(w, "inplace pair {\"%s\", \"%s\"} maps a %s to a %s; both must be "
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
 * one-input, one-output op. -1 if none. Fixed by the declarations, so computed once here
 * rather than by the runner on every call. */
static int32_t default_source(const pd_op *op, int32_t o)
{
    if (op->inplace_input[o] >= 0)
        return op->inplace_input[o];
    const char *base = op->outputs[o].base;
    size_t len = strlen(base);
    if (len > 5 && memcmp(base + len - 5, "@GRAD", 5) == 0)
        for (int32_t i = 0; i < op->n_inputs; ++i)
            if (strncmp(op->inputs[i].base, base, len - 5) == 0 &&
                op->inputs[i].base[len - 5] == '\0')
                return i;
    if (op->n_inputs == 1 && op->n_outputs == 1)
        return 0;
    return -1;
}

/* What the runner reads on every call (pd_internal.h): default sources, and whether calls may
 * take its lean binding (every input and output one plain tensor, nothing aliased, no attrs). */
static void derive_call_facts(pd_op *op)
{
    bool simple = op->n_attrs == 0;
    for (int32_t i = 0; i < op->n_inputs; ++i)
        simple = simple && !op->inputs[i].is_vector && !op->inputs[i].is_optional;
    for (int32_t o = 0; o < PD_MAX_OUTPUTS; ++o)
        op->default_source[o] = o < op->n_outputs ? default_source(op, o) : -1;
    for (int32_t o = 0; o < op->n_outputs; ++o)
        simple = simple && !op->outputs[o].is_vector && !op->outputs[o].is_optional &&
                 op->inplace_input[o] < 0;
    op->simple = simple;
}

bool pd__op_registered_name(const char *name, pd_op_kind kind, char *buf, size_t size)
{
    const char *suffix = kind == PD_OP_GRAD ? "_grad" : kind == PD_OP_DOUBLE_GRAD ? "_grad_grad" : "";
    int n = snprintf(buf, size, "%s%s", name, suffix);
    return n >= 0 && (size_t)n < size;
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
                        (int)index, def.name && is_identifier(def.name) ? def.name : "?",
                        (int)def.kind);
    if (!is_identifier(def.name))
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
    def_where w = {kind_word(op->kind), op->name, def.file ? def.file : "?", def.line};

    pd_status s = parse_args(&w, "input", def.inputs, PD_MAX_INPUTS, op->inputs, &op->n_inputs);
    if (s == PD_OK)
        s = parse_args(&w, "output", def.outputs, PD_MAX_OUTPUTS, op->outputs, &op->n_outputs);
    if (s == PD_OK)
        s = parse_attrs(&w, &def, op);
    if (s == PD_OK)
        s = parse_inplace(&w, &def, op);
    if (s != PD_OK)
        return s;
    if (def.kernel == NULL)
        return pd__fail(PD_ERR_INVALID_MODULE, "%s '%s' (%s:%d) has no kernel; set .kernel",
                        w.what, w.name, w.file, (int)w.line);
    if (op->n_outputs == 0)
        return pd__fail(PD_ERR_INVALID_MODULE, "%s '%s' (%s:%d) declares no outputs",
                        w.what, w.name, w.file, (int)w.line);
    op->kernel = def.kernel;
    op->infer_shape = def.infer_shape;
    op->infer_dtype = def.infer_dtype;
    s = pd__op_parse_strided(&def, op); /* which inputs may stay strided (strided_inputs.c) */
    if (s != PD_OK)
        return s;
    derive_call_facts(op);
    return PD_OK;
}
