/*
 * paddle/api_index.h - the indexing and shape functions of Paddle's public custom-op API
 * (paddle/phi/api/include/api.h, re-exported into paddle:: by tensor_compat.h): argsort,
 * gather, index_select, concat, stack, split, flatten, squeeze, unsqueeze, tile, flip, where,
 * tril, triu, one_hot, argmax, argmin, topk.
 *
 * Host computations on dense copies, in any element type (they move elements, they do not
 * compute on them), returning new tensors of the running call; bad axes and indices throw,
 * naming the function. Paddle's `predefined_out` parameters are left out.
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_API_INDEX_H
#define PDEXT_PADDLE_API_INDEX_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/api_index.h"
#endif

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

namespace paddle {
namespace detail {

[[noreturn]] inline void api_error(const char *fn, const std::string &what)
{
    throw pd::op_error(std::string(fn) + ": " + what, nullptr, 0, PD_ERR_OP_FAILED);
}

/* Index i of an int32 / int64 index tensor. */
inline int64_t index_at(const Tensor &index, int64_t i, const char *fn)
{
    if (index.dtype() == DataType::INT64)
        return index.data<int64_t>()[i];
    if (index.dtype() == DataType::INT32)
        return index.data<int32_t>()[i];
    api_error(fn, std::string("the index is ") + pd_dtype_name(to_pd(index.dtype())) +
                      "; expected int32 or int64");
}

/* Copies element block `from` of x to block `to` of out, `bytes` each. */
inline void copy_block(const Tensor &out, int64_t to, const Tensor &x, int64_t from, size_t bytes)
{
    std::memcpy(static_cast<char *>(out.data()) + static_cast<size_t>(to) * bytes,
                static_cast<const char *>(x.data()) + static_cast<size_t>(from) * bytes, bytes);
}

inline size_t elem_size(const Tensor &x) { return pd_dtype_size(to_pd(x.dtype())); }

/* The sorted order of the n values at a[base + k * inner] (stable; NaN last, as Paddle). */
template <class T>
std::vector<int64_t> order_of(const T *a, int64_t base, int64_t n, int64_t inner, bool descending)
{
    std::vector<int64_t> idx(static_cast<size_t>(n));
    std::iota(idx.begin(), idx.end(), 0);
    auto val = [&](int64_t k) { return static_cast<acc_t<T>>(a[base + k * inner]); };
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
        auto u = val(p), v = val(q);
        if (v != v)
            return u == u;
        if (u != u)
            return false;
        return descending ? v < u : u < v;
    });
    return idx;
}

} // namespace detail

namespace experimental {

/* The values of x sorted along `axis`, and their indices (int64). */
inline std::tuple<Tensor, Tensor> argsort(const Tensor &x, int axis = -1, bool descending = false,
                                          bool stable = false)
{
    (void)stable; /* pdext's sort is always stable, which an unstable sort may also give */
    Tensor d = detail::dense(x, "argsort");
    std::vector<int64_t> shape = d.shape();
    int64_t ax = detail::norm_axis(axis, shape.size(), "argsort");
    int64_t outer, n, inner;
    detail::split_at(shape, ax, &outer, &n, &inner);
    Tensor out = empty(shape, d.dtype(), d.place()), ids = empty(shape, DataType::INT64, d.place());
    size_t es = detail::elem_size(d);
    detail::visit_real(d.dtype(), "argsort", true, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t p = 0; p < outer; ++p)
            for (int64_t q = 0; q < inner; ++q) {
                int64_t base = p * n * inner + q;
                std::vector<int64_t> order = detail::order_of(d.data<T>(), base, n, inner,
                                                              descending);
                for (int64_t k = 0; k < n; ++k) {
                    int64_t at = base + k * inner;
                    detail::copy_block(out, at, d, base + order[static_cast<size_t>(k)] * inner,
                                       es);
                    ids.data<int64_t>()[at] = order[static_cast<size_t>(k)];
                }
            }
    });
    return {out, ids};
}

