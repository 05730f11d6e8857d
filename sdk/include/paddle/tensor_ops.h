/*
 * paddle/tensor_ops.h - Paddle's tensor functions for custom ops: paddle::empty, empty_like,
 * full, zeros, ones, the arithmetic, bitwise and comparison operators (tensor-tensor with
 * numpy broadcasting, and tensor-scalar), add / subtract / multiply / divide, matmul and, in
 * paddle::experimental, cast, sum, fill, transpose and reshape.
 *
 * Tensors are made through the running call (pd_empty, pd_full, pd_cast, pd_permute, ...), so
 * they belong to it. The element loops here are plain CPU code over any layout (strided views
 * are read through their strides); a tensor on another place is refused with a message
 * naming the function. Both operands of a binary function must have one dtype, as in Paddle.
 *
 * Past 500 lines because the functions share one set of helpers (dtype visit, broadcast walk)
 * that would otherwise have to be exposed from a second header.
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_TENSOR_OPS_H
#define PDEXT_PADDLE_TENSOR_OPS_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/tensor_ops.h"
#endif

#include <string>
#include <type_traits>
#include <vector>

namespace paddle {

/* --- Making tensors ---------------------------------------------------------------------- */

inline Tensor empty(const std::vector<int64_t> &shape, DataType dtype = DataType::FLOAT32,
                    const Place &place = CPUPlace())
{
    return Tensor(
        pd_empty(detail::ctx(), to_pd(dtype), place.pd(), detail::ndim_of(shape), shape.data()));
}
inline Tensor full(const std::vector<int64_t> &shape, double value,
                   DataType dtype = DataType::FLOAT32, const Place &place = CPUPlace())
{
    return Tensor(pd_full(detail::ctx(), to_pd(dtype), place.pd(), detail::ndim_of(shape),
                          shape.data(), value));
}
inline Tensor zeros(const std::vector<int64_t> &shape, DataType dtype = DataType::FLOAT32,
                    const Place &place = CPUPlace())
{
    return full(shape, 0.0, dtype, place);
}
inline Tensor ones(const std::vector<int64_t> &shape, DataType dtype = DataType::FLOAT32,
                   const Place &place = CPUPlace())
{
    return full(shape, 1.0, dtype, place);
}
/* x's shape, with x's dtype and place unless given. */
inline Tensor empty_like(const Tensor &x, DataType dtype = DataType::UNDEFINED,
                         const Place &place = Place())
{
    const pd_tensor *t = x.checked("empty_like");
    return Tensor(pd_empty(detail::ctx(), dtype == DataType::UNDEFINED ? t->dtype : to_pd(dtype),
                           place.pd().type == PD_PLACE_UNDEFINED ? t->place : place.pd(), t->ndim,
                           t->shape));
}
inline Tensor full_like(const Tensor &x, double value, DataType dtype = DataType::UNDEFINED,
                        const Place &place = Place())
{
    const pd_tensor *t = x.checked("full_like");
    return Tensor(pd_full(detail::ctx(), dtype == DataType::UNDEFINED ? t->dtype : to_pd(dtype),
                          place.pd().type == PD_PLACE_UNDEFINED ? t->place : place.pd(), t->ndim,
                          t->shape, value));
}
inline Tensor zeros_like(const Tensor &x, DataType dtype = DataType::UNDEFINED,
                         const Place &place = Place())
{
    return full_like(x, 0.0, dtype, place);
}
inline Tensor ones_like(const Tensor &x, DataType dtype = DataType::UNDEFINED,
                        const Place &place = Place())
{
    return full_like(x, 1.0, dtype, place);
}

