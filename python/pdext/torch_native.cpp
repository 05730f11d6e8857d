// torch_native.cpp - the one boxed torch kernel of pdext.torch.register: a torch op's arguments
// (the dispatcher's stack) become pd_tensors over the tensors' own memory and pd_attrs, the
// pdext runner runs the op (pd_op_run), and its outputs become at::Tensors that own the pdext
// storage. No Python and no DLPack on the call path.
//
// pdext.torch builds this file once per torch version and pdext version with torch's headers
// (torch.utils.cpp_extension.include_paths()) into pdext's cache, and loads it with ctypes; the
// Python side only defines the schemas, the fake kernels and the autograd rules. Its C entry
// points register the kernel of one op under a dispatch key (a torch::Library fragment of its
// own, kept until dropped), and drop them again.
//
// The autograd kernel of an op with a grad op is here too (AutogradKernel): with no input
// needing grad it redispatches below autograd without leaving C++ (torch's Python autograd
// kernel of torch.library.register_autograd cost as much as the op itself); otherwise it
// records a node (GradNode) whose backward calls the grad op through the dispatcher, so that
// the grad op's own autograd (from a double grad op) records history under create_graph.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/library.h>

#include "pdext.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

pd_data_type to_pd(at::ScalarType s)
{
    switch (s) {
    case at::kBool: return PD_BOOL;
    case at::kChar: return PD_INT8;
    case at::kByte: return PD_UINT8;
    case at::kShort: return PD_INT16;
    case at::kInt: return PD_INT32;
    case at::kLong: return PD_INT64;
    case at::kHalf: return PD_FLOAT16;
    case at::kBFloat16: return PD_BFLOAT16;
    case at::kFloat: return PD_FLOAT32;
    case at::kDouble: return PD_FLOAT64;
    case at::kComplexFloat: return PD_COMPLEX64;
    case at::kComplexDouble: return PD_COMPLEX128;
    case at::kUInt16: return PD_UINT16;
    case at::kUInt32: return PD_UINT32;
    case at::kUInt64: return PD_UINT64;
    default: return PD_UNDEFINED;
    }
}

at::ScalarType to_torch(pd_data_type t)
{
    switch (t) {
    case PD_BOOL: return at::kBool;
    case PD_INT8: return at::kChar;
    case PD_UINT8: return at::kByte;
    case PD_INT16: return at::kShort;
    case PD_INT32: return at::kInt;
    case PD_INT64: return at::kLong;
    case PD_FLOAT16: return at::kHalf;
    case PD_BFLOAT16: return at::kBFloat16;
    case PD_FLOAT32: return at::kFloat;
    case PD_FLOAT64: return at::kDouble;
    case PD_COMPLEX64: return at::kComplexFloat;
    case PD_COMPLEX128: return at::kComplexDouble;
    case PD_UINT16: return at::kUInt16;
    case PD_UINT32: return at::kUInt32;
    case PD_UINT64: return at::kUInt64;
    default: TORCH_CHECK(false, "pdext dtype ", pd_dtype_name(t), " has no torch dtype");
    }
}

// A borrowed pd_tensor (no storage) over tensor x's memory.
void borrow(const char *op, const char *input, const at::Tensor &x, pd_tensor *t)
{
    TORCH_CHECK(x.defined(), op, "(): input '", input, "' is an undefined tensor");
    pd_data_type dt = to_pd(x.scalar_type());
    TORCH_CHECK(dt != PD_UNDEFINED, op, "(): input '", input, "' is ", x.scalar_type(),
                ", which pdext has no dtype for");
    TORCH_CHECK(x.dim() <= PD_MAX_DIMS, op, "(): input '", input, "' has ", x.dim(),
                " dimensions; pdext tensors have at most ", PD_MAX_DIMS);
    TORCH_CHECK(x.layout() == at::kStrided, op, "(): input '", input, "' has layout ", x.layout(),
                "; pdext takes strided (dense) tensors");
    std::memset(t, 0, sizeof *t);
    if (x.is_cpu())
        t->place = pd_place_cpu();
    else if (x.is_cuda())
        t->place = pd_place_make(PD_PLACE_GPU, x.get_device());
    else
        TORCH_CHECK(false, op, "(): input '", input, "' is on ", x.device(),
                    "; pdext's torch kernels take CPU and CUDA tensors");
    t->data = x.numel() > 0 ? x.data_ptr() : nullptr;
    t->dtype = dt;
    t->ndim = static_cast<int32_t>(x.dim());
    bool dense = x.is_contiguous();
    for (int32_t d = 0; d < t->ndim; ++d) {
        t->shape[d] = x.size(d);
        t->strides[d] = x.stride(d);
    }
    t->layout = dense ? PD_LAYOUT_DENSE : PD_LAYOUT_STRIDED;
    if (dense) { // dense strides as the runtime writes them (size-1 dims may differ in torch)
        int64_t s = 1;
        for (int32_t d = t->ndim - 1; d >= 0; --d) {
            t->strides[d] = s;
            s *= t->shape[d];
        }
    }
}

