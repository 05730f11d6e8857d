/*
 * gradcheck_test.c - pd_gradcheck (pdext_gradcheck.h) over tests/tape_ops.c: right backward
 * kernels pass, deliberately wrong ones (a factor 2 off, a wrong double grad) are caught with
 * the worst element reported, float32 inputs are cast up when the op runs in float64 and kept
 * with looser tolerances when it does not, integer inputs are skipped by name, and an op
 * without a grad op is refused. And pd_check_op (pdext_check.h), the check around it, as
 * structured rows: a wrong backward fails its gradcheck rows only, the same seed gives the
 * same rows, and what cannot be checked is refused naming it.
 */
#include "pdext_check.h"
#include "pdext_gradcheck.h"
#include "runner_helpers.h"

#include <stdio.h>

static pd_tensor rand_tensor(pd_data_type dtype, int64_t n)
{
    pd_tensor t = rt_tensor(dtype, 1, &n, NULL);
    for (int64_t i = 0; i < n; ++i)
        rt_set(&t, i, pd_test_uniform(-1, 1));
    return t;
}

/* Gradcheck of a one-input op on a fresh random tensor of n elements. */
static pd_status check1(pd_registry *reg, const char *op, pd_data_type dtype, int64_t n,
                        const pd_attr *attrs, int32_t n_attrs, const pd_gradcheck_options *opt,
                        pd_gradcheck_report *rep)
{
    pd_tensor x = rand_tensor(dtype, n);
    pd_arg in = pd_arg_of(&x);
    pd_status st = pd_gradcheck(reg, op, &in, 1, attrs, n_attrs, opt, rep);
    pd_tensor_release(&x);
    return st;
}

