/*
 * ms_extension/tensor.h - ms::Tensor, MindSpore's tensor handle, over a pdext tensor, and the
 * tensor-making free functions (ms::tensor, ms::ones, ms::zeros); tensor_ops.h defines the
 * gathering and tiling members (index_select, repeat, repeat_interleave, AssignTensor).
 *
 * A handle is a shared pointer to one holder, so copies see the same tensor and the same
 * need-contiguous flag (which is why the flag's setter is const). The holder keeps the dtype
 * and shape a tensor was made with apart from its memory: a tensor made by
 * Tensor(dtype, shape) has no memory until a runner's Run gives it some, and the pipeline's
 * later stages read the shape while the caller attaches that memory. Tensor operations
 * (cast, contiguous, reshape, ...) are pdext's host functions: they wait for a tensor still
 * being computed, as MindSpore's dispatched ops do. Errors are C++ exceptions
 * (std::invalid_argument for bad arguments, std::runtime_error for pdext's failures).
 */
#ifndef PDEXT_MS_EXTENSION_TENSOR_H
#define PDEXT_MS_EXTENSION_TENSOR_H

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ms {

namespace detail {

/* A pdext failure inside the API: the status travels to the Python exception. */
class pd_failure : public std::runtime_error {
public:
    pd_failure(pd_status status, const std::string &message)
        : std::runtime_error(message), status_(status)
    {}
    pd_status status() const noexcept { return status_; }

private:
    pd_status status_;
};

inline void check(pd_status st, const char *who)
{
    if (st != PD_OK)
        throw pd_failure(st, std::string(who) + ": " + pd_last_error());
}

/* What a handle shares. */
struct TensorImpl {
    pd_tensor t = {}; /* the memory: undefined until the tensor has some */
    bool owns = true; /* false: a view of a running call's tensor (released by it) */
    TypeId dtype = TypeId::kTypeUnknown;
    std::vector<int64_t> shape;
    bool need_contiguous = true;
    /* The Python object the tensor came from, while the call that converted it runs (the
     * argument converter clears it): its kind picks the kind of the results. */
    void *py_origin = nullptr;

    TensorImpl() = default;
    TensorImpl(const TensorImpl &) = delete;
    TensorImpl &operator=(const TensorImpl &) = delete;
    ~TensorImpl()
    {
        if (owns)
            pd_tensor_release(&t);
    }
};

/* A holder owning *t (its reference moves in). */
inline std::shared_ptr<TensorImpl> adopt(pd_tensor *t)
{
    auto impl = std::make_shared<TensorImpl>();
    impl->t = *t;
    *t = pd_tensor{};
    impl->dtype = from_pd_dtype(impl->t.dtype);
    impl->shape.assign(impl->t.shape, impl->t.shape + impl->t.ndim);
    return impl;
}

/* Dense row-major strides of `shape`, in elements. */
inline std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape)
{
    std::vector<int64_t> s(shape.size());
    int64_t step = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        s[d] = step;
        step *= shape[d] > 0 ? shape[d] : 1;
    }
    return s;
}

/* A tensor the host functions take (they need a storage): `src` itself, or, for a view of a
 * caller's memory (a borrowed Python argument, storage NULL), a wrapper borrowing that memory
 * for one host call. Results made from a wrapper must own their memory (copies): a view of it
 * would outlive the caller's object. */
struct Hosted {
    pd_tensor t = {};
    bool wrapped = false;
    Hosted() = default;
    Hosted(const Hosted &) = delete;
    Hosted &operator=(const Hosted &) = delete;
    ~Hosted()
    {
        if (wrapped)
            pd_tensor_release(&t);
    }
};
inline void host_view(const pd_tensor &src, Hosted &h, const char *who)
{
    if (src.storage != nullptr) {
        h.t = src;
        return;
    }
    h.wrapped = true;
    int64_t lo = 0, hi = 0, n = 1;
    for (int32_t d = 0; d < src.ndim; ++d) {
        n *= src.shape[d];
        int64_t ext = (src.shape[d] - 1) * src.strides[d];
        (ext < 0 ? lo : hi) += ext;
    }
    if (n == 0) {
        check(pd_tensor_empty(&h.t, src.dtype, src.place, src.ndim, src.shape), who);
        return;
    }
    int64_t span = hi - lo + 1;
    char *base = static_cast<char *>(src.data) +
                 lo * static_cast<int64_t>(pd_dtype_size(src.dtype));
    pd_tensor flat = {};
    check(pd_tensor_from_buffer(&flat, base, src.dtype, src.place, 1, &span, nullptr, nullptr),
          who);
    pd_status st = pd_tensor_as_strided(&h.t, &flat, src.ndim, src.shape, src.strides, -lo);
    pd_tensor_release(&flat);
    check(st, who);
}

