// paddle_native.cpp - pdext ops as real Paddle custom operators, registered at run time: the
// bridge of pdext.paddle.register. For each pdext op (and its grad and double grad ops) it fills
// one paddle::OpMetaInfoBuilder (inputs, outputs, typed attrs) whose kernel, InferShape and
// InferDtype functions are trampolines bound to that op's slot. A kernel borrows the Paddle
// tensors' memory as pd_tensors, runs the op through the pdext runner (pd_op_run) and hands the
// outputs to Paddle as tensors that own the pdext storage (paddle::from_blob with a deleter):
// no copy either way. The infer functions ask pd_op_infer. Errors become Paddle exceptions
// (InvalidArgument) carrying pdext's message, never an abort.
//
// Why at run time and not a generated source per module: this file is compiled once per
// Paddle and pdext version (against the wheel's paddle/extension.h, ~80k lines, the slow part)
// and then serves every pdext module at once; registering a module is a few microseconds per
// op. Once registered, the ops are Paddle operators like any built by
// paddle.utils.cpp_extension.load: dygraph with Paddle's own autograd from the grad ops,
// to_static, jit.save and paddle.inference.
//
// Paddle's function types (KernelFunc, InferShapeFunc, InferDtypeFunc) are plain function
// pointers without user data, so each slot has its own instantiation of the three templates
// below; kSlots bounds how many ops one process registers.
//
// Past 700 lines because it is one translation unit on purpose: the trampolines are
// instantiated where the slot table is, and a second unit would preprocess Paddle's headers
// again (most of the ~10 s a build takes). In order: conversions (dtypes, attrs, tensors in and
// out), the kernel, the infer functions, the trampolines, the C entry points.
#include "paddle/common/enforce.h"
#include "paddle/common/exception.h"
#include "paddle/phi/api/ext/op_meta_info.h"
#include "paddle/phi/api/include/api.h"
#include "paddle/phi/api/include/tensor_utils.h"

#include "pdext.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

constexpr int kSlots = 512;
// A dim Paddle does not know yet (-1 in a static program) is given to pdext's infer functions
// as this size, and an output dim of this size goes back as -1.
constexpr int64_t kUnknownDim = 7919;

struct Slot {
    const pd_op *op = nullptr;
    std::string name; // the Paddle op type
    int32_t n_in = 0, n_out = 0, n_attr = 0;
    pd_arg_info in[PD_MAX_INPUTS];
    pd_arg_info out[PD_MAX_OUTPUTS];
    pd_attr_info attr[PD_MAX_ATTRS];
    bool vector_out = false;               // some output is a vector
    bool inplace_out[PD_MAX_OUTPUTS] = {}; // the output is an input written in place
};

Slot slots[kSlots];
int n_slots = 0;
std::mutex slots_mutex;

pd_data_type to_pd(phi::DataType t)
{
    switch (t) {
    case phi::DataType::BOOL: return PD_BOOL;
    case phi::DataType::INT8: return PD_INT8;
    case phi::DataType::UINT8: return PD_UINT8;
    case phi::DataType::INT16: return PD_INT16;
    case phi::DataType::INT32: return PD_INT32;
    case phi::DataType::INT64: return PD_INT64;
    case phi::DataType::UINT16: return PD_UINT16;
    case phi::DataType::UINT32: return PD_UINT32;
    case phi::DataType::UINT64: return PD_UINT64;
    case phi::DataType::FLOAT16: return PD_FLOAT16;
    case phi::DataType::BFLOAT16: return PD_BFLOAT16;
    case phi::DataType::FLOAT32: return PD_FLOAT32;
    case phi::DataType::FLOAT64: return PD_FLOAT64;
    case phi::DataType::COMPLEX64: return PD_COMPLEX64;
    case phi::DataType::COMPLEX128: return PD_COMPLEX128;
    default: return PD_UNDEFINED;
    }
}

phi::DataType to_paddle(pd_data_type t)
{
    switch (t) {
    case PD_BOOL: return phi::DataType::BOOL;
    case PD_INT8: return phi::DataType::INT8;
    case PD_UINT8: return phi::DataType::UINT8;
    case PD_INT16: return phi::DataType::INT16;
    case PD_INT32: return phi::DataType::INT32;
    case PD_INT64: return phi::DataType::INT64;
    case PD_UINT16: return phi::DataType::UINT16;
    case PD_UINT32: return phi::DataType::UINT32;
    case PD_UINT64: return phi::DataType::UINT64;
    case PD_FLOAT16: return phi::DataType::FLOAT16;
    case PD_BFLOAT16: return phi::DataType::BFLOAT16;
    case PD_FLOAT32: return phi::DataType::FLOAT32;
    case PD_FLOAT64: return phi::DataType::FLOAT64;
    case PD_COMPLEX64: return phi::DataType::COMPLEX64;
    case PD_COMPLEX128: return phi::DataType::COMPLEX128;
    default: return phi::DataType::UNDEFINED;
    }
}

