/*
 * aot_call.cc - the C++ side of every call into a MindSpore AOT library: F, FInit, FInferShape
 * and FInferType run inside try/catch here, and their C++ results (std::vector) are copied into
 * plain arrays, so that the C half sees only status codes and malloc'd messages.
 *
 * None of this depends on the libstdc++ string ABI: std::vector's layout is the same under both,
 * and the only std::string crossing the boundary is inside the AotExtra (aot_extra.cc).
 */
#include "adapters/mindspore/aot_internal.h"

#include "custom_aot_extra.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

char *dup_message(const std::string &s)
{
    char *m = static_cast<char *>(std::malloc(s.size() + 1));
    if (m)
        std::memcpy(m, s.c_str(), s.size() + 1);
    return m;
}

// The text of the exception being handled.
char *caught_message()
{
    try {
        throw;
    } catch (const std::exception &e) {
        return dup_message(e.what());
    } catch (...) {
        return dup_message("an exception that is not a std::exception");
    }
}

// MindSpore's TypeId is `enum TypeId : int`: a vector of it is laid out as a vector of int, and
// a TypeId is returned as an int.
using infer_shape_1 = std::vector<int64_t> (*)(int *, int64_t **, AotExtra *);
using infer_shape_n = std::vector<std::vector<int64_t>> (*)(int *, int64_t **, AotExtra *);
using infer_type_1 = int (*)(std::vector<int>, AotExtra *);
using infer_type_n = std::vector<int> (*)(std::vector<int>, AotExtra *);

int copy_shape(const std::vector<int64_t> &s, int32_t *ndim, int64_t *shape, int index, char **err)
{
    if (s.size() > PD_MAX_DIMS) {
        *err = dup_message("it returned rank " + std::to_string(s.size()) + " for output " +
                           std::to_string(index) + ", more than PD_MAX_DIMS (" +
                           std::to_string(PD_MAX_DIMS) + ")");
        return PD_AOTI_BAD;
    }
    *ndim = static_cast<int32_t>(s.size());
    for (size_t d = 0; d < s.size(); ++d)
        shape[d] = s[d];
    return PD_AOTI_OK;
}

} // namespace

extern "C" int pd_aoti_call_kernel(pd_aoti_kernel_fn f, int nparam, void **params, int *ndims,
                                   int64_t **shapes, const char **dtypes, void *stream, void *extra,
                                   int *rc, char **err)
{
    try {
        *rc = f(nparam, params, ndims, shapes, dtypes, stream, extra);
    } catch (...) {
        *err = caught_message();
        return PD_AOTI_THREW;
    }
    return *rc == 0 ? PD_AOTI_OK : PD_AOTI_RETURNED;
}

extern "C" int pd_aoti_call_init(pd_aoti_init_fn f, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *extra, int *rc, char **err)
{
    try {
        *rc = f(ndims, shapes, dtypes, extra);
    } catch (...) {
        *err = caught_message();
        return PD_AOTI_THREW;
    }
    return *rc == 0 ? PD_AOTI_OK : PD_AOTI_RETURNED;
}

extern "C" int pd_aoti_call_infer_shape(void *f, int n_outputs, int *ndims, int64_t **shapes,
                                        void *extra, int32_t *out_ndim,
                                        int64_t (*out_shape)[PD_MAX_DIMS], char **err)
{
    try {
        AotExtra *e = static_cast<AotExtra *>(extra);
        if (n_outputs == 1) {
            std::vector<int64_t> s = reinterpret_cast<infer_shape_1>(f)(ndims, shapes, e);
            return copy_shape(s, &out_ndim[0], out_shape[0], 0, err);
        }
        std::vector<std::vector<int64_t>> all = reinterpret_cast<infer_shape_n>(f)(ndims, shapes,
                                                                                   e);
        if (all.size() != static_cast<size_t>(n_outputs)) {
            *err = dup_message("it returned " + std::to_string(all.size()) +
                               " shapes for an op of " + std::to_string(n_outputs) + " outputs");
            return PD_AOTI_BAD;
        }
        for (int i = 0; i < n_outputs; ++i) {
            int s = copy_shape(all[static_cast<size_t>(i)], &out_ndim[i], out_shape[i], i, err);
            if (s != PD_AOTI_OK)
                return s;
        }
    } catch (...) {
        *err = caught_message();
        return PD_AOTI_THREW;
    }
    return PD_AOTI_OK;
}

extern "C" int pd_aoti_call_infer_type(void *f, int n_inputs, const int32_t *in_types,
                                       int n_outputs, void *extra, int32_t *out_types, char **err)
{
    try {
        AotExtra *e = static_cast<AotExtra *>(extra);
        std::vector<int> types(in_types, in_types + n_inputs);
        if (n_outputs == 1) {
            out_types[0] = reinterpret_cast<infer_type_1>(f)(types, e);
            return PD_AOTI_OK;
        }
        std::vector<int> all = reinterpret_cast<infer_type_n>(f)(types, e);
        if (all.size() != static_cast<size_t>(n_outputs)) {
            *err = dup_message("it returned " + std::to_string(all.size()) +
                               " types for an op of " + std::to_string(n_outputs) + " outputs");
            return PD_AOTI_BAD;
        }
        for (int i = 0; i < n_outputs; ++i)
            out_types[i] = all[static_cast<size_t>(i)];
    } catch (...) {
        *err = caught_message();
        return PD_AOTI_THREW;
    }
    return PD_AOTI_OK;
}

extern "C" void pd_aoti_extra_workspace(void *extra, const size_t **sizes, size_t *n)
{
    const std::vector<size_t> &w = static_cast<AotExtra *>(extra)->WorkSpace();
    *sizes = w.data();
    *n = w.size();
}

extern "C" void pd_aoti_extra_delete(void *extra)
{
    AotExtra *e = static_cast<AotExtra *>(extra);
    if (e == nullptr)
        return;
    try {
        e->DestructKernelData();
    } catch (...) {
        // A kernel data destructor that throws: nothing to report it to while unloading.
    }
    delete e;
}