// An at::Tensor owning the pdext tensor *t (its reference moves; *t becomes undefined).
at::Tensor adopt(pd_tensor *t)
{
    if (t->dtype == PD_UNDEFINED)
        return at::Tensor();
    auto options = at::TensorOptions().dtype(to_torch(t->dtype));
    if (t->place.type == PD_PLACE_GPU)
        options = options.device(at::kCUDA, static_cast<c10::DeviceIndex>(t->place.device_id));
    std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
    std::vector<int64_t> strides(t->ndim);
    int64_t s = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
        strides[d] = t->layout == PD_LAYOUT_DENSE ? s : t->strides[d];
        s *= t->shape[d];
    }
    if (t->storage == nullptr) {
        // A view of a borrowed input: torch ops return no alias of an input, so a copy.
        at::Tensor view = at::from_blob(t->data, shape, strides, options);
        at::Tensor copy = view.clone(at::MemoryFormat::Contiguous);
        pd_tensor_release(t);
        return copy;
    }
    auto *owned = new pd_tensor(*t);
    *t = pd_tensor{};
    return at::from_blob(
        owned->data, shape, strides,
        [owned](void *) {
            pd_tensor_release(owned);
            delete owned;
        },
        options);
}

// Makes torch's current stream of CUDA device `place` pdext's current stream of this thread for
// it, so that the call runs where torch's next op waits for it (no synchronization). The stream
// comes through c10's device-generic interface (Stream::native_handle, a cudaStream_t), so this
// file needs no CUDA headers. torch's default stream is the legacy default stream, handle 0,
// which pdext cannot wrap (0 means "none" to it): it is named by CUDA's other handle for the
// same stream, cudaStreamLegacy (1), as DLPack names it too. pdext's wrappers are kept per
// thread, as torch's current streams are: a handful at most.
void follow_torch_stream(pd_place place)
{
    static thread_local std::vector<std::pair<void *, pd_stream_t *>> wrapped;
    const c10::impl::DeviceGuardImplInterface *impl = c10::impl::getDeviceGuardImpl(c10::kCUDA);
    c10::Stream current = impl->getStream(
        c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(place.device_id)));
    void *handle = current.native_handle();
    if (handle == nullptr)
        handle = reinterpret_cast<void *>(static_cast<uintptr_t>(1)); // cudaStreamLegacy
    pd_stream_t *stream = nullptr;
    for (auto &w : wrapped)
        if (w.first == handle)
            stream = w.second;
    if (stream == nullptr) {
        TORCH_CHECK(pd_stream_wrap(place, handle, &stream) == PD_OK, pd_last_error());
        wrapped.emplace_back(handle, stream); // lives as long as the thread may call
    }
    TORCH_CHECK(pd_stream_set_current(place, stream) == PD_OK, pd_last_error());
}

struct Attrs {
    std::vector<pd_attr> list;
    std::vector<std::vector<int32_t>> ints;
    std::vector<std::vector<int64_t>> int64s;
    std::vector<std::vector<float>> floats;
    std::vector<std::vector<std::string>> strs;
    std::vector<std::vector<const char *>> cstrs;
    std::vector<std::string> strings;
};

