/*
 * paddle/tensor_ops.h - Paddle's tensor functions for custom ops: paddle::empty, empty_like,
 * full, zeros, ones, the arithmetic, bitwise and comparison operators (tensor-tensor with
 * numpy broadcasting, and tensor-scalar), add / subtract / multiply / divide, matmul and, in
 * paddle::experimental, cast, sum, fill, transpose and reshape.
 *
 * Tensors are made through the running call (pd_empty, pd_full, pd_permute, ...), so they
 * belong to it. The computing functions wrap the core's tensor functions (pd_math.h:
 * pd_binary, pd_matmul_t, pd_sum_axes, pd_fill), so C op code and Paddle-style code share one
 * implementation and its messages: operands of any layout (strided views are read through
 * their strides), both operands of one dtype, as in Paddle; a tensor on a device is refused
 * (PD_ERR_UNAVAILABLE) until the core has device kernels for them.
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

/* op(x, y) through the core's pd_binary (numpy broadcasting, any layout, one dtype). */
inline Tensor binary(pd_binary_op op, const Tensor &x, const Tensor &y, const char *what)
{
    return Tensor(pd_binary(ctx(), op, x.checked(what), y.checked(what)));
}
/* op(x, value), or op(value, x) with scalar_first; value takes x's dtype. */
inline Tensor binary_scalar(pd_binary_op op, const Tensor &x, double value, bool scalar_first,
                            const char *what)
{
    return Tensor(pd_binary_scalar(ctx(), op, x.checked(what), value, scalar_first));
}

} // namespace detail

