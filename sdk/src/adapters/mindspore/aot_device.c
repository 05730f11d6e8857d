/*
 * aot_device.c - where an AOT kernel runs. MindSpore hands a GPU kernel device pointers and
 * the op's cudaStream_t, a CPU kernel host pointers and a NULL stream; the adapter does the
 * same from the call's places: a CPU kernel takes CPU tensors only, a device kernel (a GPU
 * kernel: .cu, or a library calling the CUDA runtime; a kernel of the simulated device, which
 * launches with pd_sim_launch) takes tensors of its device type only and gets pd_stream(ctx),
 * the stream the runner gives every kernel of the call's device, and workspaces in device
 * memory. Inputs on the wrong place end the call with a message naming the input, its place
 * and the kernel's; a GPU kernel given CPU tensors also says whether a CUDA device exists
 * here (pd_device_count's message when it does not). The runner allocates the outputs on the
 * inputs' place, so they follow.
 *
 * Also the check of an output given both a shape at registration and an FInferShape answer.
 */
#include "adapters/mindspore/aot_load.h"

#include "pd_device.h"

#include <stdio.h>
#include <string.h>

/* " (and no CUDA device is available here: <why>)" when none is, else "". */
static void gpu_availability(char *buf, size_t cap)
{
    int32_t count = 0;
    buf[0] = '\0';
    if (pd_device_count(PD_PLACE_GPU, &count) != PD_OK)
        snprintf(buf, cap, "; and no CUDA device is available here: %s", pd_last_error());
    else if (count == 0)
        snprintf(buf, cap, "; and this machine has no CUDA device");
}

void *pd_aoti_call_stream(pd_kernel_ctx *ctx, const pd_aoti_op *op)
{
    for (int32_t i = 0; i < op->n_inputs; ++i) {
        const pd_place *p = &ctx->in[i].tensors[0].place;
        if (op->device == NULL) {
            if (pd__place_ok(p))
                continue;
            pd__ctx_throw(PD_ERR_UNAVAILABLE,
                          "input %d ('%s') is on %s:%d, but '%s' in '%s' is a CPU AOT kernel "
                          "(stream NULL, host pointers): pass CPU tensors, or build the kernel "
                          "for that device",
                          (int)i, op->input_names[i], pd_place_type_name(p), (int)p->device_id,
                          op->function, op->library);
        }
        const char *type = pd_place_type_name(p);
        if (type && strcmp(type, op->device) == 0)
            continue;
        char why[768] = "";
        if (op->cuda)
            gpu_availability(why, sizeof why);
        pd__ctx_throw(PD_ERR_UNAVAILABLE,
                      "'%s' in '%s' is a %s AOT kernel: it runs on %s tensors with the call's "
                      "stream, but input %d ('%s') is on %s:%d; copy the inputs to a %s place "
                      "(pd_tensor_copy_to)%s",
                      op->function, op->library, op->cuda ? "GPU" : op->device, op->device, (int)i,
                      op->input_names[i], type ? type : "an unknown place", (int)p->device_id,
                      op->device, why);
    }
    if (op->device == NULL)
        return NULL;
    if (op->n_inputs == 0)
        pd__ctx_throw(PD_ERR_UNAVAILABLE,
                      "'%s' in '%s' is a %s AOT kernel with no inputs: the device it would run "
                      "on is unknown (pdext runs a call on its inputs' device)",
                      op->function, op->library, op->cuda ? "GPU" : op->device);
    return pd_runtime_api()->stream(ctx);
}

void *pd_aoti_workspace(pd_kernel_ctx *ctx, const pd_aoti_op *op, size_t bytes)
{
    const pd_api *api = pd_runtime_api();
    if (op->device == NULL)
        return api->scratch(ctx, bytes);
    int64_t n = (int64_t)bytes;
    return api->empty(ctx, PD_UINT8, ctx->in[0].tensors[0].place, 1, &n)->data;
}

/* "[2, 3]" into buf. */
void pd_aoti_check_given_shape(const pd_aoti_op *op, int32_t j, int32_t ndim, const int64_t *shape)
{
    const pd_aot_output *o = &op->outputs[j];
    bool same = ndim == o->ndim;
    for (int32_t d = 0; same && d < ndim; ++d)
        same = shape[d] == o->shape[d] || shape[d] == -1;
    if (same)
        return;
    char inferred[160], given[160];
    pd__dims_text(ndim, shape, inferred, sizeof inferred);
    pd__dims_text(o->ndim, o->shape, given, sizeof given);
    pd__ctx_throw(PD_ERR_OP_FAILED,
                  "output %d ('%s'): function '%sInferShape' in '%s' answered %s (rank %d), but "
                  "the output the kernel writes was declared %s (rank %d): make them agree",
                  (int)j, op->output_names[j], op->function, op->library, inferred, (int)ndim,
                  given, (int)o->ndim);
}