class Kernel final : public c10::OperatorKernel {
public:
    explicit Kernel(const pd_op *op) : op_(op)
    {
        name_ = pd_op_name(op);
        n_in_ = pd_op_input_count(op);
        n_out_ = pd_op_output_count(op);
        n_attr_ = pd_op_attr_count(op);
        for (int32_t i = 0; i < n_in_; ++i)
            pd_op_input_info(op, i, &in_[i]);
        for (int32_t o = 0; o < n_out_; ++o)
            pd_op_output_info(op, o, &out_[o]);
        for (int32_t j = 0; j < n_attr_; ++j)
            pd_op_attr_info(op, j, &attr_[j]);
    }

    void set_returned(const std::vector<bool> &returned) { returned_ = returned; }

    void operator()(const c10::OperatorHandle &, c10::DispatchKeySet, torch::jit::Stack *stack)
    {
        const size_t n_args = static_cast<size_t>(n_in_ + n_attr_);
        auto args = torch::jit::last(*stack, n_args);
        // Inputs: one pd_arg per declared input, over the tensors' memory.
        pd_tensor one[PD_MAX_INPUTS];
        std::vector<pd_tensor> many;
        size_t total = 0;
        for (int32_t i = 0; i < n_in_; ++i)
            if (args[i].isTensorList())
                total += args[i].toTensorList().size();
        many.resize(total);
        pd_arg in[PD_MAX_INPUTS];
        size_t used = 0;
        for (int32_t i = 0; i < n_in_; ++i) {
            const c10::IValue &v = args[i];
            in[i] = pd_arg{nullptr, &one[i], 0};
            if (v.isNone())
                continue;
            if (v.isTensorList()) {
                auto list = v.toTensorList();
                in[i].tensors = many.data() + used;
                for (size_t k = 0; k < list.size(); ++k)
                    borrow(name_, in_[i].name, list.get(k), &many[used + k]);
                in[i].count = static_cast<int32_t>(list.size());
                used += list.size();
            } else {
                borrow(name_, in_[i].name, v.toTensor(), &one[i]);
                in[i].count = 1;
            }
        }
        Attrs at;
        at.list.reserve(n_attr_);
        at.ints.reserve(n_attr_);
        at.int64s.reserve(n_attr_);
        at.floats.reserve(n_attr_);
        at.strs.reserve(n_attr_);
        at.cstrs.reserve(n_attr_);
        at.strings.reserve(n_attr_);
        for (int32_t j = 0; j < n_attr_; ++j)
            add_attr(attr_[j], args[n_in_ + j], &at);
        // Outputs: tensors NULL / count 0, so the runner makes each output's array with exactly
        // as many items as the op made (no guessed room a vector output could outgrow after
        // its kernel ran); the guard frees the arrays (pd_arg_release) however this returns.
        struct Outs {
            pd_arg arg[PD_MAX_OUTPUTS] = {};
            int32_t n = 0;
            ~Outs()
            {
                for (int32_t o = 0; o < n; ++o)
                    pd_arg_release(&arg[o]);
            }
        } outs;
        outs.n = n_out_;
        pd_arg *out = outs.arg;
        // CUDA inputs: the call runs on torch's current stream of their device.
        pd_place gpu = pd_place_cpu();
        for (int32_t i = 0; i < n_in_ && gpu.type != PD_PLACE_GPU; ++i)
            for (int32_t k = 0; k < in[i].count; ++k)
                if (in[i].tensors[k].place.type == PD_PLACE_GPU)
                    gpu = in[i].tensors[k].place;
        if (gpu.type == PD_PLACE_GPU)
            follow_torch_stream(gpu);
        pd_status st = pd_op_run(op_, in, n_in_, at.list.data(),
                                 static_cast<int32_t>(at.list.size()), out, n_out_);
        TORCH_CHECK(st == PD_OK, pd_last_error());
        torch::jit::drop(*stack, n_args);
        for (int32_t o = 0; o < n_out_; ++o) {
            bool keep = returned_.empty() || returned_[o];
            if (!keep)
                continue; // released with the others by the guard
            if (out_[o].is_vector) {
                std::vector<at::Tensor> items;
                for (int32_t k = 0; k < out[o].count; ++k)
                    items.push_back(adopt(&out[o].tensors[k]));
                torch::jit::push(*stack, c10::IValue(items));
            } else {
                torch::jit::push(*stack,
                                 out[o].count > 0 ? adopt(&out[o].tensors[0]) : at::Tensor());
            }
        }
    }

private:
    void add_attr(const pd_attr_info &info, const c10::IValue &v, Attrs *at) const
    {
        if (v.isNone())
            return; // a str[] attr left to its declared default (pdext.torch's schemas)
        pd_attr a;
        std::memset(&a, 0, sizeof a);
        a.name = info.name;
        a.type = info.type;
        switch (info.type) {
        case PD_ATTR_BOOL: a.v.b = v.toBool(); break;
        case PD_ATTR_INT: {
            int64_t x = v.toInt();
            TORCH_CHECK(x >= INT32_MIN && x <= INT32_MAX, name_, "(): attr '", info.name, "' is ",
                        x, ", outside int32_t");
            a.v.i = static_cast<int32_t>(x);
            break;
        }
        case PD_ATTR_INT64: a.v.i64 = v.toInt(); break;
        case PD_ATTR_FLOAT: a.v.f = static_cast<float>(v.toDouble()); break;
        case PD_ATTR_DOUBLE: a.v.d = v.toDouble(); break;
        case PD_ATTR_STRING:
            at->strings.push_back(v.toStringRef());
            a.v.s = at->strings.back().c_str();
            break;
        case PD_ATTR_INTS: {
            std::vector<int32_t> xs;
            for (int64_t x : v.toIntVector()) {
                TORCH_CHECK(x >= INT32_MIN && x <= INT32_MAX, name_, "(): attr '", info.name,
                            "' holds ", x, ", outside int32_t");
                xs.push_back(static_cast<int32_t>(x));
            }
            at->ints.push_back(std::move(xs));
            a.v.ints = at->ints.back().data();
            a.count = static_cast<int32_t>(at->ints.back().size());
            break;
        }
        case PD_ATTR_INT64S:
            at->int64s.push_back(v.toIntVector());
            a.v.int64s = at->int64s.back().data();
            a.count = static_cast<int32_t>(at->int64s.back().size());
            break;
        case PD_ATTR_FLOATS: {
            std::vector<float> xs;
            for (double x : v.toDoubleVector())
                xs.push_back(static_cast<float>(x));
            at->floats.push_back(std::move(xs));
            a.v.floats = at->floats.back().data();
            a.count = static_cast<int32_t>(at->floats.back().size());
            break;
        }
        case PD_ATTR_STRINGS: {
            std::vector<std::string> xs;
            for (const auto &x : v.toListRef())
                xs.push_back(x.toStringRef());
            at->strs.push_back(std::move(xs));
            std::vector<const char *> cs;
            for (const auto &x : at->strs.back())
                cs.push_back(x.c_str());
            at->cstrs.push_back(std::move(cs));
            a.v.strings = at->cstrs.back().data();
            a.count = static_cast<int32_t>(at->cstrs.back().size());
            break;
        }
        default: TORCH_CHECK(false, name_, "(): attr '", info.name, "' has an unknown type");
        }
        at->list.push_back(a);
    }

