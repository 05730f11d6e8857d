/*
 * sim_relu.h - the relu the test op modules run on the simulated device (tests/ops/sim_ops.c,
 * tests/python/ops/gpu_ops.c): a host function launched on the call's stream over the sim
 * memory's host pages, as a CUDA kernel launches on pd_stream(ctx). The job outlives the
 * call (the stream runs it when something waits), so it frees itself; a launch that fails
 * frees it and throws, which leaves nothing behind.
 */
#ifndef SIM_RELU_H
#define SIM_RELU_H

#include "extension.h"
#include "pd_sim_device.h"

#include <stdlib.h>

typedef struct relu_job {
    const float *in;
    float *out;
    int64_t n;
} relu_job;

static void relu_span(const relu_job *j)
{
    for (int64_t i = 0; i < j->n; ++i)
        j->out[i] = j->in[i] > 0 ? j->in[i] : 0;
}

/* The job on the stream: runs, then frees itself. */
static void relu_run(void *arg)
{
    relu_span(arg);
    free(arg);
}

/* Queues fn(job) on the call's stream; on failure frees the job and throws. */
static void sim_launch_job(pd_kernel_ctx *ctx, void (*fn)(void *), void *job)
{
    if (pd_sim_launch(pd_stream(ctx), fn, job) != PD_OK) {
        free(job);
        PD_THROW("the launch on the sim stream failed");
    }
}

/* out = relu(x), float32: at once on the CPU, else queued on the call's sim stream. */
static void sim_relu(pd_kernel_ctx *ctx, const pd_tensor *x, pd_tensor *out)
{
    PD_CHECK(pd_dtype(x) == PD_FLOAT32, "x must be float32");
    relu_job j = {pd_data(x), pd_data(out), pd_numel(x)};
    if (pd_is_cpu(x)) {
        PD_CHECK(pd_stream(ctx) == NULL, "the CPU has no stream handle");
        relu_span(&j);
        return;
    }
    j.in = pd_sim_host_address(pd_data(x));
    j.out = pd_sim_host_address(pd_data(out));
    PD_CHECK(j.in != NULL && j.out != NULL, "x must be on the CPU or in sim memory");
    relu_job *heap = malloc(sizeof *heap);
    PD_CHECK(heap != NULL, "out of memory");
    *heap = j;
    sim_launch_job(ctx, relu_run, heap);
}

#endif /* SIM_RELU_H */
