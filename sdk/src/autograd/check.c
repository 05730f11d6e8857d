/*
 * check.c - pd_check_op (pdext_check.h): the checks of `pdext check` and Python's
 * pdext.check, written once. Each check runs the op through pd_op_run on random inputs made by
 * the filler gradcheck uses (args.c) and hands its verdict to the host as a row.
 */
#include "autograd/autograd.h"
#include "pdext_check.h"
#include "pdext_gradcheck.h"

#include <stddef.h>
#include <stdio.h>

#define N_DTYPES 6
#define VECTOR_ITEMS 2 /* tensors given to a vector input */

static const pd_data_type candidates[N_DTYPES] = {PD_FLOAT32,  PD_FLOAT64, PD_FLOAT16,
                                                  PD_BFLOAT16, PD_INT32,   PD_INT64};
static const int64_t small[2] = {3, 4};
static const int64_t large[2] = {64, 300};

/* One pd_check_op call: the op, its attrs, the host's options and the verdicts so far. */
typedef struct check_run {
    const pd_registry *reg;
    const pd_op *op;
    const pd_attr *attrs;
    int32_t n_attrs;
    pd_check_options opt;
    uint64_t rng;
    int32_t failed;
} check_run;

const char *pd_check_status_name(pd_check_status status)
{
    return status == PD_CHECK_OK ? "ok" : status == PD_CHECK_FAIL ? "FAIL" : "skip";
}

static void row_of(check_run *r, pd_data_type t, const char *check, pd_check_status status,
                   const char *detail, uint32_t dtypes)
{
    pd_check_row out = {pd_op_name(r->op),
                        t == PD_UNDEFINED ? "-" : pd_dtype_name(t),
                        check,
                        status,
                        detail,
                        dtypes};
    if (status == PD_CHECK_FAIL)
        r->failed++;
    if (r->opt.on_row)
        r->opt.on_row(r->opt.user, &out);
}

static void row(check_run *r, pd_data_type t, const char *check, pd_check_status status,
                const char *detail)
{
    row_of(r, t, check, status, detail, 0);
}

static void starting(check_run *r, pd_data_type t, const char *check)
{
    if (r->opt.on_case)
        r->opt.on_case(r->opt.user, pd_op_name(r->op), t == PD_UNDEFINED ? "-" : pd_dtype_name(t),
                       check);
}

