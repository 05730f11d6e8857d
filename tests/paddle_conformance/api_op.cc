// The API functions of Paddle's custom-op API that pdext's Paddle front implements, written
// against Paddle's headers and built by both real Paddle and pdext
// (tests/python/test_paddle_conformance.py compares every output). For the math ops X holds
// values in (0.1, 0.9) and Y values of either sign; for the index ops X is a [3, 4] float
// tensor of distinct values and Index a 1-D int64 tensor of row numbers.
#include <tuple>
#include <vector>

#include "paddle/extension.h"

std::vector<paddle::Tensor> UnaryForward(const paddle::Tensor &x, const paddle::Tensor &y)
{
    return {paddle::exp(x),   paddle::log(x),   paddle::log2(x), paddle::log10(x),
            paddle::log1p(x), paddle::expm1(x), paddle::sqrt(x), paddle::rsqrt(x),
            paddle::sin(y),   paddle::cos(y),   paddle::tanh(y), paddle::asin(x),
            paddle::acos(x),  paddle::atan(y),  paddle::sinh(y), paddle::cosh(y)};
}
PD_BUILD_OP(conf_unary)
                .Inputs({"X", "Y"})
                .Outputs({"Exp", "Log", "Log2", "Log10", "Log1p", "Expm1", "Sqrt", "Rsqrt", "Sin",
                          "Cos", "Tanh", "Asin", "Acos", "Atan", "Sinh", "Cosh"})
                .SetKernelFn(PD_KERNEL(UnaryForward));

std::vector<paddle::Tensor> Unary2Forward(const paddle::Tensor &x, const paddle::Tensor &y)
{
    return {paddle::atanh(x),      paddle::asinh(y),   paddle::erf(y),
            paddle::abs(y),        paddle::sign(y),    paddle::square(y),
            paddle::relu(y),       paddle::floor(y),   paddle::ceil(y),
            paddle::round(y),      paddle::sigmoid(y), paddle::silu(y),
            paddle::reciprocal(x), paddle::lgamma(x),  paddle::relu6(y * 4.0),
            paddle::acosh(x + 1.0)};
}
PD_BUILD_OP(conf_unary2)
                .Inputs({"X", "Y"})
                .Outputs({"Atanh", "Asinh", "Erf", "Abs", "Sign", "Square", "Relu", "Floor", "Ceil",
                          "Round", "Sigmoid", "Silu", "Reciprocal", "Lgamma", "Relu6", "Acosh"})
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
                .Outputs({"Pow", "ScaleAfter", "ScaleBefore", "Clip", "Atan2", "Fmax", "Fmin",
                          "Mean", "Max", "Min", "Cumsum", "CumsumRevExcl", "Isfinite", "Isnan"})
                .SetKernelFn(PD_KERNEL(MathForward));

std::vector<paddle::Tensor> IndexForward(const paddle::Tensor &x, const paddle::Tensor &index)
{
    namespace ex = paddle::experimental;
    auto sorted = paddle::argsort(x, -1, false);
    auto sorted_desc = paddle::argsort(x, 0, true);
    auto top = ex::topk(x, 2, 1, true, true);
    auto parts = paddle::split(x, {1, -1}, 1);
    return {std::get<0>(sorted),
            std::get<1>(sorted),
            std::get<0>(sorted_desc),
            std::get<1>(sorted_desc),
            std::get<0>(top),
            std::get<1>(top),
            paddle::gather(x, index),
            paddle::gather(x, index, 1),
            paddle::concat({x, x * 2.0}, 1),
            paddle::stack({x, x + 1.0}, 1),
            parts[0],
            parts[1],
            paddle::flatten(paddle::unsqueeze(x, {0}), 0, 2),
            ex::squeeze(paddle::unsqueeze(x, {1})),
            paddle::tile(x, {2, 1}),
            paddle::flip(x, {0, 1})};
}
PD_BUILD_OP(conf_index)
                .Inputs({"X", "Index"})
                .Outputs({"Sorted", "SortIdx", "SortedDesc", "SortDescIdx", "Top", "TopIdx",
                          "Gather0", "Gather1", "Concat", "Stack", "Split0", "Split1", "Flatten",
                          "Squeeze", "Tile", "Flip"})
                .SetKernelFn(PD_KERNEL(IndexForward));

std::vector<paddle::Tensor> Index2Forward(const paddle::Tensor &x, const paddle::Tensor &index)
{
    namespace ex = paddle::experimental;
    auto positive = paddle::greater_than(x, ex::zeros_like(x));
    return {paddle::where(positive, x, x * -1.0),
            paddle::tril(x, 0),
            ex::triu(x, 1),
            paddle::one_hot(index, 5),
            ex::argmax(x, 1, false, false, paddle::DataType::INT64),
            ex::argmin(x, 0, true, false, paddle::DataType::INT32),
            ex::index_select(x, index, 0)};
}
PD_BUILD_OP(conf_index2)
                .Inputs({"X", "Index"})
                .Outputs({"Where", "Tril", "Triu", "OneHot", "Argmax", "Argmin", "IndexSelect"})
                .SetKernelFn(PD_KERNEL(Index2Forward));

// The API functions as paddle::Tensor methods. X: values in (0.1, 0.9); Y: either sign.
std::vector<paddle::Tensor> MethodsForward(const paddle::Tensor &x, const paddle::Tensor &y)
{
    return {x.exp(),          x.log(),
            y.abs(),          y.floor(),
            x.add(y),         x.subtract(2.0f),
            y.multiply(x),    y.divide(4.0f),
            x.maximum(y),     x.minimum(y),
            x.pow(2.0f),      y.scale(3.0f, 1.0f, false),
            y.max({1}, true), y.sum({0}, paddle::DataType::FLOAT32, false),
            x.tile({1, 2}),   x.matmul(y, false, true)};
}
PD_BUILD_OP(conf_methods)
                .Inputs({"X", "Y"})
                .Outputs({"Exp", "Log", "Abs", "Floor", "Add", "SubScalar", "Mul", "DivScalar",
                          "Maximum", "Minimum", "Pow", "Scale", "Max", "Sum", "Tile", "Matmul"})
                .SetKernelFn(PD_KERNEL(MethodsForward));

std::vector<paddle::Tensor> Methods2Forward(const paddle::Tensor &x, const paddle::Tensor &y)
{
    return {x.greater_than(y).cast(paddle::DataType::FLOAT32),
            x.less_equal(y).cast(paddle::DataType::FLOAT32), x.divide(y), y.subtract(x)};
}
PD_BUILD_OP(conf_methods2)
                .Inputs({"X", "Y"})
                .Outputs({"Greater", "LessEqual", "Div", "Sub"})
                .SetKernelFn(PD_KERNEL(Methods2Forward));