namespace detail {

template <class T> struct type_tag {
    using type = T;
};

/* Calls f(type_tag<T>{}) for the element type of `dtype`. Complex types only with
 * `complex_ok`; other dtypes throw naming `what`. */
template <class F>
inline void visit_dtype(pd_data_type dtype, const char *what, bool complex_ok, F &&f)
{
    switch (dtype) {
    case PD_BOOL: f(type_tag<bool>{}); return;
    case PD_INT8: f(type_tag<int8_t>{}); return;
    case PD_UINT8: f(type_tag<uint8_t>{}); return;
    case PD_INT16: f(type_tag<int16_t>{}); return;
    case PD_INT32: f(type_tag<int32_t>{}); return;
    case PD_INT64: f(type_tag<int64_t>{}); return;
    case PD_FLOAT16: f(type_tag<float16>{}); return;
    case PD_BFLOAT16: f(type_tag<bfloat16>{}); return;
    case PD_FLOAT32: f(type_tag<float>{}); return;
    case PD_FLOAT64: f(type_tag<double>{}); return;
    case PD_COMPLEX64:
        if (complex_ok) {
            f(type_tag<complex64>{});
            return;
        }
        break;
    case PD_COMPLEX128:
        if (complex_ok) {
            f(type_tag<complex128>{});
            return;
        }
        break;
    default: break;
    }
    throw pd::op_error(std::string("paddle::") + what + " is not implemented for data type `" +
                           pd_dtype_name(dtype) + "`",
                       nullptr, 0, PD_ERR_INVALID_ARGUMENT);
}

/* The type arithmetic on T runs in: float for the halves, T otherwise. */
template <class T> struct compute {
    using type = T;
};
template <> struct compute<float16> {
    using type = float;
};
template <> struct compute<bfloat16> {
    using type = float;
};
template <> struct compute<bool> {
    using type = int;
};

inline const pd_tensor *cpu_operand(const Tensor &x, const char *what)
{
    const pd_tensor *t = x.checked(what);
    if (!pd_place_is_host(t->place))
        throw pd::op_error(std::string("paddle::") + what +
                               ": the C++ front computes on the CPU; the tensor is on " +
                               Place(t->place).DebugString(),
                           nullptr, 0, PD_ERR_INVALID_ARGUMENT);
    return t;
}

/* Walks the elements of an `nd`-dim index space of `shape` in C order, calling
 * body(offset_0, offset_1, ...) with each operand's element offset (strides in elements). */
template <size_t K, class Body>
inline void walk(int32_t nd, const int64_t *shape, const int64_t (&strides)[K][PD_MAX_DIMS],
                 Body &&body)
{
    int64_t n = 1;
    for (int32_t d = 0; d < nd; ++d)
        n *= shape[d];
    int64_t idx[PD_MAX_DIMS] = {};
    int64_t off[K] = {};
    for (int64_t i = 0; i < n; ++i) {
        body(off);
        for (int32_t d = nd - 1; d >= 0; --d) {
            if (++idx[d] < shape[d]) {
                for (size_t k = 0; k < K; ++k)
                    off[k] += strides[k][d];
                break;
            }
            for (size_t k = 0; k < K; ++k)
                off[k] -= strides[k][d] * (shape[d] - 1);
            idx[d] = 0;
        }
    }
}

/* The broadcast shape of a and b (numpy's rules) and each operand's strides over it. */
struct broadcast {
    int32_t nd = 0;
    int64_t shape[PD_MAX_DIMS] = {};
    int64_t strides[3][PD_MAX_DIMS] = {}; /* a, b, out */
};
inline broadcast broadcast_of(const pd_tensor *a, const pd_tensor *b, const char *what)
{
    broadcast r;
    r.nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int32_t d = 0; d < r.nd; ++d) {
        int32_t da = d - (r.nd - a->ndim), db = d - (r.nd - b->ndim);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            throw pd::op_error(std::string("paddle::") + what +
                                   ": shapes cannot be broadcast: " + "dim " + std::to_string(d) +
                                   " is " + std::to_string(sa) + " and " + std::to_string(sb),
                               nullptr, 0, PD_ERR_INVALID_ARGUMENT);
        r.shape[d] = sa == 1 ? sb : sa;
        r.strides[0][d] = (da >= 0 && sa != 1) ? pd_stride(a, da) : 0;
        r.strides[1][d] = (db >= 0 && sb != 1) ? pd_stride(b, db) : 0;
    }
    int64_t s = 1;
    for (int32_t d = r.nd - 1; d >= 0; --d) {
        r.strides[2][d] = s;
        s *= r.shape[d];
    }
    return r;
}

