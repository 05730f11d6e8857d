/*
 * ms_aot_shim.cc - the AOT entry points through which MindSpore's ops.Custom(func_type="aot")
 * runs every pdext op (pdext.mindspore). Shipped as source in the pdext package and built by
 * pdext's JIT on first use (as MindSpore builds AOT kernels: C++17, the old std::string ABI,
 * -D_GLIBCXX_USE_CXX11_ABI=0, which MindSpore's own libraries use), then found warm in the
 * cache.
 *
 * MindSpore's AOT calling convention (shared/specs/mindspore-aot.md):
 *   int pdext_ms_aotInit(int *ndims, int64_t **shapes, const char **dtypes, AotExtra *extra)
 *     runs when MindSpore sets the kernel up for its shapes. It reads the primitive's attrs
 *     through AotExtra's getters: pd_op (the op's index in this library's table,
 *     pdext_ms_aot_add_op), pd_name (checked against the table's op), pd_in (tensors per
 *     declared input), then each attr the op declares, by its name and declared type
 *     (a double attr comes as its repr string: AotExtra has float getters only). What it read
 *     becomes the kernel data (pd_ms_call) that the kernel function reads back.
 *   int pdext_ms_aot(int nparam, void **params, int *ndims, int64_t **shapes,
 *                    const char **dtypes, void *stream, void *extra)
 *     wraps MindSpore's buffers in pd_tensors (no copy), runs the op (pd_op_run) and copies
 *     its outputs into MindSpore's output buffers, which pdext.mindspore's infer sized.
 * A failure returns non-zero (MindSpore then raises, naming the function and the code) and
 * leaves pdext's message for pdext_ms_aot_last_error, which pdext.mindspore adds to the
 * exception. C++ exceptions (a getter on an attr of another type) never leave the shim.
 */
#include "custom_aot_extra.h" /* MindSpore's AotExtra, same layout and vtable order */
#include "pdext.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#define PD_MS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/* The ops registered through pdext.mindspore, by index; append-only (a compiled graph holds
 * an index for its life, and the Python side keeps each op's library loaded). */
constexpr int kMaxOps = 4096;
const pd_op *op_table[kMaxOps];
int op_count;
std::mutex table_lock;

std::mutex error_lock;
std::string last_error;

int fail(int code, const std::string &message)
{
    std::lock_guard<std::mutex> g(error_lock);
    last_error = message;
    /* MindSpore's exception names only the function and the code (and comes later than the
     * call in PyNative): the message goes to stderr too, as MindSpore's own logs do. */
    std::fprintf(stderr, "pdext.mindspore: %s\n", message.c_str());
    return code;
}

/* One kernel's setup: the op, its input counts and its attrs (with their storage). */
struct pd_ms_call : AotKernelData {
    const pd_op *op = nullptr;
    std::vector<int32_t> in_counts;
    std::vector<pd_attr> attrs;
    std::vector<std::string> strs;
    std::vector<std::vector<int32_t>> ints;
    std::vector<std::vector<int64_t>> int64s;
    std::vector<std::vector<float>> floats;
};

pd_data_type dtype_of(const char *name)
{
    static const struct {
        const char *name;
        pd_data_type t;
    } names[] = {{"float32", PD_FLOAT32},
                 {"float64", PD_FLOAT64},
                 {"float16", PD_FLOAT16},
                 {"bfloat16", PD_BFLOAT16},
                 {"int8", PD_INT8},
                 {"int16", PD_INT16},
                 {"int32", PD_INT32},
                 {"int64", PD_INT64},
                 {"uint8", PD_UINT8},
                 {"uint16", PD_UINT16},
                 {"uint32", PD_UINT32},
                 {"uint64", PD_UINT64},
                 {"bool", PD_BOOL},
                 {"complex64", PD_COMPLEX64},
                 {"complex128", PD_COMPLEX128},
                 {"float", PD_FLOAT32},
                 {"int", PD_INT32}};
    for (const auto &n : names)
        if (std::strcmp(n.name, name) == 0)
            return n.t;
    return PD_UNDEFINED;
}

