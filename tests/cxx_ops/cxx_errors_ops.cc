/*
 * cxx_errors_ops.cc - ops of tests/cxx_errors_test.c: C++ kernels and infer functions that
 * hold RAII objects and then fail in every way C++ op code can (PD_CHECK from a nested
 * helper, std::exception, a thrown int, a table function's error, the dispatch default case,
 * a wrongly typed attr read), plus ones that pass their checks or catch errors themselves.
 *
 * Tracker objects count their destructor calls in `destroyed`, which the test reads through
 * the extern "C" getters at the end: that the count matches proves the destructors of the
 * frames between the failure and the runtime ran. Lines the test expects in a [file:line]
 * carry an "@line:<tag>" marker.
 */
#include "extension.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

static std::atomic<int> destroyed; /* Tracker destructors run (threads run ops too) */
static int reached_after;          /* code after a failing call ran (it must not) */
static std::string caught;         /* what() of the last error a kernel caught */
static int caught_line;            /* its line */
static int caught_status;          /* its status */

namespace {

struct Tracker {
    std::vector<double> heap = std::vector<double>(64, 1.0); /* leaks if ~Tracker is skipped */
    ~Tracker() { ++destroyed; }
};

const char long_text[] = "a string far too long for the small-string buffer of std::string";

/* Two frames below the kernel, each with objects to destroy. */
void check_negative(int64_t v)
{
    Tracker t;
    std::string s(long_text);
    PD_CHECK(v < 0, "value %lld must be negative (%s)", (long long)v, "nested"); /* @line:nested */
}

void helper(int64_t v)
{
    Tracker t;
    std::vector<std::string> names(3, long_text);
    check_negative(v);
    ++reached_after;
}

} // namespace

/* --- Failing kernels ------------------------------------------------------------------------ */

static void check_fails_kernel(pd_kernel_ctx *ctx)
{
    Tracker outer;
    std::vector<int> buf(1000, 7);
    helper(pd_numel(pd_input(ctx, 0)));
    ++reached_after;
}

static void at_throws_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    std::vector<int> three(3, 1);
    three.at((size_t)pd_numel(pd_input(ctx, 0))) = 2; /* std::out_of_range */
    ++reached_after;
}

static void runtime_error_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    (void)ctx;
    throw std::runtime_error("custom what() text");
}

static void throw_int_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    (void)ctx;
    throw 42;
}

static void throw_empty_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    (void)ctx;
    PD_THROW(); /* @line:throw_empty */
}

/* pd_output with an index the op does not declare: the table function fails. */
static void table_misuse_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    std::vector<std::string> names(4, long_text);
    pd_tensor *out = pd_output(ctx, 5);
    ++reached_after;
    (void)out;
}

/* The same misuse, caught: the call fails all the same. */
static void table_caught_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    try {
        pd_output(ctx, 5);
        ++reached_after;
    } catch (const pd::op_error &e) {
        caught = e.what();
        caught_line = e.file() ? e.line() : -1;
        caught_status = e.status();
    }
    pd_set_output(ctx, 0, pd_input(ctx, 0));
}

/* A table error with a status of its own: more scratch than can be allocated. */
static void table_oom_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    pd_scratch(ctx, SIZE_MAX);
    ++reached_after;
}

static void attr_type_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    (void)pd_attr_int(ctx, 0); /* declared double */
    ++reached_after;
}

static void dispatch_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "cxx_dispatch", {
        std::vector<data_t> tmp((const data_t *)pd_data(x),
                                (const data_t *)pd_data(x) + pd_numel(x));
        for (size_t i = 0; i < tmp.size(); ++i)
            ((data_t *)pd_data(out))[i] = tmp[i] + 1;
    });
}

/* --- Failing infer functions ----------------------------------------------------------------- */

static void infer_shape_throws(pd_kernel_ctx *ctx)
{
    Tracker t;
    std::string what(long_text);
    int ndim = pd_input(ctx, 0)->ndim;
    PD_CHECK(ndim == 1, "infer_shape wants rank 1, not %d", ndim); /* @line:infer */
}

static void infer_dtype_throws(pd_kernel_ctx *ctx)
{
    Tracker t;
    (void)ctx;
    throw std::length_error("infer_dtype length error");
}

static void never_kernel(pd_kernel_ctx *ctx)
{
    (void)ctx;
    ++reached_after;
}

