/* tensor_util.h - helpers shared by the tensor suites (tensor_test.c, tensor_view_test.c,
 * storage_test.c): checking that a failed call wrote nothing, counting deleter calls, and a
 * small tensor with known values. */
#ifndef PD_TENSOR_UTIL_H
#define PD_TENSOR_UTIL_H

#include "pd_test.h"

#define CPU pd_place_cpu()

/* Fills a tensor struct with a pattern, so that a test can see that a failed call wrote
 * nothing to it. */
static inline void poison(pd_tensor *t) { memset(t, 0xab, sizeof *t); }
static inline bool untouched(const pd_tensor *t)
{
    const unsigned char *b = (const unsigned char *)t;
    for (size_t i = 0; i < sizeof *t; ++i)
        if (b[i] != 0xab)
            return false;
    return true;
}

/* A failing call returns `status` with `needle` in its message and leaves *out alone. */
#define EXPECT_FAILS_UNTOUCHED(out, expr, status, needle) \
    do {                                                  \
        poison(out);                                      \
        PD_EXPECT_ERROR(expr, status, needle);            \
        PD_EXPECT(untouched(out));                        \
    } while (0)

/* Counts deleter calls and checks their arguments. */
typedef struct deleter_log {
    int calls;
    void *data;
} deleter_log;

static inline void count_deleter(void *data, void *user)
{
    deleter_log *log = user;
    log->calls++;
    log->data = data;
}

/* A [4, 3] float32 tensor holding 0, 1, ..., 11. */
static inline pd_tensor iota43(void)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t shape[2] = {4, 3};
    if (pd_tensor_empty(&t, PD_FLOAT32, CPU, 2, shape) != PD_OK) {
        pd_test_fail(__FILE__, __LINE__, "pd_tensor_empty failed: %s", pd_last_error());
        return t;
    }
    for (int i = 0; i < 12; ++i)
        ((float *)t.data)[i] = (float)i;
    return t;
}

static const int64_t shape23[2] = {2, 3};

#endif /* PD_TENSOR_UTIL_H */
