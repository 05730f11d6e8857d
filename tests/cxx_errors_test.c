/*
 * cxx_errors_test.c - errors in C++ op code: PD_CHECK / PD_THROW, failing table functions and
 * any C++ exception end the call with a message naming the op, and the destructors of the C++
 * frames between the failure and the runtime run (tracked by the module's destructor counter;
 * the sanitizer run checks that nothing leaks). Also: checks that pass, errors the kernel
 * catches itself, the dispatch default case, and modules that mix C and C++ units. The ops
 * are in tests/cxx_ops/.
 */
#include "runner_helpers.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

/* "[<file>:<line>]" for the line of tests/cxx_ops/<file> marked "@line:<tag>". */
static const char *site(const char *file, const char *tag)
{
    static char buf[8][96];
    static int next;
    char path[512], marker[64], line[512];
    snprintf(path, sizeof path, "%s/tests/cxx_ops/%s", PD_TEST_SOURCE_DIR, file);
    snprintf(marker, sizeof marker, "@line:%s */", tag);
    char *out = buf[next++ % 8];
    snprintf(out, 96, "(no line tagged %s in %s)", tag, file);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return out;
    for (int n = 1; fgets(line, sizeof line, f); ++n)
        if (strstr(line, marker)) {
            snprintf(out, 96, "[%s:%d]", file, n);
            break;
        }
    fclose(f);
    return out;
}

/* The C++ module loaded in a registry, with its counters. */
typedef struct cx_module {
    pd_registry *reg;
    void *handle; /* our own reference to the library the registry loaded */
    int (*destroyed)(void);
    int (*reached_after)(void);
    const char *(*caught)(void);
    int (*caught_line)(void);
    int (*caught_status)(void);
} cx_module;

static bool cx_open(cx_module *m)
{
    memset(m, 0, sizeof *m);
    m->reg = rt_registry1("cx_errors_ops");
    if (m->reg == NULL)
        return false;
    m->handle = dlopen(pd_test_path("cx_errors_ops.so"), RTLD_NOW | RTLD_NOLOAD);
    if (m->handle == NULL) {
        pd_test_fail(__FILE__, __LINE__, "dlopen: %s", dlerror());
        return false;
    }
    *(void **)&m->destroyed = dlsym(m->handle, "cxx_test_destroyed");
    *(void **)&m->reached_after = dlsym(m->handle, "cxx_test_reached_after");
    *(void **)&m->caught = dlsym(m->handle, "cxx_test_caught");
    *(void **)&m->caught_line = dlsym(m->handle, "cxx_test_caught_line");
    *(void **)&m->caught_status = dlsym(m->handle, "cxx_test_caught_status");
    void (*reset)(void);
    *(void **)&reset = dlsym(m->handle, "cxx_test_reset");
    if (!m->destroyed || !m->reached_after || !m->caught || !m->caught_line || !m->caught_status ||
        !reset) {
        pd_test_fail(__FILE__, __LINE__, "a getter of cx_errors_ops.so is missing");
        return false;
    }
    reset();
    return true;
}

static void cx_close(cx_module *m)
{
    if (m->handle)
        dlclose(m->handle);
    pd_registry_destroy(m->reg);
}

/* Runs `op` on a [2, 3] input of `dtype`; on failure the output slot must stay untouched. */
static pd_status run_typed(pd_registry *reg, const char *op, pd_data_type dtype,
                           const pd_attr *attrs, int32_t n_attrs)
{
    pd_tensor x = rt_random(dtype, 2, (int64_t[]){2, 3});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    pd_status s = pd_run(reg, op, &in, 1, attrs, n_attrs, &o, 1);
    if (s != PD_OK) {
        PD_EXPECT(!pd_defined(&out));
        PD_EXPECT_EQ(o.count, 1);
    }
    pd_tensor_release(&out);
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 1); /* the call kept no reference to its input */
    pd_tensor_release(&x);
    return s;
}

static pd_status run_op(pd_registry *reg, const char *op)
{
    return run_typed(reg, op, PD_FLOAT32, NULL, 0);
}

static void expect_error(const char *op, const char *text, const char *file, const char *tag)
{
    char want[1024];
    if (file)
        snprintf(want, sizeof want, "%s: %s %s", op, text, site(file, tag));
    else
        snprintf(want, sizeof want, "%s: %s", op, text);
    PD_EXPECT_STREQ(pd_last_error(), want);
}

/* --- Errors end the call, destructors run ------------------------------------------------- */

PD_TEST(CxxErrors, CheckInANestedHelperReportsTheExactMessageAndRunsEveryDestructor)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_check_fails"), PD_ERR_OP_FAILED);
    expect_error("cxx_check_fails", "value 6 must be negative (nested)", "cxx_errors_ops.cc",
                 "nested");
    PD_EXPECT_EQ(m.destroyed(), 3);     /* kernel, helper, check_negative */
    PD_EXPECT_EQ(m.reached_after(), 0); /* nothing after the failed check ran */
    cx_close(&m);
}

