/*
 * host.c - a host program that embeds libpdext: it loads the relu and concat example modules
 * (built with plain `cc -shared -fPIC`, no -lpdext), runs their forward and backward ops on
 * small inputs, checks every number against values it computes itself, and checks that bad
 * calls come back as errors with the right messages.
 *
 *     cc -O2 -o host host.c $(pkg-config --cflags --libs pdext)
 *     ./host ./relu.so ./concat.so
 *
 * It prints one line per check and exits 0 when all pass, 1 otherwise. tests/install_test.sh
 * builds it against the installed SDK (shared, static, and through CMake) and runs it.
 */
#include <pdext.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int g_failures;
static int g_checks;

/* --- Checking helpers ------------------------------------------------------------------------ */

static void check(bool ok, const char *fmt, ...) PD_PRINTF(2, 3);
static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s ", ok ? "ok  " : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    ++g_checks;
    if (!ok)
        ++g_failures;
}

/* A host API call that must succeed; on failure prints pd_last_error() and returns false. */
static bool ok_call(pd_status st, const char *what)
{
    if (st != PD_OK)
        check(false, "%s: %s (%s)", what, pd_last_error(), pd_status_name(st));
    return st == PD_OK;
}

/* A host API call that must fail with `want` and a message containing each of the strings
 * that follow (a NULL-terminated list). */
static void expect_error(pd_status st, pd_status want, const char *what, ...)
{
    const char *msg = st == PD_OK ? "" : pd_last_error();
    bool ok = st == want;
    va_list ap;
    va_start(ap, what);
    for (const char *piece; ok && (piece = va_arg(ap, const char *)) != NULL;)
        ok = strstr(msg, piece) != NULL;
    va_end(ap);
    if (ok)
        check(true, "%s: %s \"%s\"", what, pd_status_name(st), msg);
    else
        check(false, "%s: expected %s with a message naming the op and the argument, got %s \"%s\"",
              what, pd_status_name(want), pd_status_name(st), msg);
}

/* Compares a float32 tensor with the expected shape and values. */
static void check_tensor(const char *what, const pd_tensor *t, int32_t ndim, const int64_t *shape,
                         const float *want)
{
    bool ok = pd_defined(t) && pd_dtype(t) == PD_FLOAT32 && pd_ndim(t) == ndim;
    for (int32_t d = 0; ok && d < ndim; ++d)
        ok = pd_shape(t)[d] == shape[d];
    if (!ok) {
        check(false, "%s: wrong dtype or shape (%s, ndim %d)", what, pd_dtype_name(pd_dtype(t)),
              (int)pd_ndim(t));
        return;
    }
    const float *got = (const float *)pd_data(t);
    for (int64_t i = 0, n = pd_numel(t); i < n; ++i) {
        if (got[i] != want[i]) {
            check(false, "%s: element %lld is %g, expected %g", what, (long long)i, got[i],
                  want[i]);
            return;
        }
    }
    check(true, "%s: %lld values match", what, (long long)pd_numel(t));
}

/* A float32 CPU tensor holding a copy of `values`. */
static bool make_tensor(pd_tensor *out, int32_t ndim, const int64_t *shape, const float *values)
{
    if (!ok_call(pd_tensor_empty(out, PD_FLOAT32, pd_place_cpu(), ndim, shape), "pd_tensor_empty"))
        return false;
    memcpy(pd_data(out), values, pd_nbytes(out));
    return true;
}

/* --- relu ---------------------------------------------------------------------------------- */

