/*
 * gradcheck.c - pd_gradcheck (pdext_gradcheck.h): the analytic gradient of L = sum <W, Out>
 * through the tape against central finite differences of the forward kernel.
 *
 * The check works on its own dense copies of the inputs (cast to the dtype it runs in), so it
 * can perturb elements in place and put them back; the tape holds references to the same
 * copies, which is fine because every perturbation is undone before the next gradient is
 * read. The numeric derivative divides by the step actually taken (the perturbed value read
 * back), which keeps float16 and bfloat16 honest where x + h rounds.
 *
 * The double grad op is checked by the same routine applied to the grad op: its inputs are
 * bound from the first-order run by the tape's naming rule (X, Out, Out@GRAD = W), and its
 * own grad op is the double grad op.
 */
#include "autograd/autograd.h"
#include "pdext_gradcheck.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define WHO "pd_gradcheck"

/* A dense copy of src that the check may write: floating tensors in `dtype`. */
static pd_status copy_for_check(const pd_tensor *src, pd_data_type dtype, pd_tensor *out)
{
    if (!pd_defined(src))
        return PD_OK;
    if (pd__dtype_differentiable(src->dtype))
        return pd_tensor_cast(out, src, dtype);
    return pd_tensor_cast(out, src, src->dtype);
}

/* The host's inputs by declared position, copied for the check. */
static pd_status args_from_host(const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                                pd_data_type dtype, pd__args *a)
{
    memset(a, 0, sizeof *a);
    a->n = pd_op_input_count(op);
    pd_status st = PD_OK;
    for (int32_t i = 0; st == PD_OK && i < n_inputs; ++i) {
        int32_t p = pd__arg_position(op, true, &inputs[i], i);
        if (p < 0 || p >= a->n || a->arg[p].count > 0 || inputs[i].count < 0 ||
            (inputs[i].count > 0 && !inputs[i].tensors))
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: inputs[%d] of '%s' binds to no declared input (or twice)", WHO, i,
                            pd_op_name(op));
        st = pd__args_slot(a, p, inputs[i].count);
        for (int32_t k = 0; st == PD_OK && k < inputs[i].count; ++k)
            st = copy_for_check(&inputs[i].tensors[k], dtype, &a->arg[p].tensors[k]);
    }
    return st;
}

/* W: one random tensor in [-1, 1) per floating output tensor (undefined for the others). */
static pd_status make_weights(const pd__args *outs, uint64_t seed, pd__args *w)
{
    memset(w, 0, sizeof *w);
    w->n = outs->n;
    uint64_t s = seed;
    pd_status st = PD_OK;
    for (int32_t i = 0; st == PD_OK && i < outs->n; ++i) {
        st = pd__args_slot(w, i, outs->arg[i].count);
        for (int32_t k = 0; st == PD_OK && k < outs->arg[i].count; ++k) {
            const pd_tensor *t = &outs->arg[i].tensors[k];
            if (pd_defined(t) && pd__dtype_differentiable(t->dtype))
                st = pd__random_tensor(t->dtype, t->ndim, t->shape, PD__RANDOM_WEIGHTS, &s,
                                       &w->arg[i].tensors[k]);
        }
    }
    return st;
}

/* L = sum <W, Out> for one forward run of op on args. */
static pd_status loss(const pd_op *op, pd__args *args, const pd_attr *attrs, int32_t n_attrs,
                      const pd__args *w, double *out)
{
    pd__args outs;
    pd_status st = pd__args_run(op, args, attrs, n_attrs, &outs);
    double sum = 0;
    for (int32_t i = 0; st == PD_OK && i < outs.n && i < w->n; ++i)
        for (int32_t k = 0; st == PD_OK && k < outs.arg[i].count && k < w->arg[i].count; ++k) {
            const pd_tensor *wk = &w->arg[i].tensors[k];
            if (!pd_defined(wk))
                continue;
            pd_tensor dense = PD_TENSOR_UNDEFINED;
            st = pd_tensor_contiguous(&dense, &outs.arg[i].tensors[k]);
            for (int64_t e = 0, n = pd_numel(wk); st == PD_OK && e < n; ++e)
                sum += pd__elem_get(wk, e) * pd__elem_get(&dense, e);
            pd_tensor_release(&dense);
        }
    pd__args_free(&outs);
    if (st == PD_OK)
        *out = sum;
    return st;
}