PD_TEST(CxxErrors, ThrowWithoutMessageSaysAnErrorOccurred)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_throw_empty"), PD_ERR_OP_FAILED);
    expect_error("cxx_throw_empty", "An error occurred.", "cxx_errors_ops.cc", "throw_empty");
    PD_EXPECT_EQ(m.destroyed(), 1);
    cx_close(&m);
}

PD_TEST(CxxErrors, StdExceptionIsReportedWithItsWhatNamingTheOp)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_runtime_error"), PD_ERR_OP_FAILED);
    expect_error("cxx_runtime_error", "C++ exception: custom what() text", NULL, NULL);
    PD_EXPECT_EQ(m.destroyed(), 1);
    cx_close(&m);
}

PD_TEST(CxxErrors, VectorAtOutOfRangeIsACxxExceptionNamingTheOp)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_at_throws"), PD_ERR_OP_FAILED);
    const char *prefix = "cxx_at_throws: C++ exception: ";
    PD_EXPECT_EQ(strncmp(pd_last_error(), prefix, strlen(prefix)), 0);
    PD_EXPECT(strlen(pd_last_error()) > strlen(prefix)); /* followed by the what() text */
    PD_EXPECT_EQ(m.destroyed(), 1);
    PD_EXPECT_EQ(m.reached_after(), 0);
    cx_close(&m);
}

PD_TEST(CxxErrors, ThrownIntIsAnUnknownCxxException)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_throw_int"), PD_ERR_OP_FAILED);
    expect_error("cxx_throw_int", "unknown C++ exception", NULL, NULL);
    PD_EXPECT_EQ(m.destroyed(), 1);
    cx_close(&m);
}

PD_TEST(CxxErrors, CheckInInferShapeEndsTheCallBeforeTheKernel)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_infer_shape"), PD_ERR_OP_FAILED);
    expect_error("cxx_infer_shape", "infer_shape wants rank 1, not 2", "cxx_errors_ops.cc",
                 "infer");
    PD_EXPECT_EQ(m.destroyed(), 1);
    PD_EXPECT_EQ(m.reached_after(), 0);
    cx_close(&m);
}

PD_TEST(CxxErrors, StdExceptionInInferDtypeEndsTheCallBeforeTheKernel)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_infer_dtype"), PD_ERR_OP_FAILED);
    expect_error("cxx_infer_dtype", "C++ exception: infer_dtype length error", NULL, NULL);
    PD_EXPECT_EQ(m.destroyed(), 1);
    PD_EXPECT_EQ(m.reached_after(), 0);
    cx_close(&m);
}

PD_TEST(CxxErrors, WronglyTypedAttrReadThrows)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    pd_attr factor = pd_attr_of_double("factor", 2.5);
    PD_EXPECT_EQ(run_typed(m.reg, "cxx_attr_type", PD_FLOAT32, &factor, 1), PD_ERR_OP_FAILED);
    PD_EXPECT_CONTAINS(pd_last_error(),
                       "cxx_attr_type: attr 'factor' is declared double, but was read as int "
                       "[cxx_errors_ops.cc:");
    PD_EXPECT_EQ(m.destroyed(), 1);
    PD_EXPECT_EQ(m.reached_after(), 0);
    cx_close(&m);
}

PD_TEST(CxxErrors, DispatchDefaultCaseThrowsAndKnownTypesRun)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_typed(m.reg, "cxx_dispatch", PD_INT32, NULL, 0), PD_ERR_OP_FAILED);
    PD_EXPECT_CONTAINS(pd_last_error(), "cxx_dispatch: function cxx_dispatch is not implemented "
                                        "for data type `int32` (input 'X'); it takes float32, "
                                        "float64 [cxx_errors_ops.cc:");
    PD_EXPECT_EQ(m.destroyed(), 1);

    pd_tensor x = rt_vec_f64(3, (double[]){1, 2, 3.5});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    PD_EXPECT_OK(pd_run(m.reg, "cxx_dispatch", &in, 1, NULL, 0, &o, 1));
    PD_EXPECT_NEAR(rt_at(&out, 0), 2, 0);
    PD_EXPECT_NEAR(rt_at(&out, 1), 3, 0);
    PD_EXPECT_NEAR(rt_at(&out, 2), 4.5, 0);
    PD_EXPECT_EQ(m.destroyed(), 2);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    cx_close(&m);
}

/* --- Table functions called from C++ ------------------------------------------------------- */

