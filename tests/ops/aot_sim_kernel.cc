// aot_sim_kernel.cc - a MindSpore AOT kernel of the simulated device (pd_sim_device.h), for
// aot_device_test.c: the device half of the calling convention without a GPU. Like a GPU
// kernel it gets device pointers (sim addresses, unreadable on the host), its workspace in
// device memory and the call's stream, on which it launches its work (pd_sim_launch queues it
// until something waits). out = x * scale + 1, through a workspace holding x * scale.
#include "custom_aot_extra.h"
#include "pd_sim_device.h"

#include <cstdint>

namespace {

struct Job {
    const void *x;
    void *ws, *out;
    int64_t n;
    float scale;
};

void run(void *arg)
{
    Job *j = static_cast<Job *>(arg);
    const float *x = static_cast<const float *>(pd_sim_host_address(j->x));
    float *ws = static_cast<float *>(pd_sim_host_address(j->ws));
    float *out = static_cast<float *>(pd_sim_host_address(j->out));
    for (int64_t i = 0; i < j->n; ++i) {
        ws[i] = x[i] * j->scale;
        out[i] = ws[i] + 1;
    }
    delete j;
}

int64_t numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d)
        n *= shape[d];
    return n;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int SimScaleInit(int *ndims, int64_t **shapes,
                                                                   const char **, AotExtra *extra)
{
    extra->SetWorkSpace({static_cast<size_t>(numel(ndims[0], shapes[0])) * sizeof(float)});
    return 0;
}

// Return codes: 1 wrong nparam, 4 no stream, 5 a pointer that is not device memory.
extern "C" __attribute__((visibility("default"))) int SimScale(int nparam, void **params,
                                                               int *ndims, int64_t **shapes,
                                                               const char **, void *stream,
                                                               void *extra)
{
    if (nparam != 3)
        return 1;
    if (stream == nullptr)
        return 4;
    for (int i = 0; i < 3; ++i)
        if (pd_sim_host_address(params[i]) == nullptr)
            return 5;
    float scale = static_cast<AotExtra *>(extra)->Attr<float>("scale");
    Job *j = new Job{params[0], params[2], params[1], numel(ndims[0], shapes[0]), scale};
    return pd_sim_launch(stream, run, j) == PD_OK ? 0 : 6;
}