// Paddle's spelling of a pdext attr type in OpMetaInfo::Attrs ("name: type").
// Throws Paddle's enforce error (InvalidArgument) with the pieces streamed into one message:
// Paddle turns that type into a Python ValueError carrying the message in every mode. Any other
// type (std::runtime_error, even Paddle's own PD_Exception of PD_THROW) escaping a kernel that
// Paddle's static executor runs ends the process (ThrowExceptionToPython knows only its enforce
// errors). pdext.h's PD_THROW is the C front's, hence another name.
template <typename... Args> [[noreturn]] void fail(const Args &...args)
{
    std::ostringstream msg;
    (msg << ... << args);
    throw ::common::enforce::
        EnforceNotMet(::common::ErrorSummary(::common::ErrorCode::INVALID_ARGUMENT, msg.str()),
                      __FILE__, __LINE__);
}

const char *paddle_attr_type(pd_attr_type t)
{
    switch (t) {
    case PD_ATTR_BOOL: return "bool";
    case PD_ATTR_INT: return "int";
    case PD_ATTR_INT64: return "int64_t";
    case PD_ATTR_FLOAT: return "float";
    case PD_ATTR_DOUBLE: return "double";
    case PD_ATTR_STRING: return "std::string";
    case PD_ATTR_INTS: return "std::vector<int>";
    case PD_ATTR_INT64S: return "std::vector<int64_t>";
    case PD_ATTR_FLOATS: return "std::vector<float>";
    case PD_ATTR_STRINGS: return "std::vector<std::string>";
    default: return nullptr;
    }
}

// pd_attrs over Paddle's attr values (paddle::any, of the declared types); the vectors keep
// what the pd_attrs point at alive for the call.
struct Attrs {
    std::vector<pd_attr> list;
    std::vector<std::vector<const char *>> cstrs;
};

void add_attr(const Slot &s, int32_t j, const paddle::any &v, Attrs *at)
{
    const pd_attr_info &info = s.attr[j];
    pd_attr a;
    std::memset(&a, 0, sizeof a);
    a.name = info.name;
    a.type = info.type;
    try {
        switch (info.type) {
        case PD_ATTR_BOOL: a.v.b = paddle::any_cast<bool>(v); break;
        case PD_ATTR_INT: a.v.i = paddle::any_cast<int>(v); break;
        case PD_ATTR_INT64: a.v.i64 = paddle::any_cast<int64_t>(v); break;
        case PD_ATTR_FLOAT: a.v.f = paddle::any_cast<float>(v); break;
        case PD_ATTR_DOUBLE: a.v.d = paddle::any_cast<double>(v); break;
        case PD_ATTR_STRING: a.v.s = paddle::any_cast<const std::string &>(v).c_str(); break;
        case PD_ATTR_INTS: {
            const auto &xs = paddle::any_cast<const std::vector<int> &>(v);
            a.v.ints = xs.data();
            a.count = static_cast<int32_t>(xs.size());
            break;
        }
        case PD_ATTR_INT64S: {
            const auto &xs = paddle::any_cast<const std::vector<int64_t> &>(v);
            a.v.int64s = xs.data();
            a.count = static_cast<int32_t>(xs.size());
            break;
        }
        case PD_ATTR_FLOATS: {
            const auto &xs = paddle::any_cast<const std::vector<float> &>(v);
            a.v.floats = xs.data();
            a.count = static_cast<int32_t>(xs.size());
            break;
        }
        case PD_ATTR_STRINGS: {
            const auto &xs = paddle::any_cast<const std::vector<std::string> &>(v);
            std::vector<const char *> cs;
            for (const auto &x : xs)
                cs.push_back(x.c_str());
            at->cstrs.push_back(std::move(cs));
            a.v.strings = at->cstrs.back().data();
            a.count = static_cast<int32_t>(xs.size());
            break;
        }
        default: fail(s.name, "(): attr '", info.name, "' has a type pdext cannot pass");
        }
    } catch (const paddle::bad_any_cast &) {
        fail(s.name, "(): attr '", info.name, "' is not a ", paddle_attr_type(info.type),
             " (declared '", info.decl, "')");
    }
    at->list.push_back(a);
}