/* std::false_type for any T: static_assert messages of the unsupported members. */
template <class...> inline constexpr bool unsupported = false;

} // namespace detail

class Tensor {
public:
    /* An undefined handle (what a Python None becomes). */
    Tensor() = default;

    /* A new dense row-major tensor of that type and shape; its memory comes from the runner
     * whose Run gets it as an output (uninitialised). */
    Tensor(TypeId dtype, const ShapeVector &shape) : impl_(std::make_shared<detail::TensorImpl>())
    {
        detail::require_dtype(dtype, "ms::Tensor(dtype, shape)");
        if (shape.size() > PD_MAX_DIMS)
            throw std::invalid_argument(
                "ms::Tensor(dtype, shape): " + std::to_string(shape.size()) +
                " dimensions; pdext takes at most " + std::to_string(PD_MAX_DIMS));
        for (int64_t n : shape)
            if (n < 0)
                throw std::invalid_argument("ms::Tensor(dtype, shape): a dimension is " +
                                            std::to_string(n) + "; sizes must be >= 0");
        impl_->dtype = dtype;
        impl_->shape = shape;
    }

    /* pdext's own: a handle owning *t (the reference moves in). */
    static Tensor adopt(pd_tensor *t)
    {
        Tensor r;
        r.impl_ = detail::adopt(t);
        return r;
    }
    /* pdext's own: a handle that views *t without owning it (a running call's tensor). */
    static Tensor view(const pd_tensor &t)
    {
        Tensor r;
        r.impl_ = std::make_shared<detail::TensorImpl>();
        r.impl_->t = t;
        r.impl_->owns = false;
        r.impl_->dtype = detail::from_pd_dtype(t.dtype);
        r.impl_->shape.assign(t.shape, t.shape + t.ndim);
        return r;
    }

    bool is_defined() const { return impl_ != nullptr; }
    TypeId data_type() const { return need("data_type").dtype; }
    const ShapeVector &shape() const { return need("shape").shape; }
    size_t numel() const
    {
        size_t n = 1;
        for (int64_t d : need("numel").shape)
            n *= static_cast<size_t>(d);
        return n;
    }
    std::vector<int64_t> stride() const
    {
        const detail::TensorImpl &i = need("stride");
        if (!has_memory())
            return detail::dense_strides(i.shape);
        return std::vector<int64_t>(i.t.strides, i.t.strides + i.t.ndim);
    }
    int64_t storage_offset() const { return has_memory() ? need("storage_offset").t.offset : 0; }
    bool is_contiguous() const
    {
        const detail::TensorImpl &i = need("is_contiguous");
        if (!has_memory())
            return true;
        /* Dense row-major; size-1 dimensions (and empty tensors) do not count. */
        int64_t step = 1;
        for (int32_t d = i.t.ndim; d-- > 0;) {
            if (i.t.shape[d] == 0)
                return true;
            if (i.t.shape[d] != 1 && i.t.strides[d] != step)
                return false;
            step *= i.t.shape[d];
        }
        return true;
    }
    void SetNeedContiguous(bool flag) const { need("SetNeedContiguous").need_contiguous = flag; }
    bool need_contiguous() const { return need("need_contiguous").need_contiguous; }
    void *GetDataPtr() const { return need("GetDataPtr").t.data; }