/* The first line of the last error, for a row. */
static const char *error_line(char *buf, size_t size)
{
    snprintf(buf, size, "%s", pd_last_error());
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

/* --- inputs ---------------------------------------------------------------------------------- */

/* The given input for input `name` of the op, or NULL: one naming the op wins over one for
 * every op. */
static const pd_check_input *given_for(const check_run *r, const char *name)
{
    const pd_check_input *any = NULL;
    for (int32_t i = 0; i < r->opt.n_inputs; ++i) {
        const pd_check_input *g = &r->opt.inputs[i];
        if (strcmp(g->name, name) != 0)
            continue;
        if (strcmp(g->op, pd_op_name(r->op)) == 0)
            return g;
        if (g->op[0] == '\0')
            any = g;
    }
    return any;
}

/* How many of the op's inputs have a given shape (then the op runs at those only). */
static int32_t given_count(const check_run *r)
{
    int32_t n = 0;
    for (int32_t i = 0; i < pd_op_input_count(r->op); ++i) {
        pd_arg_info info;
        if (pd_op_input_info(r->op, i, &info) == PD_OK && given_for(r, info.name) != NULL)
            ++n;
    }
    return n;
}

/* One random input; with `strided` (and 2 dims) a transposed view of a [shape1, shape0]
 * tensor. */
static pd_status input_tensor(check_run *r, pd_data_type dtype, int32_t ndim, const int64_t *shape,
                              bool strided, pd_tensor *out)
{
    int64_t s[PD_MAX_DIMS];
    memcpy(s, shape, sizeof(int64_t) * (size_t)ndim);
    strided = strided && ndim == 2;
    if (!strided)
        return pd__random_tensor(dtype, ndim, s, PD__RANDOM_INPUTS, &r->rng, out);
    s[0] = shape[1];
    s[1] = shape[0];
    pd_tensor base = PD_TENSOR_UNDEFINED;
    pd_status st = pd__random_tensor(dtype, ndim, s, PD__RANDOM_INPUTS, &r->rng, &base);
    if (st == PD_OK)
        st = pd_tensor_transpose(out, &base, 0, 1);
    pd_tensor_release(&base);
    return st;
}

/* Random inputs for every declared input (absent optional ones left out; a vector input two
 * tensors) of `dtype` and `shape`, or what a given input says. With `strided`, 2-d inputs are
 * transposed views, except those whose bit is set in `dense`. */
static pd_status inputs_make(check_run *r, pd_data_type dtype, const int64_t shape[2], bool strided,
                             uint32_t dense, pd__args *c)
{
    memset(c, 0, sizeof *c);
    c->n = pd_op_input_count(r->op);
    pd_status st = PD_OK;
    for (int32_t i = 0; st == PD_OK && i < c->n; ++i) {
        pd_arg_info info;
        st = pd_op_input_info(r->op, i, &info);
        int32_t count = info.is_vector ? VECTOR_ITEMS : info.is_optional ? 0 : 1;
        const pd_check_input *g = st == PD_OK ? given_for(r, info.name) : NULL;
        bool view = strided && !(i < 32 && (dense & (1u << i)));
        if (st == PD_OK)
            st = pd__args_slot(c, i, count);
        for (int32_t k = 0; st == PD_OK && k < count; ++k) {
            if (g)
                st = input_tensor(r, g->dtype != PD_UNDEFINED ? g->dtype : dtype, g->ndim, g->shape,
                                  view, &c->arg[i].tensors[k]);
            else
                st = input_tensor(r, dtype, 2, shape, view, &c->arg[i].tensors[k]);
        }
    }
    return st;
}

/* Dense copies of c's tensors. */
static pd_status inputs_dense(const pd__args *c, pd__args *d)
{
    memset(d, 0, sizeof *d);
    d->n = c->n;
    pd_status st = PD_OK;
    for (int32_t i = 0; st == PD_OK && i < c->n; ++i) {
        st = pd__args_slot(d, i, c->arg[i].count);
        for (int32_t k = 0; st == PD_OK && k < c->arg[i].count; ++k)
            st = pd_tensor_cast(&d->arg[i].tensors[k], &c->arg[i].tensors[k],
                                c->arg[i].tensors[k].dtype);
    }
    return st;
}

/* Whether two runs' outputs hold the same bytes; `why` says where they differ. */
static bool outputs_same(const pd__args *a, const pd__args *b, char *why, size_t size)
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

/* One run at `shape` with fresh inputs; false (and the error in msg, its status in *status
 * when not NULL) on failure. */
static bool runs_at(check_run *r, pd_data_type t, const int64_t shape[2], char *msg, size_t size,
                    pd_status *status)
{
    pd__args in, out;
    memset(&out, 0, sizeof out);
    pd_status st = inputs_make(r, t, shape, false, 0, &in);
    if (st == PD_OK)
        st = pd__args_run(r->op, &in, r->attrs, r->n_attrs, &out);
    if (st != PD_OK)
        error_line(msg, size);
    if (status)
        *status = st;
    pd__args_free(&in);
    pd__args_free(&out);
    return st == PD_OK;
}

/* --- the checks ------------------------------------------------------------------------------ */

/* Whether a failed run is a refusal of its input by the op: the op said no (PD_CHECK,
 * PD_THROW: the message ends with the author's [file:line]) or the runner refused the input
 * before the kernel (PD_ERR_INVALID_ARGUMENT), with a message that names the op and says
 * why. The runner's checks of what the kernel made (an output not as inferred, one not set)
 * are the op's bugs, and stay failures. */
static bool is_refusal(const pd_op *op, pd_status st, const char *msg)
{
    size_t n = strlen(pd_op_name(op));
    if ((st != PD_ERR_OP_FAILED && st != PD_ERR_INVALID_ARGUMENT) ||
        strncmp(msg, pd_op_name(op), n) != 0 || strncmp(msg + n, ": ", 2) != 0)
        return false;
    const char *why = msg + n + 2;
    size_t len = strlen(why);
    bool located = len > 3 && why[len - 1] == ']' && strchr(why, '[') != NULL &&
                   strchr(strrchr(why, '['), ':') != NULL;
    if (st == PD_ERR_OP_FAILED && !located)
        return false;
    /* "An error occurred." is PD_THROW with no message: not a reason */
    return *why != '\0' && *why != '[' && strncmp(why, "An error occurred.", 18) != 0;
}

static void check_shapes(check_run *r, pd_data_type t)
{
    static const int64_t shapes[3][2] = {{1, 1}, {0, 4}, {64, 300}};
    static const char *const names[3] = {"one element [1, 1]", "empty [0, 4]", "large [64, 300]"};
    static const char *const dims[3] = {"[1, 1]", "[0, 4]", "[64, 300]"};
    char msg[512], detail[700], ran[128] = "[3, 4]", refused[900] = "";
    if (given_count(r) > 0) { /* the shapes are the host's: the dtypes trial ran them */
        row(r, t, "shapes+infer", PD_CHECK_OK, "the given shapes");
        return;
    }
    for (int i = 0; i < 3; ++i) {
        pd_status st = PD_OK;
        if (runs_at(r, t, shapes[i], msg, sizeof msg, &st)) {
            size_t used = strlen(ran);
            snprintf(ran + used, sizeof ran - used, ", %s", dims[i]);
            continue;
        }
        if (!is_refusal(r->op, st, msg)) {
            snprintf(detail, sizeof detail, "%s: %s", names[i], msg);
            row(r, t, "shapes+infer", PD_CHECK_FAIL, detail);
            return;
        }
        /* A clear no to an input it cannot take is right: the "bad input" row says so. */
        size_t used = strlen(refused);
        snprintf(refused + used, sizeof refused - used, "%s%s refused: %s", used ? "; " : "",
                 names[i], msg);
    }
    row(r, t, "shapes+infer", PD_CHECK_OK, ran);
    if (refused[0])
        row(r, t, "bad input", PD_CHECK_OK, refused);
}

/* Runs the op on `in` and on `other` (NULL: `in` again) and rows whether the outputs agree. */
static void compare_runs(check_run *r, pd_data_type t, const char *check, pd_status st,
                         pd__args *in, pd__args *other, const char *agree)
{
    pd__args a, b;
    char msg[512] = "";
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (st == PD_OK)
        st = pd__args_run(r->op, in, r->attrs, r->n_attrs, &a);
    if (st == PD_OK)
        st = pd__args_run(r->op, other ? other : in, r->attrs, r->n_attrs, &b);
    if (st != PD_OK)
        row(r, t, check, PD_CHECK_FAIL, error_line(msg, sizeof msg));
    else if (!outputs_same(&a, &b, msg, sizeof msg))
        row(r, t, check, PD_CHECK_FAIL, msg);
    else
        row(r, t, check, PD_CHECK_OK, agree);
    pd__args_free(&a);
    pd__args_free(&b);
}

static void check_determinism(check_run *r, pd_data_type t)
{
    pd__args in;
    /* with given shapes, the inputs without one keep the [3, 4] they ran the dtypes at */
    pd_status st = inputs_make(r, t, given_count(r) ? small : large, false, 0, &in);
    compare_runs(r, t, "deterministic", st, &in, NULL, "two runs, same bytes");
    pd__args_free(&in);
}

/* Whether the definition holds `field` (one compiled against an older SDK may stop short). */
#define DEF_HAS(def, field) \
    ((def)->struct_size >= offsetof(pd_op_def, field) + sizeof((def)->field))

/* The inputs the op writes in place without declaring them strided (bits by input index):
 * the runner refuses a strided view there (a contiguous copy could not be written back), so
 * they get dense inputs in the strided row. *first names the first of them. */
static uint32_t dense_inplace_inputs(const pd_op *op, const char **first)
{
    const pd_op_def *def = pd_op_definition(op);
    *first = NULL;
    if (def == NULL || !DEF_HAS(def, inplace))
        return 0;
    uint32_t flags = DEF_HAS(def, flags) ? def->flags : 0;
    uint32_t strided = DEF_HAS(def, strided_inputs) ? def->strided_inputs : 0;
    if (flags & PD_OP_STRIDED_INPUTS)
        return 0;
    uint32_t mask = 0;
    for (int k = 0; k < PD_MAX_INPLACE && def->inplace[k][0] != NULL; ++k)
        for (int32_t i = 0; i < pd_op_input_count(op) && i < 32; ++i) {
            pd_arg_info info;
            if (pd_op_input_info(op, i, &info) == PD_OK &&
                (strcmp(info.name, def->inplace[k][0]) == 0 ||
                 strcmp(info.decl, def->inplace[k][0]) == 0) &&
                !(strided & PD_INPUT_BIT(i))) {
                mask |= 1u << i;
                if (*first == NULL)
                    *first = info.name;
            }
        }
    return mask;
}

static void check_strided(check_run *r, pd_data_type t)
{
    char msg[512], agree[300];
    const char *inplace = NULL;
    uint32_t dense_mask = dense_inplace_inputs(r->op, &inplace);
    int32_t others = 0; /* inputs that can take a strided view */
    for (int32_t i = 0; i < pd_op_input_count(r->op); ++i) {
        pd_arg_info info;
        if (pd_op_input_info(r->op, i, &info) == PD_OK && !info.is_optional &&
            !(i < 32 && (dense_mask & (1u << i))))
            ++others;
    }
    if (inplace != NULL && others == 0) {
        snprintf(msg, sizeof msg,
                 "in-place input '%s' is not declared strided, so the op only ever gets dense "
                 "inputs (declare strided_inputs to have it checked)",
                 inplace);
        row(r, t, "strided", PD_CHECK_SKIP, msg);
        return;
    }
    snprintf(agree, sizeof agree, "transposed inputs agree");
    if (inplace != NULL)
        snprintf(agree, sizeof agree,
                 "transposed inputs agree (in-place input '%s' kept dense: not declared strided)",
                 inplace);
    pd__args in, dense;
    memset(&dense, 0, sizeof dense);
    pd_status st = inputs_make(r, t, small, true, dense_mask, &in);
    if (st == PD_OK)
        st = inputs_dense(&in, &dense);
    compare_runs(r, t, "strided", st, &in, &dense, agree);
    pd__args_free(&in);
    pd__args_free(&dense);
}

static void check_gradient(check_run *r, pd_data_type t)
{
    if (!pd_op_grad(r->op)) {
        row(r, t, "gradcheck", PD_CHECK_SKIP, "no grad op");
        return;
    }
    if (t != PD_FLOAT32 && t != PD_FLOAT64) {
        row(r, t, "gradcheck", PD_CHECK_SKIP,
            pd_dtype_is_floating(t) ? "checked in float32/float64" : "not differentiable");
        return;
    }
    pd__args in;
    char detail[900], msg[512];
    pd_gradcheck_options opt = {.struct_size = sizeof opt, .max_elements = 24, .keep_dtype = true};
    pd_gradcheck_report rep;
    pd_status st = inputs_make(r, t, small, false, 0, &in);
    if (st == PD_OK)
        st = pd_gradcheck(r->reg, pd_op_name(r->op), in.arg, in.n, r->attrs, r->n_attrs, &opt,
                          &rep);
    pd__args_free(&in);
    if (st != PD_OK) {
        row(r, t, "gradcheck", PD_CHECK_FAIL, error_line(msg, sizeof msg));
        return;
    }
    /* the element to show: the first order's, unless only the double grad op is wrong */
    bool show_double = rep.double_grad_checked && !rep.double_grad_passed &&
                       rep.worst.abs_error <= rep.atol + rep.rtol * (rep.worst.numeric < 0
                                                                         ? -rep.worst.numeric
                                                                         : rep.worst.numeric);
    const pd_gradcheck_element *w = show_double ? &rep.double_worst : &rep.worst;
    snprintf(detail, sizeof detail, "%s %s %s[%lld]: analytic %.6g numeric %.6g (rel err %.2g)%s%s",
             rep.passed ? "worst" : "WRONG", w->op, w->input, (long long)w->index, w->analytic,
             w->numeric, w->rel_error, rep.skipped[0] ? "; skipped " : "", rep.skipped);
    row(r, t, rep.double_grad_checked ? "gradcheck x2" : "gradcheck",
        rep.passed ? PD_CHECK_OK : PD_CHECK_FAIL, detail);
}

static void check_all(check_run *r)
{
    char msg[512], works[128] = "", refused[160] = "", first_error[512] = "";
    bool accepted[N_DTYPES];
    uint32_t taken = 0;
    starting(r, PD_UNDEFINED, "dtypes");
    for (int d = 0; d < N_DTYPES; ++d) {
        accepted[d] = runs_at(r, candidates[d], small, msg, sizeof msg, NULL);
        taken |= accepted[d] ? 1u << candidates[d] : 0;
        char *list = accepted[d] ? works : refused;
        size_t used = strlen(list), cap = accepted[d] ? sizeof works : sizeof refused;
        snprintf(list + used, cap - used, "%s%s", used ? " " : "", pd_dtype_name(candidates[d]));
        if (!accepted[d] && !first_error[0])
            snprintf(first_error, sizeof first_error, "%s", msg);
    }
    if (!works[0]) {
        snprintf(msg, sizeof msg, "takes none of float32..int64: %s", first_error);
        row(r, PD_UNDEFINED, "dtypes", PD_CHECK_FAIL, msg);
        return;
    }
    snprintf(msg, sizeof msg, "takes %s%s%s", works, refused[0] ? "; refuses " : "", refused);
    row_of(r, PD_UNDEFINED, "dtypes", PD_CHECK_OK, msg, taken);
    for (int d = 0; !r->opt.dtypes_only && d < N_DTYPES; ++d) {
        if (!accepted[d])
            continue;
        starting(r, candidates[d], "shapes+infer");
        check_shapes(r, candidates[d]);
        starting(r, candidates[d], "deterministic");
        check_determinism(r, candidates[d]);
        starting(r, candidates[d], "strided");
        check_strided(r, candidates[d]);
        starting(r, candidates[d], "gradcheck");
        check_gradient(r, candidates[d]);
    }
}

/* --- attrs, given inputs and the entry points ------------------------------------------------ */

/* The attrs the op is checked with: the host's, declared defaults (left to the runner), 0 for
 * int attrs without one (said in a note). An attr that can be neither given nor guessed is an
 * error naming it and how to pass it. */
static pd_status op_attrs(check_run *r, const pd_attr *given, int32_t n_given, pd_attr *attrs,
                          int32_t *n)
{
    const char *before = r->opt.attr_hint[0] ? r->opt.attr_hint[0] : "";
    const char *after = r->opt.attr_hint[1] ? r->opt.attr_hint[1] : "=VALUE";
    const char *name = pd_op_name(r->op);
    *n = 0;
    for (int32_t j = 0; j < n_given && *n < PD_MAX_ATTRS; ++j)
        attrs[(*n)++] = given[j];
    for (int32_t k = 0; k < pd_op_attr_count(r->op); ++k) {
        pd_attr_info info;
        bool have = false;
        if (pd_op_attr_info(r->op, k, &info) != PD_OK || info.has_default)
            continue;
        for (int32_t j = 0; j < n_given; ++j)
            have = have || (given[j].name && strcmp(given[j].name, info.name) == 0);
        if (have)
            continue;
        if ((info.type != PD_ATTR_INT && info.type != PD_ATTR_INT64) || *n == PD_MAX_ATTRS)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "op '%s' needs attr '%s' (%s), which has no default; pass %s%s%s", name,
                            info.name, pd_attr_type_name(info.type), before, info.name, after);
        attrs[(*n)++] = info.type == PD_ATTR_INT ? pd_attr_of_int(info.name, 0)
                                                 : pd_attr_of_int64(info.name, 0);
        char note[512];
        snprintf(note, sizeof note, "%s: attr %s = 0 (no default; %s%s%s to choose)", name,
                 info.name, before, info.name, after);
        if (r->opt.on_note)
            r->opt.on_note(r->opt.user, note);
    }
    return PD_OK;
}