/* The k largest (or smallest) values along `axis` and their indices. */
inline std::tuple<Tensor, Tensor> topk(const Tensor &x, const Scalar &k = 1, int axis = -1,
                                       bool largest = true, bool sorted = true)
{
    (void)sorted;
    Tensor d = detail::dense(x, "topk");
    std::vector<int64_t> shape = d.shape();
    int64_t ax = detail::norm_axis(axis, shape.size(), "topk");
    int64_t outer, n, inner, kk = k.to<int64_t>();
    detail::split_at(shape, ax, &outer, &n, &inner);
    if (kk < 1 || kk > n)
        detail::api_error("topk", "k is " + std::to_string(kk) + "; expected [1, " +
                                      std::to_string(n) + "] (the size of the axis)");
    std::vector<int64_t> out_shape = shape;
    if (!out_shape.empty())
        out_shape[static_cast<size_t>(ax)] = kk;
    Tensor out = empty(out_shape, d.dtype(), d.place());
    Tensor ids = empty(out_shape, DataType::INT64, d.place());
    size_t es = detail::elem_size(d);
    detail::visit_real(d.dtype(), "topk", true, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t p = 0; p < outer; ++p)
            for (int64_t q = 0; q < inner; ++q) {
                int64_t base = p * n * inner + q, obase = p * kk * inner + q;
                std::vector<int64_t> order = detail::order_of(d.data<T>(), base, n, inner, largest);
                for (int64_t j = 0; j < kk; ++j) {
                    detail::copy_block(out, obase + j * inner, d,
                                       base + order[static_cast<size_t>(j)] * inner, es);
                    ids.data<int64_t>()[obase + j * inner] = order[static_cast<size_t>(j)];
                }
            }
    });
    return {out, ids};
}

/* The slices of x at `index` (1-D or 0-D, int32 / int64) along `axis`. */
inline Tensor gather(const Tensor &x, const Tensor &index, const Scalar &axis = 0)
{
    Tensor d = detail::dense(x, "gather"), id = detail::dense(index, "gather");
    if (id.shape().size() > 1)
        detail::api_error("gather", "the index has " + std::to_string(id.shape().size()) +
                                        " dims; expected 1 (or 0)");
    std::vector<int64_t> shape = d.shape();
    int64_t ax = detail::norm_axis(axis.to<int64_t>(), shape.size(), "gather");
    int64_t outer, n, inner, m = id.numel();
    detail::split_at(shape, ax, &outer, &n, &inner);
    std::vector<int64_t> out_shape = shape;
    if (id.shape().empty())
        out_shape.erase(out_shape.begin() + ax);
    else
        out_shape[static_cast<size_t>(ax)] = m;
    Tensor out = empty(out_shape, d.dtype(), d.place());
    size_t bytes = detail::elem_size(d) * static_cast<size_t>(inner);
    for (int64_t j = 0; j < m; ++j) {
        int64_t i = detail::index_at(id, j, "gather");
        if (i < 0 || i >= n)
            detail::api_error("gather", "index " + std::to_string(i) + " is out of range [0, " +
                                            std::to_string(n) + ") of axis " + std::to_string(ax));
        for (int64_t p = 0; p < outer; ++p)
            detail::copy_block(out, p * m + j, d, p * n + i, bytes);
    }
    return out;
}
inline Tensor index_select(const Tensor &x, const Tensor &index, int axis = 0)
{
    return gather(x, index, axis);
}

/* x's tensors joined along `axis`. */
inline Tensor concat(const std::vector<Tensor> &x, const Scalar &axis = 0)
{
    if (x.empty())
        detail::api_error("concat", "no tensors to join");
    std::vector<Tensor> ds;
    for (const Tensor &t : x)
        ds.push_back(detail::dense(t, "concat"));
    std::vector<int64_t> shape = ds[0].shape();
    int64_t ax = detail::norm_axis(axis.to<int64_t>(), shape.size(), "concat");
    int64_t total = 0;
    for (const Tensor &t : ds) {
        std::vector<int64_t> s = t.shape();
        bool same = s.size() == shape.size() && t.dtype() == ds[0].dtype();
        for (size_t k = 0; same && k < s.size(); ++k)
            same = static_cast<int64_t>(k) == ax || s[k] == shape[k];
        if (!same)
            detail::api_error("concat", "the tensors differ in dtype or in a dim other than axis " +
                                            std::to_string(ax));
        total += s[static_cast<size_t>(ax)];
    }
    std::vector<int64_t> out_shape = shape;
    out_shape[static_cast<size_t>(ax)] = total;
    Tensor out = empty(out_shape, ds[0].dtype(), ds[0].place());
    int64_t outer, n, inner;
    detail::split_at(out_shape, ax, &outer, &n, &inner);
    size_t es = detail::elem_size(out);
    int64_t at = 0;
    for (const Tensor &t : ds) {
        int64_t tn = t.shape()[static_cast<size_t>(ax)];
        size_t bytes = es * static_cast<size_t>(tn * inner);
        for (int64_t p = 0; p < outer; ++p)
            std::memcpy(static_cast<char *>(out.data()) +
                            es * static_cast<size_t>((p * n + at) * inner),
                        static_cast<const char *>(t.data()) + bytes * static_cast<size_t>(p),
                        bytes);
        at += tn;
    }
    return out;
}

