/*
 * errors_test.c - errors that end an op call: PD_CHECK / PD_THROW messages (with and without
 * a message, printf formatting, [file:line]), throws from deep helpers and from infer
 * functions, every misuse of a table function, and what the host sees afterwards: a status, a
 * message naming the op, nothing written, nothing leaked (the sanitizer run checks), and a
 * process that goes on. The ops are in tests/ops/errors_ops.c.
 */
#include "runner_helpers.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* "[errors_ops.c:<line>]" for the line of errors_ops.c marked "@line:<tag>". */
static const char *site(const char *tag)
{
    static char buf[8][64];
    static int next;
    char marker[64], line[512];
    snprintf(marker, sizeof marker, "@line:%s */", tag);
    FILE *f = fopen(PD_TEST_SOURCE_DIR "/tests/ops/errors_ops.c", "r");
    if (f == NULL)
        return "(errors_ops.c not found)";
    char *out = buf[next++ % 8];
    snprintf(out, 64, "(no line tagged %s)", tag);
    for (int n = 1; fgets(line, sizeof line, f); ++n)
        if (strstr(line, marker)) {
            snprintf(out, 64, "[errors_ops.c:%d]", n);
            break;
        }
    fclose(f);
    return out;
}

static pd_registry *errors_registry(void) { return rt_registry1("rt_errors_ops"); }

/* Runs `op` on a [2, 3] float32 input with the given attrs; the output slot must stay
 * untouched on failure. */
static pd_status run_op(pd_registry *reg, const char *op, const pd_attr *attrs, int32_t n_attrs)
{
    pd_tensor x = rt_random(PD_FLOAT32, 2, (int64_t[]){2, 3});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    pd_status s = pd_run(reg, op, &in, 1, attrs, n_attrs, &o, 1);
    if (s != PD_OK) {
        PD_EXPECT(!pd_defined(&out));
        PD_EXPECT_EQ(o.count, 1);
    }
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 1); /* the call kept no reference to its input */
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    return s;
}

static void expect_message(const char *op, const char *text, const char *tag)
{
    char want[512];
    snprintf(want, sizeof want, "%s: %s %s", op, text, site(tag));
    PD_EXPECT_STREQ(pd_last_error(), want);
}

PD_TEST(Errors, CheckWithoutMessageNamesTheCondition)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(run_op(reg, "err_check_nomsg", NULL, 0), PD_ERR_OP_FAILED);
    expect_message("err_check_nomsg", "Expected pd_numel(x) < 0, but it is not satisfied.",
                   "check_nomsg");
    pd_registry_destroy(reg);
}

PD_TEST(Errors, CheckWithMessageIsPrintfFormatted)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(run_op(reg, "err_check_msg", NULL, 0), PD_ERR_OP_FAILED);
    expect_message("err_check_msg", "x has 2 dims, wanted three (12.5%)", "check_msg");
    pd_registry_destroy(reg);
}

PD_TEST(Errors, ThrowWithoutMessageSaysAnErrorOccurred)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(run_op(reg, "err_throw_empty", NULL, 0), PD_ERR_OP_FAILED);
    expect_message("err_throw_empty", "An error occurred.", "throw_empty");
    pd_registry_destroy(reg);
}

PD_TEST(Errors, ThrowDropsLeadingWhiteSpace)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(run_op(reg, "err_throw_spaces", NULL, 0), PD_ERR_OP_FAILED);
    expect_message("err_throw_spaces", "leading white space is dropped", "throw_spaces");
    pd_registry_destroy(reg);
}

PD_TEST(Errors, ThrowFromADeepHelperEndsTheCallFreesEverythingAndTheProcessGoesOn)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    /* Each failed call allocates outputs, tensors past the inline ones, views and scratch at
     * six levels; the sanitizer run reports anything not freed. */
    for (int i = 0; i < 50; ++i) {
        PD_ASSERT_EQ(run_op(reg, "err_deep", NULL, 0), PD_ERR_OP_FAILED);
        expect_message("err_deep", "deep failure at depth 0", "deep");
    }
    pd_registry_destroy(reg);
    /* The thread is back to normal: a good run after the failures. */
    pd_registry *runner = rt_registry1("rt_runner_ops");
    PD_ASSERT(runner != NULL);
    pd_tensor x = rt_vec_f64(1, (double[]){4});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    PD_EXPECT_OK(pd_run(runner, "rt_square", &in, 1, NULL, 0, &o, 1));
    PD_EXPECT_NEAR(rt_at(&out, 0), 16, 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(runner);
}

PD_TEST(Errors, ThrowFromInferShapeEndsTheCall)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(run_op(reg, "err_infer_shape", NULL, 0), PD_ERR_OP_FAILED);
    expect_message("err_infer_shape", "infer_shape refuses rank 2", "infer_shape");
    pd_registry_destroy(reg);
}

PD_TEST(Errors, ThrowFromInferDtypeEndsTheCall)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(run_op(reg, "err_infer_dtype", NULL, 0), PD_ERR_OP_FAILED);
    expect_message("err_infer_dtype", "infer_dtype refuses float32", "infer_dtype");
    pd_registry_destroy(reg);
}

PD_TEST(Errors, InferFunctionsCannotMakeOutputs)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(run_op(reg, "err_output_in_infer", NULL, 0), PD_ERR_OP_FAILED);
    PD_EXPECT_CONTAINS(pd_last_error(), "err_output_in_infer: pd_output: output 'Out' is made by "
                                        "the kernel; infer functions may only set its count, "
                                        "shape and dtype");
    PD_EXPECT_EQ(run_op(reg, "err_set_output_in_infer", NULL, 0), PD_ERR_OP_FAILED);
    PD_EXPECT_CONTAINS(pd_last_error(), "err_set_output_in_infer: pd_set_output: output 'Out' is "
                                        "set by the kernel");
    pd_registry_destroy(reg);
}

