/*
 * grad_binding_test.c - the grad op's binding (autograd/grad_math.c: pd__grad_input_source,
 * pd__grad_output_target), the one rule the tape and gradcheck read: each input of a grad op
 * is a forward input, a forward output or the gradient of a forward output, and each output
 * the gradient of a forward input. Linked against the static library, whose hidden functions
 * it calls.
 */
#include "autograd/autograd.h"
#include "pd_test.h"

static pd_registry *registry_of(const char *module)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK ||
        pd_module_load(reg, pd_test_path(module), NULL) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "loading %s: %s", module, pd_last_error());
    return reg;
}

static void expect_source(const pd_op *fwd, const pd_op *g, int32_t gi, pd__grad_from kind,
                          int32_t index)
{
    int32_t p = -2;
    PD_EXPECT_EQ((int)pd__grad_input_source(fwd, g, gi, &p), (int)kind);
    PD_EXPECT_EQ(p, index);
}

/* relu's grad op takes X (forward input 0), Out (forward output 0) and Out@GRAD (the
 * gradient of output 0), and makes X@GRAD (of input 0). */
PD_TEST(GradBinding, InputsOutputsAndOutputGradsOfTheForwardOp)
{
    pd_registry *reg = registry_of("cli_relu.so");
    const pd_op *fwd = pd_op_find(reg, "custom_relu"), *g = pd_op_find(reg, "custom_relu_grad");
    PD_ASSERT(fwd != NULL && g != NULL);
    expect_source(fwd, g, 0, PD__GRAD_FROM_INPUT, 0);
    expect_source(fwd, g, 1, PD__GRAD_FROM_OUTPUT, 0);
    expect_source(fwd, g, 2, PD__GRAD_FROM_OUTPUT_GRAD, 0);
    expect_source(fwd, g, 3, PD__GRAD_FROM_NONE, -1); /* out of range */
    PD_EXPECT_EQ(pd__grad_output_target(fwd, g, 0), 0);
    PD_EXPECT_EQ(pd__grad_output_target(fwd, g, 1), -1);
    pd_registry_destroy(reg);
}

/* A double grad op, bound to the grad op as its forward op: "Out@GRAD" is an input of the grad
 * op (no output of it is named Out), "X@GRAD@GRAD" the gradient of its output X@GRAD. */
PD_TEST(GradBinding, ADoubleGradOpBindsToTheGradOp)
{
    pd_registry *reg = registry_of("tp_tape_ops.so");
    const pd_op *g = pd_op_find(reg, "tp_square_grad"),
                *gg = pd_op_find(reg, "tp_square_grad_grad");
    PD_ASSERT(g != NULL && gg != NULL);
    expect_source(g, gg, 0, PD__GRAD_FROM_INPUT, 0);
    expect_source(g, gg, 1, PD__GRAD_FROM_INPUT, 1);
    expect_source(g, gg, 2, PD__GRAD_FROM_OUTPUT_GRAD, 0);
    PD_EXPECT_EQ(pd__grad_output_target(g, gg, 0), 0); /* X@GRAD: of X */
    PD_EXPECT_EQ(pd__grad_output_target(g, gg, 1), 1); /* Out@GRAD@GRAD: of Out@GRAD */
    pd_registry_destroy(reg);
}
