// relu_aot.cc - examples/relu's forward op (Out = max(X, 0), float32 and float64) written as a
// MindSpore AOT kernel, the way MindSpore's users write them: the baseline of
// bench/mindspore_bench.py (MindSpore's own ops.Custom(func_type="aot") builds it with g++,
// "relu_aot.cc:CustomRelu") and a reference for the pdext.mindspore example.
#include <cstdint>
#include <cstring>

extern "C" int CustomRelu(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *stream, void *extra)
{
    (void)stream, (void)extra;
    if (nparam != 2)
        return 1;
    int64_t n = 1;
    for (int i = 0; i < ndims[0]; ++i)
        n *= shapes[0][i];
    if (std::strcmp(dtypes[0], "float32") == 0) {
        const float *x = static_cast<const float *>(params[0]);
        float *y = static_cast<float *>(params[1]);
        for (int64_t i = 0; i < n; ++i)
            y[i] = x[i] > 0 ? x[i] : 0.0f;
        return 0;
    }
    if (std::strcmp(dtypes[0], "float64") == 0) {
        const double *x = static_cast<const double *>(params[0]);
        double *y = static_cast<double *>(params[1]);
        for (int64_t i = 0; i < n; ++i)
            y[i] = x[i] > 0 ? x[i] : 0.0;
        return 0;
    }
    return 2;
}
