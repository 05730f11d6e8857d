/*
 * ms_extension/tensor_ops.h - the ms::Tensor members that gather and tile (index_select,
 * repeat, repeat_interleave with a count tensor or one count) and AssignTensor.
 *
 * pdext's host API has no gather or tile function, so these are loops over the memory here:
 * the source is read dense (a strided or pending tensor is first made a dense, computed
 * copy by pdext's host functions, which wait) and every result is a new tensor owning its
 * memory, as a MindSpore op's result is (AssignTensor copies nothing: the handle takes the
 * source's tensor). Semantics are MindSpore's (torch's): see
 * ../shared/specs/customopbuilder.md. Bad arguments throw std::invalid_argument naming the
 * member and the value.
 */
#ifndef PDEXT_MS_EXTENSION_TENSOR_OPS_H
#define PDEXT_MS_EXTENSION_TENSOR_OPS_H

#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ms {
namespace detail {

[[noreturn]] inline void bad_argument(const char *who, const std::string &what)
{
    throw std::invalid_argument(std::string(who) + ": " + what);
}

/* `t` dense and computed, for reading its bytes: t itself or a dense copy. */
inline Tensor readable(const Tensor &t, const char *who)
{
    if (!t.is_defined())
        bad_argument(who, "the tensor is undefined (None)");
    if (!t.has_memory())
        bad_argument(who, "the tensor has no memory yet (give it to a runner's Run as an output "
                          "first)");
    Tensor dense = t.is_contiguous() ? t : t.contiguous();
    check(pd_tensor_wait(nullptr, &dense.pd()), who);
    return dense;
}

/* A new dense tensor of `dtype` and `shape`, owning its (uninitialised) memory. */
inline Tensor fresh(pd_data_type dtype, const ShapeVector &shape, const char *who)
{
    pd_tensor out = {};
    check(pd_tensor_empty(&out, dtype, pd_place_cpu(), static_cast<int32_t>(shape.size()),
                          shape.data()),
          who);
    return Tensor::adopt(&out);
}

/* `dim` counted from the end when negative; throws when outside [0, nd). */
inline int64_t norm_dim(int64_t dim, int64_t nd, const char *who)
{
    int64_t d = dim < 0 ? dim + nd : dim;
    if (d < 0 || d >= nd)
        bad_argument(who, "dim " + std::to_string(dim) + " is out of range for a tensor of " +
                              std::to_string(nd) + " dimensions");
    return d;
}

/* The values of a 0-d or 1-d integer tensor (int32 or int64). */
inline std::vector<int64_t> int_values(const Tensor &t, const char *who, const char *what)
{
    if (!t.is_defined())
        bad_argument(who, std::string(what) + " is undefined (None)");
    if (t.shape().size() > 1)
        bad_argument(who, std::string(what) + " must be 0-d or 1-d, got " +
                              std::to_string(t.shape().size()) + " dimensions");
    Tensor d = readable(t, who);
    std::vector<int64_t> v(d.numel());
    if (d.pd().dtype == PD_INT64) {
        if (!v.empty())
            std::memcpy(v.data(), d.GetDataPtr(), v.size() * sizeof(int64_t));
    } else if (d.pd().dtype == PD_INT32) {
        const int32_t *p = static_cast<const int32_t *>(d.GetDataPtr());
        for (size_t k = 0; k < v.size(); ++k)
            v[k] = p[k];
    } else {
        bad_argument(who, std::string(what) + " must be an int32 or int64 tensor, got TypeId " +
                              std::to_string(static_cast<int>(t.data_type())));
    }
    return v;
}

inline int64_t product(const ShapeVector &s, size_t begin, size_t end)
{
    int64_t n = 1;
    for (size_t k = begin; k < end; ++k)
        n *= s[k];
    return n;
}

/* Each slice j of `src` along dim d (outer x n x inner bytes) repeated counts[j] times. */
inline Tensor interleave(const Tensor &src, int64_t d, const std::vector<int64_t> &counts,
                         std::optional<int64_t> output_size, const char *who)
{
    const ShapeVector &s = src.shape();
    int64_t total = 0;
    for (int64_t c : counts) {
        if (c < 0)
            bad_argument(who, "repeats must be >= 0, got " + std::to_string(c));
        total += c;
    }
    if (output_size.has_value() && *output_size != total)
        bad_argument(who, "output_size is " + std::to_string(*output_size) +
                              ", but the repeats add up to " + std::to_string(total));
    ShapeVector os = s;
    os[d] = total;
    Tensor dense = readable(src, who);
    Tensor out = fresh(dense.pd().dtype, os, who);
    const size_t inner = static_cast<size_t>(product(s, d + 1, s.size())) *
                         pd_dtype_size(dense.pd().dtype);
    const int64_t outer = product(s, 0, d), n = s[d];
    const char *from = static_cast<const char *>(dense.GetDataPtr());
    char *to = static_cast<char *>(out.GetDataPtr());
    for (int64_t o = 0; o < outer && inner > 0; ++o)
        for (int64_t j = 0; j < n; ++j)
            for (int64_t r = 0; r < counts[j]; ++r, to += inner)
                std::memcpy(to, from + (o * n + j) * inner, inner);
    return out;
}

inline Tensor interleave_entry(const Tensor &self, std::vector<int64_t> counts, bool one_count,
                               std::optional<int64_t> dim, std::optional<int64_t> output_size)
{
    const char *who = "ms::Tensor::repeat_interleave";
    /* Without dim the input is flattened first; a 0-d input counts as 1-d. */
    Tensor src = !dim.has_value() || self.shape().empty() ? self.flatten() : self;
    int64_t d = dim.has_value() && !self.shape().empty()
                    ? norm_dim(*dim, static_cast<int64_t>(src.shape().size()), who)
                    : 0;
    if (dim.has_value() && self.shape().empty())
        (void)norm_dim(*dim, 1, who);
    const int64_t n = src.shape()[d];
    if (one_count || counts.size() == 1)
        counts.assign(static_cast<size_t>(n), counts.empty() ? 0 : counts[0]);
    else if (static_cast<int64_t>(counts.size()) != n)
        bad_argument(who, "repeats has " + std::to_string(counts.size()) +
                              " entries, but the dimension has size " + std::to_string(n) +
                              " (give one count, or one per entry)");
    return interleave(src, d, counts, output_size, who);
}

} // namespace detail