static void append(char *buf, size_t size, const char *fmt, ...) PD_PRINTF(3, 4);
static void append(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    if (used > 0)
        used += (size_t)snprintf(buf + used, size - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    if (used < size)
        vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

/* Tolerances and step of one check, and where its verdict goes. */
typedef struct gc_run {
    double step, atol, rtol;
    int64_t max_elements;
    uint64_t seed;
    pd_gradcheck_element worst;
    double worst_ratio; /* abs_error / (atol + rtol |numeric|) of worst; -1 before any */
    int64_t elements;
    int32_t inputs_checked;
    char *skipped;
    size_t skipped_size;
} gc_run;

/* Compares one element and keeps it when it is the worst so far. */
static void compare(gc_run *r, const char *op, const char *input, int64_t index, double a, double n)
{
    double err = fabs(a - n), scale = fabs(a) > fabs(n) ? fabs(a) : fabs(n);
    double ratio = err / (r->atol + r->rtol * fabs(n));
    if (isnan(a) || isnan(n))
        ratio = INFINITY;
    r->elements++;
    if (ratio <= r->worst_ratio)
        return;
    r->worst_ratio = ratio;
    snprintf(r->worst.op, sizeof r->worst.op, "%s", op);
    snprintf(r->worst.input, sizeof r->worst.input, "%s", input);
    r->worst.index = index;
    r->worst.analytic = a;
    r->worst.numeric = n;
    r->worst.abs_error = err;
    r->worst.rel_error = scale > 0 ? err / scale : 0;
}

/* The tensors to differentiate: floating inputs whose "<name>@GRAD" g declares as an output.
 * Writes their positions (p, k) to pos; the others are listed in r->skipped. */
static int32_t pick_wrt(const pd_op *op, const pd_op *g, const pd__args *args, gc_run *r,
                        int32_t (*pos)[2], int32_t cap)
{
    int32_t n = 0;
    for (int32_t p = 0; p < args->n; ++p) {
        pd_arg_info info;
        if (pd_op_input_info(op, p, &info) != PD_OK)
            continue;
        bool declared = false;
        for (int32_t o = 0, no = pd_op_output_count(g); o < no; ++o)
            declared = declared || pd_op_grad_output_target(g, o) == p;
        for (int32_t k = 0; k < args->arg[p].count; ++k) {
            const pd_tensor *t = &args->arg[p].tensors[k];
            if (!pd_defined(t))
                continue;
            if (!pd__dtype_differentiable(t->dtype))
                append(r->skipped, r->skipped_size, "%s: input '%s' is %s, not differentiable",
                       pd_op_name(op), info.name, pd_dtype_name(t->dtype));
            else if (!declared)
                append(r->skipped, r->skipped_size, "%s: grad op '%s' declares no %s@GRAD",
                       pd_op_name(op), pd_op_name(g), info.name);
            else if (n < cap) {
                pos[n][0] = p;
                pos[n][1] = k;
                n++;
            }
            if (!declared || !pd__dtype_differentiable(t->dtype))
                break; /* one note per input */
        }
    }
    return n;
}

/* Finite differences of L at every (sampled) element of wrt tensor t against `analytic`. */
static pd_status compare_tensor(const pd_op *op, pd__args *args, const pd_attr *attrs,
                                int32_t n_attrs, const pd__args *w, pd_tensor *t,
                                const pd_tensor *analytic, const char *input, gc_run *r)
{
    pd_tensor ga = PD_TENSOR_UNDEFINED;
    pd_status st = pd_tensor_contiguous(&ga, analytic);
    int64_t n = pd_numel(t), m = (r->max_elements > 0 && n > r->max_elements) ? r->max_elements : n;
    for (int64_t j = 0; st == PD_OK && j < m; ++j) {
        int64_t i = m == n ? j : j * n / m;
        double v = pd__elem_get(t, i), lp = 0, lm = 0;
        pd__elem_set(t, i, v + r->step);
        double vp = pd__elem_get(t, i);
        st = loss(op, args, attrs, n_attrs, w, &lp);
        pd__elem_set(t, i, v - r->step);
        double vm = pd__elem_get(t, i);
        if (st == PD_OK)
            st = loss(op, args, attrs, n_attrs, w, &lm);
        pd__elem_set(t, i, v);
        if (st == PD_OK)
            compare(r, pd_op_name(op), input, i, pd__elem_get(&ga, i), (lp - lm) / (vp - vm));
    }
    pd_tensor_release(&ga);
    return st;
}

/* One order: op on args. On success *outs and *w (when not NULL) keep the forward outputs and
 * the weights for the next order. */
static pd_status check_op(const pd_op *op, pd__args *args, const pd_attr *attrs, int32_t n_attrs,
                          gc_run *r, pd__args *keep_outs, pd__args *keep_w)
{
    const pd_op *g = pd_op_grad(op);
    pd_tape *tape = NULL;
    pd__args outs, w;
    memset(&outs, 0, sizeof outs);
    memset(&w, 0, sizeof w);
    pd_tensor flat_out[64], flat_w[64], wrt[64], grads[64];
    int32_t pos[64][2], n_flat = 0, n_wrt = 0;
    bool have_grads = false;
    pd_status st = pd_tape_create(&tape);
    if (st == PD_OK)
        st = pd__args_outputs(op, &outs);
    if (st == PD_OK &&
        (st = pd_tape_run(tape, op, args->arg, args->n, attrs, n_attrs, outs.arg, outs.n)) != PD_OK)
        pd__fail_prefix("%s: '%s' fails on these inputs: ", WHO, pd_op_name(op));
    if (st == PD_OK)
        st = make_weights(&outs, r->seed, &w);
    for (int32_t i = 0; st == PD_OK && i < outs.n; ++i)
        for (int32_t k = 0; k < outs.arg[i].count && n_flat < 64; ++k)
            if (pd_defined(&w.arg[i].tensors[k])) {
                flat_out[n_flat] = outs.arg[i].tensors[k];
                flat_w[n_flat++] = w.arg[i].tensors[k];
            }
    if (st == PD_OK && n_flat == 0)
        st = pd__fail(PD_ERR_INVALID_ARGUMENT,
                      "%s: '%s' has no floating output on these inputs: nothing to differentiate",
                      WHO, pd_op_name(op));
    if (st == PD_OK) {
        n_wrt = pick_wrt(op, g, args, r, pos, 64);
        if (n_wrt == 0)
            st = pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: '%s' has no input to differentiate (%s)",
                          WHO, pd_op_name(op), r->skipped[0] ? r->skipped : "no floating input");
    }
    for (int32_t j = 0; j < n_wrt; ++j)
        wrt[j] = args->arg[pos[j][0]].tensors[pos[j][1]];
    if (st == PD_OK) {
        st = pd_tape_backward(tape, flat_out, flat_w, n_flat, wrt, n_wrt, grads);
        have_grads = st == PD_OK;
        if (st != PD_OK)
            pd__fail_prefix("%s: ", WHO);
    }
    pd_tape_destroy(tape); /* the gradients are taken; finite differences need no tape */
    for (int32_t j = 0; st == PD_OK && j < n_wrt; ++j) {
        pd_arg_info info;
        char name[64];
        pd_op_input_info(op, pos[j][0], &info);
        if (info.is_vector)
            snprintf(name, sizeof name, "%s[%d]", info.name, pos[j][1]);
        else
            snprintf(name, sizeof name, "%s", info.name);
        st = compare_tensor(op, args, attrs, n_attrs, &w, &args->arg[pos[j][0]].tensors[pos[j][1]],
                            &grads[j], name, r);
        r->inputs_checked++;
    }
    for (int32_t j = 0; have_grads && j < n_wrt; ++j)
        pd_tensor_release(&grads[j]);
    if (st == PD_OK && keep_outs && keep_w) {
        *keep_outs = outs;
        *keep_w = w;
    } else {
        pd__args_free(&outs);
        pd__args_free(&w);
    }
    return st;
}

/* A copy of src slot into dst slot i (zeros like `like` where src has no tensor). */
static pd_status copy_slot(pd__args *dst, int32_t i, const pd_arg *src, const pd_arg *like)
{
    pd_status st = pd__args_slot(dst, i, like->count);
    for (int32_t k = 0; st == PD_OK && k < like->count; ++k) {
        const pd_tensor *s = k < src->count ? &src->tensors[k] : NULL;
        const pd_tensor *l = &like->tensors[k];
        if (s && pd_defined(s))
            st = pd_tensor_cast(&dst->arg[i].tensors[k], s, s->dtype);
        else if (pd_defined(l))
            st = pd_tensor_zeros(&dst->arg[i].tensors[k], l->dtype, l->place, l->ndim, l->shape);
    }
    return st;
}

/* The grad op's inputs from the first-order run, by the tape's naming rule: forward inputs and
 * outputs by name, "<output>@GRAD" the weights W of that output. */
static pd_status grad_op_args(const pd_op *op, const pd_op *g, const pd__args *args,
                              const pd__args *outs, const pd__args *w, pd__args *ga)
{
    memset(ga, 0, sizeof *ga);
    ga->n = pd_op_input_count(g);
    pd_status st = PD_OK;
    for (int32_t i = 0; st == PD_OK && i < ga->n; ++i) {
        pd_arg_info info;
        st = pd_op_input_info(g, i, &info);
        if (st != PD_OK)
            break;
        int32_t p;
        pd_grad_source from = pd_op_grad_input_source(g, i, &p);
        if (from == PD_GRAD_FROM_OUTPUT_GRAD && p < outs->n)
            st = copy_slot(ga, i, &w->arg[p], &outs->arg[p]);
        else if (from == PD_GRAD_FROM_INPUT && p < args->n)
            st = copy_slot(ga, i, &args->arg[p], &args->arg[p]);
        else if (from == PD_GRAD_FROM_OUTPUT && p < outs->n)
            st = copy_slot(ga, i, &outs->arg[p], &outs->arg[p]);
        else
            st = pd__fail(PD_ERR_INVALID_ARGUMENT,
                          "%s: grad op '%s' declares input '%s', which is neither an input nor an "
                          "output of '%s' nor the gradient of an output",
                          WHO, pd_op_name(g), info.decl, pd_op_name(op));
    }
    return st;
}

/* The first floating dtype among the host's inputs, or PD_UNDEFINED. */
static pd_data_type first_floating(const pd_arg *inputs, int32_t n_inputs)
{
    for (int32_t i = 0; i < n_inputs; ++i)
        for (int32_t k = 0; inputs[i].tensors && k < inputs[i].count; ++k)
            if (pd__dtype_differentiable(inputs[i].tensors[k].dtype))
                return inputs[i].tensors[k].dtype;
    return PD_UNDEFINED;
}

/* Whether op runs with the floating inputs cast to float64. */
static bool runs_in_float64(const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                            const pd_attr *attrs, int32_t n_attrs)
{
    pd__args a, o;
    memset(&o, 0, sizeof o);
    bool ok = args_from_host(op, inputs, n_inputs, PD_FLOAT64, &a) == PD_OK &&
              pd__args_run(op, &a, attrs, n_attrs, &o) == PD_OK;
    pd__args_free(&a);
    pd__args_free(&o);
    return ok;
}

static double pick(double given, double f64, double f32, double half, pd_data_type t)
{
    if (given > 0)
        return given;
    return t == PD_FLOAT64 ? f64 : t == PD_FLOAT32 ? f32 : half;
}

pd_status pd_gradcheck(const pd_registry *reg, const char *name, const pd_arg *inputs,
                       int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs,
                       const pd_gradcheck_options *options, pd_gradcheck_report *report)
{
    if (!reg || !name || !report || n_inputs < 0 || (n_inputs > 0 && !inputs) || n_attrs < 0 ||
        (n_attrs > 0 && !attrs))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: needs a registry, an op name, inputs and a report (got %s%s%s%s)", WHO,
                        reg ? "" : "reg NULL ", name ? "" : "name NULL ",
                        report ? "" : "report NULL ",
                        (n_inputs > 0 && !inputs) || n_inputs < 0 ? "bad inputs" : "");
    pd_gradcheck_options opt;
    memset(&opt, 0, sizeof opt);
    if (options)
        memcpy(&opt, options,
               options->struct_size && options->struct_size < sizeof opt ? options->struct_size
                                                                         : sizeof opt);
    const pd_op *op = pd_op_find(reg, name);
    if (!op)
        return pd__fail_prefix("%s: ", WHO);
    const pd_op *g = pd_op_grad(op);
    if (!g)
        return pd__fail(PD_ERR_NOT_FOUND,
                        "%s: op '%s' has no grad op, so there is no gradient to check (define "
                        "one with PD_BUILD_GRAD_OP(%s, ...))",
                        WHO, name, name);
    pd_data_type dtype = first_floating(inputs, n_inputs);
    if (dtype == PD_UNDEFINED)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: op '%s' got no floating input (float16, bfloat16, float32, "
                        "float64): nothing to differentiate",
                        WHO, name);
    if (dtype != PD_FLOAT64 && !opt.keep_dtype &&
        runs_in_float64(op, inputs, n_inputs, attrs, n_attrs))
        dtype = PD_FLOAT64;

    pd_gradcheck_report rep;
    memset(&rep, 0, sizeof rep);
    gc_run r;
    memset(&r, 0, sizeof r);
    r.step = pick(opt.step, 1e-6, 1e-2, 1e-1, dtype);
    r.atol = pick(opt.atol, 1e-5, 1e-2, 1e-1, dtype);
    r.rtol = pick(opt.rtol, 1e-3, 1e-2, 1e-1, dtype);
    r.max_elements = opt.max_elements;
    r.seed = opt.seed;
    r.worst_ratio = -1;
    r.skipped = rep.skipped;
    r.skipped_size = sizeof rep.skipped;

    pd__args args, outs, w, ga;
    memset(&outs, 0, sizeof outs);
    memset(&w, 0, sizeof w);
    memset(&ga, 0, sizeof ga);
    pd_status st = args_from_host(op, inputs, n_inputs, dtype, &args);
    const pd_op *gg = opt.skip_double_grad ? NULL : pd_op_grad(g);
    if (st == PD_OK)
        st = check_op(op, &args, attrs, n_attrs, &r, gg ? &outs : NULL, gg ? &w : NULL);
    if (st == PD_OK) {
        rep.worst = r.worst;
        rep.passed = r.worst_ratio <= 1.0;
        rep.inputs_checked = r.inputs_checked;
    }
    if (st == PD_OK && gg) {
        pd_attr gattrs[PD_MAX_ATTRS];
        int32_t n_gattrs = 0;
        for (int32_t k = 0; k < pd_op_attr_count(g) && n_gattrs < PD_MAX_ATTRS; ++k)
            for (int32_t a = 0; a < n_attrs; ++a)
                if (attrs[a].name && strcmp(attrs[a].name, pd_op_attr_name(g, k)) == 0)
                    gattrs[n_gattrs++] = attrs[a];
        st = grad_op_args(op, g, &args, &outs, &w, &ga);
        r.worst_ratio = -1;
        r.inputs_checked = 0;
        memset(&r.worst, 0, sizeof r.worst);
        if (st == PD_OK)
            st = check_op(g, &ga, gattrs, n_gattrs, &r, NULL, NULL);
        if (st == PD_OK) {
            rep.double_grad_checked = true;
            rep.double_worst = r.worst;
            rep.double_grad_passed = r.worst_ratio <= 1.0;
            rep.passed = rep.passed && rep.double_grad_passed;
        }
    }
    pd__args_free(&args);
    pd__args_free(&outs);
    pd__args_free(&w);
    pd__args_free(&ga);
    if (st != PD_OK)
        return st;
    rep.dtype = dtype;
    rep.atol = r.atol;
    rep.rtol = r.rtol;
    rep.step = r.step;
    rep.elements = r.elements;
    *report = rep;
    return PD_OK;
}
