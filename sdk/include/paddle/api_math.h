/*
 * paddle/api_math.h - the elementwise and reducing functions of Paddle's public custom-op API
 * (paddle/phi/api/include/api.h, re-exported into paddle:: by tensor_compat.h): exp, log,
 * sqrt, sin, tanh, sigmoid, relu, abs, sign, ... (one table below), isnan / isinf / isfinite,
 * atan2, fmax, fmin, and in paddle::experimental pow, scale, clip, mean, max, min, cumsum,
 * with Paddle's Scalar and IntArray argument types.
 *
 * They compute on the host, in the tensors' own element type (half types through float), on
 * a dense copy of a strided operand, and return a new tensor of the running call. A dtype a
 * function has no Paddle kernel for (exp of an int32 tensor) throws, naming the function and
 * the dtype as PD_DISPATCH does; a device tensor is refused as by the other tensor functions.
 * The `predefined_out` parameter of Paddle's signatures is left out: custom-op sources do not
 * pass it.
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_API_MATH_H
#define PDEXT_PADDLE_API_MATH_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/api_math.h"
#endif

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace paddle {

/* Paddle's spellings paddle::Scalar and paddle::IntArray. */
using experimental::IntArray;
using experimental::Scalar;

namespace detail {

/* The type a half element computes in. */
template <class T> struct acc {
    using type = T;
};
template <> struct acc<float16> {
    using type = float;
};
template <> struct acc<bfloat16> {
    using type = float;
};
template <class T> using acc_t = typename acc<T>::type;

[[noreturn]] inline void no_kernel(const char *fn, DataType t)
{
    throw pd::op_error(std::string(fn) + " is not implemented for data type `" +
                           pd_dtype_name(to_pd(t)) + "`",
                       nullptr, 0, PD_ERR_OP_FAILED);
}

/* f(T{}) for the element type T of `t`: the floating types, or (with ints) the real ones. */
template <class F> void visit_real(DataType t, const char *fn, bool ints, F &&f)
{
    switch (t) {
    case DataType::FLOAT32: f(float{}); return;
    case DataType::FLOAT64: f(double{}); return;
    case DataType::FLOAT16: f(float16{}); return;
    case DataType::BFLOAT16: f(bfloat16{}); return;
    default: break;
    }
    if (ints) {
        switch (t) {
        case DataType::INT32: f(int32_t{}); return;
        case DataType::INT64: f(int64_t{}); return;
        case DataType::INT16: f(int16_t{}); return;
        case DataType::INT8: f(int8_t{}); return;
        case DataType::UINT8: f(uint8_t{}); return;
        default: break;
        }
    }
    no_kernel(fn, t);
}

/* x as a dense host tensor (itself when it already is one). */
inline Tensor dense(const Tensor &x, const char *fn)
{
    x.checked(fn);
    if (!pd_place_is_host(x.place().pd()))
        throw pd::op_error(std::string(fn) + ": the tensor is on " + x.place().DebugString() +
                               "; pdext computes Paddle's API functions in host memory only",
                           nullptr, 0, PD_ERR_UNAVAILABLE);
    return x.contiguous();
}

/* out[i] = f(x[i]) in x's dtype (or `out_dtype`, whose element type R f returns). */
template <class T, class R = T, class F> Tensor map(const Tensor &x, DataType out_dtype, F &&f)
{
    Tensor out = empty(x.shape(), out_dtype, x.place());
    const T *a = static_cast<const T *>(x.data());
    R *o = static_cast<R *>(out.data());
    for (int64_t i = 0, n = x.numel(); i < n; ++i)
        o[i] = static_cast<R>(f(static_cast<acc_t<T>>(a[i])));
    return out;
}

/* Dims of `shape` around `axis`: outer * n * inner. */
inline void split_at(const std::vector<int64_t> &shape, int64_t axis, int64_t *outer, int64_t *n,
                     int64_t *inner)
{
    *outer = *inner = 1;
    for (int64_t d = 0; d < axis; ++d)
        *outer *= shape[static_cast<size_t>(d)];
    *n = shape.empty() ? 1 : shape[static_cast<size_t>(axis)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d)
        *inner *= shape[d];
}

/* `axis` counted from the end when negative, checked against `ndim` (0-D tensors take 0). */
inline int64_t norm_axis(int64_t axis, size_t ndim, const char *fn)
{
    int64_t nd = static_cast<int64_t>(ndim == 0 ? 1 : ndim);
    if (axis < -nd || axis >= nd)
        throw pd::op_error(std::string(fn) + ": axis " + std::to_string(axis) +
                               " is out of range for a tensor of " + std::to_string(ndim) +
                               " dims; expected [-" + std::to_string(nd) + ", " +
                               std::to_string(nd) + ")",
                           nullptr, 0, PD_ERR_OP_FAILED);
    return axis < 0 ? axis + nd : axis;
}

template <class T> T sign_of(T v) { return static_cast<T>((T(0) < v) - (v < T(0))); }

} // namespace detail

