/*
 * headers_c.c - build-time check that the public headers (extension.h, pdext.h, pdext_jit.h)
 * compile warning-free as C11 with -Wall -Wextra -Werror -pedantic. Built by tests/headers.cmake
 * as part of the default build, never run: a header regression breaks `ninja`.
 *
 * It uses what op authors and hosts use most: PD_BUILD_OP / PD_BUILD_GRAD_OP, PD_CHECK with and
 * without a message, PD_THROW() with and without one, dispatch macros, PD_ACC_TYPE and the
 * generic conversions, pd_parallel_for, PD_API_HAS, and the host API.
 */
#include "extension.h"
#include "pdext.h"
#include "pdext_check.h"
#include "pdext_executor.h"
#include "pdext_gradcheck.h"
#include "pdext_jit.h"
#include "pdext_tape.h"

#include <stdlib.h>

static void scale_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(x != NULL);
    PD_CHECK(pd_is_cpu(x), "x must be a CPU tensor, not %s", pd_place_type_name(&x->place));
    if (pd_ndim(x) > 4)
        PD_THROW();
    if (pd_numel(x) < 0)
        PD_THROW("x has %lld elements", (long long)pd_numel(x));
    double factor = pd_attr_double(ctx, 0);
    pd_tensor *out = pd_empty_like(ctx, x);
    PD_DISPATCH_FLOATING_AND_INTEGRAL_TYPES(pd_dtype(x), "headers_scale", {
        const data_t *in = (const data_t *)pd_data(x);
        data_t *o = (data_t *)pd_data(out);
        for (int64_t i = 0, n = pd_numel(x); i < n; ++i)
            o[i] = (data_t)(in[i] * factor);
    });
    pd_set_output(ctx, 0, out);
}

/* PD_ACC_TYPE is float for the halves and the type itself otherwise. */
_Static_assert(_Generic((PD_ACC_TYPE(pd_float16) *)0, float * : 1, default : 0), "half acc");
_Static_assert(_Generic((PD_ACC_TYPE(pd_bfloat16) *)0, float * : 1, default : 0), "bf16 acc");
_Static_assert(_Generic((PD_ACC_TYPE(double) *)0, double * : 1, default : 0), "double acc");
_Static_assert(_Generic((PD_ACC_TYPE(int8_t) *)0, int8_t * : 1, default : 0), "int8 acc");

typedef struct mean_args {
    const pd_tensor *x;
    float *partial;
} mean_args;

/* A pd_parallel_for body whose dispatch body computes in PD_ACC_TYPE. */
static void mean_chunk(void *arg, int64_t begin, int64_t end)
{
    const mean_args *a = (const mean_args *)arg;
    PD_DISPATCH_FLOATING_AND_HALF_TYPES(pd_dtype(a->x), "headers_mean", {
        const data_t *in = (const data_t *)pd_data(a->x);
        PD_ACC_TYPE(data_t) acc = 0;
        for (int64_t i = begin; i < end; ++i)
            acc += pd_to_acc(in[i]);
        a->partial[begin] = pd_to_float(pd_from_acc(data_t, acc));
        PD_CHECK(pd_to_float(pd_from_float(data_t, 1.0f)) == 1.0f);
    });
}

static void mean_kernel(pd_kernel_ctx *ctx)
{
    mean_args a = {pd_input(ctx, 0), NULL};
    a.partial = (float *)pd_scratch(ctx, sizeof(float) * (size_t)pd_numel(a.x));
    pd_parallel_for(ctx, pd_numel(a.x), 1024, mean_chunk, &a);
    PD_CHECK(PD_API_HAS(pd__api, parallel_for));
    PD_CHECK(pd_api_ext_find(pd__api, 1) == NULL);
}

PD_BUILD_OP(headers_c_mean,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = mean_kernel);

static void scale_grad_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *dout = pd_input_named(ctx, PD_GRAD("Out"));
    pd_set_output(ctx, 0, pd_cast(ctx, dout, pd_dtype(dout)));
}

PD_BUILD_OP(headers_c_scale,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"factor: double"},
    .kernel = scale_kernel);

PD_BUILD_GRAD_OP(headers_c_scale,
    .inputs = {PD_GRAD("Out")},
    .outputs = {PD_GRAD("X")},
    .attrs = {"factor: double"},
    .kernel = scale_grad_kernel);

/* Host side: a function with external linkage, so that nothing here is unused. */
pd_status headers_c_host(void);
pd_status headers_c_host(void)
{
    pd_registry *reg = NULL;
    pd_module *linked = NULL;
    pd_status st = pd_registry_create(&reg);
    if (st == PD_OK)
        st = pd_register_linked_ops(reg, &linked);
    pd_tensor x = PD_TENSOR_UNDEFINED, out = PD_TENSOR_UNDEFINED;
    const int64_t shape[2] = {2, 3};
    if (st == PD_OK)
        st = pd_tensor_full(&x, PD_FLOAT32, pd_place_cpu(), 2, shape, 1.5);
    pd_attr factor = pd_attr_of_double("factor", 2.0);
    pd_arg in = pd_arg_of(&x), result = pd_arg_of(&out);
    if (st == PD_OK)
        st = pd_run(reg, "headers_c_scale", &in, 1, &factor, 1, &result, 1);
    pd_jit_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.name = "headers";
    char *dir = pd_jit_build_dir(&opts);
    free(dir);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    return st;
}