static void test_relu(const pd_registry *reg)
{
    const int64_t shape[2] = {2, 3};
    const float x_values[6] = {-1.5f, 0.0f, 2.0f, 3.25f, -0.5f, 7.0f};
    const float dout_values[6] = {0.5f, 1.0f, -2.0f, 4.0f, 8.0f, -1.0f};
    float want_out[6], want_dx[6];
    for (int i = 0; i < 6; ++i) {
        want_out[i] = x_values[i] > 0 ? x_values[i] : 0.0f;
        want_dx[i] = want_out[i] > 0 ? dout_values[i] : 0.0f;
    }

    pd_tensor x = PD_TENSOR_UNDEFINED, dout = PD_TENSOR_UNDEFINED;
    pd_tensor out = PD_TENSOR_UNDEFINED, dx = PD_TENSOR_UNDEFINED;
    if (!make_tensor(&x, 2, shape, x_values) || !make_tensor(&dout, 2, shape, dout_values))
        goto done;

    /* Forward: one input by position, one output. */
    pd_arg in = pd_arg_of(&x);
    pd_arg res = pd_arg_of(&out);
    if (ok_call(pd_run(reg, "custom_relu", &in, 1, NULL, 0, &res, 1), "run custom_relu"))
        check_tensor("custom_relu forward", &out, 2, shape, want_out);

    /* Backward: the grad op's inputs bound by the names it declares. */
    pd_arg grad_in[3] = {pd_arg_named("X", &x, 1), pd_arg_named("Out", &out, 1),
                         pd_arg_named(PD_GRAD("Out"), &dout, 1)};
    pd_arg grad_res = pd_arg_named(PD_GRAD("X"), &dx, 1);
    if (ok_call(pd_run(reg, "custom_relu_grad", grad_in, 3, NULL, 0, &grad_res, 1),
                "run custom_relu_grad"))
        check_tensor("custom_relu backward", &dx, 2, shape, want_dx);

    /* Bad calls: two inputs for a one-input op; a dtype the kernel does not dispatch. */
    pd_tensor junk = PD_TENSOR_UNDEFINED;
    pd_arg two[2] = {pd_arg_of(&x), pd_arg_of(&x)};
    pd_arg junk_res = pd_arg_of(&junk);
    expect_error(pd_run(reg, "custom_relu", two, 2, NULL, 0, &junk_res, 1), PD_ERR_INVALID_ARGUMENT,
                 "custom_relu with 2 inputs", "custom_relu", "2 inputs", NULL);
    pd_tensor xi = PD_TENSOR_UNDEFINED;
    if (ok_call(pd_tensor_zeros(&xi, PD_INT32, pd_place_cpu(), 2, shape), "pd_tensor_zeros")) {
        pd_arg in_i = pd_arg_of(&xi);
        expect_error(pd_run(reg, "custom_relu", &in_i, 1, NULL, 0, &junk_res, 1), PD_ERR_OP_FAILED,
                     "custom_relu on int32", "custom_relu",
                     "is not implemented for data type `int32`", NULL);
    }
    check(!pd_defined(&junk), "failed calls write no output");
    pd_tensor_release(&xi);

done:
    pd_tensor_release(&x);
    pd_tensor_release(&dout);
    pd_tensor_release(&out);
    pd_tensor_release(&dx);
}

/* --- concat -------------------------------------------------------------------------------- */

/* out = concat(a, b) along `axis` of two 2-D row-major matrices, computed here by hand. */
static void concat2(const float *a, const int64_t *sa, const float *b, const int64_t *sb, int axis,
                    float *out)
{
    if (axis == 0) {
        memcpy(out, a, (size_t)(sa[0] * sa[1]) * sizeof(float));
        memcpy(out + sa[0] * sa[1], b, (size_t)(sb[0] * sb[1]) * sizeof(float));
        return;
    }
    int64_t cols = sa[1] + sb[1];
    for (int64_t r = 0; r < sa[0]; ++r) {
        for (int64_t c = 0; c < sa[1]; ++c)
            out[r * cols + c] = a[r * sa[1] + c];
        for (int64_t c = 0; c < sb[1]; ++c)
            out[r * cols + sa[1] + c] = b[r * sb[1] + c];
    }
}