/* --- Passing ones ------------------------------------------------------------------------- */

/* Out = 2 * X through a std::vector, with checks that hold. */
static void double_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(x != nullptr);
    PD_CHECK(pd_dtype(x) == PD_FLOAT64, "wants float64, not %s", pd_dtype_name(pd_dtype(x)));
    PD_CHECK(pd_input_count(ctx, 0) == 1);
    std::vector<double> v((const double *)pd_data(x), (const double *)pd_data(x) + pd_numel(x));
    for (double &e : v)
        e *= 2;
    pd_tensor *out = pd_output(ctx, 0);
    std::copy(v.begin(), v.end(), (double *)pd_data(out));
}

/* Catches its own PD_CHECK and recovers: author errors are ordinary exceptions. */
static void check_caught_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    try {
        helper(1);
    } catch (const pd::op_error &e) {
        caught = e.what();
        caught_line = e.line();
        caught_status = e.status();
    }
    pd_set_output(ctx, 0, pd_input(ctx, 0));
}

/* An absent optional input reads as NULL in C++ too (no error is pending behind it). */
static void optional_kernel(pd_kernel_ctx *ctx)
{
    Tracker t;
    PD_CHECK(pd_input(ctx, 1) == nullptr);
    PD_CHECK(pd_input_count(ctx, 1) == 0);
    pd_set_output(ctx, 0, pd_input(ctx, 0));
}

#define ONE_IN_ONE_OUT .inputs = {"X"}, .outputs = {"Out"}

PD_BUILD_OP(cxx_check_fails, ONE_IN_ONE_OUT, .kernel = check_fails_kernel);
PD_BUILD_OP(cxx_at_throws, ONE_IN_ONE_OUT, .kernel = at_throws_kernel);
PD_BUILD_OP(cxx_runtime_error, ONE_IN_ONE_OUT, .kernel = runtime_error_kernel);
PD_BUILD_OP(cxx_throw_int, ONE_IN_ONE_OUT, .kernel = throw_int_kernel);
PD_BUILD_OP(cxx_throw_empty, ONE_IN_ONE_OUT, .kernel = throw_empty_kernel);
PD_BUILD_OP(cxx_table_misuse, ONE_IN_ONE_OUT, .kernel = table_misuse_kernel);
PD_BUILD_OP(cxx_table_caught, ONE_IN_ONE_OUT, .kernel = table_caught_kernel);
PD_BUILD_OP(cxx_table_oom, ONE_IN_ONE_OUT, .kernel = table_oom_kernel);
PD_BUILD_OP(cxx_attr_type, ONE_IN_ONE_OUT, .attrs = {"factor: double"},
            .kernel = attr_type_kernel);
PD_BUILD_OP(cxx_dispatch, ONE_IN_ONE_OUT, .kernel = dispatch_kernel);
PD_BUILD_OP(cxx_infer_shape, ONE_IN_ONE_OUT, .kernel = never_kernel,
            .infer_shape = infer_shape_throws);
PD_BUILD_OP(cxx_infer_dtype, ONE_IN_ONE_OUT, .kernel = never_kernel,
            .infer_dtype = infer_dtype_throws);
PD_BUILD_OP(cxx_double, ONE_IN_ONE_OUT, .kernel = double_kernel);
PD_BUILD_OP(cxx_check_caught, ONE_IN_ONE_OUT, .kernel = check_caught_kernel);
PD_BUILD_OP(cxx_optional, .inputs = {"X", PD_OPTIONAL("Y")}, .outputs = {"Out"},
            .kernel = optional_kernel);

/* --- What the test reads ------------------------------------------------------------------ */

extern "C" __attribute__((visibility("default"))) int cxx_test_destroyed(void)
{
    return destroyed.load();
}
extern "C" __attribute__((visibility("default"))) int cxx_test_reached_after(void)
{
    return reached_after;
}
extern "C" __attribute__((visibility("default"))) const char *cxx_test_caught(void)
{
    return caught.c_str();
}
extern "C" __attribute__((visibility("default"))) int cxx_test_caught_line(void)
{
    return caught_line;
}
extern "C" __attribute__((visibility("default"))) int cxx_test_caught_status(void)
{
    return caught_status;
}
extern "C" __attribute__((visibility("default"))) void cxx_test_reset(void)
{
    destroyed = 0;
    reached_after = 0;
    caught.clear();
    caught_line = 0;
    caught_status = 0;
}
