/*
 * gpu_ops.c - a relu for test_device.py that runs on the CPU and on GPU places when the
 * simulated device serves as the CUDA plug-in (ds_sim_as_cuda): there GPU memory is sim
 * memory, so the kernel launches a host function on the call's stream (what a CUDA kernel
 * does with pd_stream(ctx)) over pd_sim_host_address of the tensors.
 */
#include "extension.h"
#include "pd_sim_device.h"

#include <stdlib.h>

typedef struct relu_job {
    const float *in;
    float *out;
    int64_t n;
} relu_job;

static void relu_run(void *arg)
{
    relu_job *j = arg;
    for (int64_t i = 0; i < j->n; ++i)
        j->out[i] = j->in[i] > 0 ? j->in[i] : 0;
    free(j);
}

static void relu_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == PD_FLOAT32, "x must be float32");
    pd_tensor *out = pd_output(ctx, 0);
    relu_job *j = malloc(sizeof *j);
    PD_CHECK(j != NULL);
    j->n = pd_numel(x);
    if (pd_is_cpu(x)) {
        j->in = pd_data(x);
        j->out = pd_data(out);
        relu_run(j);
        return;
    }
    j->in = pd_sim_host_address(pd_data(x));
    j->out = pd_sim_host_address(pd_data(out));
    if (j->in == NULL || j->out == NULL) {
        free(j);
        PD_THROW("x must be on the CPU or on the sim served as CUDA");
    }
    /* The job outlives the call (the stream runs it later): it is the job's to free. */
    if (pd_sim_launch(pd_stream(ctx), relu_run, j) != PD_OK) {
        free(j);
        PD_THROW("the launch failed");
    }
}

PD_BUILD_OP(custom_relu,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = relu_kernel);

/* Two inputs: Out = X (the runner refuses inputs on two places before the kernel runs). */
static void pair_kernel(pd_kernel_ctx *ctx) { pd_set_output(ctx, 0, pd_input(ctx, 0)); }

PD_BUILD_OP(custom_pair,
    .inputs = {"X", "Y"},
    .outputs = {"Out"},
    .kernel = pair_kernel);