    Tensor cast(TypeId dtype) const
    {
        pd_data_type d = detail::require_dtype(dtype, "ms::Tensor::cast");
        detail::Hosted h;
        detail::host_view(memory("cast"), h, "ms::Tensor::cast");
        pd_tensor out = {};
        detail::check(pd_tensor_cast(&out, &h.t, d), "ms::Tensor::cast");
        return adopt(&out);
    }
    Tensor contiguous() const
    {
        const pd_tensor &src = memory("contiguous");
        detail::Hosted h;
        detail::host_view(src, h, "ms::Tensor::contiguous");
        pd_tensor out = {};
        /* A caller's memory is copied, even dense: the result must own its memory. */
        detail::check(h.wrapped ? pd_tensor_copy_to(&out, &h.t, pd_place_cpu())
                                : pd_tensor_contiguous(&out, &h.t),
                      "ms::Tensor::contiguous");
        return adopt(&out);
    }
    Tensor reshape(const std::vector<int64_t> &shape) const
    {
        if (shape.size() > PD_MAX_DIMS)
            throw std::invalid_argument("ms::Tensor::reshape: too many dimensions");
        /* Row-major order of the elements: a strided tensor is made dense first. */
        Tensor dense = is_contiguous() && memory("reshape").storage != nullptr ? *this
                                                                               : contiguous();
        pd_tensor out = {};
        detail::check(pd_tensor_reshape(&out, &dense.memory("reshape"),
                                        static_cast<int32_t>(shape.size()), shape.data()),
                      "ms::Tensor::reshape");
        return adopt(&out);
    }
    Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const
    {
        const ShapeVector &s = shape();
        int64_t nd = static_cast<int64_t>(s.size());
        if (nd == 0)
            return reshape({1});
        int64_t a = start_dim < 0 ? start_dim + nd : start_dim;
        int64_t b = end_dim < 0 ? end_dim + nd : end_dim;
        if (a < 0 || a >= nd || b < 0 || b >= nd || a > b)
            throw std::invalid_argument("ms::Tensor::flatten: dims " + std::to_string(start_dim) +
                                        ".." + std::to_string(end_dim) + " out of range for " +
                                        std::to_string(nd) + " dimensions");
        ShapeVector r(s.begin(), s.begin() + a);
        int64_t merged = 1;
        for (int64_t d = a; d <= b; ++d)
            merged *= s[d];
        r.push_back(merged);
        r.insert(r.end(), s.begin() + b + 1, s.end());
        return reshape(r);
    }
    std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const
    {
        const ShapeVector &s = shape();
        int64_t nd = static_cast<int64_t>(s.size());
        int64_t d = dim < 0 ? dim + nd : dim;
        if (chunks <= 0 || d < 0 || d >= nd)
            throw std::invalid_argument("ms::Tensor::chunk: chunks must be > 0 and dim in range "
                                        "(got chunks " +
                                        std::to_string(chunks) + ", dim " + std::to_string(dim) +
                                        " of " + std::to_string(nd) + ")");
        int64_t size = s[d], piece = (size + chunks - 1) / chunks;
        /* Views of a caller's memory would outlive it: chunk an owned copy instead. */
        Tensor base = memory("chunk").storage != nullptr ? *this : contiguous();
        std::vector<Tensor> r;
        for (int64_t begin = 0; begin < size || (size == 0 && r.empty()); begin += piece) {
            int64_t end = std::min(size, begin + (piece > 0 ? piece : 1));
            pd_tensor out = {};
            detail::check(pd_tensor_slice_step(&out, &base.memory("chunk"), static_cast<int32_t>(d),
                                               begin, end, 1),
                          "ms::Tensor::chunk");
            r.push_back(adopt(&out));
            if (piece == 0)
                break;
        }
        return r;
    }

    /* tensor_ops.h: host loops over the memory, results own theirs. */
    Tensor index_select(int64_t dim, const Tensor &index) const;
    Tensor repeat(const std::vector<int64_t> &repeats) const;
    Tensor repeat_interleave(const Tensor &repeats, std::optional<int64_t> dim = std::nullopt,
                             std::optional<int64_t> output_size = std::nullopt) const;
    Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                             std::optional<int64_t> output_size = std::nullopt) const;
    void AssignTensor(const Tensor &src) const;

    /* MindSpore-internal: a use fails to compile, naming the member. Each takes a defaulted
     * template parameter that makes the assertion fire only where it is used. */
    template <class D = void> void stub_node(D * = nullptr) const
    {
        static_assert(detail::unsupported<D>, "ms::Tensor::stub_node is not supported by pdext's "
                                              "ms_extension (it is MindSpore-internal)");
    }
    template <class D = void> void tensor(D * = nullptr) const
    {
        static_assert(detail::unsupported<D>, "ms::Tensor::tensor is not supported by pdext's "
                                              "ms_extension (it is MindSpore-internal)");
    }
    template <class D = void> void ConvertStubNodeToTensor(D * = nullptr) const
    {
        static_assert(detail::unsupported<D>,
                      "ms::Tensor::ConvertStubNodeToTensor is not supported by pdext's "
                      "ms_extension (it is MindSpore-internal)");
    }

    /* pdext's own. */
    bool has_memory() const { return impl_ != nullptr && impl_->t.dtype != PD_UNDEFINED; }
    const pd_tensor &pd() const { return need("pd").t; }
    detail::TensorImpl *impl() const { return impl_.get(); }
    /* Gives a tensor without memory the memory of *t (its reference moves in). */
    void attach(pd_tensor *t) const
    {
        impl_->t = *t;
        *t = pd_tensor{};
    }