PD_TEST(Gradcheck, PassesARightBackwardInFloat64AndChecksItsDoubleGrad)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_gradcheck_report rep;
    PD_ASSERT_OK(check1(reg, "tp_square", PD_FLOAT64, 5, NULL, 0, NULL, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.dtype, PD_FLOAT64);
    PD_EXPECT_EQ(rep.inputs_checked, 1);
    PD_EXPECT(rep.double_grad_checked);
    PD_EXPECT(rep.double_grad_passed);
    PD_EXPECT_EQ(rep.elements, 5 + 5 + 5); /* X; then the grad op's X and Out@GRAD */
    PD_EXPECT_STREQ(rep.worst.op, "tp_square");
    PD_EXPECT_STREQ(rep.double_worst.op, "tp_square_grad");
    PD_EXPECT_STREQ(rep.skipped, "");
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, CatchesABackwardWrongByAFactorOfTwo)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_gradcheck_report rep;
    PD_ASSERT_OK(check1(reg, "tp_bad_square", PD_FLOAT64, 6, NULL, 0, NULL, &rep));
    PD_EXPECT(!rep.passed);
    PD_EXPECT_STREQ(rep.worst.input, "X");
    PD_EXPECT(rep.worst.index >= 0 && rep.worst.index < 6);
    PD_EXPECT_NEAR(rep.worst.analytic * 2, rep.worst.numeric, 1e-6);
    PD_EXPECT_NEAR(rep.worst.rel_error, 0.5, 1e-6);
    PD_EXPECT(!rep.double_grad_checked);
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, CatchesAWrongDoubleGradOpNamingIt)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_gradcheck_report rep;
    PD_ASSERT_OK(check1(reg, "tp_bad_dd", PD_FLOAT64, 4, NULL, 0, NULL, &rep));
    PD_EXPECT(!rep.passed);
    PD_EXPECT(rep.worst.rel_error < 1e-6); /* the first order is right */
    PD_EXPECT(rep.double_grad_checked);
    PD_EXPECT(!rep.double_grad_passed);
    PD_EXPECT_STREQ(rep.double_worst.op, "tp_bad_dd_grad");
    PD_EXPECT_STREQ(rep.double_worst.input, "X");
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, CastsFloat32UpWhenTheOpAlsoRunsInFloat64)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_gradcheck_report rep;
    PD_ASSERT_OK(check1(reg, "tp_square", PD_FLOAT32, 3, NULL, 0, NULL, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.dtype, PD_FLOAT64);
    pd_gradcheck_options opt = {.struct_size = sizeof opt, .keep_dtype = true};
    PD_ASSERT_OK(check1(reg, "tp_square", PD_FLOAT32, 3, NULL, 0, &opt, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.dtype, PD_FLOAT32);
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, KeepsFloat32WithLooserTolerancesWhenTheOpTakesNothingElse)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_gradcheck_report rep;
    PD_ASSERT_OK(check1(reg, "tp_f32only", PD_FLOAT32, 8, NULL, 0, NULL, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.dtype, PD_FLOAT32);
    PD_EXPECT_NEAR(rep.atol, 1e-2, 0);
    PD_EXPECT_NEAR(rep.step, 1e-2, 0);
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, ChecksEveryInputOfATwoInputOpAndPassesAttrs)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor x = rand_tensor(PD_FLOAT64, 4), y = rand_tensor(PD_FLOAT64, 4);
    pd_arg in[2] = {pd_arg_of(&x), pd_arg_named("Y", &y, 1)};
    pd_gradcheck_report rep;
    PD_ASSERT_OK(pd_gradcheck(reg, "tp_mul", in, 2, NULL, 0, NULL, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.inputs_checked, 2);
    pd_attr five = pd_attr_of_float("scale", 5.0f);
    /* passes only if the grad op gets 5 too: with its default 2 the gradients would differ */
    PD_ASSERT_OK(check1(reg, "tp_scale", PD_FLOAT64, 3, &five, 1, NULL, &rep));
    PD_EXPECT(rep.passed);
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, ChecksEachTensorOfAVectorInput)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor xs[2] = {rand_tensor(PD_FLOAT64, 3), rand_tensor(PD_FLOAT64, 3)};
    pd_arg in = pd_arg_named("X", xs, 2);
    pd_gradcheck_report rep;
    PD_ASSERT_OK(pd_gradcheck(reg, "tp_addn", &in, 1, NULL, 0, NULL, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.inputs_checked, 2);
    PD_EXPECT_EQ(rep.elements, 6);
    pd_tensor_release(&xs[0]);
    pd_tensor_release(&xs[1]);
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, SkipsAnIntegerInputNamingIt)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    const int64_t three = 3;
    pd_tensor x = rand_tensor(PD_FLOAT64, 3),
              n = rt_tensor(PD_INT32, 1, &three, (double[]){1, 2, 3});
    pd_arg in[2] = {pd_arg_of(&x), pd_arg_of(&n)};
    pd_gradcheck_report rep;
    PD_ASSERT_OK(pd_gradcheck(reg, "tp_shift", in, 2, NULL, 0, NULL, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.inputs_checked, 1);
    PD_EXPECT_CONTAINS(rep.skipped, "input 'N' is int32, not differentiable");
    pd_tensor_release(&n);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, SaysAnOpWithoutAGradOpHasNothingToCheck)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_gradcheck_report rep;
    PD_EXPECT_ERROR(check1(reg, "tp_nograd", PD_FLOAT64, 2, NULL, 0, NULL, &rep), PD_ERR_NOT_FOUND,
                    "op 'tp_nograd' has no grad op");
    PD_EXPECT_ERROR(check1(reg, "tp_missing", PD_FLOAT64, 2, NULL, 0, NULL, &rep), PD_ERR_NOT_FOUND,
                    "tp_missing");
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, SamplesAtMostMaxElementsAndLeavesTheInputsAlone)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor x = rand_tensor(PD_FLOAT64, 100);
    double first = rt_at(&x, 0), last = rt_at(&x, 99);
    pd_arg in = pd_arg_of(&x);
    pd_gradcheck_options opt = {.struct_size = sizeof opt,
                                .max_elements = 10,
                                .skip_double_grad = true};
    pd_gradcheck_report rep;
    PD_ASSERT_OK(pd_gradcheck(reg, "tp_scale", &in, 1, NULL, 0, &opt, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.elements, 10);
    PD_EXPECT_EQ(rt_at(&x, 0), first);
    PD_EXPECT_EQ(rt_at(&x, 99), last);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Gradcheck, RejectsMissingArgumentsAndInputsWithoutFloats)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    pd_gradcheck_report rep;
    PD_EXPECT_ERROR(pd_gradcheck(NULL, "tp_square", NULL, 0, NULL, 0, NULL, &rep),
                    PD_ERR_INVALID_ARGUMENT, "reg NULL");
    PD_EXPECT_ERROR(pd_gradcheck(reg, "tp_square", NULL, 0, NULL, 0, NULL, NULL),
                    PD_ERR_INVALID_ARGUMENT, "report NULL");
    PD_EXPECT_ERROR(check1(reg, "tp_square", PD_INT32, 2, NULL, 0, NULL, &rep),
                    PD_ERR_INVALID_ARGUMENT, "no floating input");
    pd_registry_destroy(reg);
}

/* --- pd_check_op ----------------------------------------------------------------------------- */

/* What pd_check_op handed over: every row as one "dtype check status detail" line. */
typedef struct seen {
    char text[8192];
    int rows, failed_gradcheck, cases;
    uint32_t dtypes;
} seen;

