// aot_kernels.cc - MindSpore AOT kernels for the adapter's tests (aot_test.c), written against
// custom_aot_extra.h the way MindSpore's users write them: extern "C" functions in the AOT
// calling convention, with Init, InferShape and InferType companions. Built twice (tests/
// aot.cmake): with -D_GLIBCXX_USE_CXX11_ABI=0 as MindSpore builds kernels, and with the default.
#include "custom_aot_extra.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#define AOT_EXPORT extern "C" __attribute__((visibility("default")))

static int64_t numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d)
        n *= shape[d];
    return n;
}

// out = a + b (float32); returns 1 for a wrong nparam, 2 for a wrong dtype, as MindSpore's
// examples do.
AOT_EXPORT int CustomAdd(int nparam, void **params, int *ndims, int64_t **shapes,
                         const char **dtypes, void *stream, void *extra)
{
    (void)stream;
    (void)extra;
    if (nparam != 3)
        return 1;
    if (std::strcmp(dtypes[0], "float32") != 0 || std::strcmp(dtypes[2], "float32") != 0)
        return 2;
    const float *a = static_cast<const float *>(params[0]);
    const float *b = static_cast<const float *>(params[1]);
    float *out = static_cast<float *>(params[2]);
    for (int64_t i = 0, n = numel(ndims[2], shapes[2]); i < n; ++i)
        out[i] = a[i] + b[i];
    return 0;
}

// out = x * scale + offset, then negated when mode == "neg"; attrs read with Attr<T>.
AOT_EXPORT int CustomAffine(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *stream, void *extra)
{
    (void)stream;
    (void)dtypes;
    if (nparam != 2)
        return 1;
    AotExtra *e = static_cast<AotExtra *>(extra);
    float scale = e->Attr<float>("scale");
    int64_t offset = e->Attr<int64_t>("offset");
    bool neg = e->HasAttr("mode") && e->Attr<std::string>("mode") == "neg";
    const float *x = static_cast<const float *>(params[0]);
    float *out = static_cast<float *>(params[1]);
    for (int64_t i = 0, n = numel(ndims[0], shapes[0]); i < n; ++i) {
        float v = x[i] * scale + static_cast<float>(offset);
        out[i] = neg ? -v : v;
    }
    return 0;
}

// Reads every attr kind into a float64 output of 8 values:
// [bool, int, float, ivec sum, fvec sum, 2-D ivec sum, 2-D fvec sum, string length].
AOT_EXPORT int CustomAttrs(int nparam, void **params, int *, int64_t **, const char **, void *,
                           void *extra)
{
    if (nparam != 2)
        return 1;
    AotExtra *e = static_cast<AotExtra *>(extra);
    double *out = static_cast<double *>(params[1]);
    out[0] = e->Attr<bool>("b");
    out[1] = static_cast<double>(e->Attr<int64_t>("i"));
    out[2] = e->Attr<float>("f");
    double s = 0;
    for (int64_t v : e->Attr<std::vector<int64_t>>("iv"))
        s += static_cast<double>(v);
    out[3] = s;
    s = 0;
    for (float v : e->Attr<std::vector<float>>("fv"))
        s += v;
    out[4] = s;
    s = 0;
    for (const auto &row : e->Attr<std::vector<std::vector<int64_t>>>("im"))
        for (int64_t v : row)
            s += static_cast<double>(v);
    out[5] = s;
    s = 0;
    for (const auto &row : e->Attr<std::vector<std::vector<float>>>("fm"))
        for (float v : row)
            s += v;
    out[6] = s;
    out[7] = static_cast<double>(e->Attr<std::string>("str").size());
    return 0;
}

// Cumulative sum through a workspace: Init asks for n * 4 - 4 bytes and the kernel writes n
// floats there (as one of MindSpore's own tests does, relying on the 512-byte rounding); the
// kernel data counts the calls of this signature.
struct CumsumData : public AotKernelData {
    int64_t n = 0;
    int64_t calls = 0;
    ~CumsumData() override { ++destroyed; }
    static int64_t destroyed;
};
int64_t CumsumData::destroyed = 0;