PD_TEST(CxxErrors, TableMisuseFailsWithTheMessageOfCAndRunsDestructors)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_table_misuse"), PD_ERR_OP_FAILED);
    expect_error("cxx_table_misuse",
                 "pd_output: output index 5 is out of range; the op declares 1 output", NULL, NULL);
    PD_EXPECT_EQ(m.destroyed(), 1);
    PD_EXPECT_EQ(m.reached_after(), 0);
    cx_close(&m);

    /* The same misuse in C says the same (but for the op name). */
    pd_registry *reg = rt_registry1("cx_mixed_c_first");
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(run_op(reg, "mixed_c_table_misuse"), PD_ERR_OP_FAILED);
    expect_error("mixed_c_table_misuse",
                 "pd_output: output index 5 is out of range; the op declares 1 output", NULL, NULL);
    pd_registry_destroy(reg);
}

PD_TEST(CxxErrors, TableErrorKeepsItsStatus)
{
    char c_text[512];
    pd_registry *reg = rt_registry1("cx_mixed_c_first");
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(run_op(reg, "mixed_c_table_oom"), PD_ERR_OUT_OF_MEMORY);
    snprintf(c_text, sizeof c_text, "%s", pd_last_error() + strlen("mixed_c_table_oom: "));
    pd_registry_destroy(reg);
    PD_EXPECT(strstr(c_text, "pd_scratch: ") != NULL);

    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_table_oom"), PD_ERR_OUT_OF_MEMORY);
    expect_error("cxx_table_oom", c_text, NULL, NULL);
    PD_EXPECT_EQ(m.destroyed(), 1);
    PD_EXPECT_EQ(m.reached_after(), 0);
    cx_close(&m);
}

PD_TEST(CxxErrors, TableErrorEndsTheCallEvenWhenTheKernelCatchesIt)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_EQ(run_op(m.reg, "cxx_table_caught"), PD_ERR_OP_FAILED);
    const char *text = "pd_output: output index 5 is out of range; the op declares 1 output";
    expect_error("cxx_table_caught", text, NULL, NULL);
    /* The kernel saw it as a pd::op_error without a file, and the call went on to its end. */
    PD_EXPECT_STREQ(m.caught(), text);
    PD_EXPECT_EQ(m.caught_line(), -1);
    PD_EXPECT_EQ(m.caught_status(), PD_ERR_OP_FAILED);
    PD_EXPECT_EQ(m.reached_after(), 0);
    PD_EXPECT_EQ(m.destroyed(), 1);
    cx_close(&m);
}

/* --- Passing paths --------------------------------------------------------------------------- */

PD_TEST(CxxErrors, PassingChecksRunTheKernel)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    pd_tensor x = rt_vec_f64(4, (double[]){1, -2, 3, 0.25});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    PD_EXPECT_OK(pd_run(m.reg, "cxx_double", &in, 1, NULL, 0, &o, 1));
    PD_EXPECT_EQ(pd_numel(&out), 4);
    PD_EXPECT_NEAR(rt_at(&out, 0), 2, 0);
    PD_EXPECT_NEAR(rt_at(&out, 1), -4, 0);
    PD_EXPECT_NEAR(rt_at(&out, 2), 6, 0);
    PD_EXPECT_NEAR(rt_at(&out, 3), 0.5, 0);
    PD_EXPECT_EQ(m.destroyed(), 1);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    cx_close(&m);
}

PD_TEST(CxxErrors, CheckTheKernelCatchesIsAnOrdinaryException)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_OK(run_op(m.reg, "cxx_check_caught"));
    PD_EXPECT_STREQ(m.caught(), "value 1 must be negative (nested)");
    char line[96];
    snprintf(line, sizeof line, "[cxx_errors_ops.cc:%d]", m.caught_line());
    PD_EXPECT_STREQ(line, site("cxx_errors_ops.cc", "nested"));
    PD_EXPECT_EQ(m.caught_status(), PD_ERR_OP_FAILED);
    PD_EXPECT_EQ(m.destroyed(), 3);
    PD_EXPECT_EQ(m.reached_after(), 0);
    cx_close(&m);
}

PD_TEST(CxxErrors, AbsentOptionalInputReadsAsNullWithoutAnError)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    PD_EXPECT_OK(run_op(m.reg, "cxx_optional"));
    PD_EXPECT_EQ(m.destroyed(), 1);
    cx_close(&m);
}

