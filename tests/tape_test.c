/*
 * tape_test.c - the autograd tape (pdext_tape.h) over the ops of tests/tape_ops.c: recording,
 * the chain rule, gradients of a tensor used twice, attrs reaching the grad op, vector inputs,
 * unreached outputs and ops, the error naming an op without a grad op, and bad arguments.
 * Expected gradients are worked out by hand from the ops' formulas.
 */
#include "pdext_tape.h"
#include "runner_helpers.h"

/* The test ops' registry and a tape. */
typedef struct fixture {
    pd_registry *reg;
    pd_tape *tape;
} fixture;

static bool setup(fixture *f)
{
    f->reg = rt_registry1("tp_tape_ops");
    f->tape = NULL;
    return f->reg && pd_tape_create(&f->tape) == PD_OK;
}

static void teardown(fixture *f)
{
    pd_tape_destroy(f->tape);
    pd_registry_destroy(f->reg);
}

/* Runs one-input, one-output op `name` on the tape; *out gets the result. */
static pd_status run1(fixture *f, const char *name, pd_tensor *x, const pd_attr *attrs,
                      int32_t n_attrs, pd_tensor *out)
{
    pd_arg in = pd_arg_of(x), o = pd_arg_of(out);
    return pd_tape_run(f->tape, pd_op_find(f->reg, name), &in, 1, attrs, n_attrs, &o, 1);
}

static pd_status run2(fixture *f, const char *name, pd_tensor *x, pd_tensor *y, pd_tensor *out)
{
    pd_arg in[2] = {pd_arg_of(x), pd_arg_of(y)}, o = pd_arg_of(out);
    return pd_tape_run(f->tape, pd_op_find(f->reg, name), in, 2, NULL, 0, &o, 1);
}

static pd_tensor vec(const double *v, int64_t n) { return rt_tensor(PD_FLOAT64, 1, &n, v); }