/* Elementwise functions: name, whether integer tensors have a kernel, and the formula on v (of
 * the computing type A). */
#define PD__PADDLE_UNARY(fname, ints, ...)                                              \
    inline Tensor fname(const Tensor &x)                                                \
    {                                                                                   \
        Tensor d = detail::dense(x, #fname);                                            \
        Tensor out;                                                                     \
        detail::visit_real(d.dtype(), #fname, ints, [&](auto tag) {                     \
            using T = decltype(tag);                                                    \
            using A [[maybe_unused]] = detail::acc_t<T>;                                \
            out = detail::map<T>(d, d.dtype(), [](A v) -> A { return (__VA_ARGS__); }); \
        });                                                                             \
        return out;                                                                     \
    }
namespace experimental {
PD__PADDLE_UNARY(abs, true, v < A(0) ? A(0) - v : v)
PD__PADDLE_UNARY(sign, true, detail::sign_of(v))
PD__PADDLE_UNARY(square, true, v *v)
PD__PADDLE_UNARY(relu, true, v > A(0) ? v : A(0))
PD__PADDLE_UNARY(relu6, true, v > A(0) ? (v < A(6) ? v : A(6)) : A(0))
PD__PADDLE_UNARY(exp, false, std::exp(v))
PD__PADDLE_UNARY(expm1, false, std::expm1(v))
PD__PADDLE_UNARY(log, false, std::log(v))
PD__PADDLE_UNARY(log2, false, std::log2(v))
PD__PADDLE_UNARY(log10, false, std::log10(v))
PD__PADDLE_UNARY(log1p, false, std::log1p(v))
PD__PADDLE_UNARY(sqrt, false, std::sqrt(v))
PD__PADDLE_UNARY(rsqrt, false, A(1) / std::sqrt(v))
PD__PADDLE_UNARY(reciprocal, false, A(1) / v)
PD__PADDLE_UNARY(sin, false, std::sin(v))
PD__PADDLE_UNARY(cos, false, std::cos(v))
PD__PADDLE_UNARY(tan, false, std::tan(v))
PD__PADDLE_UNARY(asin, false, std::asin(v))
PD__PADDLE_UNARY(acos, false, std::acos(v))
PD__PADDLE_UNARY(atan, false, std::atan(v))
PD__PADDLE_UNARY(sinh, false, std::sinh(v))
PD__PADDLE_UNARY(cosh, false, std::cosh(v))
PD__PADDLE_UNARY(tanh, false, std::tanh(v))
PD__PADDLE_UNARY(asinh, false, std::asinh(v))
PD__PADDLE_UNARY(acosh, false, std::acosh(v))
PD__PADDLE_UNARY(atanh, false, std::atanh(v))
PD__PADDLE_UNARY(erf, false, std::erf(v))
PD__PADDLE_UNARY(lgamma, false, std::lgamma(v))
PD__PADDLE_UNARY(floor, false, std::floor(v))
PD__PADDLE_UNARY(ceil, false, std::ceil(v))
PD__PADDLE_UNARY(sigmoid, false, A(1) / (A(1) + std::exp(-v)))
PD__PADDLE_UNARY(silu, false, v / (A(1) + std::exp(-v)))
#undef PD__PADDLE_UNARY

/* Bool tensors of a floating test (integer tensors: every element is finite). */
#define PD__PADDLE_TEST(fname, int_answer, ...)                             \
    inline Tensor fname(const Tensor &x)                                    \
    {                                                                       \
        Tensor d = detail::dense(x, #fname);                                \
        Tensor out;                                                         \
        detail::visit_real(d.dtype(), #fname, true, [&](auto tag) {         \
            using T = decltype(tag);                                        \
            using A = detail::acc_t<T>;                                     \
            out = detail::map<T, bool>(d, DataType::BOOL, [](A v) -> bool { \
                if constexpr (std::is_integral<A>::value) {                 \
                    (void)v;                                                \
                    return int_answer;                                      \
                } else {                                                    \
                    return (__VA_ARGS__);                                   \
                }                                                           \
            });                                                             \
        });                                                                 \
        return out;                                                         \
    }
PD__PADDLE_TEST(isnan, false, std::isnan(v))
PD__PADDLE_TEST(isinf, false, std::isinf(v))
PD__PADDLE_TEST(isfinite, true, std::isfinite(v))
#undef PD__PADDLE_TEST

/* x rounded half away from zero to `decimals` decimal digits. */
inline Tensor round(const Tensor &x, int decimals = 0)
{
    Tensor d = detail::dense(x, "round");
    Tensor out;
    detail::visit_real(d.dtype(), "round", false, [&](auto tag) {
        using T = decltype(tag);
        using A = detail::acc_t<T>;
        A ten = static_cast<A>(std::pow(10.0, decimals));
        out = detail::map<T>(d, d.dtype(), [=](A v) -> A {
            return decimals == 0 ? std::round(v) : std::round(v * ten) / ten;
        });
    });
    return out;
}

/* x ** y. */
inline Tensor pow(const Tensor &x, const Scalar &y = 1.0f)
{
    Tensor d = detail::dense(x, "pow");
    Tensor out;
    detail::visit_real(d.dtype(), "pow", true, [&](auto tag) {
        using T = decltype(tag);
        using A = detail::acc_t<T>;
        if constexpr (std::is_integral<A>::value) {
            double e = y.to<double>();
            out = detail::map<T>(d, d.dtype(),
                                 [e](A v) { return static_cast<A>(std::pow(double(v), e)); });
        } else {
            A e = y.to<A>();
            out = detail::map<T>(d, d.dtype(), [e](A v) { return std::pow(v, e); });
        }
    });
    return out;
}

/* x * scale + bias (bias_after_scale), else (x + bias) * scale. */
inline Tensor scale(const Tensor &x, const Scalar &scale = 1.0, const Scalar &bias = 0.0,
                    bool bias_after_scale = true)
{
    Tensor d = detail::dense(x, "scale");
    Tensor out;
    detail::visit_real(d.dtype(), "scale", true, [&](auto tag) {
        using T = decltype(tag);
        using A = detail::acc_t<T>;
        A s = scale.to<A>(), b = bias.to<A>();
        out = detail::map<T>(d, d.dtype(), [=](A v) -> A {
            return bias_after_scale ? A(v * s + b) : A((v + b) * s);
        });
    });
    return out;
}

/* x limited to [min, max]. */
inline Tensor clip(const Tensor &x, const Scalar &min, const Scalar &max)
{
    Tensor d = detail::dense(x, "clip");
    Tensor out;
    detail::visit_real(d.dtype(), "clip", true, [&](auto tag) {
        using T = decltype(tag);
        using A = detail::acc_t<T>;
        A lo = min.to<A>(), hi = max.to<A>();
        out = detail::map<T>(d, d.dtype(), [=](A v) -> A { return v < lo ? lo : hi < v ? hi : v; });
    });
    return out;
}

} // namespace experimental
namespace detail {

/* f(a, b) over x and y broadcast to one shape (one dtype, as Paddle's kernels require). */
template <class F> Tensor zip(const Tensor &x, const Tensor &y, const char *fn, F &&f)
{
    if (x.dtype() != y.dtype())
        throw pd::op_error(std::string(fn) + ": x is " + pd_dtype_name(to_pd(x.dtype())) +
                               " and y is " + pd_dtype_name(to_pd(y.dtype())) +
                               "; expected one data type",
                           nullptr, 0, PD_ERR_OP_FAILED);
    /* Broadcast each by adding zeros of the other's shape (the core's pd_binary broadcasts). */
    Tensor bx = dense(x, fn) + zeros(y.shape(), y.dtype(), y.place());
    Tensor by = dense(y, fn) + zeros(x.shape(), x.dtype(), x.place());
    Tensor out;
    visit_real(bx.dtype(), fn, true, [&](auto tag) {
        using T = decltype(tag);
        using A = acc_t<T>;
        out = empty(bx.shape(), bx.dtype(), bx.place());
        const T *a = bx.data<T>(), *b = by.data<T>();
        T *o = out.data<T>();
        for (int64_t i = 0, n = bx.numel(); i < n; ++i)
            o[i] = static_cast<T>(f(static_cast<A>(a[i]), static_cast<A>(b[i])));
    });
    return out;
}

} // namespace detail
namespace experimental {

inline Tensor atan2(const Tensor &x, const Tensor &y)
{
    return detail::zip(x, y, "atan2", [](auto a, auto b) { return std::atan2(a, b); });
}
/* The larger / smaller of each pair, ignoring a NaN of either side. */
inline Tensor fmax(const Tensor &x, const Tensor &y)
{
    return detail::zip(x, y, "fmax", [](auto a, auto b) {
        using A = decltype(a);
        if constexpr (std::is_floating_point<A>::value)
            return std::fmax(a, b);
        else
            return a < b ? b : a;
    });
}
inline Tensor fmin(const Tensor &x, const Tensor &y)
{
    return detail::zip(x, y, "fmin", [](auto a, auto b) {
        using A = decltype(a);
        if constexpr (std::is_floating_point<A>::value)
            return std::fmin(a, b);
        else
            return b < a ? b : a;
    });
}

} // namespace experimental
namespace detail {

/* A reduction over `axis` (every axis when empty): start, step(acc, v), finish(acc, count). */
template <class Init, class Step, class Finish>
Tensor reduce(const Tensor &x, const IntArray &axis, bool keepdim, const char *fn, bool ints,
              Init init, Step step, Finish finish)
{
    Tensor d = dense(x, fn);
    std::vector<int64_t> shape = d.shape();
    std::vector<bool> along(shape.size(), axis.GetData().empty());
    for (int64_t a : axis.GetData())
        along[static_cast<size_t>(norm_axis(a, shape.size(), fn))] = true;
    std::vector<int64_t> out_shape;
    for (size_t k = 0; k < shape.size(); ++k)
        if (!along[k] || keepdim)
            out_shape.push_back(along[k] ? 1 : shape[k]);
    Tensor out;
    visit_real(d.dtype(), fn, ints, [&](auto tag) {
        using T = decltype(tag);
        using A = acc_t<T>;
        out = empty(out_shape, d.dtype(), d.place());
        int64_t n_out = out.numel();
        std::vector<A> accs(static_cast<size_t>(n_out), static_cast<A>(init(A{})));
        std::vector<int64_t> counts(static_cast<size_t>(n_out), 0);
        const T *a = d.data<T>();
        std::vector<int64_t> idx(shape.size(), 0);
        for (int64_t i = 0, n = d.numel(); i < n; ++i) {
            int64_t o = 0;
            for (size_t k = 0; k < shape.size(); ++k)
                if (!along[k])
                    o = o * shape[k] + idx[k];
            accs[static_cast<size_t>(o)] = step(accs[static_cast<size_t>(o)], A(a[i]));
            ++counts[static_cast<size_t>(o)];
            for (size_t k = shape.size(); k-- > 0;) {
                if (++idx[k] < shape[k])
                    break;
                idx[k] = 0;
            }
        }
        T *o = out.data<T>();
        for (int64_t i = 0; i < n_out; ++i)
            o[i] = static_cast<T>(
                finish(accs[static_cast<size_t>(i)], counts[static_cast<size_t>(i)]));
    });
    return out;
}

} // namespace detail
namespace experimental {

/* The mean, max and min over `axis` (every axis when empty). */
inline Tensor mean(const Tensor &x, const IntArray &axis = {}, bool keepdim = false)
{
    return detail::reduce(
        x, axis, keepdim, "mean", false, [](auto z) { return decltype(z)(0); },
        [](auto s, auto v) { return s + v; },
        [](auto s, int64_t n) { return s / static_cast<decltype(s)>(n); });
}
inline Tensor max(const Tensor &x, const IntArray &axis = {}, bool keepdim = false)
{
    return detail::reduce(
        x, axis, keepdim, "max", true,
        [](auto z) { return std::numeric_limits<decltype(z)>::lowest(); },
        [](auto s, auto v) { return v > s || v != v ? v : s; }, [](auto s, int64_t) { return s; });
}
inline Tensor min(const Tensor &x, const IntArray &axis = {}, bool keepdim = false)
{
    return detail::reduce(
        x, axis, keepdim, "min", true,
        [](auto z) { return std::numeric_limits<decltype(z)>::max(); },
        [](auto s, auto v) { return v < s || v != v ? v : s; }, [](auto s, int64_t) { return s; });
}

/* Running sums along `axis` (of the flattened tensor with `flatten`); `exclusive` leaves out
 * the element itself, `reverse` runs from the end. */
inline Tensor cumsum(const Tensor &x, const Scalar &axis = -1, bool flatten = false,
                     bool exclusive = false, bool reverse = false)
{
    Tensor d = detail::dense(x, "cumsum");
    std::vector<int64_t> shape = flatten ? std::vector<int64_t>{d.numel()} : d.shape();
    int64_t ax = flatten ? 0 : detail::norm_axis(axis.to<int64_t>(), shape.size(), "cumsum");
    int64_t outer, n, inner;
    detail::split_at(shape, ax, &outer, &n, &inner);
    Tensor out;
    detail::visit_real(d.dtype(), "cumsum", true, [&](auto tag) {
        using T = decltype(tag);
        using A = detail::acc_t<T>;
        out = empty(shape, d.dtype(), d.place());
        const T *a = d.data<T>();
        T *o = out.data<T>();
        for (int64_t p = 0; p < outer; ++p)
            for (int64_t q = 0; q < inner; ++q) {
                A s = A(0);
                for (int64_t k = 0; k < n; ++k) {
                    int64_t j = reverse ? n - 1 - k : k;
                    int64_t at = (p * n + j) * inner + q;
                    A v = A(a[at]);
                    if (!exclusive)
                        s = s + v;
                    o[at] = static_cast<T>(s);
                    if (exclusive)
                        s = s + v;
                }
            }
    });
    return out;
}

} // namespace experimental

/* Paddle's tensor_compat.h: the API functions in paddle:: too. */
using experimental::abs;
using experimental::acos;
using experimental::acosh;
using experimental::asin;
using experimental::asinh;
using experimental::atan;
using experimental::atan2;
using experimental::atanh;
using experimental::ceil;
using experimental::clip;
using experimental::cos;
using experimental::cosh;
using experimental::erf;
using experimental::exp;
using experimental::expm1;
using experimental::floor;
using experimental::fmax;
using experimental::fmin;
using experimental::isfinite;
using experimental::isinf;
using experimental::isnan;
using experimental::lgamma;
using experimental::log;
using experimental::log10;
using experimental::log1p;
using experimental::log2;
using experimental::reciprocal;
using experimental::relu;
using experimental::relu6;
using experimental::round;
using experimental::rsqrt;
using experimental::sigmoid;
using experimental::sign;
using experimental::silu;
using experimental::sin;
using experimental::sinh;
using experimental::sqrt;
using experimental::square;
using experimental::tanh;

} // namespace paddle

#endif /* PDEXT_PADDLE_API_MATH_H */