/* out = f(a, b) elementwise; the result has a's dtype, or bool for a comparison. */
template <bool Compare, class F>
inline Tensor binary(const Tensor &x, const Tensor &y, const char *what, bool complex_ok,
                     bool integral_only, F f)
{
    const pd_tensor *a = cpu_operand(x, what), *b = cpu_operand(y, what);
    if (a->dtype != b->dtype)
        throw pd::op_error(std::string("paddle::") + what + ": the operands have data types " +
                               pd_dtype_name(a->dtype) + " and " + pd_dtype_name(b->dtype) +
                               "; they must be the same",
                           nullptr, 0, PD_ERR_INVALID_ARGUMENT);
    if (integral_only && !(pd_dtype_is_integral(a->dtype) || a->dtype == PD_BOOL))
        throw pd::op_error(std::string("paddle::") + what + " is not implemented for data type `" +
                               pd_dtype_name(a->dtype) + "`",
                           nullptr, 0, PD_ERR_INVALID_ARGUMENT);
    broadcast bc = broadcast_of(a, b, what);
    pd_data_type od = Compare ? PD_BOOL : a->dtype;
    pd_tensor *out = pd_empty(ctx(), od, a->place, bc.nd, bc.shape);
    visit_dtype(a->dtype, what, complex_ok, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_invocable<F &, const T &, const T &>::value) {
            throw pd::op_error(std::string("paddle::") + what +
                                   " is not implemented for data type `" + pd_dtype_name(a->dtype) +
                                   "`",
                               nullptr, 0, PD_ERR_INVALID_ARGUMENT);
        } else {
            const T *pa = static_cast<const T *>(a->data), *pb = static_cast<const T *>(b->data);
            if constexpr (!Compare) {
                T *po = static_cast<T *>(out->data);
                walk(bc.nd, bc.shape, bc.strides, [&](const int64_t *off) {
                    po[off[2]] = static_cast<T>(f(pa[off[0]], pb[off[1]]));
                });
            } else { /* comparisons: bool results */
                bool *po = static_cast<bool *>(out->data);
                walk(bc.nd, bc.shape, bc.strides, [&](const int64_t *off) {
                    po[off[2]] = static_cast<bool>(f(pa[off[0]], pb[off[1]]));
                });
            }
        }
    });
    return Tensor(out);
}

template <class T> inline typename compute<T>::type up(T v)
{
    return static_cast<typename compute<T>::type>(v);
}

/* A 0-dim tensor of x's dtype and place holding `value`. */
inline Tensor scalar_like(const Tensor &x, double value)
{
    const pd_tensor *t = x.checked("scalar");
    return Tensor(pd_full(ctx(), t->dtype, t->place, 0, nullptr, value));
}

} // namespace detail

#define PD__PADDLE_ARITH(fname, op)                                                           \
    inline Tensor fname(const Tensor &x, const Tensor &y)                                     \
    {                                                                                         \
        return detail::binary<false>(x, y, #fname, true, false,                               \
                                     [](auto a,                                               \
                                        auto b) -> decltype(detail::up(a) op detail::up(b)) { \
                                         return detail::up(a) op detail::up(b);               \
                                     });                                                      \
    }
PD__PADDLE_ARITH(add, +)
PD__PADDLE_ARITH(subtract, -)
PD__PADDLE_ARITH(multiply, *)
PD__PADDLE_ARITH(divide, /)
#undef PD__PADDLE_ARITH