    const pd_op *op_;
    const char *name_;
    int32_t n_in_, n_out_, n_attr_;
    pd_arg_info in_[PD_MAX_INPUTS];
    pd_arg_info out_[PD_MAX_OUTPUTS];
    pd_attr_info attr_[PD_MAX_ATTRS];
    std::vector<bool> returned_;
};

// --- autograd --------------------------------------------------------------------------------

// Where a grad op's input comes from: libpdext's binding (pd_op_grad_input_source, read in
// Python as op.grad_inputs), as torch_native.py's register_autograd hands it over.
enum GradSource { FROM_INPUT = 0, FROM_OUTPUT = 1, FROM_OUTPUT_GRAD = 2, FROM_NOTHING = 3 };

struct GradSpec {
    std::string ns, grad_name;
    std::vector<int> in_kind, in_index; // per grad op input: GradSource and which one
    std::vector<int> attr_src;          // per grad op attr: forward argument position, or -1
    std::vector<int> out_to_input;      // per returned grad op output: forward input, or -1
};

// One saved forward input or output: a tensor, a tensor list (vector), or None.
struct Saved {
    enum Kind { NONE, ONE, LIST } kind = NONE;
    std::vector<torch::autograd::SavedVariable> vars;
};

class GradNode final : public torch::autograd::Node {
public:
    GradNode(const std::shared_ptr<const GradSpec> &spec, std::string name)
        : spec_(spec), name_(std::move(name))
    {}