/* The names of op's inputs, ", "-separated, into buf. */
static void input_names(const pd_op *op, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int32_t i = 0; i < pd_op_input_count(op); ++i) {
        pd_arg_info info;
        size_t used = strlen(buf);
        if (pd_op_input_info(op, i, &info) == PD_OK && used < size)
            snprintf(buf + used, size - used, "%s%s", used ? ", " : "", info.name);
    }
}

static bool has_input(const pd_op *op, const char *name)
{
    for (int32_t i = 0; i < pd_op_input_count(op); ++i) {
        pd_arg_info info;
        if (pd_op_input_info(op, i, &info) == PD_OK && strcmp(info.name, name) == 0)
            return true;
    }
    return false;
}

pd_status pd_check_inputs_validate(const pd_registry *reg, const pd_check_input *inputs,
                                   int32_t n_inputs)
{
    if (!reg || n_inputs < 0 || (n_inputs > 0 && !inputs))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "pd_check_inputs_validate: needs a registry and n_inputs inputs");
    char list[1024];
    for (int32_t i = 0; i < n_inputs; ++i) {
        const pd_check_input *g = &inputs[i];
        if (g->op[0] == '\0')
            continue;
        const pd_op *op = pd_op_find(reg, g->op);
        if (op != NULL && pd_op_get_kind(op) == PD_OP_FORWARD) {
            if (has_input(op, g->name))
                continue;
            input_names(op, list, sizeof list);
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s.%s: op '%s' has no input '%s' (its inputs: %s)", g->op, g->name,
                            g->op, g->name, list[0] ? list : "none");
        }
        list[0] = '\0';
        for (int32_t k = 0; k < pd_registry_op_count(reg); ++k) {
            const pd_op *o = pd_registry_op_at(reg, k);
            size_t used = strlen(list);
            if (pd_op_get_kind(o) == PD_OP_FORWARD && used < sizeof list)
                snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", pd_op_name(o));
        }
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s.%s: no forward op '%s' (the forward ops: %s)",
                        g->op, g->name, g->op, list[0] ? list : "none");
    }
    return PD_OK;
}