/* x's tensors (one shape) stacked along a new axis. */
inline Tensor stack(const std::vector<Tensor> &x, int axis = 0)
{
    if (x.empty())
        detail::api_error("stack", "no tensors to stack");
    size_t nd = x[0].shape().size();
    int64_t ax = detail::norm_axis(axis, nd + 1, "stack");
    std::vector<Tensor> parts;
    for (const Tensor &t : x) {
        if (t.shape() != x[0].shape())
            detail::api_error("stack", "the tensors have different shapes");
        std::vector<int64_t> s = t.shape();
        s.insert(s.begin() + ax, 1);
        parts.push_back(reshape(detail::dense(t, "stack"), s));
    }
    return concat(parts, ax);
}

/* x cut along `axis` into pieces of `sections` sizes (one may be -1: the rest). */
inline std::vector<Tensor> split(const Tensor &x, const IntArray &sections, const Scalar &axis)
{
    Tensor d = detail::dense(x, "split");
    std::vector<int64_t> shape = d.shape();
    int64_t ax = detail::norm_axis(axis.to<int64_t>(), shape.size(), "split");
    int64_t n = shape[static_cast<size_t>(ax)], known = 0, unknown = -1;
    std::vector<int64_t> sizes = sections.GetData();
    for (size_t k = 0; k < sizes.size(); ++k) {
        if (sizes[k] == -1 && unknown < 0)
            unknown = static_cast<int64_t>(k);
        else
            known += sizes[k];
    }
    if (unknown >= 0)
        sizes[static_cast<size_t>(unknown)] = n - known;
    if (std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != n)
        detail::api_error("split", "the sections add up to " + std::to_string(known) +
                                       ", but axis " + std::to_string(ax) + " has " +
                                       std::to_string(n));
    std::vector<Tensor> out;
    int64_t outer, nn, inner;
    detail::split_at(shape, ax, &outer, &nn, &inner);
    size_t es = detail::elem_size(d);
    int64_t at = 0;
    for (int64_t s : sizes) {
        std::vector<int64_t> ps = shape;
        ps[static_cast<size_t>(ax)] = s;
        Tensor piece = empty(ps, d.dtype(), d.place());
        size_t bytes = es * static_cast<size_t>(s * inner);
        for (int64_t p = 0; p < outer; ++p)
            std::memcpy(static_cast<char *>(piece.data()) + bytes * static_cast<size_t>(p),
                        static_cast<const char *>(d.data()) +
                            es * static_cast<size_t>((p * nn + at) * inner),
                        bytes);
        out.push_back(piece);
        at += s;
    }
    return out;
}

/* Dims start_axis..stop_axis merged into one. */
inline Tensor flatten(const Tensor &x, int start_axis = 1, int stop_axis = 1)
{
    std::vector<int64_t> shape = x.shape();
    if (shape.empty())
        return reshape(detail::dense(x, "flatten"), {1});
    int64_t a = detail::norm_axis(start_axis, shape.size(), "flatten");
    int64_t b = detail::norm_axis(stop_axis, shape.size(), "flatten");
    if (a > b)
        detail::api_error("flatten", "start_axis comes after stop_axis");
    std::vector<int64_t> s(shape.begin(), shape.begin() + a);
    s.push_back(std::accumulate(shape.begin() + a, shape.begin() + b + 1, int64_t(1),
                                std::multiplies<int64_t>()));
    s.insert(s.end(), shape.begin() + b + 1, shape.end());
    return reshape(detail::dense(x, "flatten"), s);
}

/* x without its size-1 dims at `axis` (every size-1 dim when empty; others are kept). */
inline Tensor squeeze(const Tensor &x, const IntArray &axis = {})
{
    std::vector<int64_t> shape = x.shape(), s;
    std::vector<bool> drop(shape.size(), axis.GetData().empty());
    for (int64_t a : axis.GetData())
        drop[static_cast<size_t>(detail::norm_axis(a, shape.size(), "squeeze"))] = true;
    for (size_t k = 0; k < shape.size(); ++k)
        if (!(drop[k] && shape[k] == 1))
            s.push_back(shape[k]);
    return reshape(detail::dense(x, "squeeze"), s);
}

