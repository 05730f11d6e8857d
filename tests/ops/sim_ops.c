/*
 * sim_ops.c - test ops for device_sim_test.c and the executor's device tests: a relu that
 * runs on the CPU or, for tensors on the simulated device, as a function launched on the
 * call's stream (what a CUDA kernel does with pd_stream(ctx)), an op whose output says which
 * stream it ran on, and a CPU-only op whose kernel refuses other places.
 */
#include "sim_relu.h"

static void sim_relu_kernel(pd_kernel_ctx *ctx)
{
    const pd_tensor *x = pd_input(ctx, 0);
    pd_tensor *out = pd_output(ctx, 0);
    PD_CHECK(pd_is_cpu(x) || pd_place_is_custom(x->place),
             "x must be on the CPU or the sim device");
    PD_CHECK(pd_place_equal(out->place, x->place), "the output is on the input's place");
    sim_relu(ctx, x, out);
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
    int64_t *out = pd_sim_host_address(pd_data(pd_output(ctx, 0)));
    PD_CHECK(out != NULL, "the output is sim memory");
    stream_job *j = malloc(sizeof *j);
    PD_CHECK(j != NULL, "out of memory");
    j->out = out;
    j->value = (int64_t)(intptr_t)pd_stream(ctx);
    sim_launch_job(ctx, stream_run, j);
}

static void scalar_shape(pd_kernel_ctx *ctx) { pd_set_output_shape(ctx, 0, 0, NULL); }
static void int64_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_INT64); }

PD_BUILD_OP(sim_stream_of,
    .inputs = {"X"},
    .outputs = {"Out"},
    .kernel = stream_of_kernel,
    .infer_shape = scalar_shape,
    .infer_dtype = int64_dtype);