/* Reads attr `info` of the op from the primitive into call->attrs; false (with the message
 * set) for a value the declared type cannot take. The vectors of `call` were reserved for
 * every attr, so the pointers taken into them stay valid. */
bool read_attr(AotExtra *extra, const pd_attr_info &info, pd_ms_call *call, std::string *why)
{
    const std::string name = info.name;
    pd_attr a;
    std::memset(&a, 0, sizeof a);
    a.name = info.name;
    a.type = info.type;
    switch (info.type) {
    case PD_ATTR_BOOL: a.v.b = extra->Attr<bool>(name); break;
    case PD_ATTR_INT: {
        int64_t v = extra->Attr<int64_t>(name);
        if (v < INT32_MIN || v > INT32_MAX) {
            *why = "attr '" + name + "' is " + std::to_string(v) + ", out of the range of int";
            return false;
        }
        a.v.i = (int32_t)v;
        break;
    }
    case PD_ATTR_INT64: a.v.i64 = extra->Attr<int64_t>(name); break;
    case PD_ATTR_FLOAT: a.v.f = extra->Attr<float>(name); break;
    case PD_ATTR_DOUBLE: {
        /* pdext.mindspore passes a double as its repr: AotExtra reads floats only. */
        std::string text = extra->Attr<std::string>(name);
        char *end = nullptr;
        a.v.d = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0') {
            *why = "attr '" + name + "' (double) came as '" + text + "', not a number";
            return false;
        }
        break;
    }
    case PD_ATTR_STRING:
        call->strs.push_back(extra->Attr<std::string>(name));
        a.v.s = call->strs.back().c_str();
        break;
    case PD_ATTR_INTS: {
        std::vector<int64_t> v = extra->Attr<std::vector<int64_t>>(name);
        call->ints.emplace_back();
        for (int64_t e : v) {
            if (e < INT32_MIN || e > INT32_MAX) {
                *why = "attr '" + name + "' holds " + std::to_string(e) +
                       ", out of the range of int";
                return false;
            }
            call->ints.back().push_back((int32_t)e);
        }
        a.v.ints = call->ints.back().data();
        a.count = (int32_t)v.size();
        break;
    }
    case PD_ATTR_INT64S:
        call->int64s.push_back(extra->Attr<std::vector<int64_t>>(name));
        a.v.int64s = call->int64s.back().data();
        a.count = (int32_t)call->int64s.back().size();
        break;
    case PD_ATTR_FLOATS:
        call->floats.push_back(extra->Attr<std::vector<float>>(name));
        a.v.floats = call->floats.back().data();
        a.count = (int32_t)call->floats.back().size();
        break;
    default:
        *why = "attr '" + name + "' has a type that MindSpore's AOT attrs cannot carry";
        return false;
    }
    call->attrs.push_back(a);
    return true;
}

