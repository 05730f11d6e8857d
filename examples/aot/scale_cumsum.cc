// scale_cumsum.cc - a MindSpore AOT kernel written for pdext's examples (CPU, float32):
//
//   out[i] = scale * (x[0] + ... + x[i]) + bias      over the flattened input
//
// It shows the parts of MindSpore's AOT interface a real kernel uses: attrs read through
// AotExtra::Attr<T> (scale: float, bias: float, reverse: bool, optional), a workspace declared
// by Init (the running sums), kernel data made by Init and read by every call, and an
// InferShape (the output has the input's shape). The same file builds for MindSpore
// (custom_aot_extra.h is MindSpore's interface) and runs under pdext unchanged:
//
//   pdext run scale_cumsum.cc:ScaleCumsum --input x.npy --attr scale=2 --attr bias=0.5 --out out
#include "custom_aot_extra.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

// What Init computes once per input shape: the element count and the attrs, read once.
struct ScaleCumsumData : public AotKernelData {
    int64_t n = 0;
    float scale = 1;
    float bias = 0;
    bool reverse = false;
};

int64_t numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d)
        n *= shape[d];
    return n;
}

} // namespace

extern "C" std::vector<int64_t> ScaleCumsumInferShape(int *ndims, int64_t **shapes, AotExtra *)
{
    return std::vector<int64_t>(shapes[0], shapes[0] + ndims[0]);
}

extern "C" int ScaleCumsumInit(int *ndims, int64_t **shapes, const char **dtypes, AotExtra *extra)
{
    if (std::strcmp(dtypes[0], "float32") != 0)
        return 2; // MindSpore's convention: 2 is a wrong dtype
    auto *data = new ScaleCumsumData();
    data->n = numel(ndims[0], shapes[0]);
    data->scale = extra->Attr<float>("scale");
    data->bias = extra->Attr<float>("bias");
    data->reverse = extra->HasAttr("reverse") && extra->Attr<bool>("reverse");
    extra->SetWorkSpace({static_cast<size_t>(data->n) * sizeof(float)});
    extra->SetKernelData(data);
    return 0;
}

extern "C" int ScaleCumsum(int nparam, void **params, int *, int64_t **, const char **, void *,
                           void *extra)
{
    if (nparam != 3) // input, output, workspace
        return 1;
    const auto *d = static_cast<const ScaleCumsumData *>(
        static_cast<AotExtra *>(extra)->KernelData());
    const float *x = static_cast<const float *>(params[0]);
    float *out = static_cast<float *>(params[1]);
    float *sums = static_cast<float *>(params[2]);
    float acc = 0;
    for (int64_t k = 0; k < d->n; ++k) {
        int64_t i = d->reverse ? d->n - 1 - k : k;
        acc += x[i];
        sums[i] = acc;
    }
    for (int64_t i = 0; i < d->n; ++i)
        out[i] = d->scale * sums[i] + d->bias;
    return 0;
}