PD_TEST(Tape, RecordsEachSuccessfulCallAndNothingOfAFailedOne)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){1, 2}, 2), y = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(&f, "tp_square", &x, NULL, 0, &y));
    PD_EXPECT_EQ(pd_tape_size(f.tape), 1);
    pd_tensor bad = vec((double[]){1, 2, 3}, 3);
    PD_EXPECT_ERROR(run2(&f, "tp_mul", &x, &bad, &z), PD_ERR_OP_FAILED, "X and Y must match");
    PD_EXPECT_EQ(pd_tape_size(f.tape), 1);
    PD_EXPECT(!pd_defined(&z));
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 2); /* the caller's and the tape's */
    pd_tape_clear(f.tape);
    PD_EXPECT_EQ(pd_tape_size(f.tape), 0);
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 1);
    pd_tensor_release(&bad);
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, GradientOfSquareIsTwoX)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){1, -2, 3}, 3), y = PD_TENSOR_UNDEFINED, gx;
    PD_ASSERT_OK(run1(&f, "tp_square", &x, NULL, 0, &y));
    PD_ASSERT_OK(pd_tape_backward(f.tape, &y, NULL, 1, &x, 1, &gx));
    PD_EXPECT_EQ(gx.dtype, PD_FLOAT64);
    PD_EXPECT_NEAR(rt_at(&gx, 0), 2, 0);
    PD_EXPECT_NEAR(rt_at(&gx, 1), -4, 0);
    PD_EXPECT_NEAR(rt_at(&gx, 2), 6, 0);
    pd_tensor_release(&gx);
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, ChainsGradOpsNewestFirstAndPassesRecordedAttrs)
{
    fixture f;
    PD_ASSERT(setup(&f));
    /* y = (3 x)^2: dy/dx = 18 x; scale reaches its grad op as the recorded attr */
    pd_tensor x = vec((double[]){1, 2}, 2), s = PD_TENSOR_UNDEFINED, y = PD_TENSOR_UNDEFINED, gx;
    pd_attr three = pd_attr_of_float("scale", 3.0f);
    PD_ASSERT_OK(run1(&f, "tp_scale", &x, &three, 1, &s));
    PD_ASSERT_OK(run1(&f, "tp_square", &s, NULL, 0, &y));
    PD_ASSERT_OK(pd_tape_backward(f.tape, &y, NULL, 1, &x, 1, &gx));
    PD_EXPECT_NEAR(rt_at(&gx, 0), 18, 1e-12);
    PD_EXPECT_NEAR(rt_at(&gx, 1), 36, 1e-12);
    pd_tensor_release(&gx);
    /* without the attr the grad op gets the declared default, 2 */
    pd_tensor s2 = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(&f, "tp_scale", &x, NULL, 0, &s2));
    PD_ASSERT_OK(pd_tape_backward(f.tape, &s2, NULL, 1, &x, 1, &gx));
    PD_EXPECT_NEAR(rt_at(&gx, 0), 2, 1e-12);
    pd_tensor_release(&gx);
    pd_tensor_release(&s2);
    pd_tensor_release(&y);
    pd_tensor_release(&s);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, AddsTheGradientsOfATensorUsedTwice)
{
    fixture f;
    PD_ASSERT(setup(&f));
    /* x * x: 2x; and a second output 2 x: loss over both gives 2x + 2 */
    pd_tensor x = vec((double[]){1.5, -1}, 2), m = PD_TENSOR_UNDEFINED, s = PD_TENSOR_UNDEFINED;
    pd_tensor g[2];
    PD_ASSERT_OK(run2(&f, "tp_mul", &x, &x, &m));
    PD_ASSERT_OK(run1(&f, "tp_scale", &x, NULL, 0, &s));
    PD_ASSERT_OK(pd_tape_backward(f.tape, &m, NULL, 1, &x, 1, &g[0]));
    PD_EXPECT_NEAR(rt_at(&g[0], 0), 3, 1e-12);
    PD_EXPECT_NEAR(rt_at(&g[0], 1), -2, 1e-12);
    pd_tensor outs[2] = {m, s};
    PD_ASSERT_OK(pd_tape_backward(f.tape, outs, NULL, 2, &x, 1, &g[1]));
    PD_EXPECT_NEAR(rt_at(&g[1], 0), 5, 1e-12);
    PD_EXPECT_NEAR(rt_at(&g[1], 1), 0, 1e-12);
    pd_tensor_release(&g[0]);
    pd_tensor_release(&g[1]);
    pd_tensor_release(&s);
    pd_tensor_release(&m);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, WeighsTheOutputsByTheGivenGrads)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){1, 2}, 2), y = PD_TENSOR_UNDEFINED, gx;
    pd_tensor w = vec((double[]){10, -1}, 2);
    PD_ASSERT_OK(run1(&f, "tp_square", &x, NULL, 0, &y));
    PD_ASSERT_OK(pd_tape_backward(f.tape, &y, &w, 1, &x, 1, &gx));
    PD_EXPECT_NEAR(rt_at(&gx, 0), 20, 0);
    PD_EXPECT_NEAR(rt_at(&gx, 1), -4, 0);
    pd_tensor_release(&gx);
    pd_tensor_release(&w);
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, GivesAnOutputNoGradientReachedZerosInTheGradOp)
{
    fixture f;
    PD_ASSERT(setup(&f));
    /* loss over A only: A@GRAD = 1, B@GRAD = 0, so X@GRAD = 1 (not 1 + 3) */
    pd_tensor x = vec((double[]){4}, 1), ab[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED}, gx;
    pd_arg in = pd_arg_of(&x), o[2] = {pd_arg_of(&ab[0]), pd_arg_of(&ab[1])};
    PD_ASSERT_OK(pd_tape_run(f.tape, pd_op_find(f.reg, "tp_split"), &in, 1, NULL, 0, o, 2));
    PD_ASSERT_OK(pd_tape_backward(f.tape, &ab[0], NULL, 1, &x, 1, &gx));
    PD_EXPECT_NEAR(rt_at(&gx, 0), 1, 0);
    pd_tensor_release(&gx);
    PD_ASSERT_OK(pd_tape_backward(f.tape, &ab[1], NULL, 1, &x, 1, &gx));
    PD_EXPECT_NEAR(rt_at(&gx, 0), 3, 0);
    pd_tensor_release(&gx);
    pd_tensor_release(&ab[0]);
    pd_tensor_release(&ab[1]);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, GivesEachTensorOfAVectorInputItsGradient)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){1, 2}, 2), y = vec((double[]){3, 4}, 2), out = PD_TENSOR_UNDEFINED;
    pd_tensor xs[3] = {x, y, x}, g[2];
    pd_arg in = pd_arg_named("X", xs, 3), o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_tape_run(f.tape, pd_op_find(f.reg, "tp_addn"), &in, 1, NULL, 0, &o, 1));
    PD_EXPECT_NEAR(rt_at(&out, 1), 8, 0);
    pd_tensor wrt[2] = {x, y};
    PD_ASSERT_OK(pd_tape_backward(f.tape, &out, NULL, 1, wrt, 2, g));
    PD_EXPECT_NEAR(rt_at(&g[0], 0), 2, 0); /* x is used twice */
    PD_EXPECT_NEAR(rt_at(&g[1], 1), 1, 0);
    pd_tensor_release(&g[0]);
    pd_tensor_release(&g[1]);
    pd_tensor_release(&out);
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, GivesZerosForAnIntegerInputAndForATensorThatDoesNotReachTheOutputs)
{
    fixture f;
    PD_ASSERT(setup(&f));
    const int64_t two = 2;
    pd_tensor x = vec((double[]){1, 2}, 2), n = rt_tensor(PD_INT32, 1, &two, (double[]){5, 6});
    pd_tensor other = vec((double[]){7, 7}, 2), out = PD_TENSOR_UNDEFINED, g[3];
    PD_ASSERT_OK(run2(&f, "tp_shift", &x, &n, &out));
    PD_EXPECT_NEAR(rt_at(&out, 1), 8, 0);
    pd_tensor wrt[3] = {x, n, other};
    PD_ASSERT_OK(pd_tape_backward(f.tape, &out, NULL, 1, wrt, 3, g));
    PD_EXPECT_NEAR(rt_at(&g[0], 0), 1, 0);
    PD_EXPECT_EQ(g[1].dtype, PD_INT32);
    PD_EXPECT_EQ(rt_at(&g[1], 0), 0);
    PD_EXPECT_NEAR(rt_at(&g[2], 0), 0, 0);
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(&g[i]);
    pd_tensor_release(&out);
    pd_tensor_release(&other);
    pd_tensor_release(&n);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, SkipsAnOpWithoutAGradOpWhenItIsOffThePath)
{
    fixture f;
    PD_ASSERT(setup(&f));
    /* c = nograd(const) feeds the product, but only x is differentiated; and nograd(x) is
     * computed but not part of the loss */
    pd_tensor x = vec((double[]){2}, 1), k = vec((double[]){1}, 1);
    pd_tensor c = PD_TENSOR_UNDEFINED, side = PD_TENSOR_UNDEFINED, y = PD_TENSOR_UNDEFINED, gx;
    PD_ASSERT_OK(run1(&f, "tp_nograd", &k, NULL, 0, &c));
    PD_ASSERT_OK(run1(&f, "tp_nograd", &x, NULL, 0, &side));
    PD_ASSERT_OK(run2(&f, "tp_mul", &x, &c, &y));
    PD_ASSERT_OK(pd_tape_backward(f.tape, &y, NULL, 1, &x, 1, &gx));
    PD_EXPECT_NEAR(rt_at(&gx, 0), 2, 0); /* c = k + 1 = 2 */
    pd_tensor_release(&gx);
    pd_tensor_release(&y);
    pd_tensor_release(&side);
    pd_tensor_release(&c);
    pd_tensor_release(&k);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, NamesTheOpOnThePathThatHasNoGradOp)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){2}, 1), c = PD_TENSOR_UNDEFINED, y = PD_TENSOR_UNDEFINED;
    pd_tensor gx = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(&f, "tp_nograd", &x, NULL, 0, &c));
    PD_ASSERT_OK(run1(&f, "tp_square", &c, NULL, 0, &y));
    PD_EXPECT_ERROR(pd_tape_backward(f.tape, &y, NULL, 1, &x, 1, &gx), PD_ERR_NOT_FOUND,
                    "op 'tp_nograd' (call 0 on the tape)");
    PD_EXPECT_CONTAINS(pd_last_error(), "PD_BUILD_GRAD_OP(tp_nograd");
    PD_EXPECT(!pd_defined(&gx));
    pd_tensor_release(&y);
    pd_tensor_release(&c);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, RunsBackwardAgainWithTheSameResult)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){3}, 1), y = PD_TENSOR_UNDEFINED, g1, g2;
    PD_ASSERT_OK(run1(&f, "tp_square", &x, NULL, 0, &y));
    PD_ASSERT_OK(pd_tape_backward(f.tape, &y, NULL, 1, &x, 1, &g1));
    PD_ASSERT_OK(pd_tape_backward(f.tape, &y, NULL, 1, &x, 1, &g2));
    PD_EXPECT_NEAR(rt_at(&g1, 0), 6, 0);
    PD_EXPECT_NEAR(rt_at(&g2, 0), 6, 0);
    pd_tensor_release(&g1);
    pd_tensor_release(&g2);
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, RejectsAnOutputTheTapeDidNotRecord)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){3}, 1), gx = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tape_backward(f.tape, &x, NULL, 1, &x, 1, &gx), PD_ERR_INVALID_ARGUMENT,
                    "outputs[0] is not a tensor made by a call recorded on this tape");
    PD_EXPECT(!pd_defined(&gx));
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, RejectsAGradOfAnotherShapeNamingBoth)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){1, 2}, 2), y = PD_TENSOR_UNDEFINED, w = vec((double[]){1}, 1);
    pd_tensor gx = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(&f, "tp_square", &x, NULL, 0, &y));
    PD_EXPECT_ERROR(pd_tape_backward(f.tape, &y, &w, 1, &x, 1, &gx), PD_ERR_INVALID_ARGUMENT,
                    "grads[0] is float64 [1] but outputs[0] is float64 [2]");
    pd_tensor_release(&w);
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, RejectsNullArguments)
{
    pd_tensor x = vec((double[]){1}, 1), g;
    PD_EXPECT_ERROR(pd_tape_create(NULL), PD_ERR_INVALID_ARGUMENT, "pd_tape_create: out");
    PD_EXPECT_ERROR(pd_tape_backward(NULL, &x, NULL, 1, &x, 1, &g), PD_ERR_INVALID_ARGUMENT,
                    "tape is NULL");
    PD_EXPECT_ERROR(pd_tape_run(NULL, NULL, NULL, 0, NULL, 0, NULL, 0), PD_ERR_INVALID_ARGUMENT,
                    "pd_tape_run: tape is NULL");
    pd_tape *t;
    PD_ASSERT_OK(pd_tape_create(&t));
    PD_EXPECT_ERROR(pd_tape_backward(t, &x, NULL, 0, &x, 1, &g), PD_ERR_INVALID_ARGUMENT,
                    "at least one output");
    pd_tape_destroy(t);
    pd_tape_destroy(NULL);
    pd_tensor_release(&x);
}

