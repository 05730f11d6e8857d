/*
 * grad_binding_test.c - the grad op's binding as pdext.h publishes it (pd_op_grad_input_source,
 * pd_op_grad_output_target), computed once when a grad op is registered and read by the tape,
 * gradcheck and the framework fronts: each input of a grad op is a forward input, a forward
 * output or the gradient of a forward output, in any declared order, and each output the
 * gradient of a forward input. Modules: grad_binding_ops.c, tape_ops.c, the relu example.
 */
#include "pd_test.h"
#include "pdext.h"

static pd_registry *registry_of(const char *module)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK ||
        pd_module_load(reg, pd_test_path(module), NULL) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "loading %s: %s", module, pd_last_error());
    return reg;
}

static const pd_op *find(const pd_registry *reg, const char *name)
{
    const pd_op *op = pd_op_find(reg, name);
    if (op == NULL)
        pd_test_fail(__FILE__, __LINE__, "no op %s: %s", name, pd_last_error());
    return op;
}

static void expect_source(const pd_op *g, int32_t gi, pd_grad_source kind, int32_t index)
{
    int32_t p = -2;
    PD_EXPECT_EQ((int)pd_op_grad_input_source(g, gi, &p), (int)kind);
    PD_EXPECT_EQ(p, index);
}

/* relu's grad op takes X (forward input 0), Out (forward output 0) and Out@GRAD (the
 * gradient of output 0), and makes X@GRAD (of input 0). */
PD_TEST(GradBinding, InputsOutputsAndOutputGradsOfTheForwardOp)
{
    pd_registry *reg = registry_of("cli_relu.so");
    const pd_op *g = find(reg, "custom_relu_grad");
    expect_source(g, 0, PD_GRAD_FROM_INPUT, 0);
    expect_source(g, 1, PD_GRAD_FROM_OUTPUT, 0);
    expect_source(g, 2, PD_GRAD_FROM_OUTPUT_GRAD, 0);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 0), 0);
    pd_registry_destroy(reg);
}

/* The declared order is free: Out, Out@GRAD, Y, X in, Y@GRAD, X@GRAD out. */
PD_TEST(GradBinding, AShuffledOrderBindsByName)
{
    pd_registry *reg = registry_of("gb_ops.so");
    const pd_op *g = find(reg, "gb_mul_grad");
    expect_source(g, 0, PD_GRAD_FROM_OUTPUT, 0);
    expect_source(g, 1, PD_GRAD_FROM_OUTPUT_GRAD, 0);
    expect_source(g, 2, PD_GRAD_FROM_INPUT, 1);
    expect_source(g, 3, PD_GRAD_FROM_INPUT, 0);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 0), 1);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 1), 0);
    pd_registry_destroy(reg);
}

/* An input and an output named after nothing of the forward op bind to nothing; the op still
 * registers (the tape and gradcheck refuse it when asked to run it, naming the input). */
PD_TEST(GradBinding, ANameOfNothingBindsToNothing)
{
    pd_registry *reg = registry_of("gb_ops.so");
    const pd_op *g = find(reg, "gb_stray_grad");
    expect_source(g, 0, PD_GRAD_FROM_OUTPUT_GRAD, 0);
    expect_source(g, 1, PD_GRAD_FROM_NONE, -1);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 0), 0);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 1), -1);
    pd_registry_destroy(reg);
}

/* @VECTOR is not part of the name that binds: "Parts@VECTOR@GRAD" is the gradient of the
 * vector output Parts, "X@VECTOR" the vector input X, "X@VECTOR@GRAD" its gradient. */
PD_TEST(GradBinding, VectorsBindByTheirNames)
{
    pd_registry *reg = registry_of("gb_ops.so");
    const pd_op *g = find(reg, "gb_vec_grad");
    expect_source(g, 0, PD_GRAD_FROM_OUTPUT_GRAD, 0);
    expect_source(g, 1, PD_GRAD_FROM_INPUT, 1);
    expect_source(g, 2, PD_GRAD_FROM_INPUT, 0);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 0), 1);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 1), 0);
    pd_registry_destroy(reg);
}

