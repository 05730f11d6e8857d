/*
 * headers_cxx.cc - build-time check that the public headers (extension.h, pdext.h, pdext_jit.h)
 * compile warning-free as C++20 with g++ -Wall -Wextra -Werror -pedantic. Built by
 * tests/headers.cmake as part of the default build, never run: a header regression breaks `ninja`.
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

#include <complex>
#include <cstdlib>
#include <type_traits>

/* The complex structs share std::complex's layout, so C++ hosts may pass those buffers. */
static_assert(sizeof(pd_complex64) == sizeof(std::complex<float>), "complex64 layout");
static_assert(sizeof(pd_complex128) == sizeof(std::complex<double>), "complex128 layout");

static void scale_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(x != nullptr);
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
static_assert(std::is_same<PD_ACC_TYPE(pd_float16), float>::value, "half acc");
static_assert(std::is_same<PD_ACC_TYPE(pd_bfloat16), float>::value, "bf16 acc");
static_assert(std::is_same<PD_ACC_TYPE(double), double>::value, "double acc");
static_assert(std::is_same<PD_ACC_TYPE(int8_t), int8_t>::value, "int8 acc");

static void mean_chunk(void *arg, int64_t begin, int64_t end)
{
    const pd_tensor *x = static_cast<const pd_tensor *>(arg);
    PD_CHECK(begin <= end && pd_numel(x) >= end);
}

/* pd_parallel_for with a function pointer and with a lambda whose dispatch body computes in
 * PD_ACC_TYPE. */
static void mean_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    float *partial = static_cast<float *>(pd_scratch(ctx, sizeof(float) * (size_t)pd_numel(x)));
    pd_parallel_for(ctx, pd_numel(x), 1024, mean_chunk, const_cast<pd_tensor *>(x));
    pd_parallel_for(ctx, pd_numel(x), 1024, [&](int64_t begin, int64_t end) {
        PD_DISPATCH_FLOATING_AND_HALF_TYPES(pd_dtype(x), "headers_mean", {
            const data_t *in = static_cast<const data_t *>(pd_data(x));
            PD_ACC_TYPE(data_t) acc = 0;
            for (int64_t i = begin; i < end; ++i)
                acc += pd_to_acc(in[i]);
            partial[begin] = pd_to_float(pd_from_acc(data_t, acc));
            PD_CHECK(pd_to_float(pd_from_float(data_t, 1.0)) == 1.0f);
        });
    });
    PD_CHECK(PD_API_HAS(pd__api, parallel_for));
}

PD_BUILD_OP(headers_cxx_mean,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = mean_kernel);

static void scale_grad_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *dout = pd_input_named(ctx, PD_GRAD("Out"));
    pd_set_output(ctx, 0, pd_cast(ctx, dout, pd_dtype(dout)));
}

PD_BUILD_OP(headers_cxx_scale,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"factor: double"},
    .kernel = scale_kernel);

PD_BUILD_GRAD_OP(headers_cxx_scale,
    .inputs = {PD_GRAD("Out")},
    .outputs = {PD_GRAD("X")},
    .attrs = {"factor: double"},
    .kernel = scale_grad_kernel);

/* ABI 2.0: an op that accepts strided inputs (the new fields last, as C++20 requires), views
 * and custom places in op code. */
static void strided_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_stride(x, -1) != 0 || !pd_is_contiguous(x));
    pd_tensor *t = pd_transpose(ctx, x, 0, 1);
    pd_set_output(ctx, 0, pd_contiguous(ctx, t));
    pd_place p = pd_place_custom("npu", 0);
    PD_CHECK(!pd_place_is_custom(p) || pd_place_type_name(&p) != nullptr);
}

PD_BUILD_OP(headers_cxx_strided,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = strided_kernel,
    .flags = PD_OP_STRIDED_INPUTS,
    .strided_inputs = PD_INPUT_BIT(0));

/* Host side: a function with external linkage, so that nothing here is unused. */
pd_status headers_cxx_host();
pd_status headers_cxx_host()
{
    pd_registry *reg = nullptr;
    pd_module *linked = nullptr;
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
        st = pd_run(reg, "headers_cxx_scale", &in, 1, &factor, 1, &result, 1);
    pd_jit_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.name = "headers";
    char *dir = pd_jit_build_dir(&opts);
    std::free(dir);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
    return st;
}
