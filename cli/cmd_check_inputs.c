/*
 * cmd_check_inputs.c - what `pdext check` (cmd_check.c) runs ops on: random inputs of a
 * dtype and shape (or the --input shapes), dense copies of strided ones, one run with owned
 * outputs, the comparison of two runs' bytes, and the --input option's parsing.
 */
#include "cmd_check.h"

#include <stdlib.h>
#include <string.h>

void pd_check_call_free(call_args *c)
{
    for (int32_t i = 0; i < c->n; ++i) {
        if (c->arg[i].tensors != c->store[i]) /* an output array the runner made */
            pd_arg_release(&c->arg[i]);
        for (int32_t k = 0; k < VECTOR_ITEMS; ++k)
            pd_tensor_release(&c->store[i][k]);
    }
    memset(c, 0, sizeof *c);
}

static uint64_t rng_state = 0x853c49e6748fea9bull;
static double rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / (double)(1ull << 53);
}

/* A random value: floating ones away from 0 (kinks such as relu's sit there), +-[0.1, 1);
 * integers 0, 1 or 2. */
static double value_for(pd_data_type t)
{
    double v = 0.1 + 0.9 * rnd();
    if (pd_dtype_is_integral(t))
        return (double)(int)(rnd() * 3); /* 0, 1 or 2: class indices of 3 or more classes */
    return rnd() < 0.5 ? -v : v;
}

/* One random tensor of `dtype` and shape; with `strided` (and 2 dims) a transposed view of a
 * [shape1, shape0] tensor. */
static pd_status random_tensor(pd_data_type dtype, int32_t ndim, const int64_t *shape, bool strided,
                               pd_tensor *out)
{
    int64_t s[PD_MAX_DIMS];
    memcpy(s, shape, sizeof(int64_t) * (size_t)ndim);
    strided = strided && ndim == 2;
    if (strided) {
        s[0] = shape[1];
        s[1] = shape[0];
    }
    pd_tensor f = PD_TENSOR_UNDEFINED, base = PD_TENSOR_UNDEFINED;
    pd_status st = pd_tensor_empty(&f, PD_FLOAT64, pd_place_cpu(), ndim, s);
    for (int64_t e = 0; st == PD_OK && e < pd_numel(&f); ++e)
        ((double *)f.data)[e] = value_for(dtype);
    if (st == PD_OK)
        st = pd_tensor_cast(&base, &f, dtype);
    pd_tensor_release(&f);
    if (st == PD_OK && strided) {
        st = pd_tensor_transpose(out, &base, 0, 1);
        pd_tensor_release(&base);
    } else if (st == PD_OK) {
        *out = base;
    }
    return st;
}

static bool spec_applies(const input_spec *spec, const pd_op *op)
{
    return spec->op[0] == '\0' || strcmp(spec->op, pd_op_name(op)) == 0;
}

/* The --input spec for input `name` of op, or NULL: one naming the op wins over one for
 * every op. */
static const input_spec *spec_for(const check_state *s, const pd_op *op, const char *name)
{
    const input_spec *any = NULL;
    for (int32_t i = 0; i < s->n_specs; ++i)
        if (strcmp(s->specs[i].name, name) == 0 && spec_applies(&s->specs[i], op)) {
            if (s->specs[i].op[0] != '\0')
                return &s->specs[i];
            any = &s->specs[i];
        }
    return any;
}

int32_t pd_check_op_specs(const check_state *s, const pd_op *op)
{
    int32_t n = 0;
    for (int32_t i = 0; i < pd_op_input_count(op); ++i) {
        pd_arg_info info;
        if (pd_op_input_info(op, i, &info) == PD_OK && spec_for(s, op, info.name) != NULL)
            ++n;
    }
    return n;
}