// The attrs Paddle hands an infer function: all of them, or (Paddle's InferShape / InferDtype
// rule for custom ops) all but the std::vector<int64_t> ones.
void add_infer_attrs(const Slot &s, const std::vector<paddle::any> &attrs, Attrs *at)
{
    at->list.reserve(s.n_attr);
    at->cstrs.reserve(s.n_attr);
    bool all = attrs.size() == static_cast<size_t>(s.n_attr);
    size_t k = 0;
    for (int32_t j = 0; j < s.n_attr; ++j) {
        if (!all && s.attr[j].type == PD_ATTR_INT64S) {
            // Not handed over: its declared default, or (none declared) an empty vector, as
            // pdext's Paddle front hands infer functions none of these attrs anyway.
            if (!s.attr[j].has_default) {
                pd_attr a;
                std::memset(&a, 0, sizeof a);
                a.name = s.attr[j].name;
                a.type = PD_ATTR_INT64S;
                at->list.push_back(a);
            }
            continue;
        }
        if (k < attrs.size())
            add_attr(s, j, attrs[k++], at);
    }
}

// "op(): input 'X'" (or 'X'[k] for an item of a vector input), made only for a message.
std::string input_text(const Slot &s, int32_t i, int64_t item)
{
    std::string who = s.name + "(): input '" + s.in[i].name + "'";
    if (item >= 0)
        who += "[" + std::to_string(item) + "]";
    return who;
}

// A borrowed pd_tensor (no storage) over Paddle tensor x's memory.
void borrow(const Slot &s, int32_t i, int64_t item, const paddle::Tensor &x, pd_tensor *t)
{
    if (!x.initialized())
        fail(input_text(s, i, item), " is an uninitialized tensor");
    if (!x.is_dense_tensor())
        fail(input_text(s, i, item), " is not a dense tensor; pdext takes dense tensors");
    pd_data_type dt = to_pd(x.dtype());
    if (dt == PD_UNDEFINED)
        fail(input_text(s, i, item), " has dtype ", phi::DataTypeToString(x.dtype()),
             ", which pdext has no dtype for");
    std::memset(t, 0, sizeof *t);
    if (x.is_cpu()) {
        t->place = pd_place_cpu();
    } else if (x.is_gpu()) {
        t->place = pd_place_gpu(x.place().GetDeviceId());
    } else {
        fail(input_text(s, i, item), " is on ", x.place().DebugString(),
             "; pdext's Paddle ops take CPU and GPU tensors (move it with .cpu())");
    }
    const common::DDim &dims = x.dims();
    const int ndim = dims.size();
    if (ndim > PD_MAX_DIMS)
        fail(input_text(s, i, item), " has ", ndim, " dimensions; pdext tensors have at most ",
             PD_MAX_DIMS);
    t->dtype = dt;
    t->ndim = ndim;
    int64_t dense = 1;
    bool contiguous = true;
    const common::DDim &strides = x.strides();
    const bool have_strides = strides.size() == ndim;
    for (int32_t d = ndim - 1; d >= 0; --d) {
        t->shape[d] = dims[d];
        int64_t st = have_strides ? strides[d] : dense;
        if (dims[d] > 1 && st != dense)
            contiguous = false;
        t->strides[d] = st;
        dense *= dims[d];
    }
    t->data = dense > 0 ? const_cast<void *>(x.data()) : nullptr;
    if (contiguous) {
        int64_t st = 1;
        for (int32_t d = ndim - 1; d >= 0; --d) {
            t->strides[d] = st;
            st *= t->shape[d];
        }
    }
    t->layout = contiguous ? PD_LAYOUT_DENSE : PD_LAYOUT_STRIDED;
}

// A Paddle tensor owning pdext tensor *t (its reference moves; *t becomes undefined).
paddle::Tensor adopt(pd_tensor *t)
{
    if (t->dtype == PD_UNDEFINED)
        return paddle::Tensor();
    pd_tensor own = *t;
    *t = pd_tensor{};
    if (own.storage == nullptr || own.layout != PD_LAYOUT_DENSE) {
        // A view of a borrowed input, or a strided view: Paddle gets a dense copy it owns.
        pd_tensor copy = PD_TENSOR_UNDEFINED;
        pd_status st = pd_tensor_copy_to(&copy, &own, own.place);
        pd_tensor_release(&own);
        if (st != PD_OK)
            fail(pd_last_error());
        own = copy;
    }
    std::vector<int64_t> shape(own.shape, own.shape + own.ndim);
    phi::Place place = own.place.type == PD_PLACE_GPU
                           ? phi::Place(phi::GPUPlace(own.place.device_id))
                           : phi::Place(phi::CPUPlace());
    if (pd_numel(&own) == 0) {
        pd_tensor_release(&own);
        return paddle::experimental::empty(shape, to_paddle(own.dtype), place);
    }
    auto *held = new pd_tensor(own);
    return paddle::from_blob(held->data, shape, to_paddle(held->dtype), phi::DataLayout::NCHW,
                             place, [held](void *) {
                                 pd_tensor_release(held);
                                 delete held;
                             });
}