    std::string name() const override { return name_; }

    void release_variables() override
    {
        std::lock_guard<std::mutex> lock(mutex_);
        saved_.clear();
        released_ = true;
    }

    // Slot counts: in_sizes[i] tensors for forward input i, out_sizes[o] for output o (-1: a
    // single tensor, >= 0: a list of that many).
    std::vector<int> in_sizes, out_sizes;
    std::vector<c10::IValue> attrs; // the forward attrs, by argument position past the inputs
    std::map<std::pair<int, int>, Saved> saved_; // (GradSource, index) -> what was saved

    torch::autograd::variable_list apply(torch::autograd::variable_list &&grads) override
    {
        std::lock_guard<std::mutex> lock(mutex_);
        TORCH_CHECK(!released_, name_,
                    ": its saved tensors were freed (a second backward through the graph: "
                    "pass retain_graph=True to the first)");
        const GradSpec &g = *spec_;
        auto handle =
            c10::Dispatcher::singleton().findSchemaOrThrow((g.ns + "::" + g.grad_name).c_str(), "");
        const auto &schema = handle.schema();
        torch::jit::Stack stack;
        auto self = getptr();
        // The gradients of output o: slots from out_base(o).
        std::vector<size_t> out_base(out_sizes.size());
        for (size_t o = 0, k = 0; o < out_sizes.size(); ++o) {
            out_base[o] = k;
            k += out_sizes[o] < 0 ? 1 : static_cast<size_t>(out_sizes[o]);
        }
        auto grad_of = [&](size_t slot) {
            at::Tensor t = grads[slot];
            if (!t.defined() && !input_metadata(slot).was_default_constructed())
                t = input_metadata(slot).zeros_like(); // as torch.autograd.Function does
            return t;
        };
        for (size_t k = 0; k < g.in_kind.size(); ++k) {
            int kind = g.in_kind[k], idx = g.in_index[k];
            if (kind == FROM_OUTPUT_GRAD) {
                if (out_sizes[idx] < 0) {
                    stack.emplace_back(grad_of(out_base[idx]));
                } else {
                    std::vector<at::Tensor> items;
                    for (int j = 0; j < out_sizes[idx]; ++j)
                        items.push_back(grad_of(out_base[idx] + j));
                    stack.emplace_back(items);
                }
                continue;
            }
            auto it = saved_.find({kind, idx});
            if (kind == FROM_NOTHING || it == saved_.end() || it->second.kind == Saved::NONE) {
                stack.emplace_back();
                continue;
            }
            if (it->second.kind == Saved::ONE) {
                stack.emplace_back(it->second.vars[0].unpack(self));
            } else {
                std::vector<at::Tensor> items;
                for (auto &v : it->second.vars)
                    items.push_back(v.unpack(self));
                stack.emplace_back(items);
            }
        }
        size_t n_grad_in = g.in_kind.size();
        for (size_t j = 0; j < g.attr_src.size(); ++j) {
            int src = g.attr_src[j];
            if (src >= 0) {
                stack.push_back(attrs[static_cast<size_t>(src)]);
            } else {
                const auto &arg = schema.arguments()[n_grad_in + j];
                TORCH_CHECK(arg.default_value().has_value(), name_, ": the grad op's attr '",
                            arg.name(), "' is not an attr of the forward op and has no default");
                stack.push_back(*arg.default_value());
            }
        }
        handle.callBoxed(stack);
        // The gradients of the forward inputs, one slot per input tensor.
        std::vector<size_t> in_base(in_sizes.size());
        size_t n_slots = 0;
        for (size_t i = 0; i < in_sizes.size(); ++i) {
            in_base[i] = n_slots;
            n_slots += in_sizes[i] < 0 ? 1 : static_cast<size_t>(in_sizes[i]);
        }
        torch::autograd::variable_list result(n_slots);
        for (size_t r = 0; r < g.out_to_input.size() && r < stack.size(); ++r) {
            int i = g.out_to_input[r];
            if (i < 0 || stack[r].isNone())
                continue;
            if (stack[r].isTensorList()) {
                auto list = stack[r].toTensorList();
                for (size_t j = 0; j < list.size() && static_cast<int>(j) < in_sizes[i]; ++j)
                    result[in_base[i] + j] = list.get(j);
            } else if (in_sizes[i] < 0) {
                result[in_base[i]] = stack[r].toTensor();
            }
        }
        return result;
    }

private:
    std::shared_ptr<const GradSpec> spec_;
    std::string name_;
    bool released_ = false;
};

