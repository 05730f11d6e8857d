/*
 * args.c - the arguments gradcheck (gradcheck.c) and the op check (check.c) run ops on: owned
 * argument slots by declared position, fresh outputs, and the one filler of random tensors
 * (gradcheck's weights, check's inputs) with its generator.
 */
#include "autograd/autograd.h"

#include <stdlib.h>

void pd__args_free(pd__args *a)
{
    for (int32_t i = 0; i < a->n; ++i) {
        for (int32_t k = 0; k < a->arg[i].count; ++k)
            pd_tensor_release(&a->arg[i].tensors[k]);
        free(a->arg[i].tensors);
    }
    memset(a, 0, sizeof *a);
}

pd_status pd__args_slot(pd__args *a, int32_t i, int32_t count)
{
    a->arg[i].name = NULL;
    a->arg[i].count = count;
    a->arg[i].tensors = count > 0 ? calloc((size_t)count, sizeof(pd_tensor)) : NULL;
    if (count > 0 && !a->arg[i].tensors) {
        a->arg[i].count = 0;
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "out of memory for %d tensors of an op call",
                        (int)count);
    }
    return PD_OK;
}

pd_status pd__args_outputs(const pd_op *op, pd__args *o)
{
    memset(o, 0, sizeof *o);
    o->n = pd_op_output_count(op);
    pd_status st = PD_OK;
    for (int32_t i = 0; st == PD_OK && i < o->n; ++i) {
        pd_arg_info info;
        st = pd_op_output_info(op, i, &info);
        if (st == PD_OK)
            st = pd__args_slot(o, i, info.is_vector ? 0 : 1);
    }
    return st;
}

pd_status pd__args_run(const pd_op *op, pd__args *in, const pd_attr *attrs, int32_t n_attrs,
                       pd__args *out)
{
    pd_status st = pd__args_outputs(op, out);
    if (st == PD_OK)
        st = pd_op_run(op, in->arg, in->n, attrs, n_attrs, out->arg, out->n);
    return st;
}

/* A 64-bit LCG's top 53 bits: plenty for test values, and the same on every platform. */
static uint64_t lcg_next(uint64_t *s)
{
    if (*s == 0)
        *s = 0x9e3779b97f4a7c15ull;
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static double uniform(uint64_t *s) { return (double)lcg_next(s) / (double)(1ull << 53); }

static double value_of(pd__random_kind kind, pd_data_type t, uint64_t *s)
{
    if (kind == PD__RANDOM_WEIGHTS)
        return uniform(s) * 2.0 - 1.0;
    if (pd_dtype_is_integral(t))
        return (double)(int)(uniform(s) * 3);
    double v = 0.1 + 0.9 * uniform(s);
    return uniform(s) < 0.5 ? -v : v;
}

pd_status pd__random_tensor(pd_data_type dtype, int32_t ndim, const int64_t *shape,
                            pd__random_kind kind, uint64_t *state, pd_tensor *out)
{
    /* drawn in float64 and cast once: every dtype (integers included) from one filler */
    pd_tensor f = PD_TENSOR_UNDEFINED;
    pd_status st = pd_tensor_empty(&f, PD_FLOAT64, pd_place_cpu(), ndim, shape);
    for (int64_t e = 0, n = st == PD_OK ? pd_numel(&f) : 0; e < n; ++e)
        ((double *)f.data)[e] = value_of(kind, dtype, state);
    if (st == PD_OK)
        st = pd_tensor_cast(out, &f, dtype);
    pd_tensor_release(&f);
    return st;
}