/* x with size-1 dims inserted at `axis` (positions in the result, in order). */
inline Tensor unsqueeze(const Tensor &x, const IntArray &axis = {})
{
    std::vector<int64_t> s = x.shape();
    for (int64_t a : axis.GetData()) {
        int64_t nd = static_cast<int64_t>(s.size()) + 1;
        if (a < -nd || a >= nd)
            detail::api_error("unsqueeze", "axis " + std::to_string(a) + " is out of range");
        s.insert(s.begin() + (a < 0 ? a + nd : a), 1);
    }
    return reshape(detail::dense(x, "unsqueeze"), s);
}

/* x repeated `repeat_times` along each dim (leading dims added as needed). */
inline Tensor tile(const Tensor &x, const IntArray &repeat_times = {})
{
    Tensor d = detail::dense(x, "tile");
    std::vector<int64_t> shape = d.shape(), reps = repeat_times.GetData();
    while (shape.size() < reps.size())
        shape.insert(shape.begin(), 1);
    while (reps.size() < shape.size())
        reps.insert(reps.begin(), 1);
    d = reshape(d, shape);
    std::vector<int64_t> out_shape(shape.size());
    for (size_t k = 0; k < shape.size(); ++k)
        out_shape[k] = shape[k] * reps[k];
    Tensor out = empty(out_shape, d.dtype(), d.place());
    size_t es = detail::elem_size(d);
    std::vector<int64_t> idx(out_shape.size(), 0);
    for (int64_t i = 0, n = out.numel(); i < n; ++i) {
        int64_t from = 0;
        for (size_t k = 0; k < shape.size(); ++k)
            from = from * shape[k] + idx[k] % shape[k];
        detail::copy_block(out, i, d, from, es);
        for (size_t k = idx.size(); k-- > 0;) {
            if (++idx[k] < out_shape[k])
                break;
            idx[k] = 0;
        }
    }
    return out;
}

/* x reversed along each of `axis`. */
inline Tensor flip(const Tensor &x, const std::vector<int> &axis)
{
    Tensor d = detail::dense(x, "flip");
    std::vector<int64_t> shape = d.shape();
    std::vector<bool> rev(shape.size(), false);
    for (int a : axis)
        rev[static_cast<size_t>(detail::norm_axis(a, shape.size(), "flip"))] = true;
    Tensor out = empty(shape, d.dtype(), d.place());
    size_t es = detail::elem_size(d);
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t i = 0, n = d.numel(); i < n; ++i) {
        int64_t from = 0;
        for (size_t k = 0; k < shape.size(); ++k)
            from = from * shape[k] + (rev[k] ? shape[k] - 1 - idx[k] : idx[k]);
        detail::copy_block(out, i, d, from, es);
        for (size_t k = idx.size(); k-- > 0;) {
            if (++idx[k] < shape[k])
                break;
            idx[k] = 0;
        }
    }
    return out;
}