#define PD__PADDLE_BITWISE(fname, op)                                                         \
    inline Tensor fname(const Tensor &x, const Tensor &y)                                     \
    {                                                                                         \
        return detail::binary<false>(x, y, #fname, false, true,                               \
                                     [](auto a,                                               \
                                        auto b) -> decltype(detail::up(a) op detail::up(b)) { \
                                         return detail::up(a) op detail::up(b);               \
                                     });                                                      \
    }
PD__PADDLE_BITWISE(bitwise_and, &)
PD__PADDLE_BITWISE(bitwise_or, |)
PD__PADDLE_BITWISE(bitwise_xor, ^)
#undef PD__PADDLE_BITWISE

#define PD__PADDLE_COMPARE(fname, op)                                                        \
    inline Tensor fname(const Tensor &x, const Tensor &y)                                    \
    {                                                                                        \
        return detail::binary<true>(x, y, #fname, false, false,                              \
                                    [](auto a,                                               \
                                       auto b) -> decltype(detail::up(a) op detail::up(b)) { \
                                        return detail::up(a) op detail::up(b);               \
                                    });                                                      \
    }
PD__PADDLE_COMPARE(less_than, <)
PD__PADDLE_COMPARE(less_equal, <=)
PD__PADDLE_COMPARE(equal, ==)
PD__PADDLE_COMPARE(not_equal, !=)
PD__PADDLE_COMPARE(greater_than, >)
PD__PADDLE_COMPARE(greater_equal, >=)
#undef PD__PADDLE_COMPARE

/* Operators: tensor-tensor, tensor-scalar and scalar-tensor. */
#define PD__PADDLE_OPERATOR(op, fname)                                                  \
    inline Tensor operator op(const Tensor &x, const Tensor &y) { return fname(x, y); } \
    inline Tensor operator op(const Tensor &x, double y)                                \
    {                                                                                   \
        return fname(x, detail::scalar_like(x, y));                                     \
    }                                                                                   \
    inline Tensor operator op(double x, const Tensor &y)                                \
    {                                                                                   \
        return fname(detail::scalar_like(y, x), y);                                     \
    }
PD__PADDLE_OPERATOR(+, add)
PD__PADDLE_OPERATOR(-, subtract)
PD__PADDLE_OPERATOR(*, multiply)
PD__PADDLE_OPERATOR(/, divide)
PD__PADDLE_OPERATOR(&, bitwise_and)
PD__PADDLE_OPERATOR(|, bitwise_or)
PD__PADDLE_OPERATOR(^, bitwise_xor)
PD__PADDLE_OPERATOR(<, less_than)
PD__PADDLE_OPERATOR(<=, less_equal)
PD__PADDLE_OPERATOR(==, equal)
PD__PADDLE_OPERATOR(!=, not_equal)
PD__PADDLE_OPERATOR(>, greater_than)
PD__PADDLE_OPERATOR(>=, greater_equal)
#undef PD__PADDLE_OPERATOR

/* Compound assignment: the tensor becomes the result (a new tensor of the call). */
inline Tensor &operator+=(Tensor &x, const Tensor &y) { return x = x + y; }
inline Tensor &operator-=(Tensor &x, const Tensor &y) { return x = x - y; }
inline Tensor &operator*=(Tensor &x, const Tensor &y) { return x = x * y; }
inline Tensor &operator/=(Tensor &x, const Tensor &y) { return x = x / y; }
inline Tensor &operator+=(Tensor &x, double y) { return x = x + y; }
inline Tensor &operator-=(Tensor &x, double y) { return x = x - y; }
inline Tensor &operator*=(Tensor &x, double y) { return x = x * y; }
inline Tensor &operator/=(Tensor &x, double y) { return x = x / y; }

inline Tensor Tensor::operator-() const { return subtract(detail::scalar_like(*this, 0.0), *this); }
/* Bitwise not (logical not for bool). */
inline Tensor Tensor::operator~() const
{
    const pd_tensor *a = detail::cpu_operand(*this, "bitwise_not");
    if (a->dtype == PD_BOOL)
        return equal(*this, detail::scalar_like(*this, 0.0));
    return bitwise_xor(*this, detail::scalar_like(*this, -1.0));
}