AOT_EXPORT int64_t CustomCumsumDestroyed() { return CumsumData::destroyed; }

AOT_EXPORT int CustomCumsumInit(int *ndims, int64_t **shapes, const char **dtypes, AotExtra *extra)
{
    if (std::strcmp(dtypes[0], "float32") != 0)
        return 2;
    auto *d = new CumsumData();
    d->n = numel(ndims[0], shapes[0]);
    extra->SetWorkSpace({static_cast<size_t>(d->n) * sizeof(float) - 4});
    extra->SetKernelData(d);
    return 0;
}

AOT_EXPORT int CustomCumsum(int nparam, void **params, int *, int64_t **, const char **, void *,
                            void *extra)
{
    if (nparam != 3)
        return 1;
    auto *d = static_cast<CumsumData *>(static_cast<AotExtra *>(extra)->KernelData());
    const float *x = static_cast<const float *>(params[0]);
    float *out = static_cast<float *>(params[1]);
    float *ws = static_cast<float *>(params[2]);
    float acc = 0;
    for (int64_t i = 0; i < d->n; ++i) {
        acc += x[i];
        ws[i] = acc;
    }
    std::memcpy(out, ws, sizeof(float) * static_cast<size_t>(d->n));
    ++d->calls;
    return 0;
}

// Concatenation of two 1-D inputs; its shape comes from InferShape, its dtype from InferType
// (the dtype of the first input).
AOT_EXPORT std::vector<int64_t> CustomConcatInferShape(int *ndims, int64_t **shapes, AotExtra *)
{
    if (ndims[0] != 1 || ndims[1] != 1)
        throw std::runtime_error("CustomConcat takes 1-D inputs");
    return {shapes[0][0] + shapes[1][0]};
}

AOT_EXPORT int CustomConcatInferType(std::vector<int> types, AotExtra *) { return types[0]; }

AOT_EXPORT int CustomConcat(int nparam, void **params, int *, int64_t **shapes, const char **dtypes,
                            void *, void *)
{
    if (nparam != 3)
        return 1;
    if (std::strcmp(dtypes[0], "int64") != 0)
        return 2;
    const int64_t *a = static_cast<const int64_t *>(params[0]);
    const int64_t *b = static_cast<const int64_t *>(params[1]);
    int64_t *out = static_cast<int64_t *>(params[2]);
    std::memcpy(out, a, sizeof(int64_t) * static_cast<size_t>(shapes[0][0]));
    std::memcpy(out + shapes[0][0], b, sizeof(int64_t) * static_cast<size_t>(shapes[1][0]));
    return 0;
}

// Two outputs of a 2-D float32 input: its row sums ([rows]) and an int64 copy ([-1, -1]: the
// unknown dims are the input's).
AOT_EXPORT std::vector<std::vector<int64_t>> CustomSplitInferShape(int *, int64_t **shapes,
                                                                   AotExtra *)
{
    return {{shapes[0][0]}, {-1, -1}};
}

AOT_EXPORT std::vector<int> CustomSplitInferType(std::vector<int> types, AotExtra *)
{
    return {types[0], 35}; // kNumberTypeInt64
}

AOT_EXPORT int CustomSplit(int nparam, void **params, int *, int64_t **shapes, const char **dtypes,
                           void *, void *)
{
    if (nparam != 3 || std::strcmp(dtypes[2], "int64") != 0)
        return 1;
    int64_t r = shapes[0][0], c = shapes[0][1];
    const float *x = static_cast<const float *>(params[0]);
    float *sums = static_cast<float *>(params[1]);
    int64_t *t = static_cast<int64_t *>(params[2]);
    for (int64_t i = 0; i < r; ++i) {
        sums[i] = 0;
        for (int64_t j = 0; j < c; ++j) {
            sums[i] += x[i * c + j];
            t[i * c + j] = static_cast<int64_t>(x[i * c + j]);
        }
    }
    return 0;
}

