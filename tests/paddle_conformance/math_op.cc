// Paddle's API functions on floating tensors, written against Paddle's custom-op API and built
// by both real Paddle and pdext (tests/python/test_paddle_conformance.py compares every output).
// X holds values in (0.1, 0.9), Y values of either sign.
#include <vector>

#include "paddle/extension.h"

std::vector<paddle::Tensor> UnaryForward(const paddle::Tensor &x, const paddle::Tensor &y)
{
    return {paddle::exp(x),   paddle::log(x),       paddle::log2(x),  paddle::log10(x),
            paddle::log1p(x), paddle::expm1(x),     paddle::sqrt(x),  paddle::rsqrt(x),
            paddle::sin(y),   paddle::cos(y),       paddle::tanh(y),  paddle::asin(x),
            paddle::acos(x),  paddle::atan(y),      paddle::sinh(y),  paddle::cosh(y)};
}
PD_BUILD_OP(conf_unary)
    .Inputs({"X", "Y"})
    .Outputs({"Exp", "Log", "Log2", "Log10", "Log1p", "Expm1", "Sqrt", "Rsqrt", "Sin", "Cos",
              "Tanh", "Asin", "Acos", "Atan", "Sinh", "Cosh"})
    .SetKernelFn(PD_KERNEL(UnaryForward));

std::vector<paddle::Tensor> Unary2Forward(const paddle::Tensor &x, const paddle::Tensor &y)
{
    return {paddle::atanh(x),      paddle::asinh(y),   paddle::erf(y),     paddle::abs(y),
            paddle::sign(y),       paddle::square(y),  paddle::relu(y),    paddle::floor(y),
            paddle::ceil(y),       paddle::round(y),   paddle::sigmoid(y), paddle::silu(y),
            paddle::reciprocal(x), paddle::lgamma(x),  paddle::relu6(y * 4.0),
            paddle::acosh(x + 1.0)};
}
PD_BUILD_OP(conf_unary2)
    .Inputs({"X", "Y"})
    .Outputs({"Atanh", "Asinh", "Erf", "Abs", "Sign", "Square", "Relu", "Floor", "Ceil", "Round",
              "Sigmoid", "Silu", "Reciprocal", "Lgamma", "Relu6", "Acosh"})
    .SetKernelFn(PD_KERNEL(Unary2Forward));

std::vector<paddle::Tensor> MathForward(const paddle::Tensor &x, const paddle::Tensor &y)
{
    namespace ex = paddle::experimental;
    return {ex::pow(x, 3.0f),
            ex::scale(y, 2.5, 0.5, true),
            ex::scale(y, 2.5, 0.5, false),
            ex::clip(y, -0.5f, 0.25f),
            paddle::atan2(y, x),
            paddle::fmax(x, y),
            paddle::fmin(x, y),
            ex::mean(y, {1}, false),
            ex::max(y, {0}, true),
            ex::min(y),
            ex::cumsum(y, 1),
            ex::cumsum(y, 0, false, true, true),
            paddle::isfinite(paddle::log(y)).cast(paddle::DataType::FLOAT32),
            paddle::isnan(paddle::log(y)).cast(paddle::DataType::FLOAT32)};
}
PD_BUILD_OP(conf_math)
    .Inputs({"X", "Y"})
    .Outputs({"Pow", "ScaleAfter", "ScaleBefore", "Clip", "Atan2", "Fmax", "Fmin", "Mean", "Max",
              "Min", "Cumsum", "CumsumRevExcl", "Isfinite", "Isnan"})
    .SetKernelFn(PD_KERNEL(MathForward));
