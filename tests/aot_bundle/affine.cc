// affine.cc - a MindSpore AOT kernel for the old-ABI bundle of aot_bundle_test.c (built with
// -D_GLIBCXX_USE_CXX11_ABI=0): out = x * scale + offset, negated when mode == "neg", its
// attrs read through AotExtra::Attr<T> with std::string names and a std::string value.
#include "custom_aot_extra.h"

#include <cstdint>
#include <string>

extern "C" int CustomAffine(int nparam, void **params, int *ndims, int64_t **shapes, const char **,
                            void *, void *extra)
{
    if (nparam != 2)
        return 1;
    AotExtra *e = static_cast<AotExtra *>(extra);
    float scale = e->Attr<float>("scale");
    int64_t offset = e->Attr<int64_t>("offset");
    bool neg = e->HasAttr("mode") && e->Attr<std::string>("mode") == "neg";
    const float *x = static_cast<const float *>(params[0]);
    float *out = static_cast<float *>(params[1]);
    int64_t n = 1;
    for (int d = 0; d < ndims[0]; ++d)
        n *= shapes[0][d];
    for (int64_t i = 0; i < n; ++i) {
        float v = x[i] * scale + static_cast<float>(offset);
        out[i] = neg ? -v : v;
    }
    return 0;
}