PD_TEST(CxxErrors, ManyFailingRunsLeakNothingAndTheThreadGoesOn)
{
    static const char *const ops[] = {"cxx_check_fails",  "cxx_at_throws",    "cxx_throw_int",
                                      "cxx_table_misuse", "cxx_table_caught", "cxx_infer_shape",
                                      "cxx_runtime_error"};
    static const int destroyed_per_run[] = {3, 1, 1, 1, 1, 1, 1};
    cx_module m;
    PD_ASSERT(cx_open(&m));
    int want = 0;
    for (int i = 0; i < 50; ++i)
        for (size_t k = 0; k < sizeof ops / sizeof *ops; ++k) {
            PD_ASSERT_EQ(run_op(m.reg, ops[k]), PD_ERR_OP_FAILED);
            want += destroyed_per_run[k];
        }
    PD_EXPECT_EQ(m.destroyed(), want);
    PD_EXPECT_EQ(m.reached_after(), 0);
    PD_EXPECT_OK(run_op(m.reg, "cxx_check_caught"));
    cx_close(&m);
}

/* Each thread fails in C++ frames (a PD_CHECK and a table misuse) many times: the guard of
 * the C++ table and the error state are per thread. */
static void *fail_many(void *arg)
{
    pd_registry *reg = arg;
    for (int i = 0; i < 40; ++i) {
        if (run_op(reg, "cxx_table_misuse") != PD_ERR_OP_FAILED ||
            strstr(pd_last_error(), "cxx_table_misuse: pd_output: output index 5") == NULL)
            return (void *)1;
        if (run_op(reg, "cxx_check_fails") != PD_ERR_OP_FAILED ||
            strstr(pd_last_error(), "cxx_check_fails: value 6 must be negative") == NULL)
            return (void *)1;
    }
    return NULL;
}

PD_TEST(CxxErrors, ThreadsFailInCxxCodeIndependently)
{
    cx_module m;
    PD_ASSERT(cx_open(&m));
    pthread_t threads[4];
    for (int i = 0; i < 4; ++i)
        PD_ASSERT_EQ(pthread_create(&threads[i], NULL, fail_many, m.reg), 0);
    for (int i = 0; i < 4; ++i) {
        void *result = NULL;
        pthread_join(threads[i], &result);
        PD_EXPECT(result == NULL);
    }
    PD_EXPECT_EQ(m.destroyed(), 4 * 40 * (1 + 3));
    PD_EXPECT_EQ(m.reached_after(), 0);
    cx_close(&m);
}

/* --- Modules ------------------------------------------------------------------------------ */

static const pd_module_info *info_of(pd_registry *reg)
{
    const pd_op *op = pd_registry_op_at(reg, 0);
    return op ? pd_module_get_info(pd_op_module(op)) : NULL;
}

PD_TEST(CxxModules, OnlyModulesWithCxxUnitsHaveAnInvokeHook)
{
    pd_registry *reg = rt_registry1("cx_errors_ops");
    PD_ASSERT(reg != NULL);
    PD_ASSERT(info_of(reg) != NULL);
    PD_EXPECT(info_of(reg)->invoke != NULL);
    pd_registry_destroy(reg);

    reg = rt_registry1("rt_errors_ops"); /* C only */
    PD_ASSERT(reg != NULL);
    PD_ASSERT(info_of(reg) != NULL);
    PD_EXPECT(info_of(reg)->invoke == NULL);
    pd_registry_destroy(reg);
}

PD_TEST(CxxModules, MixedModuleCatchesCxxAndJumpsForCInEitherLinkOrder)
{
    static const char *const modules[] = {"cx_mixed_c_first", "cx_mixed_cxx_first"};
    for (int i = 0; i < 2; ++i) {
        pd_registry *reg = rt_registry1(modules[i]);
        PD_ASSERT(reg != NULL);
        PD_ASSERT(info_of(reg) != NULL);
        PD_EXPECT(info_of(reg)->invoke != NULL);
        PD_EXPECT_EQ(run_op(reg, "mixed_cxx_throw"), PD_ERR_OP_FAILED);
        expect_error("mixed_cxx_throw", "C++ exception: mixed module mixed_cxx_throw", NULL, NULL);
        PD_EXPECT_EQ(run_op(reg, "mixed_c_check"), PD_ERR_OP_FAILED);
        expect_error("mixed_c_check",
                     "Expected pd_numel(pd_input(ctx, 0)) < 0, but it is not "
                     "satisfied.",
                     "mixed_c.c", "c_check");
        pd_registry_destroy(reg);
    }
}

PD_TEST(CxxModules, OpsLinkedIntoTheProgramGetItsInvokeHook)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *module = NULL;
    PD_ASSERT_OK(pd_register_linked_ops(reg, &module));
    PD_ASSERT(module != NULL);
    PD_EXPECT(pd_module_get_info(module)->invoke != NULL);
    PD_EXPECT_EQ(run_op(reg, "cxx_linked_throw"), PD_ERR_OP_FAILED);
    expect_error("cxx_linked_throw", "C++ exception: thrown by an op linked into the program", NULL,
                 NULL);
    pd_registry_destroy(reg);
}