int init(AotExtra *extra)
{
    if (extra == nullptr)
        return fail(1, "pdext.mindspore: the AOT kernel got no attrs (AotExtra)");
    auto *call = new pd_ms_call();
    std::string why;
    try {
        int64_t index = extra->HasAttr("pd_op") ? extra->Attr<int64_t>("pd_op") : -1;
        {
            std::lock_guard<std::mutex> g(table_lock);
            if (index >= 0 && index < op_count)
                call->op = op_table[index];
        }
        if (call->op == nullptr) {
            delete call;
            return fail(1, "pdext.mindspore: the primitive names no op this process registered "
                           "(attr pd_op)");
        }
        std::string name = extra->Attr<std::string>("pd_name");
        if (name != pd_op_name(call->op)) {
            std::string registered = pd_op_name(call->op);
            delete call;
            return fail(1, "pdext.mindspore: the primitive is for op '" + name +
                               "', but this process registered '" + registered +
                               "' under its index");
        }
        for (int64_t c : extra->Attr<std::vector<int64_t>>("pd_in"))
            call->in_counts.push_back((int32_t)c);
        int32_t n_attrs = pd_op_attr_count(call->op);
        call->attrs.reserve((size_t)n_attrs);
        call->strs.reserve((size_t)n_attrs);
        call->ints.reserve((size_t)n_attrs);
        call->int64s.reserve((size_t)n_attrs);
        call->floats.reserve((size_t)n_attrs);
        for (int32_t i = 0; i < n_attrs; ++i) {
            pd_attr_info info;
            if (pd_op_attr_info(call->op, i, &info) != PD_OK)
                continue;
            /* Absent: the runner applies the declared default, or names the missing attr. */
            if (extra->HasAttr(info.name) && !read_attr(extra, info, call, &why)) {
                std::string op = pd_op_name(call->op);
                delete call;
                return fail(1, op + ": " + why);
            }
        }
    } catch (const std::exception &e) {
        std::string op = call->op ? pd_op_name(call->op) : "pdext.mindspore";
        delete call;
        return fail(1, op + ": reading the primitive's attrs failed: " + e.what());
    } catch (...) {
        delete call;
        return fail(1, "pdext.mindspore: reading the primitive's attrs failed");
    }
    /* Init runs again when the shapes change: the previous setup is ours to free. */
    extra->DestructKernelData();
    extra->SetKernelData(call);
    return 0;
}

/* t: a dense CPU tensor over MindSpore's buffer (no storage reference: MindSpore owns it). */
bool tensor_over(void *data, int ndim, const int64_t *shape, const char *dtype, pd_tensor *t)
{
    std::memset(t, 0, sizeof *t);
    t->dtype = dtype_of(dtype);
    if (t->dtype == PD_UNDEFINED || ndim < 0 || ndim > PD_MAX_DIMS)
        return false;
    t->data = data;
    t->ndim = ndim;
    t->place = pd_place_cpu();
    t->layout = PD_LAYOUT_DENSE;
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; --d) {
        t->shape[d] = shape[d];
        t->strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
    return true;
}

int64_t numel(const pd_tensor *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; ++d)
        n *= t->shape[d];
    return n;
}

/* Copies output t (made by the runner) into MindSpore's output buffer; "" or what differs. */
std::string store(const pd_op *op, const pd_tensor *t, void *data, int ndim, const int64_t *shape,
                  const char *dtype)
{
    bool same = t->dtype == dtype_of(dtype) && t->ndim == ndim;
    for (int d = 0; same && d < ndim; ++d)
        same = t->shape[d] == shape[d];
    if (!same)
        return std::string(pd_op_name(op)) + ": an output came out as " + pd_dtype_name(t->dtype) +
               " of rank " + std::to_string(t->ndim) +
               ", not as its inference said (MindSpore's output buffer is " + dtype + " of rank " +
               std::to_string(ndim) + ")";
    size_t bytes = (size_t)numel(t) * pd_dtype_size(t->dtype);
    if (bytes == 0)
        return "";
    if (pd_is_contiguous(t)) {
        std::memcpy(data, t->data, bytes);
        return "";
    }
    pd_tensor dense = PD_TENSOR_UNDEFINED;
    if (pd_tensor_contiguous(&dense, t) != PD_OK)
        return pd_last_error();
    std::memcpy(data, dense.data, bytes);
    pd_tensor_release(&dense);
    return "";
}