pd_status pd_check_op(const pd_registry *reg, const char *name, const pd_attr *attrs,
                      int32_t n_attrs, const pd_check_options *options, int32_t *failed)
{
    if (!reg || !name || n_attrs < 0 || (n_attrs > 0 && !attrs))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "pd_check_op: needs a registry, an op name and n_attrs attrs");
    check_run r;
    memset(&r, 0, sizeof r);
    if (options)
        memcpy(&r.opt, options,
               options->struct_size && options->struct_size < sizeof r.opt ? options->struct_size
                                                                           : sizeof r.opt);
    if (r.opt.n_inputs < 0 || (r.opt.n_inputs > 0 && !r.opt.inputs))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "pd_check_op: options.inputs is NULL with "
                        "n_inputs %d",
                        (int)r.opt.n_inputs);
    r.reg = reg;
    r.op = pd_op_find(reg, name);
    if (!r.op)
        return pd__fail_prefix("pd_check_op: ");
    if (pd_op_get_kind(r.op) != PD_OP_FORWARD)
        return pd__fail(PD_ERR_NOT_FOUND, "pd_check_op: '%s' is a grad op; check its forward op",
                        name);
    for (int32_t i = 0; i < r.opt.n_inputs; ++i)
        if (strcmp(r.opt.inputs[i].op, name) == 0 && !has_input(r.op, r.opt.inputs[i].name)) {
            pd_status st = pd_check_inputs_validate(reg, &r.opt.inputs[i], 1);
            return st;
        }
    pd_attr all[PD_MAX_ATTRS];
    pd_status st = op_attrs(&r, attrs, n_attrs, all, &r.n_attrs);
    if (st != PD_OK)
        return st;
    r.attrs = all;
    r.rng = r.opt.seed;
    check_all(&r);
    if (failed)
        *failed = r.failed;
    return PD_OK;
}