/* x @ y over the last two dims (1-D operands as a row / a column), batch dims equal or
 * absent; transpose_x / transpose_y swap an operand's last two dims first. */
inline Tensor matmul(const Tensor &x, const Tensor &y, bool transpose_x = false,
                     bool transpose_y = false)
{
    const pd_tensor *a = detail::cpu_operand(x, "matmul"), *b = detail::cpu_operand(y, "matmul");
    if (a->dtype != b->dtype || a->ndim == 0 || b->ndim == 0)
        throw pd::op_error(std::string("paddle::matmul: operands of data types ") +
                               pd_dtype_name(a->dtype) + " and " + pd_dtype_name(b->dtype) +
                               " with " + std::to_string(a->ndim) + " and " +
                               std::to_string(b->ndim) +
                               " dims; expected one data type and at least one dim each",
                           nullptr, 0, PD_ERR_INVALID_ARGUMENT);
    auto rows = [](const pd_tensor *t, bool tr, bool left) {
        if (t->ndim == 1)
            return left ? int64_t(1) : t->shape[0];
        return tr ? t->shape[t->ndim - 1] : t->shape[t->ndim - 2];
    };
    auto cols = [](const pd_tensor *t, bool tr, bool left) {
        if (t->ndim == 1)
            return left ? t->shape[0] : int64_t(1);
        return tr ? t->shape[t->ndim - 2] : t->shape[t->ndim - 1];
    };
    int64_t m = rows(a, transpose_x, true), k = cols(a, transpose_x, true);
    int64_t k2 = rows(b, transpose_y, false), n = cols(b, transpose_y, false);
    const pd_tensor *batch = a->ndim >= b->ndim ? a : b;
    int32_t nb = batch->ndim > 2 ? batch->ndim - 2 : 0;
    int64_t batches = 1;
    for (int32_t d = 0; d < nb; ++d)
        batches *= batch->shape[d];
    bool same_batch = (a->ndim <= 2 || b->ndim <= 2 || a->ndim == b->ndim);
    for (int32_t d = 0; same_batch && a->ndim > 2 && b->ndim > 2 && d < nb; ++d)
        same_batch = a->shape[d] == b->shape[d];
    if (k != k2 || !same_batch)
        throw pd::op_error("paddle::matmul: shapes do not match: the inner dims are " +
                               std::to_string(k) + " and " + std::to_string(k2),
                           nullptr, 0, PD_ERR_INVALID_ARGUMENT);
    std::vector<int64_t> shape(batch->shape, batch->shape + nb);
    if (a->ndim > 1)
        shape.push_back(m);
    if (b->ndim > 1)
        shape.push_back(n);
    Tensor out = empty(shape, static_cast<DataType>(a->dtype), Place(a->place));
    Tensor ac = x.contiguous(), bc = y.contiguous();
    detail::visit_dtype(a->dtype, "matmul", true, [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = typename detail::compute<T>::type;
        const T *pa = static_cast<const T *>(ac.data()), *pb = static_cast<const T *>(bc.data());
        T *po = static_cast<T *>(out.data());
        int64_t sa = a->ndim > 2 ? m * k : 0, sb = b->ndim > 2 ? k * n : 0;
        for (int64_t bt = 0; bt < batches; ++bt)
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                    C acc = C(0);
                    for (int64_t p = 0; p < k; ++p) {
                        C va = C(pa[bt * sa + (transpose_x ? p * m + i : i * k + p)]);
                        C vb = C(pb[bt * sb + (transpose_y ? j * k + p : p * n + j)]);
                        acc = acc + va * vb;
                    }
                    po[(bt * m + i) * n + j] = static_cast<T>(acc);
                }
    });
    return out;
}