/* x where condition holds, else y (the three broadcast to one shape). */
inline Tensor where(const Tensor &condition, const Tensor &x, const Tensor &y)
{
    if (x.dtype() != y.dtype())
        detail::api_error("where", "x and y differ in data type");
    if (condition.dtype() != DataType::BOOL)
        detail::api_error("where", "the condition is not bool");
    /* One shape for all three through the core's broadcasting: bool + bool is or, so the
     * condition broadcasts with x == x's shape via a comparison with zeros. */
    Tensor zx = zeros(x.shape(), x.dtype(), x.place()), zy = zeros(y.shape(), y.dtype(), y.place());
    Tensor bx = detail::dense(x, "where") + zy, by = detail::dense(y, "where") + zx;
    Tensor c = not_equal(detail::dense(condition, "where"),
                         zeros(bx.shape(), DataType::BOOL, bx.place()));
    if (c.shape() != bx.shape()) { /* the condition has more dims than x and y */
        bx = bx + zeros(c.shape(), bx.dtype(), bx.place());
        by = by + zeros(c.shape(), by.dtype(), by.place());
    }
    Tensor out = empty(bx.shape(), bx.dtype(), bx.place());
    size_t es = detail::elem_size(out);
    const bool *cv = c.data<bool>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i)
        detail::copy_block(out, i, cv[i] ? bx : by, i, es);
    return out;
}

} // namespace experimental
namespace detail {
/* The elements of the last two dims kept by keep(row, col); the others are zero. */
template <class Keep> Tensor triangle(const Tensor &x, const char *fn, Keep keep)
{
    Tensor d = dense(x, fn);
    std::vector<int64_t> shape = d.shape();
    if (shape.size() < 2)
        api_error(fn,
                  "the tensor has " + std::to_string(shape.size()) + " dims; expected 2 or more");
    int64_t rows = shape[shape.size() - 2], cols = shape.back();
    Tensor out = zeros(shape, d.dtype(), d.place());
    size_t es = elem_size(d);
    for (int64_t i = 0, n = d.numel(); i < n; ++i)
        if (keep((i / cols) % rows, i % cols))
            copy_block(out, i, d, i, es);
    return out;
}
} // namespace detail
namespace experimental {

/* The lower / upper triangle of the last two dims, from `diagonal`. */
inline Tensor tril(const Tensor &x, int diagonal = 0)
{
    return detail::triangle(x, "tril", [=](int64_t r, int64_t c) { return c - r <= diagonal; });
}
inline Tensor triu(const Tensor &x, int diagonal = 0)
{
    return detail::triangle(x, "triu", [=](int64_t r, int64_t c) { return c - r >= diagonal; });
}

/* float32 rows of num_classes with a 1 at each (int) element of x. */
inline Tensor one_hot(const Tensor &x, const Scalar &num_classes)
{
    Tensor d = detail::dense(x, "one_hot");
    int64_t k = num_classes.to<int64_t>();
    std::vector<int64_t> shape = d.shape();
    shape.push_back(k);
    Tensor out = zeros(shape, DataType::FLOAT32, d.place());
    for (int64_t i = 0, n = d.numel(); i < n; ++i) {
        int64_t c = detail::index_at(d, i, "one_hot");
        if (c < 0 || c >= k)
            detail::api_error("one_hot", "class " + std::to_string(c) + " is out of range [0, " +
                                             std::to_string(k) + ")");
        out.data<float>()[i * k + c] = 1.0f;
    }
    return out;
}

} // namespace experimental
namespace detail {
/* The index of the first largest (or smallest) value along `axis`, or over all elements. */
inline Tensor arg_extreme(const Tensor &x, const Scalar &axis, bool keepdims, bool flatten,
                          DataType dtype, bool largest, const char *fn)
{
    Tensor d = dense(x, fn);
    std::vector<int64_t> shape = flatten ? std::vector<int64_t>{d.numel()} : d.shape();
    int64_t ax = flatten ? 0 : norm_axis(axis.to<int64_t>(), shape.size(), fn);
    int64_t outer, n, inner;
    split_at(shape, ax, &outer, &n, &inner);
    std::vector<int64_t> out_shape = shape;
    if (!out_shape.empty()) {
        if (keepdims)
            out_shape[static_cast<size_t>(ax)] = 1;
        else
            out_shape.erase(out_shape.begin() + ax);
    }
    if (flatten && keepdims)
        out_shape = std::vector<int64_t>(d.shape().size(), 1);
    if (dtype != DataType::INT64 && dtype != DataType::INT32)
        api_error(fn, "dtype must be int32 or int64");
    Tensor out = empty(out_shape, dtype, d.place());
    visit_real(d.dtype(), fn, true, [&](auto tag) {
        using T = decltype(tag);
        using A = acc_t<T>;
        const T *a = d.data<T>();
        for (int64_t p = 0; p < outer; ++p)
            for (int64_t q = 0; q < inner; ++q) {
                int64_t best = 0, base = p * n * inner + q;
                for (int64_t k = 1; k < n; ++k) {
                    A v = A(a[base + k * inner]), b = A(a[base + best * inner]);
                    if (largest ? b < v : v < b)
                        best = k;
                }
                if (dtype == DataType::INT64)
                    out.data<int64_t>()[p * inner + q] = best;
                else
                    out.data<int32_t>()[p * inner + q] = static_cast<int32_t>(best);
            }
    });
    return out;
}
} // namespace detail
namespace experimental {

inline Tensor argmax(const Tensor &x, const Scalar &axis, bool keepdims = false,
                     bool flatten = false, DataType dtype = DataType::INT64)
{
    return detail::arg_extreme(x, axis, keepdims, flatten, dtype, true, "argmax");
}
inline Tensor argmin(const Tensor &x, const Scalar &axis, bool keepdims = false,
                     bool flatten = false, DataType dtype = DataType::INT64)
{
    return detail::arg_extreme(x, axis, keepdims, flatten, dtype, false, "argmin");
}

} // namespace experimental

/* Paddle's tensor_compat.h: these in paddle:: too. */
using experimental::argsort;
using experimental::concat;
using experimental::flatten;
using experimental::flip;
using experimental::gather;
using experimental::index_select;
using experimental::one_hot;
using experimental::split;
using experimental::stack;
using experimental::tile;
using experimental::tril;
using experimental::unsqueeze;
using experimental::where;

} // namespace paddle

#endif /* PDEXT_PADDLE_API_INDEX_H */
