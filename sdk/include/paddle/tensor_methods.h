/*
 * paddle/tensor_methods.h - Paddle's paddle::Tensor methods that spell API functions
 * (x.exp(), x.add(y), x.sum({1}), x.scale(2.0, 1.0), ...; declared in paddle/tensor.h): each
 * is the free function of the same name (paddle/tensor_ops.h, paddle/api_math.h,
 * paddle/api_index.h).
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_TENSOR_METHODS_H
#define PDEXT_PADDLE_TENSOR_METHODS_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/tensor_methods.h"
#endif

#include <vector>

namespace paddle {

inline Tensor Tensor::abs() const { return experimental::abs(*this); }
inline Tensor Tensor::exp() const { return experimental::exp(*this); }
inline Tensor Tensor::floor() const { return experimental::floor(*this); }
inline Tensor Tensor::log() const { return experimental::log(*this); }
inline Tensor Tensor::add(const Tensor &y) const { return paddle::add(*this, y); }
inline Tensor Tensor::subtract(const Tensor &y) const { return paddle::subtract(*this, y); }
inline Tensor Tensor::multiply(const Tensor &y) const { return paddle::multiply(*this, y); }
inline Tensor Tensor::divide(const Tensor &y) const { return paddle::divide(*this, y); }
inline Tensor Tensor::add(const experimental::Scalar &y) const { return *this + y.to<double>(); }
inline Tensor Tensor::subtract(const experimental::Scalar &y) const
{
    return *this - y.to<double>();
}
inline Tensor Tensor::multiply(const experimental::Scalar &y) const
{
    return *this * y.to<double>();
}
inline Tensor Tensor::divide(const experimental::Scalar &y) const { return *this / y.to<double>(); }
inline Tensor Tensor::maximum(const Tensor &y) const { return paddle::maximum(*this, y); }
inline Tensor Tensor::minimum(const Tensor &y) const { return paddle::minimum(*this, y); }
inline Tensor Tensor::equal(const Tensor &y) const { return paddle::equal(*this, y); }
inline Tensor Tensor::not_equal(const Tensor &y) const { return paddle::not_equal(*this, y); }
inline Tensor Tensor::greater_equal(const Tensor &y) const
{
    return paddle::greater_equal(*this, y);
}
inline Tensor Tensor::greater_than(const Tensor &y) const { return paddle::greater_than(*this, y); }
inline Tensor Tensor::less_equal(const Tensor &y) const { return paddle::less_equal(*this, y); }
inline Tensor Tensor::less_than(const Tensor &y) const { return paddle::less_than(*this, y); }
inline Tensor Tensor::bitwise_and(const Tensor &y) const { return paddle::bitwise_and(*this, y); }
inline Tensor Tensor::bitwise_or(const Tensor &y) const { return paddle::bitwise_or(*this, y); }
inline Tensor Tensor::bitwise_xor(const Tensor &y) const { return paddle::bitwise_xor(*this, y); }
inline Tensor Tensor::bitwise_not() const { return ~*this; }
inline Tensor Tensor::pow(const experimental::Scalar &y) const
{
    return experimental::pow(*this, y);
}
inline Tensor Tensor::matmul(const Tensor &y, bool transpose_x, bool transpose_y) const
{
    return paddle::matmul(*this, y, transpose_x, transpose_y);
}
inline Tensor Tensor::max(const experimental::IntArray &axis, bool keepdim) const
{
    return experimental::max(*this, axis, keepdim);
}
inline Tensor Tensor::sum(const experimental::IntArray &axis, DataType dtype, bool keepdim) const
{
    return experimental::sum(*this, axis.GetData(), dtype, keepdim);
}
inline Tensor Tensor::scale(const experimental::Scalar &scale, const experimental::Scalar &bias,
                            bool bias_after_scale) const
{
    return experimental::scale(*this, scale, bias, bias_after_scale);
}
inline Tensor Tensor::tile(const experimental::IntArray &repeat_times) const
{
    return experimental::tile(*this, repeat_times);
}

} // namespace paddle

#endif /* PDEXT_PADDLE_TENSOR_METHODS_H */