#if defined(PADDLE_WITH_CUDA) || defined(PADDLE_WITH_HIP)
// Makes Paddle's stream of tensor x this thread's current pdext stream for its device, so the
// op runs on it (Paddle's kernels and pdext's are then ordered without a sync).
void follow_stream(const paddle::Tensor &x, pd_place place)
{
    thread_local std::vector<std::pair<void *, pd_stream_t *>> wrapped;
    void *handle = reinterpret_cast<void *>(x.stream());
    pd_stream_t *stream = nullptr;
    for (auto &w : wrapped)
        if (w.first == handle)
            stream = w.second;
    if (stream == nullptr) {
        if (pd_stream_wrap(place, handle, &stream) != PD_OK)
            fail(pd_last_error());
        wrapped.emplace_back(handle, stream);
    }
    if (pd_stream_set_current(place, stream) != PD_OK)
        fail(pd_last_error());
}
#endif

void run_kernel(const Slot &s, paddle::CustomOpKernelContext *ctx)
{
    pd_tensor one[PD_MAX_INPUTS];
    pd_arg in[PD_MAX_INPUTS];
    // Vector inputs only: their tensors (Paddle's copies, kept for the call) and pd_tensors.
    std::vector<std::vector<paddle::Tensor>> vec_keep;
    std::vector<std::vector<pd_tensor>> many;
    const paddle::Tensor *first = nullptr;
    int32_t total = 0;
    for (int32_t i = 0; i < s.n_in; ++i) {
        const auto &range = ctx->InputRangeAt(i);
        in[i] = pd_arg{nullptr, &one[i], 0};
        if (s.in[i].is_vector) {
            if (vec_keep.empty()) {
                vec_keep.resize(s.n_in);
                many.resize(s.n_in);
            }
            if (s.in[i].is_optional) {
                auto opt = ctx->OptionalInputsBetween(range.first, range.second);
                if (!opt)
                    continue;
                vec_keep[i] = *opt;
            } else {
                vec_keep[i] = ctx->InputsBetween(range.first, range.second);
            }
            many[i].resize(vec_keep[i].size());
            for (size_t k = 0; k < vec_keep[i].size(); ++k)
                borrow(s, i, static_cast<int64_t>(k), vec_keep[i][k], &many[i][k]);
            in[i].tensors = many[i].data();
            in[i].count = static_cast<int32_t>(many[i].size());
            if (first == nullptr && !vec_keep[i].empty())
                first = &vec_keep[i][0];
        } else {
            const paddle::Tensor &x = ctx->InputAt(range.first);
            if (s.in[i].is_optional && !x.initialized())
                continue;
            borrow(s, i, -1, x, &one[i]);
            in[i].count = 1;
            if (first == nullptr)
                first = &x;
        }
        total += in[i].count;
    }
#if defined(PADDLE_WITH_CUDA) || defined(PADDLE_WITH_HIP)
    if (first != nullptr && first->is_gpu())
        follow_stream(*first, pd_place_gpu(first->place().GetDeviceId()));
#else
    (void)first;
#endif
    Attrs at;
    if (s.n_attr > 0) {
        const auto &attrs = ctx->Attrs();
        at.list.reserve(s.n_attr);
        at.cstrs.reserve(s.n_attr);
        for (int32_t j = 0; j < s.n_attr && static_cast<size_t>(j) < attrs.size(); ++j)
            add_attr(s, j, attrs[j], &at);
    }
    // Outputs: one tensor each on the stack; room for vector outputs' items on the heap.
    pd_tensor stack_out[PD_MAX_OUTPUTS];
    std::vector<pd_tensor> heap_out;
    pd_tensor *outs = stack_out;
    int32_t room = total > 64 ? total : 64;
    if (s.vector_out) {
        int32_t need = 0;
        for (int32_t o = 0; o < s.n_out; ++o)
            need += s.out[o].is_vector ? room : 1;
        heap_out.assign(static_cast<size_t>(need), pd_tensor{});
        outs = heap_out.data();
    } else {
        std::memset(stack_out, 0, sizeof stack_out);
    }
    pd_arg out[PD_MAX_OUTPUTS];
    int32_t n_slots_out = 0;
    for (int32_t o = 0; o < s.n_out; ++o) {
        int32_t cap = s.out[o].is_vector ? room : 1;
        out[o] = pd_arg{nullptr, outs + n_slots_out, cap};
        n_slots_out += cap;
    }
    pd_status st = pd_op_run(s.op, in, s.n_in, at.list.data(), static_cast<int32_t>(at.list.size()),
                             out, s.n_out);
    if (st != PD_OK)
        fail(pd_last_error());
    std::vector<paddle::Tensor> result;
    try {
        result.reserve(static_cast<size_t>(s.n_out));
        for (int32_t o = 0; o < s.n_out; ++o)
            for (int32_t k = 0; k < out[o].count; ++k) {
                // An input written in place: Paddle assigns its own tensor to that output.
                if (s.inplace_out[o])
                    pd_tensor_release(&out[o].tensors[k]);
                else
                    result.push_back(adopt(&out[o].tensors[k]));
            }
    } catch (...) {
        for (int32_t k = 0; k < n_slots_out; ++k)
            pd_tensor_release(&outs[k]);
        throw;
    }
    ctx->ValidateAndAssignOutputs(result);
}

