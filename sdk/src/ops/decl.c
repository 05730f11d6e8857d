/*
 * decl.c - the one parser of op declarations (see decl.h): input and output names with their
 * Paddle segments, attr declarations with types and defaults, grad and registered op names,
 * and name lookup.
 *
 * Declarations come from code we did not compile, so every string is checked and a failure
 * names where it was declared (the caller's `where`: "op 'x' (x.c:3)") and the offending
 * string, because that is what the author has to fix.
 *
 * A little over 500 lines: the value parser for defaults of the nine attr types lives here
 * with the rest, so that one file owns the whole declaration syntax.
 */
#include "ops/decl.h"
#include "ops/pd_registry_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ASCII ranges, not isalpha: a host's locale must not make a byte of 'é' a letter. */
static bool is_ident_start(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

static bool is_identifier(const char *s, size_t n)
{
    if (n == 0 || !is_ident_start(s[0]))
        return false;
    for (size_t i = 1; i < n; ++i)
        if (!is_ident_char(s[i]))
            return false;
    return true;
}

bool pd_name_is_identifier(const char *s) { return s && is_identifier(s, strlen(s)); }

/* [*b, *e) without leading and trailing white space. */
static void trim(const char **b, const char **e)
{
    while (*b < *e && isspace((unsigned char)**b))
        ++*b;
    while (*e > *b && isspace((unsigned char)(*e)[-1]))
        --*e;
}

/* --- Inputs and outputs ------------------------------------------------------------------ */

pd_status pd__decl_parse_arg(const char *where, const char *list, int32_t index, const char *decl,
                             pd__arg_decl *out)
{
    memset(out, 0, sizeof *out);
    out->decl = decl;
    if (decl[0] == '\0')
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: %s %d is an empty string \"\"; every %s needs a name", where, list,
                        (int)index, list);
    if (strlen(decl) >= PD__NAME_MAX)
        return pd__fail(PD_ERR_INVALID_MODULE, "%s: %s \"%s\" is too long (at most %d characters)",
                        where, list, decl, PD__NAME_MAX - 1);
    /* decl is below PD__NAME_MAX, so base (a subsequence of it) fits. */
    const char *at = strchr(decl, '@');
    size_t len = at ? (size_t)(at - decl) : strlen(decl);
    if (len == 0)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: %s \"%s\" has an empty name before '@'; expected e.g. \"X\", "
                        "\"X@VECTOR\", \"X@GRAD\"",
                        where, list, decl);
    memcpy(out->base, decl, len);
    while (at != NULL) {
        const char *seg = at + 1, *next = strchr(seg, '@');
        size_t n = next ? (size_t)(next - seg) : strlen(seg);
        if (n == 6 && memcmp(seg, "VECTOR", 6) == 0) {
            out->is_vector = true;
        } else if (n == 8 && memcmp(seg, "OPTIONAL", 8) == 0) {
            out->is_optional = true;
        } else if (n == 0) {
            return pd__fail(PD_ERR_INVALID_MODULE, "%s: %s \"%s\" has an empty '@' suffix", where,
                            list, decl);
        } else {
            memcpy(out->base + len, at, n + 1);
            len += n + 1;
        }
        at = next;
    }
    out->base[len] = '\0';
    for (const char *c = decl; *c; ++c)
        if (isspace((unsigned char)*c) || !isprint((unsigned char)*c))
            return pd__fail(PD_ERR_INVALID_MODULE,
                            "%s: %s \"%s\" contains white space or a non-printable character",
                            where, list, decl);
    return PD_OK;
}

int32_t pd__decl_find(const pd__arg_decl *decls, int32_t n, const char *name)
{
    for (int32_t i = 0; i < n; ++i)
        if (strcmp(decls[i].decl, name) == 0)
            return i;
    for (int32_t i = 0; i < n; ++i)
        if (strcmp(decls[i].base, name) == 0)
            return i;
    return -1;
}

const char *pd__decl_names(const pd__arg_decl *decls, int32_t n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n && used + 1 < size; ++i) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", decls[i].decl);
        used += w > 0 ? (size_t)w : 0;
    }
    return n ? buf : "none";
}

/* The declaration among decls[0 .. n) whose base name is name[0 .. len), or -1. */
static int32_t find_base(const pd__arg_decl *decls, int32_t n, const char *name, size_t len)
{
    for (int32_t i = 0; i < n; ++i)
        if (strncmp(decls[i].base, name, len) == 0 && decls[i].base[len] == '\0')
            return i;
    return -1;
}

/* The length of `name` without a final "@GRAD", or -1 when it has none (or nothing before). */
static ptrdiff_t grad_base_len(const char *name)
{
    size_t len = strlen(name);
    if (len <= 5 || memcmp(name + len - 5, "@GRAD", 5) != 0)
        return -1;
    return (ptrdiff_t)(len - 5);
}

