/*
 * executor_helpers.h - what the executor suites (executor_test.c, executor_inline_test.c,
 * executor_device_test.c) share: their registry of test ops, executors, the simulated
 * device's place, tensors, the calls they chain, and the end of a test.
 */
#ifndef PD_TEST_EXECUTOR_HELPERS_H
#define PD_TEST_EXECUTOR_HELPERS_H

#include "pd_sim_device.h"
#include "pdext_executor.h"
#include "runner_helpers.h"

/* static inline: a suite that uses some of them only builds without unused-function errors. */
static inline pd_registry *ops(void)
{
    const char *mods[] = {"ex_ops", "ds_sim_ops"};
    return rt_registry(mods, 2);
}

static inline pd_executor *executor(const pd_registry *reg, int32_t streams)
{
    pd_executor_options o = {sizeof o, streams, 0, -1, 0}; /* every call on the worker */
    pd_executor *ex = NULL;
    if (pd_executor_create(reg, &o, &ex) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_executor_create: %s", pd_last_error());
    return ex;
}

/* A float32 CPU vector of n values start, start + 1, ... */
static inline pd_tensor ramp(int64_t n, float start)
{
    pd_tensor t = rt_tensor(PD_FLOAT32, 1, &n, NULL);
    for (int64_t i = 0; i < n; ++i)
        ((float *)t.data)[i] = start + (float)i;
    return t;
}

/* A closed gate: an int32 scalar tensor holding 0 (ex_gated_add1 waits until it is 1). */
static inline pd_tensor gate(void)
{
    pd_tensor g = rt_tensor(PD_INT32, 0, NULL, NULL);
    __atomic_store_n((int32_t *)g.data, 0, __ATOMIC_RELEASE);
    return g;
}
static inline void gate_open(pd_tensor *g)
{
    __atomic_store_n((int32_t *)g->data, 1, __ATOMIC_RELEASE);
}

/* out = x * a + b on `stream`. */
static inline pd_status affine(pd_executor *ex, int32_t stream, pd_tensor *x, float a, float b,
                               pd_tensor *out)
{
    pd_arg in = pd_arg_of(x), o = pd_arg_of(out);
    pd_attr attrs[2] = {pd_attr_of_float("a", a), pd_attr_of_float("b", b)};
    return pd_run_async(ex, stream, "ex_affine", &in, 1, attrs, 2, &o, 1);
}

/* out = x + 1 once the gate g opens. */
static inline pd_status gated(pd_executor *ex, int32_t stream, pd_tensor *x, pd_tensor *g,
                              pd_tensor *out)
{
    pd_arg in[2] = {pd_arg_of(x), pd_arg_of(g)}, o = pd_arg_of(out);
    return pd_run_async(ex, stream, "ex_gated_add1", in, 2, NULL, 0, &o, 1);
}

static inline float at(const pd_tensor *t, int64_t i) { return ((const float *)t->data)[i]; }

/* The simulated device `id` (installed on first use). */
static inline pd_place sim(int32_t id)
{
    int32_t type = 0;
    if (pd_sim_device_install(&type) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_sim_device_install: %s", pd_last_error());
    return pd_place_make(type, id);
}

/* The end of a test: the tensors released, the executor destroyed (which must succeed) and
 * the registry. */
static inline void finish(pd_executor *ex, pd_registry *reg, pd_tensor *const *tensors, int n)
{
    for (int i = 0; i < n; ++i)
        pd_tensor_release(tensors[i]);
    PD_EXPECT_OK(pd_executor_destroy(ex));
    pd_registry_destroy(reg);
}

#endif