namespace experimental {

using paddle::add;
using paddle::divide;
using paddle::empty;
using paddle::empty_like;
using paddle::full;
using paddle::full_like;
using paddle::matmul;
using paddle::multiply;
using paddle::ones;
using paddle::subtract;
using paddle::zeros;

inline Tensor cast(const Tensor &x, DataType dtype) { return x.cast(dtype); }

/* Axes reordered as a strided view: the result's axis d is x's axis perm[d]. */
inline Tensor transpose(const Tensor &x, const std::vector<int> &perm)
{
    const pd_tensor *t = x.checked("transpose");
    std::vector<int32_t> dims(perm.begin(), perm.end());
    return Tensor(pd_permute(detail::ctx(), t, static_cast<int32_t>(dims.size()), dims.data()));
}

inline Tensor reshape(const Tensor &x, const std::vector<int64_t> &shape)
{
    return Tensor(
        pd_reshape(detail::ctx(), x.checked("reshape"), detail::ndim_of(shape), shape.data()));
}

/* A tensor like x with every element `value`. */
inline Tensor fill(const Tensor &x, double value) { return full_like(x, value); }
/* Sets every element of x (a dense CPU tensor) to `value`, in place; returns x. */
inline Tensor &fill_(Tensor &x, double value)
{
    const pd_tensor *t = detail::cpu_operand(x, "fill_");
    Tensor v = full_like(x, value);
    std::memcpy(t->data, v.data(), pd_nbytes(t));
    return x;
}

/* The sum over `axis` (every axis when empty; negative axes count from the end). The result
 * has `dtype`, or x's (int64 for bool and int32, as Paddle). */
inline Tensor sum(const Tensor &x, const std::vector<int64_t> &axis = {},
                  DataType dtype = DataType::UNDEFINED, bool keepdim = false)
{
    const pd_tensor *t = detail::cpu_operand(x, "sum");
    bool reduce[PD_MAX_DIMS] = {};
    for (int64_t ax : axis) {
        int64_t a = ax < 0 ? ax + t->ndim : ax;
        if (a < 0 || a >= t->ndim)
            throw pd::op_error("paddle::experimental::sum: axis " + std::to_string(ax) +
                                   " is out of range for a tensor of " + std::to_string(t->ndim) +
                                   " dims",
                               nullptr, 0, PD_ERR_INVALID_ARGUMENT);
        reduce[a] = true;
    }
    std::vector<int64_t> shape;
    int64_t kept_strides[PD_MAX_DIMS] = {};
    int64_t s = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
        bool r = axis.empty() || reduce[d];
        kept_strides[d] = r ? 0 : s;
        s *= r ? 1 : t->shape[d];
    }
    for (int32_t d = 0; d < t->ndim; ++d) {
        bool r = axis.empty() || reduce[d];
        if (!r)
            shape.push_back(t->shape[d]);
        else if (keepdim)
            shape.push_back(1);
    }
    pd_data_type od = dtype != DataType::UNDEFINED                    ? to_pd(dtype)
                      : (t->dtype == PD_BOOL || t->dtype == PD_INT32) ? PD_INT64
                                                                      : t->dtype;
    Tensor acc = zeros(shape, static_cast<DataType>(od), Place(t->place));
    Tensor src = od == t->dtype ? x : x.cast(static_cast<DataType>(od));
    const pd_tensor *st = src.pd();
    detail::visit_dtype(od, "experimental::sum", true, [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = typename detail::compute<T>::type;
        const T *in = static_cast<const T *>(st->data);
        T *out = static_cast<T *>(acc.data());
        int64_t strides[2][PD_MAX_DIMS] = {};
        for (int32_t d = 0; d < st->ndim; ++d) {
            strides[0][d] = pd_stride(st, d);
            strides[1][d] = kept_strides[d];
        }
        detail::walk(st->ndim, st->shape, strides, [&](const int64_t *off) {
            out[off[1]] = static_cast<T>(C(out[off[1]]) + C(in[off[0]]));
        });
    });
    return acc;
}

} // namespace experimental
} // namespace paddle

#endif /* PDEXT_PADDLE_TENSOR_OPS_H */