// Input descriptions for pd_op_infer (no data): shapes from Paddle with unknown dims as
// kUnknownDim, the dtypes given.
struct Described {
    pd_tensor one[PD_MAX_INPUTS];
    std::vector<std::vector<pd_tensor>> many;
    pd_arg in[PD_MAX_INPUTS];
};

void describe(pd_tensor *t, const std::vector<int64_t> &shape, pd_data_type dtype)
{
    std::memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->place = pd_place_cpu();
    t->ndim = static_cast<int32_t>(shape.size() > PD_MAX_DIMS ? PD_MAX_DIMS : shape.size());
    int64_t st = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
        t->shape[d] = shape[d] < 0 ? kUnknownDim : shape[d];
        t->strides[d] = st;
        st *= t->shape[d];
    }
    t->layout = PD_LAYOUT_DENSE;
}

// Runs pd_op_infer on the described inputs; the outputs' descriptions in *res (flattened), and
// how many items each output has in *counts. false with the message in *err on failure.
bool infer(const Slot &s, Described &d, const Attrs &at, std::vector<pd_tensor> *res,
           std::vector<int32_t> *counts, std::string *err)
{
    int32_t room = 64;
    for (int attempt = 0; attempt < 2; ++attempt) {
        res->assign(static_cast<size_t>(room * (s.n_out > 0 ? s.n_out : 1)), pd_tensor{});
        pd_arg out[PD_MAX_OUTPUTS];
        for (int32_t o = 0; o < s.n_out; ++o)
            out[o] = pd_arg{nullptr, res->data() + o * room, room};
        pd_status st = pd_op_infer(s.op, d.in, s.n_in, at.list.data(),
                                   static_cast<int32_t>(at.list.size()), out, s.n_out);
        if (st == PD_OK) {
            std::vector<pd_tensor> flat;
            counts->clear();
            for (int32_t o = 0; o < s.n_out; ++o) {
                counts->push_back(out[o].count);
                for (int32_t k = 0; k < out[o].count; ++k)
                    flat.push_back(out[o].tensors[k]);
            }
            *res = flat;
            return true;
        }
        int32_t most = 0;
        for (int32_t o = 0; o < s.n_out; ++o)
            most = out[o].count > most ? out[o].count : most;
        if (most <= room) {
            *err = pd_last_error();
            return false;
        }
        room = most;
    }
    *err = pd_last_error();
    return false;
}