/* A double grad op binds to the grad op as its forward op: "Out@GRAD" is an input of the grad
 * op (no output of it is named Out), "X@GRAD@GRAD" the gradient of its output X@GRAD. */
PD_TEST(GradBinding, ADoubleGradOpBindsToTheGradOp)
{
    pd_registry *reg = registry_of("tp_tape_ops.so");
    const pd_op *gg = find(reg, "tp_square_grad_grad");
    expect_source(gg, 0, PD_GRAD_FROM_INPUT, 0);
    expect_source(gg, 1, PD_GRAD_FROM_INPUT, 1);
    expect_source(gg, 2, PD_GRAD_FROM_OUTPUT_GRAD, 0);
    PD_EXPECT_EQ(pd_op_grad_output_target(gg, 0), 0); /* X@GRAD: of X */
    PD_EXPECT_EQ(pd_op_grad_output_target(gg, 1), 1); /* Out@GRAD@GRAD: of Out@GRAD */
    pd_registry_destroy(reg);
}

/* A forward op, a NULL op and indices out of range bind to nothing, and *position may be
 * NULL. */
PD_TEST(GradBinding, NothingElseBinds)
{
    pd_registry *reg = registry_of("gb_ops.so");
    const pd_op *fwd = find(reg, "gb_mul"), *g = find(reg, "gb_mul_grad");
    expect_source(fwd, 0, PD_GRAD_FROM_NONE, -1);
    PD_EXPECT_EQ(pd_op_grad_output_target(fwd, 0), -1);
    expect_source(NULL, 0, PD_GRAD_FROM_NONE, -1);
    PD_EXPECT_EQ(pd_op_grad_output_target(NULL, 0), -1);
    expect_source(g, 4, PD_GRAD_FROM_NONE, -1);
    expect_source(g, -1, PD_GRAD_FROM_NONE, -1);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 2), -1);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, -1), -1);
    PD_EXPECT_EQ((int)pd_op_grad_input_source(g, 1, NULL), (int)PD_GRAD_FROM_OUTPUT_GRAD);
    pd_registry_destroy(reg);
}

/* The binding follows the forward op the grad op is linked to: with the forward op's module
 * unloaded the grad op binds to nothing, and with another version loaded (Y moved from input
 * 1 to input 0) it binds to that version. */
PD_TEST(GradBinding, FollowsTheForwardOpAcrossUnloadAndReload)
{
    pd_registry *reg = NULL;
    pd_module *v1 = NULL, *v2 = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_ASSERT_OK(pd_module_load(reg, pd_test_path("gb_split_fwd_v1.so"), &v1));
    PD_ASSERT_OK(pd_module_load(reg, pd_test_path("gb_split_grad.so"), NULL));
    const pd_op *g = find(reg, "gbs_grad");
    expect_source(g, 0, PD_GRAD_FROM_INPUT, 1);
    expect_source(g, 1, PD_GRAD_FROM_OUTPUT_GRAD, 0);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 0), 1);

    PD_ASSERT_OK(pd_module_unload(v1));
    expect_source(g, 0, PD_GRAD_FROM_NONE, -1);
    expect_source(g, 1, PD_GRAD_FROM_NONE, -1);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 0), -1);

    PD_ASSERT_OK(pd_module_load(reg, pd_test_path("gb_split_fwd_v2.so"), &v2));
    expect_source(g, 0, PD_GRAD_FROM_INPUT, 0);
    expect_source(g, 1, PD_GRAD_FROM_OUTPUT_GRAD, 0);
    PD_EXPECT_EQ(pd_op_grad_output_target(g, 0), 0);
    PD_EXPECT(pd_op_grad(find(reg, "gbs")) == g);
    pd_registry_destroy(reg);
}
