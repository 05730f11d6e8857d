/*
 * tape_train_test.c - examples/train: its ops pass gradcheck at the shapes the model uses
 * (train_linear with X [N, D], W [D, K], B [K]; the softmax cross-entropy with int64 labels,
 * which gradcheck skips by name), and the example program, trained with the tape, brings the
 * loss below half its first value.
 */
#include "pdext_gradcheck.h"
#include "runner_helpers.h"

#include <stdlib.h>
#include <sys/wait.h>

static pd_tensor rand_f64(int32_t ndim, const int64_t *shape)
{
    pd_tensor t = rt_tensor(PD_FLOAT64, ndim, shape, NULL);
    for (int64_t i = 0; i < pd_numel(&t); ++i)
        rt_set(&t, i, pd_test_uniform(-1, 1));
    return t;
}

PD_TEST(TapeTrain, LinearOpPassesGradcheckForEveryInput)
{
    pd_registry *reg = rt_registry1("tp_train_ops");
    PD_ASSERT(reg != NULL);
    const int64_t sx[2] = {4, 3}, sw[2] = {3, 5}, sb[1] = {5};
    pd_tensor x = rand_f64(2, sx), w = rand_f64(2, sw), b = rand_f64(1, sb);
    pd_arg in[3] = {pd_arg_of(&x), pd_arg_of(&w), pd_arg_of(&b)};
    pd_gradcheck_report rep;
    PD_ASSERT_OK(pd_gradcheck(reg, "train_linear", in, 3, NULL, 0, NULL, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.inputs_checked, 3);
    PD_EXPECT_EQ(rep.elements, 12 + 15 + 5);
    pd_tensor_release(&b);
    pd_tensor_release(&w);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(TapeTrain, CrossEntropyPassesGradcheckAndSkipsTheLabels)
{
    pd_registry *reg = rt_registry1("tp_train_ops");
    PD_ASSERT(reg != NULL);
    const int64_t sl[2] = {4, 3}, sy[1] = {4};
    pd_tensor logits = rand_f64(2, sl);
    pd_tensor label = rt_tensor(PD_INT64, 1, sy, (double[]){0, 2, 1, 2});
    pd_arg in[2] = {pd_arg_of(&logits), pd_arg_of(&label)};
    pd_gradcheck_report rep;
    PD_ASSERT_OK(pd_gradcheck(reg, "train_softmax_xent", in, 2, NULL, 0, NULL, &rep));
    PD_EXPECT(rep.passed);
    PD_EXPECT_EQ(rep.inputs_checked, 1);
    PD_EXPECT_CONTAINS(rep.skipped, "input 'Label' is int64, not differentiable");
    pd_tensor_release(&label);
    pd_tensor_release(&logits);
    pd_registry_destroy(reg);
}

PD_TEST(TapeTrain, ExampleProgramBringsTheLossDown)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' 100 > '%s' 2>&1", pd_test_path("tp_train_example"),
             pd_test_path("tp_train_ops.so"), pd_test_path("rt_example_relu.so"),
             pd_test_path("tp_train_example.out"));
    int status = system(cmd);
    char out[4096] = "";
    FILE *fp = fopen(pd_test_path("tp_train_example.out"), "r");
    size_t n = fp ? fread(out, 1, sizeof out - 1, fp) : 0;
    out[n] = '\0';
    if (fp)
        fclose(fp);
    PD_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *text = out;
    PD_EXPECT_CONTAINS(text, "went down");
    /* the numbers themselves, from the summary line "loss A -> B: ..." */
    const char *summary = strstr(out, "\nloss ");
    double first = 0, last = 0;
    PD_ASSERT(summary != NULL);
    PD_ASSERT(sscanf(summary + 1, "loss %lf -> %lf", &first, &last) == 2);
    PD_EXPECT(first > 0.5);
    PD_EXPECT(last < first / 2);
}