void describe_inputs(const Slot &s, const std::vector<std::vector<int64_t>> &shapes,
                     const std::vector<std::vector<std::vector<int64_t>>> &vec_shapes,
                     const std::vector<pd_data_type> &dtypes,
                     const std::vector<std::vector<pd_data_type>> &vec_dtypes, Described *d)
{
    d->many.assign(s.n_in, {});
    size_t a = 0, v = 0;
    for (int32_t i = 0; i < s.n_in; ++i) {
        d->in[i] = pd_arg{nullptr, &d->one[i], 0};
        if (s.in[i].is_vector) {
            if (v >= vec_shapes.size())
                continue;
            const auto &items = vec_shapes[v];
            d->many[i].resize(items.size());
            for (size_t k = 0; k < items.size(); ++k) {
                pd_data_type dt = PD_FLOAT32;
                if (v < vec_dtypes.size() && k < vec_dtypes[v].size())
                    dt = vec_dtypes[v][k];
                describe(&d->many[i][k], items[k], dt);
            }
            ++v;
            d->in[i].tensors = d->many[i].data();
            d->in[i].count = static_cast<int32_t>(items.size());
        } else {
            if (a >= shapes.size())
                continue;
            const auto &shape = shapes[a];
            pd_data_type dt = a < dtypes.size() ? dtypes[a] : PD_FLOAT32;
            ++a;
            // Paddle describes an absent optional input by an empty shape and an undefined
            // dtype.
            if (s.in[i].is_optional && dt == PD_UNDEFINED)
                continue;
            describe(&d->one[i], shape, dt);
            d->in[i].count = 1;
        }
    }
}

// The dtypes pd_op_infer is given where Paddle's InferShape tells none: float32 first, then the
// other common ones (an op may refuse float32 inputs).
const pd_data_type kGuesses[] = {PD_FLOAT32, PD_FLOAT64, PD_INT64, PD_INT32, PD_BOOL};

// Shapes and dtypes Paddle's InferShape last saw per slot and thread, for the InferDtype call
// that follows it (Paddle asks for shapes and dtypes separately; pdext's inference needs both).
thread_local std::vector<std::vector<int64_t>> last_shapes[kSlots];
thread_local std::vector<std::vector<std::vector<int64_t>>> last_vec_shapes[kSlots];

// How many times Paddle asked the infer functions (pdext_paddle_native_infer_calls).
std::atomic<unsigned long long> infer_calls{0};

std::vector<std::vector<int64_t>>
infer_shape(int slot, const std::vector<std::vector<int64_t>> &shapes,
            const std::vector<std::vector<std::vector<int64_t>>> &vec_shapes,
            const std::vector<paddle::any> &attrs)
{
    infer_calls.fetch_add(1, std::memory_order_relaxed);
    const Slot &s = slots[slot];
    last_shapes[slot] = shapes;
    last_vec_shapes[slot] = vec_shapes;
    Attrs at;
    add_infer_attrs(s, attrs, &at);
    std::string first_err;
    for (pd_data_type guess : kGuesses) {
        std::vector<pd_data_type> dtypes;
        std::vector<std::vector<pd_data_type>> vec_dtypes;
        for (size_t a = 0; a < shapes.size(); ++a)
            dtypes.push_back(guess);
        for (const auto &items : vec_shapes)
            vec_dtypes.emplace_back(items.size(), guess);
        // An absent optional input: Paddle's shape for it is empty; described as absent.
        size_t a = 0;
        for (int32_t i = 0; i < s.n_in; ++i) {
            if (s.in[i].is_vector)
                continue;
            if (s.in[i].is_optional && a < shapes.size() && shapes[a].empty())
                dtypes[a] = PD_UNDEFINED;
            ++a;
        }
        Described d;
        describe_inputs(s, shapes, vec_shapes, dtypes, vec_dtypes, &d);
        std::vector<pd_tensor> res;
        std::vector<int32_t> counts;
        std::string err;
        if (!infer(s, d, at, &res, &counts, &err)) {
            if (first_err.empty())
                first_err = err;
            continue;
        }
        std::vector<std::vector<int64_t>> out;
        for (const pd_tensor &t : res) {
            std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
            for (auto &dim : shape)
                if (dim == kUnknownDim)
                    dim = -1;
            out.push_back(shape);
        }
        return out;
    }
    throw std::runtime_error(first_err);
}

