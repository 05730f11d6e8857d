/*
 * runner_helpers.h - small helpers shared by the runner tests (runner_test.c, errors_test.c,
 * dispatch_test.c, examples_test.c, threads_test.c, run_into_test.c, infer_only_test.c):
 * registries with test modules loaded, tensors from values or over a host's memory, random
 * tensors, reading elements back.
 */
#ifndef RUNNER_HELPERS_H
#define RUNNER_HELPERS_H

#include "pd_test.h"

#include <stdio.h>
#include <string.h>

/* A new registry with the named test modules (<build>/tests/<name>.so) loaded; NULL (and a
 * recorded failure) if anything fails. */
static inline pd_registry *rt_registry(const char *const *modules, int n)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK) {
        pd_test_fail(__FILE__, __LINE__, "pd_registry_create: %s", pd_last_error());
        return NULL;
    }
    for (int i = 0; i < n; ++i) {
        char rel[256];
        snprintf(rel, sizeof rel, "%s.so", modules[i]);
        if (pd_module_load(reg, pd_test_path(rel), NULL) != PD_OK) {
            pd_test_fail(__FILE__, __LINE__, "loading %s: %s", rel, pd_last_error());
            pd_registry_destroy(reg);
            return NULL;
        }
    }
    return reg;
}

static inline pd_registry *rt_registry1(const char *module) { return rt_registry(&module, 1); }

/* Element i of a float32 / float64 / int32 / int64 tensor as a double. */
static inline double rt_at(const pd_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case PD_FLOAT32: return ((const float *)t->data)[i];
    case PD_FLOAT64: return ((const double *)t->data)[i];
    case PD_INT32: return ((const int32_t *)t->data)[i];
    case PD_INT64: return (double)((const int64_t *)t->data)[i];
    default: return 0.0 / 0.0;
    }
}

static inline void rt_set(pd_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case PD_FLOAT32: ((float *)t->data)[i] = (float)v; break;
    case PD_FLOAT64: ((double *)t->data)[i] = v; break;
    case PD_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    case PD_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
    default: break;
    }
}

/* A new CPU tensor holding `values` (numel of them; NULL: leave it uninitialized). */
static inline pd_tensor rt_tensor(pd_data_type dtype, int32_t ndim, const int64_t *shape,
                                  const double *values)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    if (pd_tensor_empty(&t, dtype, pd_place_cpu(), ndim, shape) != PD_OK) {
        pd_test_fail(__FILE__, __LINE__, "pd_tensor_empty: %s", pd_last_error());
        return t;
    }
    for (int64_t i = 0, n = pd_numel(&t); values && i < n; ++i)
        rt_set(&t, i, values[i]);
    return t;
}

/* A 1-d float64 tensor of n values. */
static inline pd_tensor rt_vec_f64(int64_t n, const double *values)
{
    return rt_tensor(PD_FLOAT64, 1, &n, values);
}

/* A tensor of uniform random values in [-1, 1) (the harness's fixed-seed generator). */
static inline pd_tensor rt_random(pd_data_type dtype, int32_t ndim, const int64_t *shape)
{
    pd_tensor t = rt_tensor(dtype, ndim, shape, NULL);
    for (int64_t i = 0, n = pd_numel(&t); i < n; ++i)
        rt_set(&t, i, pd_test_uniform(-1.0, 1.0));
    return t;
}

static inline void rt_release_all(pd_tensor *ts, int n)
{
    for (int i = 0; i < n; ++i)
        pd_tensor_release(&ts[i]);
}

/* A dense CPU tensor struct over buf (NULL: a tensor with a dtype and a shape but no data, what
 * a tracer holds), no storage: the host owns the memory. */
static inline pd_tensor rt_dense_over(void *buf, pd_data_type dtype, int32_t ndim,
                                      const int64_t *shape)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    t.data = buf;
    t.dtype = dtype;
    t.ndim = ndim;
    t.place = pd_place_cpu();
    t.layout = PD_LAYOUT_DENSE;
    int64_t s = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
        t.shape[d] = shape[d];
        t.strides[d] = s;
        s *= shape[d];
    }
    return t;
}

#endif /* RUNNER_HELPERS_H */