/* concat of a and b along `axis` (given to the op as `axis_attr`, e.g. -1), then its grad. */
static void concat_case(const pd_registry *reg, const int64_t sa[2], const int64_t sb[2], int axis,
                        int64_t axis_attr)
{
    float av[12], bv[12], want[24], dout_values[24];
    for (int i = 0; i < 12; ++i) {
        av[i] = (float)(i + 1);
        bv[i] = -(float)(i + 1) * 0.5f;
    }
    int64_t so[2] = {sa[0], sa[1]};
    so[axis] += sb[axis];
    concat2(av, sa, bv, sb, axis, want);
    for (int64_t i = 0; i < so[0] * so[1]; ++i)
        dout_values[i] = (float)i * 0.25f - 1.0f;

    char what[96];
    pd_tensor xs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_tensor out = PD_TENSOR_UNDEFINED, dout = PD_TENSOR_UNDEFINED;
    pd_tensor dxs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    if (!make_tensor(&xs[0], 2, sa, av) || !make_tensor(&xs[1], 2, sb, bv) ||
        !make_tensor(&dout, 2, so, dout_values))
        goto done;

    /* Forward: a vector input of two tensors and an int64_t attr. */
    pd_arg in = pd_arg_named("X", xs, 2);
    pd_attr axis_value = pd_attr_of_int64("axis", axis_attr);
    pd_arg res = pd_arg_of(&out);
    snprintf(what, sizeof what, "custom_concat axis=%lld forward", (long long)axis_attr);
    if (ok_call(pd_run(reg, "custom_concat", &in, 1, &axis_value, 1, &res, 1), what))
        check_tensor(what, &out, 2, so, want);

    /* Backward: Out@GRAD is split back into one gradient per input. */
    pd_arg grad_in[2] = {pd_arg_named("X", xs, 2), pd_arg_named(PD_GRAD("Out"), &dout, 1)};
    pd_arg grad_res = pd_arg_named(PD_GRAD("X"), dxs, 2);
    snprintf(what, sizeof what, "custom_concat axis=%lld backward", (long long)axis_attr);
    if (ok_call(pd_run(reg, "custom_concat_grad", grad_in, 2, &axis_value, 1, &grad_res, 1),
                what)) {
        /* Splitting dout by hand: the inverse of concat2 over the same shapes. */
        float want_da[12], want_db[12];
        for (int64_t r = 0; r < so[0]; ++r) {
            for (int64_t c = 0; c < so[1]; ++c) {
                float v = dout_values[r * so[1] + c];
                if (axis == 0)
                    *(r < sa[0] ? &want_da[r * sa[1] + c] : &want_db[(r - sa[0]) * sb[1] + c]) = v;
                else
                    *(c < sa[1] ? &want_da[r * sa[1] + c] : &want_db[r * sb[1] + c - sa[1]]) = v;
            }
        }
        check(grad_res.count == 2, "%s: 2 gradients (got %d)", what, (int)grad_res.count);
        strcat(what, " X@GRAD[0]");
        check_tensor(what, &dxs[0], 2, sa, want_da);
        what[strlen(what) - 2] = '1';
        check_tensor(what, &dxs[1], 2, sb, want_db);
    }

done:
    for (int i = 0; i < 2; ++i) {
        pd_tensor_release(&xs[i]);
        pd_tensor_release(&dxs[i]);
    }
    pd_tensor_release(&out);
    pd_tensor_release(&dout);
}

static void test_concat(const pd_registry *reg)
{
    const int64_t a[2] = {2, 3}, rows[2] = {1, 3}, cols[2] = {2, 2};
    concat_case(reg, a, rows, 0, 0);
    concat_case(reg, a, cols, 1, 1);
    concat_case(reg, a, cols, 1, -1);

    /* Bad call: the axis attr left out. */
    pd_tensor x = PD_TENSOR_UNDEFINED, junk = PD_TENSOR_UNDEFINED;
    if (!ok_call(pd_tensor_ones(&x, PD_FLOAT32, pd_place_cpu(), 2, a), "pd_tensor_ones"))
        return;
    pd_arg in = pd_arg_named("X", &x, 1);
    pd_arg res = pd_arg_of(&junk);
    expect_error(pd_run(reg, "custom_concat", &in, 1, NULL, 0, &res, 1), PD_ERR_INVALID_ARGUMENT,
                 "custom_concat without its axis attr", "custom_concat", "'axis'", "missing", NULL);
    pd_tensor_release(&x);
}

/* --- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s RELU_MODULE.so CONCAT_MODULE.so\n", argv[0]);
        return 2;
    }
    printf("libpdext %s (headers %s)\n", pd_version(), PD_VERSION_STRING);

    pd_registry *reg = NULL;
    pd_module *relu = NULL, *concat = NULL;
    if (!ok_call(pd_registry_create(&reg), "pd_registry_create"))
        return 1;
    if (ok_call(pd_module_load(reg, argv[1], &relu), argv[1]) &&
        ok_call(pd_module_load(reg, argv[2], &concat), argv[2])) {
        check(pd_op_find(reg, "custom_relu") && pd_op_find(reg, "custom_relu_grad") &&
                  pd_op_find(reg, "custom_concat") && pd_op_find(reg, "custom_concat_grad"),
              "both modules registered their forward and grad ops (%d ops)",
              (int)pd_registry_op_count(reg));
        test_relu(reg);
        test_concat(reg);

        pd_tensor x = PD_TENSOR_UNDEFINED;
        pd_arg in = pd_arg_of(&x);
        expect_error(pd_run(reg, "custom_softmax", &in, 1, NULL, 0, NULL, 0), PD_ERR_NOT_FOUND,
                     "an unknown op", "custom_softmax", NULL);

        /* Unloading a module removes its ops. */
        ok_call(pd_module_unload(relu), "pd_module_unload");
        check(pd_op_find(reg, "custom_relu") == NULL && pd_op_find(reg, "custom_concat") != NULL,
              "unloading the relu module removes custom_relu and keeps custom_concat");
    }
    pd_registry_destroy(reg);

    printf("%d of %d checks passed\n", g_checks - g_failures, g_checks);
    return g_failures == 0 ? 0 : 1;
}