int run(const pd_ms_call *call, int nparam, void **params, int *ndims, int64_t **shapes,
        const char **dtypes)
{
    const pd_op *op = call->op;
    int32_t n_in = (int32_t)call->in_counts.size(), n_out = pd_op_output_count(op);
    int total_in = 0;
    for (int32_t c : call->in_counts)
        total_in += c;
    int total_out = nparam - total_in;
    /* Outputs: one tensor each, but a vector output, which takes the rest. */
    std::vector<int32_t> out_counts((size_t)n_out, 1);
    int fixed = 0, vec = -1;
    for (int32_t o = 0; o < n_out; ++o) {
        pd_arg_info info;
        if (pd_op_output_info(op, o, &info) == PD_OK && info.is_vector)
            vec = o;
        else
            ++fixed;
    }
    if (vec >= 0)
        out_counts[(size_t)vec] = total_out - fixed;
    if (n_in > PD_MAX_INPUTS || n_out > PD_MAX_OUTPUTS || total_out < fixed ||
        (vec < 0 && total_out != fixed))
        return fail(1, std::string(pd_op_name(op)) + ": MindSpore passed " +
                           std::to_string(nparam) + " buffers, which do not match the op's " +
                           std::to_string(total_in) + " input tensors and its outputs");
    std::vector<pd_tensor> tensors((size_t)nparam);
    pd_arg in[PD_MAX_INPUTS], out[PD_MAX_OUTPUTS];
    int k = 0;
    for (int32_t i = 0; i < n_in; ++i) {
        in[i] = pd_arg_named(NULL, &tensors[(size_t)k], call->in_counts[(size_t)i]);
        for (int32_t j = 0; j < call->in_counts[(size_t)i]; ++j, ++k)
            if (!tensor_over(params[k], ndims[k], shapes[k], dtypes[k], &tensors[(size_t)k]))
                return fail(2, std::string(pd_op_name(op)) + ": input tensor " + std::to_string(k) +
                                   " has dtype " + dtypes[k] +
                                   " or a rank pdext has no tensor for");
    }
    for (int32_t o = 0; o < n_out; ++o) {
        out[o] = pd_arg_named(NULL, out_counts[(size_t)o] ? &tensors[(size_t)k] : NULL,
                              out_counts[(size_t)o]);
        k += out_counts[(size_t)o];
    }
    pd_status st = pd_op_run(op, in, n_in, call->attrs.data(), (int32_t)call->attrs.size(), out,
                             n_out);
    if (st != PD_OK)
        return fail(3, pd_last_error());
    std::string why;
    int r = total_in;
    for (int32_t o = 0; o < n_out; ++o) {
        for (int32_t j = 0; j < out_counts[(size_t)o]; ++j, ++r) {
            pd_tensor *t = &out[o].tensors[j];
            std::string bad = j < out[o].count
                                  ? store(op, t, params[r], ndims[r], shapes[r], dtypes[r])
                                  : std::string(pd_op_name(op)) + ": an output the op left unset";
            if (!bad.empty() && why.empty())
                why = bad;
            if (j < out[o].count)
                pd_tensor_release(t);
        }
    }
    return why.empty() ? 0 : fail(4, why);
}

} // namespace

/* Adds op to the table; its index, or -1 when the table is full. */
PD_MS_EXPORT int64_t pdext_ms_aot_add_op(const pd_op *op)
{
    std::lock_guard<std::mutex> g(table_lock);
    for (int i = 0; i < op_count; ++i)
        if (op_table[i] == op)
            return i;
    if (op_count == kMaxOps)
        return -1;
    op_table[op_count] = op;
    return op_count++;
}

/* The message of the last failed call (any thread); copied into buf. */
PD_MS_EXPORT void pdext_ms_aot_last_error(char *buf, size_t size)
{
    std::lock_guard<std::mutex> g(error_lock);
    std::snprintf(buf, size, "%s", last_error.c_str());
}

PD_MS_EXPORT int pdext_ms_aotInit(int *ndims, int64_t **shapes, const char **dtypes,
                                  AotExtra *extra)
{
    (void)ndims, (void)shapes, (void)dtypes;
    return init(extra);
}

PD_MS_EXPORT int pdext_ms_aot(int nparam, void **params, int *ndims, int64_t **shapes,
                              const char **dtypes, void *stream, void *extra)
{
    (void)stream;
    auto *aot = static_cast<AotExtra *>(extra);
    auto *call = aot ? static_cast<pd_ms_call *>(aot->KernelData()) : nullptr;
    if (call == nullptr)
        return fail(1, "pdext.mindspore: the kernel was not set up (pdext_ms_aotInit did not run)");
    try {
        return run(call, nparam, params, ndims, shapes, dtypes);
    } catch (...) {
        return fail(5, std::string(pd_op_name(call->op)) + ": out of memory");
    }
}