pd_status pd_check_inputs_make(const check_state *s, const pd_op *op, pd_data_type dtype,
                               const int64_t shape[2], bool strided, uint32_t dense, call_args *c)
{
    memset(c, 0, sizeof *c);
    c->n = pd_op_input_count(op);
    pd_status st = PD_OK;
    for (int32_t i = 0; st == PD_OK && i < c->n; ++i) {
        pd_arg_info info;
        st = pd_op_input_info(op, i, &info);
        int32_t count = info.is_vector ? VECTOR_ITEMS : info.is_optional ? 0 : 1;
        const input_spec *spec = st == PD_OK ? spec_for(s, op, info.name) : NULL;
        bool view = strided && !(i < 32 && (dense & (1u << i)));
        c->arg[i] = pd_arg_named(NULL, c->store[i], count);
        for (int32_t k = 0; st == PD_OK && k < count; ++k) {
            if (spec)
                st = random_tensor(spec->dtype != PD_UNDEFINED ? spec->dtype : dtype, spec->ndim,
                                   spec->shape, view, &c->store[i][k]);
            else
                st = random_tensor(dtype, 2, shape, view, &c->store[i][k]);
        }
    }
    return st;
}

/* Dense copies of c's tensors. */
pd_status pd_check_inputs_dense(const call_args *c, call_args *d)
{
    memset(d, 0, sizeof *d);
    d->n = c->n;
    pd_status st = PD_OK;
    for (int32_t i = 0; i < c->n; ++i) {
        d->arg[i] = pd_arg_named(NULL, d->store[i], c->arg[i].count);
        for (int32_t k = 0; st == PD_OK && k < c->arg[i].count; ++k)
            st = pd_tensor_cast(&d->store[i][k], &c->store[i][k], c->store[i][k].dtype);
    }
    return st;
}

pd_status pd_check_run(const pd_op *op, call_args *in, const pd_attr *attrs, int32_t n_attrs,
                       call_args *out)
{
    memset(out, 0, sizeof *out);
    out->n = pd_op_output_count(op);
    /* tensors NULL / count 0: the runner makes each output's array with exactly as many items
     * as the op makes (no guessed room that a vector output could outgrow after the run) */
    for (int32_t i = 0; i < out->n; ++i)
        out->arg[i] = pd_arg_named(NULL, NULL, 0);
    return pd_op_run(op, in->arg, in->n, attrs, n_attrs, out->arg, out->n);
}

/* Whether two runs' outputs hold the same bytes; `why` says where they differ. */
bool pd_check_outputs_same(const call_args *a, const call_args *b, char *why, size_t size)
{
    for (int32_t i = 0; i < a->n; ++i) {
        if (a->arg[i].count != b->arg[i].count) {
            snprintf(why, size, "output %d: %d vs %d tensors", i, a->arg[i].count, b->arg[i].count);
            return false;
        }
        for (int32_t k = 0; k < a->arg[i].count; ++k) {
            pd_tensor x = PD_TENSOR_UNDEFINED, y = PD_TENSOR_UNDEFINED;
            bool same = pd_tensor_contiguous(&x, &a->arg[i].tensors[k]) == PD_OK &&
                        pd_tensor_contiguous(&y, &b->arg[i].tensors[k]) == PD_OK &&
                        pd_same_shape(&x, &y) && x.dtype == y.dtype &&
                        memcmp(x.data, y.data, pd_nbytes(&x)) == 0;
            pd_tensor_release(&x);
            pd_tensor_release(&y);
            if (!same) {
                snprintf(why, size, "output %d (item %d) differs", i, k);
                return false;
            }
        }
    }
    return true;
}

/* The first line of the last error, for a table cell. */
const char *pd_check_error_line(char *buf, size_t size)
{
    snprintf(buf, size, "%s", pd_last_error());
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    return buf;
}

bool pd_check_spec_parse(const char *text, input_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return false;
    /* OP.NAME: op and input names are identifiers, so the first '.' splits them. */
    const char *dot = memchr(text, '.', (size_t)(eq - text)), *name = text;
    if (dot != NULL) {
        if (dot == text || dot + 1 == eq || (size_t)(dot - text) >= sizeof spec->op)
            return false;
        memcpy(spec->op, text, (size_t)(dot - text));
        name = dot + 1;
    }
    if ((size_t)(eq - name) >= sizeof spec->name)
        return false;
    memcpy(spec->name, name, (size_t)(eq - name));
    const char *p = eq + 1, *colon = strchr(p, ':');
    if (colon) {
        spec->dtype = pd_dtype_from_name(colon + 1);
        if (spec->dtype == PD_UNDEFINED)
            return false;
    }
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    return pd_cmd_parse_dims(p, len, &spec->ndim, spec->shape);
}
