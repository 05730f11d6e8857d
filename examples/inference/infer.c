/*
 * infer.c - a deployable inference program: the ops custom_concat and custom_relu are linked
 * in as the static bundle libinferops.a (made by `pdext bundle`), libpdext is linked
 * statically, and nothing is compiled, built or cached at run time.
 *
 *     infer INPUT.npy OUTPUT.npy
 *
 * Pipeline: Y = relu(concat([X, X], axis=0)). X may have any shape (rank >= 1) and be
 * float32 or float64; Y has twice X's rows. See README.md for building and running it.
 */
#include "inferops.h" /* written by `pdext bundle` beside libinferops.a */
#include "pdext.h"
#include "pdext_npy.h"

#include <stdio.h>

/* Prints the failed step and the runtime's message; returns 1 (the exit status). The message
 * already starts with the op or function that failed ("custom_concat: ..."), so a step is
 * labelled by what the program was doing, never by that name again. */
static int failed(const char *step)
{
    fprintf(stderr, "infer: %s: %s\n", step, pd_last_error());
    return 1;
}

/* Y = relu(concat([X, X], axis=0)), each step one op of the bundle. */
static int run_pipeline(pd_registry *reg, const pd_tensor *x, pd_tensor *y)
{
    pd_tensor pair[2], joined = {0};
    pd_tensor_retain(&pair[0], x);
    pd_tensor_retain(&pair[1], x);
    pd_arg concat_in = pd_arg_named("X", pair, 2);
    pd_arg concat_out = pd_arg_named("Out", &joined, 1);
    pd_attr axis = pd_attr_of_int64("axis", 0);
    pd_status s = pd_run(reg, "custom_concat", &concat_in, 1, &axis, 1, &concat_out, 1);
    pd_tensor_release(&pair[0]);
    pd_tensor_release(&pair[1]);
    if (s != PD_OK)
        return failed("step 1 (concat)");

    pd_arg relu_in = pd_arg_named("X", &joined, 1);
    pd_arg relu_out = pd_arg_named("Out", y, 1);
    s = pd_run(reg, "custom_relu", &relu_in, 1, NULL, 0, &relu_out, 1);
    pd_tensor_release(&joined);
    return s == PD_OK ? 0 : failed("step 2 (relu)");
}

/* Prints the values of a small float tensor, one row per line (nothing for big ones). */
static void print_values(const pd_tensor *y)
{
    int64_t n = pd_numel(y), row = y->ndim > 1 ? y->shape[y->ndim - 1] : n;
    if (n > 64 || row == 0 || (y->dtype != PD_FLOAT32 && y->dtype != PD_FLOAT64))
        return;
    for (int64_t i = 0; i < n; ++i) {
        double v = y->dtype == PD_FLOAT32 ? ((const float *)y->data)[i]
                                          : ((const double *)y->data)[i];
        printf("%s%g%s", i % row ? " " : "  ", v, (i + 1) % row ? "" : "\n");
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: infer INPUT.npy OUTPUT.npy\n"
                        "  writes relu(concat([X, X], axis=0)) of the input array\n");
        return 2;
    }
    pd_registry *reg = NULL;
    pd_tensor x = {0}, y = {0};
    int rc = 1;
    if (pd_registry_create(&reg) != PD_OK)
        return failed("creating the registry");
    /* The one registration call: every op of the bundle, no files, no compiler. */
    if (pd_bundle_register_inferops(reg, NULL) != PD_OK)
        rc = failed("registering the bundle");
    else if (pd_npy_load(argv[1], &x) != PD_OK)
        rc = failed("reading the input");
    else if (run_pipeline(reg, &x, &y) == 0) {
        if (pd_npy_save(argv[2], &y) != PD_OK)
            rc = failed("writing the output");
        else {
            printf("%s: %s", argv[2], pd_dtype_name(y.dtype));
            for (int32_t i = 0; i < y.ndim; ++i)
                printf("%s%lld", i ? " x " : " [", (long long)y.shape[i]);
            printf("]\n");
            print_values(&y);
            rc = 0;
        }
    }
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
    return rc;
}
