/*
 * train.c - a tiny classifier trained with pdext ops and the autograd tape: three Gaussian
 * blobs in the plane, a two-layer network linear(2 -> 16) -> relu -> linear(16 -> 3) -> softmax
 * cross-entropy, plain gradient descent. Every layer is an op (train_ops.c, examples/relu);
 * each step records the forward pass on a pd_tape and pd_tape_backward gives the gradients of
 * the four parameters; the host applies the update itself.
 *
 *     cc -O2 -shared -fPIC -I<prefix>/include/pdext train_ops.c -o train_ops.so -lm
 *     cc -O2 -shared -fPIC -I<prefix>/include/pdext ../relu/relu.c -o relu.so
 *     cc -O2 train.c -o train $(pkg-config --cflags --libs pdext)
 *     ./train ./train_ops.so ./relu.so [steps]
 *
 * Prints the loss as it goes and exits 0 when the last loss is below half the first.
 */
#include <pdext.h>
#include <pdext_tape.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 96    /* samples */
#define D 2     /* features */
#define H 16    /* hidden units */
#define K 3     /* classes */
#define LR 0.5f /* learning rate */

static uint64_t rng = 42;
static double uniform(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / (double)(1ull << 53);
}
static double normal(void)
{
    return sqrt(-2 * log(uniform() + 1e-300)) * cos(6.283185307 * uniform());
}

static bool ok(pd_status st, const char *what)
{
    if (st != PD_OK)
        fprintf(stderr, "train: %s: %s\n", what, pd_last_error());
    return st == PD_OK;
}

/* A float32 tensor of the shape with normal values times `scale` (0: zeros). */
static bool param(pd_tensor *t, int32_t ndim, const int64_t *shape, double scale)
{
    if (!ok(pd_tensor_zeros(t, PD_FLOAT32, pd_place_cpu(), ndim, shape), "allocating"))
        return false;
    for (int64_t i = 0; i < pd_numel(t); ++i)
        ((float *)t->data)[i] = (float)(scale * normal());
    return true;
}

/* out = op(in...) recorded on the tape. */
static bool run(pd_tape *tape, const pd_registry *reg, const char *name, pd_tensor *in, int32_t n,
                pd_tensor *out)
{
    pd_arg args[3], o = pd_arg_of(out);
    for (int32_t i = 0; i < n; ++i)
        args[i] = pd_arg_of(&in[i]);
    return ok(pd_tape_run(tape, pd_op_find(reg, name), args, n, NULL, 0, &o, 1), name);
}

/* One forward pass on the tape; *loss gets the loss tensor. */
static bool forward(pd_tape *tape, const pd_registry *reg, pd_tensor *x, pd_tensor *label,
                    pd_tensor *p, pd_tensor *loss)
{
    pd_tensor h = PD_TENSOR_UNDEFINED, a = PD_TENSOR_UNDEFINED, z = PD_TENSOR_UNDEFINED;
    bool good = run(tape, reg, "train_linear", (pd_tensor[]){*x, p[0], p[1]}, 3, &h) &&
                run(tape, reg, "custom_relu", &h, 1, &a) &&
                run(tape, reg, "train_linear", (pd_tensor[]){a, p[2], p[3]}, 3, &z) &&
                run(tape, reg, "train_softmax_xent", (pd_tensor[]){z, *label}, 2, loss);
    pd_tensor_release(&h); /* the tape keeps its own references */
    pd_tensor_release(&a);
    pd_tensor_release(&z);
    return good;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TRAIN_OPS.so RELU.so [steps]\n", argv[0]);
        return 2;
    }
    int steps = argc > 3 ? atoi(argv[3]) : 200;
    pd_registry *reg = NULL;
    pd_tape *tape = NULL;
    if (!ok(pd_registry_create(&reg), "registry") ||
        !ok(pd_module_load(reg, argv[1], NULL), argv[1]) ||
        !ok(pd_module_load(reg, argv[2], NULL), argv[2]) || !ok(pd_tape_create(&tape), "tape"))
        return 1;

    /* data: class c around the point at angle 2 pi c / K, radius 2 */
    const int64_t xs[2] = {N, D}, ls[1] = {N};
    pd_tensor x, label, p[4];
    if (!ok(pd_tensor_empty(&x, PD_FLOAT32, pd_place_cpu(), 2, xs), "data") ||
        !ok(pd_tensor_empty(&label, PD_INT64, pd_place_cpu(), 1, ls), "labels"))
        return 1;
    for (int64_t i = 0; i < N; ++i) {
        int64_t c = i % K;
        ((int64_t *)label.data)[i] = c;
        ((float *)x.data)[i * D + 0] = (float)(2 * cos(6.283185307 * (double)c / K) +
                                               0.5 * normal());
        ((float *)x.data)[i * D + 1] = (float)(2 * sin(6.283185307 * (double)c / K) +
                                               0.5 * normal());
    }
    const int64_t s0[2] = {D, H}, s1[1] = {H}, s2[2] = {H, K}, s3[1] = {K};
    if (!param(&p[0], 2, s0, 0.5) || !param(&p[1], 1, s1, 0) || !param(&p[2], 2, s2, 0.5) ||
        !param(&p[3], 1, s3, 0))
        return 1;

    double first = 0, last = 0;
    for (int step = 0; step <= steps; ++step) {
        pd_tensor loss = PD_TENSOR_UNDEFINED, grads[4];
        pd_tape_clear(tape);
        if (!forward(tape, reg, &x, &label, p, &loss) ||
            !ok(pd_tape_backward(tape, &loss, NULL, 1, p, 4, grads), "backward"))
            return 1;
        last = ((float *)loss.data)[0];
        if (step == 0)
            first = last;
        if (step % 50 == 0 || step == steps)
            printf("step %4d  loss %.4f\n", step, last);
        for (int k = 0; k < 4; ++k) {
            for (int64_t i = 0; i < pd_numel(&p[k]); ++i)
                ((float *)p[k].data)[i] -= LR * ((float *)grads[k].data)[i];
            pd_tensor_release(&grads[k]);
        }
        pd_tensor_release(&loss);
    }
    printf("loss %.4f -> %.4f: %s\n", first, last,
           last < first / 2 ? "went down" : "DID NOT go down");
    pd_tape_destroy(tape);
    for (int k = 0; k < 4; ++k)
        pd_tensor_release(&p[k]);
    pd_tensor_release(&x);
    pd_tensor_release(&label);
    pd_registry_destroy(reg);
    return last < first / 2 ? 0 : 1;
}