// The Autograd-key kernel of an op with a grad op.
class AutogradKernel final : public c10::OperatorKernel {
public:
    AutogradKernel(std::shared_ptr<const GradSpec> spec, const char *name, int n_in, int n_attr)
        : spec_(std::move(spec)), name_(std::string("pdext::") + name + "Backward"), n_in_(n_in),
          n_attr_(n_attr)
    {
        for (int k = 0; k < static_cast<int>(spec_->in_kind.size()); ++k) {
            if (spec_->in_kind[k] == FROM_INPUT)
                need_in_.push_back(spec_->in_index[k]);
            else if (spec_->in_kind[k] == FROM_OUTPUT)
                need_out_.push_back(spec_->in_index[k]);
        }
    }

    void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet ks, torch::jit::Stack *stack)
    {
        const size_t n_args = static_cast<size_t>(n_in_ + n_attr_);
        auto args = torch::jit::last(*stack, n_args);
        bool need = false;
        if (!spec_->grad_name.empty() && at::GradMode::is_enabled()) {
            for (int i = 0; i < n_in_ && !need; ++i) {
                const c10::IValue &v = args[i];
                if (v.isTensor()) {
                    need = v.toTensor().requires_grad();
                } else if (v.isTensorList()) {
                    for (const at::Tensor &t : v.toTensorList())
                        need = need || (t.defined() && t.requires_grad());
                }
            }
        }
        if (!need) {
            at::AutoDispatchBelowADInplaceOrView guard;
            op.redispatchBoxed(ks & c10::after_autograd_keyset, stack);
            return;
        }
        auto node = c10::make_intrusive<GradNode>(spec_, name_);
        // The forward inputs, one slot per tensor (an undefined one for None).
        std::vector<at::Tensor> flat;
        std::vector<c10::IValue> inputs(args.begin(), args.begin() + n_in_);
        for (int i = 0; i < n_in_; ++i) {
            const c10::IValue &v = inputs[i];
            if (v.isTensorList()) {
                auto list = v.toTensorList();
                node->in_sizes.push_back(static_cast<int>(list.size()));
                for (const at::Tensor &t : list)
                    flat.push_back(t);
            } else {
                node->in_sizes.push_back(-1);
                flat.push_back(v.isTensor() ? v.toTensor() : at::Tensor());
            }
        }
        node->attrs.assign(args.begin() + n_in_, args.end());
        node->set_next_edges(torch::autograd::collect_next_edges(flat));
        for (int i : need_in_)
            save(node.get(), FROM_INPUT, i, inputs[i], false);
        {
            at::AutoDispatchBelowADInplaceOrView guard;
            op.redispatchBoxed(ks & c10::after_autograd_keyset, stack);
        }
        // The outputs: fresh tensors (the kernels return no views); each gets this node.
        const size_t n_ret = op.schema().returns().size();
        auto rets = torch::jit::last(*stack, n_ret);
        for (size_t o = 0; o < n_ret; ++o) {
            const c10::IValue &v = rets[o];
            if (v.isTensorList()) {
                auto list = v.toTensorList();
                node->out_sizes.push_back(static_cast<int>(list.size()));
                for (const at::Tensor &t : list)
                    attach(node, t);
            } else {
                node->out_sizes.push_back(-1);
                attach(node, v.isTensor() ? v.toTensor() : at::Tensor());
            }
        }
        for (int o : need_out_)
            save(node.get(), FROM_OUTPUT, o, rets[static_cast<size_t>(o)], true);
    }

private:
    static void attach(const c10::intrusive_ptr<GradNode> &node, const at::Tensor &t)
    {
        if (t.defined() && torch::autograd::isDifferentiableType(t.scalar_type()))
            torch::autograd::set_history(t, node);
        else
            node->add_input_metadata(torch::autograd::Node::undefined_input());
    }

    static void save(GradNode *node, int kind, int index, const c10::IValue &v, bool is_output)
    {
        Saved s;
        if (v.isTensorList()) {
            s.kind = Saved::LIST;
            for (const at::Tensor &t : v.toTensorList())
                s.vars.emplace_back(t, is_output);
        } else if (v.isTensor()) {
            s.kind = Saved::ONE;
            s.vars.emplace_back(v.toTensor(), is_output);
        }
        node->saved_[{kind, index}] = std::move(s);
    }

    std::shared_ptr<const GradSpec> spec_;
    std::string name_;
    int n_in_, n_attr_;
    std::vector<int> need_in_, need_out_;
};

