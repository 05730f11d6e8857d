/*
 * prog_util.h - shared by the bundle test programs (prog_*.c): run a one-input float op on
 * {-2, -1, 0.5, 3} and compare with an expected function; report failures on stderr. These
 * programs are linked by bundle_test.c with various link flags, so they use nothing but
 * pdext.h, the bundles' generated headers and libc.
 */
#ifndef BUNDLE_PROG_UTIL_H
#define BUNDLE_PROG_UTIL_H

#include "pdext.h"

#include <stdio.h>
#include <string.h>

static int prog_failures = 0;

#define PROG_CHECK(cond, ...)                               \
    do {                                                    \
        if (!(cond)) {                                      \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                   \
            fputc('\n', stderr);                            \
            ++prog_failures;                                \
        }                                                   \
    } while (0)

/* Runs op `name` of reg on the fixed input and checks Out[i] == factor * x[i] + 0 (or x^2
 * when square). */
static void prog_check_op(pd_registry *reg, const char *name, float factor, int square)
{
    static const float xs[4] = {-2.0f, -1.0f, 0.5f, 3.0f};
    pd_tensor x, out;
    memset(&out, 0, sizeof out);
    int64_t shape[1] = {4};
    if (pd_tensor_from_buffer(&x, (void *)xs, PD_FLOAT32, pd_place_cpu(), 1, shape, NULL, NULL) !=
        PD_OK) {
        PROG_CHECK(0, "pd_tensor_from_buffer: %s", pd_last_error());
        return;
    }
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    pd_status s = pd_run(reg, name, &in, 1, NULL, 0, &outs, 1);
    PROG_CHECK(s == PD_OK, "%s: %s", name, pd_last_error());
    if (s == PD_OK) {
        const float *o = (const float *)out.data;
        for (int i = 0; i < 4; ++i) {
            float want = square ? xs[i] * xs[i] : factor * xs[i];
            PROG_CHECK(o[i] == want, "%s: Out[%d] = %g, expected %g", name, i, o[i], want);
        }
        pd_tensor_release(&out);
    }
    pd_tensor_release(&x);
}

static int prog_finish(const char *what)
{
    if (prog_failures == 0)
        printf("%s: ok\n", what);
    return prog_failures == 0 ? 0 : 1;
}

#endif
