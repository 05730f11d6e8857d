/*
 * sim_ops.c - test ops for device_sim_test.c and the executor's device tests: a relu that
 * runs on the CPU or, for tensors on the simulated device, as a function launched on the
 * call's stream (what a CUDA kernel does with pd_stream(ctx)), an op whose output says which
 * stream it ran on, and a CPU-only op whose kernel refuses other places.
 */
#include "extension.h"
#include "pd_sim_device.h"

#include <stdlib.h>

typedef struct relu_job {
    const float *in; /* host addresses of the sim memory */
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

static void sim_relu_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_dtype(x) == PD_FLOAT32, "x must be float32");
    pd_tensor *out = pd_output(ctx, 0);
    int64_t n = pd_numel(x);
    if (pd_is_cpu(x)) {
        PD_CHECK(pd_stream(ctx) == NULL, "the CPU has no stream handle");
        relu_job j = {pd_data(x), pd_data(out), n};
        relu_job *heap = malloc(sizeof *heap);
        PD_CHECK(heap != NULL);
        *heap = j;
        relu_run(heap);
        return;
    }
    PD_CHECK(pd_place_is_custom(x->place), "x must be on the CPU or the sim device");
    PD_CHECK(pd_place_equal(out->place, x->place), "the output is on the input's place");
    /* The job outlives the call (the stream runs it later): it is the job's to free. */
    relu_job *j = malloc(sizeof *j);
    PD_CHECK(j != NULL);
    j->in = pd_sim_host_address(pd_data(x));
    j->out = pd_sim_host_address(pd_data(out));
    j->n = n;
    PD_CHECK(j->in != NULL && j->out != NULL, "sim tensors have sim memory");
    PD_CHECK(pd_sim_launch(pd_stream(ctx), relu_run, j) == PD_OK);
}

PD_BUILD_OP(sim_relu,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = sim_relu_kernel);

static void cpu_only_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    PD_CHECK(pd_is_cpu(x), "x must be a CPU Tensor.");
    pd_set_output(ctx, 0, x);
}

PD_BUILD_OP(sim_cpu_only,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = cpu_only_kernel);

/* Two inputs of one shape: Out = X (the runner must refuse inputs on two devices). */
static void pair_kernel(pd_kernel_ctx *ctx) { pd_set_output(ctx, 0, pd_input(ctx, 0)); }

PD_BUILD_OP(sim_pair,
    .inputs = {"X", "Y"},
    .outputs = {"Out"},
    .kernel = pair_kernel);

/* Out (an int64 scalar on X's device) = the handle of the stream the call ran on, written by a
 * job on that stream (so that reading it also waits for the stream). */
typedef struct stream_job {
    int64_t *out;
    int64_t value;
} stream_job;

static void stream_run(void *arg)
{
    stream_job *j = arg;
    *j->out = j->value;
    free(j);
}

static void stream_of_kernel(pd_kernel_ctx *ctx)
{
    PD_CHECK(pd_place_is_custom(pd_input(ctx, 0)->place), "x must be on the sim device");
    stream_job *j = malloc(sizeof *j);
    PD_CHECK(j != NULL);
    j->out = pd_sim_host_address(pd_data(pd_output(ctx, 0)));
    j->value = (int64_t)(intptr_t)pd_stream(ctx);
    PD_CHECK(pd_sim_launch(pd_stream(ctx), stream_run, j) == PD_OK);
}

static void scalar_shape(pd_kernel_ctx *ctx) { pd_set_output_shape(ctx, 0, 0, NULL); }
static void int64_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_INT64); }

PD_BUILD_OP(sim_stream_of,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = stream_of_kernel,
    .infer_shape = scalar_shape,
    .infer_dtype = int64_dtype);