std::mutex libs_mutex;
// "ns::name" -> the fragments holding its kernels.
std::map<std::string, std::vector<std::unique_ptr<torch::Library>>> libs;

void copy_message(const char *what, char *err, size_t size)
{
    if (err != nullptr && size > 0) {
        std::strncpy(err, what, size - 1);
        err[size - 1] = '\0';
    }
}

} // namespace

// Registers the boxed kernel of `op` for torch op ns::name under dispatch key `key` ("CPU" or
// "CUDA"); returned[o] (n_out entries) says which outputs the schema returns. 0, or -1 with
// the message in err.
extern "C" __attribute__((visibility("default"))) int
pdext_torch_native_register(const char *ns, const char *name, const void *op, const char *key,
                            const unsigned char *returned, int n_out, char *err, size_t err_size)
{
    try {
        auto k = c10::parseDispatchKey(key);
        auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, ns, k,
                                                    "pdext/torch_native.cpp", __LINE__);
        auto kernel = std::make_unique<Kernel>(static_cast<const pd_op *>(op));
        kernel->set_returned(std::vector<bool>(returned, returned + n_out));
        lib->impl(name, torch::CppFunction::makeFromBoxedFunctor(std::move(kernel)));
        std::lock_guard<std::mutex> lock(libs_mutex);
        libs[std::string(ns) + "::" + name].push_back(std::move(lib));
        return 0;
    } catch (const std::exception &e) {
        copy_message(e.what(), err, err_size);
        return -1;
    }
}

// Drops every kernel registered for ns::name.
extern "C" __attribute__((visibility("default"))) void pdext_torch_native_drop(const char *ns,
                                                                               const char *name)
{
    std::lock_guard<std::mutex> lock(libs_mutex);
    libs.erase(std::string(ns) + "::" + name);
}

// Registers the autograd kernel of torch op ns::name (n_in inputs, n_attr attrs), whose grad op
// is ns::grad_name: grad_in_kind / grad_in_index (n_grad_in entries) say where each grad op
// input comes from (GradSource), grad_attr_src (n_grad_attr) the forward argument position of
// each grad op attr (-1: its default), grad_out_to_input (n_grad_out) the forward input each
// returned grad op output is the gradient of (-1: none). 0, or -1 with the message in err.
extern "C" __attribute__((visibility("default"))) int pdext_torch_native_register_autograd(
    const char *ns, const char *name, int n_in, int n_attr, const char *grad_name,
    const int *grad_in_kind, const int *grad_in_index, int n_grad_in, const int *grad_attr_src,
    int n_grad_attr, const int *grad_out_to_input, int n_grad_out, char *err, size_t err_size)
{
    try {
        auto spec = std::make_shared<GradSpec>();
        spec->ns = ns;
        spec->grad_name = grad_name;
        spec->in_kind.assign(grad_in_kind, grad_in_kind + n_grad_in);
        spec->in_index.assign(grad_in_index, grad_in_index + n_grad_in);
        spec->attr_src.assign(grad_attr_src, grad_attr_src + n_grad_attr);
        for (int &a : spec->attr_src)
            if (a >= 0)
                a -= n_in; // a position among the forward attrs
        spec->out_to_input.assign(grad_out_to_input, grad_out_to_input + n_grad_out);
        auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, ns,
                                                    c10::DispatchKey::Autograd,
                                                    "pdext/torch_native.cpp", __LINE__);
        lib->impl(name, torch::CppFunction::makeFromBoxedFunctor(
                            std::make_unique<AutogradKernel>(spec, name, n_in, n_attr)));
        std::lock_guard<std::mutex> lock(libs_mutex);
        libs[std::string(ns) + "::" + name].push_back(std::move(lib));
        return 0;
    } catch (const std::exception &e) {
        copy_message(e.what(), err, err_size);
        return -1;
    }
}