std::vector<paddle::DataType> infer_dtype(int slot, const std::vector<paddle::DataType> &dtypes,
                                          const std::vector<std::vector<paddle::DataType>> &vdt,
                                          const std::vector<paddle::any> &attrs)
{
    infer_calls.fetch_add(1, std::memory_order_relaxed);
    const Slot &s = slots[slot];
    Attrs at;
    add_infer_attrs(s, attrs, &at);
    std::vector<pd_data_type> pdt;
    for (auto t : dtypes)
        pdt.push_back(to_pd(t));
    std::vector<std::vector<pd_data_type>> vpdt;
    for (const auto &items : vdt) {
        vpdt.emplace_back();
        for (auto t : items)
            vpdt.back().push_back(to_pd(t));
    }
    // Shapes: the ones InferShape saw last on this thread for this op, else rank-1 guesses.
    std::vector<std::vector<int64_t>> shapes = last_shapes[slot];
    std::vector<std::vector<std::vector<int64_t>>> vec_shapes = last_vec_shapes[slot];
    if (shapes.size() != dtypes.size())
        shapes.assign(dtypes.size(), std::vector<int64_t>{1});
    if (vec_shapes.size() != vdt.size()) {
        vec_shapes.clear();
        for (const auto &items : vdt)
            vec_shapes.emplace_back(items.size(), std::vector<int64_t>{1});
    }
    for (size_t v = 0; v < vdt.size(); ++v)
        if (vec_shapes[v].size() != vdt[v].size())
            vec_shapes[v].assign(vdt[v].size(), std::vector<int64_t>{1});
    Described d;
    describe_inputs(s, shapes, vec_shapes, pdt, vpdt, &d);
    std::vector<pd_tensor> res;
    std::vector<int32_t> counts;
    std::string err;
    if (!infer(s, d, at, &res, &counts, &err))
        throw std::runtime_error(err);
    std::vector<paddle::DataType> out;
    for (const pd_tensor &t : res)
        out.push_back(to_paddle(t.dtype));
    return out;
}

template <int N> void kernel_at(paddle::CustomOpKernelContext *ctx) { run_kernel(slots[N], ctx); }

// The first infer failure on this thread since Python last took it (pdext_paddle_native_take_
// error). Paddle calls infer functions while it builds a static program, where an exception
// escaping them ends the process (std::terminate), so they never throw: they record pdext's
// message here and hand Paddle placeholder shapes and dtypes, and pdext.paddle raises the
// message as a Python exception as soon as Paddle's call that built the op returns.
thread_local std::string pending_error;

void record(const char *what)
{
    if (pending_error.empty())
        pending_error = what;
}

template <int N>
std::vector<std::vector<int64_t>>
shape_at(const std::vector<std::vector<int64_t>> &shapes,
         const std::vector<std::vector<std::vector<int64_t>>> &vec_shapes,
         const std::vector<paddle::any> &attrs)
{
    try {
        return infer_shape(N, shapes, vec_shapes, attrs);
    } catch (const std::exception &e) {
        record(e.what());
    } catch (...) {
        record("an unknown C++ exception");
    }
    std::vector<int64_t> like = shapes.empty() ? std::vector<int64_t>{1} : shapes[0];
    return std::vector<std::vector<int64_t>>(static_cast<size_t>(slots[N].n_out), like);
}

template <int N>
std::vector<paddle::DataType> dtype_at(const std::vector<paddle::DataType> &dtypes,
                                       const std::vector<std::vector<paddle::DataType>> &vdt,
                                       const std::vector<paddle::any> &attrs)
{
    try {
        return infer_dtype(N, dtypes, vdt, attrs);
    } catch (const std::exception &e) {
        record(e.what());
    } catch (...) {
        record("an unknown C++ exception");
    }
    paddle::DataType like = dtypes.empty() ? phi::DataType::FLOAT32 : dtypes[0];
    return std::vector<paddle::DataType>(static_cast<size_t>(slots[N].n_out), like);
}

struct Table {
    paddle::KernelFunc kernel[kSlots];
    paddle::InferShapeFunc shape[kSlots];
    paddle::InferDtypeFunc dtype[kSlots];
};

template <int... N> Table make_table(std::integer_sequence<int, N...>)
{
    return Table{{&kernel_at<N>...}, {&shape_at<N>...}, {&dtype_at<N>...}};
}

const Table &table()
{
    static const Table t = make_table(std::make_integer_sequence<int, kSlots>{});
    return t;
}

void copy_message(const char *what, char *err, size_t size)
{
    if (err != nullptr && size > 0) {
        std::strncpy(err, what, size - 1);
        err[size - 1] = '\0';
    }
}