int32_t pd__decl_grad_source(const pd__arg_decl *inputs, int32_t n, const pd__arg_decl *grad)
{
    ptrdiff_t len = grad_base_len(grad->base);
    return len < 0 ? -1 : find_base(inputs, n, grad->base, (size_t)len);
}

pd_grad_source pd__decl_grad_input_source(const pd__arg_decl *fwd_in, int32_t n_in,
                                          const pd__arg_decl *fwd_out, int32_t n_out,
                                          const char *name, int32_t *index)
{
    ptrdiff_t len = grad_base_len(name);
    if (len >= 0 && (*index = find_base(fwd_out, n_out, name, (size_t)len)) >= 0)
        return PD_GRAD_FROM_OUTPUT_GRAD;
    if ((*index = find_base(fwd_in, n_in, name, strlen(name))) >= 0)
        return PD_GRAD_FROM_INPUT;
    if ((*index = find_base(fwd_out, n_out, name, strlen(name))) >= 0)
        return PD_GRAD_FROM_OUTPUT;
    return PD_GRAD_FROM_NONE;
}

/* --- Attr types ---------------------------------------------------------------------------- */

/* Copies [s, e) with its white space removed into buf; false when white space separates two
 * word characters ("int 64_t") or the result does not fit. */
static bool squeeze_type(const char *s, const char *e, char *buf, size_t size)
{
    size_t n = 0;
    char prev = 0;
    bool gap = false;
    for (; s < e; ++s) {
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

static pd_attr_type type_parse(const char *s, const char *e)
{
    char buf[64];
    if (!squeeze_type(s, e, buf, sizeof buf))
        return PD_ATTR_UNDEFINED;
    return pd_attr_type_of_spelling(buf);
}

pd_attr_type pd__attr_type_parse(const char *spelling)
{
    return spelling ? type_parse(spelling, spelling + strlen(spelling)) : PD_ATTR_UNDEFINED;
}

/* --- Attr defaults ------------------------------------------------------------------------- */

/* Scalars as C++ writes them: integers in decimal (optional sign), floating values as strtod
 * reads them (a float may end in f/F), bools as true/false. Each takes exactly [s, e). */
static bool parse_integer(const char *s, const char *e, int64_t lo, int64_t hi, int64_t *out)
{
    char buf[32];
    size_t n = (size_t)(e - s);
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t i = (buf[0] == '-' || buf[0] == '+'); i < n; ++i)
        if (!isdigit((unsigned char)buf[i]))
            return false;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno != 0 || *end != '\0' || end == buf || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_floating(const char *s, const char *e, bool is_float, double *out)
{
    char buf[64];
    size_t n = (size_t)(e - s);
    if (is_float && n > 1 && (e[-1] == 'f' || e[-1] == 'F') && s[0] != 'i' && s[0] != 'n')
        --n;
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (*end != '\0' || end == buf || !isfinite(v))
        return false;
    if (is_float && fabs(v) > 3.4028234663852886e38)
        return false;
    *out = v;
    return true;
}

/* A C++ string literal "..." with \" \\ \n \t \r escapes, into buf (NUL-terminated). */
static bool parse_string(const char *s, const char *e, char *buf, size_t *used, size_t cap)
{
    if (e - s < 2 || *s != '"' || e[-1] != '"')
        return false;
    size_t n = *used;
    for (const char *p = s + 1; p < e - 1; ++p) {
        char c = *p;
        if (c == '"')
            return false;
        if (c == '\\') {
            if (++p >= e - 1)
                return false;
            c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'r' ? '\r' : *p;
            if (*p != 'n' && *p != 't' && *p != 'r' && *p != '"' && *p != '\\')
                return false;
        }
        if (n + 1 >= cap)
            return false;
        buf[n++] = c;
    }
    buf[n++] = '\0';
    *used = n;
    return true;
}

/* The end of the element that starts at s (before the next top-level comma or e); a comma
 * inside a string literal does not count. */
static const char *element_end(const char *s, const char *e)
{
    bool in_string = false;
    for (; s < e; ++s) {
        if (in_string && *s == '\\' && s + 1 < e)
            ++s;
        else if (*s == '"')
            in_string = !in_string;
        else if (*s == ',' && !in_string)
            return s;
    }
    return e;
}

/* One scalar of `type` (a vector's element type for vectors) from [s, e) into element k of
 * the default's block. */
static bool parse_scalar(pd_attr_type type, const char *s, const char *e, pd_attr *a, void *elems,
                         int32_t k, char *chars, size_t *chars_used, size_t chars_cap)
{
    int64_t i;
    double d;
    switch (type) {
    case PD_ATTR_BOOL:
        if ((size_t)(e - s) == 4 && memcmp(s, "true", 4) == 0)
            a->v.b = true;
        else if ((size_t)(e - s) == 5 && memcmp(s, "false", 5) == 0)
            a->v.b = false;
        else
            return false;
        return true;
    case PD_ATTR_INT:
        if (!parse_integer(s, e, INT32_MIN, INT32_MAX, &i))
            return false;
        a->v.i = (int32_t)i;
        return true;
    case PD_ATTR_INTS:
        if (!parse_integer(s, e, INT32_MIN, INT32_MAX, &i))
            return false;
        ((int32_t *)elems)[k] = (int32_t)i;
        return true;
    case PD_ATTR_INT64: return parse_integer(s, e, INT64_MIN, INT64_MAX, &a->v.i64);
    case PD_ATTR_INT64S: return parse_integer(s, e, INT64_MIN, INT64_MAX, &((int64_t *)elems)[k]);
    case PD_ATTR_FLOAT:
        if (!parse_floating(s, e, true, &d))
            return false;
        a->v.f = (float)d;
        return true;
    case PD_ATTR_FLOATS:
        if (!parse_floating(s, e, true, &d))
            return false;
        ((float *)elems)[k] = (float)d;
        return true;
    case PD_ATTR_DOUBLE: return parse_floating(s, e, false, &a->v.d);
    case PD_ATTR_STRING:
    case PD_ATTR_STRINGS: {
        size_t at = *chars_used;
        if (!parse_string(s, e, chars, chars_used, chars_cap))
            return false;
        if (type == PD_ATTR_STRING)
            a->v.s = chars + at;
        else
            ((const char **)elems)[k] = chars + at;
        return true;
    }
    default: return false;
    }
}

static size_t element_size(pd_attr_type t)
{
    switch (t) {
    case PD_ATTR_INTS: return sizeof(int32_t);
    case PD_ATTR_FLOATS: return sizeof(float);
    case PD_ATTR_INT64S: return sizeof(int64_t);
    case PD_ATTR_STRINGS: return sizeof(const char *);
    default: return 0;
    }
}

/* "an int64_t (e.g. -1)": what a default of type t looks like, for messages. */
static const char *default_example(pd_attr_type t)
{
    static const char *const examples[] =
        {"?",
         "true or false",
         "an int (e.g. -1)",
         "a float (e.g. 0.5)",
         "a double (e.g. 0.5)",
         "an int64_t (e.g. -1)",
         "a string literal (e.g. \"abc\")",
         "a list of ints in braces (e.g. {1, 2})",
         "a list of floats in braces (e.g. {0.5, 1})",
         "a list of int64_t in braces (e.g. {1, 2})",
         "a list of string literals in braces (e.g. {\"a\", \"b\"})"};
    return (unsigned)t <= PD_ATTR_STRINGS ? examples[t] : "?";
}

/* Parses the default [s, e) of attr *a (type and name set) into a->default_value, allocating
 * its block. False (nothing allocated) when it is not a value of the type. */
static bool parse_default(pd__attr_decl *a, const char *s, const char *e)
{
    pd_attr *v = &a->default_value;
    *v = (pd_attr){0};
    v->type = a->type; /* name stays NULL: users set it (the decl may move, e.g. by sorting) */
    size_t esize = element_size(a->type);
    bool is_string = a->type == PD_ATTR_STRING || a->type == PD_ATTR_STRINGS;
    /* Characters of strings never exceed the text's own length. */
    size_t chars_cap = is_string ? (size_t)(e - s) + 1 : 0;
    if (esize == 0) {
        char *chars = chars_cap ? malloc(chars_cap) : NULL;
        size_t used = 0;
        if (chars_cap && chars == NULL)
            return false;
        if (!parse_scalar(a->type, s, e, v, NULL, 0, chars, &used, chars_cap)) {
            free(chars);
            return false;
        }
        a->default_block = chars;
        return true;
    }
    if (e - s < 2 || *s != '{' || e[-1] != '}')
        return false;
    const char *b = s + 1, *end = e - 1;
    trim(&b, &end);
    int32_t count = 0;
    for (const char *p = b; p < end; ++count) {
        p = element_end(p, end);
        if (p < end)
            ++p;
    }
    if (b < end && end[-1] == ',')
        return false; /* "{1, 2,}" */
    /* One block: elements, then string characters. */
    size_t elems_bytes = (size_t)count * esize;
    char *block = malloc(elems_bytes + chars_cap + 1);
    if (block == NULL)
        return false;
    char *chars = block + elems_bytes;
    size_t used = 0;
    const char *p = b;
    for (int32_t k = 0; k < count; ++k) {
        const char *q = element_end(p, end), *ib = p, *ie = q;
        trim(&ib, &ie);
        if (!parse_scalar(a->type, ib, ie, v, block, k, chars, &used, chars_cap)) {
            free(block);
            return false;
        }
        p = q + 1;
    }
    v->count = count;
    v->v.ints = (const int32_t *)(void *)block; /* the union's pointers share one place */
    a->default_block = block;
    return true;
}

pd_status pd__decl_parse_attr(const char *where, int32_t index, const char *decl,
                              pd__attr_decl *out)
{
    memset(out, 0, sizeof *out);
    out->decl = decl;
    if (decl[0] == '\0')
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: attr %d is an empty string \"\"; expected \"name: type\"", where,
                        (int)index);
    const char *colon = strchr(decl, ':');
    if (colon == NULL)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: attr \"%s\" is malformed: expected \"name: type\", e.g. "
                        "\"axis: int64_t\"",
                        where, decl);
    const char *b = decl, *e = colon;
    trim(&b, &e);
    size_t n = (size_t)(e - b);
    if (n == 0 || n >= PD__NAME_MAX)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: attr \"%s\" is malformed: expected \"name: type\" with a non-empty "
                        "name",
                        where, decl);
    memcpy(out->name, b, n);
    out->name[n] = '\0';
    if (!is_identifier(b, n))
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: attr \"%s\" is malformed: its name \"%s\" is not an identifier", where,
                        decl, out->name);
    /* Types never contain '=', so the first one after the colon starts the default. */
    const char *t = colon + 1, *eq = strchr(t, '='), *te = eq ? eq : t + strlen(t);
    out->type = type_parse(t, te);
    if (out->type == PD_ATTR_UNDEFINED) {
        trim(&t, &te);
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: attr \"%s\" is malformed: unknown type \"%.*s\"; expected one of "
                        "bool, int, float, double, int64_t, std::string, std::vector<int>, "
                        "std::vector<float>, std::vector<int64_t>, std::vector<std::string> "
                        "(or int32, int64, string, int[], float[], int64[], string[])",
                        where, decl, (int)(te - t), t);
    }
    if (eq == NULL)
        return PD_OK;
    const char *db = eq + 1, *de = eq + strlen(eq);
    trim(&db, &de);
    if (!parse_default(out, db, de))
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: attr '%s' is declared %s, but its default \"%.*s\" is not one; "
                        "expected %s",
                        where, out->name, pd_attr_type_name(out->type), (int)(de - db), db,
                        default_example(out->type));
    if ((out->default_text = malloc((size_t)(de - db) + 1)) == NULL) {
        pd__decl_attr_free(out);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: attr '%s': out of memory", where, out->name);
    }
    memcpy(out->default_text, db, (size_t)(de - db));
    out->default_text[de - db] = '\0';
    out->has_default = true;
    return PD_OK;
}

