/*
 * sim_convert.c - the simulated device's convert kernel (pd_device_table.convert): a strided
 * view written densely in C order, with a dtype conversion, run on the sim's host pages as a
 * job of the stream it was enqueued on. It does what a CUDA kernel of a real device would,
 * with pd_tensor_cast's rules, for a subset of dtype pairs (sim_convert.h); for the others
 * the table answers PD_ERR_UNAVAILABLE and the runtime stages through host memory, so both
 * paths run in the test suite.
 */
#include "sim_convert.h"

#include <stdlib.h>
#include <string.h>

static bool numeric(pd_data_type t)
{
    return t == PD_INT32 || t == PD_INT64 || t == PD_FLOAT32 || t == PD_FLOAT64;
}

bool sim_convert_supported(pd_data_type dst_dtype, pd_data_type src_dtype)
{
    return dst_dtype == src_dtype || (numeric(dst_dtype) && numeric(src_dtype));
}

void sim_convert_span(const sim_convert_job *j, int64_t *lo, int64_t *hi)
{
    int64_t size = (int64_t)pd_dtype_size(j->src_dtype), low = 0, high = 0;
    for (int32_t k = 0; k < j->ndim; ++k) {
        int64_t reach = (j->shape[k] - 1) * j->strides[k];
        if (reach < 0)
            low += reach;
        else
            high += reach;
    }
    *lo = low * size;
    *hi = (high + 1) * size;
}

/* Floating -> integer as pd_tensor_cast: toward zero, saturating, NaN giving 0. */
static int64_t to_int64(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775808.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static int32_t to_int32(double v)
{
    if (v != v)
        return 0;
    double x = v > (double)INT32_MIN ? v : (double)INT32_MIN;
    x = x < (double)INT32_MAX ? x : (double)INT32_MAX;
    return (int32_t)x;
}

/* One element from `in` (src_dtype) to `out` (dst_dtype), both in the numeric set. */
static void convert_one(void *out, pd_data_type dst, const void *in, pd_data_type src)
{
    bool integral = src == PD_INT32 || src == PD_INT64;
    int64_t i = 0;
    double f = 0;
    switch (src) {
    case PD_INT32: i = *(const int32_t *)in; break;
    case PD_INT64: i = *(const int64_t *)in; break;
    case PD_FLOAT32: f = *(const float *)in; break;
    default: f = *(const double *)in; break;
    }
    switch (dst) {
    case PD_INT32: *(int32_t *)out = integral ? (int32_t)i : to_int32(f); break;
    case PD_INT64: *(int64_t *)out = integral ? i : to_int64(f); break;
    case PD_FLOAT32: *(float *)out = integral ? (float)i : (float)f; break;
    default: *(double *)out = integral ? (double)i : f; break;
    }
}

void sim_convert_run(void *arg)
{
    sim_convert_job *j = arg;
    size_t in_size = pd_dtype_size(j->src_dtype), out_size = pd_dtype_size(j->dst_dtype);
    int64_t numel = 1, index[PD_MAX_DIMS] = {0};
    for (int32_t k = 0; k < j->ndim; ++k)
        numel *= j->shape[k];
    unsigned char *out = j->dst;
    for (int64_t e = 0; e < numel; ++e) {
        int64_t at = 0; /* elements from the first, by the strides */
        for (int32_t k = 0; k < j->ndim; ++k)
            at += index[k] * j->strides[k];
        const unsigned char *in = j->src + at * (int64_t)in_size;
        if (j->dst_dtype == j->src_dtype)
            memcpy(out, in, in_size);
        else
            convert_one(out, j->dst_dtype, in, j->src_dtype);
        out += out_size;
        for (int32_t k = j->ndim - 1; k >= 0 && ++index[k] == j->shape[k]; --k)
            index[k] = 0;
    }
    free(j);
}