static void seen_row(void *user, const pd_check_row *r)
{
    seen *s = user;
    size_t used = strlen(s->text);
    snprintf(s->text + used, sizeof s->text - used, "%s %s %s %s\n", r->dtype, r->check,
             pd_check_status_name(r->status), r->detail);
    s->rows++;
    if (strcmp(r->check, "dtypes") == 0)
        s->dtypes = r->dtypes;
    if (r->status == PD_CHECK_FAIL && strcmp(r->check, "gradcheck") == 0)
        s->failed_gradcheck++;
}

static void seen_case(void *user, const char *op, const char *dtype, const char *check)
{
    (void)op, (void)dtype, (void)check;
    ((seen *)user)->cases++;
}

static pd_status check_rows(pd_registry *reg, const char *op, uint64_t seed, seen *s,
                            int32_t *failed)
{
    memset(s, 0, sizeof *s);
    pd_check_options o = {.struct_size = sizeof o,
                          .seed = seed,
                          .on_row = seen_row,
                          .on_case = seen_case,
                          .user = s};
    return pd_check_op(reg, op, NULL, 0, &o, failed);
}

PD_TEST(CheckOp, AWrongBackwardFailsItsGradcheckRowsOnly)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    seen s;
    int32_t failed = -1;
    PD_ASSERT_OK(check_rows(reg, "tp_bad_square", 0, &s, &failed));
    /* square_fwd takes float32 and float64: both gradcheck rows fail, with the grad op half
     * the numeric gradient at every element (rel err 0.5), and nothing else does */
    PD_EXPECT_EQ(s.dtypes, (1u << PD_FLOAT32) | (1u << PD_FLOAT64));
    PD_EXPECT_EQ(failed, 2);
    PD_EXPECT_EQ(s.failed_gradcheck, 2);
    PD_EXPECT_CONTAINS(s.text, "float64 gradcheck FAIL WRONG tp_bad_square X[");
    PD_EXPECT_CONTAINS(s.text, "(rel err 0.5)");
    PD_EXPECT_CONTAINS(s.text, "float32 strided ok transposed inputs agree");
    PD_EXPECT_EQ(s.rows, 1 + 2 * 4); /* dtypes, then four rows per dtype */
    PD_EXPECT_EQ(s.cases, 1 + 2 * 4);
    pd_registry_destroy(reg);
}

PD_TEST(CheckOp, ARightOpPassesAndTheSameSeedGivesTheSameRows)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    seen a, b, c;
    int32_t failed = -1;
    PD_ASSERT_OK(check_rows(reg, "tp_square", 7, &a, &failed));
    PD_EXPECT_EQ(failed, 0);
    PD_EXPECT_CONTAINS(a.text, "float64 gradcheck x2 ok worst tp_square");
    PD_ASSERT_OK(check_rows(reg, "tp_square", 7, &b, NULL));
    PD_EXPECT_STREQ(a.text, b.text);
    PD_ASSERT_OK(check_rows(reg, "tp_square", 8, &c, NULL));
    PD_EXPECT(strcmp(a.text, c.text) != 0); /* other inputs: other worst elements */
    pd_registry_destroy(reg);
}

PD_TEST(CheckOp, RefusesWhatItCannotCheckNamingIt)
{
    pd_registry *reg = rt_registry1("tp_tape_ops");
    PD_ASSERT(reg != NULL);
    seen s;
    PD_EXPECT_EQ(check_rows(reg, "tp_square_grad", 0, &s, NULL), PD_ERR_NOT_FOUND);
    PD_EXPECT_CONTAINS(pd_last_error(), "'tp_square_grad' is a grad op");
    PD_EXPECT_EQ(check_rows(reg, "tp_nope", 0, &s, NULL), PD_ERR_NOT_FOUND);
    PD_EXPECT_EQ(s.rows, 0);
    pd_check_input in = {.op = "tp_mul", .name = "Z", .ndim = 1, .shape = {3}};
    pd_check_options o = {.struct_size = sizeof o, .inputs = &in, .n_inputs = 1};
    PD_EXPECT_EQ(pd_check_op(reg, "tp_mul", NULL, 0, &o, NULL), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT_CONTAINS(pd_last_error(),
                       "tp_mul.Z: op 'tp_mul' has no input 'Z' (its inputs: X, Y)");
    snprintf(in.op, sizeof in.op, "tp_mull");
    PD_EXPECT_EQ(pd_check_inputs_validate(reg, &in, 1), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT_CONTAINS(pd_last_error(), "tp_mull.Z: no forward op 'tp_mull'");
    PD_EXPECT_CONTAINS(pd_last_error(), "tp_mul");
    pd_registry_destroy(reg);
}
