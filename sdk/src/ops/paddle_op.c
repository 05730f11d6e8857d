/*
 * paddle_op.c - pd_api.paddle_op_check: what the Paddle C++ front's wrappers know about an op
 * (which inputs and outputs are vectors, optional, inplace; which attrs each infer function is
 * handed), and the check of its PD_KERNEL / PD_INFER_* signatures against its declarations.
 *
 * This ran as inline C++ in every Paddle module (paddle/op_builder.h), where it was most of the
 * code a cold build compiled for the registration alone; it runs once per op, at its first
 * call, so it is compiled here once. The record (pd_paddle_op.h) holds C types only. The
 * messages are the ones the C++ builder wrote, word for word (tests/python/test_paddle*.py
 * read them).
 */
#include "pd_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing message; on allocation failure it keeps what it has (the text gets shorter, the
 * op still fails). */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void text_addn(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *p = realloc(t->s, cap);
        if (p == NULL)
            return;
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void text_add(text *t, const char *s) { text_addn(t, s, strlen(s)); }

static void text_num(text *t, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    text_add(t, buf);
}

/* "s" unless n is 1. */
static const char *plural(long long n) { return n == 1 ? "" : "s"; }

/* Whether `name` carries the suffix (anywhere, as the builder's has_suffix read it). */
static bool has(const char *name, const char *suffix) { return strstr(name, suffix) != NULL; }

static bool is_vector_kind(int k)
{
    return k == PD_PADDLE_P_VEC || k == PD_PADDLE_P_OPT_VEC || k == PD_PADDLE_P_VEC_INPLACE ||
           k == PD_PADDLE_P_VEC_SHAPE || k == PD_PADDLE_P_OPT_VEC_SHAPE ||
           k == PD_PADDLE_P_VEC_DTYPE || k == PD_PADDLE_P_OPT_VEC_DTYPE;
}

static bool is_optional_kind(int k)
{
    return k == PD_PADDLE_P_OPT || k == PD_PADDLE_P_OPT_VEC || k == PD_PADDLE_P_OPT_SHAPE ||
           k == PD_PADDLE_P_OPT_VEC_SHAPE || k == PD_PADDLE_P_OPT_DTYPE ||
           k == PD_PADDLE_P_OPT_VEC_DTYPE;
}

static const char *kind_text(int k)
{
    if (k == PD_PADDLE_P_VEC || k == PD_PADDLE_P_VEC_INPLACE || k == PD_PADDLE_P_VEC_SHAPE ||
        k == PD_PADDLE_P_VEC_DTYPE)
        return "a vector input";
    if (k == PD_PADDLE_P_OPT || k == PD_PADDLE_P_OPT_SHAPE || k == PD_PADDLE_P_OPT_DTYPE)
        return "an optional input";
    if (k == PD_PADDLE_P_OPT_VEC || k == PD_PADDLE_P_OPT_VEC_SHAPE ||
        k == PD_PADDLE_P_OPT_VEC_DTYPE)
        return "an optional vector input";
    return "a plain input";
}

/* [b, e) of s with spaces and tabs trimmed from both ends. */
static void trim(const char *s, size_t b, size_t e, size_t *ob, size_t *oe)
{
    while (b < e && (s[b] == ' ' || s[b] == '\t'))
        ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
        --e;
    *ob = b;
    *oe = e;
}

/* The type of an attr declaration "name: type [= default]"; PD_ATTR_UNDEFINED if unknown. */
static pd_attr_type declared_attr_type(const char *decl)
{
    const char *colon = strchr(decl, ':');
    if (colon == NULL)
        return PD_ATTR_UNDEFINED;
    size_t c = (size_t)(colon - decl), b, e;
    const char *eq = strchr(colon, '=');
    size_t end = eq ? (size_t)(eq - decl) : strlen(decl);
    trim(decl, c + 1, end, &b, &e);
    char *squeezed = malloc(e - b + 1); /* "std::vector< int >" is "std::vector<int>" */
    if (squeezed == NULL)
        return PD_ATTR_UNDEFINED;
    size_t n = 0;
    for (size_t i = b; i < e; ++i)
        if (decl[i] != ' ' && decl[i] != '\t')
            squeezed[n++] = decl[i];
    squeezed[n] = '\0';
    pd_attr_type t = pd_attr_type_of_spelling(squeezed);
    free(squeezed);
    return t;
}

/* Appends the name of attr declaration a: before its colon, trimmed; "" without a colon. */
static void add_attr_name(text *t, const pd_paddle_op *o, int32_t a)
{
    const char *decl = o->def->attrs[a], *colon = strchr(decl, ':');
    size_t b = 0, e = 0;
    if (colon != NULL)
        trim(decl, 0, (size_t)(colon - decl), &b, &e);
    text_addn(t, decl + b, e - b);
}

/* The record's facts from its definition (what the builder's refresh computed). */
static void facts(pd_paddle_op *o)
{
    const pd_op_def *d = o->def;
    o->n_inputs = o->n_outputs = o->n_attrs = o->n_inplace = 0;
    o->any_vector_output = false;
    memset(o->in_vector, 0, sizeof o->in_vector);
    memset(o->in_optional, 0, sizeof o->in_optional);
    memset(o->out_vector, 0, sizeof o->out_vector);
    memset(o->out_inplace, 0, sizeof o->out_inplace);
    memset(o->attr_type, 0, sizeof o->attr_type);
    memset(o->infer_attrs, 0, sizeof o->infer_attrs);
    memset(o->n_infer_attrs, 0, sizeof o->n_infer_attrs);
    for (; o->n_inputs < PD_MAX_INPUTS && d->inputs[o->n_inputs]; ++o->n_inputs) {
        o->in_vector[o->n_inputs] = has(d->inputs[o->n_inputs], "@VECTOR");
        o->in_optional[o->n_inputs] = has(d->inputs[o->n_inputs], "@OPTIONAL");
    }
    for (; o->n_outputs < PD_MAX_OUTPUTS && d->outputs[o->n_outputs]; ++o->n_outputs) {
        const char *name = d->outputs[o->n_outputs];
        o->out_vector[o->n_outputs] = has(name, "@VECTOR");
        o->any_vector_output = o->any_vector_output || o->out_vector[o->n_outputs];
        for (int32_t p = 0; p < PD_MAX_INPLACE && d->inplace[p][0]; ++p)
            if (d->inplace[p][1] && strcmp(d->inplace[p][1], name) == 0) {
                o->out_inplace[o->n_outputs] = true;
                ++o->n_inplace;
            }
    }
    for (; o->n_attrs < PD_MAX_ATTRS && d->attrs[o->n_attrs]; ++o->n_attrs) {
        pd_attr_type t = declared_attr_type(d->attrs[o->n_attrs]);
        o->attr_type[o->n_attrs] = t;
        o->infer_attrs[0][o->n_infer_attrs[0]++] = o->n_attrs;
        if (t != PD_ATTR_INT64S)
            o->infer_attrs[1][o->n_infer_attrs[1]++] = o->n_attrs;
    }
}

/* "<what>(<fn>): parameter <p>" */
static void where(text *t, const pd_paddle_sig *sig, const char *fn, size_t p)
{
    text_add(t, sig->what);
    text_add(t, "(");
    text_add(t, fn);
    text_add(t, "): parameter ");
    text_num(t, (long long)(p + 1));
}

/* "<where> takes <want><but><attr a's name><declared><its type><tail>": a parameter whose type is
 * not that of the attr it is handed (the words around the attr's name differ with how the
 * parameter got that attr; the messages are the old C++ builder's, word for word). */
static void attr_type_differs(text *t, const pd_paddle_sig *sig, const char *fn, size_t p,
                              const pd_paddle_op *o, int32_t a, pd_attr_type want, const char *but,
                              const char *declared, const char *tail)
{
    where(t, sig, fn, p);
    text_add(t, " takes ");
    text_add(t, pd_attr_type_name(want));
    text_add(t, but);
    add_attr_name(t, o, a);
    text_add(t, declared);
    text_add(t, pd_attr_type_name(o->attr_type[a]));
    text_add(t, tail);
}

/* The first difference between a wrapper's parameters and the declarations, into t; false
 * if none. */
static bool check_signature(const pd_paddle_op *o, const pd_paddle_sig *sig, const char *fn,
                            text *t)
{
    if (sig->kinds == NULL)
        return false;
    int32_t in = 0, at = 0;
    bool kernel = strcmp(sig->what, "PD_KERNEL") == 0;
    int list = strcmp(sig->what, "PD_INFER_SHAPE") == 0 ? 1 : 0; /* infer_attrs */
    for (size_t p = 0; p < sig->n; ++p) {
        int k = sig->kinds[p];
        pd_attr_type want = sig->attrs[p];
        if (k == PD_PADDLE_P_OUT_PTR || k == PD_PADDLE_P_VEC_OUT_PTR)
            continue;
        if (k == PD_PADDLE_P_ATTR && !kernel) { /* the attrs Paddle hands it */
            int32_t rank = at++, handed = o->n_infer_attrs[list];
            if (rank >= handed) {
                where(t, sig, fn, p);
                text_add(t, " takes an attr (");
                text_add(t, pd_attr_type_name(want));
                text_add(t, "), but the op hands it only ");
                text_num(t, handed);
                text_add(t, " attr");
                text_add(t, plural(handed));
                text_add(t, list ? " (Paddle hands a shape function every attr but the "
                                   "std::vector<int64_t> ones, in declared order)"
                                 : " (Paddle hands a dtype function every attr, in declared "
                                   "order)");
                return true;
            }
            int32_t a = o->infer_attrs[list][rank];
            if (o->attr_type[a] != want) {
                attr_type_differs(t, sig, fn, p, o, a, want,
                                  ", but the attr Paddle hands it there is '", "', declared ",
                                  list ? " (a shape function gets every attr but the "
                                         "std::vector<int64_t> ones, in declared order)"
                                       : " (a dtype function gets every attr, in declared "
                                         "order)");
                return true;
            }
            continue;
        }
        if (k == PD_PADDLE_P_ATTR) {
            if (at >= o->n_attrs) {
                where(t, sig, fn, p);
                text_add(t, " takes an attr (");
                text_add(t, pd_attr_type_name(want));
                text_add(t, "), but the op declares ");
                text_num(t, o->n_attrs);
                text_add(t, " attr");
                text_add(t, plural(o->n_attrs));
                return true;
            }
            if (o->attr_type[at] != want) {
                attr_type_differs(t, sig, fn, p, o, at, want, ", but attr '", "' is declared ", "");
                return true;
            }
            ++at;
            continue;
        }
        if (in >= o->n_inputs) {
            where(t, sig, fn, p);
            text_add(t, " takes a tensor input, but the op declares ");
            text_num(t, o->n_inputs);
            text_add(t, " input");
            text_add(t, plural(o->n_inputs));
            return true;
        }
        bool vec = is_vector_kind(k), opt = is_optional_kind(k);
        if (vec != o->in_vector[in] || opt != o->in_optional[in]) {
            where(t, sig, fn, p);
            text_add(t, " is ");
            text_add(t, kind_text(k));
            text_add(t, ", but input '");
            text_add(t, o->def->inputs[in]);
            text_add(t, "' is declared ");
            text_add(t, o->in_vector[in] && o->in_optional[in] ? "an optional vector input"
                        : o->in_vector[in]                     ? "a vector input"
                        : o->in_optional[in]                   ? "an optional input"
                                                               : "a plain input");
            return true;
        }
        ++in;
    }
    /* Kernels take every input and attr; infer functions may stop early (Paddle passes the
     * attrs they name). */
    if (kernel && (in != o->n_inputs || at != o->n_attrs)) {
        bool inputs = in != o->n_inputs;
        text_add(t, "PD_KERNEL(");
        text_add(t, fn);
        text_add(t, ") takes ");
        text_num(t, inputs ? in : at);
        text_add(t, inputs ? " tensor input" : " attr");
        text_add(t, plural(inputs ? in : at));
        text_add(t, ", but the op declares ");
        text_num(t, inputs ? o->n_inputs : o->n_attrs);
        return true;
    }
    if (!kernel && in != o->n_inputs) {
        text_add(t, sig->what);
        text_add(t, "(");
        text_add(t, fn);
        text_add(t, ") takes ");
        text_num(t, in);
        text_add(t, " input");
        text_add(t, plural(in));
        text_add(t, ", but the op declares ");
        text_num(t, o->n_inputs);
        return true;
    }
    return false;
}

/* The op's message (a list with too many names, else the first signature that disagrees),
 * into t; false if the op is fine. Reads the facts, writes nothing to the record. */
static bool op_message(const pd_paddle_op *o, text *t)
{
    if (o->overflow != NULL) {
        static const struct {
            const char *list;
            long long most;
        } caps[] = {{"inputs", PD_MAX_INPUTS},
                    {"outputs", PD_MAX_OUTPUTS},
                    {"attrs", PD_MAX_ATTRS},
                    {"inplace", PD_MAX_INPLACE}};
        bool inplace = strcmp(o->overflow, "inplace") == 0;
        long long most = PD_MAX_INPUTS;
        for (size_t i = 0; i < sizeof caps / sizeof caps[0]; ++i)
            if (strcmp(o->overflow, caps[i].list) == 0)
                most = caps[i].most;
        text_add(t, inplace ? "the op's inplace map has " : "the op declares ");
        text_num(t, (long long)o->overflow_count);
        if (inplace) {
            text_add(t, " pairs");
        } else {
            text_add(t, " ");
            text_add(t, o->overflow);
        }
        text_add(t, "; at most ");
        text_num(t, most);
        return true;
    }
    static const char *const fns[3] = {"kernel", "infer_shape", "infer_dtype"};
    for (int i = 0; i < 3; ++i)
        if (check_signature(o, &o->sig[i], fns[i], t))
            return true;
    return false;
}

/* One lock for every op's first check: it runs once per op, at load-time cost. */
static pthread_mutex_t check_mu = PTHREAD_MUTEX_INITIALIZER;

int32_t pd__paddle_op_check(pd_paddle_op *op, char *message, size_t cap)
{
    if (message != NULL && cap > 0)
        message[0] = '\0';
    if (op == NULL || op->def == NULL) {
        static const char no_op[] = "the Paddle front handed pdext no op record";
        if (message != NULL && cap > 0)
            snprintf(message, cap, "%s", no_op);
        return (int32_t)(sizeof no_op - 1);
    }
    text t = {NULL, 0, 0};
    if (__atomic_load_n(&op->state, __ATOMIC_ACQUIRE) == PD_PADDLE_OP_UNCHECKED) {
        pthread_mutex_lock(&check_mu);
        if (__atomic_load_n(&op->state, __ATOMIC_RELAXED) == PD_PADDLE_OP_UNCHECKED) {
            facts(op);
            int32_t state = op_message(op, &t) ? PD_PADDLE_OP_BAD : PD_PADDLE_OP_OK;
            __atomic_store_n(&op->state, state, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&check_mu);
    }
    if (__atomic_load_n(&op->state, __ATOMIC_ACQUIRE) == PD_PADDLE_OP_OK) {
        free(t.s);
        return 0;
    }
    if (t.s == NULL)
        op_message(op, &t);
    const char *m = t.len > 0 ? t.s : "out of memory while checking the op's declarations";
    int32_t len = (int32_t)strlen(m);
    if (message != NULL && cap > 0)
        snprintf(message, cap, "%s", m);
    free(t.s);
    return len;
}