// Failure paths.
AOT_EXPORT int CustomFails(int, void **, int *, int64_t **, const char **, void *, void *)
{
    return 7;
}

AOT_EXPORT int CustomThrows(int, void **, int *, int64_t **, const char **, void *, void *)
{
    throw std::runtime_error("kernel exploded");
}

AOT_EXPORT int CustomBadInitInit(int *, int64_t **, const char **, AotExtra *) { return 5; }
AOT_EXPORT int CustomBadInit(int, void **, int *, int64_t **, const char **, void *, void *)
{
    return 0;
}

/* Declares workspaces whose sizes add past SIZE_MAX: the call must fail, not get a tiny block. */
AOT_EXPORT int CustomHugeWorkspaceInit(int *, int64_t **, const char **, AotExtra *extra)
{
    extra->SetWorkSpace({16, SIZE_MAX - 8});
    return 0;
}
AOT_EXPORT int CustomHugeWorkspace(int, void **, int *, int64_t **, const char **, void *, void *)
{
    return 0;
}

AOT_EXPORT int CustomBadTypeInferType(std::vector<int>, AotExtra *) { return 12; }
AOT_EXPORT int CustomBadType(int, void **, int *, int64_t **, const char **, void *, void *)
{
    return 0;
}

AOT_EXPORT std::vector<int64_t> CustomUnknownRankInferShape(int *, int64_t **, AotExtra *)
{
    return {-2};
}
AOT_EXPORT int CustomUnknownRank(int, void **, int *, int64_t **, const char **, void *, void *)
{
    return 0;
}

// Sum of a 2-D float32 input along attr "axis" (0 or 1), keeping the axis as 1 when attr
// "keep_dim" is true: the output shape depends on attrs (InferShape reads them), and Init keeps
// them as kernel data.
struct SumData : public AotKernelData {
    int64_t axis = 0;
    bool keep = false;
};

AOT_EXPORT std::vector<int64_t> CustomSumInferShape(int *, int64_t **shapes, AotExtra *extra)
{
    int64_t axis = extra->Attr<int64_t>("axis");
    if (extra->Attr<bool>("keep_dim"))
        return axis == 0 ? std::vector<int64_t>{1, shapes[0][1]}
                         : std::vector<int64_t>{shapes[0][0], 1};
    return {shapes[0][1 - axis]};
}

AOT_EXPORT int CustomSumInit(int *, int64_t **, const char **, AotExtra *extra)
{
    auto *d = new SumData();
    d->axis = extra->Attr<int64_t>("axis");
    d->keep = extra->Attr<bool>("keep_dim");
    extra->SetKernelData(d);
    return 0;
}

AOT_EXPORT int CustomSum(int nparam, void **params, int *, int64_t **shapes, const char **, void *,
                         void *extra)
{
    if (nparam != 2)
        return 1;
    const auto *d = static_cast<const SumData *>(static_cast<AotExtra *>(extra)->KernelData());
    const float *x = static_cast<const float *>(params[0]);
    float *out = static_cast<float *>(params[1]);
    int64_t r = shapes[0][0], c = shapes[0][1];
    int64_t n = d->axis == 0 ? c : r, ext = d->axis == 0 ? r : c;
    for (int64_t i = 0; i < n; ++i) {
        float s = 0;
        for (int64_t j = 0; j < ext; ++j)
            s += d->axis == 0 ? x[j * c + i] : x[i * c + j];
        out[i] = s;
    }
    return 0;
}

// A data symbol, exported like the functions: naming it as the kernel must be refused, not
// called (calling it would run its bytes).
extern "C" {
__attribute__((visibility("default"))) int CustomTable[16] = {1, 2, 3};
}