/* The elementwise functions: each is the core's function of the same name (pd_math.h). */
#define PD__PADDLE_BINARY(fname, op)                      \
    inline Tensor fname(const Tensor &x, const Tensor &y) \
    {                                                     \
        return detail::binary(op, x, y, #fname);          \
    }
PD__PADDLE_BINARY(add, PD_BINARY_ADD)
PD__PADDLE_BINARY(subtract, PD_BINARY_SUBTRACT)
PD__PADDLE_BINARY(multiply, PD_BINARY_MULTIPLY)
PD__PADDLE_BINARY(divide, PD_BINARY_DIVIDE)
PD__PADDLE_BINARY(maximum, PD_BINARY_MAXIMUM)
PD__PADDLE_BINARY(minimum, PD_BINARY_MINIMUM)
PD__PADDLE_BINARY(bitwise_and, PD_BINARY_BITWISE_AND)
PD__PADDLE_BINARY(bitwise_or, PD_BINARY_BITWISE_OR)
PD__PADDLE_BINARY(bitwise_xor, PD_BINARY_BITWISE_XOR)
PD__PADDLE_BINARY(less_than, PD_BINARY_LESS_THAN)
PD__PADDLE_BINARY(less_equal, PD_BINARY_LESS_EQUAL)
PD__PADDLE_BINARY(equal, PD_BINARY_EQUAL)
PD__PADDLE_BINARY(not_equal, PD_BINARY_NOT_EQUAL)
PD__PADDLE_BINARY(greater_than, PD_BINARY_GREATER_THAN)
PD__PADDLE_BINARY(greater_equal, PD_BINARY_GREATER_EQUAL)
#undef PD__PADDLE_BINARY

/* Operators: tensor-tensor, tensor-scalar and scalar-tensor. */
#define PD__PADDLE_OPERATOR(sym, op)                                    \
    inline Tensor operator sym(const Tensor &x, const Tensor &y)        \
    {                                                                   \
        return detail::binary(op, x, y, "operator" #sym);               \
    }                                                                   \
    inline Tensor operator sym(const Tensor &x, double y)               \
    {                                                                   \
        return detail::binary_scalar(op, x, y, false, "operator" #sym); \
    }                                                                   \
    inline Tensor operator sym(double x, const Tensor &y)               \
    {                                                                   \
        return detail::binary_scalar(op, y, x, true, "operator" #sym);  \
    }
PD__PADDLE_OPERATOR(+, PD_BINARY_ADD)
PD__PADDLE_OPERATOR(-, PD_BINARY_SUBTRACT)
PD__PADDLE_OPERATOR(*, PD_BINARY_MULTIPLY)
PD__PADDLE_OPERATOR(/, PD_BINARY_DIVIDE)
PD__PADDLE_OPERATOR(&, PD_BINARY_BITWISE_AND)
PD__PADDLE_OPERATOR(|, PD_BINARY_BITWISE_OR)
PD__PADDLE_OPERATOR(^, PD_BINARY_BITWISE_XOR)
PD__PADDLE_OPERATOR(<, PD_BINARY_LESS_THAN)
PD__PADDLE_OPERATOR(<=, PD_BINARY_LESS_EQUAL)
PD__PADDLE_OPERATOR(==, PD_BINARY_EQUAL)
PD__PADDLE_OPERATOR(!=, PD_BINARY_NOT_EQUAL)
PD__PADDLE_OPERATOR(>, PD_BINARY_GREATER_THAN)
PD__PADDLE_OPERATOR(>=, PD_BINARY_GREATER_EQUAL)
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

inline Tensor Tensor::operator-() const
{
    return detail::binary_scalar(PD_BINARY_SUBTRACT, *this, 0.0, true, "operator-");
}
/* Bitwise not (logical not for bool): x ^ all-ones, or x == 0 for bool. All-ones is -1 for
 * signed types and the largest value for unsigned ones (the scalar converts with pd_cast's
 * saturating rules, so -1 would become 0 there; 2^64 saturates to uint64's largest). */
inline Tensor Tensor::operator~() const
{
    const pd_tensor *t = checked("operator~");
    if (t->dtype == PD_BOOL)
        return detail::binary_scalar(PD_BINARY_EQUAL, *this, 0.0, false, "operator~");
    double ones = -1.0;
    switch (t->dtype) {
    case PD_UINT8: ones = 255.0; break;
    case PD_UINT16: ones = 65535.0; break;
    case PD_UINT32: ones = 4294967295.0; break;
    case PD_UINT64: ones = 18446744073709551616.0; break;
    default: break;
    }
    return detail::binary_scalar(PD_BINARY_BITWISE_XOR, *this, ones, false, "operator~");
}

/* x @ y over the last two dims, batch dims broadcast (1-D operands as a row / a column);
 * transpose_x / transpose_y swap an operand's last two dims first. The core's pd_matmul_t. */
inline Tensor matmul(const Tensor &x, const Tensor &y, bool transpose_x = false,
                     bool transpose_y = false)
{
    return Tensor(pd_matmul_t(detail::ctx(), x.checked("matmul"), y.checked("matmul"), transpose_x,
                              transpose_y));
}

namespace experimental {

using paddle::add;
using paddle::bitwise_and;
using paddle::bitwise_or;
using paddle::bitwise_xor;
using paddle::divide;
using paddle::empty;
using paddle::empty_like;
using paddle::equal;
using paddle::full;
using paddle::full_like;
using paddle::greater_equal;
using paddle::greater_than;
using paddle::less_equal;
using paddle::less_than;
using paddle::matmul;
using paddle::maximum;
using paddle::minimum;
using paddle::multiply;
using paddle::not_equal;
using paddle::ones;
using paddle::ones_like;
using paddle::subtract;
using paddle::zeros;
using paddle::zeros_like;

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
/* Sets every element of x (host memory, any layout) to `value`, in place; returns x. */
inline Tensor &fill_(Tensor &x, double value)
{
    pd_fill(detail::ctx(), x.checked("fill_"), value);
    return x;
}

/* The sum over `axis` (every axis when empty; negative axes count from the end). The result
 * has `dtype`, or x's (int64 for bool and int32, as Paddle). The core's pd_sum_axes. */
inline Tensor sum(const Tensor &x, const std::vector<int64_t> &axis = {},
                  DataType dtype = DataType::UNDEFINED, bool keepdim = false)
{
    return Tensor(pd_sum_axes(detail::ctx(), x.checked("sum"), static_cast<int32_t>(axis.size()),
                              axis.data(), keepdim, to_pd(dtype)));
}

} // namespace experimental
} // namespace paddle

#endif /* PDEXT_PADDLE_TENSOR_OPS_H */