void pd__decl_attr_free(pd__attr_decl *a)
{
    free(a->default_block);
    free(a->default_text);
    a->default_block = NULL;
    a->default_text = NULL;
}

int32_t pd__decl_attr_find(const pd__attr_decl *attrs, int32_t n, const char *name)
{
    for (int32_t i = 0; i < n; ++i)
        if (strcmp(attrs[i].name, name) == 0)
            return i;
    return -1;
}

const char *pd__decl_attr_names(const pd__attr_decl *attrs, int32_t n, bool typed, char *buf,
                                size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n && used + 1 < size; ++i) {
        const pd__attr_decl *a = &attrs[i];
        int w = typed ? snprintf(buf + used, size - used, "%s%s: %s%s%s", i ? ", " : "", a->name,
                                 pd_attr_type_name(a->type), a->has_default ? " = " : "",
                                 a->has_default ? a->default_text : "")
                      : snprintf(buf + used, size - used, "%s%s", i ? ", " : "", a->name);
        used += w > 0 ? (size_t)w : 0;
    }
    return n ? buf : "none";
}

/* --- Op names ------------------------------------------------------------------------------ */

bool pd__op_registered_name(const char *name, pd_op_kind kind, char *buf, size_t size)
{
    const char *suffix = kind == PD_OP_GRAD          ? "_grad"
                         : kind == PD_OP_DOUBLE_GRAD ? "_grad_grad"
                                                     : "";
    int n = snprintf(buf, size, "%s%s", name, suffix);
    return n >= 0 && (size_t)n < size;
}

bool pd__op_grad_name(const char *name, pd_op_kind kind, char *buf, size_t size)
{
    if (kind == PD_OP_DOUBLE_GRAD)
        return false;
    int n = snprintf(buf, size, "%s_grad", name);
    return n >= 0 && (size_t)n < size;
}

bool pd__op_forward_name(const char *name, pd_op_kind kind, char *buf, size_t size)
{
    size_t len = strlen(name);
    if (kind == PD_OP_FORWARD || len < 5 || len - 5 >= size)
        return false;
    memcpy(buf, name, len - 5); /* x_grad -> x, x_grad_grad -> x_grad */
    buf[len - 5] = '\0';
    return true;
}