private:
    /* The holder (shared: a const handle may still set its flags). */
    detail::TensorImpl &need(const char *what) const
    {
        if (impl_ == nullptr)
            throw std::invalid_argument(std::string("ms::Tensor::") + what +
                                        ": the tensor is undefined (None)");
        return *impl_;
    }
    const pd_tensor &memory(const char *what) const
    {
        const detail::TensorImpl &i = need(what);
        if (i.t.dtype == PD_UNDEFINED)
            throw std::invalid_argument(std::string("ms::Tensor::") + what +
                                        ": the tensor has no memory yet (give it to a runner's "
                                        "Run as an output first)");
        return i.t;
    }

    std::shared_ptr<detail::TensorImpl> impl_;
};

namespace detail {
/* A filled tensor of `dtype`: the values made as `from` then converted like numpy's astype. */
inline Tensor made_from(pd_data_type from, const void *values, const ShapeVector &shape,
                        TypeId dtype, const char *who)
{
    pd_data_type to = require_dtype(dtype, who);
    pd_tensor src = {};
    check(pd_tensor_empty(&src, from, pd_place_cpu(), static_cast<int32_t>(shape.size()),
                          shape.data()),
          who);
    std::memcpy(src.data, values, pd_nbytes(&src));
    if (to == from)
        return Tensor::adopt(&src);
    pd_tensor out = {};
    pd_status st = pd_tensor_cast(&out, &src, to);
    pd_tensor_release(&src);
    check(st, who);
    return Tensor::adopt(&out);
}
} // namespace detail

/* --- Free functions ------------------------------------------------------------------------ */

inline Tensor tensor(int64_t value, TypeId dtype = TypeId::kNumberTypeInt64)
{
    return detail::made_from(PD_INT64, &value, {}, dtype, "ms::tensor");
}
inline Tensor tensor(const std::vector<int64_t> &values, TypeId dtype = TypeId::kNumberTypeInt64)
{
    return detail::made_from(PD_INT64, values.data(), {static_cast<int64_t>(values.size())}, dtype,
                             "ms::tensor");
}
inline Tensor tensor(double value, TypeId dtype = TypeId::kNumberTypeFloat64)
{
    return detail::made_from(PD_FLOAT64, &value, {}, dtype, "ms::tensor");
}
inline Tensor tensor(const std::vector<double> &values, TypeId dtype = TypeId::kNumberTypeFloat64)
{
    return detail::made_from(PD_FLOAT64, values.data(), {static_cast<int64_t>(values.size())},
                             dtype, "ms::tensor");
}
inline Tensor ones(const ShapeVector &shape, TypeId dtype = TypeId::kNumberTypeFloat32)
{
    pd_tensor out = {};
    detail::check(pd_tensor_ones(&out, detail::require_dtype(dtype, "ms::ones"), pd_place_cpu(),
                                 static_cast<int32_t>(shape.size()), shape.data()),
                  "ms::ones");
    return Tensor::adopt(&out);
}
inline Tensor zeros(const ShapeVector &shape, TypeId dtype = TypeId::kNumberTypeFloat32)
{
    pd_tensor out = {};
    detail::check(pd_tensor_zeros(&out, detail::require_dtype(dtype, "ms::zeros"), pd_place_cpu(),
                                  static_cast<int32_t>(shape.size()), shape.data()),
                  "ms::zeros");
    return Tensor::adopt(&out);
}

} // namespace ms

#endif /* PDEXT_MS_EXTENSION_TENSOR_H */