inline Tensor Tensor::index_select(int64_t dim, const Tensor &index) const
{
    const char *who = "ms::Tensor::index_select";
    const ShapeVector &s = shape();
    const int64_t nd = static_cast<int64_t>(s.size());
    if (nd == 0)
        detail::bad_argument(who, "the tensor is 0-d; index_select needs a dimension to index");
    const int64_t d = detail::norm_dim(dim, nd, who);
    std::vector<int64_t> idx = detail::int_values(index, who, "index");
    for (int64_t i : idx)
        if (i < 0 || i >= s[d])
            detail::bad_argument(who, "index " + std::to_string(i) +
                                          " is out of range for "
                                          "dimension " +
                                          std::to_string(d) + " of size " + std::to_string(s[d]));
    ShapeVector os = s;
    os[d] = static_cast<int64_t>(idx.size());
    Tensor dense = detail::readable(*this, who);
    Tensor out = detail::fresh(dense.pd().dtype, os, who);
    const size_t inner = static_cast<size_t>(detail::product(s, d + 1, s.size())) *
                         pd_dtype_size(dense.pd().dtype);
    const int64_t outer = detail::product(s, 0, d), n = s[d];
    const char *from = static_cast<const char *>(dense.GetDataPtr());
    char *to = static_cast<char *>(out.GetDataPtr());
    for (int64_t o = 0; o < outer && inner > 0; ++o)
        for (int64_t i : idx) {
            std::memcpy(to, from + (o * n + i) * inner, inner);
            to += inner;
        }
    return out;
}