// Fills slot n for op and declares it to Paddle as builder index `index` (0 forward, 1 grad,
// 2 double grad) of Paddle op `name`.
void declare(const char *name, const pd_op *op, size_t index, int n)
{
    Slot &s = slots[n];
    s.op = op;
    s.name = name;
    if (index == 1)
        s.name += "_grad";
    else if (index == 2)
        s.name += "_grad_grad";
    s.n_in = pd_op_input_count(op);
    s.n_out = pd_op_output_count(op);
    s.n_attr = pd_op_attr_count(op);
    std::vector<std::string> ins, outs, attrs;
    for (int32_t i = 0; i < s.n_in; ++i) {
        pd_op_input_info(op, i, &s.in[i]);
        ins.push_back(s.in[i].decl);
    }
    for (int32_t o = 0; o < s.n_out; ++o) {
        pd_op_output_info(op, o, &s.out[o]);
        outs.push_back(s.out[o].decl);
    }
    // The inplace map, as Paddle's SetInplaceMap takes it: the declared names of the input
    // and of the output that is it.
    std::unordered_map<std::string, std::string> inplace;
    const pd_op_def *def = pd_op_definition(op);
    for (int k = 0; def != nullptr && k < PD_MAX_INPLACE && def->inplace[k][0] != nullptr; ++k) {
        inplace[def->inplace[k][0]] = def->inplace[k][1];
        for (int32_t o = 0; o < s.n_out; ++o)
            if (std::strcmp(s.out[o].decl, def->inplace[k][1]) == 0 ||
                std::strcmp(s.out[o].name, def->inplace[k][1]) == 0)
                s.inplace_out[o] = true;
    }
    for (int32_t j = 0; j < s.n_attr; ++j) {
        pd_op_attr_info(op, j, &s.attr[j]);
        const char *t = paddle_attr_type(s.attr[j].type);
        if (t == nullptr)
            throw std::runtime_error(std::string(pd_op_name(op)) + ": attr '" + s.attr[j].name +
                                     "' has a type Paddle's custom ops cannot declare");
        attrs.push_back(std::string(s.attr[j].name) + ": " + t);
    }
    s.vector_out = false;
    for (int32_t o = 0; o < s.n_out; ++o)
        s.vector_out = s.vector_out || s.out[o].is_vector;
    paddle::OpMetaInfoBuilder b(std::string(name), index);
    b.Inputs(std::move(ins)).Outputs(std::move(outs)).Attrs(std::move(attrs));
    if (!inplace.empty())
        b.SetInplaceMap(std::move(inplace));
    b.SetKernelFn(table().kernel[n]);
    b.SetInferShapeFn(table().shape[n]);
    b.SetInferDtypeFn(table().dtype[n]);
}

} // namespace

// Declares Paddle op `name` for pdext op `fwd`, with fwd's grad op and that one's grad op (where
// declared) as its grad and double grad ops, into Paddle's OpMetaInfoMap; Python then registers
// the map's new ops with Paddle (load_op_meta_info_and_register_op on this library). 0, or -1
// with the message in err.
extern "C" __attribute__((visibility("default"))) int
pdext_paddle_native_declare(const char *name, const void *fwd, char *err, size_t err_size)
{
    try {
        std::lock_guard<std::mutex> lock(slots_mutex);
        const pd_op *op = static_cast<const pd_op *>(fwd);
        const pd_op *grad = pd_op_grad(op);
        const pd_op *grad_grad = grad != nullptr ? pd_op_grad(grad) : nullptr;
        // Every attr type is checked before anything is declared: Paddle's map keeps what
        // is declared, so a refusal must leave nothing behind.
        for (const pd_op *o : {op, grad, grad_grad})
            for (int32_t j = 0; o != nullptr && j < pd_op_attr_count(o); ++j)
                if (paddle_attr_type(pd_op_attr_type(o, j)) == nullptr)
                    throw std::runtime_error(std::string(pd_op_name(o)) + ": attr '" +
                                             pd_op_attr_name(o, j) +
                                             "' has a type Paddle's custom ops cannot declare");
        int need = 1 + (grad != nullptr) + (grad_grad != nullptr);
        if (n_slots + need > kSlots)
            throw std::runtime_error("pdext.paddle.register: more than " + std::to_string(kSlots) +
                                     " pdext ops registered with Paddle in one process");
        declare(name, op, 0, n_slots++);
        if (grad != nullptr)
            declare(name, grad, 1, n_slots++);
        if (grad_grad != nullptr)
            declare(name, grad_grad, 2, n_slots++);
        return 0;
    } catch (const std::exception &e) {
        copy_message(e.what(), err, err_size);
        return -1;
    }
}

// How many times Paddle called the infer functions of pdext ops (InferShape and InferDtype):
// Paddle asks them when it builds a static program, not per dygraph call.
extern "C" __attribute__((visibility("default"))) unsigned long long
pdext_paddle_native_infer_calls(void)
{
    return infer_calls.load(std::memory_order_relaxed);
}

// The infer failure recorded on this thread (see pending_error), copied into buf and cleared;
// 0 when there was none, else 1.
extern "C" __attribute__((visibility("default"))) int pdext_paddle_native_take_error(char *buf,
                                                                                     size_t size)
{
    if (pending_error.empty())
        return 0;
    copy_message(pending_error.c_str(), buf, size);
    pending_error.clear();
    return 1;
}