PD_TEST(Tape, NamesAGradOpInputItCannotBind)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){1}, 1), y = PD_TENSOR_UNDEFINED, gx = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(&f, "tp_badin", &x, NULL, 0, &y));
    PD_EXPECT_ERROR(pd_tape_backward(f.tape, &y, NULL, 1, &x, 1, &gx), PD_ERR_INVALID_ARGUMENT,
                    "grad op 'tp_badin_grad' declares input 'Nope', which is neither an input "
                    "nor an output of 'tp_badin'");
    PD_EXPECT(!pd_defined(&gx));
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, NamesAGradOpOutputThatIsNoInputsGradient)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){1}, 1), y = PD_TENSOR_UNDEFINED, gx = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(&f, "tp_badout", &x, NULL, 0, &y));
    PD_EXPECT_ERROR(pd_tape_backward(f.tape, &y, NULL, 1, &x, 1, &gx), PD_ERR_INVALID_ARGUMENT,
                    "grad op 'tp_badout_grad' declares output 'Q@GRAD', which is not the "
                    "gradient (@GRAD) of an input of 'tp_badout'");
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, RecordsTheBackwardPassSoASecondBackwardGivesSecondDerivatives)
{
    fixture f;
    PD_ASSERT(setup(&f));
    /* y = (3x)^2 = 9 x^2: dy/dx = 18 x, d2y/dx2 = 18 through tp_square_grad_grad and
     * tp_scale_grad_grad */
    pd_tensor x = vec((double[]){1, -2}, 2), s = PD_TENSOR_UNDEFINED, y = PD_TENSOR_UNDEFINED;
    pd_tensor gx = PD_TENSOR_UNDEFINED, ggx = PD_TENSOR_UNDEFINED;
    pd_attr three = pd_attr_of_float("scale", 3.0f);
    PD_ASSERT_OK(run1(&f, "tp_scale", &x, &three, 1, &s));
    PD_ASSERT_OK(run1(&f, "tp_square", &s, NULL, 0, &y));
    pd_tape_backward_options opt = {.struct_size = sizeof opt, .record = true};
    PD_ASSERT_OK(pd_tape_backward_ex(f.tape, &y, NULL, 1, &x, 1, &gx, &opt));
    PD_EXPECT_NEAR(rt_at(&gx, 1), -36, 1e-12);
    PD_EXPECT_EQ(pd_tape_size(f.tape), 4); /* and tp_square_grad, tp_scale_grad */
    PD_ASSERT_OK(pd_tape_backward(f.tape, &gx, NULL, 1, &x, 1, &ggx));
    PD_EXPECT_NEAR(rt_at(&ggx, 0), 18, 1e-12);
    PD_EXPECT_NEAR(rt_at(&ggx, 1), 18, 1e-12);
    pd_tensor_release(&ggx);
    pd_tensor_release(&gx);
    pd_tensor_release(&y);
    pd_tensor_release(&s);
    pd_tensor_release(&x);
    teardown(&f);
}

PD_TEST(Tape, RefusesToRecordAnAccumulation)
{
    fixture f;
    PD_ASSERT(setup(&f));
    pd_tensor x = vec((double[]){2}, 1), m = PD_TENSOR_UNDEFINED, gx = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run2(&f, "tp_mul", &x, &x, &m));
    pd_tape_backward_options opt = {.struct_size = sizeof opt, .record = true};
    PD_EXPECT_ERROR(pd_tape_backward_ex(f.tape, &m, NULL, 1, &x, 1, &gx, &opt), PD_ERR_UNAVAILABLE,
                    "a recorded backward pass cannot add them");
    PD_EXPECT(!pd_defined(&gx));
    pd_tensor_release(&m);
    pd_tensor_release(&x);
    teardown(&f);
}