/* --- Misused table functions --------------------------------------------------------------------
 */

typedef struct misuse_case {
    int32_t what;
    pd_status status;
    const char *message; /* substring of the message after "err_misuse: " */
} misuse_case;

static const misuse_case misuses[] = {
    {0, PD_ERR_OP_FAILED, "pd_input: input index 5 is out of range; the op declares 1 input"},
    {1, PD_ERR_OP_FAILED, "pd_output: output index 3 is out of range; the op declares 1 output"},
    {2, PD_ERR_OP_FAILED, "pd_attr: attr index 9 is out of range; the op declares 2 attrs"},
    {3, PD_ERR_OP_FAILED, "pd_empty: shape[1] is -3"},
    {4, PD_ERR_OUT_OF_MEMORY,
     "pd_scratch: 18446744073709551607 bytes is more than can be "
     "allocated"},
    {5, PD_ERR_OP_FAILED, "attr 'n' is declared int64_t, but was read as int"},
    {6, PD_ERR_OP_FAILED, "pd_set_output: the tensor given for output 'Out' item 0 is undefined"},
    {7, PD_ERR_OP_FAILED, "pd_output: item 4 of output 'Out' is out of range; it has 1 item"},
    {8, PD_ERR_OP_FAILED, "pd_input_named: the op has no input named 'Nope' (declared: X)"},
    {9, PD_ERR_OP_FAILED,
     "pd_set_output_count: output 'Out' is not a vector output; its count is "
     "1, not 2"},
    {10, PD_ERR_UNAVAILABLE, "pd_empty: place gpu:0 needs CUDA"},
    {11, PD_ERR_OP_FAILED, "pd_tensor_full: dtype 99"},
    {12, PD_ERR_OP_FAILED, "pd_tensor_slice: rows [0, 1000) are out of range"},
    {13, PD_ERR_OP_FAILED, "pd_tensor_reshape: the new shape has 7 elements"},
    {14, PD_ERR_OP_FAILED, "pd_attr_index: the op has no attr named 'missing' (declared: what, n)"},
    {15, PD_ERR_OP_FAILED, "pd_set_output_shape: output 'Out' dim 0 is -1; dims must be >= 0"},
    {16, PD_ERR_OP_FAILED, "pd_set_output_dtype: dtype 0 for output 'Out' is not a data type"},
    {17, PD_ERR_OP_FAILED, "pd_input_count: input index -1 is out of range"},
    {18, PD_ERR_OP_FAILED, "pd_empty: ndim is 9"},
};

PD_TEST(Errors, MisusedTableFunctionsEndTheCallNamingWhatWasWrong)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    for (size_t i = 0; i < sizeof misuses / sizeof misuses[0]; ++i) {
        const misuse_case *c = &misuses[i];
        pd_attr attrs[2] = {pd_attr_of_int("what", c->what), pd_attr_of_int64("n", 1)};
        pd_status s = run_op(reg, "err_misuse", attrs, 2);
        PD_EXPECT(s == c->status);
        char want[512];
        snprintf(want, sizeof want, "err_misuse: %s", c->message);
        PD_EXPECT_CONTAINS(pd_last_error(), want);
        if (s != c->status || !pd_test_contains(pd_last_error(), want))
            pd_test_fail(__FILE__, __LINE__, "case %d: %s: %s", (int)c->what, pd_status_name(s),
                         pd_last_error());
    }
    /* The default case misuses nothing. */
    pd_attr fine[2] = {pd_attr_of_int("what", 100), pd_attr_of_int64("n", 1)};
    PD_EXPECT_OK(run_op(reg, "err_misuse", fine, 2));
    pd_registry_destroy(reg);
}

PD_TEST(Errors, TableFunctionErrorsCarryNoSourceLocation)
{
    pd_registry *reg = errors_registry();
    PD_ASSERT(reg != NULL);
    pd_attr attrs[2] = {pd_attr_of_int("what", 0), pd_attr_of_int64("n", 1)};
    PD_EXPECT_EQ(run_op(reg, "err_misuse", attrs, 2), PD_ERR_OP_FAILED);
    PD_EXPECT_STREQ(pd_last_error(),
                    "err_misuse: pd_input: input index 5 is out of range; the op declares 1 input");
    pd_registry_destroy(reg);
}

/* --- Outside any op call ------------------------------------------------------------------------
 */

static void throw_outside(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pd_runtime_api()->throw_error("/some/dir/host.c", 42, fmt, ap);
}

PD_TEST(Errors, ThrowOutsideAnOpCallPrintsAndAborts)
{
    int fds[2];
    PD_ASSERT(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    PD_ASSERT(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        throw_outside(" %s %d", "no frame", 7);
        _exit(0); /* not reached */
    }
    close(fds[1]);
    char buf[4096];
    size_t used = 0;
    ssize_t n;
    while (used + 1 < sizeof buf && (n = read(fds[0], buf + used, sizeof buf - 1 - used)) > 0)
        used += (size_t)n;
    buf[used] = '\0';
    close(fds[0]);
    int status = 0;
    PD_ASSERT(waitpid(pid, &status, 0) == pid);
    PD_EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    const char *text = buf;
    PD_EXPECT_CONTAINS(text, "outside any op call");
    PD_EXPECT_CONTAINS(text, "no frame 7 [host.c:42]");
}