inline Tensor Tensor::repeat(const std::vector<int64_t> &repeats) const
{
    const char *who = "ms::Tensor::repeat";
    const ShapeVector &s = shape();
    if (repeats.size() < s.size())
        detail::bad_argument(who, "got " + std::to_string(repeats.size()) +
                                      " repeats for a tensor of " + std::to_string(s.size()) +
                                      " dimensions; give at least one per dimension");
    if (repeats.size() > PD_MAX_DIMS)
        detail::bad_argument(who, std::to_string(repeats.size()) +
                                      " repeats; pdext tensors have at most " +
                                      std::to_string(PD_MAX_DIMS) + " dimensions");
    /* The tensor as if it had leading size-1 dimensions, one per extra repeat. */
    const size_t nd = repeats.size();
    ShapeVector ps(nd - s.size(), 1), os(nd);
    ps.insert(ps.end(), s.begin(), s.end());
    for (size_t k = 0; k < nd; ++k) {
        if (repeats[k] < 0)
            detail::bad_argument(who, "repeats must be >= 0, got " + std::to_string(repeats[k]));
        os[k] = ps[k] * repeats[k];
    }
    Tensor dense = detail::readable(*this, who);
    Tensor out = detail::fresh(dense.pd().dtype, os, who);
    const size_t es = pd_dtype_size(dense.pd().dtype);
    if (out.numel() == 0)
        return out;
    if (nd == 0) {
        std::memcpy(out.GetDataPtr(), dense.GetDataPtr(), es);
        return out;
    }
    /* One output row (the last dimension) at a time: its source row, tiled. */
    const size_t row = static_cast<size_t>(ps[nd - 1]) * es;
    std::vector<int64_t> src_stride = detail::dense_strides(ps), at(nd - 1, 0);
    const int64_t rows = detail::product(os, 0, nd - 1);
    const char *from = static_cast<const char *>(dense.GetDataPtr());
    char *to = static_cast<char *>(out.GetDataPtr());
    for (int64_t r = 0; r < rows; ++r) {
        int64_t offset = 0;
        for (size_t k = 0; k + 1 < nd; ++k)
            offset += (at[k] % ps[k]) * src_stride[k];
        for (int64_t t = 0; t < repeats[nd - 1]; ++t, to += row)
            std::memcpy(to, from + offset * static_cast<int64_t>(es), row);
        for (size_t k = nd - 1; k-- > 0;) { /* the next row's index */
            if (++at[k] < os[k])
                break;
            at[k] = 0;
        }
    }
    return out;
}

inline Tensor Tensor::repeat_interleave(const Tensor &repeats, std::optional<int64_t> dim,
                                        std::optional<int64_t> output_size) const
{
    return detail::interleave_entry(*this,
                                    detail::int_values(repeats, "ms::Tensor::repeat_interleave",
                                                       "repeats"),
                                    false, dim, output_size);
}

inline Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim,
                                        std::optional<int64_t> output_size) const
{
    return detail::interleave_entry(*this, {repeats}, true, dim, output_size);
}

/* As in MindSpore: the handle (and every copy of it) then refers to src's tensor itself: its
 * memory, dtype, shape and strides, no copy. */
inline void Tensor::AssignTensor(const Tensor &src) const
{
    const char *who = "ms::Tensor::AssignTensor";
    detail::TensorImpl &self = need("AssignTensor");
    if (!src.is_defined())
        detail::bad_argument(who, "the source tensor is undefined (None)");
    if (src.impl() == impl_.get())
        return;
    const detail::TensorImpl &from = *src.impl();
    if (from.t.dtype == PD_UNDEFINED)
        detail::bad_argument(who, "the source tensor has no memory yet (give it to a runner's Run "
                                  "as an output first)");
    pd_tensor t = {};
    if (from.owns)
        pd_tensor_retain(&t, &from.t);
    else
        t = from.t; /* a running call's tensor, which that call keeps */
    if (self.owns)
        pd_tensor_release(&self.t);
    self.t = t;
    self.owns = from.owns;
    self.dtype = from.dtype;
    self.shape = from.shape;
}

} // namespace ms

#endif /* PDEXT_MS_EXTENSION_TENSOR_OPS_H */
